"""One episode: the agent acts until the environment says done, and every action is logged.

The log lines (stdout) are the graders' format (`logs.py`). A step's reward in the log is
the episode's score after it, and `[END]` reports the *final* score: averaging per-step
rewards would reward stopping early. `[END]` is printed whatever happens, also when the
agent or the environment raises or the run is interrupted.

Refused actions do not use the environment's step budget, so an agent that keeps sending
bad actions would never finish; it gets at most `ATTEMPTS_PER_STEP` times the budget in
actions, after which the episode stops where it is (never with a `finish` sent for it).
"""

from __future__ import annotations

import sys
import time
import traceback
from typing import Any, TextIO

from dataclean_env.agents.parsing import UnparseableReply
from dataclean_env.agents.protocol import Agent, EpisodeKey
from dataclean_env.benchmark.results import EpisodeResult
from dataclean_env.runner.backends import Backend
from dataclean_env.runner.logs import end_line, start_line, step_line

SUCCESS_THRESHOLD = 0.5
ATTEMPTS_PER_STEP = 2


def run_episode(
    env: Backend, agent: Agent, key: EpisodeKey, out: TextIO | None = None
) -> EpisodeResult:
    """Play one episode and log it. An exception ends the episode (after `[END]`) and is
    recorded in the result; a KeyboardInterrupt ends it too and is raised again."""
    out = out or sys.stdout
    print(start_line(key.task_id, agent.name), file=out, flush=True)
    started = time.perf_counter()
    rewards: list[float] = []
    score, components, invalid, rows_lost = 0.0, {}, 0, None
    repair = labels_used = None
    crash = None
    try:
        step = env.reset(key)
        score, components, repair = step.score, step.components, step.repair
        labels_used = step.labels_used
        budget = step.observation["step"] + step.observation["steps_remaining"]
        while not step.done and len(rewards) < ATTEMPTS_PER_STEP * budget:
            action: dict[str, Any] | None = None
            problem: str | None
            try:
                chosen = agent.act(step.observation)
            except UnparseableReply as reply:
                problem = f"unparseable reply: {reply}"
            else:
                action, step = chosen, env.step(chosen)
                problem = step.error
            invalid += problem is not None
            score, components, repair = step.score, step.components, step.repair
            labels_used = step.labels_used
            rewards.append(score)
            print(step_line(len(rewards), action, score, step.done, problem), file=out, flush=True)
        rows_lost = env.rows_lost()
    except Exception as error:  # the episode ends here; the run goes on to the next one
        crash = f"{type(error).__name__}: {error}"
        traceback.print_exc(file=sys.stderr)
    finally:
        success = score >= SUCCESS_THRESHOLD
        print(end_line(success, len(rewards), score, rewards), file=out, flush=True)
    return EpisodeResult(
        task_id=key.task_id,
        split=key.split,
        seed=key.seed,
        model=agent.name,
        steps=len(rewards),
        score=score,
        success=success,
        components=components,
        invalid_actions=invalid,
        rows_lost=rows_lost,
        wall_time_s=round(time.perf_counter() - started, 4),
        error=crash,
        repair=repair,
        labels_used=labels_used,
    )
