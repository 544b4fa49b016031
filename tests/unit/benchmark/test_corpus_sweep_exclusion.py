"""Why the validation sweep leaves the corpus family out (docs/benchmark.md): under repair F1
dropping every row pays once a layer added rows, since it repairs the added rows' cells.
The page states the figures this replay measures."""

from __future__ import annotations

from dataclean_env.benchmark.validation import families
from dataclean_env.engine.episode import Episode
from dataclean_env.schemas import Action
from dataclean_env.table.limits import untimed_limits
from dataclean_env.tasks.corpus import CorpusFamily
from tests.support import ROOT


def test_dropping_every_row_of_a_corpus_instance_with_added_rows_scores_above_nothing() -> None:
    task = CorpusFamily().make("corpus_seattle_weather", 1, "eval")
    added = len(task.dirty) - 1461
    episode = Episode("sweep", task, untimed_limits())
    episode.step(Action(operation="sql", parameters={"sql": "DELETE FROM t"}))
    repair = episode.info()["repair"]
    assert added == 146 and repair["f1"] > 0
    page = " ".join((ROOT / "docs" / "benchmark.md").read_text(encoding="utf-8").split())
    assert (
        f"(`corpus_seattle_weather`, eval seed 1, {added} added rows) scores F1 "
        f"{repair['f1']:.3f} (precision {repair['precision']:.3f}, recall "
        f"{repair['recall']:.3f})"
    ) in page
    assert "corpus" not in families()
