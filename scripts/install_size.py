"""Measure what the quick start installs: packages and venv size, with the dev group (what a
bare `uv run server` syncs) and without it (`uv run --no-dev server`, the image's
`uv sync --frozen --no-dev`), and the share of that runtime only gradio brings (openenv
requires it; the server never imports it).

    uv run python scripts/install_size.py     # writes docs/install_size.json, docs/install.md

Each install is a fresh venv synced from uv.lock (uv's cache makes it a local copy, as on a
second machine with a warm cache); sizes are the bytes of the venv's files, bytecode included
(the project compiles at install, as the image does)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULT = ROOT / "docs" / "install_size.json"
DOC = ROOT / "docs" / "install.md"
START, END = "<!-- install-size:start -->", "<!-- install-size:end -->"
PROFILES = {"with the dev group": [], "runtime only (--no-dev)": ["--no-dev"]}
# Each installed distribution's bytes, from its RECORD, run by the measured venv's python.
SIZES = (
    "import json, importlib.metadata as m\n"
    "print(json.dumps({d.metadata['Name']: sum("
    "f.locate().stat().st_size for f in (d.files or []) if f.locate().is_file())"
    " for d in m.distributions()}))"
)


def normal(name: str) -> str:
    """A distribution's name as the package index compares them (PEP 503)."""
    return re.sub(r"[-_.]+", "-", name).lower()


def uv(*args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["uv", *args], cwd=ROOT, env=env, capture_output=True, text=True, check=True
    )
    return done.stdout


def tree_bytes(folder: Path) -> int:
    return sum(
        (Path(top) / name).lstat().st_size for top, _, files in os.walk(folder) for name in files
    )


def exported(*options: str) -> set[str]:
    text = uv("export", "--locked", "--no-dev", "--no-hashes", "--no-emit-project", *options)
    return {
        normal(line.split("==")[0].split("[")[0].strip())
        for line in text.splitlines()
        if "==" in line and not line.startswith(("#", " "))
    }


def measure() -> dict[str, object]:
    profiles = {}
    with tempfile.TemporaryDirectory() as scratch:
        for label, options in PROFILES.items():
            venv = Path(scratch) / "venv"
            env = {**os.environ, "UV_PROJECT_ENVIRONMENT": str(venv)}
            uv("sync", "--locked", "--python", sys.executable, *options, env=env)
            measured = json.loads(
                subprocess.run(
                    [str(venv / "bin" / "python"), "-c", SIZES],
                    capture_output=True,
                    text=True,
                    check=True,
                ).stdout
            )
            sizes = {normal(name): size for name, size in measured.items()}
            profiles[label] = {
                "command": " ".join(["uv", "sync", "--locked", *options]),
                "packages": len(sizes) - 1,  # the project itself is not a dependency
                "venv_mb": round(tree_bytes(venv) / 1e6, 1),
            }
            runtime_sizes = sizes
            shutil.rmtree(venv)
    # Installed here (markers drop some, e.g. audioop-lts below Python 3.13).
    only_gradio = sorted((exported() - exported("--prune", "gradio")) & runtime_sizes.keys())
    return {
        "profiles": profiles,
        "gradio": {
            "packages": only_gradio,
            "mb": round(sum(runtime_sizes.get(p, 0) for p in only_gradio) / 1e6, 1),
        },
    }


def render(result: dict) -> str:
    rows = [
        f"| {label} | `{p['command']}` | {p['packages']} | {p['venv_mb']} MB |"
        for label, p in result["profiles"].items()
    ]
    gradio = result["gradio"]
    return "\n".join(
        [
            START,
            "| install | command | packages | venv size |",
            "|---|---|---|---|",
            *rows,
            "",
            f"Of the runtime install, {len(gradio['packages'])} packages "
            f"({gradio['mb']} MB) are there only for gradio: "
            + ", ".join(f"`{p}`" for p in gradio["packages"])
            + ".",
            END,
        ]
    )


def write_doc(result: dict) -> None:
    text = DOC.read_text(encoding="utf-8")
    head, _, rest = text.partition(START)
    _, _, tail = rest.partition(END)
    DOC.write_text(head + render(result) + tail, encoding="utf-8")


def main() -> None:
    result = measure()
    RESULT.write_text(json.dumps(result, indent=2) + "\n", encoding="utf-8")
    write_doc(result)
    print(render(result))


if __name__ == "__main__":
    main()
