"""`python inference.py`: run an agent on tasks and print the graders' log lines.

    python inference.py                                  # every task, seed 0, eval split
    python inference.py --family generated --seeds 0-9   # ten instances of each family
    python inference.py --env-url http://127.0.0.1:7860  # against a server (over /ws)
    python inference.py --agent random --results runs/random.jsonl
    python inference.py --leaderboard NAME --env-url URL  # a verified leaderboard run
    python inference.py --resume RUN_ID --env-url URL     # go on with one started here

Agent: with `HF_TOKEN` or `OPENAI_API_KEY` set, the LLM at `API_BASE_URL` named by
`MODEL_NAME`; without a key, the built-in heuristic agent, offline (`model=heuristic-baseline`).
`--agent` picks one explicitly (also the no-op, random and oracle reference agents).

Stdout holds only the log lines; the progress bar, notes and the closing summary (mean score
per task and per family, F1 on real tables, labels used on labelled ones) go to stderr.
Exit status: 0,
or 1 when an episode ended with an exception (its `[END]` line is printed all the same),
or 130 when interrupted.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from tqdm import tqdm

from dataclean_env.agents.llm_config import LLMSettings, RetryPolicy
from dataclean_env.agents.protocol import AgentFactory, EpisodeKey
from dataclean_env.agents.reference import reference_factories
from dataclean_env.benchmark import selection
from dataclean_env.benchmark.normalised import MEANING, anchors
from dataclean_env.benchmark.results import EpisodeResult, ResultsFile
from dataclean_env.errors import EnvError, UnknownTask
from dataclean_env.generation import SPLITS
from dataclean_env.runner.backends import Backend, LocalBackend, RemoteBackend
from dataclean_env.runner.loop import run_episode
from dataclean_env.runner.summary import summary_lines
from dataclean_env.table.limits import untimed_limits
from dataclean_env.tasks import TaskRegistry, default_registry

AGENTS = ("auto", "llm", "heuristic", "noop", "random", "oracle")


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="inference.py",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    pick = p.add_argument_group("which episodes")
    pick.add_argument("--tasks", nargs="*", help="task ids (default: every task of --family)")
    pick.add_argument(
        "--family",
        default="all",
        help=(
            "fixed, generated, custom, showcase, claims (detection, standardisation, audit), "
            "all (default), or one generated family, e.g. crm or error_detection"
        ),
    )
    pick.add_argument("--split", default="eval", choices=SPLITS)
    pick.add_argument("--seeds", default="0", help="seeds per task, e.g. 0-99 or 1,5,7")
    pick.add_argument("--episodes", type=int, help="stop after this many episodes")
    run = p.add_argument_group("how")
    run.add_argument("--agent", default="auto", choices=AGENTS, help="auto: llm if a key is set")
    run.add_argument("--env-url", help="a server's base URL; default: in-process")
    run.add_argument("--results", type=Path, help="write one JSON line per episode here")
    board = p.add_argument_group("leaderboard")
    board.add_argument(
        "--leaderboard",
        metavar="NAME",
        help="play a leaderboard run of --suite under NAME (or under the name of the token in "
        "DCE_LEADERBOARD_TOKEN) on --env-url's secret split; with --family (one generated "
        "family) or --episodes, a practice run instead, never ranked",
    )
    board.add_argument(
        "--resume",
        metavar="RUN_ID",
        help="continue a leaderboard run started here: play its episodes still open",
    )
    board.add_argument(
        "--runs-dir",
        type=Path,
        help="where runs' tickets (their episode ids, for --resume) are kept "
        "(default: var/leaderboard-runs)",
    )
    board.add_argument("--suite", default="full", help="full (default, ranked) or lite")
    llm = p.add_argument_group("LLM agent")
    llm.add_argument("--temperature", type=float, default=0.0)
    llm.add_argument("--max-tokens", type=int, default=512, help="token budget per reply")
    llm.add_argument("--retries", type=int, default=5, help="on 429, 5xx, connection errors")
    llm.add_argument("--backoff", type=float, default=1.0, help="first wait in seconds")
    llm.add_argument("--max-backoff", type=float, default=30.0, help="longest wait in seconds")
    return p


def agent_factory(args: argparse.Namespace, registry: TaskRegistry) -> AgentFactory:
    if args.agent not in ("auto", "llm"):
        return reference_factories(registry)[args.agent]
    settings = LLMSettings.from_environment(
        temperature=args.temperature, max_tokens=args.max_tokens
    )
    if settings is None:
        if args.agent == "llm":
            raise SystemExit("--agent llm needs HF_TOKEN or OPENAI_API_KEY")
        print(
            "No HF_TOKEN or OPENAI_API_KEY: the built-in heuristic agent runs, offline.",
            file=sys.stderr,
        )
        return reference_factories(registry)["heuristic"]
    from dataclean_env.agents.llm import LLMAgent  # imports openai: only when a key is set

    client = settings.client()
    retry = RetryPolicy(args.retries, args.backoff, args.max_backoff)
    return lambda key: LLMAgent(client, settings, retry)


def family_of(registry: TaskRegistry, task_id: str) -> str:
    """The task's family as /tasks and the page group it; a server's task this checkout
    does not know is "unknown"."""
    try:
        return registry.family_name(task_id)
    except UnknownTask:
        return "unknown"


def backend(args: argparse.Namespace, registry: TaskRegistry) -> Backend:
    """A server's episodes (`--env-url`), else this process's, played without the per-step
    time limit (a guard for a shared server): an offline run's scores do not move with the
    machine's load, as the report's do not."""
    if args.env_url:
        return RemoteBackend(args.env_url)
    return LocalBackend(registry, untimed_limits())


def leaderboard_run(args: argparse.Namespace, registry: TaskRegistry) -> int:
    from dataclean_env.runner import leaderboard

    if not args.env_url:
        raise SystemExit(
            "--leaderboard and --resume need --env-url: the server runs and scores the episodes"
        )
    if args.agent == "oracle":
        raise SystemExit("the oracle replays public solutions; it cannot play the secret split")
    make_agent = agent_factory(args, registry)
    agent_name = make_agent(EpisodeKey("leaderboard", 0, "secret")).name
    runs_dir = args.runs_dir or leaderboard.RUNS_DIR
    if args.resume:
        finished = leaderboard.resume(args.env_url, args.resume, make_agent, runs_dir)
        return 1 if any(r.error for r in finished) else 0
    families = [args.family] if args.family not in selection.TASK_GROUPS else None
    practice = families is not None or args.episodes is not None
    declared = leaderboard.declared(args, agent_name)
    finished = leaderboard.run(
        args.env_url,
        args.leaderboard,
        make_agent,
        agent_name,
        None if practice else args.suite,
        families,
        args.episodes,
        runs_dir,
        os.environ.get("DCE_LEADERBOARD_TOKEN") or None,
        declared,
    )
    return 1 if any(r.error for r in finished) else 0


def normalised_summary(finished: Sequence[EpisodeResult], registry: TaskRegistry) -> str:
    """The run's mean normalised score, over the episodes whose task this checkout knows (a
    server may serve others), each instance's anchors computed here, and what it means."""
    known = set(registry.task_ids())
    scores = [_normalised(r, registry) for r in finished if r.task_id in known]
    if not scores:
        return f"No normalised score: this checkout knows none of the tasks. {MEANING}"
    mean = sum(scores) / len(scores)
    return f"{len(scores)} episodes, mean normalised score {mean:.4f}. {MEANING}"


def _normalised(result: EpisodeResult, registry: TaskRegistry) -> float:
    marks = anchors(lambda: registry.make(result.task_id, result.seed, result.split))
    return marks.normalise(result.score)


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    registry = default_registry()
    if args.leaderboard or args.resume:
        return leaderboard_run(args, registry)
    try:
        seeds = selection.parse_seeds(args.seeds)
        if args.env_url and args.tasks:
            tasks = list(args.tasks)  # a server may know tasks that this checkout does not
        else:
            tasks = selection.task_ids(registry, args.tasks, args.family)
    except (ValueError, EnvError) as error:  # a bad seed list, family or task id
        raise SystemExit(str(error)) from None
    keys = selection.episodes(tasks, seeds, args.split, args.episodes)
    make_agent = agent_factory(args, registry)
    env = backend(args, registry)
    results = ResultsFile(args.results) if args.results else None
    finished: list[EpisodeResult] = []
    try:
        for key in tqdm(keys, desc="episodes", unit="ep", file=sys.stderr, disable=None):
            result = run_episode(env, make_agent(key), key)
            finished.append(result)
            if results:
                results.write(result)
    except KeyboardInterrupt:
        print(f"Interrupted after {len(finished)} episodes.", file=sys.stderr)
        return 130
    finally:
        env.close()
        if results:
            results.close()
    for line in summary_lines(finished, lambda task_id: family_of(registry, task_id)):
        print(line, file=sys.stderr)
    if finished:
        print(normalised_summary(finished, registry), file=sys.stderr)
    return 1 if any(r.error for r in finished) else 0
