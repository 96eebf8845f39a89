"""Table reconstruction from OCR words: cells land in the right rows and columns, lookups find them."""

from __future__ import annotations

import pytest

from docintent.layout.table import Table, reconstruct_table
from docintent.numbers import parse_cell_number as parse_number
from docintent.ocr import get_engine
from docintent.page import Box, Page
from docintent.synth.table_images import cell_accuracy, mildly_degraded, render_table


def _words(rows: list[list[tuple[str, float, float]]], top: float = 0.1, pitch: float = 0.1) -> list[tuple[str, Box]]:
    """(text, x0, x1) per word, one list per printed line, as page-fraction boxes on a square page."""
    out = []
    for r, row in enumerate(rows):
        y = top + r * pitch
        out += [(t, Box(x0, y, x1, y + 0.04)) for t, x0, x1 in row]
    return out


def test_right_aligned_figures_multi_word_labels_and_a_spanning_caption():
    words = _words(
        [
            [("Year", 0.52, 0.6), ("ended", 0.61, 0.7), ("June", 0.71, 0.78), ("30,", 0.79, 0.83)],
            [("2024", 0.6, 0.66), ("2023", 0.84, 0.9)],
            [("Net", 0.05, 0.09), ("sales", 0.1, 0.16), ("$1,204.5", 0.55, 0.66), ("$998.0", 0.8, 0.9)],
            [
                ("Cost", 0.05, 0.1),
                ("of", 0.11, 0.13),
                ("sales", 0.14, 0.2),
                ("(612.3)", 0.58, 0.66),
                ("(401.9)", 0.82, 0.9),
            ],
            [("Gross", 0.05, 0.11), ("margin", 0.12, 0.2), ("49.2%", 0.59, 0.66), ("59.7%", 0.83, 0.9)],
        ]
    )
    table = reconstruct_table(words, page_size=(1000, 1000))
    assert (table.n_rows, table.n_cols, table.header_rows) == (5, 3, 2)
    caption = table.cell(0, 1)
    assert caption.text == "Year ended June 30," and caption.colspan == 2
    assert table.column_names() == ["", "Year ended June 30, 2024", "Year ended June 30, 2023"]
    assert table.lookup("cost of sales", "2023").value == pytest.approx(-401.9)
    assert table.lookup("Gross margn", "2024").text == "49.2%"  # a misspelt label still matches
    assert [c.text for c in table.column("2024")] == ["$1,204.5", "(612.3)", "49.2%"]
    assert table.lookup("Operating income", "2024") is None
    md = table.to_markdown().splitlines()
    assert md[0] == "|  | Year ended June 30, 2024 | Year ended June 30, 2023 |"
    assert md[3] == "| Cost of sales | (612.3) | (401.9) |"
    assert '<th colspan="2">Year ended June 30,</th>' in table.to_html()


def test_empty_cells_stay_empty_and_keep_their_column():
    words = _words(
        [
            [("Item", 0.05, 0.12), ("Q1", 0.5, 0.55), ("Q2", 0.7, 0.75), ("Q3", 0.9, 0.95)],
            [("Fees", 0.05, 0.12), ("10", 0.5, 0.55), ("30", 0.9, 0.95)],
            [("Rent", 0.05, 0.12), ("11", 0.5, 0.55), ("21", 0.7, 0.75), ("31", 0.9, 0.95)],
        ]
    )
    table = reconstruct_table(words, page_size=(1000, 1000))
    assert table.grid() == [["Item", "Q1", "Q2", "Q3"], ["Fees", "10", "", "30"], ["Rent", "11", "21", "31"]]
    assert table.lookup("fees", "Q3").text == "30" and table.lookup("fees", "Q2").text == ""


def test_region_keeps_only_words_inside_and_empty_input_gives_empty_table():
    words = _words([[("A", 0.05, 0.1), ("1", 0.5, 0.55)], [("B", 0.05, 0.1), ("2", 0.5, 0.55)]])
    words.append(("footnote", Box(0.05, 0.9, 0.3, 0.94)))
    table = reconstruct_table(words, region=Box(0, 0, 1, 0.5), page_size=(1000, 1000))
    assert table.grid() == [["A", "1"], ["B", "2"]]
    empty = reconstruct_table([])
    assert isinstance(empty, Table) and empty.n_rows == 0 and empty.to_markdown() == ""


@pytest.mark.parametrize(
    "text, value",
    [
        ("$1,234.5", 1234.5),
        ("(612.3)", -612.3),
        ("$(786.5)", -786.5),
        ("18.0%", 18.0),
        ("(1.0%)", -1.0),
        ("\u22123.2", -3.2),
        ("n/m", None),
        ("Revenue", None),
        ("\u2014", None),
    ],
)
def test_parse_number_reads_financial_notation(text, value):
    assert parse_number(text) == (pytest.approx(value) if value is not None else None)


@pytest.fixture(scope="module")
def engine():
    return get_engine("rapidocr", cache=False)


@pytest.mark.parametrize("style, seed", [("plain", 11), ("spanning", 1)])  # two-line headers: the tight test
def test_rendered_tables_are_rebuilt_cell_for_cell(engine, style, seed):
    truth = render_table(seed, style=style)
    page = Page.from_array(truth.image)
    table = reconstruct_table(engine.read(page), page_size=page.size)
    assert table.header_rows == truth.header_rows
    assert cell_accuracy(table.grid(), truth.grid) >= 0.95, table.to_markdown()


def test_tight_serif_table_keeps_neighbouring_figures_apart(engine):
    # about one character between the widest figures and their neighbours, header words likewise
    truth = render_table(503, style="stacked", serif=True, column_em=5.5, font_px=16)
    page = Page.from_array(truth.image)
    table = reconstruct_table(engine.read(page), page_size=page.size)
    assert cell_accuracy(table.grid(), truth.grid) >= 0.95, table.to_markdown()


def test_words_the_ocr_glued_together_are_split_into_cells():
    words = _words(
        [
            [("Item", 0.05, 0.2), ("2024", 0.55, 0.62), ("2023", 0.75, 0.82)],
            [
                ("Research", 0.05, 0.2),
                ("and", 0.21, 0.26),
                ("development$66,343.4", 0.27, 0.62),
                ("$81,455.1", 0.7, 0.82),
            ],
            [("Gross", 0.05, 0.13), ("profit", 0.14, 0.22), ("(467)(15,974.9)", 0.52, 0.82)],
        ]
    )
    table = reconstruct_table(words, page_size=(1000, 1000))
    assert table.grid()[1:] == [
        ["Research and development", "$66,343.4", "$81,455.1"],
        ["Gross profit", "(467)", "(15,974.9)"],
    ]


def test_mildly_degraded_photo_of_a_table_still_reads(engine):
    truth = render_table(4, style="stacked")
    page = Page.from_array(mildly_degraded(truth.image, seed=4))
    table = reconstruct_table(engine.read(page))  # no page size: the aspect ratio is estimated
    assert cell_accuracy(table.grid(), truth.grid) >= 0.9, table.to_markdown()
    label = truth.grid[-1][0]
    assert table.lookup(label, truth.grid[0][1]).text == truth.grid[-1][1]


def test_overlapping_spans_in_one_row_fold_into_one_cell_without_losing_a_word():
    """Garbled OCR of a captured table row: three spans overlapping in a chain (columns 0-1, 1-3, and a single
    column further right). Folding them must keep every word once (it used to fail with a KeyError)."""
    from docintent.layout.table import _resolve, _Seg

    def seg(text):
        return _Seg(text, 0.0, 0.0, x1=0.1, y1=0.1)

    slots = {
        (0, 2): [seg("13032")],
        (1, 3): [seg("$608e8")],
        (4, 2): [seg("$474$5")],
        (9, 1): [seg("Inte")],
        (10, 2): [seg("est neennse")],
    }
    out = _resolve(slots, 12)
    words = sorted(s.text for segs in out.values() for s in segs)
    assert words == sorted(["13032", "$608e8", "$474$5", "Inte", "est neennse"])
    covered = [c for first, n in out for c in range(first, first + n)]
    assert len(covered) == len(set(covered))  # the slots are disjoint
