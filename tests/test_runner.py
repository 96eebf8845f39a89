"""The benchmark runner: rows, resume after a kill, failures as rows, retries, shards, workers."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from docintent.cli import main
from docintent.errors import ConfigError, DatasetError
from docintent.evaluation.runner import (
    BrainFactory,
    parse_shard,
    read_results,
    run_benchmark,
    select_shard,
)
from docintent.sample import Sample
from docintent.strategies import Result, pipeline_tools
from docintent.tools import restoration_tools

SCRIPTED_42 = BrainFactory("scripted", {"final": "42"})


def _image(path: Path, text: str) -> str:
    img = np.full((120, 320, 3), 255, np.uint8)
    cv2.putText(img, text, (10, 70), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (0, 0, 0), 2)
    cv2.imwrite(str(path), img)
    return str(path)


def _samples(tmp_path: Path, n: int = 4, answers=("42",)) -> list[Sample]:
    out = []
    for i in range(n):
        image = _image(tmp_path / f"page{i}.png", f"total {i}")
        out.append(
            Sample(
                id=f"s{i}",
                image=image,
                question=f"what is total {i}?",
                answers=tuple(answers),
                task="doc",
                subset="DocVQA",
                group=f"q{i // 2}",
                capture=i % 2 + 1,
                degradations=("blur",) if i % 2 else (),
            )
        )
    return out


def _write_jsonl(path: Path, samples: list[Sample]) -> Path:
    path.write_text("".join(json.dumps(s.to_dict()) + "\n" for s in samples))
    return path


def _lines(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def test_one_row_per_sample_and_strategy_with_scores_and_manifest(tmp_path):
    samples = _samples(tmp_path, 3, answers=("42",))
    samples[2] = Sample(**{**samples[2].__dict__, "answers": ("7",)})
    summary = run_benchmark(samples, ["none", "pipeline-fixed"], SCRIPTED_42, tmp_path / "run", seed=5, progress=False)
    assert (summary.rows, summary.new_rows, summary.failed) == (6, 6, 0)
    rows = _lines(tmp_path / "run" / "results.jsonl")
    assert [(r["sample"]["id"], r["strategy"]) for r in rows] == [
        ("s0", "none"),
        ("s0", "pipeline-fixed"),
        ("s1", "none"),
        ("s1", "pipeline-fixed"),
        ("s2", "none"),
        ("s2", "pipeline-fixed"),
    ]
    first = rows[0]
    assert first["answer"] == "42" and first["score"] == 1.0 and first["correct"] is True
    assert first["brain"] == "scripted" and first["error"] is None and first["seconds"] > 0
    # every row carries what its run cost, counted: the pipeline ran its five tools, answering directly ran none
    assert first["result"]["work"] == {"tool_runs": 0, "reviews": 0, "inspections": 0, "pixels_restored": 0}
    assert rows[1]["result"]["work"]["tool_runs"] == len(pipeline_tools(restoration_tools()))
    assert rows[1]["result"]["work"]["reviews"] == 0
    assert first["result"]["strategy"] == "none" and first["result"]["trace"][0]["action"] == "answer"
    assert first["sample"] == samples[0].to_dict()
    assert rows[4]["score"] == 0.0 and rows[4]["correct"] is False  # "42" against gold "7"
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["seed"] == 5 and manifest["brain"] == "scripted"
    assert manifest["config"]["strategies"] == ["none", "pipeline-fixed"]
    assert manifest["versions"]["numpy"] == np.__version__
    assert manifest["rows"] == 6 and manifest["finished"]


class _CrashAfter:
    """A strategy that answers, but interrupts the whole run (like Ctrl-C or a kill) at its k-th call."""

    name = "none"

    def __init__(self, k: int) -> None:
        self.k, self.calls = k, 0

    def run(self, page, question, task, brain):
        self.calls += 1
        if self.calls == self.k:
            raise KeyboardInterrupt
        return Result(answer="42", strategy=self.name)


def test_interrupted_run_plus_cut_line_resumes_without_loss_or_repeat(tmp_path):
    samples = _samples(tmp_path, 6)
    out = tmp_path / "run"
    with pytest.raises(KeyboardInterrupt):
        run_benchmark(samples, [_CrashAfter(4)], SCRIPTED_42, out, progress=False)
    results = out / "results.jsonl"
    assert [r["sample"]["id"] for r in _lines(results)] == ["s0", "s1", "s2"]
    # a kill in the middle of writing row s3 leaves a line without its end
    with open(results, "a") as fh:
        fh.write('{"sample": {"id": "s3", "ques')
    assert [r["sample"]["id"] for r in read_results(out)] == ["s0", "s1", "s2"]
    summary = run_benchmark(samples, ["none"], SCRIPTED_42, out, progress=False)
    assert (summary.skipped, summary.new_rows, summary.rows) == (3, 3, 6)
    assert summary.dropped_partial_line
    ids = [r["sample"]["id"] for r in _lines(results)]
    assert ids == ["s0", "s1", "s2", "s3", "s4", "s5"]


_SLOW_RUN = """
import sys, time
from docintent.evaluation.datasets import load_dataset
from docintent.evaluation.runner import run_benchmark
from docintent.brains import ScriptedBrain

class SlowScripted(ScriptedBrain):
    def answer(self, state):
        time.sleep(0.3)
        return super().answer(state)

def factory():
    return SlowScripted(final="first")

run_benchmark(load_dataset(sys.argv[1]), ["none"], factory, sys.argv[2], progress=False)
"""


def test_sigkilled_run_resumes_without_losing_or_repeating_rows(tmp_path):
    samples = _samples(tmp_path, 12)
    dataset = _write_jsonl(tmp_path / "samples.jsonl", samples)
    out = tmp_path / "run"
    script = tmp_path / "slow_run.py"
    script.write_text(textwrap.dedent(_SLOW_RUN))
    proc = subprocess.Popen([sys.executable, str(script), f"jsonl:{dataset}", str(out)])
    results = out / "results.jsonl"
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if results.exists() and results.read_text().count("\n") >= 3:
                break
            time.sleep(0.05)
        else:
            pytest.fail("the run wrote no rows within 60 s")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    before = read_results(out)
    assert 3 <= len(before) < 12
    assert all(r["answer"] == "first" for r in before)

    assert (
        main(
            [
                "bench",
                "--dataset",
                f"jsonl:{dataset}",
                "--strategies",
                "none",
                "--brain",
                "scripted",
                "--brain-opt",
                "final=second",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    after = _lines(results)
    assert [r["sample"]["id"] for r in after] == [s.id for s in samples]  # nothing repeated, nothing lost
    assert after[: len(before)] == before  # finished rows kept as they were
    assert {r["answer"] for r in after[len(before) :]} == {"second"}


class _Raises:
    name = "fragile"

    def run(self, page, question, task, brain):
        if "1" in question:
            raise RuntimeError("cannot cope with this page")
        return Result(answer="42", strategy=self.name)


def test_failures_are_rows_and_only_retry_failed_runs_them_again(tmp_path):
    samples = _samples(tmp_path, 4)
    missing = tmp_path / "page0.png"
    missing.unlink()
    corrupt = tmp_path / "page2.png"
    corrupt.write_bytes(b"this is not an image")
    out = tmp_path / "run"
    summary = run_benchmark(samples, [_Raises()], SCRIPTED_42, out, progress=False)
    assert (summary.rows, summary.failed) == (4, 3)
    errors = {r["sample"]["id"]: r["error"] for r in read_results(out)}
    assert errors["s0"].startswith("FileMissingError:") and "page0.png" in errors["s0"]
    assert errors["s1"] == "RuntimeError: cannot cope with this page"
    assert errors["s2"].startswith("CorruptImageError:")
    assert errors["s3"] is None

    again = run_benchmark(samples, [_Raises()], SCRIPTED_42, out, progress=False)
    assert (again.new_rows, again.skipped, again.failed) == (0, 4, 3)

    _image(missing, "repaired")
    _image(corrupt, "repaired")
    retry = run_benchmark(samples, [_Raises()], SCRIPTED_42, out, retry_failed=True, progress=False)
    assert (retry.retried, retry.new_rows, retry.failed) == (3, 3, 1)
    rows = _lines(out / "results.jsonl")
    assert len(rows) == 4  # compacted: the retried rows replaced the failed ones
    assert {r["sample"]["id"]: r["error"] for r in rows} == {
        "s0": None,
        "s1": "RuntimeError: cannot cope with this page",
        "s2": None,
        "s3": None,
    }


def test_shards_partition_the_samples(tmp_path):
    samples = _samples(tmp_path, 10)
    shards = [select_shard(samples, i, 3) for i in range(3)]
    ids = [s.id for shard in shards for s in shard]
    assert sorted(ids) == sorted(s.id for s in samples) and len(ids) == len(set(ids))
    assert parse_shard("1/3") == (1, 3)
    for bad in ("3/3", "a/b", "1", "-1/2"):
        with pytest.raises(ConfigError, match="--shard"):
            parse_shard(bad)

    dataset = _write_jsonl(tmp_path / "samples.jsonl", samples)
    out = tmp_path / "run"
    for shard in ("0/2", "1/2"):
        assert (
            main(
                [
                    "bench",
                    "--dataset",
                    f"jsonl:{dataset}",
                    "--brain",
                    "scripted",
                    "--shard",
                    shard,
                    "--no-progress",
                    "--out",
                    str(out),
                ]
            )
            == 0
        )
    rows = _lines(out / "results.jsonl")
    assert sorted(r["sample"]["id"] for r in rows) == sorted(s.id for s in samples)


def test_limit_and_cli_summary(tmp_path, capsys):
    dataset = _write_jsonl(tmp_path / "samples.jsonl", _samples(tmp_path, 4))
    out = tmp_path / "run"
    assert (
        main(
            [
                "bench",
                "--dataset",
                f"jsonl:{dataset}",
                "--strategies",
                "none,judge-fixed",
                "--brain",
                "scripted",
                "--brain-opt",
                "final=42",
                "--limit",
                "2",
                "--no-progress",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    assert "4 rows (4 new, 0 already done, 0 retried, 0 with errors)" in printed
    assert "| none | 100.00 | 100.00 |" in printed


def test_two_worker_processes_write_the_same_rows(tmp_path):
    samples = _samples(tmp_path, 6)
    one = run_benchmark(samples, ["none"], SCRIPTED_42, tmp_path / "w1", progress=False)
    two = run_benchmark(samples, ["none"], SCRIPTED_42, tmp_path / "w2", workers=2, progress=False)
    assert one.rows == two.rows == 6 and two.failed == 0
    rows1 = {r["sample"]["id"]: r["answer"] for r in read_results(tmp_path / "w1")}
    rows2 = {r["sample"]["id"]: r["answer"] for r in read_results(tmp_path / "w2")}
    assert rows1 == rows2 == {s.id: "42" for s in samples}


def test_damaged_line_in_the_middle_and_brain_mismatch_are_errors(tmp_path):
    samples = _samples(tmp_path, 2)
    out = tmp_path / "run"
    run_benchmark(samples, ["none"], SCRIPTED_42, out, progress=False)
    results = out / "results.jsonl"
    good = results.read_text()
    with pytest.raises(ConfigError, match="made with brain 'scripted'"):
        run_benchmark(samples, ["none"], BrainFactory("offline"), out, progress=False)
    results.write_text("{broken\n" + good)
    with pytest.raises(DatasetError, match="line 1 is not a complete result row"):
        read_results(out)
    with pytest.raises(DatasetError, match="occurs more than once"):
        run_benchmark(samples + samples[:1], ["none"], SCRIPTED_42, tmp_path / "dup", progress=False)
    assert os.path.exists(results)


def test_workers_refuse_an_unpicklable_brain_factory_before_running(tmp_path):
    samples = _samples(tmp_path, 2)
    with pytest.raises(ConfigError, match="picklable brain factory"):
        run_benchmark(samples, ["none"], lambda: None, tmp_path / "run", workers=2, progress=False)
    assert not (tmp_path / "run" / "results.jsonl").exists()
