"""`inference.py --resume RUN_ID` over real HTTP: a leaderboard run stopped after its first
episode (the client interrupted) is continued from this client's ticket; only the episodes
still open are played, and the run completes with the first episode's score as recorded."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path
from typing import Any

import httpx
import pytest

from dataclean_env.agents.protocol import EpisodeKey
from dataclean_env.agents.reference import reference_factories
from dataclean_env.runner import leaderboard
from dataclean_env.runner.cli import main
from dataclean_env.tasks import default_registry
from tests.web import LiveServer


class Interrupted:
    name = "heuristic-baseline"

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        raise KeyboardInterrupt  # the person at the keyboard stops the run


def test_a_stopped_run_is_resumed_and_completes(tmp_path: Path) -> None:
    heuristic = reference_factories(default_registry())["heuristic"]

    def stops_at_second(key: EpisodeKey) -> Any:
        return heuristic(key) if key.seed == 0 else Interrupted()

    with LiveServer() as server:
        with pytest.raises(KeyboardInterrupt):
            leaderboard.run(
                server.url,
                "resumer",
                stops_at_second,
                "heuristic-baseline",
                suite=None,
                families=["crm"],
                episodes=3,
                runs_dir=tmp_path,
            )
        (ticket,) = tmp_path.glob("run-*.json")
        run_id = ticket.stem
        before = httpx.get(f"{server.url}/leaderboard/runs/{run_id}").json()
        assert [e["status"] for e in before["episodes"]][1:] == ["open", "open"]
        assert before["episodes"][0]["status"] != "open" and before["status"] == "open"
        resume = ["--resume", run_id, "--env-url", server.url, "--runs-dir", str(tmp_path)]
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            status = main([*resume, "--agent", "heuristic"])
        after = httpx.get(f"{server.url}/leaderboard/runs/{run_id}").json()
        again = [line for line in out.getvalue().splitlines() if line.startswith("[START]")]
        with pytest.raises(SystemExit, match="is complete: nothing left to play"):
            main(resume)
        with pytest.raises(SystemExit, match="no ticket for run 'run-0'"):
            main(["--resume", "run-0", "--env-url", server.url, "--runs-dir", str(tmp_path)])
    assert status == 0
    assert len(again) == 2  # the two episodes still open, not the first again
    assert after["status"] == "complete"
    # No score of a run shows before it ends; then every one does, the first as recorded.
    assert (before["episodes"][0]["score"], before["summary"]) == (None, None)
    assert unscored(after["episodes"][0]) == unscored(before["episodes"][0])
    assert all(e["score"] is not None for e in after["episodes"])


def unscored(episode: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in episode.items() if k not in ("score", "normalised")}
