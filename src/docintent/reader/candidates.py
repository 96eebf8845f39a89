"""Answer candidates from every source: each proposes spans of the page, none decides.

A **source** is a function ``(question, layout, page, context) -> [Proposal]``; :data:`SOURCES` lists them in a
fixed order. :func:`propose` runs every source and merges proposals of the same text on the same line into one
:class:`AnswerCandidate` that remembers which sources proposed it and how sure each was. The scorer
(:mod:`docintent.reader.scorer`) then chooses among them; :func:`propose` never ranks.

Sources:

- ``rules``: the rule cascade's one answer (:func:`docintent.reader.answer.solve`), as one vote among several;
- ``spans``: the typed spans a question of a typed kind asks for (dates, authors, versions, URLs...);
- ``key-value``: the value right of, below, or after the colon of each line that carries the asked field;
- ``row-column`` / ``row-typed``: table cells where a labelled row meets a labelled column, or the one cell of
  the expected type on a labelled row;
- ``prose``: a typed value inside running text, nearest the question's words;
- ``heading``: titles and headings by typography (the largest lines, near the top);
- ``aggregate``: maxima, minima, sums and counts over a labelled column;
- ``address``: the places address lines name (a city after its postcode, before its state or country), and the
  lines of the block under the entity a question names;
- ``typed``: every typed value printed on the page (dates, amounts, percentages, identifiers, e-mails, phone
  numbers, URLs, names) and every short line, so that the scorer sees the right answer even where no label
  rule found it.

>>> from docintent.layout.lines import Item, Layout
>>> from docintent.page import Box
>>> layout = Layout([Item("Invoice No: INV-2041", Box(0.1, 0.1, 0.4, 0.12), 0.99, 0),
...                  Item("Total: $1,250.00", Box(0.1, 0.5, 0.4, 0.52), 0.98, 1)])
>>> from docintent.reader.query import understand
>>> texts = {c.text for c in propose(understand("What is the invoice number?"), layout)}
>>> "INV-2041" in texts
True
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

import numpy as np

from ..layout.lines import Item, Layout
from ..layout.structure import tables_of
from ..page import Box, Page
from .answer import solve
from .chart_qa import answer as chart_answer
from .chart_table import read_chart
from .entities import ENTITIES
from .extract import (
    Matcher,
    aggregate_candidates,
    heading_candidates,
    intersection_candidates,
    key_value_candidates,
    prose_candidates,
    row_typed_candidates,
)
from .query import Question
from .solution import Solution
from .spans import EMAIL_RE, URL_RE, span_candidates
from .table_qa import answer as table_answer
from .values import DATE_RE, find_numbers


@dataclass(frozen=True)
class Proposal:
    """One source's proposal: the answer text, the items it was read from (the value's own line last), how sure
    the source was (its own score, not a probability) and its rank among the source's proposals."""

    text: str
    items: tuple[Item, ...]
    score: float
    _: KW_ONLY
    source: str
    rank: int = 0


@dataclass
class AnswerCandidate:
    """A candidate answer: its text, the line it stands on (``anchor``), the items it was read from, every source
    that proposed it with that source's score, and (after scoring) its probability."""

    text: str
    anchor: Item | None
    items: tuple[Item, ...]
    _: KW_ONLY
    votes: dict[str, float] = field(default_factory=dict)
    ranks: dict[str, int] = field(default_factory=dict)
    probability: float = 0.0

    @property
    def source(self) -> str:
        """The source that was surest of this candidate (ties: the first in :data:`SOURCE_NAMES`)."""
        if not self.votes:
            return ""
        return max(self.votes, key=lambda s: (self.votes[s], -SOURCE_NAMES.index(s)))

    def box(self, layout: Layout) -> Box:
        """The candidate's own box: its anchor line (the union of its items when it has none)."""
        if self.anchor is not None:
            return self.anchor.box
        return layout.region_of(self.items, margin=0.0) if self.items else Box.FULL

    def region(self, layout: Layout) -> Box:
        """The evidence region: the candidate's items with a margin of 1.5 line heights."""
        return layout.region_of(self.items) if self.items else Box.FULL


@dataclass
class Context:
    """What the sources share for one question on one page: the keyword matcher and the page's pixels (None for a
    layout read without them)."""

    matcher: Matcher
    page: Page | None


Source = Callable[[Question, Layout, "Page | None", Context], list[Proposal]]


def _ranked(cands, source: str) -> list[Proposal]:
    ordered = sorted(cands, key=lambda c: -c.score)
    return [
        Proposal(c.text, tuple(c.items), float(c.score), source=source, rank=rank) for rank, c in enumerate(ordered)
    ]


def rule_solution(q: Question, layout: Layout, page: Page | None) -> Solution:
    """The rule cascade's answer (:func:`~docintent.reader.answer.solve`); a layout read without pixels is read
    on a blank page, so the chart rules find no marks."""
    return solve(q.info, q.task, layout, page if page is not None else BLANK_PAGE)


def _rules(q: Question, layout: Layout, page: Page | None, ctx: Context) -> list[Proposal]:
    sol = rule_solution(q, layout, page)
    if not sol.text:
        return []
    items = _items_for(layout, sol.text, sol.region)
    return [Proposal(sol.text, items, float(sol.confidence), source="rules")]


def _spans(q: Question, layout: Layout, page: Page | None, ctx: Context) -> list[Proposal]:
    return _ranked(span_candidates(q.text, layout, ctx.matcher), "spans")


def _key_value(q: Question, layout: Layout, page: Page | None, ctx: Context) -> list[Proposal]:
    return _ranked(key_value_candidates(q.info, layout, ctx.matcher, top=8), "key-value")


def _row_column(q: Question, layout: Layout, page: Page | None, ctx: Context) -> list[Proposal]:
    return _ranked(intersection_candidates(q.info, layout, ctx.matcher), "row-column")


def _row_typed(q: Question, layout: Layout, page: Page | None, ctx: Context) -> list[Proposal]:
    return _ranked(row_typed_candidates(q.info, layout, ctx.matcher), "row-typed")


def _prose(q: Question, layout: Layout, page: Page | None, ctx: Context) -> list[Proposal]:
    return _ranked(prose_candidates(q.info, layout, ctx.matcher), "prose")


def _aggregate(q: Question, layout: Layout, page: Page | None, ctx: Context) -> list[Proposal]:
    if q.operation not in ("max", "min", "sum", "avg", "count"):
        return []
    return _ranked(aggregate_candidates(q.info, layout, ctx.matcher), "aggregate")


def _heading(q: Question, layout: Layout, page: Page | None, ctx: Context) -> list[Proposal]:
    """The main heading (when the question asks for a title or an issuer) and the largest lines in the top half."""
    out = _ranked(heading_candidates(q.info, layout), "heading")
    top = [
        it for it in layout.items if it.box.y0 < 0.5 and len(it.text.strip()) > 2 and re.search(r"[A-Za-z]", it.text)
    ]
    top.sort(key=lambda it: (-round(it.h / max(layout.median_h, 1e-6), 1), it.box.y0))
    for rank, item in enumerate(top[:4]):
        size = item.h / max(layout.median_h, 1e-6)
        out.append(Proposal(item.text.strip(), (item,), size, source="heading", rank=rank + len(out)))
        # a title set on two or three lines of the same size
        block, last = [item], item
        for _ in range(2):
            nxt = [
                o
                for o in layout.items
                if o is not last
                and 0 <= o.box.y0 - last.box.y1 < 0.8 * last.h
                and abs(o.h - item.h) < 0.15 * item.h
                and abs(o.cx - last.cx) < 0.25
            ]
            if not nxt:
                break
            last = min(nxt, key=lambda o: o.box.y0)
            block.append(last)
            out.append(
                Proposal(
                    " ".join(b.text.strip() for b in block), tuple(block), size, source="heading", rank=rank + len(out)
                )
            )
    return out


_ID_RE = re.compile(r"(?<![\w-])(?=[A-Z0-9./#-]*\d)[A-Z0-9][A-Z0-9./#-]{3,}(?![\w-])")
_PHONE_RE = re.compile(r"(?<!\w)\+?\(?\d[\d ()./-]{6,}\d(?!\w)")
_NAME_RUN = re.compile(
    r"\b(?:(?:Mr|Mrs|Ms|Dr|Prof)\.?\s+)?[A-ZÀ-Ý][a-zà-ÿ'’-]+(?:\s+(?:van|von|de|der|da|di|del|la|le)?\s*[A-ZÀ-Ý][a-zà-ÿ'’.-]+){1,3}"
)
#: Typed values one line may hold at most (a dense table line stops proposing after these).
_PER_LINE = 6


def line_values(text: str) -> list[str]:
    """The typed values printed in one line of text: dates, e-mails, URLs, phone numbers, identifiers, amounts and
    other numbers, and person-shaped names, in that order, without repeats; a number inside a date, an
    identifier or a phone number is not proposed again on its own.

    >>> line_values("Invoice INV-2041 dated 12 March 2024, total $1,250.00")
    ['12 March 2024', 'INV-2041', '$1,250.00']
    """
    spans: list[tuple[int, int, str]] = []

    def add(start: int, end: int, value: str) -> None:
        if value and any(ch.isalnum() for ch in value) and not any(s < end and start < e for s, e, _ in spans):
            spans.append((start, end, value))

    for m in DATE_RE.finditer(text):
        add(m.start(), m.end(), m.group(0).strip(" ,"))
    for m in EMAIL_RE.finditer(text):
        add(m.start(), m.end(), re.sub(r"\s+", "", m.group(0)).rstrip("."))
    for m in URL_RE.finditer(text):
        add(m.start(), m.end(), re.sub(r"\s+", "", m.group(0)).rstrip(".,;:"))
    for m in _ID_RE.finditer(text):
        if re.search(r"[A-Z]", m.group(0)) or "-" in m.group(0):
            add(m.start(), m.end(), m.group(0))
    for m in _PHONE_RE.finditer(text):
        if sum(ch.isdigit() for ch in m.group(0)) >= 7:
            add(m.start(), m.end(), m.group(0).strip())
    for n in find_numbers(text):
        add(n.start, n.end, text[n.start : n.end].strip())
    for m in _NAME_RUN.finditer(text):
        if ENTITIES.person(m.group(0)):
            add(m.start(), m.end(), m.group(0))
    out: list[str] = []
    for _, _, value in spans:
        if value not in out:
            out.append(value)
    return out


def _typed(q: Question, layout: Layout, page: Page | None, ctx: Context) -> list[Proposal]:
    """Every typed value on the page, and every short line as a whole (at most 8 words)."""
    out: list[Proposal] = []
    for item in layout.items:
        text = item.text.strip()
        values = line_values(text)[:_PER_LINE]
        for rank, value in enumerate(values):
            out.append(Proposal(value, (item,), 1.0 / (1 + rank), source="typed", rank=rank))
        if text and len(text.split()) <= 8 and text not in values:
            out.append(Proposal(text, (item,), 0.5, source="typed", rank=len(values)))
        if ":" in text:
            after = text.split(":", 1)[1].strip()
            if after and after not in values and len(after.split()) <= 10:
                out.append(Proposal(after, (item,), 0.8, source="typed", rank=len(values) + 1))
    return out


_POSTCODE_CITY = re.compile(
    r"^(?:[A-Z]{1,2}-)?\d{4,5}\s?(?:[A-Z]{2}\s)?\s*([A-ZÀ-Ý][\w'’.-]*(?:[ -][A-ZÀ-Ýa-zà-ÿ][\w'’.-]*){0,3})\s*$"
)
_CITY_STATE = re.compile(
    r"^([A-ZÀ-Ý][\w'’.-]*(?:\s[A-ZÀ-Ý][\w'’.-]*){0,3}),?\s+(?:[A-Z]{2}\s+)?(?:\d{4,5}(?:-\d{4})?|[A-Z]\d[A-Z] ?\d[A-Z]\d|[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2})\s*$"
)
_CITY_COUNTRY = re.compile(r"^([A-ZÀ-Ý][\w'’.-]*(?:\s[A-ZÀ-Ý][\w'’.-]*){0,3}),\s*([A-ZÀ-Ý][\w .'-]+)$")


def place_of(text: str) -> str:
    """The place an address line names: the city after a postcode ("1841PY Lisse", "80331 München"), before a
    state and ZIP ("Springfield, IL 62704"), or before a country ("Lyon, France"); "" when it names none.

    >>> place_of("1841PY Lisse"), place_of("Springfield, IL 62704"), place_of("Lyon, France"), place_of("Total")
    ('Lisse', 'Springfield', 'Lyon', '')
    """
    t = text.strip().rstrip(".")
    for pattern in (_POSTCODE_CITY, _CITY_STATE):
        m = pattern.match(t)
        if m:
            return m.group(1).strip()
    m = _CITY_COUNTRY.match(t)
    if m and ENTITIES.country(m.group(2)):
        return m.group(1).strip()
    return ""


def _address(q: Question, layout: Layout, page: Page | None, ctx: Context) -> list[Proposal]:
    """Places in address lines (the city of a postcode line, of a "City, ST ZIP" line, of a "City, Country" line),
    and, for a question about where something is, every short line of the block under its named subject."""
    out: list[Proposal] = []
    for item in layout.items:
        for part in dict.fromkeys([item.text] + [p for p in re.split(r"\s*[,;|·]\s*", item.text) if p]):
            place = place_of(part)
            if place:
                out.append(Proposal(place, (item,), 1.0, source="address", rank=len(out)))
    if q.subject:
        want = _norm(q.subject)
        heads = [it for it in layout.items if want and want in _norm(it.text)]
        for head in heads[:3]:
            block = [
                o
                for o in layout.items
                if o is not head
                and 0 < o.cy - head.cy < 6 * max(head.h, layout.median_h)
                and abs(o.box.x0 - head.box.x0) < 3 * max(head.h, layout.median_h)
            ]
            block.sort(key=lambda o: o.cy)
            for rank, o in enumerate(block[:5]):
                out.append(Proposal(o.text.strip(), (head, o), 0.6 / (1 + rank), source="address", rank=len(out)))
    return out


#: Every source, in the order their proposals are merged (the order breaks ties, nothing else).
def _table_grid(q: Question, layout: Layout, page: Page | None, ctx: Context) -> list[Proposal]:
    """The answer read over a table's grid (:mod:`~docintent.reader.table_qa`): the items of the cells it was
    read or computed from, the answer's own cell last."""
    size = (page.width, page.height) if page is not None else (None, None)
    got = table_answer(tables_of(layout, *size), q.text, q.info.intent)
    if got is None:
        return []
    items: list[Item] = []
    for cell in got.cells:
        items += [
            it
            for it in layout.items
            if cell.box.x0 <= it.cx <= cell.box.x1 and cell.box.y0 <= it.cy <= cell.box.y1 and it not in items
        ]
    if not items:
        return []
    return [Proposal(got.text, tuple(items), float(got.confidence), source="table-grid")]


def _chart_table(q: Question, layout: Layout, page: Page | None, ctx: Context) -> list[Proposal]:
    """The answer read over the data table of the chart on the page (:mod:`~docintent.reader.chart_qa`): the lines
    inside the marks it was read or computed from (a printed value label), else the nearest category label."""
    if page is None:
        return []
    chart = read_chart(layout, page)
    if chart is None:
        return []
    got = chart_answer(chart, q.text, q.info.intent)
    if got is None:
        return []
    box = got.box
    items = [it for it in layout.items if box.x0 <= it.cx <= box.x1 and box.y0 <= it.cy <= box.y1]
    if not items:
        items = [
            min(
                layout.items, key=lambda it: (it.cx - (box.x0 + box.x1) / 2) ** 2 + (it.cy - (box.y0 + box.y1) / 2) ** 2
            )
        ]
    return [Proposal(got.text, tuple(items), float(got.confidence), source="chart-table")]


SOURCES: dict[str, Source] = {
    "rules": _rules,
    "spans": _spans,
    "key-value": _key_value,
    "row-column": _row_column,
    "row-typed": _row_typed,
    "prose": _prose,
    "aggregate": _aggregate,
    "heading": _heading,
    "address": _address,
    "typed": _typed,
    "table-grid": _table_grid,
    "chart-table": _chart_table,
}
SOURCE_NAMES: tuple[str, ...] = tuple(SOURCES)


#: A stand-in page for layouts read without pixels (a PDF's text layer): a white A4-shaped page, so the chart rules
#: find no marks on it.
BLANK_PAGE = Page.from_array(np.full((141, 100, 3), 255, dtype=np.uint8), source="blank")


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip(" ,.;:").lower()


def _items_for(layout: Layout, text: str, region: Box) -> tuple[Item, ...]:
    """The lines that hold ``text`` inside ``region`` (the nearest to the region's centre first)."""
    want = _norm(text)
    cx, cy = (region.x0 + region.x1) / 2, (region.y0 + region.y1) / 2
    holding = [it for it in layout.items if want and want in _norm(it.text)]
    if not holding:
        inside = [it for it in layout.items if region.x0 <= it.cx <= region.x1 and region.y0 <= it.cy <= region.y1]
        return tuple(inside[:6]) if region != Box.FULL else ()
    best = min(holding, key=lambda it: (it.cx - cx) ** 2 + (it.cy - cy) ** 2)
    return (best,)


def canonical(layout: Layout) -> Layout:
    """``layout`` with its lines in one fixed order (top to bottom, left to right, then by text) and numbered in it,
    so that what the sources propose and how the scorer ranks it cannot depend on the order the lines arrived in.
    A layout already in that order is returned as it is."""
    order = sorted(
        layout.items,
        key=lambda it: (
            round(it.box.y0, 6),
            round(it.box.x0, 6),
            it.text,
            round(it.box.y1, 6),
            round(it.box.x1, 6),
            it.confidence,
        ),
    )
    if all(a is b and a.index == i for i, (a, b) in enumerate(zip(order, layout.items))):
        return layout
    return Layout([Item(it.text, it.box, it.confidence, i) for i, it in enumerate(order)], layout.lines)


def propose(
    question: Question, layout: Layout, page: Page | None = None, sources: tuple[str, ...] | None = None
) -> list[AnswerCandidate]:
    """Every source's proposals for ``question`` on ``layout``, merged by text and line (see the module docstring).

    ``sources``: the names of the sources to run (default: all of :data:`SOURCES`). The candidates come in a
    fixed order (first proposal first), whatever order the page's lines or the sources arrive in."""
    if not layout.items:
        return []
    layout = canonical(layout)
    ctx = Context(Matcher(question.info, layout), page)
    merged: dict[tuple[str, int], AnswerCandidate] = {}
    for name in sources or SOURCE_NAMES:
        for prop in SOURCES[name](question, layout, page, ctx):
            text = re.sub(r"\s+", " ", prop.text).strip()
            if not text or not any(ch.isalnum() for ch in text):
                continue
            anchor = prop.items[-1] if prop.items else None
            key = (_norm(text), anchor.index if anchor is not None else -1)
            cand = merged.get(key)
            if cand is None:
                cand = merged[key] = AnswerCandidate(text, anchor, prop.items)
            if prop.score > cand.votes.get(name, -1.0):
                cand.votes[name] = prop.score
                cand.ranks[name] = prop.rank
            # the evidence of every source that proposed it (a label, a row head): a review re-reads all of it
            cand.items = tuple(dict.fromkeys(cand.items + prop.items))
    return list(merged.values())
