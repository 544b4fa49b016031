"""The generated splits rank agents: on hard test instances the card-reading heuristic stays
well below gold, a card-free fixed template lower still, and the oracle reaches gold; easy
instances stay solvable by reading the card. (The full-size figures are in docs/BASELINES.md.)
In the e2e tier: it plays whole agent episodes, seconds of work."""

from __future__ import annotations

import contextlib
import statistics

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.agents.reference import OracleAgent
from dataclean_env.agents.template import TemplateAgent
from dataclean_env.engine.episode import Episode
from dataclean_env.errors import EnvError
from dataclean_env.schemas import Action
from tests.support import GENERATED_IDS

SEEDS = range(16)


def final_score(task, agent, budget: int = 60) -> float:
    episode = Episode("rank", task)
    for _ in range(budget):
        if episode.done:
            break
        with contextlib.suppress(EnvError):  # a refused step changes nothing
            episode.step(Action(**agent.act(episode.observation().model_dump(mode="json"))))
    return episode.reward.total


def test_hard_test_instances_rank_the_agents(registry) -> None:
    scores: dict[str, list[float]] = {"heuristic": [], "template": [], "oracle": []}
    for family in GENERATED_IDS:
        for seed in SEEDS:
            task = registry.make(family, seed, "test")
            if task.spec.difficulty != "hard":
                continue
            scores["heuristic"].append(final_score(task, HeuristicAgent()))
            scores["template"].append(final_score(task, TemplateAgent()))
            scores["oracle"].append(final_score(task, OracleAgent(task.reference_plan)))
    means = {agent: statistics.fmean(values) for agent, values in scores.items()}
    assert len(scores["oracle"]) >= 25
    assert means["oracle"] >= 0.99, means
    assert means["heuristic"] <= 0.85, means
    assert means["template"] <= 0.62, means  # 0.60 is the full-split target (BASELINES.md)
    assert means["template"] < means["heuristic"] < means["oracle"], means


def test_the_template_never_reads_the_card(registry) -> None:
    """Two instances with the same columns get the same template plan, whatever their cards."""
    first, second = (registry.make("crm", seed, "test") for seed in (0, 3))
    assert first.spec.description != second.spec.description
    plans = []
    for task in (first, second):
        observation = Episode("t", task).observation().model_dump(mode="json")
        agent, plan = TemplateAgent(), []
        while (action := agent.act(observation))["operation"] != "finish":
            plan.append(action)
        plans.append(plan)
    assert plans[0] == plans[1]
