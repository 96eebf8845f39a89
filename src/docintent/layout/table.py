"""Rebuild a table's rows and cells from OCR word boxes.

OCR engines return words with boxes and no structure. :func:`reconstruct_table` turns them back into a grid:

1. words are grouped into visual rows by their vertical centres;
2. inside a row, neighbouring words closer than about one text height are merged into one cell segment
   (a lone currency sign joins the number to its right, as "$   1,234" is printed in financial tables);
3. the leading rows whose value cells hold no figures (only words or years) are the header;
4. columns are the x-extents of body segments merged across rows, narrowest segments first, so a long row
   label or a spanning caption cannot glue two columns together;
5. every segment is assigned to the columns it overlaps; one overlapping several columns (or centred over a
   gap between them) becomes a spanning cell with ``colspan``;
6. stacked header lines in the same columns ("Three months" over "ended") become one header cell.

>>> from docintent.page import Box
>>> words = [("Item", Box(.0, .0, .2, .1)), ("2023", Box(.6, .0, .8, .1)),
...          ("Revenue", Box(.0, .2, .3, .3)), ("(1,234.5)", Box(.55, .2, .8, .3))]
>>> table = reconstruct_table(words)
>>> table.n_rows, table.n_cols, table.lookup("revenue", "2023").value
(2, 2, -1234.5)
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import numpy as np

from ..numbers import CURRENCY, parse_cell_number
from ..page import Box

__all__ = ["Cell", "Table", "reconstruct_table"]

_YEAR_RE = re.compile(r"^(?:(?:fy|q[1-4]|h[12])\s*)?'?(?:19|20)\d{2}[a-z]?$|^(?:19|20)\d{2}\s*[-/]\s*\d{2,4}$", re.I)


def is_figure(text: str) -> bool:
    """A value a body cell holds (a number that is not a year-like header label)."""
    t = text.strip()
    return parse_cell_number(t) is not None and not _YEAR_RE.match(t) and t not in ("-", "\u2014")


@dataclass(frozen=True)
class Cell:
    """One table cell. ``box`` is relative to the page the words came from; empty cells have text ""."""

    text: str
    box: Box
    row: int
    _: KW_ONLY
    col: int
    colspan: int = 1

    @property
    def value(self) -> float | None:
        """The cell's number (see :func:`docintent.numbers.parse_cell_number`), or None for text cells."""
        return parse_cell_number(self.text)


@dataclass
class Table:
    """A reconstructed table: ``rows`` of :class:`Cell` (every grid position is covered exactly once).

    ``header_rows`` is how many leading rows are header. Spanning header cells have ``colspan`` > 1.
    """

    rows: list[list[Cell]]
    header_rows: int = 0
    region: Box | None = None
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def n_rows(self) -> int:
        return len(self.rows)

    @property
    def n_cols(self) -> int:
        return max((sum(c.colspan for c in row) for row in self.rows), default=0)

    @property
    def body(self) -> list[list[Cell]]:
        """The rows after the header."""
        return self.rows[self.header_rows :]

    def cell(self, row: int, col: int) -> Cell | None:
        """The cell covering grid position (row, col), spanning cells included."""
        if not 0 <= row < self.n_rows:
            return None
        for c in self.rows[row]:
            if c.col <= col < c.col + c.colspan:
                return c
        return None

    def grid(self) -> list[list[str]]:
        """Texts as a dense ``n_rows x n_cols`` grid; a spanning cell's text fills each column it covers."""
        n = self.n_cols
        return [[getattr(self.cell(r, c), "text", "") for c in range(n)] for r in range(self.n_rows)]

    def column_names(self) -> list[str]:
        """Per column, the header texts above it (spanning captions included), joined top to bottom."""
        names = []
        for c in range(self.n_cols):
            parts = []
            for r in range(self.header_rows):
                cell = self.cell(r, c)
                if cell and cell.text and cell.text not in parts:
                    parts.append(cell.text)
            names.append(" ".join(parts))
        return names

    def row_labels(self) -> list[str]:
        """Per body row, the text of its first non-empty cell from the left (the stub)."""
        labels = []
        for row in self.body:
            first = next((c.text for c in row if c.text and not is_figure(c.text)), "")
            labels.append(first)
        return labels

    def find_column(self, name: str, min_score: float = 60.0) -> int | None:
        """Index of the column whose header best matches ``name`` (fuzzy), or None below ``min_score``."""
        return _best_match(name, self.column_names(), min_score)

    def find_row(self, label: str, min_score: float = 60.0) -> int | None:
        """Index (into :attr:`rows`) of the body row whose label best matches ``label``, or None."""
        idx = _best_match(label, self.row_labels(), min_score)
        return None if idx is None else idx + self.header_rows

    def column(self, name: str) -> list[Cell] | None:
        """The body cells of the column whose header best matches ``name`` (fuzzy), or None."""
        c = self.find_column(name)
        if c is None:
            return None
        return [cell for r in range(self.header_rows, self.n_rows) if (cell := self.cell(r, c)) is not None]

    def lookup(self, row_key: str, col_key: str) -> Cell | None:
        """The cell at the row labelled like ``row_key`` and the column headed like ``col_key`` (fuzzy match
        of both, rapidfuzz), or None when either label is not found."""
        r, c = self.find_row(row_key), self.find_column(col_key)
        if r is None or c is None:
            return None
        return self.cell(r, c)

    def to_markdown(self) -> str:
        """GitHub Markdown. Header rows collapse into one header line (spanning captions repeat per column)."""
        grid = self.grid()
        if not grid:
            return ""
        if self.header_rows:
            head = self.column_names()
            body = grid[self.header_rows :]
        else:
            head, body = grid[0], grid[1:]

        def fmt(cells: list[str]) -> str:
            return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"

        lines = [fmt(head), "|" + "|".join("---" for _ in head) + "|"]
        lines += [fmt(r) for r in body]
        return "\n".join(lines)

    def to_html(self) -> str:
        """An HTML ``<table>`` with ``<thead>`` (``<th colspan>`` for spanning cells) and ``<tbody>``."""

        def row_html(row: list[Cell], tag: str) -> str:
            cells = []
            for c in row:
                span = f' colspan="{c.colspan}"' if c.colspan > 1 else ""
                cells.append(f"<{tag}{span}>{html.escape(c.text)}</{tag}>")
            return "<tr>" + "".join(cells) + "</tr>"

        parts = ["<table>"]
        if self.header_rows:
            parts.append("<thead>" + "".join(row_html(r, "th") for r in self.rows[: self.header_rows]) + "</thead>")
        parts.append("<tbody>" + "".join(row_html(r, "td") for r in self.body) + "</tbody>")
        parts.append("</table>")
        return "".join(parts)

    def __repr__(self) -> str:
        return f"Table({self.n_rows}x{self.n_cols}, header_rows={self.header_rows})"


def _best_match(query: str, choices: Sequence[str], min_score: float) -> int | None:
    from rapidfuzz import fuzz, utils

    q = utils.default_process(query)
    if not q or not choices:
        return None
    best, best_score = None, -1.0
    for i, choice in enumerate(choices):
        c = utils.default_process(choice)
        if not c:
            continue
        # Exact token containment ("2023" in "Year ended 2023") counts fully; a near-miss spelling still
        # scores through the plain ratio. Ties prefer the shorter label (the more specific one).
        score = max(fuzz.ratio(q, c), fuzz.token_set_ratio(q, c) - (0 if q in c.split() or q == c else 8))
        if score > best_score + 1e-9 or (
            abs(score - best_score) < 1e-9 and best is not None and len(c) < len(choices[best])
        ):
            best, best_score = i, score
    return best if best_score >= min_score else None


# -- reconstruction ------------------------------------------------------------------------------------


@dataclass
class _Seg:
    text: str
    x0: float
    y0: float
    _: KW_ONLY
    x1: float
    y1: float
    words: tuple[_Seg, ...] = ()  # the words a merged segment was made of (empty for a single word)
    line: int = -1  # the OCR line the segment was read in (-1: not known)

    @property
    def yc(self) -> float:
        return (self.y0 + self.y1) / 2

    @property
    def xc(self) -> float:
        return (self.x0 + self.x1) / 2

    @property
    def h(self) -> float:
        return self.y1 - self.y0


def _items(source: Any) -> list[tuple[str, Box, int]]:
    """(text, box, line) triples from an OcrResult, OcrLines (their words when present), OcrWords or tuples;
    ``line`` numbers the OCR line a word came from (each item is its own line when lines are unknown)."""
    if hasattr(source, "lines") and not isinstance(source, (list, tuple)):
        source = source.lines
    out: list[tuple[str, Box, int]] = []
    for n, item in enumerate(source):
        if isinstance(item, tuple) and len(item) == 2:
            out.append((str(item[0]), item[1], n))
        elif getattr(item, "words", None):
            out.extend((w.text, w.box, n) for w in item.words)
        else:
            out.append((item.text, item.box, n))
    return [(t.strip(), b, n) for t, b, n in out if t and t.strip()]


_GLUED = re.compile(r"^(.*[A-Za-z.:)])([$\u20ac\u00a3\u00a5]\(?\d[\d,.]*\)?%?)$")


_FIGURE_BOUNDARY = re.compile(r"(?<=[)%])(?=[($\u20ac\u00a3\u00a5\d])")


def _split_glued(s: _Seg) -> list[_Seg]:
    """OCR reads a label and a figure a character apart as one word ("development$66,343.4"): split it,
    sharing the box by character count."""
    m = _GLUED.match(s.text)
    if m:
        parts = [m.group(1), m.group(2)]
    else:
        # two figures read as one word: "(467)(15,974.9)", "25.6%18.8%"
        parts = _FIGURE_BOUNDARY.split(s.text)
        if len(parts) < 2 or not all(_is_number(p) for p in parts):
            return [s]
    out, start = [], s.x0
    width = (s.x1 - s.x0) / len(s.text)
    for part in parts:
        end = start + width * len(part)
        out.append(_Seg(part, start, s.y0, x1=end, y1=s.y1, line=s.line))
        start = end
    return out


def _cluster_rows(segs: list[_Seg], unit: float) -> list[list[_Seg]]:
    rows: list[list[_Seg]] = []
    centres: list[float] = []
    for s in sorted(segs, key=lambda s: s.yc):
        if rows and abs(s.yc - centres[-1]) < 0.5 * unit:
            rows[-1].append(s)
            centres[-1] = float(np.mean([t.yc for t in rows[-1]]))
        else:
            rows.append([s])
            centres.append(s.yc)
    return [sorted(r, key=lambda s: s.x0) for r in rows]


def _merge_words(row: list[_Seg], xunit: float) -> list[_Seg]:
    """Join words of one cell: gaps under ~0.8 text heights; a lone currency sign joins its right neighbour.
    Two figures side by side are never one cell (tight columns leave only a character between them)."""
    out: list[_Seg] = []
    for s in row:
        if out:
            prev = out[-1]
            last = prev.words[-1] if prev.words else prev
            gap = s.x0 - prev.x1
            currency = last.text in CURRENCY
            # A currency sign opens a cell; it never ends the label on its left.
            opens_cell = s.text[:1] in CURRENCY or s.text in CURRENCY
            # Words of one OCR line join at ordinary spaces; pieces the engine read as separate lines join only
            # when they nearly touch (the engine saw a gap between them: a tight column's edge).
            limit = 0.8 * xunit if last.line == s.line or s.line < 0 else 0.3 * xunit
            if (
                currency
                and gap < 8 * xunit
                or (gap < limit and not opens_cell and not (_is_number(last.text) and _is_number(s.text)))
            ):
                sep = "" if currency and last.text != "US$" else " "
                parts = (prev.words or (prev,)) + (s,)
                out[-1] = _Seg(
                    prev.text + sep + s.text,
                    prev.x0,
                    min(prev.y0, s.y0),
                    x1=s.x1,
                    y1=max(prev.y1, s.y1),
                    words=parts,
                    line=s.line,
                )
                continue
        out.append(_Seg(s.text, s.x0, s.y0, x1=s.x1, y1=s.y1, line=s.line))
    return out


def _is_number(text: str) -> bool:
    return parse_cell_number(text) is not None


def _word_space(rows: list[list[_Seg]], xunit: float) -> float:
    """The typical space between words of one cell (median gap inside merged segments)."""
    gaps = [b.x0 - a.x1 for r in rows for s in r for a, b in zip(s.words, s.words[1:]) if a.text not in CURRENCY]
    return float(np.median(gaps)) if gaps else 0.3 * xunit


def _split_at_columns(row: list[_Seg], cols: list[list[float]], space: float, xunit: float) -> list[_Seg]:
    """Split a merged segment where a wider-than-usual gap separates words standing in different columns
    (header words of neighbouring columns in a tight table), keeping captions with ordinary spaces whole."""

    def column_of(w: _Seg) -> int:
        return int(np.argmin([0 if a <= w.xc <= b else min(abs(w.xc - a), abs(w.xc - b)) for a, b in cols]))

    def in_column(w: _Seg) -> bool:
        return any(a - 0.5 * xunit <= w.xc <= b + 0.5 * xunit for a, b in cols)

    out: list[_Seg] = []
    for s in row:
        estimated = len(s.words) < 2 and " " in s.text.strip() and len(cols) > 1
        if estimated:
            s = _Seg(s.text, s.x0, s.y0, x1=s.x1, y1=s.y1, words=_estimated_words(s))
        if len(s.words) < 2:
            out.append(s)
            continue
        pieces: list[list[_Seg]] = [[s.words[0]]]
        for a, b in zip(s.words, s.words[1:]):
            # OCR word boxes wobble by a few pixels, so a split also needs a gap of over half a text height;
            # words placed by character count have no gap to measure, so each must stand inside its column.
            # Pieces the engine read as separate lines split wherever they stand in different columns.
            apart = a.line != b.line and a.line >= 0 and b.line >= 0
            wide = b.x0 - a.x1 > max(1.6 * space, 0.6 * xunit) or (estimated or apart) and in_column(a) and in_column(b)
            if wide and column_of(a) != column_of(b) and a.text not in CURRENCY:
                pieces.append([b])
            else:
                pieces[-1].append(b)
        if len(pieces) == 1:
            out.append(s)
            continue
        for piece in pieces:
            text = " ".join(w.text for w in piece)
            for cur in CURRENCY:  # "$ 12" was joined without a space
                text = text.replace(cur + " ", cur) if cur != "US$" else text
            out.append(
                _Seg(
                    text,
                    piece[0].x0,
                    min(w.y0 for w in piece),
                    x1=piece[-1].x1,
                    y1=max(w.y1 for w in piece),
                    words=tuple(piece) if len(piece) > 1 else (),
                    line=s.line,
                )
            )
    return out


def _estimated_words(s: _Seg) -> tuple[_Seg, ...]:
    """Word boxes for a line the engine gave without them, placed by character count (a line read as one
    piece across two header cells, "Price Quantity", is split again where its words fall in different columns)."""
    words = s.text.split()
    if len(words) < 2:
        return ()
    per_char = (s.x1 - s.x0) / max(len(s.text.strip()), 1)
    out, pos = [], 0
    text = s.text.strip()
    for word in words:
        start = text.index(word, pos)
        out.append(
            _Seg(word, s.x0 + start * per_char, s.y0, x1=s.x0 + (start + len(word)) * per_char, y1=s.y1, line=s.line)
        )
        pos = start + len(word)
    return tuple(out)


def _header_count(rows: list[list[_Seg]], left: float, xunit: float) -> int:
    """Leading rows whose value cells hold no figures (words or years only); at most half the table."""
    n = 0
    for row in rows:
        values = [s for s in row if s.x0 > left + 1.5 * xunit]  # the stub (row label) does not decide
        if any(is_figure(s.text) for s in values):
            break
        if not values and row and n == 0:
            break  # a first row with only a stub is a title or a row label, not a header of columns
        n += 1
    if n >= len(rows):  # a pure text table: its first row is the header
        n = 1 if len(rows) > 1 else 0
    return min(n, max(len(rows) // 2, 1 if len(rows) > 1 else 0))


def _columns(body: list[list[_Seg]]) -> list[list[float]]:
    """Column x-intervals from body segments merged across rows, narrowest first; bridging segments skipped."""
    segs = sorted((s for row in body for s in row), key=lambda s: s.x1 - s.x0)
    cols: list[list[float]] = []
    for s in segs:
        hits = [c for c in cols if s.x0 < c[1] and s.x1 > c[0]]
        if len(hits) == 1:
            hits[0][0], hits[0][1] = min(hits[0][0], s.x0), max(hits[0][1], s.x1)
        elif not hits:
            cols.append([s.x0, s.x1])
        # two or more: a segment bridging columns (a long label or caption) defines none
        cols.sort()
        merged: list[list[float]] = []
        for c in cols:  # extending one interval can make it touch its neighbour
            if merged and c[0] < merged[-1][1]:
                merged[-1][1] = max(merged[-1][1], c[1])
            else:
                merged.append(c)
        cols = merged
    return cols


def _near_middle(x: float, a: float, b: float) -> bool:
    """Whether ``x`` lies in the middle half of the gap ``a..b``."""
    return abs(x - (a + b) / 2) <= 0.25 * max(b - a, 1e-9)


def _span(s: _Seg, cols: list[list[float]]) -> tuple[int, int]:
    """The first column and the number of columns a segment covers."""
    over = [i for i, (a, b) in enumerate(cols) if min(s.x1, b) - max(s.x0, a) > 0.25 * min(b - a, s.x1 - s.x0)]
    if not over:
        nearest = int(np.argmin([min(abs(s.xc - a), abs(s.xc - b)) if not a <= s.xc <= b else 0 for a, b in cols]))
        return nearest, 1
    first, last = over[0], over[-1]
    inside = any(cols[i][0] <= s.xc <= cols[i][1] for i in over)
    if not inside and len(over) == 1:
        # centred over the gap next to the one column it touches: a caption for both neighbours (a head set
        # off-centre over a narrow right-aligned column stays that column's)
        i = over[0]
        if s.xc > cols[i][1] and i + 1 < len(cols) and _near_middle(s.xc, cols[i][1], cols[i + 1][0]):
            last = i + 1
        elif s.xc < cols[i][0] and i > 0 and _near_middle(s.xc, cols[i - 1][1], cols[i][0]):
            first = i - 1
    return first, last - first + 1


def reconstruct_table(
    words_or_lines: Any, region: Box | None = None, *, page_size: tuple[int, int] | None = None
) -> Table:
    """Rebuild rows, columns and cells from OCR output.

    ``words_or_lines``: an :class:`~docintent.ocr.OcrResult`, a sequence of OcrLine (their word boxes are used
    when the engine gave them) or OcrWord, or ``(text, Box)`` pairs. ``region``: keep only items whose centre
    lies inside it (boxes stay relative to the page). ``page_size``: (width, height) in pixels of the page the
    boxes refer to; horizontal gaps are judged in text heights, so without it the page's aspect ratio is
    estimated from the words' character widths. Returns an empty :class:`Table` when nothing is left.
    """
    items = _items(words_or_lines)
    if region is not None:
        items = [
            (t, b, n)
            for t, b, n in items
            if region.x0 <= b.center[0] <= region.x1 and region.y0 <= b.center[1] <= region.y1
        ]
    if not items:
        return Table([], 0, region)
    segs = [piece for t, b, n in items for piece in _split_glued(_Seg(t, b.x0, b.y0, x1=b.x1, y1=b.y1, line=n))]
    unit = float(np.median([s.h for s in segs]))
    if page_size is not None:
        xunit = unit * page_size[1] / page_size[0]
    else:
        # A character is about half as wide as an OCR box is high, for the fonts tables are printed in.
        xunit = 2.0 * float(np.median([(s.x1 - s.x0) / max(len(s.text), 1) for s in segs]))
    rows = [_merge_words(r, xunit) for r in _cluster_rows(segs, unit)]
    left = min(s.x0 for r in rows for s in r)
    n_head = _header_count(rows, left, xunit)
    body = rows[n_head:] or rows
    cols = _columns(body)
    # Header segments that fall outside every body column still need a column of their own.
    for row in rows[:n_head]:
        for s in row:
            if not any(min(s.x1, b) - max(s.x0, a) > 0 for a, b in cols):
                cols.append([s.x0, s.x1])
    cols.sort()
    space = _word_space(rows, xunit)
    rows = [_split_at_columns(r, cols, space, xunit) for r in rows]

    # Assign segments: grid[r][c] -> segments; spans[r] -> (first, n) for multi-column segments.
    placed: list[dict[tuple[int, int], list[_Seg]]] = []
    for row in rows:
        slots: dict[tuple[int, int], list[_Seg]] = {}
        for s in row:
            first, n = _span(s, cols)
            slots.setdefault((first, n), []).append(s)
        placed.append(_resolve(slots, len(cols)))

    for r in range(max(n_head - 1, 0)):
        placed[r] = _widen_captions(placed[r], cols)
    placed, row_segs, n_head = _merge_stacked_header(placed, rows, n_head)
    y_ext = [(min(s.y0 for s in r), max(s.y1 for s in r)) for r in row_segs]
    table_rows: list[list[Cell]] = []
    for r, slots in enumerate(placed):
        cells: list[Cell] = []
        covered: set[int] = set()
        for (first, n), ss in sorted(slots.items()):
            text = " ".join(s.text for s in sorted(ss, key=lambda s: (round(s.yc / unit), s.x0)))
            x0 = min(min(s.x0 for s in ss), cols[first][0])
            x1 = max(max(s.x1 for s in ss), cols[first + n - 1][1])
            cells.append(Cell(text, _box(x0, y_ext[r][0], x1, y_ext[r][1]), r, col=first, colspan=n))
            covered.update(range(first, first + n))
        for c in range(len(cols)):
            if c not in covered:
                cells.append(Cell("", _box(cols[c][0], y_ext[r][0], cols[c][1], y_ext[r][1]), r, col=c, colspan=1))
        table_rows.append(sorted(cells, key=lambda c: c.col))
    return Table(table_rows, n_head, region, {"unit": unit, "xunit": xunit})


def _resolve(slots: dict[tuple[int, int], list[_Seg]], n_cols: int) -> dict[tuple[int, int], list[_Seg]]:
    """Make one row's slots disjoint: a span overlapping a single-column slot folds into that span."""
    spans = sorted((k for k in slots if k[1] > 1), key=lambda k: -k[1])
    out = dict(slots)
    for key in spans:
        if key not in out:
            continue
        lo, hi = key[0], key[0] + key[1]
        for other in list(out):
            # ``key`` grows as spans fold in: a slot already folded into it is no longer there
            if other in out and other != key and other[0] < hi and other[0] + other[1] > lo:
                a, b = min(lo, other[0]), max(hi, other[0] + other[1])
                merged = out.pop(key) + out.pop(other)
                key = (a, b - a)
                lo, hi = a, b
                out[key] = merged + out.pop(key, [])
    return out


def _widen_captions(slots: dict[tuple[int, int], list[_Seg]], cols: list[list[float]]) -> dict:
    """A caption above the column heads is centred over the group of columns it names, which is often wider
    than the caption: widen its span to the free group (never the stub column) whose centre is nearest."""
    out = dict(slots)
    for key, segs in list(slots.items()):
        first, n = key
        last = first + n - 1
        xc = (min(s.x0 for s in segs) + max(s.x1 for s in segs)) / 2
        taken = {c for k in out if k != key for c in range(k[0], k[0] + k[1])}
        best, best_dev = key, abs((cols[first][0] + cols[last][1]) / 2 - xc)
        for a in range(first, 0, -1):
            if a in taken:
                break
            for b in range(last, len(cols)):
                if b in taken:
                    break
                width = cols[b][1] - cols[a][0]
                dev = abs((cols[a][0] + cols[b][1]) / 2 - xc)
                if dev < best_dev and dev < 0.1 * width:
                    best, best_dev = (a, b - a + 1), dev
        if best != key:
            out[best] = out.pop(key)
    return out


def _merge_stacked_header(placed, rows, n_head):
    """Join header lines printed as one cell over two lines (same columns, tight line spacing)."""
    if n_head < 2:
        return placed, rows, n_head
    heights = [max(s.y1 for s in r) - min(s.y0 for s in r) for r in rows]
    r = 0
    placed, rows = list(placed), list(rows)
    while r + 1 < n_head:
        upper, lower = placed[r], placed[r + 1]
        gap = min(s.y0 for s in rows[r + 1]) - max(s.y1 for s in rows[r])
        single = all(k[1] == 1 for k in upper) and all(k[1] == 1 for k in lower)
        if single and gap < 0.5 * min(heights[r], heights[r + 1]) and set(upper) <= set(lower):
            merged = {k: upper.get(k, []) + lower[k] for k in lower}
            placed[r : r + 2] = [merged]
            rows[r : r + 2] = [rows[r] + rows[r + 1]]
            heights[r : r + 2] = [max(heights[r], heights[r + 1])]
            n_head -= 1
            continue
        r += 1
    return placed, rows, n_head


def _box(x0: float, y0: float, x1: float, y1: float) -> Box:
    return Box.clamped(x0, y0, max(x1, x0 + 1e-6), max(y1, y0 + 1e-6))
