"""OCR-like lines from a born-digital PDF page's text layer (pypdfium2): characters grouped into visual lines,
each visual line split where a horizontal gap is wider than ~1.5 line heights (as an OCR engine splits
columns); boxes and font sizes as fractions of the page (y down)."""

from __future__ import annotations

import ctypes
import re
import unicodedata
from collections.abc import Callable

import pypdfium2.raw as pdfium_c

SPLIT_GAP = 1.5  # line heights: a wider horizontal gap starts a new line
SPACE_GAP = 0.12  # line heights: a wider gap between two glyphs is a space


def norm(text: str) -> str:
    """Whitespace-, case- and typography-normalised text for the gold-answer check."""
    text = unicodedata.normalize("NFKC", text).replace("\ufffe", "").replace("\u00ad", "")
    text = text.replace("’", "'").replace("“", '"').replace("”", '"').replace("–", "-").replace("—", "-")
    return re.sub(r"\s+", " ", text).strip().lower()


def shows(lines: list[dict], text: str) -> Callable[[str], bool]:
    """Whether a page shows a string: in its text or its lines, normalised (:func:`norm`), or so once every space is
    taken out (the layer may split a value into glyph runs the lines join otherwise)."""
    shown = norm(text) + " | " + norm(" | ".join(x["text"] for x in lines))
    flat = shown.replace(" ", "")
    return lambda s: norm(s) in shown or norm(s).replace(" ", "") in flat


def page_chars(page) -> tuple[str, list[tuple[str, float, float, float, float]]]:
    """The text of the characters inside the page (in stream order, generated spaces kept) and the visible
    glyphs as (char, x0, y0, x1, y1) in page points, y down."""
    w, h = page.get_size()
    tp = page.get_textpage()
    raw = tp.raw
    rect = pdfium_c.FS_RECTF()
    text: list[str] = []
    glyphs = []
    for i in range(tp.count_chars()):
        ch = chr(pdfium_c.FPDFText_GetUnicode(raw, i) or 32)
        if ch.isspace():
            text.append(" ")
            continue
        if not pdfium_c.FPDFText_GetLooseCharBox(raw, i, ctypes.byref(rect)):
            continue
        x0, x1, y0, y1 = rect.left, rect.right, h - rect.top, h - rect.bottom
        if x1 <= 0 or x0 >= w or y1 <= 0 or y0 >= h or y1 - y0 <= 0:
            continue
        text.append(ch)
        glyphs.append((ch, x0, y0, x1, y1))
    tp.close()
    return "".join(text), glyphs


def ocr_lines(page) -> tuple[list[dict], str]:
    """The page's OCR-like lines and its visible text (for the answer check)."""
    w, h = page.get_size()
    text, glyphs = page_chars(page)
    glyphs.sort(key=lambda g: ((g[2] + g[4]) / 2, g[1]))
    rows: list[list[tuple]] = []
    centre = height = 0.0
    for g in glyphs:
        yc, gh = (g[2] + g[4]) / 2, g[4] - g[2]
        if rows and abs(yc - centre) <= 0.35 * max(height, gh):
            rows[-1].append(g)
            n = len(rows[-1])
            centre += (yc - centre) / n
            height = max(height, gh)
        else:
            rows.append([g])
            centre, height = yc, gh
    out: list[dict] = []
    for row in rows:
        row.sort(key=lambda g: g[1])
        lh = sorted(g[4] - g[2] for g in row)[len(row) // 2]
        seg = [row[0]]
        for prev, g in zip(row, row[1:]):
            if g[1] - prev[3] > SPLIT_GAP * lh:
                out.append(_line(seg, w, h))
                seg = []
            seg.append(g)
        out.append(_line(seg, w, h))
    out.sort(key=lambda x: (round(x["box"][1], 3), x["box"][0]))
    return out, text


def _line(seg: list[tuple], w: float, h: float) -> dict:
    lh = sorted(g[4] - g[2] for g in seg)[len(seg) // 2]
    parts = [seg[0][0]]
    for prev, g in zip(seg, seg[1:]):
        if g[1] - prev[3] > SPACE_GAP * lh:
            parts.append(" ")
        parts.append(g[0])
    x0, y0 = min(g[1] for g in seg), min(g[2] for g in seg)
    x1, y1 = max(g[3] for g in seg), max(g[4] for g in seg)
    return {
        "text": "".join(parts),
        "box": [round(x0 / w, 4), round(y0 / h, 4), round(x1 / w, 4), round(y1 / h, 4)],
        "confidence": 1.0,
        "size": round(lh / h, 4),
    }


#: The Debian font packages the corpus layouts print with.
FONT_PACKAGES = ("fonts-dejavu-core", "fonts-liberation", "fonts-noto-core")


def printing_stack() -> dict[str, str]:
    """The versions of what turns a layout into a text layer: Chromium, the fonts and pdfium. The corpus's bytes
    (its lines' boxes) follow them, so two machines with other versions print other digests of the same
    questions."""
    import shutil
    import subprocess

    import pypdfium2

    out: dict[str, str] = {"pypdfium2": str(pypdfium2.version.PYPDFIUM_INFO)}
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if exe:
        done = subprocess.run([exe, "--version"], capture_output=True, text=True, timeout=60)
        out["chromium"] = done.stdout.strip()
    if shutil.which("dpkg-query"):
        for pkg in FONT_PACKAGES:
            done = subprocess.run(["dpkg-query", "-W", "-f=${Version}", pkg], capture_output=True, text=True)
            out[pkg] = done.stdout.strip() or "not installed"
    return out
