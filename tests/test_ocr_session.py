"""Reading sessions: one detection per page state, recognition only for the lines asked for, each line crop
recognised once, and the same text as a plain read."""

from __future__ import annotations

import numpy as np
import pytest

from conftest import render_text_page
from docintent import Box, Page
from docintent.ocr import ReadingSession, get_engine
from docintent.tools import get_tool

LINES = [
    "Invoice number: INV-2041",
    "Date: 12 March 2024",
    "Customer: Harbour Supplies Ltd",
    "Total amount due: $1,250.00",
    "Payment terms: 30 days",
    "Thank you for your order",
]


@pytest.fixture(scope="module")
def page():
    return Page.from_array(render_text_page(LINES, size=30, width=1100), source="rendered")


def _dim(page: Page, rows: slice | None = None) -> Page:
    """The page under dimmer, greyer light (a photometric change: no text moves)."""
    pixels = page.pixels.astype(np.float32)
    target = pixels[rows] if rows is not None else pixels
    target[:] = 60 + 0.55 * target
    return page.derive(pixels.astype(np.uint8), "dim")


def test_full_read_matches_a_plain_read(page):
    session = ReadingSession(get_engine("rapidocr", cache=False))
    plain = get_engine("rapidocr", cache=False).read(page)
    read = session.read(page)
    assert [l.text for l in read.lines] == [l.text for l in plain.lines]
    assert "INV-2041" in read.text and "$1,250.00" in read.text
    for a, b in zip(read.lines, plain.lines):
        assert a.box.iou(b.box) > 0.95
        assert [w.text for w in a.words] == [w.text for w in b.words]
    assert session.stats["detections"] == 1


def test_photometric_change_reads_only_the_region_with_the_earlier_boxes(page):
    session = ReadingSession(get_engine("rapidocr", cache=False))
    before = session.read(page)
    total = next(l for l in before.lines if "Total" in l.text)
    region = total.box.expand(0.02, 0.01)
    recognised = session.stats["lines_recognised"]

    after = _dim(page)
    part = session.read(after, region, geometry_of=page)
    assert [l.text for l in part.lines] == ["Total amount due: $1,250.00"]
    assert part.page_hash == after.hash and part.region == region
    assert session.stats["detections"] == 1  # the dimmed page was not detected again
    assert session.stats["lines_recognised"] == recognised + 1  # only the line in the region was read


def test_lines_a_tool_did_not_change_are_not_read_again(page):
    session = ReadingSession(get_engine("rapidocr", cache=False))
    session.read(page)
    top = page.height // 2
    changed = _dim(page, rows=slice(top, None))  # only the lower half changes
    read = session.read(changed, geometry_of=page)
    lower = sum(1 for l in read.lines if l.box.center[1] * page.height > top)
    assert session.stats["lines_reused"] == len(LINES) - lower
    assert "Invoice number" in read.text and "Thank you" in read.text


def test_a_geometric_change_is_detected_again(page):
    session = ReadingSession(get_engine("rapidocr", cache=False))
    session.read(page)
    turned = get_tool("rotate_180")(get_tool("rotate_180")(page))
    wider = Page.from_array(np.pad(page.pixels, ((0, 0), (0, 200), (0, 0)), constant_values=255))
    read = session.read(wider, geometry_of=page)  # a different size cannot share the boxes
    assert session.stats["detections"] == 2
    assert "Total amount due" in read.text
    assert turned.hash == page.hash  # two half turns are the page itself: nothing to detect
    session.read(turned)
    assert session.stats["detections"] == 2


def test_tesseract_sessions_read_regions_directly(page):
    pytest.importorskip("tesserocr")
    session = ReadingSession(get_engine("tesseract", cache=False))
    part = session.read(page, Box(0.0, 0.5, 1.0, 1.0))
    assert "Thank" in part.text and "Invoice" not in part.text
