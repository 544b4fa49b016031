"""The runner's parts: reply parsing, seed lists, the reference agents, the prompt, the
attempt cap of the episode loop and the rows-lost measure."""

from __future__ import annotations

import io

import pytest

from dataclean_env.agents.parsing import UnparseableReply, parse_action
from dataclean_env.agents.prompt import operation_lines
from dataclean_env.agents.protocol import EpisodeKey
from dataclean_env.agents.random_agent import RandomAgent
from dataclean_env.agents.reference import OracleAgent
from dataclean_env.benchmark.selection import episodes, parse_seeds
from dataclean_env.engine.episode import Episode
from dataclean_env.operations import resolve
from dataclean_env.runner.backends import LocalBackend
from dataclean_env.runner.loop import run_episode
from dataclean_env.table.snapshot import Snapshot
from dataclean_env.tasks import default_registry

# Every fixed task and generated family (custom tasks depend on the machine's folders).
TASKS = [s.task_id for s in default_registry().specs() if s.family in ("fixed", "generated")]
FILL = {"operation": "fill_missing", "parameters": {"strategy": "median", "column": "price"}}


@pytest.mark.parametrize(
    "reply",
    [
        '{"operation": "fill_missing", "parameters": {"strategy": "median", "column": "price"}}',
        '```json\n{"operation": "fill_missing", "parameters": '
        '{"strategy": "median", "column": "price"}}\n```',
        'Prices have outliers, so the median: {"operation": "fill_missing", "parameters": '
        '{"strategy": "median", "column": "price"}, "reason": "robust"} should do.',
        '{"action": {"name": "fill_missing", "params": {"strategy": "median", "column": "price"}}}',
        'Options: {"note": 1} or ```{"action_type": "fill_missing", "parameters": '
        '{"strategy": "median", "column": "price"}}```',
    ],
)
def test_replies_are_read_through_fences_prose_and_other_spellings(reply) -> None:
    assert parse_action(reply) == FILL


@pytest.mark.parametrize(
    ("reply", "problem"),
    [
        ("I would remove the duplicates.", "no JSON object found in the reply"),
        ("{'operation': 'finish'}", "no JSON object found in the reply"),
        ('{"step": 3}', "the JSON is not an action: operation: Field required"),
        ('{"operation": 7}', "the JSON is not an action: operation: Input should be a valid"),
    ],
)
def test_unreadable_replies_say_why(reply, problem) -> None:
    with pytest.raises(UnparseableReply) as caught:
        parse_action(reply)
    assert str(caught.value).startswith(problem)


def test_seed_lists_and_the_episode_order() -> None:
    assert parse_seeds("0-3,7,2") == [0, 1, 2, 3, 7]
    assert parse_seeds("5") == [5]
    for bad in ("", "a", "1-", "-3", "1,,2"):
        with pytest.raises(ValueError):
            parse_seeds(bad)
    keys = episodes(["a", "b"], [0, 1], "eval", limit=3)
    assert keys == [
        EpisodeKey("a", 0, "eval"),
        EpisodeKey("b", 0, "eval"),
        EpisodeKey("a", 1, "eval"),
    ]


@pytest.mark.parametrize("task_id", TASKS)
def test_random_agent_is_seeded_and_only_sends_well_formed_actions(registry, task_id) -> None:
    def play(seed: int) -> list[dict]:
        key = EpisodeKey(task_id, seed, "eval")
        env, agent, actions = LocalBackend(registry), RandomAgent(key), []
        step = env.reset(key)
        while not step.done and len(actions) < 40:
            actions.append(agent.act(step.observation))
            step = env.step(actions[-1])
        return actions

    actions = play(0)
    assert actions == play(0)
    assert actions != play(1) or len(actions) == 1
    available = set(registry.spec(task_id).operations)
    for action in actions:
        assert action["operation"] in available
        resolve(action["operation"], action["parameters"])  # the parameter model accepts it


@pytest.mark.parametrize("task_id", TASKS)
def test_the_oracle_replays_the_reference_plan_to_gold(registry, task_id) -> None:
    key = EpisodeKey(task_id, 4, "eval")
    plan = registry.make(task_id, 4, "eval").reference_plan
    result = run_episode(LocalBackend(registry), OracleAgent(plan), key, out=io.StringIO())
    assert (result.score, result.invalid_actions, result.rows_lost) == (0.9999, 0, 0)
    assert result.steps == len(plan) + (plan[-1]["operation"] not in ("finish", "validate"))


def test_an_agent_that_keeps_failing_ends_truncated_after_the_refusal_allowance(
    registry,
) -> None:
    class Stubborn:
        name = "stubborn"

        def act(self, observation):
            return {"operation": "no_such_operation", "parameters": {}}

    out = io.StringIO()
    key = EpisodeKey("easy_dedup_rename", None, "eval")
    result = run_episode(LocalBackend(registry), Stubborn(), key, out=out)
    lines = out.getvalue().splitlines()
    assert registry.spec("easy_dedup_rename").max_steps == 10
    # Refusals are allowed up to the step budget; then the episode ends, truncated.
    assert (result.steps, result.invalid_actions, result.error) == (10, 10, None)
    assert len(lines) == 12
    assert all("done=false error=unknown operation 'no_such_operation'" in x for x in lines[1:-2])
    assert "done=true error=unknown operation 'no_such_operation'" in lines[-2]
    assert lines[-1] == "[END] success=false steps=10 score=0.00 rewards=" + ",".join(["0.00"] * 10)


def test_rows_lost_counts_gold_keys_missing_from_the_table(registry) -> None:
    for task_id, key_column in (("hard_full_pipeline", "order_id"), ("fix_types", "order_id")):
        episode = Episode("x", registry.make(task_id, 0, "eval"))
        table, grader = episode.table, episode.task.grader
        assert grader.gold_rows_missing(Snapshot.of(table)) == 0
        kept = table[~table[key_column].isin(table[key_column].iloc[:3])]
        assert grader.gold_rows_missing(Snapshot.of(kept)) == 3
    env = LocalBackend(registry)
    env.reset(EpisodeKey("crm", 0, "eval"))
    assert env.rows_lost() == 0
    table = env.episode.table
    good = table.loc[~table["email"].str.contains("test.invalid"), "contact_id"].iloc[0]
    env.step({"operation": "drop_rows", "parameters": {"row_ids": [int(good)]}})
    assert env.rows_lost() == 1


def test_the_operation_list_shows_parameters_and_shorthands() -> None:
    lines = operation_lines(["fill_missing", "phone_us", "finish", "fill_missing_mean"])
    assert lines == [
        '- fill_missing(strategy?: mean|median|mode|ffill|bfill|constant = "mean", '
        "column?: text, value?: text or int or number or boolean) - Fill missing cells. "
        "mean/median apply to numeric columns (numbers stored as text count), mode and "
        "ffill/bfill to any column, constant needs a value of the column's type.",
        "- phone_us(column: text) - Rewrite US phone numbers as (XXX) XXX-XXXX; others are "
        "left and reported.",
        "- finish() - Declare the table clean and end the episode.",
        "- also accepted: fill_missing_mean (shorthands of fill_missing)",
    ]


def test_a_refused_step_changes_nothing_the_agent_sees(registry) -> None:
    env = LocalBackend(registry)
    first = env.reset(EpisodeKey("medium_missing_dtype", 1, "eval"))
    refused = env.step({"operation": "fill_missing", "parameters": {"column": "nope"}})
    assert refused.error.startswith("unknown column(s) ['nope']; the table has ['customer_id'")
    malformed = env.step({"operation": "finish", "params": {}, "parameters": {}})
    assert "give the operation and its parameters once each" in malformed.error
    for step in (refused, malformed):
        assert (step.score, step.components, step.done) == (first.score, first.components, False)
        same = {k: v for k, v in step.observation.items() if k != "message"}
        assert same == {k: v for k, v in first.observation.items() if k != "message"}


def test_a_key_without_a_seed_plays_the_default_instance_after_a_seeded_one(registry) -> None:
    # The protocol's reset(seed=None) replays the last seed; a runner key's None does not.
    fresh = LocalBackend(registry).reset(EpisodeKey("fix_types", None, "train"))
    backend = LocalBackend(registry)
    seeded = backend.reset(EpisodeKey("fix_types", 3, "train"))
    again = backend.reset(EpisodeKey("fix_types", None, "train"))
    assert seeded.observation["sample_rows"] != fresh.observation["sample_rows"]
    assert again.observation == fresh.observation
