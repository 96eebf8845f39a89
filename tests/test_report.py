"""Reports of hand-made runs: the table figures, the degradation breakdown, plots and failure pictures."""

from __future__ import annotations

import json
from pathlib import Path

import cv2
import numpy as np
import pytest

from docintent.cli import main
from docintent.errors import DatasetError
from docintent.evaluation.metrics import summary_markdown
from docintent.evaluation.report import load_run, write_report
from docintent.evaluation.runner import sample_digest
from docintent.sample import Sample

# (id, task, group, degradations)
SAMPLES = [
    ("s1", "doc", "g1", ["blur"]),
    ("s2", "doc", "g1", ["blur"]),
    ("s3", "doc", "g2", ["shadow", "blur"]),
    ("s4", "doc", "g2", []),
    ("s5", "chart", "c1", []),
    ("s6", "chart", "c1", []),
]
# strategy -> per sample (score, tools, seconds, tokens)
FIGURES = {
    "none": [(1, 0, 1, 0), (0, 0, 2, 0), (1, 0, 3, 0), (1, 0, 4, 0), (1, 0, 5, 0), (0, 0, 6, 0)],
    "docintent": [(1, 1, 2, 120), (1, 2, 4, 120), (1, 0, 6, 120), (1, 0, 8, 120), (1, 1, 10, 120), (1, 2, 12, 120)],
    "agres": [(1, 3, 1, 50), (1, 3, 1, 50), (0, 3, 1, 50), (0, 3, 1, 50), (1, 3, 1, 50), (1, 3, 1, 50)],
}


def _write_image(path: Path, shade: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), np.full((60, 80, 3), shade, np.uint8))


def _make_run(root: Path, name: str = "offline") -> Path:
    run = root / name
    run.mkdir(parents=True)
    rows = []
    for strategy, figures in FIGURES.items():
        for (sid, task, group, degradations), (score, tools, seconds, tokens) in zip(SAMPLES, figures):
            image = root / "images" / f"{sid}.png"
            _write_image(image, 200)
            trace = [
                {
                    "phase": "tool",
                    "action": "applied",
                    "tool": "deshadowing",
                    "before": "in" + sid,
                    "after": f"t{i}{sid}",
                }
                for i in range(tools)
            ]
            row = {
                "sample": {
                    "id": sid,
                    "image": str(image),
                    "question": f"value of {sid}?",
                    "answers": ["7"],
                    "task": task,
                    "subset": "DocVQA" if task == "doc" else "ChartQA",
                    "group": group,
                    "capture": 1,
                    "degradations": degradations,
                    "meta": {},
                },
                "strategy": strategy,
                "brain": "offline",
                "answer": "7" if score else "1",
                "score": float(score),
                "correct": bool(score),
                "seconds": float(seconds),
                "error": None,
                "result": {
                    "tools_used": tools,
                    "prompt_tokens": tokens - tokens // 6,
                    "completion_tokens": tokens // 6,
                    "trace": trace,
                    "input_page": "in" + sid,
                },
            }
            row["sample_digest"] = sample_digest(Sample.from_dict(row["sample"]))  # as the runner stamps it
            rows.append(row)
    # the failure of "none" on s2 saved its step images
    failed = next(r for r in rows if r["strategy"] == "none" and r["sample"]["id"] == "s2")
    failed["steps_dir"] = "steps/s2__none"
    failed["result"]["trace"] = [
        {"phase": "tool", "action": "applied", "tool": "deshadowing", "before": "ins2", "after": "aaa"},
        {"phase": "B", "action": "rollback", "tool": "deshadowing", "before": "ins2", "after": "aaa"},
    ]
    _write_image(run / "steps" / "s2__none" / "ins2.jpg", 90)
    _write_image(run / "steps" / "s2__none" / "aaa.jpg", 180)
    # an old failed row of s1/none, replaced by a later retry: only the last row per key counts
    stale = json.loads(json.dumps(rows[0]))
    stale.update(score=0.0, correct=False, error="ModelEndpointError: timed out")
    lines = [stale] + rows
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))
    (run / "manifest.json").write_text(json.dumps({"brain": "offline", "seed": 3, "config": {"dataset": "synth:x"}}))
    return run


def _table_line(markdown: str, strategy: str) -> list[str]:
    for line in markdown.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0] == strategy:
            return cells
    raise AssertionError(f"no line for {strategy!r} in\n{markdown}")


def test_tables_hold_the_right_numbers(tmp_path):
    run = _make_run(tmp_path)
    paths = write_report([load_run(run)], tmp_path / "report")
    md = paths["markdown"].read_text()
    table1 = md.split("## Table 1")[1].split("## Table 2")[0]
    table2 = md.split("## Table 2")[1].split("## Score by recorded degradation")[0]
    header = [c.strip() for c in table1.strip().splitlines()[2].strip("|").split("|")]
    assert header[:5] == ["strategy", "DocVQA score", "DocVQA cons.", "ChartQA score", "ChartQA cons."]
    assert header[5:10] == ["Avg. score", "Avg. cons.", "Avg. Tools", "median s / sample", "tokens / sample"]
    # none: doc 3/4 rows right, 1 of 2 questions all right; chart 1/2, 0 of 1; averages of the two
    assert _table_line(table1, "none") == [
        "none",
        "75.00",
        "50.00",
        "50.00",
        "0.00",
        "62.50",
        "25.00",
        "0.00",
        "3.50",
        "0",
        "6",
        "0",
    ]
    assert _table_line(table1, "docintent")[1:10] == [
        "100.00",
        "100.00",
        "100.00",
        "100.00",
        "100.00",
        "100.00",
        "1.00",
        "7.00",
        "120",
    ]
    assert "agres" not in table1
    assert _table_line(table2, "agres")[1:10] == [
        "50.00",
        "50.00",
        "100.00",
        "100.00",
        "75.00",
        "75.00",
        "3.00",
        "1.00",
        "50",
    ]
    assert "| docintent |" in table2  # for reference beside the ablations

    degradations = md.split("## Score by recorded degradation")[1].split("![")[0]
    assert _table_line(degradations, "blur") == ["blur", "3", "66.67", "100.00", "66.67"]
    assert _table_line(degradations, "shadow") == ["shadow", "1", "100.00", "100.00", "0.00"]
    assert _table_line(degradations, "(none recorded)") == ["(none recorded)", "3", "66.67", "100.00", "66.67"]

    data = json.loads(paths["json"].read_text())
    assert data["table1"][0]["summary"]["tasks"]["doc"]["score"] == 75.0


def test_plots_html_and_failure_pictures(tmp_path):
    run = _make_run(tmp_path)
    out = tmp_path / "report"
    paths = write_report([load_run(run)], out)
    for kind in ("plot_families", "plot_degradations"):
        assert paths[kind].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = paths["html"].read_text()
    assert "<style>" in page and "<link" not in page  # self-contained apart from its relative images
    assert '<td class="num">75.00</td>' in page
    data = json.loads(paths["json"].read_text())
    failures = {(f["sample"], f["strategy"]): f["images"] for f in data["failures"]}
    # s2 under "none" was solved by docintent: shown with its saved steps (input, then the rolled-back tool)
    steps = failures[("s2", "none")]
    assert len(steps) == 2 and all((out / p).exists() for p in steps)
    assert "after deshadowing (rolled back)" in page
    # a failure without saved steps shows its input image
    others = [images for key, images in failures.items() if key != ("s2", "none")]
    assert others and all(len(images) == 1 and (out / images[0]).exists() for images in others)
    for rel in steps:
        assert f"src='{rel}'" in page


def test_report_command_compares_runs(tmp_path, capsys):
    first = _make_run(tmp_path / "a")
    second = _make_run(tmp_path / "b", name="openai")
    assert main(["report", str(first), str(second), "--out", str(tmp_path / "report")]) == 0
    printed = capsys.readouterr().out
    assert "| run | strategy |" in printed
    assert "| offline | none | 75.00 |" in printed and "| openai | none | 75.00 |" in printed
    with pytest.raises(DatasetError, match="not a run directory"):
        load_run(tmp_path / "nowhere")


def test_saved_steps_of_a_real_run_appear_beside_its_failure(tmp_path):
    from docintent.brains import Rollback, ScriptedBrain, UseTool
    from docintent.evaluation.runner import run_benchmark
    from docintent.sample import Sample

    image = tmp_path / "page.png"
    _write_image(image, 120)
    sample = Sample(
        id="p1",
        image=str(image),
        question="total?",
        answers=("9",),
        task="doc",
        subset="DocVQA",
        group="p1",
        degradations=("rotation_90",),
    )

    def brain():
        return ScriptedBrain(
            decisions=[UseTool("rotate_90", "page looks sideways")], reviews=[Rollback("worse")], final="8"
        )

    run_benchmark([sample], ["docintent"], brain, tmp_path / "run", save_steps=True, progress=False)
    paths = write_report([load_run(tmp_path / "run")], tmp_path / "report")
    md = paths["markdown"].read_text()
    assert "### p1 — docintent (run)" in md and "- answer: '8' (score 0.00)" in md
    pictures = [line for line in md.splitlines() if line.startswith("![") and "images/" in line]
    assert [p.split("]")[0] for p in pictures] == ["![input", "![after rotate_90 (rolled back)"]
    from PIL import Image

    sizes = [Image.open(tmp_path / "report" / p.rsplit("(", 1)[1].rstrip(")")).size for p in pictures]
    assert sizes == [(80, 60), (60, 80)]  # the rotated page really is the tool's output


def test_the_harm_section_names_the_kind_where_a_kept_tool_lowered_the_score(tmp_path):
    """Ten letters where docintent kept a tool and lost the answer none had, ten receipts where it gained: the
    report shows the letters' loss with an interval below zero and names the samples, the receipts' gain."""
    run = tmp_path / "harm"
    run.mkdir()
    rows = []
    for i in range(20):
        kind = "letter" if i < 10 else "receipt"
        for strategy in ("none", "docintent"):
            lost = strategy == "docintent" and kind == "letter" and i < 6
            gained = strategy == "docintent" and kind == "receipt"
            score = (
                1.0 if (strategy == "none" and kind == "letter") or gained or (kind == "letter" and not lost) else 0.0
            )
            rows.append(
                {
                    "sample": {
                        "id": f"{kind}-{i}",
                        "image": "x.png",
                        "question": "Who?",
                        "answers": ["A"],
                        "task": "doc",
                        "subset": kind,
                        "group": f"{kind}-{i}",
                        "capture": 1,
                        "degradations": [],
                        "meta": {"condition": "glare"},
                    },
                    "strategy": strategy,
                    "brain": "offline",
                    "answer": "A",
                    "score": score,
                    "correct": bool(score),
                    "seconds": 1.0,
                    "error": None,
                    "result": {
                        "tools_used": 1 if strategy == "docintent" else 0,
                        "tools_kept": ["deblurring"] if strategy == "docintent" else [],
                        "trace": [],
                    },
                }
            )
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "manifest.json").write_text(json.dumps({"brain": "offline", "seed": 0, "config": {"dataset": "synth:x"}}))
    paths = write_report([load_run(run)], tmp_path / "out", failures=0)
    md = paths["markdown"].read_text()
    letter = _table_line(md, "subset")
    assert letter[:6] == ["subset", "letter", "10", "40.0", "100.0", "-60.0 **loss**"]
    assert "| subset | receipt | 10 | 100.0 | 0.0 | +100.0 |" in md
    assert "6 sample(s) where docintent kept a tool and scored lower than none" in md
    data = json.loads(paths["json"].read_text())
    harmed = data["harm"]["harm"]["harmed"]
    assert sorted(h["sample"] for h in harmed) == [f"letter-{i}" for i in range(6)]
    assert all(h["kept"] == ["deblurring"] for h in harmed)


def test_a_dataset_with_its_own_metric_gets_the_same_consistency_in_bench_report_and_score(tmp_path):
    """Doc questions scored with a dataset's own metric (token F1, correct at >= 0.8): a row at 0.75 is not
    correct, so its question is not consistent - in the bench table, the report and `docintent score` alike, under
    the metric's own name (ANLS's rule, > 0.5, would have called the row correct)."""
    from docintent.evaluation.metrics import METRICS, Metric
    from docintent.evaluation.report import strategy_rows, table_markdown
    from docintent.evaluation.scoring import score_path

    def token_f1(prediction, answers, subset):
        gold = (answers if isinstance(answers, str) else list(answers)[0]).split()
        got = (prediction or "").split()
        common = len(set(gold) & set(got))
        return 0.0 if not common else 2 * common / (len(gold) + len(got))

    run = tmp_path / "own-metric"
    run.mkdir()
    rows = [
        {
            "sample": {
                "id": "q1-c1",
                "image": "x.png",
                "question": "What?",
                "answers": ["alpha beta gamma delta"],
                "task": "doc",
                "subset": "forms",
                "group": "q1",
                "capture": 1,
                "degradations": [],
                "meta": {"metric": "token_f1"},
            },
            "strategy": "none",
            "brain": "offline",
            "answer": "alpha beta gamma",
            "score": 6 / 7,
            "correct": True,
            "seconds": 1.0,
            "error": None,
            "result": {"tools_used": 0, "trace": []},
        },
        {
            "sample": {
                "id": "q1-c2",
                "image": "x.png",
                "question": "What?",
                "answers": ["alpha beta gamma delta"],
                "task": "doc",
                "subset": "forms",
                "group": "q1",
                "capture": 2,
                "degradations": [],
                "meta": {"metric": "token_f1"},
            },
            "strategy": "none",
            "brain": "offline",
            "answer": "alpha beta",
            "score": 4 / 6,
            "correct": False,
            "seconds": 1.0,
            "error": None,
            "result": {"tools_used": 0, "trace": []},
        },
    ]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "manifest.json").write_text(json.dumps({"brain": "offline", "seed": 0, "config": {"dataset": "synth:x"}}))
    own = Metric("token_f1", token_f1, lambda score: score >= 0.8, title="token F1, right at 0.8")
    with METRICS.scoped("token_f1", own):
        bench = table_markdown(strategy_rows([("own-metric", rows)]))
        report = write_report([load_run(run)], tmp_path / "out", failures=0)["markdown"].read_text()
        (scored,) = score_path(run)
        scored_table = summary_markdown(scored.summary)
    for table in (bench, report):
        assert "DocVQA (token F1, right at 0.8) score" in table and "DocVQA (token F1, right at 0.8) cons." in table
        assert "ANLS" not in table
        assert _table_line(table, "none")[1:3] == ["76.19", "0.00"]
    assert "| DocVQA (token F1, right at 0.8) | 76.19 | 0.00 |" in scored_table
    assert scored.summary.tasks["doc"].metric == "token_f1"


def test_rows_of_one_task_scored_by_two_metrics_are_refused_by_name_not_averaged():
    """One figure cannot hold ANLS and a dataset's own metric at once: the summary says which metrics met."""
    from docintent.evaluation.metrics import METRICS, Metric, summarize

    rows = [
        {"task": "doc", "subset": "a", "group": "q1", "score": 1.0},
        {"task": "doc", "subset": "a", "group": "q2", "score": 1.0, "metric": "exact"},
    ]
    with METRICS.scoped("exact", Metric("exact", lambda p, a, s: float(p == a), lambda score: score >= 1.0)):
        with pytest.raises(DatasetError, match=r"'doc' rows are scored by 2 metrics \(anls, exact\)"):
            summarize(rows)


def test_a_metric_that_macro_averages_its_sub_splits_is_reported_as_such_for_any_task():
    """The aggregation belongs to the metric, not to the table task: a doc dataset scored by a macro metric gets
    equal weight per sub-split and says so in its title."""
    from docintent.evaluation.metrics import METRICS, Metric, summarize

    rows = [
        {"task": "doc", "subset": "big", "group": f"b{i}", "score": 1.0, "metric": "macro_exact"} for i in range(3)
    ] + [{"task": "doc", "subset": "small", "group": "s1", "score": 0.0, "metric": "macro_exact"}]
    macro = Metric(
        "macro_exact", lambda p, a, s: float(p == a), lambda score: score >= 1.0, title="exact", aggregate="macro"
    )
    with METRICS.scoped("macro_exact", macro):
        summary = summarize(rows)
        table = summary_markdown(summary)
    assert summary.tasks["doc"].score == 50.0  # (100 + 0) / 2, not 75 (the mean over the 4 rows)
    assert "| DocVQA (exact, macro over 2 sub-splits) | 50.00 | 50.00 |" in table
    assert "|   small | 0.00 | 0.00 |" in table


def test_page_names_and_step_folders_from_a_tampered_row_never_lead_out_of_the_run_or_the_report(tmp_path):
    """Rows edited by hand: a page name that is a path to a picture outside the run, and a step folder above the
    run folder. The report reads neither and writes nothing outside its own folder."""
    run = _make_run(tmp_path)
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    noise = np.random.default_rng(0).integers(0, 255, (90, 120, 3), dtype=np.uint8)
    cv2.imwrite(str(outside / "secret.jpg"), noise)
    before = (outside / "secret.jpg").read_bytes()
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    failed = next(r for r in rows if r["strategy"] == "none" and r["sample"]["id"] == "s2")
    failed["result"]["input_page"] = "../../../elsewhere/secret"  # from steps/s2__none up to tmp_path
    other = next(r for r in rows if r["strategy"] == "none" and r["sample"]["id"] == "s4")
    other.update(score=0.0, correct=False, steps_dir="../elsewhere")
    other["result"]["input_page"] = "secret"
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "report"
    write_report([load_run(run)], out, failures=6)
    assert (outside / "secret.jpg").read_bytes() == before and sorted(p.name for p in outside.iterdir()) == [
        "secret.jpg"
    ]
    pictures = [p.name for p in (out / "images").iterdir()]
    assert not any("secret" in name or ".." in name for name in pictures)
    assert [p for p in tmp_path.rglob("*") if p.name.startswith("failure") and out not in p.parents] == []


def test_any_page_name_or_step_folder_in_a_row_stays_inside_the_run_and_the_report(tmp_path):
    """Whatever strings a row holds as its page names and step folder, the pictures a report copies come from
    inside the run folder and land inside the report folder."""
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import given
    from hypothesis import strategies as st

    from docintent.evaluation.report import failure_images

    run_dir = tmp_path / "run"
    (run_dir / "steps").mkdir(parents=True)
    (run_dir / "results.jsonl").write_text("")
    _write_image(tmp_path / "outside.jpg", 30)
    _write_image(run_dir / "steps" / "abc123.jpg", 60)
    segments = st.sampled_from(["..", ".", "", "steps", "abc123", "outside", "x", "%2e%2e", "\\\\", "~"])
    name = st.lists(segments, min_size=1, max_size=5).map("/".join)
    folder = st.lists(segments, max_size=3).map("/".join)

    @given(name, name, folder)
    @hypothesis.example("../../outside", "abc123", "steps")  # a picture outside the run, read through a name
    @hypothesis.example("abc123", "../../../outside", "steps")  # ... and one written above the report
    @hypothesis.example("outside", "outside", "..")  # a step folder above the run
    @hypothesis.settings(max_examples=200, deadline=None)
    def check(input_page, after, steps_dir):
        out = tmp_path / "report"
        row = {
            "sample": {"id": "s", "image": str(tmp_path / "missing.png")},
            "steps_dir": steps_dir,
            "result": {
                "input_page": input_page,
                "trace": [{"phase": "tool", "action": "applied", "tool": "t", "after": after}],
            },
        }
        run = type("R", (), {"path": run_dir})()
        for _, rel in failure_images(run, row, out, 0):
            written = (out / rel).resolve()
            assert out.resolve() in written.parents
        assert not [p for p in tmp_path.iterdir() if p.name not in ("run", "report", "outside.jpg")]
        assert not [p for p in out.rglob("*") if ".." in p.name]  # no folder made of a name's path parts

    check()
