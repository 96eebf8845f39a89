"""Geometry over OCR lines: rows, right and below neighbours, columns under a header."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..ocr.base import OcrLine, OcrResult
from ..page import Box


@dataclass(frozen=True)
class Item:
    """An OCR line (or a word group) with its geometry in page fractions."""

    text: str
    box: Box
    confidence: float
    index: int

    @property
    def cx(self) -> float:
        return (self.box.x0 + self.box.x1) / 2

    @property
    def cy(self) -> float:
        return (self.box.y0 + self.box.y1) / 2

    @property
    def h(self) -> float:
        return self.box.height


def v_overlap(a: Item, b: Item) -> float:
    """Vertical overlap as a fraction of the shorter item's height."""
    inter = min(a.box.y1, b.box.y1) - max(a.box.y0, b.box.y0)
    return max(inter, 0.0) / max(min(a.h, b.h), 1e-9)


def h_overlap(a: Item | Box, b: Item | Box) -> float:
    """Horizontal overlap as a fraction of the narrower extent."""
    ab = a.box if isinstance(a, Item) else a
    bb = b.box if isinstance(b, Item) else b
    inter = min(ab.x1, bb.x1) - max(ab.x0, bb.x0)
    return max(inter, 0.0) / max(min(ab.width, bb.width), 1e-9)


class Layout:
    """OCR lines of one page as positioned items, split at wide gaps into cells.

    RapidOCR sometimes merges a label and its value into one line and sometimes splits a table row into
    cells; splitting lines at gaps wider than ~1.5 line heights gives one consistent granularity.
    """

    def __init__(self, items: Sequence[Item], lines: Sequence[OcrLine] = ()) -> None:
        self.items = list(items)
        self.median_h = sorted(i.h for i in self.items)[len(self.items) // 2] if self.items else 0.02
        #: The engine's lines the items were split from (with their word boxes), in top-to-bottom order; empty
        #: for a layout built from items alone.
        self.lines: tuple[OcrLine, ...] = tuple(
            sorted(lines, key=lambda l: (round(l.box.y0, 6), round(l.box.x0, 6), l.text))
        )

    @classmethod
    def from_ocr(cls, result: OcrResult, split_gap: float = 1.2) -> Layout:
        items: list[Item] = []
        for line in result.lines:
            for text, box, conf in _split_line(line, split_gap):
                items.append(Item(text, box, conf, len(items)))
        return cls(items, result.lines)

    @property
    def text(self) -> str:
        return "\n".join(i.text for i in self.items)

    def same_row(self, item: Item, min_overlap: float = 0.5) -> list[Item]:
        """Items on the same visual row as ``item`` (excluding it), left to right."""
        row = [o for o in self.items if o is not item and v_overlap(o, item) >= min_overlap]
        return sorted(row, key=lambda o: o.box.x0)

    def right_of(self, item: Item) -> list[Item]:
        """Items on the same row to the right, nearest first."""
        return [o for o in self.same_row(item) if o.box.x0 >= item.box.x1 - 0.25 * item.h]

    def left_of(self, item: Item) -> list[Item]:
        return [o for o in reversed(self.same_row(item)) if o.box.x1 <= item.box.x0 + 0.25 * item.h]

    def below(self, item: Item, max_lines: float = 3.0) -> list[Item]:
        """Items just below ``item`` that overlap it horizontally or start near its left edge, nearest first."""
        limit = item.box.y1 + max_lines * max(item.h, self.median_h) * 1.6
        out = [
            o
            for o in self.items
            if o is not item
            and o.box.y0 >= item.box.y1 - 0.3 * item.h
            and o.box.y0 <= limit
            and (h_overlap(o, item) > 0.3 or abs(o.box.x0 - item.box.x0) < 2 * item.h)
        ]
        return sorted(out, key=lambda o: o.box.y0)

    def column_under(self, header: Item, stop_gap: float = 4.0) -> list[Item]:
        """Items below ``header`` whose horizontal extent overlaps it (a table column), top to bottom."""
        cands = sorted(
            (
                o
                for o in self.items
                if o is not header and o.box.y0 >= header.box.y1 - 0.3 * header.h and h_overlap(o, header) > 0.3
            ),
            key=lambda o: o.box.y0,
        )
        out: list[Item] = []
        last_y = header.box.y1
        for o in cands:
            if o.box.y0 - last_y > stop_gap * self.median_h * 1.6:
                break
            out.append(o)
            last_y = o.box.y1
        return out

    def region_of(self, items: Iterable[Item], margin: float = 1.5) -> Box:
        """Bounding box of ``items`` with a margin of ``margin`` median line heights."""
        items = list(items)
        if not items:
            return Box.FULL
        box = items[0].box
        for it in items[1:]:
            box = box.union(it.box)
        m = margin * self.median_h
        return box.expand(m, m)


def _split_line(line: OcrLine, gap: float) -> list[tuple[str, Box, float]]:
    words = line.words
    if len(words) < 2:
        return [(line.text, line.box, line.confidence)]
    height = line.box.height
    groups: list[list] = [[words[0]]]
    for prev, word in zip(words, words[1:]):
        if word.box.x0 - prev.box.x1 > gap * height:
            groups.append([word])
        else:
            groups[-1].append(word)
    if len(groups) == 1:
        return [(line.text, line.box, line.confidence)]
    out = []
    for group in groups:
        box = group[0].box
        for w in group[1:]:
            box = box.union(w.box)
        box = Box(box.x0, line.box.y0, box.x1, line.box.y1)
        out.append((" ".join(w.text for w in group), box, min(w.confidence for w in group)))
    return out
