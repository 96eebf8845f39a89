"""Metric rules that mutation testing of ``evaluation/metrics.py`` showed no other test pins down.

Each test names, in its docstring, the code change it catches (see ``benchmarks/mutation.py``). The expected
figures are worked by hand from the rules in the module docstrings.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from docintent.evaluation.metrics import (
    anls,
    relaxed_match,
    score_row,
    summarize,
    summary_markdown,
    tabfact_match,
    wtq_match,
)


def test_wtq_dates_need_a_real_month_and_day():
    """Catches the month / day ranges of ``_parse_date`` moved (``1 <= month <= 12``, ``1 <= day <= 31``) and the
    unknown-part markers mis-read: a wrong date would match as a value, or a right one only as text."""
    assert wtq_match("2006-01-05", "2006-1-5") == 1.0  # January ...
    assert wtq_match("2006-03-01", "2006-3-1") == 1.0  # ... and the 1st are dates ...
    assert wtq_match("2006-12-31", "2006-12-031") == 1.0  # ... so are December and the 31st
    assert wtq_match("2006-13-01", "2006-13-1") == 0.0  # month 13 is no date: compared as text, and it differs
    assert wtq_match("2006-02-32", "2006-2-32") == 0.0  # day 32 neither
    assert wtq_match("2006-00-05", "2006-0-5") == 0.0
    assert wtq_match("2006-03-00", "2006-3-0") == 0.0
    assert wtq_match("2007-03-04", "2006-03-04") == 0.0  # the year counts
    assert wtq_match("xx-03-04", "xxxx-3-4") == 1.0  # an unknown year, written either way
    assert wtq_match("2006-xx-04", "2006-XX-4") == 1.0  # an unknown month
    assert wtq_match("2006-03-xx", "2006-3-XX") == 1.0  # an unknown day
    assert wtq_match("2006-04-xx", "2006-3-XX") == 0.0
    assert wtq_match("5-5-xx", "0005-05-xx") == 1.0  # equal known year and month, unknown day: still a date
    assert wtq_match("xx-xx-xx", "xxxx-xx-xx") == 0.0  # nothing known is no date: compared as text


def test_a_bare_year_date_is_the_number_of_that_year():
    """Catches ``ymd[1] == ymd[2] == -1`` and ``_number(ymd[0], ...)`` changed: ``2006-xx-xx`` is the number 2006."""
    assert wtq_match("2006", "2006-xx-xx") == 1.0
    assert wtq_match("2006.0", "2006-xx-xx") == 1.0
    assert wtq_match("2007", "2006-xx-xx") == 0.0


def test_wtq_duplicate_values_collapse_by_kind():
    """Catches ``_Denotation.key`` returning nothing for numbers or strings (all values would collapse into one)."""
    assert wtq_match("1|2", "2|1") == 1.0
    assert wtq_match("1", "1|2") == 0.0
    assert wtq_match("3|3.0", "3") == 1.0  # one number, written twice
    assert wtq_match("a|A", "a") == 1.0  # one string, normalised
    assert wtq_match("a", "a|b") == 0.0


def test_a_table_row_without_gold_answers_scores_zero():
    """Catches ``max(..., default=0.0)`` -> ``default=1.0`` in ``table_score``."""
    assert score_row("table", "vwtq", "anything", []) == 0.0
    assert score_row("table", "fintabnetqa", "12", []) == 0.0


def test_the_average_line_says_how_many_subtasks_it_averages():
    """Catches ``n > 1`` -> ``n > 2``: a two-subtask summary would be labelled a plain "Average"."""
    doc = dict(task="doc", subset="DocVQA", group="d", prediction="40", answers=["40"])
    chart = dict(task="chart", subset="ChartQA", group="c", prediction="10", answers=["20"])
    two = summary_markdown(summarize([doc, chart]))
    assert two.splitlines()[-1] == "| Average of the 2 subtasks | 50.00 | 50.00 |"
    one = summary_markdown(summarize([doc]), title="one")
    assert one.splitlines()[0] == "**one**" and one.splitlines()[-1] == "| Average | 100.00 | 100.00 |"


@dataclass
class Row:
    """A scored row as an object (``Sample``-like), not a mapping."""

    task: str
    subset: str
    group: str
    prediction: str | None
    answers: tuple[str, ...]
    id: str = ""


def test_rows_may_be_objects_and_groups_fall_back_to_ids():
    """Catches ``_get`` returning nothing for attribute rows, and the ``group or id`` fallback."""
    rows = [
        Row("chart", "ChartQA", "", "10", ("10",), id="a"),
        Row("chart", "ChartQA", "", "10.4", ("10",), id="a"),  # same id: one question, two captures
        Row("chart", "ChartQA", "", "7", ("7",), id="b"),
    ]
    s = summarize(rows)
    chart = s.tasks["chart"]
    assert (chart.rows, chart.questions) == (3, 2)
    assert chart.score == pytest.approx(100 * 3 / 3) and chart.consistency == 100.0
    s = summarize([Row("chart", "ChartQA", "", "12", ("10",), id="a"), *rows[1:]])
    assert s.tasks["chart"].score == pytest.approx(100 * 2 / 3) and s.tasks["chart"].consistency == 50.0


def test_sub_splits_are_listed_in_leaderboard_order_then_by_name():
    """Catches ``_subset_order``: the WildDoc sub-splits first in their fixed order, then any others by name, for
    every task family (a missing key or an ``and`` -> ``or`` would break the sort or the order)."""
    rows = [
        dict(task="table", subset=name, group=name, prediction="1", answers="1")
        for name in ("zeta_syn", "vwtq", "alpha_syn", "fintabnetqa")
    ] + [dict(task="doc", subset=name, group=name, prediction="x", answers=["x"]) for name in ("receipts", "forms")]
    s = summarize(rows)
    assert list(s.tasks["table"].subsets) == ["fintabnetqa", "vwtq", "alpha_syn", "zeta_syn"]
    assert list(s.tasks["doc"].subsets) == ["forms", "receipts"]
    table = summary_markdown(s)
    assert "| TableVQA (macro over 4 sub-splits) | 100.00 | 100.00 |" in table


def test_summaries_serialise_with_their_sub_splits():
    """Catches ``SplitScore.to_dict`` / ``Summary.to_dict`` losing their result (``--json`` output)."""
    rows = [
        dict(task="table", subset="vwtq", group="g", prediction="1", answers="1"),
        dict(task="table", subset="vtabfact", group="h", prediction="false", answers="1"),
    ]
    d = summarize(rows).to_dict()
    assert d["average"] == {"score": 50.0, "consistency": 50.0}
    assert d["tasks"]["table"]["subsets"]["vwtq"] == {"score": 100.0, "consistency": 100.0, "rows": 1, "questions": 1}
    assert "subsets" not in d["tasks"]["table"]["subsets"]["vwtq"]


def test_a_missing_spreadsheet_cell_is_the_empty_answer_for_every_rule():
    """Catches ``_text`` returning nothing for a NaN prediction (what pandas reads from an empty cell): the rules
    would crash on it instead of scoring the empty answer."""
    nan = float("nan")
    assert wtq_match(nan, "") == 1.0 and wtq_match(nan, "3") == 0.0
    assert relaxed_match(nan, "5") is False
    assert tabfact_match(nan, "1") == 0.0
    assert anls(nan, [""]) == 1.0
