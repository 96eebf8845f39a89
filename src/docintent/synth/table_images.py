"""Render financial-statement style tables with known cells, to measure table reconstruction.

Each table has a stub column of row labels, value columns with right-aligned figures (dollar signs,
accounting parentheses for negatives, percentages), and one of three header styles: a plain header row, a
spanning caption over the year columns, or header cells printed over two lines.

>>> t = render_table(seed=3)
>>> t.image.dtype, len(t.grid) == len(t.grid_boxes), t.header_rows >= 1
(dtype('uint8'), True, True)
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

import numpy as np
from PIL import Image, ImageDraw

from . import degrade
from .render import font

_LABELS = (
    "Revenue",
    "Net sales",
    "Cost of sales",
    "Gross profit",
    "Research and development",
    "Marketing",
    "General and administrative",
    "Operating income",
    "Interest expense",
    "Other income",
    "Income taxes",
    "Net income",
    "Total assets",
    "Cash and equivalents",
    "Accounts receivable",
    "Inventories",
    "Long-term debt",
    "Deferred revenue",
    "Operating margin",
    "Free cash flow",
    "Capital expenditures",
    "Depreciation",
    "Share repurchases",
    "Dividends paid",
    "Goodwill",
)


@dataclass(frozen=True)
class RenderedTable:
    """A rendered table and its truth. ``grid``: dense texts (a spanning caption repeats in each column it
    covers); ``grid_boxes``: pixel box of each drawn text (None where empty); ``header_rows``: header lines
    as :class:`~docintent.layout.table.Table` should report them (stacked lines count once)."""

    image: np.ndarray
    grid: list[list[str]]
    header_rows: int
    _: KW_ONLY
    style: str
    grid_boxes: list[list[tuple[int, int, int, int] | None]]


def _figure(rng: np.random.Generator, kind: str) -> str:
    if kind == "pct":
        v = rng.uniform(-30, 60)
        return f"({abs(v):.1f}%)" if v < 0 else f"{v:.1f}%"
    v = float(rng.choice([rng.uniform(1, 999), rng.uniform(1000, 99999)]))
    decimals = int(rng.integers(0, 2))
    text = f"{abs(v):,.{decimals}f}"
    if rng.random() < 0.2:
        text = "(" + text + ")"
    if kind == "usd":
        text = "$" + text
    return text


def _serif(size: int, bold: bool = False):
    from pathlib import Path

    import matplotlib
    from PIL import ImageFont

    name = "DejaVuSerif-Bold.ttf" if bold else "DejaVuSerif.ttf"
    return ImageFont.truetype(str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name), size)


def render_table(
    seed: int = 0,
    *,
    n_rows: int | None = None,
    n_years: int | None = None,
    font_px: int = 20,
    style: str | None = None,
    serif: bool = False,
    column_em: float = 7.0,
) -> RenderedTable:
    """A financial table drawn with PIL: ``style`` "plain", "spanning" or "stacked" (random when None).

    ``serif``: DejaVu Serif instead of DejaVu Sans; ``column_em``: value column width in font sizes (7 leaves
    wide gutters; about 5.5 leaves a gap of roughly one character next to the widest figures).
    """
    rng = np.random.default_rng(seed)
    style = style or str(rng.choice(["plain", "spanning", "stacked"]))
    n_rows = n_rows or int(rng.integers(4, 10))
    n_years = n_years or int(rng.integers(2, 4))
    first_year = int(rng.integers(2015, 2023))
    years = [str(first_year + i) for i in range(n_years)][::-1]
    has_change = bool(rng.random() < 0.5)
    f, fb = (_serif(font_px), _serif(font_px, True)) if serif else (font(font_px), font(font_px, bold=True))
    labels = [str(x) for x in rng.choice(_LABELS, size=n_rows, replace=False)]
    kinds = ["usd" if i == 0 or rng.random() < 0.15 else "num" for i in range(n_rows)]
    values = [[_figure(rng, k) for _ in years] + ([_figure(rng, "pct")] if has_change else []) for k in kinds]

    pitch = int(font_px * 1.9)
    stub_w = int(font_px * 14)
    col_w = int(font_px * column_em)
    n_val = n_years + has_change
    width = 40 + stub_w + col_w * n_val + 40
    header_lines = 2 if style in ("spanning", "stacked") else 1
    height = 40 + pitch * (header_lines + n_rows) + 40
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    grid: list[list[str]] = []
    boxes: list[list] = []

    def text(x: float, y: float, s: str, fnt, anchor: str) -> tuple[int, int, int, int]:
        draw.text((x, y), s, font=fnt, fill="black", anchor=anchor)
        b = draw.textbbox((x, y), s, font=fnt, anchor=anchor)
        return int(b[0]), int(b[1]), int(b[2]), int(b[3])

    col_right = [40 + stub_w + col_w * (i + 1) - 10 for i in range(n_val)]
    col_centre = [r - col_w // 2 + 5 for r in col_right]
    heads = years + (["Change"] if has_change else [])
    y = 40
    if style == "spanning":
        caption = str(rng.choice(["Year ended December 31,", "Fiscal year", "Years ended June 30,"]))
        cx = (col_centre[0] + col_centre[n_years - 1]) / 2
        b = text(cx, y, caption, fb, "mt")
        x0, x1 = col_right[0] - col_w + 20, col_right[n_years - 1]
        draw.line([(x0, y + font_px + 6), (x1, y + font_px + 6)], fill="black", width=1)
        grid.append([""] + [caption] * n_years + ([""] if has_change else []))
        boxes.append([None] + [b] * n_years + ([None] if has_change else []))
        y += pitch
    row_text, row_boxes = [""], [None]
    if style == "stacked":
        tops = [str(rng.choice(["Fiscal", "Year", "Period"])) for _ in years] + (["Percent"] if has_change else [])
        for i, h in enumerate(heads):
            b1 = text(col_right[i], y, tops[i], fb, "ra")
            b2 = text(col_right[i], y + int(font_px * 1.15), h, fb, "ra")
            row_text.append(f"{tops[i]} {h}")
            row_boxes.append((min(b1[0], b2[0]), b1[1], max(b1[2], b2[2]), b2[3]))
        y += pitch + int(font_px * 1.15)
    else:
        for i, h in enumerate(heads):
            row_text.append(h)
            row_boxes.append(text(col_right[i], y, h, fb, "ra"))
        y += pitch
    grid.append(row_text)
    boxes.append(row_boxes)
    header_rows = len(grid)
    for label, vals in zip(labels, values):
        row_text, row_boxes = [label], [text(40, y, label, f, "la")]
        for i, v in enumerate(vals):
            row_text.append(v)
            row_boxes.append(text(col_right[i], y, v, f, "ra"))
        grid.append(row_text)
        boxes.append(row_boxes)
        y += pitch
    return RenderedTable(np.asarray(img).copy(), grid, header_rows, style=style, grid_boxes=boxes)


def cell_accuracy(predicted: list[list[str]], truth: list[list[str]]) -> float:
    """Fraction of truth cells whose predicted text at the same (row, col) is equal after whitespace
    normalisation: ``correct / (rows x cols of truth)``. Missing rows or columns count as wrong."""
    total = correct = 0
    for r, row in enumerate(truth):
        for c, want in enumerate(row):
            total += 1
            got = predicted[r][c] if r < len(predicted) and c < len(predicted[r]) else None
            if got is not None and " ".join(got.split()) == " ".join(want.split()):
                correct += 1
    return correct / total if total else 0.0


def mildly_degraded(image: np.ndarray, seed: int = 0) -> np.ndarray:
    """A phone-capture look that leaves the table readable: a slight perspective tilt, a soft shadow, a
    little defocus, sensor noise and JPEG compression (all at low severity)."""

    rng = np.random.default_rng(seed)
    out = degrade.perspective(image, rng, 0.1)
    out = degrade.shadow(out, rng, 0.3)
    out = degrade.defocus(out, rng, 0.15)
    out = degrade.noise(out, rng, 0.15)
    return degrade.jpeg(out, rng, 0.3)
