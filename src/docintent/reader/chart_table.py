"""A chart read into a data table: series (from the legend, mapped by colour) x categories, one value each, every
value with the box of its mark and a confidence.

:func:`read_chart` reads a chart from its OCR lines and pixels:

1. the value axis: three or more evenly stepped numeric tick labels in a column (vertical charts) or a row
   (horizontal bars), fitted to a linear scale (:func:`docintent.reader.chart.find_axis`); a row of years is
   categories, not a scale;
2. the categories: the row of labels under the plot (the column of labels left of it for horizontal bars);
3. the marks: pixels of the plot area that are neither its background nor gridlines nor text, clustered by
   colour; a legend swatch of a colour names its series (the text right of the swatch);
4. each (series, category) measured in the category's lane: a bar's far end (a stacked segment's two ends),
   a line's or a point's centre; a printed value label over (or in) the mark is preferred where it agrees with
   the measurement within the axis' noise, and a value neither printed nor measurable is left unread
   (``value`` None) rather than guessed;
5. a chart without an axis whose coloured marks form a disc is a pie (or donut): slices are the angular runs
   of one colour, their shares the runs' angles, their names the labels in their direction, a printed
   percentage preferred where it agrees.

A photographed chart is read as printed: a page outline on the desk is warped upright first (boxes are mapped
back onto the photo), colours are read under even white light (:func:`even_light`), tick labels an OCR misread
("2096" for 20 %) or ran together ("0 25 50") are read in the form that fits the axis, and a pie slice split by a
shadow's edge stays one slice.

:meth:`ChartTable.grid` is the same data as a :class:`~docintent.layout.table.Table` (categories as rows, series
as columns), so table questions (:mod:`docintent.reader.table_qa`) run over a chart unchanged.

>>> import numpy as np
>>> from docintent.layout.lines import Item, Layout
>>> from docintent.page import Box, Page
>>> px = np.full((200, 300, 3), 255, np.uint8)
>>> px[60:150, 100:130] = (200, 40, 40); px[105:150, 180:210] = (200, 40, 40)   # two bars: 100 and 50
>>> ticks = [Item(t, Box(0.1, y - 0.03, 0.2, y + 0.03), 0.99, k) for k, (t, y) in
...          enumerate([("0", 0.75), ("50", 0.525), ("100", 0.3)])]
>>> cats = [Item("North", Box(0.33, 0.8, 0.43, 0.86), 0.99, 3), Item("South", Box(0.6, 0.8, 0.7, 0.86), 0.99, 4)]
>>> chart = read_chart(Layout(ticks + cats), Page.from_array(px, source="doctest"))
>>> [(v.category, round(v.value), v.how) for v in chart.values]
[('North', 100, 'measured'), ('South', 50, 'measured')]
"""

from __future__ import annotations

import math
import re
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import numpy as np

from ..layout.lines import Item, Layout
from ..layout.table import Cell, Table
from ..page import Box, Page
from .chart import Axis, item_rows, numeric_value
from .values import find_numbers, format_number

#: Chart kinds :func:`read_chart` tells apart.
KINDS = ("bar", "hbar", "line", "scatter", "pie")

_NOTE = re.compile(r"^\s*(source|note|notes|data)\b", re.I)
_YEAR = re.compile(r"^(?:19|20)\d\d$")


@dataclass(frozen=True)
class ChartValue:
    """One value of a chart's data table: its series and category, the value (None: not read), the box of its mark
    (or of the printed label it was read from), a confidence and how it was read ("label", "measured", "unread")."""

    series: str
    category: str
    value: float | None
    _: KW_ONLY
    box: Box
    confidence: float
    how: str


@dataclass
class ChartTable:
    """A chart's data: ``series`` x ``categories`` and one :class:`ChartValue` for each pair (series-major order)."""

    kind: str
    title: str
    series: list[str]
    _: KW_ONLY
    categories: list[str]
    values: list[ChartValue]
    region: Box
    stacked: bool = False
    boxes: dict[str, Box] = field(default_factory=dict)  # label boxes: "category:NAME" / "series:NAME"

    def value(self, series: str, category: str) -> ChartValue | None:
        return next((v for v in self.values if v.series == series and v.category == category), None)

    @property
    def confidence(self) -> float:
        """The mean confidence of the values (an unread value counts 0)."""
        return float(np.mean([v.confidence for v in self.values])) if self.values else 0.0

    @property
    def read_share(self) -> float:
        """The share of the table's values that were read."""
        return sum(v.value is not None for v in self.values) / max(len(self.values), 1)

    def grid(self, transpose: bool = False) -> Table:
        """The data as a table: a header row of series names over a stub column of categories (``transpose``:
        series as rows, categories as columns); an unread value is an empty cell."""
        rows_k, cols_k = (self.series, self.categories) if transpose else (self.categories, self.series)
        box_of = {(v.series, v.category): v for v in self.values}
        head = [Cell("", self.region, 0, col=0)]
        for j, name in enumerate(cols_k):
            key = ("category:" if transpose else "series:") + name
            head.append(Cell(name, self.boxes.get(key, self.region), 0, col=j + 1))
        rows = [head]
        for i, name in enumerate(rows_k):
            key = ("series:" if transpose else "category:") + name
            row = [Cell(name, self.boxes.get(key, self.region), i + 1, col=0)]
            for j, other in enumerate(cols_k):
                v = box_of.get((name, other) if transpose else (other, name))
                text = format_number(v.value) if v is not None and v.value is not None else ""
                row.append(Cell(text, v.box if v is not None else self.region, i + 1, col=j + 1))
            rows.append(row)
        return Table(rows, header_rows=1, region=self.region, meta={"chart": self.kind})

    def to_dict(self) -> dict[str, Any]:
        """The chart in the extract schema: kind, title, series, categories and every value with its box."""
        return {
            "kind": self.kind,
            "title": self.title,
            "box": _box(self.region),
            "series": list(self.series),
            "categories": list(self.categories),
            "stacked": self.stacked,
            "confidence": round(self.confidence, 4),
            "values": [
                {
                    "series": v.series,
                    "category": v.category,
                    "value": v.value,
                    "box": _box(v.box),
                    "confidence": round(v.confidence, 4),
                    "how": v.how,
                }
                for v in self.values
            ],
        }


def _box(box: Box) -> list[float]:
    return [round(min(max(v, 0.0), 1.0), 5) for v in box.as_tuple()]


# --- pixels -------------------------------------------------------------------------------------------------


#: Longest side (px) a chart's light is estimated at.
_LIGHT_SIDE = 384


def _odd(n: float) -> int:
    return max(3, int(n) | 1)


def even_light(pixels: np.ndarray) -> np.ndarray:
    """The chart as if lit evenly by white light: each channel divided by the light its paper gets, so a shadow, a
    light gradient or a colour cast leaves one mark colour one colour across the plot, and the paper white.

    The paper's light is estimated at :data:`_LIGHT_SIDE` px: a closing removes text, gridlines, lines and markers;
    what is left is paper where its colour, white-balanced by the page's typical paper colour, is grey (a chart's
    marks are coloured, pale ones too) and not much darker than the brightest paper near it (a black or grey bar,
    unlike a cast shadow, is far darker); the light under the marks is filled in from the paper around them. A
    chart whose paper is mostly not light (a dark theme) is returned as it is."""
    import cv2

    h, w = pixels.shape[:2]
    if min(h, w) < 16 or pixels.ndim != 3:
        return pixels
    scale = min(1.0, _LIGHT_SIDE / max(h, w))
    sw, sh = max(1, round(w * scale)), max(1, round(h * scale))
    small = cv2.resize(pixels, (sw, sh), interpolation=cv2.INTER_AREA)
    k = _odd(0.035 * max(sw, sh))
    closed = cv2.morphologyEx(small, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    bg = closed.astype(np.float32)
    lum = bg.max(axis=2)
    bright = lum >= np.percentile(lum, 60)
    paper_colour = np.maximum(np.median(bg[bright], axis=0), 1.0)
    if paper_colour.max() < 90:
        return pixels
    balanced = bg * (paper_colour.max() / paper_colour)
    blum = balanced.max(axis=2)
    grey = blum - balanced.min(axis=2) < 0.06 * blum + 6
    local_max = cv2.dilate(blum, cv2.getStructuringElement(cv2.MORPH_RECT, (4 * k + 1, 4 * k + 1)))
    paper = grey & (blum >= 0.55 * local_max)
    paper = ~cv2.dilate((~paper).astype(np.uint8), np.ones((3, 3), np.uint8)).astype(bool)
    if paper.mean() < 0.2:
        return pixels
    weight = paper.astype(np.float32)
    sigma = 1.5 * k
    spread = cv2.GaussianBlur(weight, (0, 0), sigma)
    fill = cv2.GaussianBlur(bg * weight[:, :, None], (0, 0), sigma) / np.maximum(spread, 1e-4)[:, :, None]
    # far from any paper (the middle of a large pie) the light comes from paper further away, estimated coarsely
    cw, ch = max(1, sw // 8), max(1, sh // 8)
    coarse = cv2.GaussianBlur(
        cv2.resize(bg * weight[:, :, None], (cw, ch), interpolation=cv2.INTER_AREA), (0, 0), 0.75 * sigma
    )
    reach = cv2.GaussianBlur(cv2.resize(weight, (cw, ch), interpolation=cv2.INTER_AREA), (0, 0), 0.75 * sigma)
    wide = cv2.resize(coarse / np.maximum(reach, 1e-4)[:, :, None], (sw, sh), interpolation=cv2.INTER_LINEAR)
    fill = np.where(spread[:, :, None] > 0.05, fill, wide)
    light = np.where(paper[:, :, None], bg, fill)
    light = cv2.GaussianBlur(light, (0, 0), max(0.5, k / 6))
    light8 = np.clip(light + 0.5, 1, 255).astype(np.uint8)
    full = cv2.resize(light8, (w, h), interpolation=cv2.INTER_LINEAR)
    return cv2.divide(pixels, full, scale=255.0)


def _quantised_mode(rgb: np.ndarray) -> np.ndarray:
    """The most common colour (in 8-level bins, then averaged inside the bin) of an (N, 3) array."""
    q = (rgb // 8).astype(np.int32)
    keys = q[:, 0] * 1024 + q[:, 1] * 32 + q[:, 2]
    vals, counts = np.unique(keys, return_counts=True)
    top = vals[int(np.argmax(counts))]
    return rgb[keys == top].mean(axis=0)


def _is_text(item: Item) -> bool:
    """A line of letters or digits (an OCR reads a round marker as "●")."""
    return any(ch.isalnum() for ch in item.text)


_GROW = 0.15


def _text_mask(shape: tuple[int, int], items: Sequence[Item], grow: float = _GROW) -> np.ndarray:
    h, w = shape
    mask = np.zeros((h, w), bool)
    for it in items:
        if not _is_text(it):
            continue
        g = grow * it.h
        x0, x1 = int(max((it.box.x0 - g) * w, 0)), int(min(math.ceil((it.box.x1 + g) * w), w))
        y0, y1 = int(max((it.box.y0 - g) * h, 0)), int(min(math.ceil((it.box.y1 + g) * h), h))
        mask[y0:y1, x0:x1] = True
    return mask


@dataclass
class _Colours:
    """Mark colours found in an area: their mean RGB and a label image (-1: not a mark)."""

    rgb: list[np.ndarray]
    labels: np.ndarray

    def mask(self, k: int) -> np.ndarray:
        return self.labels == k


def _mark_colours(
    pixels: np.ndarray,
    area: tuple[int, int, int, int],
    text: np.ndarray,
    items: Sequence[Item],
    min_share: float = 0.0004,
) -> _Colours:
    """Cluster the mark pixels of ``area`` (x0, y0, x1, y1 in pixels) by colour.

    A mark pixel differs clearly from the area's background and from the paper, and is either coloured (chroma)
    or dark and thick (a black bar, not an axis line or a gridline, which an opening removes)."""
    import cv2

    h, w = pixels.shape[:2]
    labels = np.full((h, w), -1, np.int16)
    x0, y0, x1, y1 = area
    if x1 - x0 < 8 or y1 - y0 < 8:
        return _Colours([], labels)
    crop = pixels[y0:y1, x0:x1].astype(np.int16)
    flat = crop.reshape(-1, 3)
    bg = _quantised_mode(flat)
    dist_bg = np.abs(crop - bg).sum(axis=2)
    chroma = crop.max(axis=2) - crop.min(axis=2)
    lum = crop.mean(axis=2)
    dark = ((lum < 110) & (dist_bg > 150)).astype(np.uint8)
    dark = cv2.morphologyEx(dark, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8)).astype(bool)
    cand = ((dist_bg > 70) & (chroma > 38)) | dark
    cand &= ~text[y0:y1, x0:x1]
    if cand.sum() < 20:
        return _Colours([], labels)
    pts = crop[cand]
    q = (pts // 24).astype(np.int32)
    keys = q[:, 0] * 4096 + q[:, 1] * 64 + q[:, 2]
    uniq, inverse, counts = np.unique(keys, return_inverse=True, return_counts=True)
    means = np.zeros((len(uniq), 3))
    np.add.at(means, inverse, pts)
    means /= counts[:, None]
    floor = max(40, int(min_share * crop.shape[0] * crop.shape[1]))
    centres: list[np.ndarray] = []
    weights: list[int] = []
    for k in np.argsort(-counts):
        if counts[k] < floor // 4:
            break
        d = [float(np.abs(means[k] - c).sum()) for c in centres]
        if d and min(d) < 70:
            j = int(np.argmin(d))
            weights[j] += int(counts[k])
            continue
        if counts[k] >= floor // 2:
            centres.append(means[k])
            weights.append(int(counts[k]))
    keep = [c for c, n in zip(centres, weights) if n >= floor]
    if not keep:
        return _Colours([], labels)
    idx = np.flatnonzero(cand.ravel())

    def assign(colours: list[np.ndarray]) -> np.ndarray:
        d = np.abs(pts[:, None, :] - np.array(colours)[None, :, :]).sum(axis=2)
        nearest = d.argmin(axis=1)
        ok = d[np.arange(len(pts)), nearest] < 90
        sub = np.full(cand.shape, -1, np.int16)
        sub.ravel()[idx[ok]] = nearest[ok]
        return sub

    sub = assign(keep)
    # A thin colour between a larger mark's colour and the background is the anti-aliased edge of that mark, not
    # a series of its own: almost none of its pixels survive an erosion.
    sizes = [int((sub == k).sum()) for k in range(len(keep))]
    edges = [
        k
        for k, c in enumerate(keep)
        if any(_blend(c, a, bg) for j, a in enumerate(keep) if j != k and sizes[j] > 3 * sizes[k])
        and cv2.erode((sub == k).astype(np.uint8), np.ones((3, 3), np.uint8)).sum() < 0.12 * max(sizes[k], 1)
    ]
    if edges:
        keep = [c for k, c in enumerate(keep) if k not in edges]
        sub = assign(keep)
    labels[y0:y1, x0:x1] = sub
    for it in items:
        _fill_enclosed(labels, it, len(keep))
    return _Colours([np.asarray(c) for c in keep], labels)


def _blend(c: np.ndarray, a: np.ndarray, o: np.ndarray) -> bool:
    """Whether colour ``c`` lies on the way from ``a`` to ``o`` (a mix of the two)."""
    d = np.asarray(o, float) - np.asarray(a, float)
    norm = float(d @ d)
    if norm < 900:
        return False
    t = float((np.asarray(c, float) - a) @ d) / norm
    rest = np.asarray(c, float) - (a + t * d)
    return 0.08 < t < 0.92 and float(np.sqrt(rest @ rest)) < 28


def _fill_enclosed(labels: np.ndarray, item: Item, n_colours: int) -> None:
    """A label printed inside a mark (a value on a stacked segment, a share on a slice) is part of the mark: the
    pixels of its box take the colour that surrounds the box."""
    if not _is_text(item):
        return
    h, w = labels.shape
    g = int(math.ceil(_GROW * item.h * h)) + 1  # the text mask's margin
    x0, y0 = int(item.box.x0 * w) - g, int(item.box.y0 * h) - g
    x1, y1 = int(math.ceil(item.box.x1 * w)) + g, int(math.ceil(item.box.y1 * h)) + g
    pad = 3
    if x0 - pad < 0 or y0 - pad < 0 or x1 + pad >= w or y1 + pad >= h:
        return
    ring = np.concatenate(
        [
            labels[y0 - pad : y0, x0:x1].ravel(),
            labels[y1 : y1 + pad, x0:x1].ravel(),
            labels[y0:y1, x0 - pad : x0].ravel(),
            labels[y0:y1, x1 : x1 + pad].ravel(),
        ]
    )
    if ring.size == 0:
        return
    counts = np.bincount(ring[ring >= 0], minlength=n_colours) if (ring >= 0).any() else np.zeros(n_colours, int)
    k = int(np.argmax(counts)) if counts.size else -1
    if k >= 0 and counts[k] >= 0.85 * ring.size:
        labels[y0:y1, x0:x1] = k


def _label_everywhere(pixels: np.ndarray, colours: _Colours, text: np.ndarray) -> np.ndarray:
    """The mark colours found in the plot, looked for on the whole chart (a legend outside the plot)."""
    if not colours.rgb:
        return colours.labels.copy()
    rgb = pixels.astype(np.int16)
    d = np.stack([np.abs(rgb - c.astype(np.int16)).sum(axis=2) for c in colours.rgb])
    nearest = d.argmin(axis=0)
    out = np.where((d.min(axis=0) < 60) & ~text, nearest, -1).astype(np.int16)
    return out


def _components(mask: np.ndarray) -> list[tuple[int, int, int, int, int]]:
    """Connected components of a boolean mask as (x0, y0, x1, y1, area) in pixels."""
    import cv2

    n, _lab, stats, _c = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    return [(int(s[0]), int(s[1]), int(s[0] + s[2]), int(s[1] + s[3]), int(s[4])) for s in stats[1:n]]


# --- text ---------------------------------------------------------------------------------------------------


_GROUPED = re.compile(r"^\s*([$€£]?)(\d{1,3}(?:[.,]\d{3})+)(\s*[^\d\s]{0,3})\s*$")


def tick_value(item: Item) -> float | None:
    """A tick label's number; digits grouped in threes are thousands whichever separator the OCR read ("6.000"
    beside "4,000" on one axis is six thousand)."""
    m = _GROUPED.match(item.text)
    if m:
        return float(re.sub(r"[.,]", "", m.group(2)))
    return numeric_value(item)


#: "%" as an OCR misreads it on a capture's tick label ("20%" read "2096", "209", "20%6"): the number before it.
_PERCENT_MISREAD = re.compile(r"^(.*?\d)(?:%\s*\S?|96|9)$")


def tick_readings(item: Item) -> list[Item]:
    """What a tick label may say, as label items: as it was read, then as the OCR misreads a photographed label:
    a doubled separator ("20,.000"), a "%" read as "96", "9" or "%6". The axis fit chooses among them."""
    text = item.text.strip()
    texts = [item.text]
    joined = re.sub(r"(?<=\d)[.,]{2,}(?=\d)", ",", text)
    if joined != text:
        texts.append(joined)
    m = _PERCENT_MISREAD.match(joined)
    if m:
        texts.append(m.group(1) + "%")
    out: list[Item] = []
    seen: set[float] = set()
    for k, t in enumerate(texts):
        probe = item if k == 0 else Item(t, item.box, item.confidence, item.index)
        v = tick_value(probe)
        if v is not None and v not in seen:
            seen.add(v)
            out.append(probe)
    return out


def _split_numbers(items: list[Item], aspect: float) -> list[Item]:
    """A row of tick labels the OCR read as one line ("0 25 50 75 100") as one label per number. Ticks stand
    evenly spaced, so the labels' centres are spread evenly from the first number's centre to the last one's (each
    number as wide as its digits, a digit about 0.6 of the line's height; ``aspect``: the page's height / width)."""
    out: list[Item] = []
    index = max((it.index for it in items), default=0) + 1
    for it in items:
        parts = it.text.split()
        if len(parts) < 2 or not all(tick_readings(Item(p, it.box, it.confidence, it.index)) for p in parts):
            out.append(it)
            continue
        width = it.box.x1 - it.box.x0
        char = min(0.6 * it.h * aspect, width / max(len(it.text), 1))
        first = it.box.x0 + 0.5 * char * len(parts[0])
        last = it.box.x1 - 0.5 * char * len(parts[-1])
        for k, p in enumerate(parts):
            cx = first + (last - first) * k / (len(parts) - 1)
            half = 0.5 * char * len(p)
            out.append(
                Item(p, Box(max(cx - half, 0.0), it.box.y0, min(cx + half, 1.0), it.box.y1), it.confidence, index)
            )
            index += 1
    return out


def _fit_ticks(group: Sequence[Item], vertical: bool) -> list[Item] | None:
    """The largest subset of an aligned group of labels (each in one of its readings) whose values are linear in
    their position: every pair of readings proposes a scale, a label agrees with it when one of its readings lies
    within a few tenths of a line height of where the scale puts that value (a misread label or a value label
    that happens to line up does not). Ties prefer labels as read, then the closer fit."""
    readings = [[(float(tick_value(r) or 0.0), r) for r in tick_readings(o)] for o in group]
    pos = [o.cy if vertical else o.cx for o in group]
    tol = 0.4 * float(np.median([o.h for o in group]))
    best: tuple[int, int, float] | None = None
    chosen: list[Item] = []
    n = len(group)
    for i in range(n):
        for j in range(i + 1, n):
            if abs(pos[j] - pos[i]) < 2 * tol:
                continue
            for vi, _ri in readings[i]:
                for vj, _rj in readings[j]:
                    if vi == vj:
                        continue
                    slope = (vj - vi) / (pos[j] - pos[i])
                    picked, literal, err = [], 0, 0.0
                    for k in range(n):
                        d, r = min(
                            ((abs((v - vi) / slope + pos[i] - pos[k]), r) for v, r in readings[k]), key=lambda x: x[0]
                        )
                        if d <= tol:
                            picked.append(r)
                            literal += r is group[k]
                            err += d
                    score = (len(picked), literal, -err)
                    if best is None or score > best:
                        best, chosen = score, picked
    return chosen if best is not None and best[0] >= 3 else None


def find_scale(numeric: Sequence[Item], vertical: bool) -> Axis | None:
    """Tick labels: three or more numbers aligned in a column (right edges) or a row whose values are linear in
    their position and step by multiples of one step (an OCR that missed a tick leaves a double step; value
    labels are neither aligned nor linear). A label that does not fit (misread beyond repair, or a value label
    in line with the ticks) is left out rather than losing the axis, as long as most of the group fits."""
    best: Axis | None = None
    tried: set[tuple[int, ...]] = set()
    for anchor in numeric:
        if vertical:
            group = [o for o in numeric if abs(o.box.x1 - anchor.box.x1) < 0.5 * anchor.h]
        else:
            group = [o for o in numeric if abs(o.cy - anchor.cy) < 0.5 * anchor.h]
        key = tuple(sorted(o.index for o in group))
        if len(group) < 3 or key in tried or (best is not None and len(group) <= len(best.ticks)):
            continue
        tried.add(key)
        fitted = _fit_ticks(group, vertical)
        if fitted is None or len(fitted) < 0.6 * len(group) or (best is not None and len(fitted) <= len(best.ticks)):
            continue
        pos = np.array([o.cy if vertical else o.cx for o in fitted])
        vals = np.array([tick_value(o) for o in fitted], dtype=float)
        if np.ptp(pos) <= 0 or np.ptp(vals) <= 0 or len(set(vals.tolist())) < len(vals):
            continue
        steps = np.diff(np.sort(vals))
        unit = float(steps.min())
        if unit <= 0 or np.abs(steps / unit - np.round(steps / unit)).max() > 0.03 or (steps / unit).max() > 4.5:
            continue
        slope, intercept = np.polyfit(pos, vals, 1)
        resid = np.abs(vals - (slope * pos + intercept))
        if resid.max() <= 0.02 * np.ptp(vals):
            best = Axis(vertical, float(slope), float(intercept), sorted(fitted, key=lambda o: o.index))
    return best


def _value_axis(items: Sequence[Item]) -> Axis | None:
    """The chart's value scale: a vertical tick column, else a horizontal tick row; years are categories."""
    numeric = [it for it in items if tick_readings(it)]
    y_axis = find_scale(numeric, vertical=True)
    x_axis = find_scale(numeric, vertical=False)

    def years(axis: Axis | None) -> bool:
        return axis is not None and all(_YEAR.match(t.text.strip()) for t in axis.ticks)

    if y_axis is not None and years(y_axis):
        y_axis = None
    if x_axis is not None and years(x_axis):
        x_axis = None
    if y_axis is not None and x_axis is not None:
        return y_axis if len(y_axis.ticks) >= len(x_axis.ticks) else x_axis
    return y_axis or x_axis


def _legend(
    items: Sequence[Item],
    colours: _Colours,
    shape: tuple[int, int],
    exclude: set[int],
    everywhere: np.ndarray | None = None,
) -> dict[int, Item]:
    """Legend entries: for each mark colour, a small swatch of it with a text right beside it (``everywhere``: the
    colours labelled on the whole chart, default the plot's own labels)."""
    h, w = shape
    out: dict[int, Item] = {}
    where = colours.labels if everywhere is None else everywhere
    for k in range(len(colours.rgb)):
        best: tuple[float, Item, tuple[int, int, int, int, int]] | None = None
        for comp in _components(where == k):
            x0, y0, x1, y1, area = comp
            if area < 12 or (x1 - x0) > 0.08 * w or (y1 - y0) > 0.06 * h:
                continue
            cy = (y0 + y1) / 2 / h
            for it in items:
                if it.index in exclude or (numeric_value(it) is not None and not _YEAR.match(it.text.strip())):
                    continue
                if (y1 - y0) > 1.6 * it.h * h or (x1 - x0) > 4.0 * it.h * h:
                    continue  # a bar or a slice, not a swatch
                gap = it.box.x0 - x1 / w
                if -0.2 * it.h < gap < 2.5 * it.h * h / w + 0.01 and abs(it.cy - cy) < 0.6 * it.h:
                    if best is None or gap < best[0]:
                        best = (gap, it, comp)
        if best is not None:
            out[k] = best[1]
            x0, y0, x1, y1, _ = best[2]
            colours.labels[y0:y1, x0:x1][colours.labels[y0:y1, x0:x1] == k] = -1
    # one text names one series
    seen: dict[int, int] = {}
    for k, it in list(out.items()):
        if it.index in seen:
            out.pop(k)
        seen[it.index] = k
    return out


def _title(items: Sequence[Item], top: float) -> Item | None:
    """The chart's title: the tallest worded line above ``top`` (or in the top eighth of the region)."""
    above = [
        it
        for it in items
        if (it.box.y1 <= top + 0.01 or it.box.y0 < 0.12)
        and re.search(r"[A-Za-z]{3}", it.text)
        and numeric_value(it) is None
    ]
    if not above:
        return None
    tallest = max(it.h for it in above)
    return max((it for it in above if it.h >= 0.85 * tallest), key=lambda i: (len(i.text), -i.box.y0))


# --- axis charts --------------------------------------------------------------------------------------------


def _lane_extent(mask: np.ndarray) -> tuple[int, int, int, int] | None:
    """A mark in a lane (rows: the value direction, columns: across the lane): the widest run of columns holding
    the colour, and the median first / last row of the longest run of rows over the middle of those columns."""
    cols = np.flatnonzero(mask.any(axis=0))
    if cols.size == 0:
        return None
    runs = np.split(cols, np.flatnonzero(np.diff(cols) > 2) + 1)
    run = max(runs, key=len)
    a, b = int(run[0]), int(run[-1])
    mid = range(a + (b - a) // 5, b - (b - a) // 5 + 1)
    firsts, lasts = [], []
    for c in mid:
        rows = np.flatnonzero(mask[:, c])
        if rows.size == 0:
            continue
        parts = np.split(rows, np.flatnonzero(np.diff(rows) > 2) + 1)
        longest = max(parts, key=len)
        firsts.append(longest[0])
        lasts.append(longest[-1])
    if not firsts:
        return None
    return a, int(np.median(firsts)), b, int(np.median(lasts))


def _mark_shape(mask: np.ndarray, plot_across: int) -> str:
    """ "bar", "line" or "point": what a series' pixels in the plot look like (rows: value direction); gaps of a
    few pixels (moiré, a gridline drawn over a bar) are closed first."""
    import cv2

    mask = cv2.morphologyEx(mask.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8)).astype(bool)
    comps = [c for c in _components(mask) if c[4] >= 12]
    if not comps:
        return "none"
    widest = max(comps, key=lambda c: c[2] - c[0])
    if widest[2] - widest[0] > 0.35 * plot_across:
        fill = widest[4] / max((widest[2] - widest[0]) * (widest[3] - widest[1]), 1)
        if fill < 0.5:
            return "line"
    along = np.array([c[3] - c[1] for c in comps if c[4] >= 20] or [0])
    if len(along) >= 2 and np.median(along) < 0.05 * mask.shape[0] and along.max() < 0.1 * mask.shape[0]:
        return "point"  # markers: small and alike; bars differ in length
    big = sorted(comps, key=lambda c: -c[4])[:3]
    fills = [c[4] / max((c[2] - c[0]) * (c[3] - c[1]), 1) for c in big]
    if np.median(fills) > 0.8 and min(c[3] - c[1] for c in big) > 4 and max(c[2] - c[0] for c in big) > 6:
        return "bar"
    return "point"


def _read_axis_chart(items: list[Item], pixels: np.ndarray, axis: Axis, text: np.ndarray) -> ChartTable | None:
    import cv2

    h, w = pixels.shape[:2]
    vertical = axis.vertical
    ticks = {t.index for t in axis.ticks}
    tick_vals = sorted(tick_value(t) or 0.0 for t in axis.ticks)
    span = tick_vals[-1] - tick_vals[0]
    step = float(np.median(np.diff(tick_vals)))
    others = [it for it in items if it.index not in ticks]
    if vertical:
        tick_x1 = max(t.box.x1 for t in axis.ticks)
        top_c = min(t.cy for t in axis.ticks)
        bottom_c = max(t.cy for t in axis.ticks)
        spacing = (bottom_c - top_c) / max(len(axis.ticks) - 1, 1)
        base = axis.pos(0.0) if axis.slope else bottom_c
        area = (
            int((tick_x1 + 0.004) * w),
            int(max(top_c - 1.6 * spacing, 0.0) * h),
            w,
            int(min(max(bottom_c, base if base < 1.0 else bottom_c) + 0.01, 1.0) * h),
        )
    else:
        left_c = min(t.cx for t in axis.ticks)
        right_c = max(t.cx for t in axis.ticks)
        spacing = (right_c - left_c) / max(len(axis.ticks) - 1, 1)
        tick_top = min(t.box.y0 for t in axis.ticks)
        base = axis.pos(0.0) if axis.slope else left_c
        area = (
            int(max(min(left_c, base if base > 0.0 else left_c) - 0.01, 0.0) * w),
            0,
            int(min(right_c + 1.6 * spacing, 1.0) * w),
            int((tick_top - 0.004) * h),
        )
    content = _content_box(items)
    title = _title(others, area[1] / h if vertical else 0.12)
    top = content.y0
    if title is not None and vertical and title.box.y1 < top_c:
        top = max(top, title.box.y1)  # the plot is under its title
    area = (
        max(area[0], int(content.x0 * w)),
        max(area[1], int(top * h)),
        min(area[2], int(content.x1 * w)),
        min(area[3], int(content.y1 * h)),
    )
    colours = _mark_colours(pixels, area, text, items)
    exclude = {title.index} if title is not None else set()
    words = [it for it in others if it.index not in exclude and not _NOTE.match(it.text)]
    if vertical:
        # the plot's floor: the lowest tick, or the zero line where the OCR missed the ticks under it (a capture's
        # faint "0"), at most two tick steps further down
        floor = max(bottom_c, min(base, bottom_c + 2.0 * spacing)) if axis.slope else bottom_c
        under = [it for it in words if it.cy > bottom_c + 0.3 * it.h and it.box.x1 > tick_x1 and it.cy < floor + 0.2]
        # the first row under the plot that names things (value labels of short bars are numbers)
        rows = [r for r in item_rows(under) if any(numeric_value(i) is None or _YEAR.match(i.text.strip()) for i in r)]
        cats = (
            sorted((i for i in rows[0] if numeric_value(i) is None or _YEAR.match(i.text.strip())), key=lambda i: i.cx)
            if rows
            else []
        )
    else:
        left_edge = min(t.box.x0 for t in axis.ticks)
        cats = [
            it
            for it in words
            if it.box.x1 < left_c + 0.01
            and it.cx < left_edge + 0.02
            and it.cy < tick_top
            and (title is None or it.cy > title.box.y1)
        ]
        cats = [c for c in cats if numeric_value(c) is None or _YEAR.match(c.text.strip())]
        # one category to a row: a row of several labels over the plot is a legend (reached into the labels'
        # column where the OCR missed the ticks' "0")
        rows = item_rows(cats)
        if sum(len(r) == 1 for r in rows) >= 2 and any(len(r) > 1 for r in rows):
            cats = [r[0] for r in rows if len(r) == 1]
        cats = sorted(cats, key=lambda i: i.cy)
    if len(cats) < 2 or not colours.rgb:
        return None
    cat_ids = {c.index for c in cats}
    legend = _legend(
        [it for it in others if it.index not in cat_ids and not _NOTE.match(it.text)],
        colours,
        (h, w),
        set(),
        _label_everywhere(pixels, colours, text),
    )
    legend_ids = {it.index for it in legend.values()}
    if title is not None and title.index in legend_ids:  # a legend above the plot is not its title
        title = _title(
            [it for it in others if it.index not in legend_ids and it.index not in cat_ids],
            area[1] / h if vertical else 0.12,
        )
    words = [
        it
        for it in others
        if it.index not in legend_ids
        and it.index not in cat_ids
        and not _NOTE.match(it.text)
        and (title is None or it.index != title.index)
    ] + cats
    centres = np.array([(c.cx * w) if vertical else (c.cy * h) for c in cats])
    band = float(np.median(np.diff(centres))) if len(centres) > 1 else 0.2 * (w if vertical else h)
    # rows of the transposed views run along the value direction, columns across the categories
    label_img = colours.labels if vertical else colours.labels.T
    text_img = text if vertical else text.T
    v0, v1 = (area[1], area[3]) if vertical else (area[0], area[2])
    n_along = h if vertical else w
    series_ids = [
        k for k in range(len(colours.rgb)) if (colours.labels[area[1] : area[3], area[0] : area[2]] == k).sum() >= 30
    ]
    if not series_ids:
        return None
    plot_across = (area[2] - area[0]) if vertical else (area[3] - area[1])
    shapes = {k: _mark_shape((label_img == k)[v0:v1], plot_across) for k in series_ids}
    bars = [k for k in series_ids if shapes[k] == "bar"]
    if bars and len(bars) < len(series_ids):
        series_ids = [k for k in series_ids if shapes[k] != "point"] if len(bars) > 0 else series_ids
    if not legend and len(series_ids) > 1:
        # one series drawn in one colour: keep the colour with the most mark pixels
        sizes = {k: int((colours.labels[area[1] : area[3], area[0] : area[2]] == k).sum()) for k in series_ids}
        series_ids = [max(series_ids, key=lambda k: sizes[k])]
    elif legend:
        series_ids = [k for k in series_ids if k in legend] or series_ids[:1]
    names = [
        legend[k].text.strip()
        if k in legend
        else (title.text.strip() if title is not None and len(series_ids) == 1 else f"Series {n + 1}")
        for n, k in enumerate(series_ids)
    ]
    numeric = [it for it in words if numeric_value(it) is not None and it not in cats]
    kind_of = {k: shapes[k] for k in series_ids}
    marks: dict[tuple[int, int], tuple[float, Box, float]] = {}  # (series, cat) -> (measured value, box, end pos)
    stacked = False
    for i in range(len(cats)):
        lo_c = int(max(centres[i] - 0.5 * band, 0))
        hi_c = int(min(centres[i] + 0.5 * band, (w if vertical else h)))
        lane = label_img[v0:v1, lo_c:hi_c]
        lane_text = text_img[v0:v1, lo_c:hi_c]
        extents = {}
        for k in series_ids:
            m = lane == k
            if kind_of[k] == "bar":
                # a label printed on the bar hides some of it: text pixels between two of its pixels are the bar's
                m = m | (lane_text & (np.maximum.accumulate(m, axis=0)) & np.maximum.accumulate(m[::-1], axis=0)[::-1])
                # small gaps (moiré, noise, a gridline over the bar) do not cut it either
                m = cv2.morphologyEx(m.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((7, 3), np.uint8)).astype(bool)
                ext = _lane_extent(m)
                if ext is None:
                    continue
                a, first, b, last = ext
                extents[k] = (a, first + v0, b, last + v0)
            else:
                centre = int(centres[i]) - lo_c
                window = m[:, max(centre - 3, 0) : centre + 4]
                hits = np.flatnonzero(window.any(axis=1))
                if hits.size == 0:
                    window = m[:, max(centre - int(0.15 * band), 0) : centre + int(0.15 * band) + 1]
                    hits = np.flatnonzero(window.any(axis=1))
                if hits.size == 0:
                    continue
                parts = np.split(hits, np.flatnonzero(np.diff(hits) > 2) + 1)
                part = max(parts, key=len)
                mid = (part[0] + part[-1]) / 2 + v0
                extents[k] = (centre - 4, int(mid) - 4, centre + 4, int(mid) + 4)
                value = axis.value(mid / n_along)
                box = _frac_box(lo_c + centre - 5, mid - 5, lo_c + centre + 5, mid + 5, vertical, w, h)
                marks[(k, i)] = (value, box, mid)
        bar_keys = [k for k in extents if kind_of[k] == "bar"]
        if len(bar_keys) > 1:
            spans = [(extents[k][0], extents[k][2]) for k in bar_keys]
            overlap = min(s[1] for s in spans) - max(s[0] for s in spans)
            if overlap > 0.5 * min(s[1] - s[0] for s in spans):
                stacked = True
        for k in bar_keys:
            a, first, b, last = extents[k]
            v_first, v_last = axis.value(first / n_along), axis.value((last + 1) / n_along)
            far = first if vertical else last + 1
            # a bar stands on the zero line and its far end is its value; a stacked segment spans its value
            value = abs(v_first - v_last) if stacked else axis.value(far / n_along)
            box = _frac_box(lo_c + a, first, lo_c + b + 1, last + 1, vertical, w, h)
            marks[(k, i)] = (value, box, far)
    # printed value labels, each tied to the nearest mark (one label per mark)
    pairs = []
    for (k, i), (_value, box, _end) in marks.items():
        for it in numeric:
            if vertical:
                inside_x = box.x0 - 0.25 * it.h * h / w <= it.cx <= box.x1 + 0.25 * it.h * h / w
                if kind_of[k] == "bar":
                    near = inside_x and box.y0 - 3.5 * it.h <= it.cy <= box.y1
                    d = abs(it.cy - box.y0) if it.cy < box.y0 else abs(it.cy - (box.y0 + box.y1) / 2)
                else:
                    near = abs(it.cx - (box.x0 + box.x1) / 2) < 0.4 * band / w and abs(it.cy - box.y0) < 3 * it.h
                    d = abs(it.cy - (box.y0 - it.h)) + abs(it.cx - (box.x0 + box.x1) / 2)
            else:
                near = box.y0 - 0.3 * it.h <= it.cy <= box.y1 + 0.3 * it.h and box.x0 <= it.cx <= box.x1 + 0.15
                d = abs(it.box.x0 - box.x1) if it.cx > box.x1 else abs(it.cx - (box.x0 + box.x1) / 2)
            if near:
                pairs.append((d, k, i, it))
    pairs.sort(key=lambda p: (p[0], p[1], p[2], p[3].index))
    labelled: dict[tuple[int, int], Item] = {}
    used: set[int] = set()
    for _d, k, i, it in pairs:
        if (k, i) in labelled or it.index in used:
            continue
        labelled[(k, i)] = it
        used.add(it.index)
    values: list[ChartValue] = []
    unit = step / 100.0 if step > 0 else 0.0  # about a pixel: rounds the float noise, keeps the measurement
    for n, k in enumerate(series_ids):
        for i, cat in enumerate(cats):
            got = marks.get((k, i))
            label = labelled.get((k, i))
            lv = find_numbers(label.text)[0].value if label is not None and find_numbers(label.text) else None
            if (
                label is not None
                and got is not None
                and (grouped := tick_value(label)) is not None
                and abs(grouped - got[0]) < abs((lv if lv is not None else grouped) - got[0])
            ):
                lv = grouped  # "6.464" read where the chart printed 6,464
            if label is not None and got is not None:
                for probe in tick_readings(label)[1:]:  # "3996" read where the chart printed 39%
                    alt = tick_value(probe)
                    if alt is not None and abs(alt - got[0]) < abs((lv if lv is not None else alt + 2 * span) - got[0]):
                        lv = alt
            if got is None and lv is None:
                values.append(
                    ChartValue(
                        names[n],
                        cat.text.strip(),
                        None,
                        box=_lane_box(centres[i], band, area, vertical, w, h),
                        confidence=0.0,
                        how="unread",
                    )
                )
                continue
            measured = got[0] if got is not None else None
            if measured is not None and unit > 0:
                measured = round(measured / unit) * unit
                measured = round(measured, 6)
            if lv is not None and (measured is None or abs(lv - measured) <= 0.06 * span):
                box = got[1] if got is not None else label.box  # type: ignore[union-attr]
                conf = 0.95 * (label.confidence if label is not None else 1.0)
                values.append(
                    ChartValue(names[n], cat.text.strip(), float(lv), box=box, confidence=round(conf, 4), how="label")
                )
            else:
                assert got is not None and measured is not None
                conf = 0.75 if kind_of[k] == "bar" else 0.65
                if lv is not None:
                    conf = 0.45  # a printed label disagrees: misread, or the label of another mark
                values.append(
                    ChartValue(names[n], cat.text.strip(), float(measured), box=got[1], confidence=conf, how="measured")
                )
    shape_kinds = {kind_of[k] for k in series_ids}
    kind = ("bar" if vertical else "hbar") if "bar" in shape_kinds else "line" if "line" in shape_kinds else "scatter"
    region_items = list(axis.ticks) + cats + ([title] if title is not None else []) + list(legend.values())
    region = Box.clamped(
        min(min(i.box.x0 for i in region_items), area[0] / w),
        min(i.box.y0 for i in region_items),
        max(max(i.box.x1 for i in region_items), area[2] / w),
        max(i.box.y1 for i in region_items),
    )
    boxes = {f"category:{c.text.strip()}": c.box for c in cats}
    boxes.update({f"series:{names[n]}": legend[k].box for n, k in enumerate(series_ids) if k in legend})
    return ChartTable(
        kind,
        title.text.strip() if title is not None else "",
        names,
        categories=[c.text.strip() for c in cats],
        values=values,
        region=region,
        stacked=stacked and kind in ("bar", "hbar"),
        boxes=boxes,
    )


def _content_box(items: Sequence[Item]) -> Box:
    """Where the chart is: the box of its text with a margin (a photo's desk or a page's edge around it is not)."""
    box = Box.enclosing(it.box for it in items)
    mx, my = 0.06 * (box.x1 - box.x0) + 0.01, 0.06 * (box.y1 - box.y0) + 0.01
    return Box.clamped(box.x0 - mx, box.y0 - my, box.x1 + mx, box.y1 + my)


def _frac_box(a: float, first: float, b: float, last: float, vertical: bool, w: int, h: int) -> Box:
    """A box from lane coordinates (across: a..b, along: first..last) to page fractions."""
    if vertical:
        return Box.clamped(a / w, first / h, b / w, last / h)
    return Box.clamped(first / w, a / h, last / w, b / h)


def _lane_box(centre: float, band: float, area: tuple[int, int, int, int], vertical: bool, w: int, h: int) -> Box:
    if vertical:
        return Box.clamped((centre - band / 2) / w, area[1] / h, (centre + band / 2) / w, area[3] / h)
    return Box.clamped(area[0] / w, (centre - band / 2) / h, area[2] / w, (centre + band / 2) / h)


# --- pies ---------------------------------------------------------------------------------------------------


def _same_paint(a: np.ndarray, b: np.ndarray) -> bool:
    """Whether two colours are one paint under different light (a shadow's edge across a slice): the same
    chromaticity, one darker."""
    a, b = np.asarray(a, float) + 1.0, np.asarray(b, float) + 1.0
    return float(np.abs(a / a.sum() - b / b.sum()).sum()) < 0.08


def _merge_slices(
    slices: list[tuple[float, float, int]], votes: np.ndarray, rgb: Sequence[np.ndarray]
) -> list[tuple[float, float, int]]:
    """Slices (start angle, sweep, colour) around the disc with what a capture adds taken out: a sliver (a colour
    blended from a slice's edge and the paper, or left by blur between two slices) joins the neighbour it is most
    like, and two neighbours of one paint whose pixels mix over a wide angle (a shadow's edge crosses the slice;
    two slices meet along a radius, in a degree or two) are one slice."""
    n_bins = votes.shape[0]
    out = list(slices)

    def mixed(i: int) -> bool:
        a, b = out[i], out[(i + 1) % len(out)]
        if a[2] == b[2]:
            return True
        if not _same_paint(rgb[a[2]], rgb[b[2]]):
            return False
        edge = int(round((a[0] + a[1]) * n_bins / 360.0))
        window = votes[[(edge + d) % n_bins for d in range(-40, 41)]][:, [a[2], b[2]]].astype(float)
        both = window.min(axis=1) >= 0.25 * np.maximum(window.sum(axis=1), 1.0)
        return int(both.sum()) >= 12

    changed = True
    while changed and len(out) > 2:
        changed = False
        # a sliver joins its more alike neighbour
        j = min(range(len(out)), key=lambda i: out[i][1])
        if out[j][1] < 4.0:
            prev, nxt = (j - 1) % len(out), (j + 1) % len(out)
            dp = float(np.abs(rgb[out[prev][2]] - rgb[out[j][2]]).sum())
            dn = float(np.abs(rgb[out[nxt][2]] - rgb[out[j][2]]).sum())
            keep = prev if dp <= dn else nxt
            a0 = out[prev][0] if keep == prev else out[j][0]
            merged = (a0, out[j][1] + out[keep][1], out[keep][2])
            out[keep] = merged
            out.pop(j)
            changed = True
            continue
        for i in range(len(out)):
            if len(out) > 2 and mixed(i):
                nxt = (i + 1) % len(out)
                a, b = out[i], out[nxt]
                out[i] = (a[0], a[1] + b[1], a[2] if a[1] >= b[1] else b[2])
                out.pop(nxt)
                changed = True
                break
    return out


def _read_pie(items: list[Item], pixels: np.ndarray, text: np.ndarray) -> ChartTable | None:
    h, w = pixels.shape[:2]
    content = _content_box(items)
    colours = _mark_colours(
        pixels,
        (int(content.x0 * w), int(content.y0 * h), int(content.x1 * w), int(content.y1 * h)),
        text,
        items,
        min_share=0.002,
    )
    if len(colours.rgb) < 2:
        return None
    marks = colours.labels >= 0
    ys, xs = np.nonzero(marks)
    if xs.size < 200:
        return None
    # the disc: the largest blob of mark pixels (a legend's swatches lie apart from it)
    import cv2

    n, lab, stats, _c = cv2.connectedComponentsWithStats(
        cv2.morphologyEx(marks.astype(np.uint8), cv2.MORPH_CLOSE, np.ones((9, 9), np.uint8)), connectivity=8
    )
    if n < 2:
        return None
    biggest = 1 + int(np.argmax(stats[1:, 4]))
    disc = (lab == biggest) & marks
    ys, xs = np.nonzero(disc)
    bw, bh = stats[biggest, 2], stats[biggest, 3]
    if min(bw, bh) < 0.15 * min(w, h) or not 0.75 < bw / max(bh, 1) < 1.33:
        return None
    cx, cy = stats[biggest, 0] + bw / 2, stats[biggest, 1] + bh / 2
    dist = np.hypot(xs - cx, ys - cy)
    r_out = float(np.percentile(dist, 99.5))
    r_in = float(np.percentile(dist, 0.5))
    fill = disc.sum() / (math.pi * (r_out**2 - r_in**2) + 1e-9)
    if fill < 0.6:
        return None
    ring = (dist > r_in + 0.2 * (r_out - r_in)) & (dist < r_out * 0.95)
    ang = (np.degrees(np.arctan2(ys[ring] - cy, xs[ring] - cx)) + 360.0) % 360.0
    lab_ring = colours.labels[ys[ring], xs[ring]]
    n_bins = 720
    bins = (ang * n_bins / 360.0).astype(int) % n_bins
    votes = np.zeros((n_bins, len(colours.rgb)), np.int32)
    np.add.at(votes, (bins, lab_ring), 1)
    owner = np.where(votes.sum(axis=1) > 0, votes.argmax(axis=1), -1)
    # fill bins without pixels (a white separator, a label drawn over the slice) from their neighbours
    for _ in range(n_bins):
        gaps = np.flatnonzero(owner < 0)
        if gaps.size == 0:
            break
        owner[gaps] = owner[(gaps - 1) % n_bins]
    # slices: runs of one colour around the circle (a colour used twice makes two slices)
    start = int(np.flatnonzero(owner != np.roll(owner, 1))[0]) if (owner != np.roll(owner, 1)).any() else 0
    rolled = np.roll(owner, -start)
    cuts = np.flatnonzero(np.diff(rolled) != 0) + 1
    slices = []
    for part in np.split(np.arange(n_bins), cuts):
        if part.size < 2:
            continue
        a0 = (part[0] + start) * 360.0 / n_bins
        sweep = part.size * 360.0 / n_bins
        slices.append((a0, sweep, int(rolled[part[0]])))
    slices = _merge_slices([s for s in slices if s[1] >= 1.5], votes, colours.rgb)
    if len(slices) < 2:
        return None
    total = sum(s[1] for s in slices)
    disc_box = Box.clamped((cx - r_out) / w, (cy - r_out) / h, (cx + r_out) / w, (cy + r_out) / h)
    title = _title(items, disc_box.y0)
    legend = _legend([i for i in items if title is None or i.index != title.index], colours, (h, w), set())
    legend_ids = {it.index for it in legend.values()}

    def angle_of(it: Item) -> float:
        return (math.degrees(math.atan2(it.cy * h - cy, it.cx * w - cx)) + 360.0) % 360.0

    def radius_of(it: Item) -> float:
        return math.hypot(it.cx * w - cx, it.cy * h - cy)

    words = [
        it
        for it in items
        if (title is None or it.index != title.index)
        and it.index not in legend_ids
        and not _NOTE.match(it.text)
        and re.search(r"[A-Za-z]", it.text)
        and numeric_value(it) is None
    ]
    pct = [
        it
        for it in items
        if it.index not in legend_ids
        and find_numbers(it.text)
        and radius_of(it) < r_out * 1.05
        and numeric_value(it) is not None
        and 0 <= (numeric_value(it) or -1) <= 100
    ]
    mids = [(a0 + sweep / 2) % 360.0 for a0, sweep, _k in slices]

    def circ(a: float, b: float) -> float:
        return abs((a - b + 180.0) % 360.0 - 180.0)

    def slice_at(angle: float) -> int:
        for j, (a0, sweep, _k) in enumerate(slices):
            if circ(angle, a0 + sweep / 2) <= sweep / 2:
                return j
        return int(np.argmin([circ(angle, m) for m in mids]))

    name_of: dict[int, Item] = {}
    if legend and len(legend) >= len(slices) - 1:
        for j, (_a0, _s, k) in enumerate(slices):
            if k in legend:
                name_of[j] = legend[k]
    else:
        outside = [it for it in words if radius_of(it) > r_out * 0.85]
        pairs = sorted((circ(angle_of(it), mids[j]), j, it.index, it) for j in range(len(slices)) for it in outside)
        used: set[int] = set()
        for _d, j, idx, it in pairs:
            if j in name_of or idx in used:
                continue
            name_of[j] = it
            used.add(idx)
    label_of: dict[int, Item] = {}
    for it in sorted(pct, key=lambda i: i.index):
        j = slice_at(angle_of(it))
        if j not in label_of:
            label_of[j] = it
    values = []
    cats = []
    for j, (a0, sweep, _k) in enumerate(slices):
        name = name_of[j].text.strip() if j in name_of else f"Slice {j + 1}"
        cats.append(name)
        measured = 100.0 * sweep / total
        mid = math.radians(a0 + sweep / 2)
        rr = (r_in + r_out) / 2 if r_in > 0.2 * r_out else 0.6 * r_out
        px, py = cx + rr * math.cos(mid), cy + rr * math.sin(mid)
        box = Box.clamped(
            (px - 0.04 * r_out) / w, (py - 0.04 * r_out) / h, (px + 0.04 * r_out) / w, (py + 0.04 * r_out) / h
        )
        label = label_of.get(j)
        lv = find_numbers(label.text)[0].value if label is not None else None
        if label is not None and lv is not None and abs(lv - measured) <= 4.0:
            values.append(
                ChartValue(
                    "Share", name, float(lv), box=label.box, confidence=round(0.95 * label.confidence, 4), how="label"
                )
            )
        else:
            values.append(
                ChartValue(
                    "Share",
                    name,
                    float(round(measured)),
                    box=box,
                    confidence=0.45 if lv is not None else 0.6,
                    how="measured",
                )
            )
    region = Box.enclosing(
        [disc_box, *(it.box for it in name_of.values()), *([title.box] if title is not None else [])]
    )
    boxes = {f"category:{name_of[j].text.strip()}": name_of[j].box for j in name_of}
    return ChartTable(
        "pie",
        title.text.strip() if title is not None else "",
        ["Share"],
        categories=cats,
        values=values,
        region=region,
        stacked=False,
        boxes=boxes,
    )


# --- entry point --------------------------------------------------------------------------------------------


_CACHE: OrderedDict[tuple, ChartTable | None] = OrderedDict()
_CACHE_SIZE = 32
_LOCK = threading.Lock()


def read_chart(layout: Layout, page: Page, region: Box | None = None) -> ChartTable | None:
    """The chart on ``page`` (inside ``region`` when given) as a data table, or None when no chart is found: an
    axis chart needs a value axis, two categories and marks; a pie, a disc of two or more colours.

    A page's chart is read once for all the questions asked about it: the result is kept (a few pages' worth)
    under the page's content hash and its lines, and it is the same whether read now or taken from there."""
    key = (
        page.hash,
        region.as_tuple() if region is not None else None,
        tuple((it.text, it.box.as_tuple(), round(it.confidence, 6)) for it in layout.items),
    )
    with _LOCK:
        if key in _CACHE:
            _CACHE.move_to_end(key)
            return _CACHE[key]
    chart = _read_chart(layout, page, region)
    with _LOCK:
        _CACHE[key] = chart
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    return chart


def _read_chart(layout: Layout, page: Page, region: Box | None) -> ChartTable | None:
    items = [it for it in layout.items if it.text.strip()]
    if region is not None:
        items = [it for it in items if region.x0 <= it.cx <= region.x1 and region.y0 <= it.cy <= region.y1]
    if not items or page.pixels.ndim != 3:
        return None
    pixels = page.pixels
    view = _Upright.of(pixels)
    moved = view.items(items) if view is not None else []
    if view is not None and len(moved) >= 0.9 * len(items):
        pixels, items = view.pixels, moved
    else:
        view = None  # no outline, or not the page's (a shadow cut it short): the lines off it say so
    chart = _read_items(items, pixels)
    return view.back(chart) if view is not None and chart is not None else chart


def _read_items(items: list[Item], pixels: np.ndarray) -> ChartTable | None:
    # An OCR reads a donut as the letter "O" (a ring marker as "o"): a short "text" far taller than the page's
    # lines is a mark, not a label.
    unit = float(np.median([it.h for it in items]))
    items = _split_numbers(
        [it for it in items if not (len(it.text.strip()) <= 2 and it.h > 2.5 * unit)], pixels.shape[0] / pixels.shape[1]
    )
    text = _text_mask(pixels.shape[:2], items)
    pixels = even_light(pixels)
    axis = _value_axis(items)
    if axis is not None:
        chart = _read_axis_chart(items, pixels, axis, text)
        if chart is not None:
            return chart
    return _read_pie(items, pixels, text)


@dataclass
class _Upright:
    """A chart photographed at an angle, its page's outline showing on the desk: the page warped to an upright
    rectangle (so the axes are straight and level again), its lines moved with it, and the boxes read there mapped
    back onto the photo."""

    pixels: np.ndarray
    matrix: np.ndarray  # photo pixels -> upright pixels
    size: tuple[int, int]  # the photo's (width, height)

    @classmethod
    def of(cls, pixels: np.ndarray) -> _Upright | None:
        import cv2

        from ..tools.dewarp import find_page_quad

        quad = find_page_quad(pixels)
        if quad is None:
            return None
        tl, tr, br, bl = quad.astype(np.float64)
        width = int(round(max(np.linalg.norm(tr - tl), np.linalg.norm(br - bl))))
        height = int(round(max(np.linalg.norm(bl - tl), np.linalg.norm(br - tr))))
        if min(width, height) < 64:
            return None
        target = np.array([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]], np.float32)
        matrix = cv2.getPerspectiveTransform(quad.astype(np.float32), target)
        upright = cv2.warpPerspective(
            pixels, matrix, (width, height), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE
        )
        return cls(upright, matrix, (pixels.shape[1], pixels.shape[0]))

    @staticmethod
    def _map(box: Box, matrix: np.ndarray, src: tuple[int, int], dst: tuple[int, int]) -> Box | None:
        import cv2

        (sw, sh), (dw, dh) = src, dst
        corners = np.array(
            [
                [
                    [box.x0 * sw, box.y0 * sh],
                    [box.x1 * sw, box.y0 * sh],
                    [box.x1 * sw, box.y1 * sh],
                    [box.x0 * sw, box.y1 * sh],
                ]
            ],
            np.float64,
        )
        moved = cv2.perspectiveTransform(corners, matrix)[0]
        try:
            return Box.clamped(
                moved[:, 0].min() / dw, moved[:, 1].min() / dh, moved[:, 0].max() / dw, moved[:, 1].max() / dh
            )
        except ValueError:
            return None

    def items(self, items: Sequence[Item]) -> list[Item]:
        """The lines on the upright page (a line on the desk, off the page, is dropped)."""
        up = (self.pixels.shape[1], self.pixels.shape[0])
        out = []
        for it in items:
            box = self._map(it.box, self.matrix, self.size, up)
            if box is not None:
                out.append(Item(it.text, box, it.confidence, it.index))
        return out

    def back(self, chart: ChartTable) -> ChartTable:
        """``chart`` with every box on the photo again."""
        inverse = np.linalg.inv(self.matrix)
        up = (self.pixels.shape[1], self.pixels.shape[0])

        def home(box: Box) -> Box:
            return self._map(box, inverse, up, self.size) or box

        values = [
            ChartValue(v.series, v.category, v.value, box=home(v.box), confidence=v.confidence, how=v.how)
            for v in chart.values
        ]
        return ChartTable(
            chart.kind,
            chart.title,
            chart.series,
            categories=chart.categories,
            values=values,
            region=home(chart.region),
            stacked=chart.stacked,
            boxes={k: home(b) for k, b in chart.boxes.items()},
        )


__all__ = ["KINDS", "ChartTable", "ChartValue", "read_chart"]
