"""The demo opens with the questions where restoration decided the answer and ends with those it hurt."""

from __future__ import annotations

from docintent.demo import DemoRow, order_rows, outcome
from docintent.sample import Sample


def row(qid: str, none: float, docintent: float) -> DemoRow:
    sample = Sample(qid, "x.png", f"question {qid}?", answers=("a",), task="doc", subset="letter", group=qid)
    return DemoRow(sample, scores={"none": none, "docintent": docintent})


def test_restoration_decided_cases_come_first_and_harm_is_shown_last():
    rows = [row("same", 1.0, 1.0), row("hurt", 1.0, 0.0), row("decided", 0.0, 1.0), row("both-wrong", 0.0, 0.0)]
    ordered = order_rows(rows)
    assert [r.sample.id for r in ordered] == ["decided", "same", "both-wrong", "hurt"]
    assert [outcome(r) for r in ordered] == ["decided", "same", "same", "hurt"]


def test_the_demo_picks_a_turned_page_first_even_with_two_other_kinds_of_damage():
    from docintent.demo import pick_samples

    def capture(qid: str, task: str, *damage: str) -> Sample:
        return Sample(
            qid, "x.png", "q?", answers=("a",), task=task, subset="k", group=qid.rsplit("-", 1)[0], degradations=damage
        )

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


def test_the_demo_opens_with_a_question_restoration_decided_with_its_page_and_box_and_ends_with_a_command():
    from pathlib import Path

    from docintent.demo import STRATEGY_WORDS, report_lines
    from docintent.page import Box
    from docintent.trace import Action, AnswerStep, DecideStep, Phase, Provenance, Result, ReviewStep, ToolStep

    def result(answer: str, restored: bool) -> Result:
        trace = (
            [
                DecideStep(Phase.DECIDE, Action.USE_TOOL, "rotate_180", need="the page is not upright"),
                ToolStep(Phase.TOOL, Action.APPLIED, "rotate_180"),
                ReviewStep(
                    Phase.REVIEW, Action.KEEP, "rotate_180", measurements={"because": "the page is upright now"}
                ),
                AnswerStep(Phase.ANSWER, Action.ANSWER, answer=answer),
            ]
            if restored
            else []
        )
        return Result(
            answer,
            "docintent" if restored else "none",
            trace=trace,
            provenance=Provenance(1, Box(0.1, 0.6, 0.5, 0.7), lines=(("Due: May 12, 2024", 0.99, Box.FULL),)),
        )

    same = row("same", 1.0, 1.0)
    same.results = {"none": result("x", False), "docintent": result("x", True)}
    decided = row("decided", 0.0, 1.0)
    decided.results = {"none": result("", False), "docintent": result("May 12, 2024", True)}
    lines = report_lines(order_rows([same, decided]), ["none", "docintent"], Path("/tmp/demo/index.html"))
    assert lines[0] == "Restoration decided this answer:"
    assert lines[1] == "  question (doc): question decided?"
    assert "  none       '' (wrong)" in lines[:6] and "  docintent  'May 12, 2024' (right)" in lines[:6]
    assert (
        "  read on page 1, box 0.10, 0.60, 0.50, 0.70 on the page as given (x0, y0, x1, y1 as fractions of the page)"
        in lines
    )
    assert "    1. the page is not upright: ran rotate_180; kept - the page is upright now" in lines
    assert f"  none            {STRATEGY_WORDS['none']}" in lines
    assert f"  docintent       {STRATEGY_WORDS['docintent']}" in lines
    assert lines[-1].startswith("  docintent ask ") and lines[-2].startswith("Next,")
