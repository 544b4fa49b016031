"""The home rule of the server's processes (`affinity`): which process holds an episode,
and the 421 a process answers for one it is not the home of."""

from __future__ import annotations

import secrets
import zlib

import pytest

from dataclean_env.errors import Misdirected
from dataclean_env.server.processes.affinity import Place, home
from dataclean_env.server.store.episode_store import EpisodeStore
from dataclean_env.tasks import default_registry


def test_an_id_s_home_is_its_crc32_mod_the_number_of_processes() -> None:
    for episode_id in ("a", "run-7", "123e4567-e89b-12d3-a456-426614174000", "dce:x"):
        assert home(episode_id, 3) == zlib.crc32(episode_id.encode("utf-8")) % 3
    assert [home(x, 2) for x in "abcd"] == [1, 1, 1, 0]
    assert home(None, 4) == 0  # default episodes live on process 0


def test_a_process_refuses_an_id_homed_elsewhere_with_421() -> None:
    with pytest.raises(Misdirected) as refused:
        Place(0, 2).check("a")  # home 1
    assert (refused.value.status, refused.value.code) == (421, "MISDIRECTED")
    Place(1, 2).check("a")
    Place(0, 2).check(None)
    with pytest.raises(Misdirected):
        Place(1, 2).check(None)
    Place().check("anything")  # one process is every id's home


def test_minted_ids_have_the_minting_process_as_home() -> None:
    for index in range(3):
        place = Place(index, 3)
        ids = [place.mint(lambda: "lb-" + secrets.token_hex(16)) for _ in range(20)]
        assert {home(i, 3) for i in ids} == {index}


def test_the_store_neither_creates_nor_serves_an_episode_homed_elsewhere() -> None:
    store = EpisodeStore(default_registry(), 8, 60.0, place=Place(0, 2))
    with pytest.raises(Misdirected):
        store.reset("easy_dedup_rename", episode_id="a")
    assert len(store) == 0
    with pytest.raises(Misdirected):
        store.get("a")
    store.reset("easy_dedup_rename", episode_id="d")  # home 0
    issued = store.default("easy_dedup_rename").episode_id  # a server-issued dce: id
    assert home(issued, 2) == 0 and store.get(issued).episode_id == issued
    other = EpisodeStore(default_registry(), 8, 60.0, place=Place(1, 2))
    with pytest.raises(Misdirected):
        other.default("easy_dedup_rename")
    with pytest.raises(Misdirected):
        other.join("lb-x0")  # home 0: a /ws join of it belongs on process 0


def test_each_process_holds_its_share_of_a_cap() -> None:
    assert [Place(0, n).share(1024) for n in (1, 2, 3)] == [1024, 512, 341]
    assert Place(0, 4).share(2) == 1  # never none
