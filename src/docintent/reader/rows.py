"""Visual rows and columns of a page, and the cells questions point at through them.

A table, a receipt, a statement, a programme and a calendar all print one record per visual row, whatever
their ruling: a row is the items whose vertical extents overlap, read left to right; a cell's column header is
the top of the contiguous run of items above it that overlap it horizontally. Questions name a row by one of
its values ("the Electricity amount", "which item cost 28.44?") and a column by a header word ("quantity",
"2024"); nothing here knows a template.

>>> from docintent.page import Box
>>> items = [Item("Item", Box(.1, .1, .2, .12), 1, 0), Item("Price", Box(.6, .1, .7, .12), 1, 1),
...          Item("Tea", Box(.1, .13, .2, .15), 1, 2), Item("2.50", Box(.6, .13, .7, .15), 1, 3)]
>>> layout = Layout(items)
>>> row = best_row(layout, "tea")[1]
>>> [c.text for c in row.items], header_above(layout, items[3]).text
(['Tea', '2.50'], 'Price')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from rapidfuzz import fuzz

from ..layout.lines import Item, Layout, h_overlap, v_overlap
from .extract import tokens, word_match
from .values import DATE_RE, TIME_RE, find_numbers


@dataclass
class Row:
    """One visual row: its items left to right."""

    items: list[Item]

    @property
    def text(self) -> str:
        return " ".join(i.text for i in self.items)

    @property
    def cy(self) -> float:
        return sum(i.cy for i in self.items) / len(self.items)

    def level(self, item: Item) -> float:
        """How squarely ``item`` sits on the line of the row's label (its first item): their vertical overlap,
        1 when level. On a tilted or warped page a "row" gathers cells of neighbouring rows; a value read from
        it deserves less confidence."""
        head = self.items[0]
        if item is head:
            return 1.0
        return min(1.0, v_overlap(head, item) / 0.9)


def visual_rows(layout: Layout) -> list[Row]:
    """The page's items grouped into visual rows, top to bottom."""
    rows: list[list[Item]] = []
    for item in sorted(layout.items, key=lambda i: (i.cy, i.box.x0)):
        for row in reversed(rows[-4:]):
            if v_overlap(row[0], item) >= 0.5:
                row.append(item)
                break
        else:
            rows.append([item])
    return [Row(sorted(r, key=lambda i: i.box.x0)) for r in rows]


def squash(text: str) -> str:
    """Lower-case words and digits only, single-spaced (how phrases are compared)."""
    return re.sub(r"[^a-z0-9à-ÿ]+", " ", text.lower()).strip()


def _stem(text: str) -> str:
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in text.split())


def phrase_score(phrase: str, text: str) -> float:
    """How well ``text`` contains ``phrase`` (1 when its words appear in order, else fuzzy partial match)."""
    p, t = _stem(squash(phrase)), _stem(squash(text))
    if not p or not t:
        return 0.0
    if re.search(rf"(?<![a-z0-9]){re.escape(p)}(?![a-z0-9])", t):
        return 1.0
    if len(p) < 4:
        return 0.0
    return fuzz.partial_ratio(p, t) / 100.0 * (0.97 if len(t) >= len(p) else 0.9)


def best_row(layout: Layout, phrase: str, rows: list[Row] | None = None) -> tuple[float, Row | None]:
    """The row that carries ``phrase`` best (shorter rows win ties: the phrase is their label)."""
    best: tuple[float, Row | None] = (0.0, None)
    for row in rows if rows is not None else visual_rows(layout):
        s = phrase_score(phrase, row.text)
        if s <= 0:
            continue
        s -= 0.0005 * max(len(squash(row.text)) - len(squash(phrase)), 0)
        if s > best[0]:
            best = (s, row)
    return best


_FILLER_WORDS = {
    "the",
    "a",
    "an",
    "of",
    "in",
    "for",
    "at",
    "on",
    "to",
    "is",
    "are",
    "was",
    "were",
    "do",
    "does",
    "did",
    "there",
    "that",
    "those",
    "this",
    "these",
    "one",
    "ones",
    "by",
    "with",
}


def resolve_target(
    layout: Layout, phrase: str, rows: list[Row] | None = None, min_score: float = 0.86
) -> tuple[float, Row | None, str]:
    """The row a question's target phrase names, trying the phrase without leading / trailing words the
    question wraps it in ("a stuffed gnu cost" -> "stuffed gnu"); returns (score, row, the words matched)."""
    words = [w for w in phrase.split() if w]
    while words and words[0].lower() in _FILLER_WORDS:
        words = words[1:]
    best: tuple[float, Row | None, str] = (0.0, None, "")
    n = len(words)
    for drop_end in range(0, min(3, n)):
        for drop_start in range(0, min(3, n - drop_end)):
            sub = words[drop_start : n - drop_end]
            if not sub or (len(sub) == 1 and len(sub[0]) < 2):
                continue
            text = " ".join(sub)
            s, row = best_row(layout, text, rows)
            s -= 0.08 * drop_start + 0.06 * drop_end
            if row is not None and s > best[0]:
                best = (s, row, text)
    return best if best[0] >= min_score else (best[0], None, best[2])


def header_above(layout: Layout, cell: Item, max_gap: float = 3.0) -> Item | None:
    """The header of ``cell``'s column: the top of the contiguous run of narrow items above it that overlap it
    horizontally (None when the run never reaches a non-numeric item)."""
    stack = headers_above(layout, cell, max_gap)
    return stack[-1] if stack else None


def headers_above(layout: Layout, cell: Item, max_gap: float = 3.0) -> list[Item]:
    """Every non-numeric item of the contiguous run above ``cell`` (nearest first): a column's header and what
    stands over it, such as a two-line header's upper line or a title printed just above the table. Which of them
    names the column is for the question's words to say, not for their order."""
    unit = max(layout.median_h, 1e-6) * 1.6
    above = sorted(
        (
            o
            for o in layout.items
            if o is not cell and o.cy < cell.cy - 0.3 * cell.h and h_overlap(o, cell) > 0.3 and o.box.width < 0.45
        ),
        key=lambda o: -o.cy,
    )
    last_y0 = cell.box.y0
    stack: list[Item] = []
    for o in above:
        if last_y0 - o.box.y1 > max_gap * unit:
            break
        if o.box.y1 > last_y0 + 0.5 * o.h:
            continue  # beside rather than above
        last_y0 = o.box.y0
        if not find_numbers(o.text) or re.fullmatch(r"\s*(?:19|20)\d\d\s*", o.text):
            stack.append(o)
    return stack


def header_score(header: Item | None, words: list[str]) -> float:
    """How well a column header carries any of ``words`` (0..1)."""
    if header is None or not words:
        return 0.0
    toks = tokens(header.text)
    score = max((word_match(w, t) for w in words for t in toks), default=0.0)
    heads = {t.lower() for t in toks}
    asked = {w.lower() for w in words}
    if "unit" in heads and not asked & {"unit", "per", "each"}:
        score = max(0.0, score - 0.5)  # "the total price" is not the unit price
    if "total" in asked and heads & {"amount", "total", "sum"}:
        score = max(score, 0.9)  # a line's total sits under its amount
    return score


_LABELISH = re.compile(r"[A-Za-zÀ-ÿ]{3,}")


def is_textual(item: Item) -> bool:
    """A cell that reads as words (a row label, a title), not a figure, a date or a time."""
    t = item.text.strip()
    if not _LABELISH.search(t):
        return False
    if DATE_RE.fullmatch(t) or TIME_RE.fullmatch(t):
        return False
    stripped = DATE_RE.sub(" ", TIME_RE.sub(" ", t))
    return bool(_LABELISH.search(stripped))


def clean_label(text: str, quantities: bool = False) -> str:
    """A row label without what a till prints after it ("Orange juice 3 @ 9.48" -> "Orange juice" when the row
    has ``quantities``)."""
    text = re.sub(r"\s+[x×@]\s*[\d.,]*\s*$", "", text.strip())
    if quantities:
        text = re.sub(r"\s+\d+\s*[x×@]?$", "", text)
    return text.strip(" :;,·•-")


def row_label(row_items: list[Item], cell: Item, unit: float) -> tuple[str, list[Item]]:
    """The words of the row left of ``cell`` that belong together (OCR splits one cell's words at wide
    letter spacing): the run of textual items that ends nearest ``cell``'s label position."""
    left = [o for o in row_items if o.box.x1 <= cell.box.x0 + 0.25 * cell.h and o is not cell]
    runs: list[list[Item]] = []
    for o in left:
        if not is_textual(o) and not (runs and re.fullmatch(r"[\d@x×.,\s]+", o.text)):
            runs.append([])
            continue
        if runs and runs[-1] and o.box.x0 - runs[-1][-1].box.x1 < 2.5 * unit:
            runs[-1].append(o)
        else:
            runs.append([o])
    runs = [r for r in runs if r and any(is_textual(o) for o in r)]
    if not runs:
        return "", []
    run = runs[0]
    quantities = any(re.search(r"[@×]|\bx\b", o.text) for o in row_items)
    return clean_label(" ".join(o.text for o in run), quantities), run


__all__ = [
    "Row",
    "best_row",
    "clean_label",
    "header_above",
    "headers_above",
    "header_score",
    "is_textual",
    "phrase_score",
    "resolve_target",
    "row_label",
    "squash",
    "visual_rows",
]
