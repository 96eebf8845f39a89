"""Pages as structure: tables as cells, table questions over the grid, and ``docintent extract``."""

from __future__ import annotations

import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import numpy as np
import pytest

from conftest import font_path
from docintent.layout.structure import page_structure, xy_cut
from docintent.ocr.base import OcrLine, OcrResult
from docintent.page import Box, Page
from docintent.reader.table_qa import answer

HEAD = ["Bird", "Price", "Weight (kg)", "Stock"]
ROWS = [
    ["Emu", "$12.00", "36.5", "140"],
    ["Heron", "$8.50", "2.1", "95"],
    ["Ibis", "$4.75", "1.4", "310"],
    ["Kestrel", "$21.30", "0.2", "12"],
    ["Wren", "$3.10", "0.1", "870"],
]


def draw_table(
    style: str, *, title: str = "Price list"
) -> tuple[np.ndarray, dict[tuple[int, int], tuple[int, int, int, int]]]:
    """A page with a heading and the table in ``style`` (ruled, zebra or borderless); returns the image and each
    cell's pixel box (the cell's area, rules and padding included), keyed by (row, col) with the header row 0."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(font_path(), 24)
    bold = ImageFont.truetype(font_path("DejaVuSans-Bold.ttf"), 24)
    widths, row_h, x0, y0 = [190, 150, 190, 120], 46, 60, 160
    img = Image.new("RGB", (900, 560), "white")
    draw = ImageDraw.Draw(img)
    draw.text((x0, 60), title, fill="black", font=ImageFont.truetype(font_path("DejaVuSans-Bold.ttf"), 40))
    boxes = {}
    for r, row in enumerate([HEAD] + ROWS):
        top = y0 + r * row_h
        if style == "zebra" and r % 2 == 0 and r > 0:
            draw.rectangle([x0, top, x0 + sum(widths), top + row_h], fill=(226, 234, 246))
        left = x0
        for c, text in enumerate(row):
            boxes[(r, c)] = (left, top, left + widths[c], top + row_h)
            draw.text((left + 12, top + 10), text, fill="black", font=bold if r == 0 else font)
            if style == "ruled":
                draw.rectangle([left, top, left + widths[c], top + row_h], outline="black", width=2)
            left += widths[c]
        if style == "zebra" and r == 0:
            draw.line([x0, top + row_h, x0 + sum(widths), top + row_h], fill="black", width=3)
    return np.asarray(img), boxes


def _contains(outer: tuple[int, int, int, int], box: Box, w: int, h: int) -> bool:
    """``box`` (page fractions) is the cell ``outer`` (pixels): its centre inside it, and no larger than the cell
    and the few pixels of margin an OCR box has around its text."""
    x0, y0, x1, y1 = box.x0 * w, box.y0 * h, box.x1 * w, box.y1 * h
    centre = outer[0] <= (x0 + x1) / 2 <= outer[2] and outer[1] <= (y0 + y1) / 2 <= outer[3]
    return centre and outer[0] - 8 <= x0 and outer[1] - 8 <= y0 and x1 <= outer[2] + 8 and y1 <= outer[3] + 8


def _lines(rows: list[list[str]], top: float = 0.2) -> OcrResult:
    out = [OcrLine("Quarterly figures", Box(0.1, 0.05, 0.5, 0.09), 0.99)]
    for r, row in enumerate(rows):
        y = top + 0.04 * r
        for c, text in enumerate(row):
            out.append(OcrLine(text, Box(0.1 + 0.2 * c, y, 0.1 + 0.2 * c + 0.012 * len(text), y + 0.02), 0.95))
    out.append(
        OcrLine("All figures are unaudited and given in dollars for the period.", Box(0.1, 0.5, 0.8, 0.52), 0.97)
    )
    return OcrResult(tuple(out), "test", "")


def test_a_table_on_a_page_is_found_between_its_text_and_read_as_cells():
    s = page_structure(_lines([HEAD] + ROWS), 1000, 1400)
    kinds = [b.kind for b in s.blocks]
    assert kinds == ["heading", "table", "paragraph"]
    table = s.tables[0]
    assert (table.n_rows, table.n_cols, table.header_rows) == (6, 4, 1)
    assert table.lookup("Ibis", "Stock").text == "310"
    data = s.to_dict(page=3)
    assert data["page"] == 3 and data["tables"][0]["cells"][0] == {
        "row": 0,
        "col": 0,
        "colspan": 1,
        "header": True,
        "text": "Bird",
        "box": data["tables"][0]["cells"][0]["box"],
        "confidence": 0.95,
    }


def test_two_columns_of_text_are_read_column_by_column():
    left = [Box(0.05, 0.1 + 0.03 * i, 0.45, 0.12 + 0.03 * i) for i in range(5)]
    right = [Box(0.55, 0.1 + 0.03 * i, 0.95, 0.12 + 0.03 * i) for i in range(5)]
    title = [Box(0.05, 0.02, 0.95, 0.06)]
    boxes = title + [b for pair in zip(left, right) for b in pair]  # arrive interleaved row by row
    order = xy_cut(boxes)
    assert order == [0, 1, 3, 5, 7, 9, 2, 4, 6, 8, 10]


@pytest.mark.parametrize(
    ("question", "expected", "cells"),
    [
        ("What is the price of Heron?", "$8.50", 1),
        ("Which bird has the highest stock?", "Wren", 2),
        ("Which bird has the lowest weight?", "Wren", 2),
        ("What is the total stock?", "1427", 5),
        ("What is the average price?", "$9.93", 5),
        ("What is the difference in stock between Ibis and Heron?", "215", 2),
        ("How many rows are listed?", "5", 5),
    ],
)
def test_table_questions_are_answered_over_the_grid_with_the_cells_they_came_from(question, expected, cells):
    table = page_structure(_lines([HEAD] + ROWS), 1000, 1400).tables[0]
    got = answer([table], question)
    assert got is not None and got.text == expected
    assert len(got.cells) == cells
    assert all(got.box.x0 <= c.box.x0 + 1e-9 or got.box == got.cells[-1].box for c in got.cells[-1:])


def test_a_question_naming_no_column_of_any_table_gets_no_grid_answer():
    table = page_structure(_lines([HEAD] + ROWS), 1000, 1400).tables[0]
    assert answer([table], "Who signed the letter?") is None


@pytest.mark.parametrize("style", ["ruled", "zebra", "borderless"])
def test_a_table_answer_box_is_its_cell_in_every_style(style):
    import docintent

    pixels, cells = draw_table(style)
    page = Page.from_array(pixels, source=f"table-{style}")
    result = docintent.ask(page, "What is the Weight (kg) of Ibis?", task="table", strategy="none")
    assert result.answer == "1.4"
    assert result.box is not None and _contains(cells[(3, 2)], result.box, page.width, page.height), result.box
    assert result.provenance.read_box == result.box
    row = result.to_dict()
    assert row["box"] == row["provenance"]["box"]


def test_extract_writes_the_schema_markdown_and_csv(tmp_path):
    import jsonschema

    from docintent.io import save_page

    pixels, _ = draw_table("ruled")
    image = tmp_path / "table.png"
    save_page(Page.from_array(pixels), image)
    out = tmp_path / "out.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "docintent",
            "extract",
            str(image),
            "--out",
            str(out),
            "--tables",
            str(tmp_path / "csv"),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(out.read_text())
    schema = json.loads(resources.files("docintent").joinpath("data", "extract.schema.json").read_text())
    jsonschema.validate(data, schema)
    page = data["documents"][0]["pages"][0]
    assert [b["kind"] for b in page["blocks"]] == ["heading", "table"]
    table = page["tables"][0]
    assert (table["n_rows"], table["n_cols"]) == (6, 4)
    csv_file = tmp_path / "csv" / "table-p1-t0.csv"
    assert csv_file.read_text().splitlines()[3] == "Ibis,$4.75,1.4,310"
    md = tmp_path / "out.md"
    subprocess.run(
        [sys.executable, "-m", "docintent", "extract", str(image), "--out", str(md), "--no-progress"],
        check=True,
        capture_output=True,
        timeout=300,
    )
    assert "| Ibis | $4.75 | 1.4 | 310 |" in md.read_text()


def test_an_extracted_box_is_on_the_page_as_it_was_given(tmp_path):
    """The page arrives upside down: restoration turns it, and every box is mapped back onto the given page."""
    from docintent.extraction import extract_page

    pixels, cells = draw_table("borderless")
    turned = Page.from_array(np.ascontiguousarray(pixels[::-1, ::-1]), source="upside-down")
    data = extract_page(turned, 1)
    assert data["restored"] == ["rotate_180"]
    cell = next(c for t in data["tables"] for c in t["cells"] if c["text"] == "Kestrel")
    x0, y0, x1, y1 = cells[(4, 0)]
    w, h = turned.width, turned.height
    flipped = (w - x1, h - y1, w - x0, h - y0)  # the cell on the upside-down page
    assert _contains(flipped, Box(*cell["box"]), w, h), cell
    assert cell["read_box"] != cell["box"]


def test_a_stopped_extract_resumes_without_reading_a_page_twice(tmp_path, monkeypatch):
    from docintent import extraction
    from docintent.io import save_page

    folder = tmp_path / "scans"
    folder.mkdir()
    for i, style in enumerate(["ruled", "zebra", "borderless"]):
        save_page(Page.from_array(draw_table(style, title=f"Sheet {i}")[0]), folder / f"s{i}.png")
    real = extraction.extract_page
    calls: list[int] = []

    def stopping(page, number=1, **kw):
        calls.append(number)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(page, number, **kw)

    monkeypatch.setattr(extraction, "extract_page", stopping)
    out = tmp_path / "all.json"
    with pytest.raises(KeyboardInterrupt):
        extraction.extract_to(folder, out, restore=False, progress=False)
    assert not out.exists()
    journal = tmp_path / ".all.json.pages.jsonl"
    assert len(journal.read_text().splitlines()) == 1
    monkeypatch.setattr(extraction, "extract_page", real)
    seen: list[int] = []
    monkeypatch.setattr(
        extraction, "extract_page", lambda page, number=1, **kw: seen.append(number) or real(page, number, **kw)
    )
    summary = extraction.extract_to(folder, out, restore=False, progress=False)
    assert (summary.pages, summary.new_pages, summary.skipped) == (3, 2, 1)
    assert len(seen) == 2 and not journal.exists()
    files = [Path(d["file"]).name for d in json.loads(out.read_text())["documents"]]
    assert files == ["s0.png", "s1.png", "s2.png"]


def test_extract_of_a_missing_file_is_one_line(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "docintent", "extract", str(tmp_path / "nope.pdf"), "--out", str(tmp_path / "o.json")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1
    assert len(done.stderr.strip().splitlines()) == 1 and "nope.pdf" in done.stderr
    assert "Traceback" not in done.stderr


def test_any_words_give_a_structure_and_never_an_error():
    """Random words at random places (overlapping, tiny, across columns): a structure every time, each cell on the
    page and every word of a table in one of its cells."""
    hypothesis = pytest.importorskip("hypothesis")
    from hypothesis import given
    from hypothesis import strategies as st

    word = st.tuples(
        st.sampled_from(["Item", "12", "$4.50", "Total", "(3.1)", "2024", "a b", "x"]),
        st.floats(0, 0.9),
        st.floats(0, 0.95),
        st.floats(0.005, 0.1),
        st.floats(0.005, 0.04),
    )

    @given(st.lists(word, min_size=1, max_size=40))
    @hypothesis.settings(max_examples=150, deadline=None)
    def check(words):
        lines = tuple(OcrLine(t, Box(x, y, min(x + w, 1.0), min(y + h, 1.0)), 0.9) for t, x, y, w, h in words)
        s = page_structure(OcrResult(lines, "test", ""), 1000, 1400)
        for table in s.tables:
            for cell in (c for row in table.rows for c in row):
                assert 0.0 <= cell.box.x0 <= cell.box.x1 <= 1.0 and 0.0 <= cell.box.y0 <= cell.box.y1 <= 1.0

    check()
