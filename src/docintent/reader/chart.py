"""Reading charts from OCR and pixels: category labels, value labels, axis ticks and bar lengths."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..layout.lines import Item, Layout
from ..page import Page
from .extract import Matcher
from .question import QuestionInfo, content_words
from .solution import Solution
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

    @property
    def step(self) -> float:
        """Value difference between neighbouring tick labels."""
        vals = sorted(parse_number(t.text) or 0.0 for t in self.ticks)
        return float(np.median(np.diff(vals))) if len(vals) > 1 else 0.0

    def snap(self, value: float) -> float:
        """Round a measured value to a tenth of the tick step (the resolution a reader measures at)."""
        unit = self.step / 10.0
        return round(value / unit) * unit if unit > 0 else value

    def pos(self, value: float) -> float:
        return (value - self.intercept) / self.slope


def numeric_value(item: Item) -> float | None:
    return parse_number(item.text)


def find_axis(numeric: list[Item], vertical: bool) -> Axis | None:
    """Tick labels: >= 3 numeric items aligned in a column (or row) whose values are linear in position."""
    best: Axis | None = None
    best_n = 0
    for anchor in numeric:
        if vertical:
            group = [o for o in numeric if abs(o.box.x1 - anchor.box.x1) < 0.5 * anchor.h]
            pos = np.array([o.cy for o in group])
        else:
            group = [o for o in numeric if abs(o.cy - anchor.cy) < 0.6 * anchor.h]
            pos = np.array([o.cx for o in group])
        if len(group) < 3 or len(group) <= best_n:
            continue
        vals = np.array([numeric_value(o) for o in group], dtype=float)
        if np.ptp(pos) <= 0 or np.ptp(vals) <= 0:
            continue
        steps = np.diff(np.sort(vals))
        if steps.min() <= 0 or steps.max() - steps.min() > 0.02 * steps.max():
            continue  # tick labels step evenly; value labels do not
        slope, intercept = np.polyfit(pos, vals, 1)
        resid = np.abs(vals - (slope * pos + intercept))
        if resid.max() <= 0.03 * np.ptp(vals):
            best, best_n = Axis(vertical, float(slope), float(intercept), group), len(group)
    return best


_NOTE_RE = re.compile(r"^\s*(source|note|notes|data|\*)\b", re.I)


def item_rows(items: Sequence[Item]) -> list[list[Item]]:
    """Group items into horizontal rows by vertical-centre proximity."""
    rows: list[list[Item]] = []
    for it in sorted(items, key=lambda i: i.cy):
        if rows and abs(rows[-1][-1].cy - it.cy) < 0.6 * max(it.h, rows[-1][-1].h):
            rows[-1].append(it)
        else:
            rows.append([it])
    return rows


def categories(layout: Layout, axis: Axis | None, tick_ids: set[int]) -> tuple[list[Item], list[Item]]:
    """(category labels, legend/other text) of a chart.

    Vertical bars / lines: the row of labels under the plot (years allowed). Horizontal bars: the labels
    left of the plot. Pies: every label except the title and source notes.
    """
    texts = [it for it in layout.items if it.index not in tick_ids and not _NOTE_RE.match(it.text)]
    if axis is not None and axis.vertical:
        top = min(t.box.y0 for t in axis.ticks)
        bottom = max(t.box.y1 for t in axis.ticks)
        left = max(t.box.x1 for t in axis.ticks)
        under = [it for it in texts if it.cy > bottom - 0.6 * it.h and it.box.x0 > left - it.h]
        rows = [r for r in item_rows(under) if len(r) >= 2]
        cats = max(rows, key=len) if rows else []
        others = [
            it for it in texts if it not in cats and top - 2 * it.h <= it.cy <= bottom and numeric_value(it) is None
        ]
        return sorted(cats, key=lambda i: i.cx), others
    if axis is not None:
        # horizontal bars: value ticks along the bottom, category labels left of the plot
        left_edge = min(t.box.x0 for t in axis.ticks)
        cats = [
            it
            for it in texts
            if it.box.x1 <= left_edge + it.h and it.cy < min(t.box.y0 for t in axis.ticks) and numeric_value(it) is None
        ]
        title = min(cats, key=lambda i: i.box.y0) if cats and cats[0].box.y0 < 0.1 else None
        cats = [c for c in cats if c is not title]
        return sorted(cats, key=lambda i: i.cy), []
    words = [it for it in texts if re.search(r"[A-Za-z]", it.text) and numeric_value(it) is None]
    if words:
        title = min(words, key=lambda i: i.box.y0)
        if title.box.y0 < 0.12:
            words = [w for w in words if w is not title]
    return words, []


def _best_category(info: QuestionInfo, cats: list[Item], matcher: Matcher) -> tuple[Item | None, float]:
    scored = [(matcher.match(c)[0], c) for c in cats]
    scored = [s for s in scored if s[0] > 0]
    if not scored:
        return None, 0.0
    score, item = max(scored, key=lambda s: s[0])
    return item, score


def value_label_for(cat: Item, labels: list[Item], vertical_bars: bool) -> Item | None:
    """The value label in the category's lane (same column for vertical bars, same row for horizontal)."""
    if vertical_bars:
        lane = [l for l in labels if abs(l.cx - cat.cx) < max(cat.box.width, 3 * cat.h) * 0.6]
        return min(lane, key=lambda l: abs(l.cx - cat.cx)) if lane else None
    lane = [l for l in labels if abs(l.cy - cat.cy) < 0.7 * cat.h]
    return min(lane, key=lambda l: abs(l.cx - cat.cx)) if lane else None


def _colour_mask(page: Page) -> np.ndarray:
    """Pixels whose colour differs in hue from the paper (the data series), robust to a colour cast.

    The page is white-balanced on its paper colour first (the median of its brightest pixels), so a yellow
    or blue tint over the whole photo does not make the paper itself look coloured.
    """
    rgb = page.pixels.astype(np.float32)
    lum = rgb.mean(axis=2)
    bright = lum >= np.percentile(lum, 80)
    paper = np.median(rgb[bright], axis=0) if bright.any() else np.full(3, 255.0, np.float32)
    balanced = np.clip(rgb * (235.0 / np.maximum(paper, 1.0)), 0, 255)
    return (balanced.max(axis=2) - balanced.min(axis=2)) > 45


def bar_end(page: Page, cat: Item, axis: Axis, vertical_bars: bool) -> float | None:
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


def pie_center(page: Page) -> tuple[float, float] | None:
    """Centre of the coloured disc of a pie chart (centroid of saturated pixels), as page fractions."""
    sat = _colour_mask(page)[::4, ::4]
    if sat.mean() < 0.02:
        return None
    ys, xs = np.nonzero(sat)
    return float(xs.mean() / sat.shape[1]), float(ys.mean() / sat.shape[0])


def by_angle(cat: Item, cats: list[Item], labels: list[Item], center: tuple[float, float]) -> Item | None:
    """The percentage label whose direction from the pie centre is closest to the category label's."""
    pct = [l for l in labels if find_numbers(l.text)]
    if not pct:
        return None
    cx, cy = center

    def angle(it: Item) -> float:
        return float(np.arctan2(it.cy - cy, it.cx - cx))

    # greedy one-to-one matching, closest angular pairs first
    pairs = sorted(
        ((abs((angle(c) - angle(l) + np.pi) % (2 * np.pi) - np.pi), c.index, l.index) for c in cats for l in pct),
    )
    used_c, used_l, match = set(), set(), {}
    for _d, ci, li in pairs:
        if ci in used_c or li in used_l:
            continue
        used_c.add(ci)
        used_l.add(li)
        match[ci] = li
    matched = match.get(cat.index)
    return next((l for l in pct if l.index == matched), None)


def solve_chart(info: QuestionInfo, layout: Layout, page: Page, matcher: Matcher):
    """Answer chart questions about category values, extremes, differences and counts; None to fall back."""
    numeric = [it for it in layout.items if numeric_value(it) is not None]
    y_axis = find_axis(numeric, vertical=True)
    x_axis = find_axis(numeric, vertical=False)
    axis = y_axis or x_axis
    vertical_bars = axis is None or axis.vertical
    tick_ids = {t.index for t in axis.ticks} if axis else set()
    cats, legend = categories(layout, axis, tick_ids)
    cat_ids = {c.index for c in cats}
    labels = [it for it in numeric if it.index not in tick_ids and it.index not in cat_ids]
    centre = pie_center(page) if axis is None else None

    def value_of(cat: Item) -> tuple[float | None, str]:
        if centre is not None:
            label = by_angle(cat, cats, labels, centre)
            if label is not None:
                return find_numbers(label.text)[0].value, "slice label"
        label = value_label_for(cat, labels, vertical_bars) if axis is not None else None
        if label is not None:
            nums = find_numbers(label.text)
            if nums:
                return nums[0].value, "value label"
        # pie/legend style: "Category 35%" in one item, or the number right next to it
        nums = find_numbers(cat.text)
        if nums and re.search(r"[A-Za-z]", cat.text):
            return nums[-1].value, "label text"
        for o in layout.right_of(cat)[:1] if axis is None else []:
            v = numeric_value(o)
            if v is not None:
                return v, "value beside label"
        if axis is not None:
            v = bar_end(page, cat, axis, vertical_bars)
            if v is not None:
                return axis.snap(v), "bar measured on the axis"
        return None, ""

    intent = info.intent
    if intent == "count":
        # "How many rainy days did Cairo have?" asks for Cairo's value, not for a number of categories.
        named = [c for c in cats if len(c.text) > 2 and c.text.lower() in info.text.lower()]
        if named:
            intent = "lookup"
    if intent == "count":
        group = cats
        legend_words = {w for it in legend for w in re.findall(r"[a-z]+", it.text.lower())}
        if legend and (
            set(info.keywords) & legend_words
            or any(
                k in ("series", "years", "groups", "legend")
                and all(numeric_value(l) is not None or l.text.isdigit() for l in legend)
                for k in info.keywords
            )
        ):
            group = legend
        if group:
            return Solution(str(len(group)), 0.55, layout.region_of(group), "counted category labels")
        return None

    if info.intent in ("max", "min") and cats:
        values = [(c, v, how) for c in cats for v, how in [value_of(c)] if v is not None]
        if len(values) >= 2:
            pick = max(values, key=lambda v: v[1]) if info.intent == "max" else min(values, key=lambda v: v[1])
            text = pick[0].text if info.answer_type == "category" else format_number(pick[1])
            return Solution(
                text, 0.65, layout.region_of([v[0] for v in values]), f"{info.intent} over categories ({pick[2]})"
            )
        return None

    if info.intent in ("diff", "sum", "avg", "ratio") and len(info.targets) == 2:
        picked = []
        for target in info.targets:
            words = [w for w in content_words(target) if w not in ("share", "shares", "value", "values")] or [
                w.lower() for w in re.findall(r"[A-Za-z0-9]+", target)
            ]
            sub = Matcher(QuestionInfo(target, "number", "lookup", keywords=words), layout)
            item, score = _best_category(info, cats, sub)
            if item is None:
                return None
            v, how = value_of(item)
            if v is None:
                return None
            picked.append((item, v))
        a, b = picked[0][1], picked[1][1]
        result = {"diff": abs(a - b), "sum": a + b, "avg": (a + b) / 2, "ratio": a / b if b else 0.0}[info.intent]
        return Solution(
            format_number(result), 0.6, layout.region_of([p[0] for p in picked]), f"{info.intent} of two categories"
        )

    if intent == "lookup":
        item, score = _best_category(info, cats, matcher)
        if item is None:
            return None
        v, how = value_of(item)
        if v is None:
            return None
        conf = min(0.4 + 0.5 * score, 0.9) if how != "bar measured on the axis" else min(0.3 + 0.4 * score, 0.7)
        return Solution(format_number(v), conf, layout.region_of([item]), f"chart {how}")
    return None
