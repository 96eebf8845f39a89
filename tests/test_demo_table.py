"""The demo's summary table: beside the seconds, the work each strategy did, which no cache changes."""

from __future__ import annotations

from docintent.demo import DemoRow, summary_table
from docintent.sample import Sample
from docintent.trace import Action, Phase, Result, ToolStep


def _row(qid: str, **results: Result) -> DemoRow:
    sample = Sample(qid, "x.png", f"question {qid}?", answers=("a",), task="doc", subset="letter", group=qid)
    return DemoRow(sample, results=dict(results), scores={name: 1.0 for name in results})


def _result(strategy: str, seconds: float, lines: int, tools: int = 0) -> Result:
    trace = [ToolStep(Phase.TOOL, Action.APPLIED, "rotate_180") for _ in range(tools)]
    return Result(
        "x",
        strategy,
        trace=trace,
        seconds=seconds,
        work={"tool_runs": tools, "detections": 1, "lines_recognised": lines},
    )


def test_the_table_shows_the_lines_each_strategy_read_beside_its_seconds_and_says_why():
    # As on a cold run: docintent+mact reused docintent's reads and took a tenth of the time for the same work,
    # and none read every line of the page once.
    rows = [
        _row(
            "q1",
            none=_result("none", 5.8, 22),
            docintent=_result("docintent", 3.4, 45, tools=2),
            **{"docintent+mact": _result("docintent+mact", 0.4, 45, tools=2)},
        ),
        _row(
            "q2",
            none=_result("none", 4.2, 20),
            docintent=_result("docintent", 1.6, 25, tools=1),
            **{"docintent+mact": _result("docintent+mact", 0.2, 25, tools=1)},
        ),
    ]
    table = summary_table(rows, ["none", "docintent", "docintent+mact"])
    lines = table.splitlines()
    assert lines[0] == "| strategy | mean score | tools run | lines read | seconds |"
    assert "| none | 100.0 | 0.0 | 21 | 5.0 |" in lines
    assert "| docintent | 100.0 | 1.5 | 35 | 2.5 |" in lines
    # the same work as docintent, whatever the seconds say
    assert "| docintent+mact | 100.0 | 1.5 | 35 | 0.3 |" in lines
    note = " ".join(lines[lines.index("") + 1 :])
    assert "lines read (text lines the OCR recognised)" in note
    assert "the same on a first run and a repeated one" in note
    assert "docintent+mact reuses docintent's" in note and "compare the work columns, not the seconds" in note
