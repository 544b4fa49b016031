"""Raha (error detection) and Baran (error correction) as an agent of the environment.

Run with the side venv's python (`.ci/setup-raha.sh` builds it: PyPI raha 1.26, which needs
pandas<2.2 and numpy<2, so it cannot share uv.lock):

    bash .ci/setup-raha.sh
    ~/.cache/data-cleaning-openenv/raha/bin/python integrations/raha/raha_baran.py --seeds 0-4

Each run is one blind episode (`reward_mode=hidden`) of the labelled variant of a real table
over HTTP, against a server this script starts on 127.0.0.1 (or `--env-url`):

1. it reads the dirty table with one `query` per 1,000 rows (rows packed into JSON lists, so
   missing cells stay apart from the text "NULL") and writes it as Raha's dirty.csv;
2. Raha runs its strategies, features and clusters, then samples its 20 tuples. Its sampling
   depends only on *which* tuples are labelled, never on their labels, so the 20 are sampled
   first and labelled by one `label` step; the answers become Raha's and Baran's labelled
   cells exactly as their own `label_with_ground_truth` would make them from a clean file.
   Raha is never given a clean file: labels are the only gold it sees;
3. Raha propagates the labels and classifies every cell; Baran, on the detected cells, learns
   from the same 20 tuples one at a time (its own loop, with Raha's tuples instead of
   sampling its own: the environment's budget is 20 tuples for both);
4. the corrections are applied through the environment: per column one `map` for the values
   corrected the same way wherever they occur, `set_cell` for the rest, in `program`s of 20,
   then `finish`. The score is the environment's grader's, read from the final answer.

Stdout gets one JSON line per run; `--out` writes them all with their mean and spread.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TASK = "rayyan-labelled"
LABEL_BUDGET = 20  # tuples: Raha and Baran's standard budget, the labelled variant's too
PAGE_ROWS = 1000  # rows one `query` reads (50 result rows of 20 packed rows), halved while
# a page holds more text than a result may (TOO_LARGE, a refusal: it costs no step)
GROUP_ROWS = 20
PROGRAM_STEPS = 20  # `program`'s bound
MAP_ENTRIES = 1000  # `map`'s bound
KEY = re.compile(r"identified by '([^']+)' \(protected\)")
Cell = tuple[int, int]  # (row position, column position)


class EnvError(RuntimeError):
    """The environment refused a call."""


class Env:
    """The REST doors of one episode (stdlib only: this venv has none of the server's code)."""

    def __init__(self, url: str):
        self.url = url.rstrip("/")
        self.episode_id: str | None = None
        self.last: dict[str, Any] = {}

    def _post(self, path: str, body: dict[str, Any]) -> dict[str, Any]:
        request = urllib.request.Request(
            self.url + path,
            data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )
        try:
            with urllib.request.urlopen(request, timeout=120) as answer:
                return json.loads(answer.read())
        except urllib.error.HTTPError as error:
            raise EnvError(f"{path}: {error.code} {error.read().decode()[:500]}") from None

    def reset(self, task: str, seed: int) -> dict[str, Any]:
        episode = f"raha-baran-{task}-{seed}-{os.getpid()}"
        body = {"task_id": task, "seed": seed, "episode_id": episode, "reward_mode": "hidden"}
        self.last = self._post("/reset", body)
        self.episode_id = self.last["info"]["episode_id"]
        return self.last

    def step(self, operation: str, **parameters: Any) -> dict[str, Any]:
        body = {"episode_id": self.episode_id, "operation": operation, "parameters": parameters}
        self.last = self._post("/step", body)
        error = self.last["info"].get("error")
        if error:
            raise EnvError(f"{operation} refused: {error['code']}: {error['detail']}")
        return self.last

    @property
    def steps_left(self) -> int:
        return int(self.last["observation"]["steps_remaining"])


def read_table(env: Env, columns: list[str], rows: int) -> list[list[str | None]]:
    """Every row as the environment holds it (text; None where a cell is missing)."""
    quoted = ['"' + c.replace('"', '""') + '"' for c in columns]
    cells = ", ".join(f"CAST({c} AS VARCHAR)" for c in quoted)
    table: list[list[str | None]] = []
    page = PAGE_ROWS
    while len(table) < rows:
        start = len(table)
        sql = (
            f"SELECT to_json(list([{cells}] ORDER BY rn)) FROM "
            f"(SELECT *, row_number() OVER () - 1 AS rn FROM t) "
            f"WHERE rn >= {start} AND rn < {start + page} "
            f"GROUP BY rn // {GROUP_ROWS} ORDER BY min(rn)"
        )
        try:
            result = env.step("query", sql=sql)["observation"]["query_result"]
        except EnvError as error:
            if "TOO_LARGE" not in str(error) or page <= GROUP_ROWS:
                raise
            page //= 2
            continue
        read = [row for (packed,) in result["rows"] for row in json.loads(packed)]
        if not read:
            break
        table += read
    if len(table) != rows:
        raise EnvError(f"read {len(table)} rows of {rows}")
    return table


def labelled_rows(env: Env, keys: list[str]) -> dict[str, dict[str, str] | None]:
    """The clean values of the rows `keys` name, by key and column (one `label` step); None
    for a row the clean table lacks."""
    message = env.step("label", row_ids=[row_id(k) for k in keys])["observation"]["message"]
    return json.loads(message.split(": ", 1)[1])


@dataclass
class Repairs:
    detected: int  # cells Raha flagged
    corrected: dict[Cell, str]  # Baran's value of each cell it corrects
    seconds: float


def raha_baran(
    dirty_csv: Path,
    name: str,
    label: Callable[[list[int]], dict[int, list[str] | None]],
    budget: int,
    key_column: int,
) -> tuple[Repairs, list[int]]:
    """Raha then Baran on `dirty_csv`; `label(rows)` answers the clean rows (as {column
    index: text}) of the row positions it is given. Returns the repairs and the rows
    labelled, in Raha's order. A row the clean table lacks is answered None."""
    import numpy
    import raha

    started = time.perf_counter()
    detection = raha.Detection()
    detection.LABELING_BUDGET = budget
    detection.SAVE_RESULTS = False  # no results folder: nothing cached between runs
    detection.VERBOSE = False
    d = detection.initialize_dataset({"name": name, "path": str(dirty_csv)})
    detection.run_strategies(d)
    detection.generate_features(d)
    detection.build_clusters(d)
    sampled: list[int] = []
    width = d.dataframe.shape[1]
    while len(sampled) < budget:
        detection.sample_tuple(d)  # reads only which tuples are labelled
        row = int(d.sampled_tuple)
        sampled.append(row)
        d.labeled_tuples[row] = 1
        for j in range(width):
            d.labeled_cells[(row, j)] = [0, None]  # filled in below, before any use
    clean_rows = label(sampled)
    normalise = raha.dataset.Dataset.value_normalizer
    for row in sampled:
        for j in range(width):
            dirty = d.dataframe.iloc[row, j]
            clean_row = clean_rows[row]
            if j == key_column:
                d.labeled_cells[(row, j)] = [0, dirty]
            elif clean_row is None:
                # A row the clean table lacks (a duplicate or a further report): every cell
                # of it is an error, with no clean value to learn a correction from.
                d.labeled_cells[(row, j)] = [1, dirty]
            else:
                clean = normalise(clean_row[j])
                d.labeled_cells[(row, j)] = [int(dirty != clean), clean]
    # What the last sample_tuple would have counted per cluster, now with the real labels.
    k = budget + 1
    for j in range(width):
        for c, cluster in d.clusters_k_j_c_ce[k][j].items():
            d.labels_per_cluster[(j, c)] = {
                cell: d.labeled_cells[cell][0] for cell in cluster if cell[0] in d.labeled_tuples
            }
    detection.propagate_labels(d)
    detection.predict_labels(d)
    detected = len(d.detected_cells)

    correction = raha.Correction()
    correction.LABELING_BUDGET = budget
    correction.SAVE_RESULTS = False
    correction.VERBOSE = False
    correction.initialize_dataset(d)  # keeps Raha's labelled tuples and cells
    correction.initialize_models(d)
    for row in sampled:  # Baran's own loop, over Raha's tuples
        d.sampled_tuple = numpy.int64(row)
        correction.update_models(d)
        correction.predict_corrections(d)
    corrected = {(int(i), int(j)): str(v) for (i, j), v in d.corrected_cells.items()}
    return Repairs(detected, corrected, time.perf_counter() - started), sampled


def repair_actions(
    columns: list[str], key: int, table: list[list[str | None]], corrected: dict[Cell, str]
) -> list[dict[str, Any]]:
    """The corrections as operations: per column a `map` of every value corrected to one
    value wherever it occurs in that column, a `set_cell` for every other corrected cell.
    The key column is protected: corrections of it are left out."""
    by_column: dict[int, dict[int, str]] = {}
    for (i, j), value in sorted(corrected.items()):
        if j != key and (table[i][j] or "").strip() != value.strip():
            by_column.setdefault(j, {})[i] = value
    actions: list[dict[str, Any]] = []
    for j, cells in sorted(by_column.items()):
        rows_of: dict[str, list[int]] = {}
        for i, row in enumerate(table):
            value = row[j]
            if value is not None:
                rows_of.setdefault(value, []).append(i)
        mapping: dict[str, str] = {}
        for value, rows in rows_of.items():
            targets = {cells.get(i) for i in rows}
            if len(targets) == 1 and (target := targets.pop()):
                mapping[value] = target
        entries = sorted(mapping.items())
        for start in range(0, len(entries), MAP_ENTRIES):
            chunk = dict(entries[start : start + MAP_ENTRIES])
            actions.append(
                {"operation": "map", "parameters": {"column": columns[j], "mapping": chunk}}
            )
        for i, value in cells.items():
            if table[i][j] not in mapping:
                parameters = {"row_id": row_id(table[i][key]), "column": columns[j]}
                actions.append(
                    {"operation": "set_cell", "parameters": {**parameters, "value": value or None}}
                )
    return actions


def row_id(text: str | None) -> int | str:
    """A key cell as the environment's row ids take it (whole numbers as integers)."""
    if text is None:
        raise EnvError("a row without a key")
    return int(text) if text.lstrip("-").isdigit() else text


def key_column(observation: dict[str, Any]) -> int:
    """The protected key column the task description names."""
    found = KEY.search(observation["task_description"])
    if found is None or found[1] not in observation["columns"]:
        raise EnvError("the task description names no key column")
    return observation["columns"].index(found[1])


def play(env: Env, task: str, seed: int, workdir: Path) -> dict[str, Any]:
    """One episode: read, detect and correct with Raha and Baran, apply, finish."""
    started = time.perf_counter()
    random.seed(seed)  # Raha shuffles its strategies with `random`, samples with numpy
    import numpy

    numpy.random.seed(seed)
    observation = env.reset(task, seed)["observation"]
    columns, rows = observation["columns"], observation["shape"][0]
    key = key_column(observation)
    table = read_table(env, columns, rows)
    dirty_csv = workdir / f"seed-{seed}" / "dirty.csv"
    dirty_csv.parent.mkdir(parents=True)
    write_csv(dirty_csv, columns, table)

    def label(positions: list[int]) -> dict[int, list[str] | None]:
        clean = labelled_rows(env, [str(table[i][key]) for i in positions])
        rows = {i: clean[str(table[i][key])] for i in positions}
        return {
            i: None if row is None else [row.get(c, "") for c in columns] for i, row in rows.items()
        }

    name = f"{task}-{seed}-{os.getpid()}"  # Raha's temporary files are named after it
    repairs, sampled = raha_baran(dirty_csv, name, label, LABEL_BUDGET, key)
    actions = repair_actions(columns, key, table, repairs.corrected)
    programs = [actions[i : i + PROGRAM_STEPS] for i in range(0, len(actions), PROGRAM_STEPS)]
    room = env.steps_left - 1  # one step for `finish`
    applied = programs[:room]
    for batch in applied:
        env.step("program", operations=batch)
    final = env.step("finish") if env.steps_left else env.last
    if not final["done"]:
        raise EnvError("the episode did not end")
    info = final["info"]
    return {
        "task": task,
        "seed": seed,
        "precision": info["repair"]["precision"],
        "recall": info["repair"]["recall"],
        "f1": info["repair"]["f1"],
        "cells_changed": info["repair"]["cells_changed"],
        "labels_used": info["labels_used"],
        "labelled_rows": [row_id(table[i][key]) for i in sampled],
        "cells_detected": repairs.detected,
        "cells_corrected": len(repairs.corrected),
        "operations": len(actions),
        "operations_applied": sum(len(b) for b in applied),
        "steps": info["step"],
        "raha_baran_seconds": round(repairs.seconds, 1),
        "seconds": round(time.perf_counter() - started, 1),
        "actions": [{"operation": "program", "parameters": {"operations": b}} for b in applied],
    }


def write_csv(path: Path, columns: list[str], table: list[list[str | None]]) -> None:
    import csv

    with path.open("w", newline="", encoding="utf-8") as out:
        writer = csv.writer(out)
        writer.writerow(columns)
        writer.writerows([["" if v is None else v for v in row] for row in table])


def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean, standard deviation, min and max over the runs of each figure."""

    def spread(name: str) -> dict[str, float]:
        values = [float(r[name]) for r in runs]
        sd = statistics.stdev(values) if len(values) > 1 else 0.0
        return {
            "mean": round(statistics.fmean(values), 4),
            "sd": round(sd, 4),
            "min": round(min(values), 4),
            "max": round(max(values), 4),
        }

    names = ("f1", "precision", "recall", "cells_changed", "labels_used", "seconds")
    return {name: spread(name) for name in names}


def versions() -> dict[str, str]:
    from importlib.metadata import version

    return {p: version(p) for p in ("raha", "pandas", "numpy", "scikit-learn", "scipy")}


@contextmanager
def server(python: Path) -> Iterator[str]:
    """The environment's server on a free 127.0.0.1 port, stopped on exit."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [str(python), "-m", "dataclean_env.server.app", "--host", "127.0.0.1"]
    quiet = subprocess.DEVNULL  # its access log would bury the results
    process = subprocess.Popen(
        [*command, "--port", str(port)], cwd=ROOT, stdout=quiet, stderr=quiet
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                with urllib.request.urlopen(url + "/health", timeout=2):
                    break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise EnvError("the server did not start") from None
                time.sleep(0.2)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def parse_seeds(text: str) -> list[int]:
    """'0-4' or '1,5,7'."""
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.partition("-")
        seeds += range(int(low), int(high or low) + 1)
    return seeds


def in_turn(url: str, seeds: list[int], actions: bool, task: str) -> list[dict[str, Any]]:
    """One run per seed, one after another; each printed as one JSON line."""
    runs = []
    with tempfile.TemporaryDirectory(prefix="raha-baran-") as workdir:
        env = Env(url)
        for seed in seeds:
            run = play(env, task, seed, Path(workdir))
            if not actions:
                del run["actions"]
            print(json.dumps(run), flush=True)
            runs.append(run)
    return runs


def in_parallel(
    url: str, seeds: list[int], jobs: int, actions: bool, task: str
) -> list[dict[str, Any]]:
    """The seeds in `jobs` child processes of this script at a time (Raha's own process
    pools cannot nest inside a multiprocessing worker), in seed order."""
    command = [sys.executable, __file__, "--env-url", url, "--task", task]
    command += ["--actions"] if actions else []
    runs: dict[int, dict[str, Any]] = {}
    pending = list(seeds)
    running: dict[int, subprocess.Popen[str]] = {}
    while pending or running:
        while pending and len(running) < jobs:
            seed = pending.pop(0)
            running[seed] = subprocess.Popen(
                [*command, "--seeds", str(seed)], stdout=subprocess.PIPE, text=True
            )
        seed = next(iter(running))
        child = running.pop(seed)
        out, _ = child.communicate()
        if child.returncode:
            raise EnvError(f"the run of seed {seed} failed (exit status {child.returncode})")
        runs[seed] = json.loads(out.splitlines()[-1])
        print(out.splitlines()[-1], flush=True)
    return [runs[seed] for seed in seeds]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--seeds", default="0-4", help="episode seeds, e.g. 0-4 or 1,5 (default 0-4)")
    p.add_argument("--task", default=TASK, help=f"a labelled real table (default {TASK})")
    p.add_argument("--env-url", help="a running server (default: start one on 127.0.0.1)")
    p.add_argument(
        "--server-python",
        type=Path,
        default=ROOT / ".venv" / "bin" / "python",
        help="the project's python that serves the environment (default: the checkout's .venv)",
    )
    p.add_argument("--out", type=Path, help="write the runs, their summary and versions here")
    p.add_argument("--actions", action="store_true", help="keep each run's applied actions")
    p.add_argument("--jobs", type=int, default=1, help="seeds run at once (default 1)")
    args = p.parse_args(argv)
    seeds = parse_seeds(args.seeds)
    with nullcontext(args.env_url) if args.env_url else server(args.server_python) as url:
        if args.jobs > 1:
            runs = in_parallel(url, seeds, args.jobs, args.actions, args.task)
        else:
            runs = in_turn(url, seeds, args.actions, args.task)
    if args.out:
        command = "integrations/raha/raha_baran.py --seeds " + args.seeds
        if args.task != TASK:
            command += f" --task {args.task}"
        if args.jobs > 1:
            command += f" --jobs {args.jobs}"
        report = {
            "agent": "raha-baran",
            "task": args.task,
            "command": command,
            "mode": "reward_mode=hidden",
            "label_budget": LABEL_BUDGET,
            "jobs": args.jobs,
            "seeds": seeds,
            "versions": versions(),
            "summary": summary(runs),
            "runs": runs,
        }
        args.out.write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
