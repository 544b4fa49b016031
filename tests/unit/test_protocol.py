"""Every implementation of `EnvProtocol` is one, to `isinstance` and to mypy."""

from __future__ import annotations

import pytest

from dataclean_env.in_process import DataCleaningEnv
from dataclean_env.protocol import EnvProtocol
from dataclean_env.remote import RemoteDataCleaningEnv
from dataclean_env.runner.backends import LocalBackend
from dataclean_env.tasks import default_registry

pytestmark = pytest.mark.unit


def test_the_in_process_environment_is_one() -> None:
    env: EnvProtocol = DataCleaningEnv("crm")  # mypy checks the assignment
    assert isinstance(env, EnvProtocol)
    assert isinstance(LocalBackend(default_registry()).env, EnvProtocol)


def test_the_remote_environment_is_one() -> None:
    # An instance connects to a server (tests/api/test_remote.py checks one with isinstance;
    # issubclass refuses a protocol with an attribute); the class carries every method.
    implementation: type[EnvProtocol] = RemoteDataCleaningEnv  # mypy checks the assignment
    assert all(
        callable(getattr(implementation, name)) for name in ("reset", "step", "state", "close")
    )


def test_something_without_a_method_or_the_seed_is_not_one() -> None:
    class ResetOnly:
        seed = None

        def reset(self) -> None: ...

    class NoSeed:
        def reset(self) -> None: ...
        def step(self) -> None: ...
        def state(self) -> None: ...
        def close(self) -> None: ...

    assert not isinstance(ResetOnly(), EnvProtocol)
    assert not isinstance(NoSeed(), EnvProtocol)
