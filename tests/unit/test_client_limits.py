"""Per-client quotas by profile: none on a trainer's own server; under `public`, at least
what the docs' training recipes open and at most a quarter of the cap they divide."""

from __future__ import annotations

import re

from dataclean_env.server.limits.client_limits import (
    PUBLIC_SESSIONS_PER_CLIENT,
    Quota,
    creation_rate,
    episode_quota,
    session_quota,
)
from dataclean_env.settings import Settings
from tests.support import ROOT


def test_the_local_profile_has_no_per_client_quota_or_rate() -> None:
    settings = Settings.model_construct()  # the defaults, whatever DCE_* this process has
    assert settings.profile == "local"
    assert session_quota(settings) == Quota(None, None)
    assert episode_quota(settings) == Quota(None, None)
    assert creation_rate(settings) is None


def test_the_public_profile_turns_the_quotas_on_and_a_token_raises_them() -> None:
    public = Settings(profile="public")
    assert session_quota(public) == Quota(per_client=32, per_token=64)  # of 256 sessions
    assert episode_quota(public) == Quota(per_client=64, per_token=256)  # of 1024 episodes
    assert creation_rate(public) == (128, 2.0)
    raised = Settings(profile="public", sessions_per_token=48, episodes_per_token=100)
    assert session_quota(raised) == Quota(32, 48)
    assert episode_quota(raised) == Quota(64, 100)


def test_no_quota_exceeds_a_quarter_of_its_cap() -> None:
    # DCE_MAX_EPISODES=8: one client may not take all places, whatever it was given.
    assert episode_quota(Settings(max_episodes=8, episodes_per_client=256)) == Quota(2, 2)
    assert session_quota(Settings(profile="public", max_sessions=40)) == Quota(10, 10)
    assert session_quota(Settings(max_sessions=2, sessions_per_client=5)) == Quota(1, 1)
    # A token's quota is never below the address's.
    assert session_quota(Settings(sessions_per_client=20, sessions_per_token=4)) == Quota(20, 20)


def test_explicit_settings_apply_in_the_local_profile_too() -> None:
    assert session_quota(Settings(sessions_per_client=3)) == Quota(3, 64)
    assert creation_rate(Settings(creation_burst=5)) == (5, 2.0)


def recipe_sessions() -> dict[str, int]:
    """Sessions each of the docs' training recipes opens at once from one host."""
    example = (ROOT / "examples" / "trl_grpo.py").read_text()
    generations = re.search(r'"--generations", type=int, default=(\d+)', example)
    assert generations is not None
    assert "per_device_train_batch_size=args.generations * 2," in example
    training = " ".join((ROOT / "docs" / "training.md").read_text().split())
    batch = re.search(r"a multiple of `num_generations` \(e\.g\. (\d+) and (\d+)\)", training)
    assert batch is not None
    return {
        "trl example": int(generations[1]) * 2,  # one environment per rollout of a step
        "gpu recipe": int(batch[1]),
    }


def test_the_public_quota_holds_every_recipe_of_the_docs() -> None:
    opened = recipe_sessions()
    assert opened == {"trl example": 8, "gpu recipe": 8}
    assert max(opened.values()) <= PUBLIC_SESSIONS_PER_CLIENT
