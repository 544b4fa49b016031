"""Write docs/corpus.md: one card per corpus table, in Gymnasium's sections, from its
card.json (dataclean_env/corpus/tables/NAME/card.json, written by the corpus build).

    uv run python scripts/corpus_cards.py            # rewrites docs/corpus.md
    uv run python scripts/corpus_cards.py --check    # exit 1 when the file is stale

A test regenerates the cards and compares them with the file.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dataclean_env.corpus.instances import KEY, LAYERS_PER_DIFFICULTY
from dataclean_env.corpus.tables import load_card, table_names
from dataclean_env.generation import SPLITS
from dataclean_env.tasks.corpus import GENERATOR_VERSIONS, MIN_STEPS, PREFIX

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "corpus.md"


def card(card: dict[str, Any]) -> list[str]:
    task_id = PREFIX + card["name"]
    source = card["source"]
    out = [f"## `{task_id}`", "", "### Description", ""]
    out += [
        f"{card['title']}. Domain: {card['domain']}. {card['rows']:,} rows, "
        f"{len(card['columns'])} columns ({', '.join(f'`{c}`' for c in card['columns'])}), "
        f"plus the protected key `{KEY}` (the row's number in the instance: a layer adding rows "
        "puts them after the row they describe).",
        "",
        "### Source and licence",
        "",
        f"- Origin: {card['origin']}.",
        f"- Licence: {card['licence']}.",
        f"- Taken from PyPI `{source['package']}` {source['version']}, file `{source['file']}` "
        f"(sha256 `{source['sha256']}`); clean table sha256 `{card['clean_sha256']}`.",
        "",
        "### Errors",
        "",
        f"{len(card['layers'])} layers, each one error type under one mechanism of tab-err "
        f"{card['generator']['version']} at rate {card['layers'][0]['rate']:g} in one column "
        "(`EAR:c`: rows chosen by the values of column `c`). The classes tab-err lacks are "
        "ours (made by `corpus`, integrations/corpus/own_errors.py): `CaseVariant`, "
        "`ColumnSwap` (with the column named), `Duplicate` (an exact copy of a row) and "
        "`ConflictingSources` (two more reports of an entity; on two facts one of the three "
        "reports is wrong); a cell of an added row counts as wrong:",
        "",
        "| error type | made by | mechanism | layers | cells | rows added |",
        "|---|---|---|---:|---:|---:|",
    ]
    kinds: Counter[tuple[str, str, str]] = Counter()
    cells: Counter[tuple[str, str, str]] = Counter()
    added: Counter[tuple[str, str, str]] = Counter()
    for layer in card["layers"]:
        kind = (layer_name(layer), layer["generator"], layer["mechanism"].split(":")[0])
        kinds[kind] += 1
        cells[kind] += layer["cells"]
        added[kind] += layer.get("rows_added", 0)
    out += [
        f"| {n} | {g} | {m} | {kinds[(n, g, m)]} | {cells[(n, g, m)]:,} | {added[(n, g, m)]:,} |"
        for n, g, m in sorted(kinds)
    ]
    out += [
        "",
        "### Starting State",
        "",
        f"`POST /reset/{task_id}` with a seed and a split ({', '.join(SPLITS)}); the leaderboard "
        "draws a secret split from the server's secret. An instance draws a difficulty and "
        + ", ".join(f"{lo} to {hi} layers ({d})" for d, (lo, hi) in LAYERS_PER_DIFFICULTY.items())
        + f"; its generator version is `{GENERATOR_VERSIONS[task_id]}`.",
        "",
        "### Rewards",
        "",
        "Net repair against the clean table's text, max(0, (repaired - wrong changes) / "
        "errors), is the reward total; cell-repair precision, recall and F1 are reported "
        f"beside it. `{task_id}-labelled` offers `label` for 20 rows.",
        "",
        "### Episode End",
        "",
        f"`finish`, or the step budget: {MIN_STEPS}, or the instance's reference repair's "
        "length when longer.",
        "",
    ]
    return out


def layer_name(layer: dict[str, Any]) -> str:
    config = layer["config"]
    if "missing_value" in config:
        return f"{layer['error_type']} (`{config['missing_value']}`)"
    if "partner" in config:
        return f"{layer['error_type']} (`{layer['column']}`, `{config['partner']}`)"
    if config.get("replace_with") == "  ":
        return f"{layer['error_type']} (a space doubled)"
    return str(layer["error_type"])


def render() -> str:
    out = [
        "# The corpus of real tables",
        "",
        "<!-- Written by scripts/corpus_cards.py from the tables' card.json; do not edit. -->",
        "",
        'One card per table of the `corpus` family (docs/real-tables.md, "The corpus").',
        "",
        "## Error classes: tab-err's, and ours where it has none",
        "",
        "The dirty layers come from tab-err 0.2.1 (Apache-2.0), wrapped by "
        "integrations/corpus/build_corpus.py: typos (`Typo`), explicit and implicit missing "
        "values (`MissingValue`: empty, `N/A`, `-1`), outliers (`Outlier`), shifted values "
        "(`AddDelta`), units (`WrongUnit`), date formats (`Permutate`, `Replace` of the "
        "separator), whitespace inside a value (`Replace` of a space by two; the grader "
        "trims the ends, so only the inside counts), stray text (`Extraneous`) and another "
        "category, which breaks the functional dependencies on other columns "
        "(`CategorySwap`). tab-err has no change of letter case, no exchange of values "
        "between columns, and nothing that adds rows, so four classes are ours, in "
        "integrations/corpus/own_errors.py, seeded like every layer and built on tab-err "
        "(the first two are tab-err `ErrorType`s, and a tab-err mechanism picks every "
        "layer's rows): `CaseVariant`, `ColumnSwap` (a row's values of two columns of one "
        "kind exchanged), `Duplicate` (an exact copy of a row) and `ConflictingSources` "
        "(two more reports of an entity; on two of its facts one of the three reports holds "
        "another row's value, so a majority of reports stays right). The clean table holds "
        "one row per entity: a repair drops every added row (the first report of an entity "
        "is the one kept) and sets the kept row's facts to the majority.",
        "",
    ]
    for name in table_names():
        out += card(load_card(name))
    return "\n".join(out).rstrip("\n") + "\n"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    text = render()
    if args.check:
        return 0 if OUT.read_text(encoding="utf-8") == text else 1
    OUT.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
