"""Zoom and OCR: crops map back to the page, tables come back as cells, bad boxes are refused clearly."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image, ImageDraw

from docintent.errors import InvalidBoxError, MissingDependencyError, ToolError
from docintent.ocr import get_engine
from docintent.page import Page
from docintent.synth.render import font
from docintent.synth.table_images import cell_accuracy, render_table
from docintent.tools import get_tool
from docintent.tools.zoom import EQUATION_NOTE, Zoom
from needs import need_module

WORDS = ["Invoice 4471 total", "amount due 9,310.25", "paid by Walker Ltd"]


@pytest.fixture(scope="module")
def engine():
    return get_engine("rapidocr", cache=False)


@pytest.fixture(scope="module")
def zoom(engine):
    return Zoom(engine=engine)


def _block(lines: list[str], px: int = 26) -> np.ndarray:
    img = Image.new("RGB", (460, 40 + len(lines) * int(px * 1.7)), "white")
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((20, 20 + i * int(px * 1.7)), line, font=font(px), fill="black")
    return np.asarray(img)


def _page_with_turned_block(quarter_turns_ccw: int) -> tuple[Page, tuple[int, int, int, int]]:
    """A page whose upright header is plain, plus a text block lying so that turning it
    ``quarter_turns_ccw`` x 90 degrees counter-clockwise makes it upright. Returns the page and the block's
    pixel box."""
    page = np.full((896, 1024, 3), 255, np.uint8)  # multiples of 32: the detector then reads at scale 1
    page[30 : 30 + 74, 40:500] = _block(["Quarterly statement"])[:74]
    block = np.rot90(_block(WORDS), -quarter_turns_ccw)
    y, x = 180, 300
    page[y : y + block.shape[0], x : x + block.shape[1]] = block
    return Page.from_array(page, source=f"turned{quarter_turns_ccw}"), (x, y, x + block.shape[1], y + block.shape[0])


def _full_page_words(engine, page: Page, k: int) -> dict[str, tuple[float, ...]]:
    """Words read on the whole page turned k quarter turns CCW, mapped back to page pixels with
    explicit index arithmetic (independent of the tool's own mapping)."""
    turned = Page.from_array(np.rot90(page.pixels, k))
    W, H = page.width, page.height
    tw, th = turned.width, turned.height
    out = {}
    for w in engine.read(turned).words:
        u0, v0, u1, v1 = w.box.x0 * tw, w.box.y0 * th, w.box.x1 * tw, w.box.y1 * th
        if k == 0:
            box = (u0, v0, u1, v1)
        elif k == 1:  # pixel (col u, row v) of the turned image came from (col W - v, row u)
            box = (W - v1, u0, W - v0, u1)
        elif k == 2:
            box = (W - u1, H - v1, W - u0, H - v0)
        else:
            box = (v0, H - u1, v1, H - u0)
        out[w.text] = box
    return out


@pytest.fixture(scope="module")
def tesseract():
    need_module("tesserocr", "the exact round trip uses Tesseract's ink-tight word boxes")
    return get_engine("tesseract", cache=False)


def _round_trip(engine, angle: int) -> list[tuple[str, np.ndarray, np.ndarray]]:
    """(word, box from the crop mapped to page px, box from the whole turned page) for shared words."""
    tool = Zoom(engine=engine)
    page, (x0, y0, x1, y1) = _page_with_turned_block(angle // 90)
    W, H = page.size
    bbox = [(x0 - 10) / W, (y0 - 10) / H, (x1 + 10) / W, (y1 + 10) / H]
    ev = tool.inspect(page, label="payment block", bbox=bbox, angle=angle, type="text")
    assert "9,310.25" in ev.text and "Walker" in ev.text
    assert ev.crop.width > ev.crop.height  # upright again, as the block was drawn
    for line in ev.lines:  # every evidence line lies on the block, not elsewhere on the page
        cx, cy = line.box.center
        assert x0 - 12 <= cx * W <= x1 + 12 and y0 - 12 <= cy * H <= y1 + 12
    full = _full_page_words(engine, page, angle // 90)
    pairs = []
    for line in engine.read(ev.crop, min_side=tool.min_side).lines:
        for w in line.words:
            if w.text in full:
                b = Zoom.to_page(w.box, ev.box, angle)
                pairs.append((w.text, np.array([b.x0 * W, b.y0 * H, b.x1 * W, b.y1 * H]), np.array(full[w.text])))
    assert len(pairs) >= 6, [p[0] for p in pairs]
    return pairs


@pytest.mark.parametrize("angle", [0, 90, 180, 270])
def test_words_in_a_turned_crop_map_back_to_the_same_page_pixels(tesseract, angle):
    for text, from_crop, from_page in _round_trip(tesseract, angle):
        assert np.abs(from_crop - from_page).max() <= 2.0, (text, from_crop, from_page)


@pytest.mark.parametrize("angle", [90])  # all four angles are checked exactly with Tesseract above
def test_rapidocr_word_centres_land_on_the_same_words(engine, angle):
    # RapidOCR's word boxes come from recognition time steps and shift by a few pixels with the line's
    # context (measured up to 7 px here), so the default engine is held to word centres within 6 px.
    for text, from_crop, from_page in _round_trip(engine, angle):
        centre_crop = (from_crop[:2] + from_crop[2:]) / 2
        centre_page = (from_page[:2] + from_page[2:]) / 2
        assert np.abs(centre_crop - centre_page).max() <= 6.0, (text, from_crop, from_page)


def test_apply_returns_the_crop_with_provenance(zoom):
    page, (x0, y0, x1, y1) = _page_with_turned_block(1)
    crop = zoom.run(page, bbox=[x0 / page.width, y0 / page.height, x1 / page.width, y1 / page.height], angle=90)
    assert crop.meta["crop_of"] == page.hash and crop.meta["crop_angle"] == 90
    assert crop.ops[-1].startswith("zoom[")
    # turned back upright: the block was drawn 460 px wide
    assert abs(crop.width - 460) <= 2 and crop.height < crop.width


def test_table_mode_returns_cells_markdown_and_html(zoom):
    t = render_table(seed=1, style="spanning")
    pad = np.full((t.image.shape[0] + 200, t.image.shape[1] + 200, 3), 255, np.uint8)
    pad[100 : 100 + t.image.shape[0], 100 : 100 + t.image.shape[1]] = t.image
    page = Page.from_array(pad)
    bbox = [
        100 / page.width,
        100 / page.height,
        (100 + t.image.shape[1]) / page.width,
        (100 + t.image.shape[0]) / page.height,
    ]
    ev = zoom.inspect(page, label="income statement", bbox=bbox, type="table")
    assert cell_accuracy(ev.table.grid(), t.grid) >= 0.95
    label, value = t.grid[t.header_rows + 1][0], t.grid[t.header_rows + 1][1]
    year = t.grid[t.header_rows - 1][1].split()[-1]
    assert ev.table.lookup(label.lower(), year).text == value
    assert f"| {label} | {value} |" in ev.markdown
    assert ev.html.startswith("<table><thead>") and 'colspan="' in ev.html
    assert "table" in ev.summary() and label in ev.summary(limit=2000)


def test_equation_mode_says_no_formula_model(zoom):
    img = Image.new("RGB", (700, 200), "white")
    ImageDraw.Draw(img).text((40, 70), "E = m c2 + 42", font=font(40), fill="black")
    ev = zoom.inspect(Page.from_array(np.asarray(img)), bbox=[0, 0, 1000, 1000], type="equation")
    assert "42" in ev.text
    assert ev.note == EQUATION_NOTE and "no formula" in ev.summary()


def test_small_crop_is_upscaled_and_still_maps_back(zoom):
    page, _ = _page_with_turned_block(0)
    W, H = page.size
    # just the header line: 74 px high, upscaled before reading
    ev = zoom.inspect(page, bbox=[30 / W, 25 / H, 520 / W, 100 / H], type="text")
    assert "Quarterly statement" in ev.text
    x0, y0, x1, y1 = ev.lines[0].box.to_pixels(W, H)
    assert 40 <= x0 + 5 and x1 <= 520 and 25 <= y0 and y1 <= 100


def test_image_mode_only_crops(zoom):
    page, _ = _page_with_turned_block(0)
    ev = zoom.inspect(page, label="logo", bbox=[0, 0, 250, 250], type="image")
    assert ev.lines == () and ev.crop.size == (256, 224)  # a quarter of 1024 x 896


@pytest.mark.parametrize(
    "bbox, message",
    [
        ([1200, 1200, 1500, 1400], "outside the page"),
        ([100, 100, 100, 400], "no area"),
        ([100, 100, 102, 400], "need at least"),
        ([1, 2, 3], "exactly 4 numbers"),
        (["a", 0, 1, 1], "must be numbers"),
    ],
)
def test_bad_boxes_are_refused_with_a_clear_message(zoom, bbox, message):
    page, _ = _page_with_turned_block(0)
    with pytest.raises(InvalidBoxError, match=message):
        zoom.inspect(page, bbox=bbox, type="image")


def test_boxes_partly_outside_are_clamped_and_swapped_corners_accepted(zoom):
    page, _ = _page_with_turned_block(0)
    ev = zoom.inspect(page, bbox=[800, 900, -50, 1100], type="image")
    assert ev.box.to_1000() == (0, 900, 800, 1000)


def test_bad_angle_and_type_are_tool_errors(zoom):
    page, _ = _page_with_turned_block(0)
    with pytest.raises(ToolError, match="angle"):
        zoom.inspect(page, bbox=[0, 0, 500, 500], angle=45)
    with pytest.raises(ToolError, match="type"):
        zoom.inspect(page, bbox=[0, 0, 500, 500], type="chart")


def test_registered_as_inspection_tool_with_agenticocr_schema():
    tool = get_tool("zoom")
    assert tool.degradation == "inspection"
    props = tool.spec()["function"]["parameters"]["properties"]
    assert set(props) == {"label", "bbox", "angle", "type"}
    assert props["type"]["enum"] == ["region", "text", "table", "equation", "image"]


@pytest.mark.layout
def test_region_mode_splits_layout_blocks_and_reads_the_table(zoom):
    from docintent.synth.render import render_page

    img, reference = render_page(700, seed=2, chart=False)
    page = Page.from_array(img)
    ev = zoom.inspect(page, label="lower part", bbox=[0, 300, 1000, 900], type="region")
    kinds = [b.kind for b in ev.blocks]
    assert "table" in kinds, kinds
    table = next(b for b in ev.blocks if b.kind == "table")
    header = reference.splitlines()[-5]  # the table's header row, e.g. "Region Units Revenue"
    assert table.markdown.startswith("| " + " | ".join(header.split()) + " |"), table.markdown
    # block boxes are on the page and inside the zoomed region
    for b in ev.blocks:
        assert 0.29 <= b.box.y0 and b.box.y1 <= 0.91
    assert "blocks" in ev.summary()


def test_region_mode_without_rapid_layout_names_the_extra(zoom, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "rapid_layout", None)  # importing it now fails
    fresh = Zoom(engine=zoom.engine)
    page, _ = _page_with_turned_block(0)
    with pytest.raises(MissingDependencyError, match=r"pip install 'docintent\[layout\]'"):
        fresh.inspect(page, bbox=[0, 0, 1000, 1000], type="region")


def test_docintent_loop_runs_zoom_and_hands_the_evidence_to_the_brain():
    from docintent.brains import Answer, FunctionBrain, UseTool
    from docintent.strategies.core import get_strategy

    page, (x0, y0, x1, y1) = _page_with_turned_block(1)
    W, H = page.size
    bbox = [round(v) for v in ((x0 - 10) / W * 1000, (y0 - 10) / H * 1000, (x1 + 10) / W * 1000, (y1 + 10) / H * 1000)]
    calls = []

    def decide(state):
        calls.append(len(state.evidence))
        if not state.evidence:
            return UseTool("zoom", "the payment block lies sideways", {"label": "payment", "bbox": bbox, "angle": 90})
        amount = next(l.text for l in state.evidence[0].lines if "9,310.25" in l.text)
        return Answer(amount.split()[-1], 0.9)

    result = get_strategy("docintent", inspection=True, tools=[]).run(
        page, "What amount is due?", "doc", FunctionBrain(decide=decide)
    )
    assert result.answer == "9,310.25" and calls == [0, 1]
    step = next(s for s in result.trace if s.phase == "inspect")
    assert step.action == "inspected" and step.tool == "zoom"
    assert "9,310.25" in step.evidence and "turned 90 ccw" in step.evidence
