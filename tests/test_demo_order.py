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


def test_the_demo_picks_a_turned_page_first_even_with_two_other_kinds_of_damage():
    from docintent.demo import pick_samples

    def capture(qid: str, task: str, *damage: str) -> Sample:
        return Sample(qid, "x.png", "q?", ("a",), task, "k", qid.rsplit("-", 1)[0], degradations=damage)

    samples = [
        capture("doc-a-c1", "doc", "shadow"),
        capture("doc-b-c2", "doc", "perspective", "noise", "rotation_180"),
        capture("doc-c-c3", "doc", "curl", "noise", "jpeg"),  # three kinds besides a turn: too much to show
        capture("chart-a-c1", "chart", "motion_blur"),
        capture("chart-b-c2", "chart", "moire"),
        capture("table-a-c1", "table", "curl"),
    ]
    picked = [s.id for s in pick_samples(samples, 3)]
    assert picked == ["doc-b-c2", "chart-a-c1", "table-a-c1"]  # a turn, then blur, then warp
