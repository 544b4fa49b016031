"""The reference agents that bound what a score means, and the agents a run selects by name.

Besides the built-in heuristic (`dataclean_env.agents.heuristic.HeuristicAgent`, the
project's baseline) and the LLM agent (`llm.py`), four reference agents:

* `NoOpAgent` finishes at once: the score of the dirty table as it is;
* `RandomAgent` (`random_agent.py`) takes well-formed actions at random: what acting without
  understanding earns;
* `OracleAgent` replays the task's reference plan (never shown to other agents): what the
  operations can reach;
* `TemplateAgent` (`template.py`) never reads the description: what a card-free template earns.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.agents.protocol import FINISH, AgentFactory
from dataclean_env.agents.random_agent import RandomAgent
from dataclean_env.agents.template import TemplateAgent
from dataclean_env.tasks import TaskRegistry


class NoOpAgent:
    name = "noop-baseline"

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        return FINISH


class OracleAgent:
    name = "oracle-replay"

    def __init__(self, plan: Sequence[dict[str, Any]]):
        self._plan = list(plan)

    def act(self, observation: dict[str, Any]) -> dict[str, Any]:
        return self._plan.pop(0) if self._plan else FINISH


def reference_factories(registry: TaskRegistry) -> dict[str, AgentFactory]:
    """The reference agents and the heuristic baseline, by the name a run selects them."""
    return {
        "noop": lambda key: NoOpAgent(),
        "heuristic": lambda key: HeuristicAgent(),
        "random": RandomAgent,
        "oracle": lambda key: OracleAgent(
            registry.make(key.task_id, key.seed, key.split).reference_plan
        ),
        "template": lambda key: TemplateAgent(),
    }
