"""Office documents: read as the PDF LibreOffice headless makes of them, or named with the package to install.

The tests that convert for real need LibreOffice (``soffice`` on PATH; Debian: ``apt-get install
libreoffice-writer``) and skip without it, on CI too (CI does not install it). The message a user gets without
LibreOffice, the time limit and a failed conversion are tested everywhere: PATH is emptied, or holds a stand-in
``soffice`` script.
"""

from __future__ import annotations

import json
import os
import shutil
import time
import zipfile
from pathlib import Path

import pytest

from docintent.cli import main
from docintent.errors import OfficeConversionError
from docintent.io.office import office_pdf
from docintent.settings import get_settings
from process_helpers import png_bytes

SCRIPTED = ["--brain", "scripted", "--brain-opt", "final=42", "--no-progress"]
INVOICE = ["Invoice number: INV-2041", "Date: 12 March 2024", "Total amount due: $1,250.00"]
LIBREOFFICE = shutil.which("soffice") or shutil.which("libreoffice")
needs_libreoffice = pytest.mark.skipif(
    LIBREOFFICE is None, reason="LibreOffice is not installed (Debian: apt-get install libreoffice-writer)"
)


def make_docx(path: Path, paragraphs: list[str]) -> Path:
    """A minimal Word document (the three parts a DOCX needs), 16-point text, one paragraph a line."""
    content_types = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">'
        '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>'
        '<Default Extension="xml" ContentType="application/xml"/>'
        '<Override PartName="/word/document.xml" '
        'ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>'
    )
    relations = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">'
        '<Relationship Id="rId1" Target="word/document.xml" '
        'Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"/></Relationships>'
    )
    body = "".join(
        f'<w:p><w:r><w:rPr><w:sz w:val="32"/></w:rPr><w:t xml:space="preserve">{text}</w:t></w:r></w:p>'
        for text in paragraphs
    )
    document = (
        '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>'
        '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main">'
        f"<w:body>{body}</w:body></w:document>"
    )
    path.parent.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("[Content_Types].xml", content_types)
        archive.writestr("_rels/.rels", relations)
        archive.writestr("word/document.xml", document)
    return path


@pytest.fixture()
def own_cache(tmp_path, monkeypatch):
    """A cache folder of this test's own (so a conversion is not found already made by another test)."""
    monkeypatch.setenv("DOCINTENT_CACHE_DIR", str(tmp_path / "cache"))
    get_settings.cache_clear()
    yield tmp_path / "cache"
    get_settings.cache_clear()


def _stand_in(tmp_path: Path, script: str) -> Path:
    """A folder holding a ``soffice`` shell script, to put on PATH instead of LibreOffice."""
    folder = tmp_path / "bin"
    folder.mkdir(exist_ok=True)
    program = folder / "soffice"
    program.write_text("#!/bin/sh\n" + script)
    program.chmod(0o755)
    return folder


def _mixed_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "inbox"
    make_docx(folder / "invoice.docx", INVOICE)
    (folder / "notes.tsv").write_text("total\t1250\n")
    (folder / "photo.png").write_bytes(png_bytes(value=40))
    return folder


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


# -- without LibreOffice ---------------------------------------------------------------------------------------


def test_without_libreoffice_a_folder_names_the_docx_and_the_tsv_as_not_read_and_reads_the_png(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))
    folder = _mixed_folder(tmp_path)
    out = tmp_path / "answers.jsonl"
    assert main(["ask", str(folder), "What is the total amount due?", "--out", str(out), *SCRIPTED]) == 0
    assert [row["file"] for row in _rows(out)] == [str(folder / "photo.png")]
    printed = capsys.readouterr().out
    assert "rows for 1 document(s)" in printed
    assert (
        f"not read: {folder / 'invoice.docx'} (.docx: an office document, read by converting it to PDF with "
        "LibreOffice, which is not installed (no soffice or libreoffice on PATH); on Debian or Ubuntu: sudo "
        "apt-get install libreoffice-writer (it brings libreoffice-core))"
    ) in printed
    assert f"not read: {folder / 'notes.tsv'} (.tsv: not a document type docintent reads)" in printed


def test_without_libreoffice_asking_about_a_docx_is_one_line_naming_the_file_and_the_package(
    tmp_path, capsys, monkeypatch
):
    monkeypatch.setenv("PATH", str(tmp_path / "no-programs"))
    document = make_docx(tmp_path / "minutes.docx", ["Minutes of the meeting"])
    sheet = tmp_path / "budget.xlsx"
    sheet.write_bytes(b"PK\x03\x04 a spreadsheet")
    assert main(["ask", str(document), "Who chaired the meeting?", *SCRIPTED]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1
    assert (
        f"{document}: an office document, read by converting it to PDF with LibreOffice, which is not installed" in err
    )
    assert "sudo apt-get install libreoffice-writer" in err
    assert main(["ask", str(sheet), "What is the budget?", *SCRIPTED]) == 1
    assert "sudo apt-get install libreoffice-calc" in capsys.readouterr().err  # a spreadsheet needs Calc


# -- a stand-in soffice: the time limit and a failed conversion ---------------------------------------------------


def test_a_conversion_past_the_time_limit_is_stopped_and_the_error_names_the_file(tmp_path, monkeypatch, own_cache):
    monkeypatch.setenv("PATH", str(_stand_in(tmp_path, "exec /bin/sleep 60\n")))
    document = make_docx(tmp_path / "slow.docx", ["a long report"])
    started = time.monotonic()
    with pytest.raises(OfficeConversionError) as caught:
        office_pdf(document, timeout_s=1.0)
    assert time.monotonic() - started < 15
    assert str(caught.value) == (
        f"{document}: LibreOffice took longer than 1 s to convert it to PDF and was stopped "
        "(DOCINTENT_OFFICE_TIMEOUT_S sets the limit)"
    )
    assert not list(own_cache.glob("office/*.pdf"))  # nothing half-made is kept


def test_a_conversion_that_makes_no_pdf_says_what_libreoffice_said_and_what_to_install(
    tmp_path, monkeypatch, own_cache
):
    monkeypatch.setenv("PATH", str(_stand_in(tmp_path, "echo 'Error: source file could not be loaded'\n")))
    sheet = tmp_path / "budget.xlsx"
    sheet.write_bytes(b"PK\x03\x04 a spreadsheet")
    with pytest.raises(OfficeConversionError) as caught:
        office_pdf(sheet)
    message = str(caught.value)
    assert message.startswith(
        f"{sheet}: LibreOffice could not convert it to PDF (exit status 0: Error: source file could not be loaded)"
    )
    assert message.endswith("sudo apt-get install libreoffice-calc")


# -- with LibreOffice --------------------------------------------------------------------------------------------


@needs_libreoffice
def test_a_docx_is_answered_from_the_page_of_its_pdf(own_cache):
    import docintent

    document = make_docx(own_cache.parent / "invoice.docx", INVOICE)
    result = docintent.ask(document, "What is the total amount due?")
    assert result.answer == "$1,250.00"
    assert result.page == 1
    assert any("Total amount due" in text for text, _, _ in result.provenance.lines)


@needs_libreoffice
def test_a_folder_reads_the_docx_through_libreoffice_and_names_the_tsv(tmp_path, capsys, own_cache):
    folder = _mixed_folder(tmp_path)
    out = tmp_path / "answers.jsonl"
    assert main(["ask", str(folder), "What is the total amount due?", "--out", str(out), *SCRIPTED]) == 0
    rows = {Path(row["file"]).name: row for row in _rows(out)}
    assert sorted(rows) == ["invoice.docx", "photo.png"]
    assert rows["invoice.docx"]["error"] is None and rows["invoice.docx"]["page"] == 1
    printed = capsys.readouterr().out
    assert "rows for 2 document(s)" in printed
    assert f"not read: {folder / 'notes.tsv'} (.tsv: not a document type docintent reads)" in printed
    assert "invoice.docx (" not in printed


@needs_libreoffice
def test_a_conversion_is_made_once_per_content_and_gives_the_same_pages_every_time(tmp_path, monkeypatch, own_cache):
    from docintent.io import load_document, office

    document = make_docx(tmp_path / "invoice.docx", INVOICE)
    first = office_pdf(document)
    assert first.parent == own_cache / "office" and first.suffix == ".pdf"
    pages = load_document(document)
    assert pages[0].source == f"{document}#page=0"  # named after the document, not the converted file
    # the same bytes under another name: the cached PDF, LibreOffice is not run again
    copy = tmp_path / "copy of invoice.docx"
    shutil.copyfile(document, copy)
    monkeypatch.setattr(office, "_convert", lambda *args: pytest.fail("converted again"))
    assert office_pdf(copy) == first
    monkeypatch.undo()
    # converted afresh (another cache folder): the same pixels
    monkeypatch.setenv("DOCINTENT_CACHE_DIR", str(tmp_path / "another-cache"))
    get_settings.cache_clear()
    again = office_pdf(document)
    assert again != first and again.name == first.name
    assert [p.hash for p in load_document(document)] == [p.hash for p in pages]
    os.remove(again)
