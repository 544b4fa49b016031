"""The claim task kinds over OpenEnv's /ws against a real uvicorn: full episodes, rewards
that sum to the final score, and the audit's phase order refused as an error, not a crash."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from dataclean_env.client import CleaningAction, DataCleaningClient
from dataclean_env.tasks import default_registry
from tests.web import LiveServer


@pytest.fixture(scope="module")
def server() -> Iterator[LiveServer]:
    with LiveServer() as live:
        yield live


@pytest.mark.parametrize("task_id", ["error_detection", "standardisation", "audit_pipeline"])
def test_full_ws_episode(server, task_id) -> None:
    plan = default_registry().make(task_id, 4, "test").reference_plan
    with DataCleaningClient(base_url=server.url).sync() as env:
        first = env.reset(task_id=task_id, seed=4, split="test")
        rewards = []
        result = first
        for action in plan:
            result = env.step(CleaningAction(**action))
            rewards.append(result.reward)
        if not result.done:
            result = env.step(CleaningAction(operation="finish"))
            rewards.append(result.reward)
    assert result.done is True
    assert result.observation.score == 0.9999
    assert sum(rewards) == pytest.approx(result.observation.score - first.observation.score)


def test_ws_phase_order_is_an_error_frame_and_the_session_goes_on(server) -> None:
    with DataCleaningClient(base_url=server.url).sync() as env:
        first = env.reset(task_id="audit_pipeline", seed=0)
        assert first.observation.phase == "audit"
        refused = env.step(CleaningAction(operation="validate", parameters={"issues_remaining": 0}))
        assert refused.reward == 0.0 and refused.done is False
        assert refused.observation.info["error"]["code"] == "PHASE_OUT_OF_ORDER"
        step = env.step(CleaningAction(operation="audit", parameters={"categories": ["missing"]}))
        assert step.observation.info.get("error") is None
        assert step.observation.phases_left == ["identify", "fix", "validate"]


def test_inference_runs_the_claim_kinds_with_the_heuristic_offline(monkeypatch, capsys) -> None:
    import inference

    for name in ("HF_TOKEN", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    argv = ["--family", "claims", "--seeds", "0", "--split", "eval", "--episodes", "6"]
    assert inference.main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    starts = [line for line in lines if line.startswith("[START]")]
    ends = [line for line in lines if line.startswith("[END]")]
    assert [s.split()[1] for s in starts] == [
        "task=error_detection",
        "task=standardisation",
        "task=audit_pipeline",
        "task=detection_showcase",
        "task=standardisation_showcase",
        "task=audit_showcase",
    ]
    assert all(" model=heuristic-baseline" in s for s in starts)
    scores = [float(e.split("score=")[1].split()[0]) for e in ends]
    assert len(scores) == 6 and all(0.3 <= s <= 1.0 for s in scores), ends
