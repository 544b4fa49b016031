"""Run an agent on the tasks and print the graders' log lines.

    python inference.py                      # every fixed task, built-in heuristic agent
    python inference.py --tasks easy_dedup_rename

Log lines (stdout, exact):
    [START] task=<task_id> env=<env name> model=<model name>
    [STEP] step=<n> action=<action text> reward=<x.xx> done=<true|false> error=<msg|null>
    [END] success=<true|false> steps=<n> score=<x.xx> rewards=<r1,r2,...>

`[END]` is always printed, also after an exception. The score is the episode's final
reward total. With no API key this runs offline on the heuristic agent (the baseline).
"""

from __future__ import annotations

import argparse
import json
import sys

from dataclean_env import ENV_NAME
from dataclean_env.agents import HeuristicAgent
from environment import DataCleaningEnv
from models import Action

SUCCESS_THRESHOLD = 0.5


def _flat(text: str) -> str:
    return " ".join(str(text).split())


def run_episode(task_id: str, seed: int | None = None) -> float:
    agent = HeuristicAgent()
    print(f"[START] task={task_id} env={ENV_NAME} model={agent.name}", flush=True)
    rewards: list[float] = []
    score, steps = 0.0, 0
    try:
        env = DataCleaningEnv(task_id=task_id, seed=seed)
        result = env.reset()
        while not result.done:
            action = agent.act(result.observation.model_dump())
            result = env.step(Action(**action))
            error = result.info.get("error")
            steps = result.info["step"] if not error else steps + 1
            rewards.append(result.reward.total)
            score = result.reward.total
            print(
                f"[STEP] step={steps} action={json.dumps(action, separators=(',', ':'))} "
                f"reward={score:.2f} done={str(result.done).lower()} "
                f"error={_flat(error['detail']) if error else 'null'}",
                flush=True,
            )
            if error and steps > 3 * result.observation.steps_remaining + 50:
                break
    finally:
        success = score >= SUCCESS_THRESHOLD
        print(
            f"[END] success={str(success).lower()} steps={steps} score={score:.2f} "
            f"rewards={','.join(f'{r:.2f}' for r in rewards)}",
            flush=True,
        )
    return score


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tasks", nargs="*", help="task ids (default: every task)")
    parser.add_argument("--seed", type=int, default=None)
    args = parser.parse_args(argv)
    task_ids = args.tasks or DataCleaningEnv().registry.task_ids()
    for task_id in task_ids:
        run_episode(task_id, args.seed)
    return 0


if __name__ == "__main__":
    sys.exit(main())
