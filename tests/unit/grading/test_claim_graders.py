"""Exact values of the claim graders (detection, standardisation, audit) on hand-made tables."""

from __future__ import annotations

import pandas as pd
import pytest

from dataclean_env.grading.claim_graders import (
    AuditGrader,
    DetectionGrader,
    StandardisationGrader,
    category_scores,
    count_score,
    detection_scores,
)
from dataclean_env.grading.penalties import ActionRecord
from dataclean_env.grading.truth import (
    ERROR_TYPES,
    ROW,
    GoldColumn,
    classify,
    error_type,
    from_tables,
)
from dataclean_env.table.snapshot import Snapshot

GOLD = pd.DataFrame(
    {
        "id": [1, 2, 3, 4],
        "name": ["Ana", "Bob", "Cy", "Di"],
        "age": [30, 40, 50, 60],
        "city": ["Paris", "Lyon", "Paris", "Lyon"],
    }
)
DIRTY = pd.DataFrame(
    {
        "id": [1, 2, 3, 4, 5],
        "name": ["ana", "Bob", "Cy", "Di", "Di"],
        "age": ["30", "forty", "50", "", "60"],
        "city": ["Paris", "Lyon", "Pariss", "Lyon", "Lyon"],
    }
)


def truth():
    return from_tables(DIRTY, GOLD, "id")


def record(operation: str, **parameters) -> ActionRecord:
    return ActionRecord(operation, parameters, 0, True)


def test_the_truth_is_the_cells_whose_text_differs_plus_rows_gold_lacks():
    assert dict(truth().errors) == {
        ("1", "name"): "bad_format",
        ("2", "age"): "wrong_type",
        ("3", "city"): "not_in_domain",
        ("4", "age"): "missing",
        ("5", ROW): "duplicate_row",
    }


def test_columns_are_matched_by_position_when_the_counts_agree():
    renamed = DIRTY.rename(columns={"name": "Full Name"})
    assert ("1", "Full Name") in from_tables(renamed, GOLD, "id").errors


def test_classify_reads_types_from_the_two_texts():
    numbers = GoldColumn.of(["10", "20", "30"])
    assert classify("N/A", "10", numbers) == "missing"
    assert classify("ten", "10", numbers) == "wrong_type"
    assert classify("500", "10", numbers) == "out_of_range"
    assert classify("20", "10", numbers) == "inconsistent"
    words = GoldColumn.of(["Paris", "Lyon"])
    assert classify("PARIS", "Paris", words) == "bad_format"
    assert classify("Pariss", "Paris", words) == "not_in_domain"
    assert classify("Lyon", "Paris", words) == "inconsistent"


def test_error_type_spellings():
    assert error_type("Wrong type") == "wrong_type"
    assert error_type("inconsistent with another column") == "inconsistent"
    assert error_type("not-in-domain") == "not_in_domain"
    assert error_type("garbage") is None


def test_detection_scores_exact():
    t = truth()  # 5 true units
    claims = {
        ("1", "name"): "bad_format",  # right cell, right type: 1
        ("2", "age"): "missing",  # right cell, wrong type: 0.5
        ("3", "city"): None,  # right cell, no type: 0.5
        ("1", "age"): "missing",  # wrong cell
    }
    found = detection_scores(claims, t)
    assert found.precision == 3 / 4
    assert found.recall == 3 / 5
    assert found.f1 == pytest.approx(2 * 3 / 9)
    assert found.type_accuracy == pytest.approx(1 / 3)
    # 13 units (4 gold rows x 3 columns + the extra row), 5 wrong: chance is 5/13, and
    # precision 3/4 beats it by (3/4 - 5/13) / (1 - 5/13) = 19/32
    assert t.units == 13
    assert found.beyond_chance == pytest.approx(19 / 32)
    assert found.score == pytest.approx(2 * 2.0 / 9 * 19 / 32)


def test_reporting_every_cell_scores_nothing():
    t = truth()
    # every cell of the dirty table: the three claims on row 5 name its one unit
    claims = {t.unit_of(i, c): None for i in range(1, 6) for c in ("name", "age", "city")}
    found = detection_scores(claims, t)
    assert len(claims) == 13 and found.precision == 5 / 13 and found.recall == 1.0
    assert found.beyond_chance == 0.0 and found.score == 0.0
    typed = {unit: t.errors.get(unit, "missing") for unit in claims}  # the truth's types too
    assert detection_scores(typed, t).score == 0.0


def test_a_report_below_chance_scores_nothing_and_a_precise_one_is_not_scaled():
    t = truth()
    gold_cells = {(str(i), c): None for i in range(1, 5) for c in ("name", "age", "city")}
    assert detection_scores(gold_cells, t).precision == 4 / 12  # below 5/13
    assert detection_scores(gold_cells, t).score == 0.0
    precise = {("1", "name"): "bad_format", ("5", ROW): "duplicate_row"}
    assert detection_scores(precise, t).beyond_chance == 1.0
    assert detection_scores(precise, t).score == pytest.approx(2 * 2 / 7)


def test_a_whole_row_claim_names_the_duplicate_row_whatever_column_it_gives():
    t = truth()
    assert t.unit_of(5, "name") == ("5", ROW)
    assert t.unit_of("5", None) == ("5", ROW)
    assert t.unit_of(1, None) == ("1", ROW)  # a real row claimed whole: a wrong claim


def test_detection_grader_reads_accumulated_reports_and_reveals_only_at_the_end():
    grader = DetectionGrader(truth())
    first = record(
        "report_errors", cells=[{"row_id": 1, "column": "name", "error_type": "bad_format"}]
    )
    second = record("report_errors", cells=[{"row_id": "5"}, {"row_id": 2, "column": "age"}])
    during = grader.combine({}, [first, second], max_steps=10)
    assert during["total"] == 0.0001 and during["detection_f1"] == 0.0001
    done = grader.combine({}, [first, second, record("finish")], max_steps=10)
    # 3 claims, all right; types: right, none (the row: no type), none -> 1 + 0.5 + 0.5
    assert done["detection_precision"] == 0.9999
    assert done["detection_recall"] == 0.6
    assert done["detection_f1"] == 0.75
    assert done["total"] == 0.5
    assert grader.combine({}, [first] * 10, max_steps=10)["total"] > 0.0001  # budget used up


def test_a_later_report_of_the_same_cell_replaces_its_type():
    grader = DetectionGrader(truth())
    wrong = record(
        "report_errors", cells=[{"row_id": 1, "column": "name", "error_type": "missing"}]
    )
    right = record(
        "report_errors", cells=[{"row_id": 1, "column": "name", "error_type": "bad_format"}]
    )
    assert grader.scores([wrong, right]).score == pytest.approx(2 / 6)
    assert grader.scores([right, wrong]).score == pytest.approx(1 / 6)


def test_category_and_count_scores():
    present = frozenset({"missing", "bad_format"})
    # informedness over the 7 types: share of the 2 present claimed - share of the 5 absent
    assert category_scores(["missing", "bad_format"], present) == 1.0
    assert category_scores(["missing"], present) == 0.5
    assert category_scores(["missing", "bad_format", "wrong_type", "inconsistent"], present) == (
        pytest.approx(1 - 2 / 5)
    )
    assert category_scores(["wrong_type"], present) == pytest.approx(-1 / 5)
    assert category_scores([], present) == 0.0
    assert category_scores(ERROR_TYPES, present) == 0.0  # claiming all: no better than none
    assert category_scores(ERROR_TYPES, frozenset(ERROR_TYPES)) == 1.0
    assert category_scores([], frozenset()) == 1.0
    assert category_scores(["missing"], frozenset()) == pytest.approx(1 - 1 / 7)
    assert count_score(3, 3) == 1.0
    assert count_score(0, 4) == 0.0
    assert count_score(6, 4) == pytest.approx(1 - 2 / 6)


def test_standardisation_grader_gain_per_column():
    gold = pd.DataFrame({"id": [1, 2, 3, 4], "a": ["x", "y", "z", "w"], "b": ["p", "q", "r", "s"]})
    dirty = pd.DataFrame({"id": [1, 2, 3, 4], "a": ["X", "Y", "z", "w"], "b": ["p", "q", "r", "s"]})
    grader = StandardisationGrader.for_task(dirty, gold, "id")
    assert grader.components(Snapshot.of(dirty)) == {
        "standardisation_score": 0.0,
        "cell_share": 0.75,
    }
    half = dirty.assign(a=["x", "Y", "z", "w"])
    assert grader.components(Snapshot.of(half)) == {
        "standardisation_score": 0.5,
        "cell_share": 7 / 8,
    }
    # breaking the already-right column b costs: 2 of its 4 cells -> -0.5
    broken = half.assign(b=["P", "Q", "r", "s"])
    assert grader.components(Snapshot.of(broken))["standardisation_score"] == 0.0
    constant = dirty.assign(a=["k"] * 4)
    assert grader.components(Snapshot.of(constant))["standardisation_score"] == -1.0
    assert grader.combine(grader.components(Snapshot.of(constant)), [], 5)["total"] == 0.0001


def test_audit_grader_phases_exact():
    grader = AuditGrader(truth())
    fixed = DIRTY.assign(name=["Ana", "Bob", "Cy", "Di", "Di"])  # one of five errors fixed
    scores = grader.components(Snapshot.of(fixed))
    assert scores == {"fix": 0.2, "remaining": 4.0}
    history = [
        record("audit", categories=["missing", "bad_format"], summary="duplicates everywhere"),
        record("identify", cells=[{"row_id": 1, "column": "name", "error_type": "bad_format"}]),
        record("fix", operations=[]),
        record("validate", issues_remaining=4, report="all clean"),
    ]
    phases = grader.phase_scores(scores, history)
    # categories present: bad_format, wrong_type, not_in_domain, missing, duplicate_row;
    # 2 of the 5 claimed and neither absent one (out_of_range, inconsistent): 2/5 - 0
    assert phases["audit_score"] == pytest.approx(2 / 5)
    assert phases["identify_score"] == pytest.approx(2 / 6)
    assert phases["fix_score"] == 0.2
    assert phases["validate_score"] == 1.0
    total = 0.15 * 2 / 5 + 0.30 * 2 / 6 + 0.40 * 0.2 + 0.15
    assert grader.combine(scores, history, 20)["total"] == pytest.approx(total, abs=1e-12)


def test_a_fix_that_breaks_right_cells_goes_below_zero():
    grader = AuditGrader(truth())
    damaged = DIRTY.assign(city=["X"] * 5)  # city: 4 right cells broken, 1 wrong still wrong
    assert grader.components(Snapshot.of(damaged))["fix"] == pytest.approx((5 - 8) / 5)


def test_a_lost_gold_row_costs_every_cell_it_held():
    grader = AuditGrader(truth())
    # row 2 held one wrong cell (age) and two right ones: losing it leaves three wrong
    lost = DIRTY[DIRTY["id"] != 2]
    assert grader.components(Snapshot.of(lost)) == {
        "fix": pytest.approx((5 - 7) / 5),
        "remaining": 7.0,
    }
    # two rows gone (1 and 3, one wrong cell each): never fewer errors than leaving them
    both = DIRTY[~DIRTY["id"].isin([1, 3])]
    assert grader.components(Snapshot.of(both))["remaining"] == 3 + 2 * 3
