"""Inputs a careless or hostile user gives: question files in any encoding, folders with links, pipes and
files of other kinds, outputs that name inputs, documents edited between runs, page selections outside the
document, codes that differ by one digit and questions of a hundred thousand characters. Each test checks
what the user sees: the exit status, the one line on stderr, the rows written, the page chosen."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from docintent.batch import decode_questions, read_questions, walk_documents
from docintent.cli import main
from docintent.errors import ConfigError, InputError
from docintent.io.walk import MAX_WALK_DEPTH
from docintent.vocabulary import MAX_QUESTION_CHARS
from process_helpers import png_bytes
from retrieval_helpers import make_pdf

SRC = Path(__file__).resolve().parents[1] / "src"
SCRIPTED = ["--brain", "scripted", "--brain-opt", "final=42", "--no-progress"]


def _one_line(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "Traceback" not in err and "unexpected error" not in err, err
    return err


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _pages(folder: Path, count: int = 2) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (folder / f"page{i}.png").write_bytes(png_bytes(value=20 + 30 * i))
    return folder


# --- question files -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16-le", "utf-16-be"])
def test_a_questions_file_is_decoded_by_its_byte_order_mark(tmp_path, encoding):
    path = tmp_path / "q.txt"
    text = "What is the total?\r\nWho signed the letter?\n"
    data = text.encode(encoding)
    if encoding != "utf-8-sig":
        data = ("\ufeff" + text).encode(encoding)
    path.write_bytes(data)
    assert [q.text for q in read_questions(path)] == ["What is the total?", "Who signed the letter?"]


def test_each_line_is_one_question_whatever_else_it_holds(tmp_path):
    path = tmp_path / "q.txt"
    path.write_text("What is\u2028the total?\nWhich\x0cyear?\n\nWhat is\u2028the total?\n", encoding="utf-8")
    assert [q.text for q in read_questions(path)] == ["What is\u2028the total?", "Which\x0cyear?"]


def test_invalid_bytes_are_one_line_naming_the_file_and_the_line(tmp_path, capsys):
    folder = _pages(tmp_path / "scans")
    path = tmp_path / "q.txt"
    path.write_bytes(b"What is the total?\nWho signed?\nWhat is \xff the date?\n")
    out = tmp_path / "answers.jsonl"
    assert main(["ask", str(folder), "--questions", str(path), "--out", str(out), *SCRIPTED]) == 1
    err = _one_line(capsys)
    assert str(path) in err and "line 3 is not valid UTF-8" in err
    assert not out.exists()
    path.write_bytes("\ufeffWhat?\n".encode("utf-16-le") + b"\x00")  # a UTF-16 file cut in the middle of a character
    with pytest.raises(InputError, match=r"line 2 is not valid UTF-16-LE"):
        read_questions(path)


@given(data=st.binary(max_size=300))
def test_any_bytes_as_a_questions_file_give_questions_or_one_clear_error(tmp_path_factory, data):
    path = tmp_path_factory.mktemp("q") / "questions.txt"
    path.write_bytes(data)
    try:
        questions = read_questions(path)
    except InputError as err:
        text = str(err)
        assert str(path) in text and "\n" not in text
        return
    lines = [line.strip() for line in decode_questions(data)]
    expected = list(dict.fromkeys(line for line in lines if line and not line.startswith("#")))
    assert [q.text for q in questions] == expected
    assert all("\ufeff" != q.text[:1] or not data.startswith(b"\xef\xbb\xbf") for q in questions[:1])


# --- folder walks --------------------------------------------------------------------------------------------


def test_a_folder_with_looping_links_an_alias_a_pipe_and_a_tsv_reads_each_document_once(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))  # no LibreOffice: the .docx is named, not read
    folder = _pages(tmp_path / "scans")
    (folder / "sub").mkdir()
    (folder / "sub" / "inner.png").write_bytes(png_bytes(value=90))
    os.symlink(".", folder / "loop1")
    os.symlink("..", folder / "sub" / "loop2")
    os.symlink("sub/inner.png", folder / "alias.png")
    os.mkfifo(folder / "waiting.png")
    (folder / "notes.tsv").write_text("a\tb\n")
    (folder / "letter.docx").write_bytes(b"PK\x03\x04 not really a document")
    out = tmp_path / "answers.jsonl"
    assert main(["ask", str(folder), "What is the total?", "--out", str(out), *SCRIPTED]) == 0
    files = sorted(r["file"] for r in _rows(out))
    assert files == [str(folder / "page0.png"), str(folder / "page1.png"), str(folder / "sub" / "inner.png")]
    printed = capsys.readouterr().out
    assert f"not read: {folder / 'notes.tsv'} (.tsv: not a document type docintent reads)" in printed
    assert (
        f"not read: {folder / 'letter.docx'} (.docx: an office document, read by converting it to PDF with LibreOffice, which is not installed"
        in printed
    )
    assert "sudo apt-get install libreoffice-writer (it brings libreoffice-core)" in printed
    assert f"not read: {folder / 'waiting.png'} (a named pipe (FIFO)" in printed
    assert f"not read: {folder / 'alias.png'} (the same file as {folder / 'sub' / 'inner.png'})" in printed
    assert f"not read: {folder / 'loop1'} (a link to a folder already walked" in printed


def test_a_walk_is_bounded_in_depth_and_says_so(tmp_path):
    deep = tmp_path / "scans"
    _pages(deep, 1)
    for i in range(MAX_WALK_DEPTH + 2):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "far.png").write_bytes(png_bytes())
    walk = walk_documents(tmp_path / "scans")
    assert walk.documents == [str(tmp_path / "scans" / "page0.png")]
    assert any(f"deeper than {MAX_WALK_DEPTH} folders" in reason for _, reason in walk.skipped)


def test_a_glob_through_looping_links_ends(tmp_path):
    folder = _pages(tmp_path / "scans")
    os.symlink(".", folder / "a")
    os.symlink(".", folder / "b")
    start = time.monotonic()
    walk = walk_documents(str(folder / "**" / "*.png"))
    assert walk.documents == [str(folder / "page0.png"), str(folder / "page1.png")]
    assert time.monotonic() - start < 5


def test_a_pipe_given_as_the_document_is_one_line_and_never_opened(tmp_path):
    pipe = tmp_path / "page.png"
    os.mkfifo(pipe)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    proc = subprocess.run(
        [sys.executable, "-m", "docintent", "ask", str(pipe), "What is the total?"],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
    )
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 1 and len(lines) == 1 and str(pipe) in lines[0] and "named pipe" in lines[0]


# --- outputs ---------------------------------------------------------------------------------------------------


def test_out_naming_an_input_of_the_run_is_refused(tmp_path, capsys):
    folder = _pages(tmp_path / "scans")
    questions = tmp_path / "q.txt"
    questions.write_text("What is the total?\n")
    assert main(["ask", str(folder), "--questions", str(questions), "--out", str(questions), *SCRIPTED]) == 1
    assert "is the questions file of this run" in _one_line(capsys)
    assert questions.read_text() == "What is the total?\n"
    page = folder / "page0.png"
    before = page.read_bytes()
    assert main(["ask", str(folder), "--questions", str(questions), "--out", str(page), *SCRIPTED]) == 1
    assert "is an input of this run" in _one_line(capsys) and page.read_bytes() == before


@pytest.mark.parametrize("content", ["hello", "hello\n", '{"sample": {"id": "s1"}, "strategy": "none"}\n'])
def test_out_naming_a_file_that_is_not_an_answers_file_is_refused_and_left_as_it_was(tmp_path, capsys, content):
    folder = _pages(tmp_path / "scans")
    out = tmp_path / "notes.jsonl"
    out.write_text(content)
    assert main(["ask", str(folder), "q?", "--out", str(out), *SCRIPTED]) == 1
    err = _one_line(capsys)
    assert str(out) in err and "is not an answers file" in err
    assert out.read_text() == content


def test_a_row_cut_short_by_a_kill_is_still_resumed(tmp_path, capsys):
    folder = _pages(tmp_path / "scans")
    out = tmp_path / "answers.jsonl"
    out.write_text('{"file": "scans/page0.png", "question": "q')
    assert main(["ask", str(folder), "q?", "--out", str(out), *SCRIPTED]) == 0
    assert len(_rows(out)) == 2


def test_two_names_of_one_answers_file_share_its_lock(tmp_path, capsys):
    from docintent.io.lock import FolderLock

    folder = _pages(tmp_path / "scans")
    out = tmp_path / "answers.jsonl"
    alias = tmp_path / "alias.jsonl"
    os.symlink(out.name, alias)
    with FolderLock(tmp_path, purpose="answers file", name=".answers.jsonl.lock"):  # another batch writes it
        assert main(["ask", str(folder), "q?", "--out", str(alias), *SCRIPTED]) == 1
        assert "is in use by" in _one_line(capsys)
    assert not out.exists()


# --- resume ------------------------------------------------------------------------------------------------------


def test_a_document_edited_between_runs_is_answered_again(tmp_path, capsys):
    folder = _pages(tmp_path / "scans")
    out = tmp_path / "answers.jsonl"
    argv = ["ask", str(folder), "What is the total?", "--out", str(out), "--brain", "scripted", "--no-progress"]
    assert main([*argv, "--brain-opt", "final=first"]) == 0
    (folder / "page1.png").write_bytes(png_bytes(value=200))  # the same name, other content
    capsys.readouterr()
    assert main([*argv, "--brain-opt", "final=second"]) == 0
    answers = {Path(r["file"]).name: r["answer"] for r in _rows(out)}
    assert answers == {"page0.png": "first", "page1.png": "second"}
    assert "1 already done" in capsys.readouterr().out


# --- pages -------------------------------------------------------------------------------------------------------


def test_a_page_selection_partly_outside_the_document_is_refused_naming_the_valid_range(tmp_path, capsys):
    pdf = make_pdf(tmp_path / "two.pdf", ["First page", "Second page"])
    assert main(["ask", str(pdf), "q?", "--pages", "1,7", *SCRIPTED]) == 1
    err = _one_line(capsys)
    assert str(pdf) in err and "page 7 is outside this 2-page document (pages 1-2; pages count from 1)" in err


def test_codes_with_digits_match_exactly_when_pages_are_ranked(tmp_path):
    import docintent
    from docintent.brains import get_brain
    from docintent.document import Document

    pages = [f"Invoice INV-{n:05d}\nTotal amount due: ${n}.00\nThank you" for n in (37, 3777, 377, 1377)]
    pdf = make_pdf(tmp_path / "invoices.pdf", pages)
    ranking = Document(pdf).locate("What is the total amount due on invoice INV-00377?")
    assert ranking[0].number == 3 and ranking[0].evidence and "INV-00377" in ranking[0].evidence
    assert all(choice.evidence is None for choice in ranking[1:])
    result = docintent.ask(
        pdf,
        "What is the total amount due on invoice INV-00377?",
        strategy="none",
        brain=get_brain("scripted", final="$377.00"),
    )
    assert result.page == 3
    pdf = make_pdf(tmp_path / "words.pdf", ["keyword1777 appears here", "keyword1 appears here"])
    assert Document(pdf).locate("Which page mentions keyword1?")[0].number == 2


# --- long questions ----------------------------------------------------------------------------------------------


def test_a_question_of_150000_characters_is_refused_at_once_everywhere(tmp_path, capsys):
    import docintent
    from docintent.evaluation.runner import run_one
    from docintent.sample import Sample
    from docintent.strategies import get_strategy

    page = tmp_path / "page.png"
    page.write_bytes(png_bytes())
    question = "What is the total? " * 8000  # 152,000 characters
    start = time.monotonic()
    assert main(["ask", str(page), question, "--brain", "scripted"]) == 1
    assert time.monotonic() - start < 1.0
    assert f"at most {MAX_QUESTION_CHARS:,} are taken" in _one_line(capsys)
    with pytest.raises(ConfigError, match="characters long"):
        docintent.ask(str(page), question)
    questions = tmp_path / "q.jsonl"
    questions.write_text(json.dumps({"question": "short?"}) + "\n" + json.dumps({"question": question}) + "\n")
    with pytest.raises(InputError, match=r"line 2: the question is 151,999 characters long"):
        read_questions(questions)
    sample = Sample("s1", str(page), question, answers=("42",), task="doc", subset="synthetic", group="s1")
    row = run_one(sample, get_strategy("none"), None, brain_name="none")
    assert "characters long" in row["error"] and row["answer"] == ""


def test_a_walk_over_its_entry_limit_is_refused_with_a_message(tmp_path, monkeypatch):
    import docintent.io.walk as walk

    folder = _pages(tmp_path / "scans", 4)
    monkeypatch.setattr(walk, "MAX_WALK_ENTRIES", 3)
    with pytest.raises(InputError, match="holds more than 3 files and folders"):
        walk_documents(folder)


@given(data=st.binary(max_size=200))
def test_any_bytes_as_a_config_file_give_a_config_or_one_clear_error(tmp_path_factory, data):
    from docintent.configfile import read_config_file

    path = tmp_path_factory.mktemp("c") / "docintent.toml"
    path.write_bytes(data)
    try:
        read_config_file(path)
    except ConfigError as err:
        assert str(path) in str(err) and "\n" not in str(err).strip()
