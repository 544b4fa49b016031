"""Grading: facts about gold, component scores, penalties and the weighted reward."""

from dataclean_env.grading.gold_facts import GoldFacts, build_facts
from dataclean_env.grading.penalties import ActionRecord, penalty
from dataclean_env.grading.reward import Grader, clamp

__all__ = ["ActionRecord", "GoldFacts", "Grader", "build_facts", "clamp", "penalty"]
