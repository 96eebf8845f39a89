"""A contact sheet: a grid of captures, each labelled with the degradations applied to it."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from PIL import Image, ImageDraw

from .capture import ALL_NAMES
from .fonts import available_faces


def pick_examples(records: Sequence[dict], limit: int = 24) -> list[dict]:
    """Captures that together show every degradation, preferring images with few degradations.

    For each degradation name, the capture with the fewest other degradations that has it; then one nearly
    clean capture; then more captures in file order until ``limit``.
    """
    captures = [c for rec in records for c in rec["captures"]]
    chosen: list[dict] = []
    clean = [c for c in captures if not c["degradations"]]
    if clean:
        chosen.append(clean[0])
    for name in ALL_NAMES:
        having = [c for c in captures if name in c["degradations"] and c not in chosen]
        if having:
            chosen.append(min(having, key=lambda c: len(c["degradations"])))
    for c in captures:
        if len(chosen) >= limit:
            break
        if c not in chosen:
            chosen.append(c)
    return chosen[:limit]


def contact_sheet(
    root: str | Path,
    records: Sequence[dict],
    out: str | Path,
    columns: int = 6,
    cell: int = 300,
    limit: int = 24,
    quality: int = 80,
) -> Path:
    """Write a labelled grid of example captures from a generated set to ``out`` (JPEG)."""
    root = Path(root)
    examples = pick_examples(records, limit)
    rows = max(1, -(-len(examples) // columns))
    label_h = 34
    sheet = Image.new("RGB", (columns * cell, rows * (cell + label_h)), (255, 255, 255))
    draw = ImageDraw.Draw(sheet)
    font = available_faces()[0].font(13)
    for i, cap in enumerate(examples):
        x, y = (i % columns) * cell, (i // columns) * (cell + label_h)
        with Image.open(root / cap["image"]) as im:
            im = im.convert("RGB")
            im.thumbnail((cell - 8, cell - 8))
            sheet.paste(im, (x + (cell - im.width) // 2, y + (cell - im.height) // 2))
        names = cap["degradations"] or ["nearly clean"]
        text = ", ".join(names)
        lines = [text] if draw.textlength(text, font=font) <= cell - 8 else [", ".join(names[:2]), ", ".join(names[2:])]
        for k, line in enumerate(lines[:2]):
            draw.text((x + 4, y + cell + 1 + k * 16), line, font=font, fill=(0, 0, 0))
    out = Path(out)
    sheet.save(out, format="JPEG", quality=quality)
    return out
