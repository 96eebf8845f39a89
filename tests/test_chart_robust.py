"""Charts read off photographs: what a capture does to a chart (a shadow, a colour cast, an angle, misread or merged
tick labels, a slice split by light) and the values a user still gets, within 5 % as the chart benchmark scores."""

from __future__ import annotations

import math

import cv2
import numpy as np
import pytest

from docintent.layout.lines import Item, Layout
from docintent.page import Box, Page
from docintent.reader.chart_table import read_chart
from test_chart_table import COLOURS, REGIONS, SALES, _read, draw_bars, draw_pie


def within(got: float | None, gold: float, rel: float = 0.05) -> bool:
    return got is not None and abs(got - gold) <= rel * abs(gold)


def shadow_and_cast(pixels: np.ndarray) -> np.ndarray:
    """A hand's soft-edged shadow over the left of the chart (paper there at 55 %, a little blue), a light gradient
    and a warm colour cast, as a phone photo has them."""
    h, w = pixels.shape[:2]
    mask = np.zeros((h, w), np.float32)
    cv2.fillPoly(mask, [np.int32([[0, 0], [int(0.5 * w), 0], [int(0.38 * w), h], [0, h]])], 1.0)
    shade = cv2.GaussianBlur(mask, (0, 0), 0.01 * w)
    light = (1.0 - 0.45 * shade) * (1.0 - 0.2 * np.linspace(0, 1, w, dtype=np.float32))[None, :]
    tint = 1.0 - shade[:, :, None] * np.array([0.04, 0.02, 0.0], np.float32)
    cast = np.array([1.0, 0.9, 0.76], np.float32)
    return np.clip(pixels.astype(np.float32) * light[:, :, None] * tint * cast, 0, 255).astype(np.uint8)


def test_bars_under_a_shadow_and_a_colour_cast_read_as_on_the_render():
    pixels, _boxes = draw_bars({"Sales": SALES}, REGIONS)
    chart, _page = _read(shadow_and_cast(pixels))
    assert chart is not None and chart.categories == REGIONS
    got = {v.category: v.value for v in chart.values}
    assert all(within(got[c], v) for c, v in zip(REGIONS, SALES)), got


def on_a_desk_at_an_angle(pixels: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The chart photographed at an angle lying on a dark desk; returns the photo and the page-to-photo matrix."""
    h, w = pixels.shape[:2]
    out_w, out_h = int(w * 1.25), int(h * 1.3)
    corners = (np.float32([[0.12, 0.08], [0.93, 0.15], [0.88, 0.95], [0.05, 0.86]]) * [out_w, out_h]).astype(np.float32)
    matrix = cv2.getPerspectiveTransform(np.float32([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]]), corners)
    desk = np.full((out_h, out_w, 3), (58, 44, 36), np.uint8)
    warped = cv2.warpPerspective(pixels, matrix, (out_w, out_h), flags=cv2.INTER_LINEAR)
    inside = cv2.warpPerspective(np.full((h, w), 255, np.uint8), matrix, (out_w, out_h)) > 127
    desk[inside] = warped[inside]
    return desk, matrix


def test_bars_photographed_at_an_angle_read_right_and_their_boxes_lie_on_the_photo():
    # (a bar measured off a photo is good to about 1 % of the axis, so no bar is shorter than a quarter of it)
    sales = [80.0, 35.0, 60.0, 25.0]
    pixels, boxes = draw_bars({"Sales": sales}, REGIONS)
    photo, matrix = on_a_desk_at_an_angle(pixels)
    chart, page = _read(photo)
    assert chart is not None and chart.categories == REGIONS
    got = {v.category: v.value for v in chart.values}
    assert all(within(got[c], v) for c, v in zip(REGIONS, sales)), got
    for v in chart.values:  # each value's box is its bar, where the bar is in the photo
        x0, y0, x1, y1 = boxes[("Sales", v.category)]
        centre = cv2.perspectiveTransform(np.float64([[[(x0 + x1) / 2, (y0 + y1) / 2]]]), matrix)[0, 0]
        box = v.box
        assert box.x0 * page.width <= centre[0] <= box.x1 * page.width
        assert box.y0 * page.height - 5 <= centre[1] <= box.y1 * page.height + 5


def plain_bars(values: list[float], top: float = 100.0) -> tuple[np.ndarray, list[float]]:
    """Bars on white over a 0..top axis whose zero line is at y = 0.75 and top at y = 0.3; returns the pixels and
    each bar's centre x (page fraction)."""
    px = np.full((400, 600, 3), 255, np.uint8)
    xs = []
    for k, v in enumerate(values):
        x0 = 150 + 110 * k
        y_top = int(round(400 * (0.75 - 0.45 * v / top)))
        px[y_top:300, x0 : x0 + 60] = COLOURS[0]
        xs.append((x0 + 30) / 600)
    return px, xs


def items(spec: list[tuple[str, float, float, float, float]]) -> Layout:
    return Layout([Item(t, Box(x0, y0, x1, y1), 0.95, k) for k, (t, x0, y0, x1, y1) in enumerate(spec)])


def tick(text: str, value: float, top: float = 100.0) -> tuple[str, float, float, float, float]:
    y = 0.75 - 0.45 * value / top
    return (text, 0.10, y - 0.025, 0.2, y + 0.025)


def test_percent_ticks_the_ocr_misread_still_give_the_scale():
    """A photo's "20%" comes back as "2096", "60%" as "60%6" and the "0%" is lost: the axis still fits."""
    values = [60.0, 35.0, 80.0]
    px, xs = plain_bars(values)
    cats = [(name, x - 0.04, 0.78, x + 0.04, 0.82) for name, x in zip(["Chile", "India", "Spain"], xs)]
    layout = items([tick("2096", 20), tick("40%", 40), tick("60%6", 60), tick("80%", 80), tick("100%", 100)] + cats)
    chart = read_chart(layout, Page.from_array(px, source="misread-ticks"))
    assert chart is not None and chart.categories == ["Chile", "India", "Spain"]
    assert all(within(v.value, g) for v, g in zip(chart.values, values)), chart.values


def test_a_tick_row_the_ocr_read_as_one_line_is_split_into_its_ticks():
    """Horizontal bars whose value ticks came back as one line "0 25 50 75 100"."""
    px = np.full((400, 600, 3), 255, np.uint8)
    values = [75.0, 40.0, 90.0]
    for k, v in enumerate(values):
        y0 = 60 + 90 * k
        px[y0 : y0 + 50, 150 : 150 + int(round(400 * v / 100))] = COLOURS[1]
    cats = [
        (name, 0.05, (85 + 90 * k) / 400 - 0.025, 0.2, (85 + 90 * k) / 400 + 0.025)
        for k, name in enumerate(["Oslo", "Lima", "Rome"])
    ]
    # one line box over the five labels, digits 12 px wide: "0" centred on the bars' base (x = 150 px), "100" on
    # x = 550 px
    row = [("0 25 50 75 100", 144 / 600, 0.9, 568 / 600, 0.95)]
    chart = read_chart(items(row + cats), Page.from_array(px, source="merged-ticks"))
    assert chart is not None and chart.kind == "hbar" and chart.categories == ["Oslo", "Lima", "Rome"]
    assert all(within(v.value, g) for v, g in zip(chart.values, values)), chart.values


def test_categories_are_found_under_bars_whose_zero_tick_the_ocr_lost():
    values = [30.0, 70.0, 45.0]
    px, xs = plain_bars(values)
    px[300:302, 140:560] = 0  # the zero line
    # the labels sit under the zero line, more than a fifth of the page under the lowest tick the OCR kept
    cats = [(name, x - 0.04, 0.79, x + 0.04, 0.83) for name, x in zip(["Peru", "Iran", "Mali"], xs)]
    layout = items([tick("50", 50), tick("75", 75), tick("100", 100)] + cats)
    chart = read_chart(layout, Page.from_array(px, source="lost-zero"))
    assert chart is not None and chart.categories == ["Peru", "Iran", "Mali"]
    assert all(within(v.value, g) for v, g in zip(chart.values, values)), chart.values


def test_a_legend_over_horizontal_bars_is_not_taken_for_a_category():
    px = np.full((400, 600, 3), 255, np.uint8)
    plan, actual = [60.0, 20.0, 45.0], [30.0, 50.0, 25.0]
    for k, (a, b) in enumerate(zip(plan, actual)):
        y0 = 90 + 90 * k
        px[y0 : y0 + 30, 150 : 150 + int(round(4 * a))] = COLOURS[0]
        px[y0 + 30 : y0 + 60, 150 : 150 + int(round(4 * b))] = COLOURS[1]
    px[40:52, 160:172] = COLOURS[0]
    px[40:52, 260:272] = COLOURS[1]
    spec = [
        ("Spending by city", 0.35, 0.01, 0.65, 0.07),
        ("Plan", 176 / 600, 0.09, 230 / 600, 0.13),
        ("Actual", 276 / 600, 0.09, 340 / 600, 0.13),
    ]
    spec += [
        (name, 0.05, (120 + 90 * k) / 400 - 0.025, 0.22, (120 + 90 * k) / 400 + 0.025)
        for k, name in enumerate(["Oslo", "Lima", "Rome"])
    ]
    # the OCR lost the ticks "0" and "25": the labels' column reaches over the legend
    spec += [(str(v), (150 + 4 * v) / 600 - 0.02, 0.9, (150 + 4 * v) / 600 + 0.02, 0.95) for v in (50, 75, 100)]
    chart = read_chart(items(spec), Page.from_array(px, source="legend-row"))
    assert chart is not None and chart.categories == ["Oslo", "Lima", "Rome"]
    assert chart.series == ["Plan", "Actual"]
    got = {(v.series, v.category): v.value for v in chart.values}
    assert all(within(got[("Plan", c)], g) for c, g in zip(["Oslo", "Lima", "Rome"], plan)), got
    assert all(within(got[("Actual", c)], g) for c, g in zip(["Oslo", "Lima", "Rome"], actual)), got


@pytest.mark.parametrize("blur", [0.0, 1.5])
def test_a_pie_with_a_shadow_edge_across_a_slice_keeps_its_slices(blur: float):
    """A shadow's edge across the disc splits a slice into a light and a dark part, and blur leaves pale slivers
    along the slices' edges: neither is a slice of its own."""
    shares = [40, 25, 20, 15]
    names = ["Online", "Phone", "Store", "Mail"]
    pixels = draw_pie(shares, names)
    h, w = pixels.shape[:2]
    mask = np.zeros((h, w), np.float32)
    cv2.fillPoly(mask, [np.int32([[int(0.55 * w), 0], [w, 0], [w, h], [int(0.7 * w), h]])], 1.0)
    shade = cv2.GaussianBlur(mask, (0, 0), 4)
    shot = np.clip(pixels.astype(np.float32) * (1.0 - 0.4 * shade)[:, :, None], 0, 255).astype(np.uint8)
    if blur:
        shot = cv2.GaussianBlur(shot, (0, 0), blur)
    chart, _page = _read(shot)
    assert chart is not None and chart.kind == "pie"
    got = {v.category: v.value for v in chart.values}
    assert sorted(got) == sorted(names), got
    assert all(within(got[n], s) for n, s in zip(names, shares)), got
    assert math.isclose(sum(v or 0 for v in got.values()), 100, abs_tol=3)
