"""``docintent score``: re-scoring runs and the WildDoc reference predictions file."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest

from docintent.cli import main
from docintent.sample import Sample
from needs import need_file

REFERENCE = (
    Path(__file__).resolve().parents[1].parent / "shared" / "data" / "wilddoc" / "qwen25vl72b_predictions.jsonl.gz"
)


def _row(sample: Sample, strategy: str, answer: str | None, error: str | None = None) -> dict:
    return {"sample": sample.to_dict(), "strategy": strategy, "answer": answer, "error": error, "trace": []}


def _doc(i: int, capture: int) -> Sample:
    return Sample(
        id=f"q{i}-{capture}", image="x.png", question="Total?", answers=("40", "40%"), task="doc",
        subset="invoice", group=f"q{i}", capture=capture,
    )  # fmt: skip


@pytest.fixture
def run_dir(tmp_path):
    rows = []
    for capture in (1, 2):
        rows.append(_row(_doc(1, capture), "none", "40"))
        rows.append(_row(_doc(2, capture), "none", "41" if capture == 2 else "40"))
        rows.append(_row(_doc(1, capture), "docintent", "40"))
        rows.append(_row(_doc(2, capture), "docintent", None, error="endpoint unreachable"))
    table = Sample(
        id="t1", image="t.png", question="Is it true?", answers=("1",), task="table", subset="vtabfact", group="t1"
    )
    rows.append(_row(table, "none", "Answer: True"))
    rows.append(_row(table, "docintent", "false"))
    rows.append(_row(table, "docintent", "true"))  # a resumed run: the last row of a sample counts
    (tmp_path / "results.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    return tmp_path


def test_score_prints_one_table_per_strategy(run_dir, capsys):
    assert main(["score", str(run_dir)]) == 0
    out = capsys.readouterr().out
    assert "### none (5 rows, 0 errors)" in out
    assert "### docintent (5 rows, 2 errors)" in out
    none_part, docintent_part = out.split("### docintent")
    # none: doc rows 40,40,40,41 -> ANLS 1,1,1,0.5 = 87.5; q1 consistent, q2 not (0.5 is not > 0.5)
    assert "| DocVQA (ANLS, tau 0.5) | 87.50 | 50.00 |" in none_part
    assert "|   vtabfact | 100.00 | 100.00 |" in none_part
    assert "| Average of the 2 subtasks | 93.75 | 75.00 |" in none_part
    # docintent: failed rows score 0
    assert "| DocVQA (ANLS, tau 0.5) | 50.00 | 50.00 |" in docintent_part
    assert "|   vtabfact | 100.00 | 100.00 |" in docintent_part


def test_score_json_and_out_file(run_dir, tmp_path, capsys):
    out_file = tmp_path / "report" / "scores.json"
    assert main(["score", str(run_dir / "results.jsonl"), "--json", "--out", str(out_file)]) == 0
    printed = json.loads(capsys.readouterr().out)
    assert json.loads(out_file.read_text()) == printed
    by_name = {s["strategy"]: s for s in printed["strategies"]}
    assert by_name["docintent"]["errors"] == 2
    assert by_name["none"]["tasks"]["doc"]["score"] == pytest.approx(87.5)
    assert by_name["none"]["tasks"]["doc"]["questions"] == 2


def test_score_accepts_a_predictions_file(tmp_path, capsys):
    rows = [
        {"index": f"ChartQA-test_human-{c}-1", "question": "q", "answer": "[2011, 2012]", "prediction": "2012"}
        for c in (1, 2, 3, 4)
    ] + [
        {"index": f"DocVQA-val-{c}-1", "question": "q", "answer": "['40', '40%']", "prediction": p}
        for c, p in zip((1, 2, 3, 4), ("40%", "40", "forty", "40"))
    ]
    path = tmp_path / "preds.jsonl.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("\n".join(json.dumps(r) for r in rows))
    assert main(["score", str(path)]) == 0
    out = capsys.readouterr().out
    assert "### preds (8 rows, 0 errors)" in out
    assert "| ChartQA (relaxed accuracy, 5%) | 100.00 | 100.00 |" in out
    assert "| DocVQA (ANLS, tau 0.5) | 75.00 | 0.00 |" in out


def test_score_errors_name_the_input(tmp_path, capsys):
    assert main(["score", str(tmp_path)]) == 1
    assert "no results.jsonl in this run directory" in capsys.readouterr().err
    odd = tmp_path / "odd.jsonl"
    odd.write_text(json.dumps({"foo": 1}) + "\n")
    assert main(["score", str(odd)]) == 1
    assert "rows have neither 'sample'" in capsys.readouterr().err


def test_score_reference_predictions_prints_the_published_table(capsys):
    need_file(REFERENCE, "WildDoc reference predictions")
    assert main(["score", str(REFERENCE)]) == 0
    out = capsys.readouterr().out
    for line in (
        "| DocVQA (ANLS, tau 0.5) | 81.42 | 64.09 |",
        "| ChartQA (relaxed accuracy, 5%) | 66.47 | 50.00 |",
        "| TableVQA (macro over 4 sub-splits) | 64.87 | 41.53 |",
        "|   fintabnetqa | 72.90 | 46.80 |",
        "|   vtabfact | 77.30 | 57.60 |",
        "|   vwtq | 52.17 | 28.53 |",
        "|   vwtq_syn | 57.10 | 33.20 |",
        "| Average of the 3 subtasks | 70.92 | 51.87 |",
    ):
        assert line in out
