"""The remote TRL environment over a real server's /ws says and scores exactly what the
in-process one does, and keeps one connection across resets."""

from __future__ import annotations

import pytest

from dataclean_env.training.trl_env import DataCleaningToolEnv, RemoteDataCleaningToolEnv

PLAN = [
    ("remove_duplicates", {}),
    ("fill_missing", {"strategy": "median"}),
    ("fix_dtype", {"dtype": "auto"}),
    ("remove_outliers", {"method": "iqr", "column": "price"}),
    ("finish", {}),
]


def play(env, seed: int) -> list[str]:
    texts = [env.reset(task_id="hard_full_pipeline", seed=seed, split="train")]
    for operation, parameters in PLAN:
        texts.append(getattr(env, operation)(**parameters))
    return texts


def test_remote_and_in_process_episodes_are_identical(live_server) -> None:
    local = DataCleaningToolEnv()
    with RemoteDataCleaningToolEnv(live_server.url) as remote:
        for seed in (0, 1):
            assert play(remote, seed) == play(local, seed)
            assert remote.get_reward() == local.get_reward() == 0.9998
            connection = remote._env
        assert remote._env is connection  # connected once, reset twice
        with pytest.raises(ValueError, match="the episode is over"):
            remote.finish()


def test_a_refused_remote_call_raises_with_the_servers_reason(live_server) -> None:
    with RemoteDataCleaningToolEnv(live_server.url) as remote:
        remote.reset(task_id="easy_dedup_rename", seed=0)
        with pytest.raises(ValueError, match=r"refused, the table is unchanged: .*'NOPE'"):
            remote.rename_columns(mapping={"NOPE": "x"})
        assert (remote.refused, remote.score) == (1, 0.0001)
        assert remote.remove_duplicates().startswith("Removed 5 duplicate rows")
