"""The demo opens with the questions where restoration decided the answer and ends with those it hurt."""

from __future__ import annotations

from docintent.demo import DemoRow, order_rows, outcome
from docintent.sample import Sample


def row(qid: str, none: float, docintent: float) -> DemoRow:
    sample = Sample(qid, "x.png", f"question {qid}?", ("a",), "doc", "letter", qid)
    return DemoRow(sample, scores={"none": none, "docintent": docintent})


def test_restoration_decided_cases_come_first_and_harm_is_shown_last():
    rows = [row("same", 1.0, 1.0), row("hurt", 1.0, 0.0), row("decided", 0.0, 1.0), row("both-wrong", 0.0, 0.0)]
    ordered = order_rows(rows)
    assert [r.sample.id for r in ordered] == ["decided", "same", "both-wrong", "hurt"]
    assert [outcome(r) for r in ordered] == ["decided", "same", "same", "hurt"]
