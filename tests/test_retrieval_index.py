"""Index builds: handles, provenance, text sources, resume after interruption, the index/search commands."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from docintent.cli import main
from docintent.errors import ConfigError, DatasetError
from docintent.retrieval import PageIndex, build_index, get_retriever
from needs import need_module
from retrieval_helpers import FILLER, make_pdf


@pytest.fixture()
def two_pdfs(tmp_path):
    a = make_pdf(tmp_path / "alpha.pdf", FILLER[:5])
    b = make_pdf(tmp_path / "beta.pdf", FILLER[5:9])
    return tmp_path, a, b


def test_handles_are_shuffled_and_provenance_is_kept(two_pdfs, tmp_path):
    folder, a, b = two_pdfs
    report = build_index([folder], tmp_path / "idx", seed=3)
    assert report.complete and report.pages_total == 9 and report.pages_by_source == {"pdf": 9}
    index = PageIndex.open(tmp_path / "idx")
    assert index.handles == [f"page_{i:06d}" for i in range(9)]
    provenance = [(index.record(h).doc_path, index.record(h).page_no) for h in index.handles]
    # Every page once, in an order that is not the document order.
    assert sorted(provenance) == sorted([(str(a), p) for p in range(5)] + [(str(b), p) for p in range(4)])
    assert provenance != sorted(provenance)
    hit = get_retriever(index, "bm25").search("makeindex sorting entries", k=1)[0]
    record = index.record(hit.handle)
    assert (record.doc_path, record.page_no) == (str(b), 2)
    assert "Makeindex sorts the entries." in record.text
    image = index.image(hit.handle)
    assert image.size == (576, 720)  # 4 x 5 inches at 144 DPI, re-rendered from the PDF


def test_interrupted_build_resumes_without_redoing_pages(two_pdfs, tmp_path):
    folder, _, _ = two_pdfs
    first = build_index([folder], tmp_path / "idx", limit=4)
    assert (first.pages_processed, first.complete) == (4, False)
    with pytest.raises(DatasetError, match="unfinished .*5 pages left"):
        PageIndex.open(tmp_path / "idx")
    second = build_index([folder], tmp_path / "idx")
    assert (second.pages_done_before, second.pages_processed, second.complete) == (4, 5, True)
    third = build_index([folder], tmp_path / "idx")
    assert third.pages_processed == 0
    whole = build_index([folder], tmp_path / "whole")
    resumed, fresh = PageIndex.open(tmp_path / "idx"), PageIndex.open(tmp_path / "whole")
    assert [(r.handle, r.doc_path, r.page_no, r.text) for r in resumed.records()] == [
        (r.handle, r.doc_path, r.page_no, r.text) for r in fresh.records()
    ]
    assert whole.pages_processed == 9


@dataclass
class _Text:
    text: str


class _CountingOcr:
    """OCR double that stands for a slow engine: it counts its reads and can be interrupted (Ctrl-C)."""

    name = "counting"

    def __init__(self, interrupt_at: int | None = None) -> None:
        self.reads = 0
        self.interrupt_at = interrupt_at

    def read(self, page):
        self.reads += 1
        if self.reads == self.interrupt_at:
            raise KeyboardInterrupt
        return _Text(f"ocr text of a {page.width}x{page.height} page")


def test_ctrl_c_keeps_finished_pages(two_pdfs, tmp_path):
    folder, _, _ = two_pdfs
    engine = _CountingOcr(interrupt_at=4)
    with pytest.raises(KeyboardInterrupt):
        build_index([folder], tmp_path / "idx", text="ocr", ocr=engine, commit_every=100)
    again = _CountingOcr()
    report = build_index([folder], tmp_path / "idx", text="ocr", ocr=again)
    assert (report.pages_done_before, again.reads, report.complete) == (3, 6, True)
    index = PageIndex.open(tmp_path / "idx")
    assert {index.record(h).text_source for h in index.handles} == {"ocr:counting"}


def test_page_without_text_layer_is_read_by_ocr(tmp_path):
    need_module("tesserocr", "indexing with OCR uses the Tesseract engine")
    from PIL import Image

    from conftest import render_text_page

    scan = tmp_path / "scan.pdf"
    Image.fromarray(render_text_page(["Quarterly report", "Revenue grew by 12 percent"], size=40)).save(
        scan, resolution=144
    )
    make_pdf(tmp_path / "text.pdf", FILLER[:2])
    report = build_index([scan, tmp_path / "text.pdf"], tmp_path / "idx", ocr="tesseract")
    assert report.pages_by_source == {"pdf": 2, "ocr:tesseract": 1}
    index = PageIndex.open(tmp_path / "idx")
    hit = get_retriever(index).search("revenue growth report", k=1)[0]
    assert "Revenue grew by 12 percent" in index.text(hit.handle)


def test_other_inputs_resume_and_other_settings_are_refused(two_pdfs, tmp_path):
    folder, a, _ = two_pdfs
    first = build_index([a], tmp_path / "idx")
    more = build_index([folder], tmp_path / "idx")  # a document added: only its pages are read
    assert more.complete and more.pages_total == 9 and more.pages_processed == 9 - first.pages_total
    with pytest.raises(ConfigError, match="other settings.*--overwrite"):
        build_index([folder], tmp_path / "idx", dpi=72)
    assert build_index([folder], tmp_path / "idx", dpi=72, overwrite=True).pages_total == 9


def test_index_and_search_commands(two_pdfs, tmp_path, capsys):
    folder, _, b = two_pdfs
    assert main(["index", str(folder), "--out", str(tmp_path / "idx")]) == 0
    assert "9 pages (0 already done, 9 processed" in capsys.readouterr().out
    assert main(["search", str(tmp_path / "idx"), "which page covers counters?", "-k", "2"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert f"{b} p.1" in first and "Counters" in first
    assert main(["search", str(tmp_path / "nowhere"), "x"]) == 1
    assert "not a docintent index" in capsys.readouterr().err
