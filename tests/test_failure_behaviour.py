"""Failure behaviour: two writers at once, kills, Ctrl-C, hostile arguments and inputs, secrets in URLs.

The concurrency tests start real processes (``tests/process_helpers.py``): a slow bench or index build holds
its folder while a second ``docintent`` process tries to write there, or is killed mid-run.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import render_text_page
from docintent.cli import main
from process_helpers import make_dataset, png_bytes

TESTS = Path(__file__).resolve().parent
HELPER = [sys.executable, str(TESTS / "process_helpers.py")]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    src = str(TESTS.parent / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, str(TESTS), env.get("PYTHONPATH", "")])
    env["DOCINTENT_THREADS"] = "1"
    return env


def _start(args: list[str], **kw) -> subprocess.Popen:
    return subprocess.Popen(HELPER + args, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw)


def _docintent(args: list[str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "docintent", *args], env=_env(), capture_output=True, text=True, timeout=timeout
    )


def _wait_for(condition, timeout: float = 60.0, what: str = "condition") -> None:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if condition():
            return
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def _lines(path: Path) -> list[str]:
    return [line for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _one_error_line(err: str) -> str:
    lines = [line for line in err.splitlines() if line.strip()]
    assert "Traceback" not in err, err
    assert len(lines) == 1, err
    return lines[0]


def _bench_args(dataset: Path, out: Path, *extra: str) -> list[str]:
    return [
        "bench",
        "--dataset",
        f"jsonl:{dataset}",
        "--strategies",
        "none",
        "--no-progress",
        "--out",
        str(out),
        *extra,
    ]


# --- one writer per folder (two real processes) --------------------------------------------------------


def test_second_bench_on_the_same_out_is_refused_and_no_row_is_lost(tmp_path):
    dataset = make_dataset(tmp_path / "data", 40, broken=(3,))
    out = tmp_path / "run"
    first = _start(["cli", *_bench_args(dataset, out, "--brain", "slow", "--brain-opt", "delay=0.4")])
    try:
        _wait_for(lambda: len(_lines(out / "results.jsonl")) >= 2, what="the first run's rows")
        for extra in ([], ["--retry-failed"]):
            second = _docintent(_bench_args(dataset, out, "--brain", "scripted", *extra))
            assert first.poll() is None, "the first run ended before the second one started"
            line = _one_error_line(second.stderr)
            assert second.returncode == 1
            assert str(out) in line and f"pid {first.pid}" in line and "in use" in line
        assert first.wait(timeout=120) == 0, first.stderr.read()
    finally:
        first.kill()
    rows = [json.loads(x) for x in _lines(out / "results.jsonl")]
    assert sorted(r["sample"]["id"] for r in rows) == [f"s{i:03d}" for i in range(40)]
    assert [r["sample"]["id"] for r in rows if r["error"]] == ["s003"]
    # The lock went with its holder: the same command now runs (and has nothing left to do).
    again = _start(["cli", *_bench_args(dataset, out, "--brain", "slow")])
    assert again.wait(timeout=120) == 0, again.stderr.read()
    assert len(_lines(out / "results.jsonl")) == 40


def _image_folder(folder: Path, count: int) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (folder / f"p{i:02d}.png").write_bytes(png_bytes(40, 30, (20 + 9 * i) % 250))
    return folder


def test_second_index_on_the_same_out_is_refused(tmp_path):
    images = _image_folder(tmp_path / "images", 40)
    markers = tmp_path / "markers"
    markers.mkdir()
    out = tmp_path / "idx"
    first = _start(["index", str(images), str(out), "0.4", str(markers)])
    try:
        _wait_for(lambda: any(markers.iterdir()), what="the first build's first page")
        second = _docintent(["index", str(images), "--out", str(out), "--text", "ocr"])
        assert first.poll() is None, "the first build ended before the second one started"
        line = _one_error_line(second.stderr)
        assert second.returncode == 1 and f"pid {first.pid}" in line and str(out) in line
        assert first.wait(timeout=120) == 0, first.stderr.read()
    finally:
        first.kill()
    con = sqlite3.connect(out / "index.sqlite")
    assert con.execute("SELECT COUNT(*) FROM pages WHERE text IS NOT NULL").fetchone()[0] == 40
    con.close()


def test_a_killed_index_build_keeps_the_pages_it_had_read(tmp_path):
    images = _image_folder(tmp_path / "images", 20)
    markers = tmp_path / "markers"
    markers.mkdir()
    out = tmp_path / "idx"
    proc = _start(["index", str(images), str(out), "0.15", str(markers)])
    try:
        _wait_for(lambda: len(list(markers.iterdir())) >= 7, what="seven pages read")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    con = sqlite3.connect(out / "index.sqlite")
    saved = con.execute("SELECT COUNT(*) FROM pages WHERE text IS NOT NULL").fetchone()[0]
    con.close()
    assert saved >= 6  # every page read before the kill, give or take the one being written


def test_killing_a_bench_with_workers_leaves_no_worker_running(tmp_path):
    dataset = make_dataset(tmp_path / "data", 20)
    out = tmp_path / "run"
    proc = _start(["cli", *_bench_args(dataset, out, "--brain", "slow", "--brain-opt", "delay=0.5", "--workers", "2")])
    children: set[int] = set()
    try:

        def started() -> bool:
            children.update(_children(proc.pid))
            return len(_lines(out / "results.jsonl")) >= 1

        _wait_for(started, what="the first row")
        children.update(_children(proc.pid))
        assert len(children) >= 2
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    try:
        # A worker still importing its modules when the parent died notices once it has: seconds on a busy
        # machine (benchmarks/soak.py measured up to 6 s at load average 45).
        _wait_for(lambda: not any(_alive(c) for c in children), timeout=30, what="the workers to exit")
    finally:
        for pid in children:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_ctrl_c_stops_a_bench_with_workers_cleanly_and_it_resumes(tmp_path):
    dataset = make_dataset(tmp_path / "data", 30)
    out = tmp_path / "run"
    args = ["cli", *_bench_args(dataset, out, "--brain", "slow", "--brain-opt", "delay=0.5", "--workers", "2")]
    # Started as a terminal starts a foreground command: Ctrl-C at its default. (A job started in the background
    # of a non-interactive shell, as CI may run the tests, inherits Ctrl-C ignored, and so would the command.)
    proc = _start(args, start_new_session=True, preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    children: set[int] = set()
    try:

        def started() -> bool:
            children.update(_children(proc.pid))
            return len(_lines(out / "results.jsonl")) >= 2

        _wait_for(started, what="two rows")
        time.sleep(0.5)  # mid-run (30 rows take 7.5 s), as a user's Ctrl-C would be
        children.update(_children(proc.pid))
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal sends the whole foreground group on Ctrl-C
        _, err = proc.communicate(timeout=30)
    finally:
        proc.kill()
    assert proc.returncode == 130
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert "interrupted" in err and "run the same command again" in err
    _wait_for(lambda: not any(_alive(c) for c in children), timeout=30, what="the workers to exit")
    rows_after_interrupt = len(_lines(out / "results.jsonl"))
    assert 2 <= rows_after_interrupt < 30
    resumed = _start(["cli", *_bench_args(dataset, out, "--brain", "slow", "--brain-opt", "delay=0")])
    assert resumed.wait(timeout=120) == 0
    ids = [json.loads(x)["sample"]["id"] for x in _lines(out / "results.jsonl")]
    assert sorted(ids) == [f"s{i:03d}" for i in range(30)]


def test_the_lock_names_its_holder_and_is_free_again_after_a_kill(tmp_path):
    from docintent.errors import FolderBusyError
    from docintent.io.lock import folder_lock

    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import sys, time; from docintent.io.lock import FolderLock; "
            "FolderLock(sys.argv[1]).acquire(); print('held', flush=True); time.sleep(60)",
            str(tmp_path),
        ],
        env=_env(),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(FolderBusyError, match=f"pid {holder.pid} on host"), folder_lock(tmp_path):
            pass
    finally:
        holder.kill()
        holder.wait()
    with folder_lock(tmp_path) as lock:  # the kernel released the dead holder's lock
        assert lock.held


# --- the command line: one line on stderr, exit 1 --------------------------------------------------------


@pytest.fixture
def page_png(tmp_path):
    path = tmp_path / "page.png"
    Image.fromarray(render_text_page(["Total: 42"])).save(path)
    return path


@pytest.mark.parametrize(
    "argv_tail, fragment",
    [
        (["ocr", "{img}", "--region", "a,b,c,d"], "--region"),
        (["ocr", "{img}", "--region", ""], "--region"),
        (["ocr", "{img}", "--region", "0,0,2000,500"], "--region"),
        (["ocr", "{img}", "--region", "0.5,0.5,0.2,0.9"], "--region"),
        (["diagnose", "{img}", "--region", "0,0,1"], "--region"),
        (["ocr", "{img}", "--page", "-1"], "--page"),
        (["ocr", "{img}", "--pages", "0"], "pages count from 1"),
        (["ask", "{img}", "q?", "--page", "1"], "use --pages"),
        (["ask", "{img}", "q?", "--max-pages", "0"], "--max-pages"),
        (["evidence", "{img}", "q", "--dpi", "0"], "--dpi"),
        (["evidence", "{img}", "q", "--dpi", "-72"], "--dpi"),
        (["evidence", "{img}", "q", "--threshold", "5"], "--threshold"),
        (["index", "{img}", "--out", "{tmp}/i", "--dpi", "0"], "--dpi"),
        (["bench", "--dataset", "jsonl:x", "--out", "{tmp}/r", "--workers", "0"], "--workers"),
        (["search", "{tmp}", "q", "-k", "0"], "-k"),
        (["restore", "{img}", "-t", "deshadowing", "-o", "{tmp}/out.xyz"], "-o"),
    ],
)
def test_bad_arguments_are_refused_at_parse_time_in_one_line(argv_tail, fragment, page_png, tmp_path, capsys):
    argv = [a.format(img=page_png, tmp=tmp_path) for a in argv_tail]
    code = main(argv)
    captured = capsys.readouterr()
    line = _one_error_line(captured.err)
    assert code == 1 and fragment in line and captured.out == ""


def test_page_past_the_end_of_a_single_image_is_refused(page_png, capsys):
    code = main(["ocr", str(page_png), "--pages", "5"])
    line = _one_error_line(capsys.readouterr().err)
    assert code == 1 and "'5': page 5 is outside this 1-page document (page 1;" in line and str(page_png) in line


def test_unreadable_input_is_one_line_naming_it(page_png, monkeypatch, capsys):
    import docintent.io.load as load

    def denied(path, *a, **k):
        raise PermissionError(13, "Permission denied", str(path))

    monkeypatch.setattr(load, "_check_file", denied)
    code = main(["diagnose", str(page_png)])
    line = _one_error_line(capsys.readouterr().err)
    assert code == 1 and str(page_png) in line and "ermission denied" in line


@pytest.mark.parametrize("target", ["file_as_dir", "dir"])
def test_unwritable_outputs_are_one_line_naming_them(target, page_png, tmp_path, capsys):
    blocker = tmp_path / "blocker"
    blocker.write_text("x")
    out = blocker / "out.png" if target == "file_as_dir" else tmp_path
    code = main(["restore", str(page_png), "-t", "rotate_90", "-o", str(out)])
    line = _one_error_line(capsys.readouterr().err)
    assert code == 1 and str(out) in line


def test_trace_into_a_directory_is_one_line(page_png, tmp_path, capsys):
    code = main(["ask", str(page_png), "What is the total?", "--strategy", "none", "--trace", str(tmp_path)])
    captured = capsys.readouterr()
    line = _one_error_line(captured.err)
    assert code == 1 and str(tmp_path) in line


def test_bench_out_that_is_a_file_is_one_line(tmp_path, capsys):
    dataset = make_dataset(tmp_path / "data", 2)
    out = tmp_path / "taken"
    out.write_text("not a folder")
    code = main(_bench_args(dataset, out, "--brain", "scripted"))
    line = _one_error_line(capsys.readouterr().err)
    assert code == 1 and str(out) in line


def test_unexpected_errors_print_where_the_traceback_went(page_png, monkeypatch, tmp_path, capsys):
    import docintent.commands.diagnose as diagnose

    def boom(args):
        raise RuntimeError("a bug")

    monkeypatch.setenv("DOCINTENT_CACHE_DIR", str(tmp_path / "cache"))
    from docintent.settings import get_settings

    get_settings.cache_clear()
    monkeypatch.setattr(diagnose, "run", boom)
    code = main(["diagnose", str(page_png)])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" not in err and "RuntimeError: a bug" in err
    report = Path(err.split("traceback written to ")[1].split()[0])
    assert "Traceback" in report.read_text() and "a bug" in report.read_text()
    code = main(["--debug", "diagnose", str(page_png)])
    err = capsys.readouterr().err
    assert code == 1 and "Traceback" in err and "RuntimeError: a bug" in err
    get_settings.cache_clear()


def test_errors_go_to_stderr_not_stdout(page_png, capsys):
    code = main(
        [
            "ask",
            str(page_png),
            "What is the total?",
            "--strategy",
            "none",
            "--brain",
            "openai",
            "--brain-opt",
            "base_url=http://127.0.0.1:9/v1",
            "--brain-opt",
            "model=m",
            "--brain-opt",
            "max_retries=0",
        ]
    )
    captured = capsys.readouterr()
    assert code == 1
    assert not [line for line in captured.out.splitlines() if line.lower().startswith(("error", "docintent"))]
    line = _one_error_line(captured.err)
    assert line.startswith("docintent ask: error:") and "127.0.0.1:9" in line


def test_agent_search_with_an_unreachable_planner_fails(tmp_path):
    from docintent.retrieval import build_index

    images = _image_folder(tmp_path / "images", 3)

    class Ocr:
        name = "fixed"

        def read(self, page, region=None):
            return type("R", (), {"text": f"invoice {page.hash}"})()

    build_index([images], tmp_path / "idx", text="ocr", ocr=Ocr(), progress=False)
    result = _docintent(
        [
            "search",
            str(tmp_path / "idx"),
            "invoice",
            "--method",
            "agent",
            "--planner",
            "openai",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--model",
            "m",
        ]
    )
    line = _one_error_line(result.stderr)
    assert result.returncode == 1 and "127.0.0.1:9" in line and result.stdout == ""


# --- scoring, datasets and secrets -------------------------------------------------------------------------


def test_score_reads_a_gold_answer_given_as_a_string_as_one_answer(tmp_path):
    from docintent.evaluation.scoring import score_path

    row = {
        "sample": {"id": "a", "task": "doc", "subset": "DocVQA", "answers": "40"},
        "strategy": "none",
        "answer": "40",
        "error": None,
    }
    (tmp_path / "results.jsonl").write_text(json.dumps(row) + "\n")
    (score,) = score_path(tmp_path)
    assert score.summary.to_dict()["tasks"]["doc"]["score"] == pytest.approx(100.0)


def test_dataset_images_outside_the_dataset_folder_are_refused(tmp_path):
    from docintent.errors import DatasetError
    from docintent.evaluation.datasets import load_dataset

    outside = tmp_path / "secret.png"
    outside.write_bytes(png_bytes())
    folder = tmp_path / "set"
    folder.mkdir()
    for image in ("../secret.png", str(outside)):
        row = {"id": "a", "image": image, "question": "q", "answers": ["1"], "task": "doc"}
        (folder / "samples.jsonl").write_text(json.dumps(row) + "\n")
        with pytest.raises(DatasetError, match="outside the dataset folder.*--allow-outside-paths"):
            load_dataset(f"jsonl:{folder / 'samples.jsonl'}")
        (sample,) = load_dataset(f"jsonl:{folder / 'samples.jsonl'}", allow_outside_paths=True)
        assert Path(sample.image).resolve() == outside.resolve()


def test_cli_refuses_outside_paths_unless_allowed(tmp_path, capsys):
    outside = tmp_path / "secret.png"
    outside.write_bytes(png_bytes())
    folder = tmp_path / "set"
    folder.mkdir()
    row = {"id": "a", "image": "../secret.png", "question": "q", "answers": ["42"], "task": "doc"}
    (folder / "samples.jsonl").write_text(json.dumps(row) + "\n")
    argv = _bench_args(folder / "samples.jsonl", tmp_path / "run", "--brain", "scripted")
    assert main(argv) == 1
    assert "--allow-outside-paths" in _one_error_line(capsys.readouterr().err)
    assert main([*argv, "--allow-outside-paths"]) == 0


def test_invalid_base64_in_one_wilddoc_row_is_that_rows_error(tmp_path):
    import base64

    from docintent.evaluation.datasets import load_dataset
    from docintent.evaluation.runner import BrainFactory, read_results, run_benchmark

    good = base64.b64encode(png_bytes()).decode()
    bad = "!!!!" + "A" * 100
    lines = ["index\tquestion\tanswer\timage", f"DocVQA-val-1-1\tq\t42\t{good}", f"DocVQA-val-2-1\tq\t42\t{bad}"]
    (tmp_path / "w.tsv").write_text("\n".join(lines) + "\n")
    samples = load_dataset(f"wilddoc:{tmp_path / 'w.tsv'}", cache_dir=tmp_path / "cache")
    assert len(samples) == 2
    run_benchmark(samples, ["none"], BrainFactory("scripted", {"final": "42"}), tmp_path / "run", progress=False)
    rows = {r["sample"]["id"]: r for r in read_results(tmp_path / "run")}
    assert rows["DocVQA-val-1-1"]["error"] is None
    assert "not valid base64" in rows["DocVQA-val-2-1"]["error"] and "w.tsv:3" in rows["DocVQA-val-2-1"]["error"]


def test_credentials_in_a_base_url_are_never_recorded(tmp_path):
    dataset = make_dataset(tmp_path / "data", 1)
    out = tmp_path / "run"
    code = main(
        _bench_args(
            dataset,
            out,
            "--brain",
            "openai",
            "--brain-opt",
            "base_url=http://alice:s3cret-token@127.0.0.1:9/v1",
            "--brain-opt",
            "model=m",
            "--brain-opt",
            "max_retries=0",
        )
    )
    assert code == 0
    written = "".join(p.read_text() for p in out.iterdir() if p.is_file())
    assert "127.0.0.1:9" in written  # the endpoint is recorded ...
    assert "s3cret-token" not in written and "alice" not in written  # ... without its credentials


def test_url_credentials_are_stripped_from_text():
    from docintent.redaction import redact

    text = "cannot reach http://bob:pw@host:8000/v1 (model m); also HTTPS://tok@api.example.com/x and http://ok/v1"
    assert redact(text) == (
        "cannot reach http://***@host:8000/v1 (model m); also HTTPS://***@api.example.com/x and http://ok/v1"
    )


# --- loading limits and long strips --------------------------------------------------------------------------


def test_our_pixel_limit_decides_not_pillows(tmp_path, monkeypatch):
    """A 10000x10000 header (100 M pixels, over Pillow's own 89 M) under DOCINTENT_MAX_PIXELS=150M is not
    refused as a bomb: it is decoded, and since the data is cut short, reported as truncated."""
    import struct
    import zlib

    from docintent.errors import CorruptImageError, DecompressionBombError
    from docintent.io import load_page
    from docintent.settings import get_settings

    ihdr = struct.pack(">IIBBBBB", 10000, 10000, 8, 0, 0, 0, 0)
    chunk = b"IHDR" + ihdr
    data = b"\x89PNG\r\n\x1a\n" + struct.pack(">I", 13) + chunk + struct.pack(">I", zlib.crc32(chunk))
    data += struct.pack(">I", 0) + b"IEND" + struct.pack(">I", zlib.crc32(b"IEND"))
    path = tmp_path / "big.png"
    path.write_bytes(data)
    monkeypatch.setenv("DOCINTENT_MAX_PIXELS", "150000000")
    get_settings.cache_clear()
    try:
        with pytest.raises(CorruptImageError):
            load_page(path)
        monkeypatch.setenv("DOCINTENT_MAX_PIXELS", "1000000")
        get_settings.cache_clear()
        with pytest.raises(DecompressionBombError, match="DOCINTENT_MAX_PIXELS"):
            load_page(path)
    finally:
        monkeypatch.delenv("DOCINTENT_MAX_PIXELS")
        get_settings.cache_clear()


def test_a_long_thin_strip_is_read_by_tiles(tmp_path):
    from PIL import ImageDraw, ImageFont

    from conftest import font_path
    from docintent.ocr import get_engine
    from docintent.page import Page

    strip = Image.new("RGB", (9000, 48), "white")
    draw = ImageDraw.Draw(strip)
    font = ImageFont.truetype(font_path(), 26)
    words = {300: "Receipt 7731", 4400: "Subtotal 18.40", 8400: "Total 21.95"}
    for x, text in words.items():
        draw.text((x, 8), text, fill="black", font=font)
    page = Page.from_array(np.asarray(strip), source="strip")
    text = get_engine("rapidocr", cache=False).read(page).text
    for expected in ("7731", "18.40", "21.95"):
        assert expected in text, text


# --- the index: bad inputs, changed inputs, damaged files -------------------------------------------------


class _FixedOcr:
    name = "fixed"

    def read(self, page, region=None):
        return type("R", (), {"text": f"invoice page {int(page.pixels.mean())}"})()


def test_a_bad_image_is_skipped_with_its_reason_and_the_index_resumes_when_inputs_change(tmp_path):
    from docintent.retrieval import PageIndex, build_index

    images = _image_folder(tmp_path / "images", 4)
    (images / "broken.png").write_bytes(png_bytes()[:40])
    report = build_index([images], tmp_path / "idx", text="ocr", ocr=_FixedOcr(), progress=False)
    assert report.complete and report.pages_total == 4
    assert any("broken.png" in s for s in report.skipped_files)
    # remove the bad file, add a new one: the same command resumes, reading only the new page
    (images / "broken.png").unlink()
    (images / "p99.png").write_bytes(png_bytes(40, 30, 200))
    report = build_index([images], tmp_path / "idx", text="ocr", ocr=_FixedOcr(), progress=False)
    assert report.complete and report.pages_total == 5 and report.pages_processed == 1
    assert report.skipped_files == []
    clean = build_index([images], tmp_path / "clean", text="ocr", ocr=_FixedOcr(), progress=False)
    assert clean.pages_total == 5
    a, b = PageIndex.open(tmp_path / "idx"), PageIndex.open(tmp_path / "clean")
    assert [(r.handle, r.doc_path, r.text) for r in a.records()] == [
        (r.handle, r.doc_path, r.text) for r in b.records()
    ]
    a.close()
    b.close()


def test_an_unreadable_image_is_skipped_but_a_full_disk_stops_the_build(tmp_path, monkeypatch):
    from docintent.retrieval import build_index
    from docintent.retrieval import index as index_module

    images = _image_folder(tmp_path / "images", 3)
    unreadable = images / "p01.png"
    real_load = index_module.load_page

    def load(path, *args, **kwargs):
        if Path(path) == unreadable:
            raise PermissionError(13, "Permission denied", str(path))
        return real_load(path, *args, **kwargs)

    monkeypatch.setattr(index_module, "load_page", load)
    report = build_index([images], tmp_path / "idx", text="ocr", ocr=_FixedOcr(), progress=False)
    assert report.complete and report.pages_total == 2
    assert any("p01.png" in s and "Permission denied" in s for s in report.skipped_files)

    def full_disk(rgb, path):
        raise OSError(28, "No space left on device", str(path))

    monkeypatch.setattr(index_module, "_save_jpeg", full_disk)
    with pytest.raises(OSError, match="No space left"):
        build_index([images], tmp_path / "jpeg", text="ocr", ocr=_FixedOcr(), images="jpeg", progress=False)


def test_a_damaged_index_is_named_not_a_traceback(tmp_path):
    from docintent.retrieval import build_index

    images = _image_folder(tmp_path / "images", 3)
    build_index([images], tmp_path / "idx", text="ocr", ocr=_FixedOcr(), progress=False)
    bm25 = tmp_path / "idx" / "bm25.npz"
    bm25.write_bytes(bm25.read_bytes()[:50])  # what a crash in the middle of a plain write leaves
    result = _docintent(["search", str(tmp_path / "idx"), "invoice"])
    line = _one_error_line(result.stderr)
    assert result.returncode == 1 and "bm25.npz" in line and "docintent index" in line
    (tmp_path / "garbage").mkdir()
    (tmp_path / "garbage" / "index.sqlite").write_bytes(b"this is not a database" * 100)
    for argv in (
        ["search", str(tmp_path / "garbage"), "q"],
        ["index", str(images), "--out", str(tmp_path / "garbage")],
    ):
        result = _docintent(argv)
        line = _one_error_line(result.stderr)
        assert result.returncode == 1 and "index.sqlite" in line


def test_rerunning_the_build_repairs_damaged_bm25_files(tmp_path):
    from docintent.retrieval import PageIndex, build_index

    images = _image_folder(tmp_path / "images", 3)
    build_index([images], tmp_path / "idx", text="ocr", ocr=_FixedOcr(), progress=False)
    (tmp_path / "idx" / "bm25_vocab.json").unlink()
    report = build_index([images], tmp_path / "idx", text="ocr", ocr=_FixedOcr(), progress=False)
    assert report.complete and report.pages_processed == 0
    index = PageIndex.open(tmp_path / "idx")
    assert index.bm25 is not None
    index.close()


def test_bm25_files_are_replaced_atomically(tmp_path, monkeypatch):
    """A failure while the BM25 files are written leaves the previous ones whole, no temporary files, and an
    index that says it must be finished (rather than one that half-loads)."""
    from docintent.errors import DatasetError
    from docintent.retrieval import PageIndex, build_index
    from docintent.retrieval.bm25 import BM25

    images = _image_folder(tmp_path / "images", 3)
    build_index([images], tmp_path / "idx", text="ocr", ocr=_FixedOcr(), progress=False)
    before = {p.name: p.read_bytes() for p in (tmp_path / "idx").glob("bm25*")}
    real_save = BM25.save

    def save_then_fail(self, directory):
        real_save(self, directory)
        (Path(directory) / "bm25.npz").write_bytes(b"PK half a file")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(BM25, "save", save_then_fail)
    with pytest.raises(OSError):
        build_index([images], tmp_path / "idx", text="ocr", ocr=_FixedOcr(), progress=False)
    assert {p.name: p.read_bytes() for p in (tmp_path / "idx").glob("bm25*")} == before
    leftovers = [p.name for p in (tmp_path / "idx").iterdir() if p.name.startswith(".") and "lock" not in p.name]
    assert leftovers == []
    with pytest.raises(DatasetError, match="docintent index"):
        PageIndex.open(tmp_path / "idx")
    monkeypatch.setattr(BM25, "save", real_save)
    assert build_index([images], tmp_path / "idx", text="ocr", ocr=_FixedOcr(), progress=False).complete
    PageIndex.open(tmp_path / "idx").close()


def test_a_failed_bm25_save_leaves_the_previous_files_whole(tmp_path, monkeypatch):
    """Derived BM25 files (the index's and the field files a search writes lazily) are replaced whole or not at
    all: a failure half-way leaves the previous pair loadable and no temporary file behind."""
    import json as json_module

    from docintent.retrieval import bm25 as bm25_module
    from docintent.retrieval.bm25 import BM25

    old = BM25.fit([["invoice", "total"], ["engine", "valve"]])
    old.save(tmp_path, "bm25_head")
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}

    def fail(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(bm25_module.json, "dumps", fail)
    with pytest.raises(OSError):
        BM25.fit([["pump"], ["motor"], ["cable"]]).save(tmp_path, "bm25_head")
    monkeypatch.setattr(bm25_module.json, "dumps", json_module.dumps)
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before
    assert BM25.load(tmp_path, "bm25_head").vocab == old.vocab


# --- confinement, stale runs, bad rows ------------------------------------------------------------------------


def _jsonl(folder: Path, rows: list[dict], *, prefix: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "samples.jsonl"
    path.write_text(
        prefix + "".join(json.dumps({"question": "q", "answers": ["42"], "task": "doc", **r}) + "\n" for r in rows),
        encoding="utf-8",
    )
    return path


def test_a_link_in_the_dataset_folder_that_leads_out_is_refused(tmp_path):
    from docintent.errors import DatasetError
    from docintent.evaluation.datasets import load_dataset

    outside = tmp_path / "outside.png"
    outside.write_bytes(png_bytes())
    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "inside.png").write_bytes(png_bytes())
    (folder / "out.png").symlink_to(outside)
    (folder / "alias.png").symlink_to(folder / "inside.png")
    data = _jsonl(folder, [{"id": "a", "image": "out.png"}])
    with pytest.raises(DatasetError, match=r"'out.png' is outside the dataset folder.*--allow-outside-paths"):
        load_dataset(f"jsonl:{data}")
    data = _jsonl(folder, [{"id": "a", "image": "alias.png"}])
    (sample,) = load_dataset(f"jsonl:{data}")
    assert sample.image == str((folder / "inside.png").resolve())  # what is read is what was checked


def test_a_run_folder_is_bound_to_its_dataset_and_edited_samples_run_again(tmp_path):
    from docintent.errors import ConfigError
    from docintent.evaluation.datasets import load_dataset
    from docintent.evaluation.runner import BrainFactory, read_results, run_benchmark

    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "p.png").write_bytes(png_bytes())
    first = _jsonl(tmp_path / "a", [{"id": "s0", "image": "p.png"}, {"id": "s1", "image": "p.png"}])
    other = _jsonl(tmp_path / "b", [{"id": "b0", "image": str(tmp_path / "a" / "p.png")}])
    brain, out = BrainFactory("scripted", {"final": "42"}), tmp_path / "run"

    def run(path: Path, **kw):
        spec = f"jsonl:{path}"
        return run_benchmark(
            load_dataset(spec, allow_outside_paths=True),
            ["none"],
            brain,
            out,
            progress=False,
            config={"dataset": spec},
            **kw,
        )

    assert run(first).new_rows == 2
    with pytest.raises(ConfigError, match=r"holds a run of the dataset .*a/samples.jsonl.*--dataset.*another --out"):
        run(other)
    _jsonl(
        tmp_path / "a", [{"id": "s0", "image": "p.png", "answers": ["nine hundred"]}, {"id": "s1", "image": "p.png"}]
    )
    again = run(first)
    rows = {r["sample"]["id"]: r for r in read_results(out)}
    assert (again.new_rows, again.changed, again.skipped) == (1, 1, 1)
    assert rows["s0"]["sample"]["answers"] == ["nine hundred"] and rows["s0"]["score"] == 0.0
    assert rows["s1"]["score"] == 1.0 and "b0" not in rows


def test_a_row_that_is_not_valid_unicode_is_an_error_row_and_resume_does_not_crash(tmp_path):
    import base64

    from docintent.evaluation.datasets import load_dataset
    from docintent.evaluation.runner import BrainFactory, read_results, run_benchmark

    folder = tmp_path / "set"
    folder.mkdir()
    (folder / "p.png").write_bytes(png_bytes())
    lines = [
        '{"id": "ok", "image": "p.png", "question": "q", "answers": ["42"], "task": "doc"}',
        '{"id": "bad\\ud800", "image": "p.png", "question": "q\\udfff", "answers": ["42"], "task": "doc"}',
    ]
    (folder / "s.jsonl").write_text("\ufeff" + "\n".join(lines) + "\n")  # a byte-order mark is fine
    image = base64.b64encode(png_bytes()).decode()
    (folder / "w.tsv").write_bytes(
        f"\ufeffindex\tquestion\tanswer\timage\nDocVQA-val-1-1\tq\t42\t{image}\n".encode()
        + b"DocVQA-val-2-1\tcaf\xe9?\t42\t"
        + image.encode()
        + b"\n"
    )
    for spec in (f"jsonl:{folder / 's.jsonl'}", f"wilddoc:{folder / 'w.tsv'}"):
        out = tmp_path / spec.split(":")[0]
        for _ in range(2):  # the second run resumes over the error row without crashing
            samples = load_dataset(spec, cache_dir=tmp_path / "cache")
            run_benchmark(samples, ["none"], BrainFactory("scripted", {"final": "42"}), out, progress=False)
        errors = [r["error"] for r in read_results(out)]
        assert errors[0] is None and "not valid Unicode" in errors[1], errors
        assert (out / "results.jsonl").read_bytes().decode("utf-8")  # written as valid UTF-8


# --- outputs never replace links or devices -------------------------------------------------------------------


def test_outputs_write_through_links_and_devices_and_refuse_what_they_cannot(tmp_path, page_png, capsys):
    import stat as stat_module

    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "trace.json"
    link.symlink_to(target)
    argv = ["ask", str(page_png), "What is the total?", "--strategy", "none", "--brain", "scripted"]
    assert main([*argv, "--trace", str(link)]) == 0
    assert link.is_symlink() and json.loads(target.read_text())["strategy"] == "none"
    # A private copy of /dev/null when the test may make one: a build that replaced devices would destroy only it.
    device = Path("/dev/null")
    if os.geteuid() == 0:
        device = tmp_path / "null-device"
        os.mknod(device, 0o666 | stat_module.S_IFCHR, os.makedev(1, 3))
    assert main([*argv, "--trace", str(device)]) == 0
    assert stat_module.S_ISCHR(os.lstat(device).st_mode)
    image_link = tmp_path / "out.png"
    image_link.symlink_to(tmp_path / "restored.png")
    assert main(["restore", str(page_png), "-t", "rotate_90", "-o", str(image_link)]) == 0
    assert image_link.is_symlink() and (tmp_path / "restored.png").read_bytes().startswith(b"\x89PNG")
    capsys.readouterr()
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert main([*argv, "--trace", str(fifo)]) == 1  # nobody reads it: refused, not a wait without end
    assert "no process is reading" in _one_error_line(capsys.readouterr().err)
    assert stat_module.S_ISFIFO(os.lstat(fifo).st_mode)


def test_a_planted_lock_link_is_refused_and_its_target_untouched(tmp_path, capsys):
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    dataset = make_dataset(tmp_path / "data", 1)
    out = tmp_path / "run"
    out.mkdir()
    (out / ".docintent.lock").symlink_to(victim)
    assert main(_bench_args(dataset, out, "--brain", "scripted")) == 1
    assert "not a regular file" in _one_error_line(capsys.readouterr().err)
    assert victim.read_text() == "precious"


# --- bounded work and honest words --------------------------------------------------------------------------


def _pdf(pages: int, claim: int | None = None) -> bytes:
    import io

    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument.new()
    for _ in range(pages):
        pdf.new_page(200, 200)
    buffer = io.BytesIO()
    pdf.save(buffer)
    data = buffer.getvalue()
    return data if claim is None else data.replace(f"/Count {pages}/".encode(), f"/Count {claim}/".encode())


def test_a_page_count_is_checked_against_the_pages_that_load(tmp_path):
    from docintent.errors import PdfPageOutOfRangeError
    from docintent.io import load_page, pdf_page_count
    from docintent.retrieval import build_index

    liar = tmp_path / "in" / "liar.pdf"
    liar.parent.mkdir()
    liar.write_bytes(_pdf(3, claim=1_000_000))
    assert pdf_page_count(liar) == 3
    with pytest.raises(PdfPageOutOfRangeError, match=r"has 3 page\(s\).*claims 1,000,000"):
        load_page(liar, page=5)
    report = build_index([liar.parent], tmp_path / "idx", text="pdf", progress=False)
    assert report.pages_total == 3


def test_pdf_messages_name_the_real_problem(tmp_path):
    import pypdf

    from docintent.errors import CorruptImageError, EncryptedPdfError
    from docintent.io import load_page

    writer = pypdf.PdfWriter()
    writer.add_blank_page(100, 100)
    writer.encrypt("pw")
    with open(tmp_path / "locked.pdf", "wb") as fh:
        writer.write(fh)
    with open(tmp_path / "empty.pdf", "wb") as fh:
        pypdf.PdfWriter().write(fh)
    with pytest.raises(EncryptedPdfError, match="encrypted"):
        load_page(tmp_path / "locked.pdf")
    with pytest.raises(CorruptImageError) as empty:  # PDFium's last error is still "password" here
        load_page(tmp_path / "empty.pdf")
    assert "encrypt" not in str(empty.value) and "PDFium: Success" not in str(empty.value)
    assert "no readable page tree" in str(empty.value)


def test_a_png_whose_text_chunk_holds_the_pdf_marker_is_an_image(tmp_path):
    import zlib

    from docintent.io import load_page

    data = png_bytes(30, 20)
    body = b"tEXtComment\x00see %PDF-1.7"
    chunk = (len(body) - 4).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")
    (tmp_path / "note.png").write_bytes(data[:33] + chunk + data[33:])
    assert load_page(tmp_path / "note.png").size == (30, 20)


@pytest.mark.parametrize("turn", [0, 180])
def test_the_orientation_of_a_long_strip_reads_only_its_windows(turn, monkeypatch):
    """A strip too long to resize whole (9000x48 px would be 48,000x256) has only its windows resized: the same
    verdict as the whole resize, without the memory (a 100000x1 page would have needed 20 GB)."""
    from PIL import ImageDraw, ImageFont

    from conftest import font_path
    from docintent.ocr import orientation
    from docintent.page import Page

    strip = Image.new("RGB", (9000, 48), "white")
    ImageDraw.Draw(strip).text(
        (10, 8),
        "Receipt 7731  Subtotal 18.40  Total 21.95  " * 40,
        fill="black",
        font=ImageFont.truetype(font_path(), 26),
    )
    page = Page.from_array(np.asarray(strip.rotate(turn)))
    windowed = orientation.detect_orientation(page)
    monkeypatch.setattr(orientation, "_WHOLE_RESIZE_PIXELS", 1 << 40)
    whole = orientation.detect_orientation(page)
    assert windowed.angle == whole.angle == turn
    assert max(abs(windowed.probabilities[k] - whole.probabilities[k]) for k in whole.probabilities) < 0.08


@pytest.mark.parametrize(
    "value, message",
    [
        ([0, 0, 0.5, 1000], "mixes fractions"),
        ([0, 0, 1100, 900], "outside the page"),
        ([0.5, 0, 0.5, 1], "no area"),
        ([0, 0, 1, float("nan")], "finite"),
        (["a", 0, 1, 1], "numbers"),
        ("0,0,1,1", "list of 4"),
    ],
)
def test_one_region_rule_for_box_parse_and_the_command_line(value, message, page_png, capsys):
    from docintent.errors import InvalidBoxError
    from docintent.page import Box

    with pytest.raises(InvalidBoxError, match=message):
        Box.parse(value)
    if isinstance(value, list) and all(isinstance(v, (int, float)) for v in value):
        assert main(["diagnose", str(page_png), "--region", ",".join(str(v) for v in value)]) == 1
        assert message in _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize(
    "variable, value, message",
    [
        ("DOCINTENT_MAX_PIXELS", "abc", "must be a whole number"),
        ("DOCINTENT_PDF_DPI", "0", "must be at least 1"),
        ("DOCINTENT_CACHE", "perhaps", "true or false"),
    ],
)
def test_bad_settings_are_one_line_naming_the_variable(variable, value, message, page_png, monkeypatch, capsys):
    from docintent.settings import get_settings

    monkeypatch.setenv(variable, value)
    get_settings.cache_clear()
    try:
        assert main(["diagnose", str(page_png)]) == 1
        line = _one_error_line(capsys.readouterr().err)
    finally:
        monkeypatch.delenv(variable)
        get_settings.cache_clear()
    assert variable in line and message in line


@pytest.mark.parametrize(
    "argv",
    [
        ["index", "{img}", "--out", "{tmp}/i", "--workers", "0"],
        ["index", "{img}", "--out", "{tmp}/i", "--workers", "-2"],
        ["bench", "--dataset", "jsonl:x", "--out", "{tmp}/r", "--max-rpm", "nan"],
        ["bench", "--dataset", "jsonl:x", "--out", "{tmp}/r", "--concurrency", "0"],
        ["serve", "--port", "70000"],
        ["serve", "--max-upload-mb", "inf"],
        ["serve", "--timeout", "nan"],
        ["doctor", "--timeout", "nan"],
    ],
)
def test_options_that_mean_nothing_are_refused(argv, page_png, tmp_path, capsys):
    code = main([a.format(img=page_png, tmp=tmp_path) for a in argv])
    assert code == 1 and argv[-2] in _one_error_line(capsys.readouterr().err)


def test_score_refuses_a_row_without_gold_answers(tmp_path, capsys):
    rows = [
        {"sample": {"id": "a", "task": "doc", "answers": ["42"]}, "strategy": "none", "answer": "42"},
        {"sample": {"id": "b", "task": "doc", "answers": []}, "strategy": "none", "answer": "7"},
    ]
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    assert main(["score", str(tmp_path)]) == 1
    assert "'b' has no gold answer" in _one_error_line(capsys.readouterr().err)


def test_report_refuses_text_where_numbers_belong(tmp_path, capsys):
    row = {
        "sample": {"id": "a", "task": "doc", "answers": ["42"]},
        "strategy": "none",
        "answer": "42",
        "score": "abc",
        "error": None,
    }
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "results.jsonl").write_text(json.dumps(row) + "\n")
    assert main(["report", str(tmp_path / "run"), "--out", str(tmp_path / "rep")]) == 1
    assert "'score' must be a number, got 'abc'" in _one_error_line(capsys.readouterr().err)


@pytest.mark.parametrize(
    "change", [{"vocab": ["a"]}, {"vocab": {"invoice": "x"}}, {"vocab": {"invoice": 10**6}}, {"k1": "high"}]
)
def test_a_junk_bm25_vocabulary_is_a_damaged_index(change, tmp_path):
    from docintent.errors import DatasetError
    from docintent.retrieval import PageIndex, build_index

    images = _image_folder(tmp_path / "images", 2)
    build_index([images], tmp_path / "idx", text="ocr", ocr=_FixedOcr(), progress=False)
    vocab = tmp_path / "idx" / "bm25_vocab.json"
    vocab.write_text(json.dumps({**json.loads(vocab.read_text()), **change}))
    index = PageIndex.open(tmp_path / "idx")
    try:
        with pytest.raises(DatasetError, match="BM25 files .* are damaged"):
            index.bm25  # noqa: B018 - loading is what is tested
    finally:
        index.close()


@pytest.mark.parametrize(
    "image, question, message",
    [
        ("page", 42, "question must be text"),
        (42, "q", "image must be a Page"),
        (np.zeros((0, 0)), "q", "shape"),
        (np.array([["a"]]), "q", "dtype"),
    ],
)
def test_the_python_api_checks_its_arguments(image, question, message):
    import docintent
    from docintent.errors import DocIntentError
    from docintent.page import Page

    page = Page.from_array(np.full((20, 20, 3), 255, np.uint8)) if isinstance(image, str) else image
    with pytest.raises(DocIntentError, match=message):
        docintent.ask(page, question, brain="scripted")


def test_a_nul_character_in_a_path_given_to_the_python_api_is_a_named_refusal():
    import docintent
    from docintent.errors import FileMissingError

    with pytest.raises(FileMissingError, match="NUL character"):
        docintent.ask("scan\x00.png", "What is the total?", brain="scripted")
