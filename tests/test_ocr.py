"""OCR engines on pages the tests render: words found, boxes canonical, regions, cache, orientation."""

from __future__ import annotations

import numpy as np
import pytest

from docintent import Page
from docintent.errors import UnknownComponentError
from docintent.ocr import detect_orientation, get_engine
from docintent.tools import get_tool


def _words(result):
    return {w.text.strip(".,:$").lower() for line in result.lines for w in line.words} | {
        t.strip(".,:$").lower() for line in result.lines for t in line.text.split()
    }


@pytest.mark.parametrize("kind", ["rapidocr", "tesseract"])
def test_engine_reads_rendered_words_with_canonical_boxes(text_page, kind):
    page, lines = text_page
    result = get_engine(kind).read(page)
    found = _words(result)
    for word in ("invoice", "inv-2041", "march", "amount", "thank"):
        assert word in found, f"{kind} missed {word!r}: {result.text!r}"
    assert result.page_hash == page.hash and result.engine == kind
    for line in result.lines:
        assert 0.0 <= line.box.x0 < line.box.x1 <= 1.0 and 0.0 <= line.box.y0 < line.box.y1 <= 1.0
        assert 0.0 <= line.confidence <= 1.0
    # lines come in reading order: the first rendered line is read first
    assert "invoice" in result.lines[0].text.lower()


def test_region_read_maps_boxes_back_to_the_page(text_page):
    page, _ = text_page
    engine = get_engine("rapidocr")
    full = engine.read(page)
    target = next(l for l in full.lines if "total" in l.text.lower())
    region = target.box.expand(0.05, 0.05)
    part = engine.read(page, region)
    assert part.region == region
    assert "total" in part.text.lower() and "invoice" not in part.text.lower()
    line = next(l for l in part.lines if "total" in l.text.lower())
    # the same line, found in a crop, lands within 2 px of where the full-page read put it
    w, h = page.size
    for a, b, scale in zip(line.box.as_tuple(), target.box.as_tuple(), (w, h, w, h)):
        assert abs(a - b) * scale <= 2.5


def test_results_are_cached_by_page_and_region(text_page, tmp_path):
    from docintent.ocr.cache import OcrCache

    page, _ = text_page
    engine = get_engine("tesseract", cache=False)
    engine.cache = OcrCache(tmp_path)
    first = engine.read(page)
    assert list(tmp_path.rglob("*.json")), "nothing written to the disk cache"
    fresh = get_engine("tesseract", cache=False)
    fresh.cache = OcrCache(tmp_path)  # a new process would start with an empty memory cache
    again = fresh.read(page)
    assert again.text == first.text and again.seconds == first.seconds  # came from disk, not re-read
    engine.cache = None


def test_unknown_engine_lists_valid_ones():
    with pytest.raises(UnknownComponentError, match="valid OCR engines: rapidocr, tesseract"):
        get_engine("abbyy")


@pytest.mark.parametrize("turn", ["rotate_90", "rotate_180", "rotate_270"])
def test_orientation_label_maps_to_the_rotation_that_undoes_it(text_page, turn):
    page, _ = text_page
    tall = Page.from_array(np.vstack([page.pixels] * 3))  # a page-shaped image with several text lines
    assert detect_orientation(tall).fix is None
    turned = get_tool(turn).run(tall)
    fix = detect_orientation(turned).fix
    assert fix is not None
    assert np.array_equal(get_tool(fix).run(turned).pixels, tall.pixels)


def test_ocr_command_prints_text_and_json(text_page, tmp_path, capsys):
    import json

    from PIL import Image

    from docintent.cli import main

    page, _ = text_page
    path = tmp_path / "page.png"
    Image.fromarray(page.pixels).save(path)
    assert main(["ocr", str(path), "--engine", "tesseract"]) == 0
    assert "Total amount due" in capsys.readouterr().out
    assert main(["ocr", str(path), "--json", "--region", "0,0,1000,300"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["engine"] == "rapidocr" and "Invoice" in data["text"] and "Thank" not in data["text"]
