"""Generated families: seeded, reproducible byte for byte, disjoint splits, a rule card per
instance, solvable by the plan the card describes, and reachable over every door."""

from __future__ import annotations

import contextlib
import re

import pytest

from dataclean_env.agents.heuristic import HeuristicAgent
from dataclean_env.engine.episode import Episode
from dataclean_env.errors import EnvError, InvalidAction
from dataclean_env.generation import SPLITS, instance_number
from dataclean_env.operations.program import opened
from dataclean_env.schemas import Action
from dataclean_env.tasks.generated import FAMILIES, GeneratedFamily, instance
from environment import DataCleaningEnv
from tests.support import GENERATED_IDS, PRESERVATION_FIELDS


def play_heuristic(episode: Episode, budget: int = 60) -> float:
    """The heuristic agent (rule-card reader, no gold) on one episode; its final score."""
    agent = HeuristicAgent()
    for _ in range(budget):
        if episode.done:
            break
        action = agent.act(episode.observation().model_dump(mode="json"))
        with contextlib.suppress(EnvError):  # a refused step changes nothing
            episode.step(Action(**action))
    return episode.reward.total


def mapping_for(solution: tuple[dict, ...], column: str) -> dict[str, str]:
    maps = [
        a["parameters"]["mapping"]
        for a in opened(solution)
        if a["operation"] == "map" and a["parameters"]["column"] == column
    ]
    return maps[0] if maps else {}


def test_families_are_listed() -> None:
    assert list(FAMILIES) == GENERATED_IDS


def test_splits_never_share_an_instance() -> None:
    numbers = {split: {instance_number(split, seed) for seed in range(1000)} for split in SPLITS}
    assert not numbers["train"] & numbers["eval"]
    assert not numbers["train"] & numbers["test"]
    assert not numbers["eval"] & numbers["test"]


@pytest.mark.parametrize("task_id", GENERATED_IDS)
def test_same_seed_and_split_give_the_same_bytes(registry, task_id) -> None:
    # Generate twice, never two copies of one cached instance (the registry also keeps the
    # tasks it made: ask the family itself).
    family = GeneratedFamily()
    instance.cache_clear()
    first = family.make(task_id, 11, "eval")
    instance.cache_clear()
    again = family.make(task_id, 11, "eval")
    assert first.dirty is not again.dirty
    assert first.dirty.to_csv() == again.dirty.to_csv()
    assert first.spec == again.spec
    assert first.reference_plan == again.reference_plan
    assert first.grader == again.grader
    other_split = registry.make(task_id, 11, "test")
    other_seed = registry.make(task_id, 12, "eval")
    assert other_split.dirty.to_csv() != first.dirty.to_csv()
    assert other_seed.dirty.to_csv() != first.dirty.to_csv()


@pytest.mark.parametrize("task_id", GENERATED_IDS)
def test_the_heuristic_solves_every_easy_instance_from_its_card(registry, task_id) -> None:
    """Easy cards use the plain phrasings the rule-card reader knows: reading them is enough."""
    solved = 0
    for split in SPLITS:
        for seed in range(12):
            task = registry.make(task_id, seed, split)
            if task.spec.difficulty != "easy":
                continue
            episode = Episode("g", task)
            assert list(episode.reward.model_dump()) == PRESERVATION_FIELDS
            assert episode.reward.total <= 0.2  # doing nothing: the dirty rows' integrity
            assert play_heuristic(episode) == 0.9999, (split, seed, task.spec.description)
            solved += 1
    assert solved >= 5


@pytest.mark.parametrize("task_id", GENERATED_IDS)
@pytest.mark.parametrize("split", SPLITS)
def test_each_instance_is_solved_by_its_own_solution_and_the_card_states_it(
    registry, task_id, split
) -> None:
    for seed in range(8):
        task = registry.make(task_id, seed, split)
        episode = Episode("g", task)
        assert 0.18 <= episode.reward.total <= 0.2  # doing nothing: the dirty rows' integrity
        for action in task.reference_plan:
            result = episode.step(Action(**action))
            assert "error" not in result.info, (seed, action, result.info)
        assert result.reward.total == 0.9999, (split, seed, result.reward)
        assert_card_or_data_states_the_plan(task)


DAY_ORDER = {"us": ("(US)", "month before the day"), "eu": ("(EU)", "day before the month")}
ALIAS_COLUMNS = {
    "crm": "country",
    "orders": "status",
    "inventory": "warehouse",
    "normalize_dedupe": "city",
}


def assert_card_or_data_states_the_plan(task) -> None:
    """Variant spellings and the date order are on the card, or (hard cards only) left to
    the data, which then shows them: a variant is rarer than its value, and some dates have
    a day above 12 where the order puts it."""
    card, dirty = task.spec.description, task.dirty
    alias_column = ALIAS_COLUMNS.get(task.spec.task_id)
    for alias, value in (
        mapping_for(task.reference_plan, alias_column).items() if alias_column else ()
    ):
        if f"'{alias}' means '{value}'" in card or f"{alias} for {value}" in card:
            continue
        assert task.spec.difficulty == "hard", (alias, card)
        counts = dirty[alias_column].value_counts()
        assert 0 < counts[alias] < counts[value], (alias, value)
    for action in opened(task.reference_plan):
        if action["operation"] != "normalize_dates":
            continue
        column, convention = action["parameters"]["column"], action["parameters"]["convention"]
        if any(cue in card for cue in DAY_ORDER[convention]):
            continue
        assert task.spec.difficulty == "hard", card
        position = 0 if convention == "eu" else 1  # where the day stands
        days = [
            int(re.split(r"[/.-]", text)[position])
            for text in dirty[column]
            if re.fullmatch(r"\d\d[/.-]\d\d[/.-]\d{4}", text)
        ]
        assert sum(day > 12 for day in days) >= 2, column


def test_instances_span_10_to_200_rows_by_difficulty(registry) -> None:
    seen = {}
    for task_id in GENERATED_IDS:
        for seed in range(12):
            task = registry.make(task_id, seed, "train")
            unique = task.dirty[sorted(task.spec.protected_columns)[0]].nunique()
            seen.setdefault(task.spec.difficulty, []).append(unique)
    assert set(seen) == {"easy", "medium", "hard"}
    assert min(seen["easy"]) >= 10 and max(seen["easy"]) <= 40
    assert min(seen["medium"]) >= 40 and max(seen["medium"]) <= 100
    assert min(seen["hard"]) >= 100 and max(seen["hard"]) <= 200


@pytest.mark.parametrize("task_id", ["crm", "orders", "inventory", "normalize_dedupe"])
def test_one_off_aliases_differ_between_instances(registry, task_id) -> None:
    mappings = []
    for seed in range(10):
        mapping = mapping_for(
            registry.make(task_id, seed, "eval").reference_plan, ALIAS_COLUMNS[task_id]
        )
        if mapping:  # a tiny table may not repeat an aliased value at all
            mappings.append(tuple(sorted(mapping.items())))
    assert len(mappings) >= 8
    assert len(set(mappings)) == len(mappings)  # drawn per instance: no fixed map solves them


def test_hard_cards_are_phrased_many_ways_and_leave_rules_to_the_data(registry) -> None:
    """No single template covers the cards: across hard crm instances the phone rule alone
    comes in several phrasings, and some cards leave the date order or the variant
    spellings to the data."""
    phone_rules, left_to_data = set(), 0
    for seed in range(40):
        task = registry.make("crm", seed, "test")
        if task.spec.difficulty != "hard":
            continue
        sentence = next(s for s in task.spec.description.split("; ") if "phone" in s)
        phone_rules.add(re.sub(r"[\dX().\s-]{10,}", "<pattern>", sentence))
        left_to_data += (
            "order throughout" in task.spec.description
            or "work out" in (task.spec.description)
            or "own day/month order" in task.spec.description
        )
    assert len(phone_rules) >= 3, phone_rules
    assert left_to_data >= 2


def test_the_rule_card_matters_the_wrong_convention_does_not_solve(registry) -> None:
    solved_wrongly = 0
    for seed in range(10):
        task = registry.make("normalize_dedupe", seed, "train")
        episode = Episode("g", task)
        for action in task.reference_plan:
            if action["operation"] == "normalize_dates":
                wrong = "eu" if action["parameters"]["convention"] == "us" else "us"
                action = {**action, "parameters": {**action["parameters"], "convention": wrong}}
            with contextlib.suppress(EnvError):  # a cast of unreadable dates is refused
                episode.step(Action(**action))
        solved_wrongly += episode.reward.total == 0.9999
    assert solved_wrongly == 0


def test_the_key_is_protected_and_the_split_is_validated(registry) -> None:
    episode = Episode("g", registry.make("fix_types", 0))
    with pytest.raises(Exception, match="protected"):
        episode.step(
            Action(operation="fix_dtype", parameters={"column": "order_id", "dtype": "str"})
        )
    with pytest.raises(InvalidAction):
        registry.make("fix_types", 0, "validation")


def test_every_door_takes_seed_and_split(client) -> None:
    body = client.post(
        "/reset/fix_types", json={"seed": 4, "split": "test", "episode_id": "f"}
    ).json()
    env = DataCleaningEnv(task_id="fix_types")
    local = env.reset(seed=4, split="test")
    assert (
        body["observation"]["sample_rows"]
        == local.observation.model_dump(mode="json")["sample_rows"]
    )
    assert client.get("/state", params={"episode_id": "f"}).json()["split"] == "test"
    refused = client.post("/reset/fix_types", json={"split": "holdout"})
    assert refused.status_code == 422
    assert refused.json()["code"] == "INVALID_ACTION"


def test_openenv_task_api_lists_generated_instances(client) -> None:
    base = "/data-cleaning-openenv"
    assert [s["name"] for s in client.get(f"{base}/splits").json()] == ["train", "eval", "test"]
    assert client.post(f"{base}/num_tasks", json={"split": "eval"}).json() == {"num_tasks": 1200}
    task = client.post(f"{base}/task", json={"split": "eval", "index": 9}).json()["task"]
    assert (task["task_id"], task["split"], task["seed"]) == ("crm", "eval", 1)
    listed = client.post(f"{base}/tasks", json={"split": "test"}).json()["tasks"]
    assert len(listed) == 1200 and listed[13] == {
        "task_id": "normalize_dedupe",
        "split": "test",
        "seed": 2,
    }
    window = client.post(f"{base}/task_range", json={"split": "train", "start": 10, "stop": 14})
    assert [(t["task_id"], t["seed"]) for t in window.json()["tasks"]] == [
        ("orders", 1),
        ("inventory", 1),
        ("fix_types", 2),
        ("normalize_dedupe", 2),
    ]
    # The listed instance is the one a reset with the same triple starts.
    reset = client.post("/reset/crm", json={"seed": 1, "split": "eval"}).json()
    assert reset["observation"]["task_description"] == task["description"]
    assert client.post(f"{base}/task", json={"split": "eval", "index": 1200}).status_code == 400
    bad = client.post(f"{base}/num_tasks", json={"split": "holdout"})
    assert (bad.status_code, bad.json()["code"]) == (422, "INVALID_ACTION")


@pytest.mark.parametrize("task_id", GENERATED_IDS)
def test_same_instance_and_actions_give_byte_identical_observations_and_rewards(
    registry, task_id
) -> None:
    def transcript() -> str:
        instance.cache_clear()  # generate the instance afresh each time
        task = registry.make(task_id, 5, "test")
        episode = Episode("same", task)
        results = [episode.result()]
        results += [episode.step(Action(**action)) for action in task.reference_plan]
        return "\n".join(r.model_dump_json() for r in results)

    assert transcript() == transcript()
