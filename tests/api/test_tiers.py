"""The unit tier keeps its promise (pyproject's `unit` marker): none of its modules imports
the web stack, so `pytest tests/unit` starts without FastAPI, Starlette or uvicorn."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WEB_STACK = ("fastapi", "starlette", "uvicorn")

# Imports every unit test module in one fresh interpreter and prints what of the web
# stack got loaded.
PROBE = """
import importlib, pathlib, sys
for path in sorted(pathlib.Path("tests/unit").rglob("test_*.py")):
    importlib.import_module(".".join(path.with_suffix("").parts))
print(sorted({m.split(".")[0] for m in sys.modules} & set(sys.argv[1:])))
"""


def test_no_unit_test_module_imports_the_web_stack() -> None:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *WEB_STACK],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    assert done.stdout.strip() == "[]"
