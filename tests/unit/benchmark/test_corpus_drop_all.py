"""The case that kept the corpus out of the validation sweep under F1: `DELETE FROM t` on a
corpus instance whose layers added rows repairs the added rows' cells, which paid F1 0.157.
Under net repair every lost clean cell is a wrong change, so it scores the floor, as doing
nothing does; the literature's F1 is still reported, unchanged (docs/benchmark.md)."""

from __future__ import annotations

from dataclean_env.benchmark.validation import families
from dataclean_env.engine.episode import Episode
from dataclean_env.schemas import Action
from dataclean_env.table.limits import untimed_limits
from dataclean_env.tasks.corpus import CorpusFamily
from tests.support import ROOT


def test_dropping_every_row_of_a_corpus_instance_with_added_rows_scores_what_nothing_does() -> None:
    task = CorpusFamily().make("corpus_seattle_weather", 1, "eval")
    added = len(task.dirty) - 1461
    episode = Episode("sweep", task, untimed_limits())
    nothing = episode.score
    result = episode.step(Action(operation="sql", parameters={"sql": "DELETE FROM t"}))
    repair = result.info["repair"]
    assert added == 146
    assert (nothing, episode.score, result.reward.total) == (0.0001, 0.0001, 0.0001)
    assert result.reward.net_repair == 0.0001
    assert round(repair["f1"], 3) == 0.157 and repair["cells_changed"] == 9642
    page = " ".join((ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8").split())
    assert (
        f"(`corpus_seattle_weather`, eval seed 1, {added} added rows) scored F1 "
        f"{repair['f1']:.3f} (precision {repair['precision']:.3f}, recall "
        f"{repair['recall']:.3f})"
    ) in page
    assert "corpus" in families()
