"""Charts read as data tables: the values a user would read off a rendered chart, the questions answered over them,
and the chart in ``docintent extract`` (schema 1.1, Markdown, CSV)."""

from __future__ import annotations

import json
from importlib import resources

import numpy as np
import pytest

from conftest import font_path
from docintent.layout.lines import Layout
from docintent.page import Page
from docintent.reader.chart_qa import answer
from docintent.reader.chart_table import read_chart

REGIONS = ["North", "South", "East", "West"]
SALES = [80.0, 35.0, 60.0, 15.0]
GROUPED = {"2022": [40.0, 70.0, 25.0], "2023": [55.0, 45.0, 65.0]}
COLOURS = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189)]


def draw_bars(
    values: dict[str, list[float]],
    categories: list[str],
    *,
    labelled: bool = False,
    skip: tuple[int, int] | None = None,
) -> tuple[np.ndarray, dict[tuple[str, str], tuple[int, int, int, int]]]:
    """A vertical bar chart (grouped when ``values`` has several series, with a legend) on a 0-100 axis; returns the
    image and each bar's pixel box. ``skip``: (series, category) index of a bar not drawn."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(font_path(), 20)
    img = Image.new("RGB", (860, 560), "white")
    draw = ImageDraw.Draw(img)
    draw.text((250, 14), "Sales by region", fill="black", font=ImageFont.truetype(font_path("DejaVuSans-Bold.ttf"), 26))
    left, right, top, bottom = 110, 820, 90, 470
    for tick in range(0, 101, 20):
        y = bottom - (bottom - top) * tick / 100
        draw.line([left, y, right, y], fill=(225, 225, 225), width=1)
        draw.text((left - 12, y), str(tick), fill="black", font=font, anchor="rm")
    draw.line([left, top, left, bottom], fill="black", width=2)
    draw.line([left, bottom, right, bottom], fill="black", width=2)
    names = list(values)
    band = (right - left) / len(categories)
    width = band * 0.7 / len(names)
    boxes = {}
    for i, cat in enumerate(categories):
        draw.text((left + band * (i + 0.5), bottom + 22), cat, fill="black", font=font, anchor="mm")
        for k, name in enumerate(names):
            if skip == (k, i):
                continue
            v = values[name][i]
            x0 = left + band * i + band * 0.15 + width * k
            y0 = bottom - (bottom - top) * v / 100
            boxes[(name, cat)] = (int(x0), int(y0), int(x0 + width), bottom)
            draw.rectangle([x0, y0, x0 + width, bottom - 1], fill=COLOURS[k])
            if labelled:
                draw.text((x0 + width / 2, y0 - 14), f"{v:.0f}", fill="black", font=font, anchor="mm")
    if len(names) > 1:
        for k, name in enumerate(names):
            x = 560 + 120 * k
            draw.rectangle([x, 56, x + 18, 74], fill=COLOURS[k])
            draw.text((x + 26, 65), name, fill="black", font=font, anchor="lm")
    return np.asarray(img), boxes


def draw_pie(shares: list[int], names: list[str]) -> np.ndarray:
    """A pie chart without printed shares: the slices' names outside the disc."""
    import math

    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(font_path(), 22)
    img = Image.new("RGB", (760, 620), "white")
    draw = ImageDraw.Draw(img)
    draw.text(
        (230, 14), "Orders by channel", fill="black", font=ImageFont.truetype(font_path("DejaVuSans-Bold.ttf"), 26)
    )
    cx, cy, r = 380, 330, 200
    angle = -90.0
    for k, (share, name) in enumerate(zip(shares, names)):
        sweep = 360.0 * share / sum(shares)
        draw.pieslice([cx - r, cy - r, cx + r, cy + r], angle, angle + sweep, fill=COLOURS[k], outline="white", width=2)
        mid = math.radians(angle + sweep / 2)
        draw.text(
            (cx + (r + 50) * math.cos(mid), cy + (r + 30) * math.sin(mid)), name, fill="black", font=font, anchor="mm"
        )
        angle += sweep
    return np.asarray(img)


def _read(pixels: np.ndarray):
    from docintent.ocr import get_engine

    page = Page.from_array(pixels, source="chart-test")
    layout = Layout.from_ocr(get_engine("rapidocr").read(page))
    return read_chart(layout, page), page


@pytest.fixture(scope="module")
def bars():
    pixels, boxes = draw_bars({"Sales": SALES}, REGIONS)
    chart, page = _read(pixels)
    return chart, page, boxes


def test_bars_without_printed_values_are_measured_on_the_axis(bars):
    chart, page, boxes = bars
    assert chart is not None and chart.kind == "bar"
    assert chart.categories == REGIONS
    assert [round(v.value) for v in chart.values] == [80, 35, 60, 15]
    assert {v.how for v in chart.values} == {"measured"}
    for v in chart.values:  # each value keeps the box of its bar
        x0, y0, x1, y1 = boxes[("Sales", v.category)]
        box = v.box
        assert abs(box.y0 * page.height - y0) <= 3 and x0 - 3 <= (box.x0 + box.x1) / 2 * page.width <= x1 + 3


def test_printed_value_labels_are_preferred_and_a_missing_bar_is_unread_not_guessed():
    pixels, _ = draw_bars(
        {"2022": GROUPED["2022"], "2023": GROUPED["2023"]}, ["Lyon", "Oslo", "Turin"], labelled=True, skip=(1, 2)
    )
    chart, _page = _read(pixels)
    assert chart is not None and chart.series == ["2022", "2023"]
    table = {(v.series, v.category): (v.value, v.how) for v in chart.values}
    assert table[("2022", "Oslo")] == (70.0, "label")
    assert table[("2023", "Lyon")] == (55.0, "label")
    assert table[("2023", "Turin")] == (None, "unread")


def test_a_pie_without_printed_shares_is_read_from_its_angles():
    chart, _page = _read(draw_pie([45, 30, 15, 10], ["Online", "Phone", "Store", "Mail"]))
    assert chart is not None and chart.kind == "pie"
    shares = {v.category: v.value for v in chart.values}
    assert set(shares) == {"Online", "Phone", "Store", "Mail"}
    assert all(abs(shares[n] - s) <= 1.5 for n, s in zip(["Online", "Phone", "Store", "Mail"], [45, 30, 15, 10])), (
        shares
    )


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the value for East?", "60"),
        ("Which region has the highest sales?", "North"),
        ("Which region has the lowest value?", "West"),
        ("What is the difference between North and South?", "45"),
        ("How many regions are shown?", "4"),
        ("Did sales increase or decrease from North to East?", "decrease"),
        ("What share of the total does North have, in percent?", "42.1"),
    ],
)
def test_chart_questions_are_answered_over_the_data_table(bars, question, expected):
    """Values measured off unlabelled bars are as close as a reader with a ruler gets: within 1 % of the axis."""
    chart, _page, _boxes = bars
    got = answer(chart, question)
    assert got is not None
    if expected[0].isdigit():
        assert abs(float(got.text) - float(expected)) <= 1.0, got.text
    else:
        assert got.text == expected


def test_a_chart_question_asked_through_the_reader_gets_the_bar_as_its_box(bars):
    import docintent

    chart, page, boxes = bars
    result = docintent.ask(page, "What is the value for East?", task="chart", strategy="none")
    assert abs(float(result.answer) - 60) <= 1.0
    x0, y0, x1, y1 = boxes[("Sales", "East")]
    assert result.box is not None and x0 - 4 <= (result.box.x0 + result.box.x1) / 2 * page.width <= x1 + 4


def test_extract_gives_the_chart_as_a_data_table_in_json_markdown_and_csv(bars, tmp_path):
    import jsonschema

    from docintent.extraction import envelope, extract_page, to_markdown, write_tables

    _chart, page, _boxes = bars
    data = envelope([{"file": "sales.png", "pages": [extract_page(page, 1, restore=False)]}])
    schema = json.loads(resources.files("docintent").joinpath("data", "extract.schema.json").read_text())
    jsonschema.validate(data, schema)
    assert data["version"] == "1.1"
    got = data["documents"][0]["pages"][0]
    chart = got["charts"][0]
    assert chart["categories"] == REGIONS and len(chart["series"]) == 1
    assert [round(v["value"]) for v in chart["values"]] == [80, 35, 60, 15]
    assert all(0 < v["confidence"] <= 1 and len(v["box"]) == 4 for v in chart["values"])
    assert "chart" in [b["kind"] for b in got["blocks"]]
    markdown = to_markdown(data)
    assert "| North |" in markdown and "| West |" in markdown
    csv_file = next(p for p in write_tables(data, tmp_path) if p.name == "sales-p1-c0.csv")
    rows = [line.split(",") for line in csv_file.read_text().splitlines()[1:]]
    assert [r[0] for r in rows] == REGIONS
    assert all(abs(float(r[1]) - v) <= 1.0 for r, v in zip(rows, SALES))


def test_a_version_1_0_extract_is_still_valid_under_the_1_1_schema():
    import jsonschema

    schema = json.loads(resources.files("docintent").joinpath("data", "extract.schema.json").read_text())
    old = {
        "schema": "docintent.extract",
        "version": "1.0",
        "docintent": "0.1.0",
        "documents": [
            {
                "file": "a.png",
                "pages": [
                    {
                        "page": 1,
                        "width": 10,
                        "height": 10,
                        "source": "ocr",
                        "restored": [],
                        "tables": [],
                        "blocks": [
                            {"order": 0, "kind": "paragraph", "text": "Hello", "box": [0, 0, 1, 0.1], "confidence": 0.9}
                        ],
                    }
                ],
            }
        ],
    }
    jsonschema.validate(old, schema)
    old["documents"][0]["pages"][0]["charts"] = [{"index": 0, "kind": "donut"}]
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(old, schema)


def test_a_page_of_text_has_no_chart():
    from conftest import render_text_page

    chart, _page = _read(
        render_text_page(
            [
                "Dear Ms Moreno,",
                "thank you for your letter of 3 May.",
                "1. The order",
                "2. The invoice",
                "3. The delivery",
            ]
        )
    )
    assert chart is None
