"""A chart or a table read as a series of points: every label with its value and where both are on the page.

:func:`chart_points` reads value labels, slice labels by angle and bars measured on the axis; :func:`table_points`
rebuilds a table from the OCR words and reads the column (or row) the question names; :func:`layout_points` reads
the numeric column under a header without a table; :func:`match_point` finds the point a target names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import numpy as np
from rapidfuzz import fuzz

from ..layout.lines import Item, Layout
from ..layout.table import is_figure, reconstruct_table
from ..ocr.base import OcrResult
from ..page import Box, Page
from .chart import bar_end, by_angle, categories, find_axis, numeric_value, pie_center, value_label_for
from .extract import Matcher, column_values, row_label
from .intent import Intent
from .question import QuestionInfo
from .values import find_numbers


@dataclass
class Point:
    """One label of a chart or table with its value and where both are on the page."""

    label: str
    value: float
    box: Box
    how: str


def chart_points(
    layout: Layout, page: Page, series: str | None = None, across: str | None = None, zoom: Any = None
) -> list[Point]:
    """Every category of a chart with its value (value labels, slice labels by angle, bars on the axis).

    Grouped bars (a legend of years): ``series`` picks the legend entry whose bars are read; ``across``
    names one category, and its value in every series is returned instead (labelled by the series name).
    """
    numeric = [it for it in layout.items if numeric_value(it) is not None]
    y_axis = find_axis(numeric, vertical=True)
    axis = y_axis or find_axis(numeric, vertical=False)
    vertical = axis is None or axis.vertical
    ticks = {t.index for t in axis.ticks} if axis else set()
    cats, _ = categories(layout, axis, ticks)
    cat_ids = {c.index for c in cats}
    bottom = max((c.box.y0 for c in cats), default=1.0)
    legend = sorted(
        (
            it
            for it in layout.items
            if re.fullmatch(r"(?:19|20)\d\d", it.text.strip())
            and it.index not in ticks
            and it.index not in cat_ids
            and it.cy < bottom
        ),
        key=lambda i: (i.cy, i.cx),
    )
    legend_ids = {it.index for it in legend}
    labels = [it for it in numeric if it.index not in ticks and it.index not in cat_ids and it.index not in legend_ids]
    if axis is not None and vertical and len(legend) >= 2 and len(cats) >= 2:
        return _grouped_points(page, axis, cats, labels, [it.text.strip() for it in legend], series, across)
    pie = pie_center(page) if axis is None else None
    out = []
    for cat in cats:
        v, how, box = None, "", cat.box
        if pie is not None:
            lab = by_angle(cat, cats, labels, pie)
            if lab is not None:
                v, how, box = find_numbers(lab.text)[0].value, "slice label", lab.box
            elif zoom is not None:
                v, box = _zoom_slice(cat, pie, zoom)
                how = "slice label read on a zoomed crop"
        if v is None and axis is not None:
            lab = value_label_for(cat, labels, vertical)
            if lab is not None and find_numbers(lab.text):
                v, how, box = find_numbers(lab.text)[0].value, "value label", lab.box
        if v is None:
            nums = find_numbers(cat.text)
            if nums and re.search(r"[A-Za-z]", cat.text):
                v, how = nums[-1].value, "label text"
        if v is None and axis is not None:
            m = bar_end(page, cat, axis, vertical)
            if m is not None:
                v, how = axis.snap(m), "bar measured on the axis"
        if v is not None:
            label = re.sub(r"\s*[-\d.,%]+%?\s*$", "", cat.text).strip() if how == "label text" else cat.text.strip()
            out.append(Point(label, float(v), box, how))
        else:  # the label is there, its value did not read: kept so the judge can ask for a closer look
            out.append(Point(cat.text.strip(), float("nan"), cat.box, "unread"))
    return out


def _zoom_slice(cat: Item, center: tuple[float, float], zoom: Any) -> tuple[float | None, Box]:
    """A slice's percentage read from a crop around where it is printed: autopct labels sit at 0.6 of the
    radius and the names at 1.1, along the same direction from the centre."""
    cx, cy = center
    dx, dy = cat.cx - cx, cat.cy - cy
    px, py = cx + dx * 0.6 / 1.1, cy + dy * 0.6 / 1.1
    box = Box.clamped(px - 0.06, py - 0.05, px + 0.06, py + 0.05)
    result = zoom(box)
    found = [
        (abs(line.box.center[0] - px) + abs(line.box.center[1] - py), n.value, line.box)
        for line in result.lines
        for n in find_numbers(line.text)
        if 0 <= n.value <= 100
    ]
    if found:
        _, value, where = min(found, key=lambda f: f[0])
        return value, where
    return None, box


def _grouped_points(
    page: Page,
    axis: Any,
    cats: list[Item],
    labels: list[Item],
    names: list[str],
    series: str | None,
    across: str | None,
) -> list[Point]:
    """Grouped bars: series ``k`` of a category sits at offset (k - (S-1)/2) * 0.8/S category spacings."""
    cats = sorted(cats, key=lambda c: c.cx)
    spacing = float(np.median(np.diff([c.cx for c in cats]))) if len(cats) > 1 else 0.2
    n = len(names)
    width = 0.8 * spacing / n

    def value(cat: Item, k: int) -> tuple[float | None, str, Box]:
        x = cat.cx + (k - (n - 1) / 2) * width
        lane = [l for l in labels if abs(l.cx - x) < 0.5 * width and find_numbers(l.text)]
        if lane:
            lab = min(lane, key=lambda l: abs(l.cx - x))
            return find_numbers(lab.text)[0].value, f"value label of {names[k]}", lab.box
        probe = Item(
            cat.text, Box.clamped(x - 0.3 * width, cat.box.y0, x + 0.3 * width, cat.box.y1), cat.confidence, cat.index
        )
        m = bar_end(page, probe, axis, True)
        return (
            (axis.snap(m), f"bar of {names[k]} measured on the axis", probe.box)
            if m is not None
            else (None, "", probe.box)
        )

    out = []
    if across is not None:
        cat = max(cats, key=lambda c: fuzz.ratio(across.lower(), c.text.lower()))
        for k, name in enumerate(names):
            v, how, box = value(cat, k)
            if v is not None:
                out.append(Point(name, float(v), box, how))
        return out
    k = names.index(series) if series in names else n - 1
    for cat in cats:
        v, how, box = value(cat, k)
        if v is not None:
            out.append(Point(cat.text.strip(), float(v), box, how))
    return out


def _tokens(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9%]+", text.lower()) if w not in ("the", "of", "in", "a")}


def _context_score(name: str, context: list[str]) -> float:
    toks = _tokens(name)
    if not toks or not context:
        return 0.0
    hits = sum(max((fuzz.ratio(c, t) for t in toks), default=0) >= 85 for c in context)
    return hits / max(len(toks), 1)


def header_and_body(table: Any) -> tuple[list[str], list[tuple[str, list[Any]]]]:
    """Column names and body rows of a reconstructed table, judged from its cells: the body starts at the
    first row holding a figure (a number that is not a year); header lines are the rows above it with at
    least two cells (a one-cell row is the title)."""
    grid_rows = table.rows
    n = table.n_cols
    start = next(
        (r for r, row in enumerate(grid_rows) if any(is_figure(c.text) for c in row[1:] if c.text)), len(grid_rows)
    )
    names = [""] * n
    for row in grid_rows[:start]:
        if sum(1 for c in row if c.text) < 2:
            continue
        for c in row:
            for k in range(c.col, c.col + c.colspan):
                if c.text and k < n:
                    names[k] = f"{names[k]} {c.text}".strip()
    body = []
    for row in grid_rows[start:]:
        label = next((c.text for c in row if c.text and not is_figure(c.text)), "")
        cells = [table.cell(row[0].row, k) for k in range(n)]
        body.append((label, cells))
    return names, body


def table_points(ocr: OcrResult, page: Page, intent: Intent, target: str | None = None) -> list[Point]:
    """A table rebuilt from the OCR words, read as one series: the column the question names (every row's
    label with its value), or for ``across`` questions / year targets the row named by ``target`` or the
    context (every column's header with the row's value)."""
    table = reconstruct_table(ocr, page_size=(page.width, page.height))
    if not table.rows:
        return []
    names, body = header_and_body(table)
    if not body:
        return []
    labels = [label for label, _ in body]
    years = [t for t in intent.targets if re.fullmatch(r"(?:19|20)\d\d", t)]
    by_row = intent.across or (years and len(years) == len(intent.targets))
    if by_row:
        key = (
            target
            if intent.across and target
            else " ".join(w for w in intent.context if not re.fullmatch(r"(?:19|20)\d\d", w))
        ).lower()
        best = max(range(len(labels)), key=lambda i: fuzz.token_set_ratio(key, labels[i].lower()))
        if fuzz.token_set_ratio(key, labels[best].lower()) < 60:
            return []
        out = []
        for k, cell in enumerate(body[best][1]):
            if cell is not None and cell.value is not None and names[k] and cell.text != labels[best]:
                out.append(Point(names[k], float(cell.value), cell.box, "table row"))
        return out
    numeric_cols = [
        k
        for k in range(len(names))
        if sum(1 for _, cells in body if cells[k] is not None and cells[k].value is not None) >= max(2, len(body) // 2)
    ]
    if not numeric_cols:
        return []
    scores = [_context_score(n, intent.context) for n in names]
    col = max(numeric_cols, key=lambda k: (scores[k], -k))
    if intent.kind == "extreme" and scores[col] == 0 and years:
        return []
    out = []
    for label, cells in body:
        cell = cells[col]
        if (
            cell is not None
            and cell.value is not None
            and label
            and not re.fullmatch(r"\s*(sub-?total|total|grand total)\s*:?\s*", label, re.I)
        ):
            out.append(Point(label, float(cell.value), cell.box, f"table column {names[col] or col}"))
    return out


def match_point(target: str, points: list[Point]) -> tuple[Point | None, float]:
    """The point whose label best matches ``target`` (fuzzy), with the match score in [0, 1]."""
    if not points:
        return None, 0.0
    scored = [
        (
            max(fuzz.ratio(target.lower(), p.label.lower()), fuzz.token_set_ratio(target.lower(), p.label.lower()) - 5)
            / 100.0,
            p,
        )
        for p in points
    ]
    score, best = max(scored, key=lambda s: s[0])
    return best, score


def layout_points(layout: Layout, intent: Intent) -> list[Point]:
    """Without a reconstructed table: the numeric column under the header the question names."""
    info = QuestionInfo(" ".join(intent.context), "number", "lookup", keywords=list(intent.context))
    found = column_values(info, layout, Matcher(info, layout))
    if found is None:
        return []
    out = []
    for cell, value in found[1]:
        label = row_label(layout, cell)
        if label is not None and label is not cell:
            out.append(Point(label.text, value, cell.box, "layout column"))
    return out


__all__ = ["Point", "chart_points", "header_and_body", "layout_points", "match_point", "table_points"]
