"""Reading charts from OCR and pixels: category labels, value labels, axis ticks and bar lengths."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from ...page import Box, Page
from .extract import Matcher
from .layout import Item, Layout
from .question import QuestionInfo
from .values import find_numbers, format_number, parse_number


@dataclass
class Axis:
    """A linear map from pixel position (page fraction) to data value, fitted to tick labels."""

    vertical: bool  # ticks stacked vertically (y axis of a vertical bar/line chart)
    slope: float
    intercept: float
    ticks: list[Item]

    def value(self, pos: float) -> float:
        return self.slope * pos + self.intercept

    def pos(self, value: float) -> float:
        return (value - self.intercept) / self.slope


def _numeric(item: Item) -> float | None:
    return parse_number(item.text)


def find_axis(numeric: list[Item], vertical: bool) -> Axis | None:
    """Tick labels: >= 3 numeric items aligned in a column (or row) whose values are linear in position."""
    best: Axis | None = None
    best_n = 0
    for anchor in numeric:
        if vertical:
            group = [o for o in numeric if abs(o.box.x1 - anchor.box.x1) < 1.2 * anchor.h]
            pos = np.array([o.cy for o in group])
        else:
            group = [o for o in numeric if abs(o.cy - anchor.cy) < 0.6 * anchor.h]
            pos = np.array([o.cx for o in group])
        if len(group) < 3 or len(group) <= best_n:
            continue
        vals = np.array([_numeric(o) for o in group], dtype=float)
        if np.ptp(pos) <= 0 or np.ptp(vals) <= 0:
            continue
        slope, intercept = np.polyfit(pos, vals, 1)
        resid = np.abs(vals - (slope * pos + intercept))
        if resid.max() <= 0.03 * np.ptp(vals):
            best, best_n = Axis(vertical, float(slope), float(intercept), group), len(group)
    return best


def _categories(layout: Layout, exclude: set[int]) -> list[Item]:
    return [it for it in layout.items if it.index not in exclude and re.search(r"[A-Za-z]", it.text) and _numeric(it) is None]


def _best_category(info: QuestionInfo, cats: list[Item], matcher: Matcher) -> tuple[Item | None, float]:
    scored = [(matcher.match(c)[0], c) for c in cats]
    scored = [s for s in scored if s[0] > 0]
    if not scored:
        return None, 0.0
    score, item = max(scored, key=lambda s: s[0])
    return item, score


def _value_label_for(cat: Item, labels: list[Item], vertical_bars: bool) -> Item | None:
    """The value label in the category's lane (same column for vertical bars, same row for horizontal)."""
    if vertical_bars:
        lane = [l for l in labels if abs(l.cx - cat.cx) < max(cat.box.width, 3 * cat.h) * 0.6]
        return min(lane, key=lambda l: abs(l.cx - cat.cx)) if lane else None
    lane = [l for l in labels if abs(l.cy - cat.cy) < 0.7 * cat.h]
    return min(lane, key=lambda l: abs(l.cx - cat.cx)) if lane else None


def _bar_end(page: Page, cat: Item, axis: Axis, vertical_bars: bool) -> float | None:
    """Measure the bar in a category's lane: the far end of saturated / dark non-paper pixels, as a value."""
    rgb = page.pixels.astype(np.int16)
    h, w = rgb.shape[:2]
    sat = rgb.max(axis=2) - rgb.min(axis=2)
    ink = (sat > 40) | (rgb.mean(axis=2) < 150)
    if vertical_bars:
        x = int(round(cat.cx * w))
        half = max(2, int(round(cat.box.width * w * 0.15)))
        lane = ink[:, max(0, x - half) : x + half + 1].mean(axis=1) > 0.6
        top_limit = int(min(t.box.y0 for t in axis.ticks) * h) - 5
        base = int(round(axis.pos(0.0) * h)) if axis.slope != 0 else int(cat.box.y0 * h)
        base = min(max(base, 0), h - 1)
        rows = np.where(lane[max(top_limit, 0) : base])[0]
        if rows.size == 0:
            return None
        return axis.value((rows.min() + max(top_limit, 0)) / h)
    y = int(round(cat.cy * h))
    half = max(2, int(round(cat.h * h * 0.3)))
    lane = ink[max(0, y - half) : y + half + 1, :].mean(axis=0) > 0.6
    start = int(cat.box.x1 * w) + 2
    cols = np.where(lane[start:])[0]
    if cols.size == 0:
        return None
    # the bar is the first long run after the label
    runs = np.split(cols, np.where(np.diff(cols) > 2)[0] + 1)
    run = max(runs, key=len)
    return axis.value((run.max() + start) / w)


def solve_chart(info: QuestionInfo, layout: Layout, page: Page, matcher: Matcher):
    """Answer chart questions about category values, extremes, differences and counts; None to fall back."""
    from .answer import Solution

    numeric = [it for it in layout.items if _numeric(it) is not None]
    y_axis = find_axis(numeric, vertical=True)
    x_axis = find_axis(numeric, vertical=False)
    axis = y_axis or x_axis
    vertical_bars = axis is None or axis.vertical
    tick_ids = {t.index for t in axis.ticks} if axis else set()
    labels = [it for it in numeric if it.index not in tick_ids]
    cats = _categories(layout, tick_ids)
    if vertical_bars and axis is not None:
        # category labels sit below the plot, under the lowest tick
        bottom = max(t.box.y1 for t in axis.ticks)
        cats = [c for c in cats if c.box.y0 >= bottom - 2 * c.h] or cats

    def value_of(cat: Item) -> tuple[float | None, str]:
        label = _value_label_for(cat, labels, vertical_bars)
        if label is not None:
            nums = find_numbers(label.text)
            if nums:
                return nums[0].value, "value label"
        # pie/legend style: "Category 35%" in one item, or the number right next to it
        nums = find_numbers(cat.text)
        if nums:
            return nums[-1].value, "label text"
        for o in layout.right_of(cat)[:1]:
            v = _numeric(o)
            if v is not None:
                return v, "value beside label"
        if axis is not None:
            v = _bar_end(page, cat, axis, vertical_bars)
            if v is not None:
                return v, "bar measured on the axis"
        return None, ""

    if info.intent == "count":
        lane_cats = cats
        if axis is not None and vertical_bars:
            bottom = max(t.box.y1 for t in axis.ticks)
            row = [c for c in cats if c.box.y0 >= bottom - 2 * c.h]
            lane_cats = row or cats
        n = len(lane_cats)
        if n:
            return Solution(str(n), 0.5, layout.region_of(lane_cats), "counted category labels")
        return None

    if info.intent in ("max", "min") and cats:
        values = [(c, *value_of(c)) for c in cats]
        values = [v for v in values if v[1] is not None]
        if len(values) >= 2:
            pick = max(values, key=lambda v: v[1]) if info.intent == "max" else min(values, key=lambda v: v[1])
            text = pick[0].text if info.answer_type == "category" else format_number(pick[1])
            return Solution(text, 0.65, layout.region_of([v[0] for v in values]), f"{info.intent} over categories ({pick[2]})")
        return None

    if info.intent in ("diff", "sum", "avg", "ratio") and len(info.targets) == 2:
        picked = []
        for target in info.targets:
            sub = Matcher(QuestionInfo(target, "number", "lookup", [w.lower() for w in re.findall(r"[A-Za-z0-9]+", target)]), layout)
            item, score = _best_category(info, cats, sub)
            if item is None:
                return None
            v, how = value_of(item)
            if v is None:
                return None
            picked.append((item, v))
        a, b = picked[0][1], picked[1][1]
        result = {"diff": abs(a - b), "sum": a + b, "avg": (a + b) / 2, "ratio": a / b if b else 0.0}[info.intent]
        return Solution(format_number(result), 0.6, layout.region_of([p[0] for p in picked]), f"{info.intent} of two categories")

    if info.intent == "lookup":
        item, score = _best_category(info, cats, matcher)
        if item is None:
            return None
        v, how = value_of(item)
        if v is None:
            return None
        conf = min(0.4 + 0.5 * score, 0.9) if how != "bar measured on the axis" else min(0.3 + 0.4 * score, 0.7)
        return Solution(format_number(v), conf, layout.region_of([item]), f"chart {how}")
    return None
