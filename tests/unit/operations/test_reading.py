"""Reading scales with the table: on a generated 2,400-row table (48 pages of `show_rows`,
more than its 30 steps) every column's values and shapes, and the rows that hold a mangled
character, are seen in a handful of read-only steps."""

from __future__ import annotations

from pathlib import Path

from dataclean_env.engine.episode import Episode
from dataclean_env.operations.reading import MAX_FOUND, MAX_LISTED
from dataclean_env.schemas import Action
from dataclean_env.settings import Settings
from dataclean_env.tasks import registry_for
from tests.dirty_pair import write_pair

ROOT = Path(__file__).resolve().parents[3]


def test_a_2400_row_table_is_read_within_its_budget(tmp_path: Path) -> None:
    write_pair(tmp_path / "extra" / "shop_orders")
    settings = Settings(datasets_dir=ROOT / "datasets", extra_datasets=str(tmp_path / "extra"))
    episode = Episode("r", registry_for(settings).make("shop_orders", None))
    budget = episode.result().observation.steps_remaining
    assert 2400 / MAX_FOUND > budget == 30  # paging alone cannot see the table

    def read(operation: str, **parameters: object) -> str:
        return episode.step(Action(operation=operation, parameters=parameters)).observation.message

    columns = ("customer", "city", "state", "product", "coupon")
    messages = [
        read("value_counts", column=c, by=by, limit=MAX_LISTED)
        for c in columns
        for by in ("value", "shape")
    ]
    # every distinct value and shape of every column, beyond the observation's top 5
    assert [m.split(";")[0] for m in messages] == [
        "customer: 86 distinct values, 0 empty",
        "customer: 24 distinct shapes, 0 empty",
        "city: 8 distinct values, 0 empty",
        "city: 4 distinct shapes, 0 empty",
        "state: 8 distinct values, 0 empty",
        "state: 1 distinct shapes, 0 empty",
        "product: 12 distinct values, 0 empty",
        "product: 6 distinct shapes, 0 empty",
        "coupon: 8 distinct values, 1345 empty",
        "coupon: 2 distinct shapes, 1345 empty",
    ]
    assert messages[6].endswith(
        '[["Calculator", 418], ["Notebook", 396], ["Pencil", 388], ["Marker", 383], '
        '["Stapler", 372], ["Backpack", 365], ["Maker", 16], ["Pecil", 15], ["Bakpack", 14], '
        '["Noebook", 12], ["Stpler", 12], ["Caculator", 9]]'
    )
    assert messages[9].endswith('[["AAAA9", 952], ["A/A", 103]]')
    # paging past the top values, and the rows that hold a mangled character
    page = read("value_counts", column="customer", offset=84, limit=10)
    assert page.startswith("customer: 86 distinct values, 0 empty; values 84..85 with counts")
    found = read("find_rows", column="customer", pattern="\ufffd")
    assert found.startswith("65 rows match; rows 0..49: ")
    state = episode.result().observation
    assert (state.step, state.steps_remaining) == (12, 18)
