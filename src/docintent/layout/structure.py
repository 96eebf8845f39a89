"""A page as structure: blocks in reading order (headings, paragraphs, list items, key-value pairs) and tables
as cells, every item with its box on the page and a confidence.

:func:`page_structure` builds it from one page's OCR (or PDF text layer) lines:

1. lines are split at wide gaps into items and grouped into visual rows;
2. runs of rows with two or more short items whose columns line up across the rows are tables; each run is
   rebuilt into cells by :func:`docintent.layout.table.reconstruct_table`, and kept only if most of its
   body cells hold text;
3. a row of a label ending in ":" and its value, or a line "Label: value" with a short label, is a key-value
   pair;
4. the rest is put in reading order by a recursive XY cut (bands top to bottom, columns left to right inside a
   band) and consecutive lines of one column with ordinary line spacing are joined into paragraphs; a block of
   one or two lines set clearly larger than the page's body text, or a short line in capitals, is a heading,
   and a line that opens with a bullet or an enumerator is a list item.

Boxes are fractions of the page, ``(x0, y0, x1, y1)``; a confidence is the mean OCR confidence of the lines an
item was read from (1.0 for a PDF text layer). :meth:`Structure.to_dict` is the item schema that ``docintent
extract`` writes (:data:`SCHEMA_VERSION`; the JSON Schema ships as ``docintent/data/extract.schema.json``).

>>> from docintent.ocr.base import OcrLine, OcrResult
>>> from docintent.page import Box
>>> lines = [OcrLine("Price list", Box(.1, .05, .4, .09), .99)]
>>> for i, (name, price) in enumerate([("Product", "Price"), ("Emu", "$12.00"), ("Heron", "$8.50")]):
...     y = .15 + .04 * i
...     lines += [OcrLine(name, Box(.1, y, .2, y + .025), .98), OcrLine(price, Box(.5, y, .6, y + .025), .97)]
>>> s = page_structure(OcrResult(tuple(lines), "test", ""), 1000, 1400)
>>> [b.kind for b in s.blocks], s.tables[0].lookup("Heron", "Price").text
(['heading', 'table'], '$8.50')
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import numpy as np

from ..ocr.base import OcrLine, OcrResult
from ..page import Box, Page
from .lines import Item, Layout
from .table import Table, reconstruct_table

#: The version of the item schema :meth:`Structure.to_dict` writes (major: incompatible change; 1.1 added charts,
#: which ``docintent extract`` reads with :mod:`docintent.reader.chart_table`).
SCHEMA_VERSION = "1.1"

#: Block kinds, in the schema's words.
BLOCK_KINDS = ("heading", "paragraph", "list_item", "key_value", "table", "chart")

_BULLET = re.compile(r"^\s*(?:[•·▪‣◦\-–*]|\(?\d{1,2}[.)]|\(?[a-z][.)])\s+\S")
_KEY_VALUE = re.compile(r"^\s*([A-Za-z][\w .#/&()'-]{0,28}?)\s*:\s+(\S.*)$")
_MAX_CELL_CHARS = 48


@dataclass(frozen=True)
class Block:
    """One block in reading order: ``kind`` (one of :data:`BLOCK_KINDS`), its text, box, confidence, and for a
    key-value pair its ``key`` and ``value``; for a table, ``table`` is its index in :attr:`Structure.tables`."""

    kind: str
    text: str
    box: Box
    _: KW_ONLY
    confidence: float
    key: str | None = None
    value: str | None = None
    table: int | None = None
    level: int | None = None


@dataclass
class Structure:
    """The blocks of one page in reading order, its tables, and the page size in pixels."""

    width: int
    height: int
    blocks: list[Block] = field(default_factory=list)
    _: KW_ONLY
    tables: list[Table] = field(default_factory=list)
    source: str = "ocr"

    def to_dict(self, page: int = 1) -> dict[str, Any]:
        """The page in the extract schema: blocks (with their reading ``order``) and tables with cells."""
        blocks = []
        for order, b in enumerate(self.blocks):
            item: dict[str, Any] = {
                "order": order,
                "kind": b.kind,
                "text": b.text,
                "box": _box(b.box),
                "confidence": round(b.confidence, 4),
            }
            if b.kind == "key_value":
                item.update(key=b.key, value=b.value)
            if b.kind == "heading":
                item["level"] = b.level or 1
            if b.table is not None:
                item["table"] = b.table
            blocks.append(item)
        tables = []
        for index, t in enumerate(self.tables):
            conf = t.meta.get("confidence", {})
            tables.append(
                {
                    "index": index,
                    "box": _box(t.region or Box.FULL),
                    "n_rows": t.n_rows,
                    "n_cols": t.n_cols,
                    "header_rows": t.header_rows,
                    "confidence": round(float(t.meta.get("mean_confidence", 0.0)), 4),
                    "cells": [
                        {
                            "row": c.row,
                            "col": c.col,
                            "colspan": c.colspan,
                            "header": c.row < t.header_rows,
                            "text": c.text,
                            "box": _box(c.box),
                            "confidence": round(conf.get((c.row, c.col), 0.0), 4),
                        }
                        for row in t.rows
                        for c in row
                    ],
                }
            )
        return {
            "page": page,
            "width": self.width,
            "height": self.height,
            "source": self.source,
            "blocks": blocks,
            "tables": tables,
        }

    def to_markdown(self) -> str:
        """The page as Markdown (see :func:`page_markdown`)."""
        return page_markdown(self.to_dict())

    @property
    def text(self) -> str:
        """Every block's text in reading order."""
        return "\n".join(b.text for b in self.blocks)


_BULLET_PREFIX = re.compile(r"^\s*[•·▪‣◦\-–*]\s+")


def page_markdown(page: dict[str, Any]) -> str:
    """A page of the extract schema as Markdown: headings, paragraphs, list items, key-value pairs and tables
    in reading order."""
    out: list[str] = []
    for block in page["blocks"]:
        kind = block["kind"]
        if kind == "heading":
            out.append("#" * min(block.get("level", 1), 6) + " " + block["text"])
        elif kind == "list_item":
            out.append("- " + _BULLET_PREFIX.sub("", block["text"]))
        elif kind == "key_value":
            out.append(f"**{block['key']}:** {block['value']}")
        elif kind == "table":
            out.append(_table_markdown(page["tables"][block["table"]]))
        elif kind == "chart":
            chart = page["charts"][block["chart"]]
            title = f"**{chart['title']}**\n\n" if chart.get("title") else ""
            out.append(title + _grid_markdown(chart_grid(chart), 1))
        else:
            out.append(block["text"])
    return "\n\n".join(out) + ("\n" if out else "")


def table_grid(table: dict[str, Any]) -> list[list[str]]:
    """A table of the extract schema as a dense grid of texts (a spanning cell's text in each column it covers)."""
    grid = [["" for _ in range(table["n_cols"])] for _ in range(table["n_rows"])]
    for cell in table["cells"]:
        for k in range(cell["colspan"]):
            if cell["col"] + k < table["n_cols"]:
                grid[cell["row"]][cell["col"] + k] = cell["text"]
    return grid


def chart_grid(chart: dict[str, Any]) -> list[list[str]]:
    """A chart of the extract schema as a grid of texts: a header row of series names over one row per category
    (a value not read is an empty cell)."""
    values = {(v["series"], v["category"]): v["value"] for v in chart["values"]}

    def text(value: float | None) -> str:
        if value is None:
            return ""
        return str(int(value)) if float(value).is_integer() else f"{value:.6g}"

    return [[""] + list(chart["series"])] + [
        [c] + [text(values.get((s, c))) for s in chart["series"]] for c in chart["categories"]
    ]


def _table_markdown(table: dict[str, Any]) -> str:
    return _grid_markdown(table_grid(table), table["header_rows"])


def _grid_markdown(grid: list[list[str]], header_rows: int) -> str:
    if not grid:
        return ""
    n_head = max(header_rows, 1)
    head = [" ".join(dict.fromkeys(t for t in col if t)) for col in zip(*grid[:n_head])]

    def fmt(cells: Sequence[str]) -> str:
        return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

    return "\n".join([fmt(head), "|" + "|".join("---" for _ in head) + "|"] + [fmt(r) for r in grid[n_head:]])


def _box(box: Box) -> list[float]:
    return [round(v, 5) for v in box.as_tuple()]


def _rows(items: list[Item], unit: float) -> list[list[Item]]:
    """Items grouped into visual rows (vertical centres within half a text height), top to bottom."""
    rows: list[list[Item]] = []
    centre = 0.0
    for item in sorted(items, key=lambda i: (i.cy, i.box.x0)):
        if rows and abs(item.cy - centre) < 0.5 * unit:
            rows[-1].append(item)
            centre = float(np.mean([i.cy for i in rows[-1]]))
        else:
            rows.append([item])
            centre = item.cy
    return [sorted(r, key=lambda i: i.box.x0) for r in rows]


def _is_key_value_row(row: list[Item]) -> bool:
    return len(row) == 2 and row[0].text.rstrip().endswith(":") and len(row[0].text) <= 32


def _tabular(row: list[Item]) -> bool:
    """A row that could be a table row: two or more short items (cells), not a label and its value."""
    if len(row) < 2 or _is_key_value_row(row):
        return False
    return float(np.median([len(i.text) for i in row])) <= _MAX_CELL_CHARS


def _aligned(a: list[Item], b: list[Item], unit: float) -> int:
    """How many items of row ``b`` share a column with an item of row ``a`` (overlap or a common edge)."""
    n = 0
    for j in b:
        for i in a:
            overlap = min(i.box.x1, j.box.x1) - max(i.box.x0, j.box.x0)
            if overlap > 0 or abs(i.box.x0 - j.box.x0) < unit or abs(i.box.x1 - j.box.x1) < unit:
                n += 1
                break
    return n


def _table_runs(rows: list[list[Item]], unit: float) -> list[tuple[int, int]]:
    """Runs ``[start, end)`` of rows that form a table: tabular rows with columns lining up, each row close to
    the one above; one non-tabular row (a wrapped cell's second line, a section row) may sit inside a run."""
    runs: list[tuple[int, int]] = []
    i = 0
    while i < len(rows):
        if not _tabular(rows[i]):
            i += 1
            continue
        start, end = i, i + 1
        last_tab = i
        while end < len(rows):
            gap = rows[end][0].box.y0 - max(it.box.y1 for it in rows[end - 1])
            if gap > 3.0 * unit:
                break
            if _tabular(rows[end]) and _aligned(rows[last_tab], rows[end], unit) >= 2:
                last_tab = end
                end += 1
                continue
            # one row that is not tabular, inside the table's columns, followed by a tabular row
            if (
                end + 1 < len(rows)
                and _tabular(rows[end + 1])
                and _aligned(rows[last_tab], rows[end + 1], unit) >= 2
                and rows[end + 1][0].box.y0 - max(it.box.y1 for it in rows[end]) <= 3.0 * unit
                and not _is_key_value_row(rows[end])
            ):
                end += 1
                continue
            break
        end = last_tab + 1
        n_cols = max(len(r) for r in rows[start:end])
        if end - start >= 3 or (end - start >= 2 and n_cols >= 3):
            runs.append((start, end))
        i = end
    return runs


def _build_table(
    layout_items: Sequence[Item],
    items: list[Item],
    width: int | None,
    height: int | None,
    lines: Sequence[OcrLine] | None = None,
) -> Table | None:
    region = Box.enclosing(i.box for i in items)
    grown = region.expand(0.002, 0.002)
    members = [i for i in layout_items if grown.x0 <= i.cx <= grown.x1 and grown.y0 <= i.cy <= grown.y1]
    if not members:
        return None
    size = (width, height) if width and height else None
    # The engine's lines (with their word boxes, when it gave them) rebuild cells better than the split items.
    source: Any = [(i.text, i.box) for i in members]
    if lines is not None:
        inside = [
            line
            for line in lines
            if grown.x0 <= line.box.center[0] <= grown.x1 and grown.y0 <= line.box.center[1] <= grown.y1
        ]
        source = inside or source
    table = reconstruct_table(source, page_size=size)
    if table.n_cols < 2 or table.n_rows < 2:
        return None
    body = [c for row in table.body for c in row]
    if not body or sum(1 for c in body if c.text) < 0.5 * len(body):
        return None
    table.region = Box.enclosing(i.box for i in members)
    mean = float(np.mean([m.confidence for m in members]))
    confidence: dict[tuple[int, int], float] = {}
    for row in table.rows:
        for c in row:
            scores = [m.confidence for m in members if c.box.x0 <= m.cx <= c.box.x1 and c.box.y0 <= m.cy <= c.box.y1]
            confidence[(c.row, c.col)] = float(np.mean(scores)) if scores and c.text else mean
    table.meta["confidence"] = confidence
    table.meta["mean_confidence"] = mean
    return table


def xy_cut(boxes: Sequence[Box], min_gap: float = 0.015) -> list[int]:
    """Indices of ``boxes`` in reading order by a recursive XY cut: each group is split at its widest empty
    gap, horizontal (the part above is read first) or vertical (a column gap of at least ``min_gap`` of the
    page; the left part is read first), so a gutter between two columns is cut before the spaces between their
    lines; a group no gap divides is read top to bottom, left to right."""
    order: list[int] = []

    def widest(spans: list[tuple[float, float]], need: float) -> tuple[float, float] | None:
        spans = sorted(spans)
        best: tuple[float, float] | None = None
        reach = spans[0][1]
        for a, b in spans[1:]:
            if a - reach >= need and (best is None or a - reach > best[0]):
                best = (a - reach, (reach + a) / 2)
            reach = max(reach, b)
        return best

    stack: list[list[int]] = [list(range(len(boxes)))]
    while stack:
        idx = stack.pop()
        if len(idx) > 1:
            ygap = widest([(boxes[i].y0, boxes[i].y1) for i in idx], 1e-4)
            xgap = widest([(boxes[i].x0, boxes[i].x1) for i in idx], min_gap)
            axis, cut = (
                (0, xgap[1]) if xgap and (ygap is None or xgap[0] > ygap[0]) else (1, ygap[1]) if ygap else (-1, 0.0)
            )
            if axis >= 0:
                first = [i for i in idx if boxes[i].center[axis] <= cut]
                second = [i for i in idx if boxes[i].center[axis] > cut]
                if first and second:
                    stack += [second, first]  # the first part is read first
                    continue
        order.extend(sorted(idx, key=lambda i: (round(boxes[i].y0, 3), boxes[i].x0)))
    return order


def page_structure(
    ocr: OcrResult, width: int, height: int, *, source: str | None = None, page: Page | None = None
) -> Structure:
    """The structure of one page from its OCR (or text-layer) lines; ``width`` x ``height``: the page in
    pixels (horizontal gaps are judged in text heights). ``page``: the pixels the OCR read, to measure each
    line's type size from its ink (an OCR box's height says little about it); without it, box heights."""
    kind = source or ("text-layer" if ocr.engine == "pdf-text" else "ocr")
    layout = Layout.from_ocr(ocr, split_gap=1.2)
    return layout_structure(layout, width, height, source=kind, page=page, lines=layout.lines)


def tables_of(layout: Layout, width: int | None = None, height: int | None = None) -> list[Table]:
    """The tables of a page's layout (see :func:`page_structure`), in reading order."""
    return layout_structure(layout, width, height, lines=layout.lines or None).tables


def layout_structure(
    layout: Layout,
    width: int | None,
    height: int | None,
    *,
    source: str = "ocr",
    page: Page | None = None,
    lines: Sequence[OcrLine] | None = None,
) -> Structure:
    """:func:`page_structure` from a :class:`~docintent.layout.lines.Layout` (lines already split at wide
    gaps); without the page size, the page's aspect ratio is estimated from the text."""
    structure = Structure(width or 0, height or 0, source=source)
    items = [i for i in layout.items if i.text.strip()]
    if not items:
        return structure
    unit = float(np.median([i.h for i in items]))
    rows = _rows(items, unit)
    used: set[int] = set()
    units: list[tuple[Box, str, Any]] = []  # (box, kind, payload) to put in reading order
    for start, end in _table_runs(rows, unit):
        members = [i for r in rows[start:end] for i in r]
        table = _build_table(items, members, width, height, lines)
        if table is None:
            continue
        structure.tables.append(table)
        region = table.region or Box.enclosing(i.box for i in members)
        units.append((region, "table", len(structure.tables) - 1))
        used.update(i.index for i in items if region.x0 <= i.cx <= region.x1 and region.y0 <= i.cy <= region.y1)
    for row in rows:
        if _is_key_value_row(row) and not any(i.index in used for i in row):
            key, value = row[0].text.rstrip().rstrip(":").strip(), row[1].text.strip()
            units.append(
                (
                    row[0].box.union(row[1].box),
                    "key_value",
                    (key, value, float(np.mean([row[0].confidence, row[1].confidence]))),
                )
            )
            used.update(i.index for i in row)
    rest = [i for i in items if i.index not in used]
    # Items of one visual row that a wide gap split (a line set in two parts) are read as one line here.
    for item in rest:
        units.append((item.box, "line", item))
    order = xy_cut([u[0] for u in units])
    pending: list[Item] = []
    # Body text's line height, from the long lines (detection boxes of short words and cells run taller).
    size = _type_sizes(items, page)
    long_lines = [size[i.index] for i in rest if len(i.text) >= 25]
    body = float(np.median(long_lines)) if len(long_lines) >= 3 else float(np.median(list(size.values())))

    def flush() -> None:
        if pending:
            structure.blocks.extend(_text_blocks(pending, body, size))
            pending.clear()

    for k in order:
        box, what, payload = units[k]
        if what == "line":
            if pending and not _same_paragraph(pending[-1], payload, unit):
                flush()
            pending.append(payload)
            continue
        flush()
        if what == "table":
            t = structure.tables[payload]
            structure.blocks.append(
                Block(
                    "table", t.to_markdown(), box, confidence=float(t.meta.get("mean_confidence", 0.0)), table=payload
                )
            )
        else:
            key, value, conf = payload
            structure.blocks.append(Block("key_value", f"{key}: {value}", box, confidence=conf, key=key, value=value))
    flush()
    # Tables are numbered in reading order.
    seen = [b.table for b in structure.blocks if b.table is not None]
    if seen != list(range(len(seen))):
        renumber = {old: new for new, old in enumerate(seen)}
        structure.tables = [structure.tables[old] for old in seen]
        structure.blocks = [
            Block(
                b.kind,
                b.text,
                b.box,
                confidence=b.confidence,
                key=b.key,
                value=b.value,
                table=renumber[b.table],
                level=b.level,
            )
            if b.table is not None
            else b
            for b in structure.blocks
        ]
    return structure


def _same_paragraph(prev: Item, item: Item, unit: float) -> bool:
    gap = item.box.y0 - prev.box.y1
    if gap < -0.5 * min(prev.h, item.h) or gap > 0.9 * max(prev.h, item.h):
        return False  # beside each other, or a blank line between
    if max(prev.h, item.h) > 1.3 * min(prev.h, item.h):
        return False  # a change of type size
    if _BULLET.match(item.text):
        return False
    return abs(item.box.x0 - prev.box.x0) < 3 * unit or min(prev.box.x1, item.box.x1) > max(prev.box.x0, item.box.x0)


def _type_sizes(items: Sequence[Item], page: Page | None) -> dict[int, float]:
    """Each item's type size as a page fraction: the height of the ink rows inside its box on ``page`` (an OCR
    detection box is padded by an amount that depends on the word's length), else the box's height."""
    sizes = {i.index: i.h for i in items}
    if page is None:
        return sizes
    gray = page.pixels.mean(axis=2) if page.pixels.ndim == 3 else page.pixels.astype(np.float32)
    h, w = gray.shape[:2]
    for i in items:
        y0, y1 = int(i.box.y0 * h), int(np.ceil(i.box.y1 * h))
        x0, x1 = int(i.box.x0 * w), int(np.ceil(i.box.x1 * w))
        crop = gray[max(y0, 0) : min(y1, h), max(x0, 0) : min(x1, w)]
        if crop.size < 4:
            continue
        lo, hi = float(crop.min()), float(crop.max())
        if hi - lo < 40:
            continue
        dark = crop < (lo + hi) / 2
        # Ruling lines are not type: drop columns and rows that are dark nearly all along (cell borders).
        dark = dark[:, dark.mean(axis=0) < 0.8]
        if dark.size == 0:
            continue
        ink = dark.mean(axis=1)
        rows = np.flatnonzero((ink > 0.02) & (ink < 0.8))
        if rows.size:
            sizes[i.index] = (rows[-1] - rows[0] + 1) / h
    return sizes


def _text_blocks(lines: list[Item], unit: float, size: dict[int, float]) -> list[Block]:
    """One block from consecutive lines of a paragraph (a list item or a heading when it is one)."""
    text = " ".join(i.text.strip() for i in lines)
    text = re.sub(r"(\w)- (\w)", r"\1\2", text) if any(i.text.rstrip().endswith("-") for i in lines[:-1]) else text
    box = Box.enclosing(i.box for i in lines)
    conf = float(np.mean([i.confidence for i in lines]))
    h = float(np.median([size.get(i.index, i.h) for i in lines]))
    if _BULLET.match(lines[0].text):
        return [Block("list_item", text, box, confidence=conf)]
    shouting = text.isupper() and len(text) <= 60 and sum(c.isalpha() for c in text) >= 3
    large = h >= 1.25 * unit
    if len(lines) <= 2 and len(text) <= 120 and (large or shouting) and not text.rstrip().endswith(","):
        return [Block("heading", text, box, confidence=conf, level=1 if h >= 1.6 * unit else 2)]
    if len(lines) == 1:
        m = _KEY_VALUE.match(text)
        if m and len(m.group(1).split()) <= 4:
            return [Block("key_value", text, box, confidence=conf, key=m.group(1).strip(), value=m.group(2).strip())]
    return [Block("paragraph", text, box, confidence=conf)]


__all__ = [
    "BLOCK_KINDS",
    "SCHEMA_VERSION",
    "Block",
    "Structure",
    "chart_grid",
    "layout_structure",
    "page_markdown",
    "page_structure",
    "table_grid",
    "tables_of",
    "xy_cut",
]
