"""Generated families: seeded, reproducible byte for byte, disjoint splits, a rule card per
instance, solvable by the plan the card describes, and reachable over every door."""

from __future__ import annotations

import pytest

from dataclean_env.episode import Episode
from dataclean_env.errors import InvalidAction
from dataclean_env.generation import SPLITS, instance_number
from dataclean_env.operations.program import opened
from dataclean_env.schemas import Action
from dataclean_env.tasks.generated import FAMILIES, instance
from environment import DataCleaningEnv
from tests.support import GENERATED_IDS, PRESERVATION_FIELDS


def plan_for(task_id: str, description: str) -> list[dict]:
    """The plan an instance's rule card describes."""
    if task_id == "fix_types":
        casts = {"quantity": "int", "unit_price": "float", "paid": "bool", "ordered_on": "datetime"}
        return [
            {"operation": "fix_dtype", "parameters": {"column": c, "dtype": d}}
            for c, d in casts.items()
        ]
    convention = "us" if "(US)" in description else "eu"
    return [
        {"operation": "strip"},
        {"operation": "title", "parameters": {"column": "name"}},
        {"operation": "phone_us", "parameters": {"column": "phone"}},
        {
            "operation": "normalize_dates",
            "parameters": {"column": "signup_date", "convention": convention},
        },
        {"operation": "dedupe", "parameters": {"keys": ["customer_id"]}},
    ]


def test_families_are_listed() -> None:
    assert list(FAMILIES) == GENERATED_IDS


def test_splits_never_share_an_instance() -> None:
    numbers = {split: {instance_number(split, seed) for seed in range(1000)} for split in SPLITS}
    assert not numbers["train"] & numbers["eval"]
    assert not numbers["train"] & numbers["test"]
    assert not numbers["eval"] & numbers["test"]


@pytest.mark.parametrize("task_id", GENERATED_IDS)
def test_same_seed_and_split_give_the_same_bytes(registry, task_id) -> None:
    first = registry.make(task_id, 11, "eval")
    again = registry.make(task_id, 11, "eval")
    assert first.dirty.to_csv() == again.dirty.to_csv()
    assert first.spec == again.spec
    other_split = registry.make(task_id, 11, "test")
    other_seed = registry.make(task_id, 12, "eval")
    assert other_split.dirty.to_csv() != first.dirty.to_csv()
    assert other_seed.dirty.to_csv() != first.dirty.to_csv()


@pytest.mark.parametrize("task_id", ["fix_types", "normalize_dedupe"])
@pytest.mark.parametrize("split", SPLITS)
def test_the_rule_card_plan_solves_every_instance(registry, task_id, split) -> None:
    for seed in range(15):
        episode = Episode("g", registry.make(task_id, seed, split))
        assert list(episode.reward.model_dump()) == PRESERVATION_FIELDS
        start = episode.reward.total
        assert start <= 0.4  # doing nothing: the preserved cells' share and row integrity
        for action in plan_for(task_id, episode.spec.description):
            result = episode.step(Action(**action))
        assert result.reward.total == 0.9999, (split, seed, result.reward)


@pytest.mark.parametrize("task_id", GENERATED_IDS)
@pytest.mark.parametrize("split", SPLITS)
def test_each_instance_is_solved_by_its_own_solution_and_the_card_states_it(
    registry, task_id, split
) -> None:
    for seed in range(8):
        task = registry.make(task_id, seed, split)
        episode = Episode("g", task)
        assert 0.3 <= episode.reward.total <= 0.4  # doing nothing earns the preserved cells
        for action in task.solution:
            result = episode.step(Action(**action))
            assert "error" not in result.info, (seed, action, result.info)
        assert result.reward.total == 0.9999, (split, seed, result.reward)
        card = task.spec.description
        for action in opened(task.solution):
            parameters = action.get("parameters", {})
            if action["operation"] == "map":  # the one-off aliases are on the card
                for alias, value in parameters["mapping"].items():
                    assert f"'{alias}' means '{value}'" in card
            if action["operation"] == "normalize_dates":
                assert ("(US)" if parameters["convention"] == "us" else "(EU)") in card


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


@pytest.mark.parametrize("task_id", ["crm", "orders", "inventory"])
def test_one_off_aliases_differ_between_instances(registry, task_id) -> None:
    mappings = set()
    for seed in range(10):
        (program, *_) = registry.make(task_id, seed, "eval").solution
        (mapping,) = [
            a["parameters"]["mapping"]
            for a in program["parameters"]["operations"]
            if a["operation"] == "map"
        ]
        mappings.add(tuple(sorted(mapping.items())))
    assert len(mappings) >= 5  # no fixed map solves every instance


def test_the_rule_card_matters_the_wrong_convention_does_not_solve(registry) -> None:
    solved_wrongly = 0
    for seed in range(10):
        episode = Episode("g", registry.make("normalize_dedupe", seed, "train"))
        plan = plan_for("normalize_dedupe", episode.spec.description)
        wrong = "eu" if plan[3]["parameters"]["convention"] == "us" else "us"
        plan[3]["parameters"]["convention"] = wrong
        for action in plan:
            result = episode.step(Action(**action))
        solved_wrongly += result.reward.total == 0.9999
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
        results += [episode.step(Action(**action)) for action in task.solution]
        return "\n".join(r.model_dump_json() for r in results)

    assert transcript() == transcript()
