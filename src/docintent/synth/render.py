"""Render clean document pages with known text, for restoration benchmarks and tests.

Pages are drawn with PIL and matplotlib's bundled DejaVu fonts, so they look the same on every machine and
need no download. The returned reference text is exactly what was drawn, line by line, so OCR output can be
scored against it.

>>> img, text = render_page(width=600, seed=1)
>>> img.dtype, img.shape[1], text.count("\\n") > 5
(dtype('uint8'), 600, True)
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

_WORDS = (
    "invoice total amount due date account balance report annual revenue quarter growth market share "
    "customer order number payment received shipping address contract period renewal notice section "
    "results method sample measured value average increase decrease budget expense income tax summary "
    "table figure chart region north south east west product service price unit cost margin profit loss "
    "meeting agenda minutes approved committee member signature reference policy insurance claim"
).split()


@lru_cache(maxsize=8)
def font(size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
    """DejaVu Sans (bundled with matplotlib) at ``size`` px."""
    import matplotlib

    name = "DejaVuSans-Bold.ttf" if bold else "DejaVuSans.ttf"
    path = Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name
    return ImageFont.truetype(str(path), size)


def sentence(rng: np.random.Generator, n_words: int) -> str:
    words = [str(w) for w in rng.choice(_WORDS, size=n_words)]
    # numbers matter in documents (answers are often figures), so mix some in
    for i in range(len(words)):
        if rng.random() < 0.15:
            words[i] = str(int(rng.integers(10, 99999)))
    words[0] = words[0].capitalize()
    return " ".join(words)


def render_text_lines(
    lines: list[str], *, width: int, font_px: int, margin: int | None = None, line_gap: float = 1.6
) -> np.ndarray:
    """Black text lines on white paper, left-aligned; height follows from the number of lines."""
    f = font(font_px)
    margin = int(font_px * 2) if margin is None else margin
    step = int(font_px * line_gap)
    height = 2 * margin + step * len(lines)
    img = Image.new("RGB", (width, max(height, 1)), "white")
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((margin, margin + i * step), line, fill="black", font=f)
    return np.asarray(img).copy()


def render_page(width: int = 1200, seed: int = 0, *, chart: bool = True, table: bool = True) -> tuple[np.ndarray, str]:
    """A document page: a title, body text at three sizes, a small table and a coloured bar chart.

    Returns ``(rgb_uint8, reference_text)``; the reference lists the page's text lines in reading order
    (title, paragraphs, table rows with cells joined by spaces). Chart labels are not part of the reference
    (OCR engines read them in unpredictable order). Sizes scale with ``width`` (1200 px ~ an A4 page at 100 dpi).
    """
    rng = np.random.default_rng(seed)
    scale = width / 1200.0
    margin = int(70 * scale)
    usable = width - 2 * margin
    # Height ~ A4 proportions.
    height = int(width * 1.414)
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    ref: list[str] = []
    y = margin

    def fits(text: str, f: ImageFont.FreeTypeFont) -> bool:
        return draw.textlength(text, font=f) <= usable

    def paragraph(px: int, n_lines: int) -> None:
        nonlocal y
        f = font(px)
        for _ in range(n_lines):
            n = 12
            line = sentence(rng, n)
            while not fits(line, f) and n > 2:
                n -= 1
                line = sentence(rng, n)
            draw.text((margin, y), line, fill=(20, 20, 20), font=f)
            ref.append(line)
            y += int(px * 1.55)
        y += int(px * 0.8)

    title = f"Quarterly Report {int(rng.integers(2000, 2030))}"
    ft = font(max(int(44 * scale), 8), bold=True)
    draw.text((margin, y), title, fill="black", font=ft)
    ref.append(title)
    y += int(44 * scale * 1.8)
    paragraph(max(int(30 * scale), 6), 4)
    paragraph(max(int(24 * scale), 6), 5)
    paragraph(max(int(19 * scale), 6), 4)

    if table:
        px = max(int(22 * scale), 6)
        font(px)
        cols = 3
        col_w = usable // cols
        row_h = int(px * 1.9)
        header = ["Region", "Units", "Revenue"]
        rows = [header] + [
            [
                str(rng.choice(["North", "South", "East", "West", "Central"])),
                str(int(rng.integers(10, 999))),
                f"{rng.uniform(1, 99):.2f}",
            ]
            for _ in range(4)
        ]
        top = y
        for r, row in enumerate(rows):
            for c, cell in enumerate(row):
                draw.text(
                    (margin + c * col_w + int(10 * scale), y + int(px * 0.4)),
                    cell,
                    fill="black",
                    font=font(px, bold=(r == 0)),
                )
            ref.append(" ".join(row))
            y += row_h
        for r in range(len(rows) + 1):
            draw.line(
                [(margin, top + r * row_h), (margin + cols * col_w, top + r * row_h)],
                fill=(60, 60, 60),
                width=max(1, int(2 * scale)),
            )
        for c in range(cols + 1):
            draw.line(
                [(margin + c * col_w, top), (margin + c * col_w, y)], fill=(60, 60, 60), width=max(1, int(2 * scale))
            )
        y += int(px * 1.5)

    if chart:
        ch = min(int(300 * scale), height - y - margin)
        if ch > 40 * scale:
            colours = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40), (148, 103, 189)]
            n = 5
            bar_w = usable // (2 * n)
            base = y + ch
            draw.line([(margin, base), (margin + usable, base)], fill="black", width=max(1, int(2 * scale)))
            for i in range(n):
                bh = int(rng.uniform(0.2, 0.95) * (ch - 10 * scale))
                x0 = margin + int((2 * i + 0.5) * bar_w)
                draw.rectangle([x0, base - bh, x0 + bar_w, base], fill=colours[i])
            y = base + int(20 * scale)

    return np.asarray(img).copy(), "\n".join(ref)
