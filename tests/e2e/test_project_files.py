"""The project's promises outside the code: one source of truth for tasks, README commands,
CI running the README's test command, and a Dockerfile that serves the app."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text(encoding="utf-8")


def test_openenv_yaml_lists_the_same_tasks_as_the_metadata(client) -> None:
    manifest = yaml.safe_load((ROOT / "openenv.yaml").read_text(encoding="utf-8"))
    metadata = json.loads((ROOT / "datasets" / "task_metadata.json").read_text(encoding="utf-8"))
    served = client.get("/tasks").json()["tasks"]
    from_yaml = [(t["id"], t["difficulty"], t["max_steps"]) for t in manifest["tasks"]]
    from_metadata = [(t["task_id"], t["difficulty"], t["max_steps"]) for t in metadata["tasks"]]
    from_server = [(t["task_id"], t["difficulty"], t["max_steps"]) for t in served]
    assert from_yaml == from_server
    assert from_yaml[: len(from_metadata)] == from_metadata  # then the generated families
    assert manifest["app"] == "main:app"
    assert manifest["port"] == 7860


def test_the_readme_gives_the_test_command_ci_runs() -> None:
    # What `.ci/run` runs last is checked by running it (tests/unit/test_ci_run.py).
    assert "pip install uv && uv run --locked pytest" in README


def test_readme_front_matter_is_a_docker_space() -> None:
    front = yaml.safe_load(README.split("---")[1])
    assert front["sdk"] == "docker"
    assert front["app_port"] == 7860
    assert "openenv" in front["tags"]


def test_dockerfile_serves_the_app_on_7860_as_a_non_root_user() -> None:
    dockerfile = (ROOT / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"^USER 1000:1000$", dockerfile, re.M)
    assert "uv sync --frozen" in dockerfile
    assert "EXPOSE 7860" in dockerfile
    assert "HEALTHCHECK" in dockerfile and "/health" in dockerfile
    assert '"/app/.venv/bin/server", "--host", "0.0.0.0", "--port", "7860"' in dockerfile


def test_dockerfile_passes_hadolint() -> None:
    hadolint = Path(sys.executable).parent / "hadolint"
    result = subprocess.run(
        [str(hadolint), "--no-color", "Dockerfile"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_version_lives_in_one_place() -> None:
    from dataclean_env import __version__

    manifest = yaml.safe_load((ROOT / "openenv.yaml").read_text(encoding="utf-8"))
    pyproject = (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert 'dynamic = ["version"]' in pyproject and "\nversion =" not in pyproject
    assert manifest["version"] == __version__


def test_the_changelog_top_entry_is_the_package_version() -> None:
    from dataclean_env import __version__

    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    versions = re.findall(r"^## (\S+)$", changelog, re.M)
    assert versions[0] == __version__
    assert versions == sorted(set(versions), key=lambda v: [int(p) for p in v.split(".")])[::-1]


def test_citation_cff_parses_and_cites_the_package_version() -> None:
    from dataclean_env import __version__

    citation = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    assert citation["cff-version"] == "1.2.0"
    assert citation["title"] == "Data Cleaning OpenEnv"
    assert citation["type"] == "software"
    assert citation["license"] == "MIT"
    assert citation["version"] == __version__
    assert citation["authors"] == [{"name": "Data Cleaning OpenEnv contributors"}]
    assert citation["message"].strip()


def test_the_reward_table_names_the_doors_that_exist(client) -> None:
    table = README.split("## Reward by door", 1)[1].split("\n## ", 1)[0]
    doors = [row.split("|")[1].strip() for row in table.strip().splitlines()[2:]]
    assert doors == [
        "REST `POST /step/{task_id}`",
        "`/ws` (OpenEnv client)",
        "MCP `/mcp`",
        "TRL `DataCleaningToolEnv`",
        "verifiers `dataclean-verifiers`",
        "`inference.py` `[STEP] reward=`",
    ]
    client.post("/reset/easy_dedup_rename", json={"episode_id": "doors"})
    step = client.post(
        "/step/easy_dedup_rename", json={"episode_id": "doors", "operation": "finish"}
    )
    assert set(step.json()["reward"]) >= {"total"}
    with client.websocket_connect("/ws") as ws:
        ws.send_json({"type": "reset", "data": {"task_id": "easy_dedup_rename"}})
        assert ws.receive_json()["data"]["reward"] == 0.0
    mcp = client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert mcp.status_code == 200
    from dataclean_env.training.trl_env import DataCleaningToolEnv

    assert callable(DataCleaningToolEnv.get_reward)
    verifiers = ROOT / "integrations" / "verifiers"
    assert 'name = "dataclean-verifiers"' in (verifiers / "pyproject.toml").read_text()
    assert "openenv_reward" in (verifiers / "dataclean_verifiers" / "taskset.py").read_text()
    assert (ROOT / "inference.py").exists()


def test_the_install_size_table_is_the_measured_one() -> None:
    # scripts/install_size.py measures (minutes: fresh venvs) and writes both; this keeps the
    # doc's numbers those of the committed measurement.
    from scripts.install_size import START, render

    measured = json.loads((ROOT / "docs" / "install_size.json").read_text(encoding="utf-8"))
    doc = (ROOT / "docs" / "install.md").read_text(encoding="utf-8")
    assert render(measured) in doc
    assert doc.count(START) == 1
    assert set(measured["profiles"]) == {"with the dev group", "runtime only (--no-dev)"}
    runtime = measured["profiles"]["runtime only (--no-dev)"]
    assert runtime["packages"] < measured["profiles"]["with the dev group"]["packages"]
    assert "gradio" in measured["gradio"]["packages"]
