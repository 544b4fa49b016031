"""The baseline report: reference agents (and the LLM, given a key) on the eval split.

Every agent plays the same episodes: each fixed task, each generated family and each real
table shipped in datasets/ (difficulty `real`) at every seed, in-process. The results are summarised per agent and family (`stats.py`) and written
as docs/BASELINES.md with a plot (`report.py`).
"""

from __future__ import annotations

import argparse
import os
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from tqdm import tqdm

from dataclean_env.agents.llm_config import LLMSettings, RetryPolicy
from dataclean_env.agents.protocol import AgentFactory, EpisodeKey
from dataclean_env.agents.reference import reference_factories
from dataclean_env.benchmark import selection
from dataclean_env.benchmark.results import EpisodeResult, ResultsFile
from dataclean_env.benchmark.stats import Summary, summarise, summarise_by
from dataclean_env.benchmark.versions import SUITE_GENERATORS
from dataclean_env.generation import SPLITS
from dataclean_env.runner import protocol_report, raha_baran, real_detection, suite_report
from dataclean_env.runner.backends import LocalBackend
from dataclean_env.runner.loop import run_episode
from dataclean_env.runner.report import AgentNote, markdown, plot
from dataclean_env.table.limits import untimed_limits
from dataclean_env.tasks import TaskRegistry, TaskSpec, default_registry
from dataclean_env.tasks.generated import instance

REFERENCE_AGENTS = ("noop", "heuristic", "template", "random", "oracle")
DIFFICULTIES = ("easy", "medium", "hard")
NOTES = {
    "noop": AgentNote("noop-baseline", "sends `finish` at once: the dirty table's own score"),
    "heuristic": AgentNote(
        "heuristic-baseline",
        "`dataclean_env.agents.heuristic.HeuristicAgent`, the project's baseline: follows "
        "the rule card in the task description (`dataclean_env/agents/rule_card.py`), then "
        "walks the cleaning pipeline as the observation shows it (on real tables it profiles "
        "the rows and makes only the repairs a column's own values support; on the "
        "detection, standardisation and audit tasks it pages through the table and claims "
        "what a profile of its columns backs, `dataclean_env/agents/detector.py`); never "
        "sees the task id or gold",
    ),
    "template": AgentNote(
        "card-free-template",
        "`dataclean_env.agents.template.TemplateAgent`: one fixed plan per column name "
        "(US dates and numbers, common null tokens, Title Case names, (XXX) XXX-XXXX phones), "
        "never reading the description or the data: what ignoring the card earns",
    ),
    "random": AgentNote(
        "random-baseline",
        "a uniformly random available operation (`finish` included) with well-formed "
        "parameters drawn from the observation's columns and sample values",
        "seeded per episode by task, split and seed",
    ),
    "oracle": AgentNote(
        "oracle-replay",
        "replays the task's reference plan (`Task.reference_plan`), then finishes: what the "
        "operations can reach",
    ),
}
REPORT, PLOT = "BASELINES.md", "baselines.png"


def family_of(registry: TaskRegistry) -> Callable[[str], str]:
    """Report group of a task: its own id for a generated family or a real table, else
    `fixed`/`custom`."""

    def family(task_id: str) -> str:
        spec = registry.spec(task_id)
        return task_id if spec.family == "generated" or _real(spec) else spec.family

    return family


def baseline_keys(registry: TaskRegistry, seeds: Sequence[int], split: str) -> list[EpisodeKey]:
    """Every fixed task, generated family and real table at every seed (other custom tasks
    are left out: they depend on what a machine has in its dataset folders)."""
    tasks = [s.task_id for s in registry.specs() if s.family in ("fixed", "generated") or _real(s)]
    return selection.episodes(tasks, seeds, split)


def generated_keys(registry: TaskRegistry, seeds: Sequence[int], split: str) -> list[EpisodeKey]:
    tasks = [s.task_id for s in registry.specs() if s.family == "generated" and s.kind == "clean"]
    return selection.episodes(tasks, seeds, split)


def difficulty_summaries(
    results: Sequence[EpisodeResult], registry: TaskRegistry, splits: Sequence[str]
) -> list[Summary]:
    """Generated episodes of `splits` by split, family and instance difficulty, each split's
    pooled rows ("all") first."""
    generated = {
        s.task_id for s in registry.specs() if s.family == "generated" and s.kind == "clean"
    }
    chosen = [r for r in results if r.task_id in generated and r.split in splits]

    def difficulty(result: EpisodeResult) -> str:
        spec, _, _ = instance(result.task_id, result.split, result.seed or 0)
        return spec.difficulty

    levels = {id(r): difficulty(r) for r in chosen}
    pooled = summarise_by(chosen, lambda r: f"{r.split} / all / {levels[id(r)]}")
    each = summarise_by(chosen, lambda r: f"{r.split} / {r.task_id} / {levels[id(r)]}")

    families = ["all", *sorted(generated)]

    def order(s: Summary) -> tuple[int, int, int]:  # stable: agents keep their order
        split, family, level = s.family.split(" / ")
        return list(splits).index(split), families.index(family), DIFFICULTIES.index(level)

    return sorted([*pooled, *each], key=order)


def _real(spec: TaskSpec) -> bool:
    # A real table's claim tasks (rayyan_detection, ...) have their own report section; the
    # table and its labelled variant (rayyan-labelled) are played here.
    return spec.family == "custom" and spec.difficulty == "real" and spec.kind == "clean"


def play(
    agents: dict[str, AgentFactory], keys: Sequence[EpisodeKey], registry: TaskRegistry
) -> list[EpisodeResult]:
    """Each key with every agent in turn, so a generated instance is built once and then
    served from the task cache. The log lines go nowhere: the report is the output. Played
    without the per-step time limit, so the report does not move with the machine's load."""
    env = LocalBackend(registry, untimed_limits())
    results = []
    with open(os.devnull, "w", encoding="utf-8") as silent:
        for key in tqdm(keys, desc="baselines", unit="task", file=sys.stderr, disable=None):
            for factory in agents.values():
                results.append(run_episode(env, factory(key), key, out=silent))
    return results


def llm_agent(args: argparse.Namespace) -> tuple[AgentFactory, AgentNote] | None:
    settings = LLMSettings.from_environment(
        temperature=args.temperature, max_tokens=args.max_tokens
    )
    if settings is None:
        return None
    from dataclean_env.agents.llm import LLMAgent  # imports openai: only when a key is set

    client, retry = settings.client(), RetryPolicy()
    note = AgentNote(
        settings.model,
        "the LLM agent of `inference.py`",
        f"{settings.base_url}, temperature {settings.temperature}, "
        f"max {settings.max_tokens} tokens per reply, seeds {args.llm_seeds}",
    )
    return (lambda key: LLMAgent(client, settings, retry)), note


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="scripts/baselines.py", description=__doc__)
    p.add_argument("--split", default="eval", choices=SPLITS)
    p.add_argument("--seeds", default="0-99", help="seeds of every task (default 0-99)")
    p.add_argument("--agents", default=",".join(REFERENCE_AGENTS), help="comma-separated")
    p.add_argument(
        "--difficulty-splits",
        default="eval,test",
        help="splits whose generated instances are also reported by difficulty "
        "(comma-separated, '' for none; splits other than --split are played for it)",
    )
    p.add_argument("--out-dir", type=Path, default=Path("docs"), help="for the report and plot")
    p.add_argument(
        "--readme",
        type=Path,
        help="README whose results block to rewrite (default: README.md when --out-dir is docs)",
    )
    p.add_argument("--results", type=Path, help="also write every episode as a JSON line")
    p.add_argument(
        "--real-tables",
        type=Path,
        help="folder of dirty/clean pairs for the detection section (default: the tasks "
        "whose task.json lists the detection kind, e.g. datasets/rayyan)",
    )
    p.add_argument(
        "--raha-results",
        type=Path,
        default=raha_baran.RESULTS,
        help="results of integrations/raha/raha_baran.py to report (default docs/raha_baran.json)",
    )
    p.add_argument("--llm-seeds", default="0-9", help="seeds for the LLM agent (it is slow)")
    p.add_argument("--temperature", type=float, default=0.0)
    p.add_argument("--max-tokens", type=int, default=512)
    return p


def versions_line() -> str:
    """The report's line naming the version of every generator the suite plays."""
    return "Generator versions: " + ", ".join(f"`{v}`" for v in SUITE_GENERATORS.values()) + "."


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parser().parse_args(argv)
    registry = default_registry()
    names = [n.strip() for n in args.agents.split(",") if n.strip()]
    factories = reference_factories(registry)
    unknown = set(names) - set(factories)
    if unknown:
        raise SystemExit(f"unknown agents {sorted(unknown)}; known: {', '.join(factories)}")
    started = time.perf_counter()
    keys = baseline_keys(registry, selection.parse_seeds(args.seeds), args.split)
    results = play({n: factories[n] for n in names}, keys, registry)
    notes = [NOTES[n] for n in names]
    difficulty_splits = [s.strip() for s in args.difficulty_splits.split(",") if s.strip()]
    extra = []
    for split in difficulty_splits:
        if split != args.split:
            extra_keys = generated_keys(registry, selection.parse_seeds(args.seeds), split)
            extra += play({n: factories[n] for n in names}, extra_keys, registry)
    llm = llm_agent(args)
    if llm is not None:
        factory, note = llm
        llm_keys = baseline_keys(registry, selection.parse_seeds(args.llm_seeds), args.split)
        results += play({"llm": factory}, llm_keys, registry)
        notes.append(note)
    elapsed = time.perf_counter() - started

    args.out_dir.mkdir(parents=True, exist_ok=True)
    summaries = summarise(results, family_of(registry))
    summaries.sort(key=lambda s: s.family != "fixed")  # fixed first; stable otherwise
    command = shlex.join(["uv", "run", "python", "scripts/baselines.py", *argv])
    run = (
        f"Command: `{command}`. {len(results):,} episodes on the `{args.split}` split "
        f"(seeds {args.seeds} of each task), in-process, in {elapsed:.0f} s."
    )
    by_difficulty = difficulty_summaries(results + extra, registry, difficulty_splits)
    # The suite's rows come from the file its own script played (too slow to replay here);
    # Raha+Baran's from its own venv's runs (docs/raha_baran.json).
    suite = suite_report.load()
    suite_table = suite_report.summaries(suite)  # 100 bootstrap intervals: rendered twice
    section = suite_report.baselines_section(suite, suite_table)
    raha = raha_baran.markdown(raha_baran.load(args.raha_results))
    report = markdown(
        summaries,
        notes,
        run,
        PLOT,
        by_difficulty,
        versions_line(),
        section,
        measured_elsewhere=raha,
    )
    real = real_detection.folder_registry(args.real_tables) if args.real_tables else registry
    report += real_detection.markdown(real_detection.detection_rows(real))
    report += protocol_report.baselines_section(protocol_report.load())
    (args.out_dir / REPORT).write_text(report, encoding="utf-8")
    plot(summaries, args.out_dir / PLOT)
    readme = args.readme or (Path("README.md") if args.out_dir == Path("docs") else None)
    if readme is not None:
        text = readme.read_text(encoding="utf-8")
        block = suite_report.readme_block(suite, suite_table)
        readme.write_text(suite_report.with_readme_block(text, block), encoding="utf-8")
    if args.results:
        out = ResultsFile(args.results)
        for result in results + extra:
            out.write(result)
        out.close()
    print(f"wrote {args.out_dir / REPORT} and {args.out_dir / PLOT}", file=sys.stderr)
    return 0
