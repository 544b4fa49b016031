"""Constants and helpers shared by the tests (no web stack: the unit tier imports this)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from dataclean_env.server.limits.limit_store import LimitDatabase

TASK_IDS = [
    "easy_dedup_rename",
    "medium_missing_dtype",
    "hard_full_pipeline",
    "expert_sales_pipeline",
]
# The generated families: one task id each, instances chosen by seed and split.
GENERATED_IDS = ["fix_types", "normalize_dedupe", "full_pipeline", "crm", "orders", "inventory"]
# Real tables shipped in datasets/ (custom family, graded by net repair).
REAL_IDS = ["rayyan", "rayyan-labelled"]  # every real table also loads with 20 labels
# The tasks graded on claims: generated kinds, then their showcase instances.
CLAIM_TASK_IDS = [
    "error_detection",
    "standardisation",
    "audit_pipeline",
    "detection_showcase",
    "standardisation_showcase",
    "audit_showcase",
    # from datasets/rayyan, whose task.json lists these kinds
    "rayyan_detection",
    "rayyan_audit",
]
# The corpus of real tables with tab-err's errors (tasks/corpus.py), each with 20 labels too.
CORPUS_TABLES = ["airports", "flights", "gapminder", "planes", "seattle_weather", "weather"]
CORPUS_IDS = [i for t in CORPUS_TABLES for i in (f"corpus_{t}", f"corpus_{t}-labelled")]
ALL_TASK_IDS = [*TASK_IDS, *GENERATED_IDS, *CLAIM_TASK_IDS, *CORPUS_IDS, *REAL_IDS]
# The reward object of the contract, in its order.
REWARD_FIELDS = [
    "total",
    "duplicate_score",
    "missing_score",
    "dtype_score",
    "outlier_score",
    "schema_score",
    "penalty",
]
# The reward object of custom and generated tasks.
PRESERVATION_FIELDS = [
    "total",
    "repair_score",
    "preservation_score",
    "row_integrity_score",
    "penalty",
]
# The reward object of real tables: net repair (the total), cell-repair precision, recall, F1.
REPAIR_FIELDS = ["total", "net_repair", "precision", "recall", "f1", "penalty"]
# The reward objects of the tasks graded on claims, by TaskSpec.kind.
CLAIM_REWARD_FIELDS = {
    "detection": [
        "total",
        "detection_precision",
        "detection_recall",
        "detection_f1",
        "type_accuracy",
        "penalty",
    ],
    "standardisation": ["total", "standardisation_score", "cell_share", "penalty"],
    "audit": ["total", "audit_score", "identify_score", "fix_score", "validate_score", "penalty"],
}
# The observation fields that describe the table (a refused step must not change them).
TABLE_FIELDS = (
    "columns",
    "shape",
    "missing_values",
    "dtypes",
    "duplicate_count",
    "sample_rows",
    "sample_offset",
    "column_profiles",
    "dataset_info",
)


def ok(response) -> dict[str, Any]:
    """The JSON of a 200 answer (else the test fails with the body)."""
    assert response.status_code == 200, response.text
    return response.json()


def probe_json(source: str) -> dict[str, Any]:
    """Run `source` in a fresh Python process (a cold interpreter: nothing imported yet) and
    give the JSON object its last line of output printed."""
    run = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, timeout=300, check=False
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def need(available: bool, why: str) -> None:
    """Skip a test whose tool (a browser, a database, a training venv) is missing here, but
    fail it under CI (`CI=true`), whose `.ci/run` must have installed the tool."""
    if available:
        return
    if os.environ.get("CI"):
        pytest.fail(f"CI must provide this: {why}")
    pytest.skip(why)


ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "custom_datasets"


def limit_database(path: Path, index: int) -> LimitDatabase:
    """Process `index`'s limit store on the SQLite file `path`, opened as `limits_for`
    opens it at start."""
    from dataclean_env.server.limits.limit_store import LimitDatabase  # SQLAlchemy: only when used

    opened = LimitDatabase(str(path), index)
    opened.open()
    return opened


# The lite suite: one episode per family of the suite (benchmark/suites/suites.json).
LITE_EPISODES = 10
