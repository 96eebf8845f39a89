"""WildDoc metrics: every rule by hand, then the published figures of the reference predictions."""

from __future__ import annotations

from pathlib import Path

import pytest

from docintent.errors import DatasetError, UnknownComponentError
from docintent.evaluation.metrics import (
    anls,
    fintabnet_match,
    normalize_table_text,
    parse_answers,
    relaxed_accuracy,
    row_correct,
    score_row,
    summarize,
    summary_markdown,
    tabfact_match,
    wtq_match,
)
from needs import need_file

REFERENCE = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "wilddoc" / "qwen25vl72b_predictions.jsonl.gz"
)

# The table of ../shared/data/wilddoc/README.md (score, consistency).
PUBLISHED = {
    "doc": (81.42, 64.09),
    "chart": (66.47, 50.00),
    "table": (64.87, 41.53),
    "fintabnetqa": (72.90, 46.80),
    "vtabfact": (77.30, 57.60),
    "vwtq": (52.17, 28.53),
    "vwtq_syn": (57.10, 33.20),
    "average": (70.92, 51.87),
}


# --- answers -------------------------------------------------------------------------------------


def test_list_text_answers_are_expanded():
    assert parse_answers("['40', '40%']") == ["40", "40%"]
    assert parse_answers("[2011, 2012]") == ["2011", "2012"]
    assert parse_answers("[Italy , 22]") == ["[Italy , 22]"]  # not a literal: one answer
    assert parse_answers("[]") == ["[]"]
    assert parse_answers("plain") == ["plain"]
    assert parse_answers(["[200600]", "200600"]) == ["[200600]", "200600"]  # a list is taken as is


# --- DocVQA ANLS ---------------------------------------------------------------------------------


def test_anls_exact_case_and_whitespace_insensitive():
    assert anls("  Program   STAFF ", "['PROGRAM STAFF', 'Program staff']") == 1.0


def test_anls_partial_credit_and_threshold():
    # "12.5 min." -> "12.5 minutes": 4 edits over 12 characters -> 1 - 4/12
    assert anls("12.5 minutes", ["12.5 min."]) == pytest.approx(1 - 4 / 12)
    # one edit in two characters: NL = 0.5, s = 0.5 is kept (s >= tau) ...
    assert anls("ab", ["ac"]) == 0.5
    # ... but below the threshold the row scores 0
    assert anls("abc", ["xyz"]) == 0.0


def test_anls_takes_the_best_answer():
    assert anls("1094", "['1094 (99.5%)', '1094']") == 1.0


def test_anls_empty_prediction():
    assert anls("", ["India"]) == 0.0
    assert score_row("doc", "DocVQA", None, ["India"]) == 0.0
    assert anls("", [""]) == 1.0


def test_doc_consistency_needs_more_than_half():
    assert not row_correct("doc", 0.5)
    assert row_correct("doc", 0.51)


# --- ChartQA relaxed accuracy --------------------------------------------------------------------


def test_relaxed_accuracy_five_percent():
    assert relaxed_accuracy("10.5", ["10"]) == 1.0
    assert relaxed_accuracy("10.6", ["10"]) == 0.0
    assert relaxed_accuracy(" 47438\n", "47438") == 1.0  # prediction stripped


def test_relaxed_accuracy_percentages():
    assert relaxed_accuracy("55%", ["0.55"]) == 1.0  # 55 % is 0.55
    assert relaxed_accuracy("55%", ["55"]) == 0.0  # ... and not 55
    assert relaxed_accuracy("0.1%", ["0.1"]) == 0.0


def test_relaxed_accuracy_zero_target_needs_exact_text():
    assert relaxed_accuracy("0", ["0"]) == 1.0
    assert relaxed_accuracy("0.0", ["0"]) == 0.0
    assert relaxed_accuracy("0.001", ["0"]) == 0.0


def test_relaxed_accuracy_text_and_lists():
    assert relaxed_accuracy("yes", ["Yes"]) == 1.0
    assert relaxed_accuracy("1,413.68", ["1413.68"]) == 0.0  # a thousands comma is no number
    assert relaxed_accuracy("2013", "[2011, 2012]") == 1.0  # within 5 % of one listed year
    assert relaxed_accuracy("", ["5"]) == 0.0


# --- TableVQA ------------------------------------------------------------------------------------


def test_answer_prefix_is_stripped():
    assert score_row("table", "vwtq", "Answer: 1996", ["1996"]) == 1.0
    assert score_row("table", "fintabnetqa", "Answer: $144,362", ["$144,362"]) == 1.0
    assert score_row("table", "vwtq", "answer: 1996", ["1996"]) == 0.0  # only the exact prefix


def test_fintabnet_units_and_scales():
    assert fintabnet_match("$11,832 million", "$11,832,000,000") == 1.0
    assert fintabnet_match("$11,832", "$11,832 million") == 1.0  # the unscaled form also counts
    assert fintabnet_match("620 mbpd", "620") == 1.0
    assert fintabnet_match("9.8 %", "9.8%") == 1.0
    assert fintabnet_match("0.098", "9.8%") == 1.0
    assert fintabnet_match("(1,234)", "1234") == 1.0
    assert fintabnet_match("December 2006", "december 2006") == 1.0
    assert fintabnet_match("$0.68", "$1.03") == 0.0
    assert fintabnet_match("", "12") == 0.0


def test_tabfact_needs_exactly_one_verdict():
    assert tabfact_match("True", "1") == 1.0
    assert tabfact_match("The statement is false.", "0") == 1.0
    assert tabfact_match("true", "0") == 0.0
    assert tabfact_match("true or false: false", "0") == 0.0  # both words: wrong
    assert tabfact_match("", "1") == 0.0
    assert tabfact_match("TRUE", "true") == 1.0  # worded gold of synthetic sets


def test_wtq_denotations():
    assert wtq_match("2", "2.0") == 1.0  # numbers compare by value
    assert wtq_match("b|a", "a|b") == 1.0  # sets, any order
    assert wtq_match("a||b", "a|b") == 1.0
    assert wtq_match("a|b", "a") == 0.0  # size differs
    assert wtq_match("Chicken with chicks.", "chicken with chicks") == 1.0
    assert wtq_match("Apostolos", "Michael Phelps") == 0.0
    assert wtq_match("2006-03-04", "2006-3-4") == 1.0  # dates by (y, m, d)
    assert wtq_match("May 13, 2006", "March 4, 2006") == 0.0
    assert wtq_match("", "3") == 0.0
    assert wtq_match("nan", "") == 1.0


def test_table_normalisation():
    assert normalize_table_text("  Café “Rouge” [1] ") == 'cafe "rouge"'
    assert normalize_table_text('"Hello"') == "hello"
    assert normalize_table_text("Paris (France)") == "paris"
    assert normalize_table_text("12–16") == "12-16"


def test_unknown_task_lists_the_valid_ones():
    with pytest.raises(UnknownComponentError, match="valid tasks: chart, doc, table"):
        score_row("video", "x", "a", ["a"])


# --- summary -------------------------------------------------------------------------------------


def _rows(task, subset, group, predictions, answers):
    return [dict(task=task, subset=subset, group=group, prediction=p, answers=answers) for p in predictions]


def test_summary_scores_consistency_and_macro_average():
    rows = (
        _rows("doc", "DocVQA", "d1", ["40"] * 4, ["40"])
        + _rows("doc", "DocVQA", "d2", ["40", "40", "40", "x"], ["40"])
        + _rows("chart", "ChartQA", "c1", ["10", "10", "10", "10"], ["10"])
        + _rows("table", "vtabfact", "t1", ["true"] * 4, ["1"])
        + _rows("table", "vwtq", "t2", ["a", "b", "b", "b"], ["b"])
    )
    s = summarize(rows)
    assert s.tasks["doc"].score == pytest.approx(100 * 7 / 8)
    assert s.tasks["doc"].consistency == 50.0
    assert s.tasks["chart"].score == 100.0
    # table: vtabfact 100 / 100, vwtq 75 / 0, averaged with equal weight
    assert s.tasks["table"].subsets["vtabfact"].score == 100.0
    assert s.tasks["table"].subsets["vwtq"].consistency == 0.0
    assert s.tasks["table"].score == pytest.approx(87.5)
    assert s.tasks["table"].consistency == 50.0
    assert s.average_score == pytest.approx((87.5 + 100 + 87.5) / 3)
    table = summary_markdown(s)
    assert "| TableVQA (macro over 2 sub-splits) | 87.50 | 50.00 |" in table
    assert "|   vwtq | 75.00 | 0.00 |" in table


def test_summary_of_nothing_is_an_error():
    with pytest.raises(DatasetError, match="no rows"):
        summarize([])


# --- the published figures -----------------------------------------------------------------------


@pytest.fixture(scope="module")
def reference_summary():
    need_file(REFERENCE, "WildDoc reference predictions")
    from docintent.evaluation.datasets import read_wilddoc_predictions

    rows = read_wilddoc_predictions(REFERENCE)
    assert len(rows) == 37_396
    return summarize(rows)


def test_reference_predictions_reproduce_every_published_figure(reference_summary):
    s = reference_summary
    got = {
        "doc": (s.tasks["doc"].score, s.tasks["doc"].consistency),
        "chart": (s.tasks["chart"].score, s.tasks["chart"].consistency),
        "table": (s.tasks["table"].score, s.tasks["table"].consistency),
        "average": (s.average_score, s.average_consistency),
    }
    for subset, result in s.tasks["table"].subsets.items():
        got[subset] = (result.score, result.consistency)
    assert set(got) == set(PUBLISHED)
    for name, (score, consistency) in PUBLISHED.items():
        assert got[name][0] == pytest.approx(score, abs=0.01), f"{name} score"
        assert got[name][1] == pytest.approx(consistency, abs=0.01), f"{name} consistency"
    assert s.tasks["doc"].questions == 5_349


def test_reference_table_prints_the_published_figures(reference_summary):
    table = summary_markdown(reference_summary)
    assert "| DocVQA (ANLS, tau 0.5) | 81.42 | 64.09 |" in table
    assert "| ChartQA (relaxed accuracy, 5%) | 66.47 | 50.00 |" in table
    assert "| TableVQA (macro over 4 sub-splits) | 64.87 | 41.53 |" in table
    assert "| Average of the 3 subtasks | 70.92 | 51.87 |" in table
