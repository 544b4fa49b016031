"""Run an agent on the tasks and print the graders' log lines.

    python inference.py                      # every task; the LLM if a key is set, else the
                                             # built-in heuristic agent, offline
    python inference.py --tasks easy_dedup_rename --env-url http://127.0.0.1:7860
    python inference.py --help               # selection, agents, LLM settings, results file

Log lines (stdout, exact):
    [START] task=<task_id> env=<env name> model=<model name>
    [STEP] step=<n> action=<action text> reward=<x.xx> done=<true|false> error=<msg|null>
    [END] success=<true|false> steps=<n> score=<x.xx> rewards=<r1,r2,...>

`[END]` is always printed, also after an exception or an interrupt; its score is the
episode's final score. The substance lives in `dataclean_env/runner/`.
"""

from __future__ import annotations

import sys

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.agents.protocol import EpisodeKey
from dataclean_env.runner.backends import LocalBackend
from dataclean_env.runner.cli import main
from dataclean_env.runner.loop import run_episode as play
from dataclean_env.tasks import default_registry


def run_episode(task_id: str, seed: int | None = None, split: str = "train") -> float:
    """One logged in-process episode of the heuristic agent; its final score."""
    env = LocalBackend(default_registry())
    return play(env, HeuristicAgent(), EpisodeKey(task_id, seed, split)).score


if __name__ == "__main__":
    sys.exit(main())
