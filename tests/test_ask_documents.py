"""``docintent ask`` on whole documents and folders, as a user runs it: the page that answered (counted from 1),
where the answer stands, the steps in plain words, and batches of questions that survive a kill."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from conftest import render_text_page
from docintent.cli import main
from process_helpers import png_bytes
from retrieval_helpers import make_pdf

TESTS = Path(__file__).resolve().parent
INVOICE = [
    "ACME Supplies Ltd",
    "12 Harbour Road, Leeds",
    "Invoice number: INV-2041",
    "Date: 12 March 2024",
    "Garden chairs x 4: $1,000.00",
    "Delivery: $250.00",
    "Total amount due: $1,250.00",
    "Payment within 30 days",
    "Thank you for your order",
]
QUESTION = "What is the total amount due?"


@pytest.fixture
def two_pages(tmp_path) -> Path:
    """A letter on page 1, the invoice with its total on page 2 (a PDF with a text layer)."""
    return make_pdf(
        tmp_path / "letter.pdf",
        [
            "Dear customer\nThank you for your order of garden chairs.\nOur shop opens at nine.",
            "Invoice INV-2041\nDate: 12 March 2024\nTotal amount due: $1,250.00",
        ],
    )


def test_a_two_page_pdf_is_answered_from_page_2_in_text_and_json(two_pages, tmp_path, capsys):
    steps = tmp_path / "steps"
    assert main(["ask", str(two_pages), QUESTION, "--save-steps", str(steps)]) == 0
    out = capsys.readouterr().out
    assert "answer: $1,250.00" in out
    assert "page: 2   box: " in out
    assert "evidence: 'Total amount due: $1,250.00' (OCR confidence 1.00)" in out
    assert "read on: the page as given" in out
    assert " 1. looked through 2 pages: reading page 2, its text matches the question best" in out
    assert main(["ask", str(two_pages), QUESTION, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["answer"] == "$1,250.00" and data["page"] == 2 and data["provenance"]["page"] == 2
    x0, y0, x1, y1 = data["box"]
    assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 < 0.5  # the total's line is near the top of page 2
    # --save-steps: the page the answer came from, with its box drawn in red
    marked = np.asarray(Image.open(steps / "answer_page2.png").convert("RGB")).astype(int)
    red = (marked[..., 0] > 180) & (marked[..., 1] < 80) & (marked[..., 2] < 110)
    ys, xs = np.nonzero(red)
    assert red.sum() > 100
    h, w = red.shape
    assert abs(xs.min() / w - x0) < 0.02 and abs(ys.max() / h - y1) < 0.02


def test_pages_limit_the_pages_read_and_count_from_1(two_pages, capsys):
    assert main(["ask", str(two_pages), QUESTION, "--pages", "1", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["answer"] != "$1,250.00" and data["page"] == 1
    assert not any(s["phase"] == "locate" for s in data["trace"])  # one page: nothing to rank
    for argv, words in (
        (
            ["--page", "1"],
            "--page counted pages from 0 and is gone; pages now count from 1: use "
            "--pages N (--pages 1 is the first page)",
        ),
        (["--pages", "0"], "pages count from 1 (1 is the first page)"),
        (["--pages", "3"], "--pages '3': page 3 is outside this 2-page document (pages 1-2; pages count from 1)"),
    ):
        assert main(["ask", str(two_pages), QUESTION, *argv]) == 1
        err = capsys.readouterr().err.strip()
        assert words in err and len(err.splitlines()) == 1, err


def test_the_steps_are_in_plain_words_and_v_adds_the_figures(tmp_path, capsys):
    upside_down = tmp_path / "upside-down.png"
    Image.fromarray(np.ascontiguousarray(np.rot90(render_text_page(INVOICE), 2))).save(upside_down)
    assert main(["ask", str(upside_down), QUESTION]) == 0
    out = capsys.readouterr().out
    assert "answer: $1,250.00" in out and "read on: the page after rotate_180" in out
    assert " 1. the page is not upright: ran rotate_180; kept - the page is upright now" in out
    assert " 2. can answer now: '$1,250.00'" in out
    assert "raw" not in out and " A " not in out  # no insiders' figures and phase letters by default
    # the box is on the page as given (upside down): the total, near the bottom upright, is near the top here
    box_line = next(line for line in out.splitlines() if line.startswith("page: 1   box: "))
    x0, y0, x1, y1 = (float(v) for v in box_line.split("box: ")[1].split(" (")[0].split(", "))
    assert y1 < 0.6
    assert main(["-v", "ask", str(upside_down), QUESTION]) == 0
    verbose = capsys.readouterr().out
    assert "orientation before: needs rotate_180; after: upright" in verbose
    assert "raw confidence" in verbose and re.search(r"\(confidence [01]\.\d\d\)", verbose)
    assert verbose.splitlines()[-1].startswith("timings: page 1 ") and "total" in verbose.splitlines()[-1]


def _folder(root: Path, broken: int = 3) -> Path:
    """Six small pages in a folder and a subfolder; the one numbered ``broken`` is a truncated PNG."""
    for i in range(6):
        data = png_bytes(value=(10 + 7 * i) % 250)
        path = root / ("sub" if i % 2 else "") / f"page{i}.png"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data[:30] if i == broken else data)
    return root


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def test_a_folder_of_six_files_with_one_broken_resumes_after_a_kill_with_nothing_lost_or_repeated(tmp_path):
    folder = _folder(tmp_path / "scans")
    questions = tmp_path / "questions.txt"
    questions.write_text("# one question for every page\nWhat is the total?\n")
    out = tmp_path / "answers.jsonl"
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "src"), str(TESTS), os.environ.get("PYTHONPATH", "")]),
        "DOCINTENT_THREADS": "1",
    }
    argv = ["ask", str(folder), "--questions", str(questions), "--out", str(out), "--no-progress"]
    proc = subprocess.Popen(
        [
            sys.executable,
            str(TESTS / "process_helpers.py"),
            "cli",
            *argv,
            "--brain",
            "slow",
            "--brain-opt",
            "delay=0.6",
        ],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        deadline = time.monotonic() + 120
        while len(_rows(out)) < 2:
            assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
            assert time.monotonic() < deadline, "the batch wrote no rows within 120 s"
            time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)  # a real kill: no handler runs, a line may be cut short
        proc.wait()
    before = _rows(out)
    assert 2 <= len(before) < 6, "the kill came after the batch had finished, so it proved nothing"

    assert main([*argv, "--brain", "scripted", "--brain-opt", "final=second"]) == 0
    after = _rows(out)
    files = sorted(str(p) for p in folder.rglob("*.png"))
    assert sorted(r["file"] for r in after) == files  # one row per file: nothing lost, nothing repeated
    assert after[: len(before)] == before  # the rows written before the kill are kept as they were
    errors = [r for r in after if r["error"]]
    assert [r["file"] for r in errors] == [str(folder / "sub" / "page3.png")]
    assert "CorruptImageError" in errors[0]["error"] and "page3.png" in errors[0]["error"]
    answered = [r for r in after if not r["error"]]
    assert len(answered) == 5 and all(r["page"] == 1 and r["question"] == "What is the total?" for r in answered)
    assert {r["answer"] for r in answered} <= {"42", "second"} and any(r["answer"] == "second" for r in answered)
    assert {r["answer"] for r in before if not r["error"]} == {"42"}
    # run again: nothing left to do, nothing written
    assert main([*argv, "--brain", "scripted"]) == 0
    assert _rows(out) == after


def test_batch_options_are_checked_before_any_work(tmp_path, capsys):
    folder = _folder(tmp_path / "scans")
    cases = [
        (
            ["ask", str(folder), "--questions", str(tmp_path / "q.csv"), "--out", str(tmp_path / "a.jsonl")],
            "a questions file must be .txt (one question per line) or .jsonl",
        ),
        (["ask", str(folder), "What is the total?"], "needs --out FILE"),
        (["ask", str(folder), "--out", str(tmp_path / "a.jsonl")], "give the questions"),
        (["ask", str(folder), "q?", "--out", str(tmp_path / "a.jsonl"), "--json"], "--json is for one question"),
        (["ask", str(folder / "page0.png"), "q?", "--workers", "2"], "--workers is for a batch"),
        (["ask", str(tmp_path / "*.nothing"), "q?", "--out", str(tmp_path / "a.jsonl")], "the pattern matches no file"),
    ]
    for argv, words in cases:
        assert main(argv) == 1, argv
        err = capsys.readouterr().err.strip()
        assert words in err and len(err.splitlines()) == 1, (argv, err)


def test_questions_from_jsonl_with_tasks_over_a_glob(tmp_path):
    _folder(tmp_path / "scans", broken=-1)
    questions = tmp_path / "questions.jsonl"
    questions.write_text(
        '{"question": "What is the total?", "id": "q1"}\n{"question": "Which year?", "task": "chart"}\n'
    )
    out = tmp_path / "answers.jsonl"
    assert (
        main(
            [
                "ask",
                str(tmp_path / "scans" / "*.png"),
                "--questions",
                str(questions),
                "--out",
                str(out),
                "--brain",
                "scripted",
                "--brain-opt",
                "final=7",
                "--no-progress",
            ]
        )
        == 0
    )
    rows = _rows(out)
    assert len(rows) == 3 * 2  # three pages at the top level x two questions
    assert {(r["id"], r["task"]) for r in rows} == {("q1", "doc"), (None, "chart")}
    assert all(r["answer"] == "7" and r["error"] is None for r in rows)


def test_restore_auto_on_a_folder_writes_a_page_each_and_resumes(tmp_path, capsys):
    folder = _folder(tmp_path / "scans", broken=1)
    make_pdf(folder / "manual.pdf", ["First page of the manual", "Second page of the manual"])
    out = tmp_path / "restored"
    assert main(["restore", "--auto", str(folder), "-o", str(out), "--no-progress"]) == 0
    capsys.readouterr()
    rows = _rows(out / "restore.jsonl")
    assert len(rows) == 6 + 2 - 0  # six images (one broken) and two PDF pages
    broken = [r for r in rows if r["error"]]
    assert [Path(r["file"]).name for r in broken] == ["page1.png"]
    written = sorted(p.relative_to(out).as_posix() for p in out.rglob("*.png"))
    assert written == [
        "manual-p1.png",
        "manual-p2.png",
        "page0.png",
        "page2.png",
        "page4.png",
        "sub/page3.png",
        "sub/page5.png",
    ]
    assert main(["restore", "--auto", str(folder), "-o", str(out), "--no-progress"]) == 0
    assert "0 new, 8 already done" in capsys.readouterr().out
    assert _rows(out / "restore.jsonl") == rows


def _without_timing(rows: list[dict]) -> list[tuple]:
    return sorted((r["file"], r["question"], r["answer"], r["page"], r["error"]) for r in rows)


def test_a_batch_on_two_worker_processes_gives_the_rows_of_one(tmp_path):
    folder = _folder(tmp_path / "scans")
    common = ["ask", str(folder), "Which total?", "--brain", "scripted", "--brain-opt", "final=9", "--no-progress"]
    assert main([*common, "--out", str(tmp_path / "one.jsonl")]) == 0
    assert main([*common, "--out", str(tmp_path / "two.jsonl"), "--workers", "2"]) == 0
    one, two = _rows(tmp_path / "one.jsonl"), _rows(tmp_path / "two.jsonl")
    assert len(one) == 6 and _without_timing(one) == _without_timing(two)


@pytest.mark.ray
def test_a_batch_on_ray_gives_the_rows_of_a_local_run(tmp_path):
    folder = _folder(tmp_path / "scans")
    common = ["ask", str(folder), "Which total?", "--brain", "scripted", "--brain-opt", "final=9", "--no-progress"]
    assert main([*common, "--out", str(tmp_path / "local.jsonl")]) == 0
    assert main([*common, "--out", str(tmp_path / "ray.jsonl"), "--executor", "ray", "--workers", "2"]) == 0
    assert _without_timing(_rows(tmp_path / "local.jsonl")) == _without_timing(_rows(tmp_path / "ray.jsonl"))


def _stderr_on_a_terminal(argv: list[str]) -> tuple[int, str]:
    """Run ``docintent ARGV`` with its stderr on a pseudo-terminal (as in a shell) and return what it showed."""
    import fcntl
    import pty
    import select
    import struct
    import termios

    master, slave = pty.openpty()
    # a terminal 120 columns wide: a new pseudo-terminal has no size, and a line 0 columns wide shows nothing
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(TESTS.parent / "src"), os.environ.get("PYTHONPATH", "")])}
    proc = subprocess.Popen(
        [sys.executable, "-m", "docintent", *argv], stdout=subprocess.DEVNULL, stderr=slave, env=env
    )
    os.close(slave)
    chunks = []
    while True:
        ready, _, _ = select.select([master], [], [], 0.2)
        if ready:
            try:
                data = os.read(master, 4096)
            except OSError:  # the other end closed
                break
            if not data:
                break
            chunks.append(data)
        elif proc.poll() is not None:
            break
    os.close(master)
    return proc.wait(timeout=120), b"".join(chunks).decode(errors="replace")


def test_a_long_ask_shows_progress_on_a_terminal_and_not_with_no_progress(two_pages, tmp_path):
    code, shown = _stderr_on_a_terminal(["ask", str(two_pages), QUESTION])
    assert code == 0 and "letter.pdf: " in shown and ("reading page 2" in shown or "looking for the pages" in shown)
    code, quiet = _stderr_on_a_terminal(["ask", str(two_pages), QUESTION, "--no-progress"])
    assert code == 0 and quiet.strip() == ""
    folder = _folder(tmp_path / "scans", broken=-1)
    code, batch = _stderr_on_a_terminal(
        ["ask", str(folder), "q?", "--out", str(tmp_path / "a.jsonl"), "--brain", "scripted"]
    )
    assert code == 0 and "a.jsonl: 6/6 rows" in batch and "row/s" in batch and "ETA" in batch


@pytest.mark.dense
def test_loading_the_sentence_model_shows_no_bar_of_its_own(capfd):
    from docintent.retrieval.passages import encode, load_sentence_model

    model = load_sentence_model()
    encode(model, ["a first sentence", "a second one"])
    err = capfd.readouterr().err
    assert "Loading weights" not in err and "Batches" not in err and "it/s" not in err


def test_a_long_scan_is_ranked_within_its_budget_and_a_damaged_page_never_stops_the_others(tmp_path, monkeypatch):
    """A PDF of scanned pages (no text layer): only the first pages of the budget are OCR'd to rank them, the rest
    are named as not ranked; a page that cannot be rendered is named and skipped, and the answer still comes from
    the page that holds it."""
    from PIL import Image

    import docintent
    from conftest import render_text_page
    from docintent.document import Document
    from docintent.errors import InputError

    lines = [
        ["Meeting notes", "Nothing to report"],
        ["Invoice INV-2041", "Total amount due: $1,250.00"],
        ["Appendix", "Tables follow"],
        ["Index", "See above"],
        ["Back matter", "End"],
    ]
    images = [Image.fromarray(render_text_page(page)) for page in lines]
    scan = tmp_path / "scan.pdf"
    images[0].save(scan, save_all=True, append_images=images[1:])
    reads: list[int] = []
    real = Document.page

    def page(self, number):
        reads.append(number)
        if number == 1:
            raise InputError(scan, "page 1: the page could not be rendered")
        return real(self, number)

    monkeypatch.setattr(Document, "page", page)
    document = Document(scan)
    texts = document.texts(ocr_budget=3)
    assert [bool(t.lines) for t in texts] == [False, True, True, False, False]
    assert document.unread[1].startswith("cannot be read") and "not ranked" in document.unread[5]
    result = docintent.ask(scan, "What is the total amount due?", strategy="none")
    assert result.answer == "$1,250.00" and result.page == 2


def test_a_long_scan_reports_progress_out_of_the_pages_its_ocr_budget_reads(tmp_path, monkeypatch, capsys):
    """``docintent ask`` on a scan (no text layer) longer than the OCR budget: a progress line as each budgeted
    page is OCR'd, counted out of the pages read (2), not the document's length (5); the steps say how many pages
    were looked through and that the rest were ranked last."""
    import docintent.document as document_module
    from docintent.document import Document
    from docintent.evaluation.executors import Activity

    lines = [
        ["Meeting notes", "Nothing to report"],
        ["Invoice INV-2041", "Total amount due: $1,250.00"],
        ["Appendix", "Tables follow"],
        ["Index", "See above"],
        ["Back matter", "End"],
    ]
    images = [Image.fromarray(render_text_page(page)) for page in lines]
    scan = tmp_path / "scan.pdf"
    images[0].save(scan, save_all=True, append_images=images[1:])
    monkeypatch.setattr(document_module, "LOCATE_OCR_PAGES", 2)
    rendered: list[int] = []
    real_page = Document.page

    def page(self, number):
        rendered.append(number)
        return real_page(self, number)

    said: list[tuple[str, list[int]]] = []  # each progress line, with the pages rendered by then
    monkeypatch.setattr(Document, "page", page)
    monkeypatch.setattr(Activity, "say", lambda self, text: said.append((text, list(rendered))))
    assert main(["ask", str(scan), QUESTION, "--strategy", "none"]) == 0
    out = capsys.readouterr().out
    located = [(text, pages) for text, pages in said if text.startswith("looking for the pages to read")]
    assert located == [("looking for the pages to read: 1/2", [1]), ("looking for the pages to read: 2/2", [1, 2])]
    assert "answer: $1,250.00" in out and "page: 2" in out
    assert (
        "looked through 2 of 5 pages (the other 3 have no text layer and are past the OCR budget: ranked last): "
        "reading page 2"
    ) in out
