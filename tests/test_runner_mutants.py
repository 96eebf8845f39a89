"""Run-store behaviours that mutation testing of ``evaluation/runner.py`` showed no other test pins down.

Each test names, in its docstring, the code change it catches (see ``benchmarks/mutation.py``). All runs are
in-process (one worker), on small pages drawn here.
"""

from __future__ import annotations

import json
import logging
import subprocess
from pathlib import Path

import cv2
import numpy as np
import pytest

from docintent.brains import ScriptedBrain
from docintent.errors import ConfigError, DatasetError
from docintent.evaluation import runner
from docintent.evaluation.runner import (
    ResultsWriter,
    RunSummary,
    dump_row,
    parse_options,
    read_manifest,
    read_results,
    run_benchmark,
)
from docintent.page import Page
from docintent.sample import Sample
from docintent.strategies import Result, get_strategy


class ScriptedFactory:
    """A brain recipe with options, as the CLI builds one (``--brain-opt``); the options land in the manifest."""

    kind = "scripted"

    def __init__(self, **options) -> None:
        self.options = options

    def __call__(self):
        return ScriptedBrain(final="42")


def _samples(tmp_path: Path, n: int = 2, size: tuple[int, int] = (120, 320), task: str = "doc") -> list[Sample]:
    out = []
    for i in range(n):
        img = np.full((*size, 3), 255, np.uint8)
        cv2.putText(img, f"total {i}", (10, 70), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (0, 0, 0), 2)
        path = tmp_path / f"page{i}.png"
        cv2.imwrite(str(path), img)
        out.append(
            Sample(
                id=f"doc {i}/a",
                image=str(path),
                question=f"what is total {i}?",
                answers=("42",),
                task=task,
                subset="DocVQA",
                group=f"q{i}",
            )
        )
    return out


def _manifest(out: Path) -> dict:
    return json.loads((out / "manifest.json").read_text())


# --- options and rows -------------------------------------------------------------------------------------


def test_brain_options_parse_as_json_or_text_and_bad_pairs_are_refused():
    """Catches ``if not sep or not key.strip()`` with ``or`` -> ``and`` or a dropped ``not``."""
    assert parse_options(["final=42", "temperature=0.5", "stream=true", "model=gpt-4o", " name = x"]) == {
        "final": 42,
        "temperature": 0.5,
        "stream": True,
        "model": "gpt-4o",
        "name": " x",
    }
    for bad in ("final", "=42", "  =42"):
        with pytest.raises(ConfigError, match=f"option {bad!r}: expected KEY=VALUE"):
            parse_options([bad])


def test_rows_with_numpy_values_paths_and_sets_are_written_as_plain_json(tmp_path):
    """Catches ``_json_default`` returning None for numpy scalars, arrays, sets or paths (the row would lose them)."""
    line = dump_row(
        {
            "score": np.float32(0.5),
            "box": np.arange(3),
            "tools": ("a",),
            "seen": {"x"},
            "image": tmp_path / "p.png",
            "n": np.int64(7),
        }
    )
    assert line.endswith("\n")
    assert json.loads(line) == {
        "score": 0.5,
        "box": [0, 1, 2],
        "tools": ["a"],
        "seen": ["x"],
        "image": str(tmp_path / "p.png"),
        "n": 7,
    }


def test_a_row_whose_scoring_fails_keeps_the_error_and_is_not_correct(tmp_path):
    """Catches ``row["error"] or _error_text(err)`` with ``or`` -> ``and`` (the error would be lost) and a row
    that starts out ``correct``."""
    samples = _samples(tmp_path, 1, task="video")  # no metric for this task: scoring raises
    summary = run_benchmark(samples, ["none"], ScriptedFactory(), tmp_path / "run", progress=False)
    (row,) = read_results(tmp_path / "run")
    assert row["answer"] == "42" and row["score"] == 0.0 and row["correct"] is False
    assert row["error"].startswith("UnknownComponentError:") and "video" in row["error"]
    assert summary.failed == 1 and _manifest(tmp_path / "run")["failed"] == 1


def test_a_failed_row_is_counted_once_in_the_manifest(tmp_path):
    """Catches the manifest's ``failed`` count adding 2 per failed row."""
    samples = _samples(tmp_path, 3)
    Path(samples[1].image).unlink()
    summary = run_benchmark(samples, ["none"], ScriptedFactory(), tmp_path / "run", progress=False)
    manifest = _manifest(tmp_path / "run")
    assert summary.failed == manifest["failed"] == 1 and manifest["rows"] == 3


# --- the manifest -------------------------------------------------------------------------------------------


def test_secret_brain_options_never_reach_the_manifest(tmp_path):
    """Catches the secret-name test inverted (``in`` -> ``not in``): keys would be written and other options hidden."""
    factory = ScriptedFactory(api_key="sk-live-123", Auth_Token="t0k", model="gpt-4o", temperature=0)
    run_benchmark(_samples(tmp_path, 1), ["none"], factory, tmp_path / "run", progress=False)
    text = (tmp_path / "run" / "manifest.json").read_text()
    assert "sk-live-123" not in text and "t0k" not in text
    assert _manifest(tmp_path / "run")["config"]["brain_options"] == {
        "api_key": "***",
        "Auth_Token": "***",
        "model": "gpt-4o",
        "temperature": 0,
    }


def test_changed_brain_options_warn_and_unchanged_ones_do_not(tmp_path, caplog):
    """Catches the options check with ``and`` -> ``or`` (every resumed run would warn)."""
    samples = _samples(tmp_path, 2)
    out = tmp_path / "run"
    run_benchmark(samples[:1], ["none"], ScriptedFactory(model="a"), out, progress=False)
    with caplog.at_level(logging.WARNING, logger="docintent.evaluation.runner"):
        run_benchmark(samples, ["none"], ScriptedFactory(model="a"), out, progress=False)
    assert not [r for r in caplog.records if "brain options changed" in r.getMessage()]
    with caplog.at_level(logging.WARNING, logger="docintent.evaluation.runner"):
        run_benchmark(samples, ["none"], ScriptedFactory(model="b"), out, progress=False)
    assert any("brain options changed from {'model': 'a'} to {'model': 'b'}" in r.getMessage() for r in caplog.records)


def test_the_manifest_names_the_source_commit_only_for_a_checkout(tmp_path):
    """Catches ``returncode != 0`` -> ``== 0`` in ``git_commit`` and a commit record that is never returned."""
    run_benchmark(_samples(tmp_path, 1), ["none"], ScriptedFactory(), tmp_path / "run", progress=False)
    root = Path(runner.__file__).resolve().parents[3]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True)
    git = _manifest(tmp_path / "run")["git"]
    if head.returncode != 0:
        assert git is None
    else:
        assert git["commit"] == head.stdout.strip() and isinstance(git["dirty"], bool)


def test_defaults_are_one_worker_no_step_images_and_no_progress_bar_when_asked(tmp_path, capsys):
    """Catches ``workers`` defaulting to 2, ``save_steps`` to True, and ``disable=not show`` losing its ``not``."""
    out = tmp_path / "a" / "b" / "run"  # parents are created
    summary = run_benchmark(_samples(tmp_path, 2), ["none"], ScriptedFactory(), out, progress=False)
    assert summary.workers == 1 and _manifest(out)["config"]["workers"] == 1
    assert not (out / "steps").exists() and all("steps_dir" not in r for r in read_results(out))
    assert capsys.readouterr().err == ""
    run_benchmark(_samples(tmp_path, 3), ["none"], ScriptedFactory(), out, progress=True)
    assert "1/1" in capsys.readouterr().err  # the bar, for the one new row


def test_step_images_are_saved_once_per_page_state_and_shrunk_to_1024(tmp_path):
    """Catches ``_save_steps``: the folder not created (``parents`` / ``exist_ok`` flipped), the shrink test
    ``scale < 1`` moved, and the sample id not made safe for a folder name."""
    samples = _samples(tmp_path, 1, size=(1500, 600))
    out = tmp_path / "run"
    run_benchmark(samples, ["none", "pipeline-fixed"], ScriptedFactory(), out, progress=False, save_steps=True)
    rows = read_results(out)
    assert [r["error"] for r in rows] == [None, None]
    assert {r["steps_dir"] for r in rows} == {"steps/doc_0_a"}
    folder = out / "steps" / "doc_0_a"
    saved = {p.stem: cv2.imread(str(p)).shape[:2] for p in folder.glob("*.jpg")}
    pipeline = rows[1]["result"]
    assert pipeline["input_page"] in saved and pipeline["final_page"] in saved
    assert saved[pipeline["input_page"]] == (1024, 410)  # 1500 x 600 scaled by 1024 / 1500
    assert not list(folder.glob(".*"))  # no temporary files left


def test_small_step_images_keep_their_size(tmp_path):
    """Catches the shrink applied to pages already under 1024 pixels (``scale < 1`` -> ``scale < 2`` would blow a
    700-pixel page up to 1024)."""
    out = tmp_path / "run"
    run_benchmark(
        _samples(tmp_path, 1, size=(300, 700)), ["none"], ScriptedFactory(), out, progress=False, save_steps=True
    )
    (image,) = (out / "steps" / "doc_0_a").glob("*.jpg")
    assert cv2.imread(str(image)).shape[:2] == (300, 700)


# --- budgets, summaries, the results file -------------------------------------------------------------------


def test_a_row_budget_writes_exactly_that_many_rows(tmp_path):
    """Catches ``max(0, max_rows)`` -> ``max(1, max_rows)``: a zero budget would still run a sample."""
    samples = _samples(tmp_path, 3)
    out = tmp_path / "run"
    assert run_benchmark(samples, ["none"], ScriptedFactory(), out, progress=False, max_rows=0).new_rows == 0
    assert not read_results(out)
    assert run_benchmark(samples, ["none"], ScriptedFactory(), out, progress=False, max_rows=2).new_rows == 2
    summary = run_benchmark(samples, ["none"], ScriptedFactory(), out, progress=False)
    assert (summary.skipped, summary.new_rows, summary.rows) == (2, 1, 3)
    sessions = _manifest(out)["sessions"]
    assert [(s["planned_rows"], s["new_rows"]) for s in sessions] == [(0, 0), (2, 2), (1, 1)]


def test_samples_per_second_is_new_rows_over_wall_time():
    """Catches ``samples_per_second`` returning None, or dividing when no time passed."""
    summary = RunSummary(Path("r"), rows=10, new_rows=4, skipped=6, retried=0, failed=0, seconds=2.0, workers=1)
    assert summary.samples_per_second == 2.0
    quick = RunSummary(Path("r"), rows=1, new_rows=1, skipped=0, retried=0, failed=0, seconds=0.5, workers=1)
    assert quick.samples_per_second == 2.0
    idle = RunSummary(Path("r"), rows=10, new_rows=0, skipped=10, retried=0, failed=0, seconds=0.0, workers=1)
    assert idle.samples_per_second == 0.0


def test_strategy_lists_must_be_non_empty_and_distinct(tmp_path):
    """Catches the empty-list check losing its ``not`` and ``workers < 1`` going unchecked."""
    samples = _samples(tmp_path, 1)
    with pytest.raises(ConfigError, match="no strategy to run"):
        run_benchmark(samples, [], ScriptedFactory(), tmp_path / "run", progress=False)
    with pytest.raises(ConfigError, match="strategies listed twice: none"):
        run_benchmark(samples, ["none", get_strategy("none")], ScriptedFactory(), tmp_path / "run", progress=False)
    with pytest.raises(ConfigError, match="workers must be >= 1, got 0"):
        run_benchmark(samples, ["none"], ScriptedFactory(), tmp_path / "run", workers=0, progress=False)


def test_compacting_reports_whether_it_rewrote_the_file(tmp_path):
    """Catches ``ResultsWriter.compact`` returning the wrong verdict (it rewrites only when a key repeats)."""
    path = tmp_path / "results.jsonl"
    row = {"sample": {"id": "s"}, "strategy": "none", "answer": "1"}
    writer = ResultsWriter(path)
    writer.write(row)
    assert writer.compact() is False
    writer.write({**row, "answer": "2"})
    writer.close()
    assert writer.compact() is True
    assert [r["answer"] for r in read_results(path)] == ["2"] and path.read_text().count("\n") == 1


def test_a_cut_last_line_is_removed_before_appending(tmp_path):
    """Catches the byte offsets of ``_scan`` (start or line numbering off by one): the next row would be glued
    onto the cut line, or a good row cut."""
    path = tmp_path / "results.jsonl"
    good = (
        dump_row({"sample": {"id": "a"}, "strategy": "none"})
        + "\n"
        + dump_row({"sample": {"id": "b"}, "strategy": "none"})
    )
    path.write_text(good + '{"sample": {"id": "c", "str')
    writer = ResultsWriter(path)
    assert writer.dropped == 1 and path.read_text() == good
    writer.write({"sample": {"id": "c"}, "strategy": "none"})
    writer.close()
    assert [r["sample"]["id"] for r in read_results(path)] == ["a", "b", "c"]
    path.write_text("\n" + good.replace("\n\n", "\n") + "{broken\n" + good)
    with pytest.raises(DatasetError, match="line 4 is not a complete result row"):
        read_results(path)


def test_missing_results_and_a_broken_manifest_are_named(tmp_path):
    """Catches the error paths of ``read_results`` / ``read_manifest``."""
    with pytest.raises(DatasetError, match="no such results file"):
        read_results(tmp_path)
    assert read_manifest(tmp_path) is None
    (tmp_path / "manifest.json").write_text("{not json")
    with pytest.raises(DatasetError, match="manifest.json: not valid JSON"):
        read_manifest(tmp_path)


def test_worker_threads_are_shared_out_and_the_callers_settings_kept(monkeypatch):
    """Catches the thread share: its floor of 1 changed, or the variables it may set inverted (it would then
    overwrite, and afterwards remove, the caller's own settings)."""
    from docintent.evaluation.executors import thread_environment, usable_cores

    monkeypatch.setenv("DOCINTENT_THREADS", "3")
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        monkeypatch.delenv(name, raising=False)
    assert thread_environment(usable_cores() // 10_000) == {
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
    assert thread_environment(4)["OMP_NUM_THREADS"] == "4"
    assert usable_cores() >= 1


def test_one_strategy_object_result_round_trips(tmp_path):
    """A strategy object (not a name) runs as given; its row keeps the final and input page hashes."""

    class Flip:
        name = "flip"

        def run(self, page, question, task, brain):
            flipped = Page.from_array(np.ascontiguousarray(page.pixels[::-1]), source=page.source)
            return Result(answer="42", strategy=self.name, final_page=flipped)

    run_benchmark(_samples(tmp_path, 1), [Flip()], ScriptedFactory(), tmp_path / "run", progress=False)
    (row,) = read_results(tmp_path / "run")
    assert row["strategy"] == "flip" and row["result"]["final_page"] != row["result"]["input_page"]
