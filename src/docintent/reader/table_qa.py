"""Questions answered over a table's grid: a cell by its row and column headers, the row with the largest or
smallest value, sums, means, differences and row counts. Every answer keeps the cells it was read or computed
from, so its box is those cells, not the table.

The question is matched against the table's own labels (row labels and column headers, fuzzy), so nothing here
knows a template; a question that names no column or row of any table gets None.

>>> from docintent.layout.table import reconstruct_table
>>> from docintent.page import Box
>>> words = [("Bird", Box(.0, .0, .2, .05)), ("Price", Box(.5, .0, .7, .05)),
...          ("Emu", Box(.0, .1, .2, .15)), ("$12.00", Box(.5, .1, .7, .15)),
...          ("Heron", Box(.0, .2, .2, .25)), ("$8.50", Box(.5, .2, .7, .25))]
>>> table = reconstruct_table(words)
>>> answer([table], "What is the price of Emu?").text
'$12.00'
>>> got = answer([table], "What is the total price?"); got.text, len(got.cells)
('$20.50', 2)
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass

from ..layout.table import Cell, Table, is_figure
from ..page import Box

_ARGMAX = re.compile(r"\b(highest|largest|biggest|greatest|most|maximum|max|top|longest|best)\b", re.I)
_ARGMIN = re.compile(r"\b(lowest|smallest|least|fewest|minimum|min|shortest|worst)\b", re.I)
_WHICH = re.compile(r"^\s*(which|what|who)\b", re.I)
_SUM = re.compile(r"\b(total|sum|combined|altogether|in all)\b", re.I)
_MEAN = re.compile(r"\b(average|mean)\b", re.I)
_DIFF = re.compile(r"\b(difference|how much (?:more|less|higher|lower))\b", re.I)
# Only an unconditional count ("How many products are listed?"); a count with a condition is left to other rules.
_COUNT = re.compile(
    r"^\s*how many\s+(?:[\w()%-]+\s+){0,3}?(?:rows?\s+|entries\s+|items\s+)?"
    r"(?:are\s+)?(?:listed|shown|there|in the table)\s*\??\s*$",
    re.I,
)


@dataclass(frozen=True)
class TableAnswer:
    """An answer read from a table: its text, the cells it came from (the answer's own cell last), its ``box``
    (that cell, or the union of the cells a computed answer came from), a confidence
    (how well the question's labels matched the table's), the operation and the table's index."""

    text: str
    cells: tuple[Cell, ...]
    box: Box
    _: KW_ONLY
    confidence: float
    operation: str
    table: int


def _score(needle: str, hay: str) -> float:
    from rapidfuzz import fuzz, utils

    a, b = utils.default_process(needle), utils.default_process(hay)
    if not a or not b:
        return 0.0
    return fuzz.partial_ratio(b, a) if len(b) <= len(a) else fuzz.partial_ratio(a, b) * 0.9


def _mentioned(question: str, labels: Sequence[str], floor: float = 80.0) -> list[tuple[int, float]]:
    """Labels the question names (partial fuzzy match of the label inside the question), best first; a longer
    label wins a tie (it is the more specific one)."""
    scored = [(i, _score(question, lab)) for i, lab in enumerate(labels) if lab and len(lab.strip()) >= 2]
    scored = [(i, s) for i, s in scored if s >= floor]
    return sorted(scored, key=lambda t: (-t[1], -len(labels[t[0]])))


def _unit(cells: Sequence[Cell]) -> tuple[str, str, int]:
    """The prefix, suffix and decimals a column prints its figures with ("$", "", 2)."""
    texts = [c.text.strip() for c in cells if c.text.strip()]
    prefix = (
        "$"
        if texts and all(t.lstrip("(").startswith("$") for t in texts)
        else "€"
        if texts and all(t.lstrip("(").startswith("€") for t in texts)
        else ""
    )
    suffix = "%" if texts and all(t.rstrip(")").endswith("%") for t in texts) else ""
    decimals = max((len(m.group(1)) for t in texts if (m := re.search(r"\.(\d+)\D*$", t))), default=0)
    return prefix, suffix, decimals


def _format(value: float, cells: Sequence[Cell]) -> str:
    prefix, suffix, decimals = _unit(cells)
    grouped = any("," in c.text for c in cells)
    body = f"{abs(value):,.{decimals}f}" if grouped else f"{abs(value):.{decimals}f}"
    return ("-" if value < 0 else "") + prefix + body + suffix


def _union(cells: Sequence[Cell]) -> Box:
    return Box.enclosing(c.box for c in cells)


def _value_columns(table: Table) -> list[int]:
    """Columns whose body cells are mostly figures."""
    out = []
    for c in range(table.n_cols):
        cells = [table.cell(r, c) for r in range(table.header_rows, table.n_rows)]
        texts = [x for x in cells if x is not None and x.text]
        if texts and sum(1 for x in texts if is_figure(x.text)) >= 0.7 * len(texts):
            out.append(c)
    return out


def _stub(table: Table, values: list[int]) -> int:
    """The column holding the row labels: the leftmost column that is not mostly figures (``values``)."""
    return next((c for c in range(table.n_cols) if c not in values), 0)


def _body_rows(table: Table, stub: int) -> list[int]:
    """Body rows, without a closing total row (one labelled "Total" or "Sum" in the ``stub`` column)."""
    rows = []
    for r in range(table.header_rows, table.n_rows):
        label = getattr(table.cell(r, stub), "text", "")
        if re.match(r"^\s*(total|sum|grand total|overall)\b", label, re.I):
            continue
        rows.append(r)
    return rows


def _column_hits(question: str, table: Table) -> list[tuple[int, float]]:
    """Columns the question names, best first: by the whole header of a column or by any one of its header
    lines (a spanning group caption over a leaf head: "Price" names "Group A / Price")."""
    best: dict[int, float] = {}
    for c, name in enumerate(table.column_names()):
        parts = [name] + [
            cell.text
            for r in range(table.header_rows)
            if (cell := table.cell(r, c)) is not None and cell.colspan == 1 and cell.text
        ]
        for part in dict.fromkeys(parts):
            for _i, score in _mentioned(question, [part], 75.0):
                best[c] = max(best.get(c, 0.0), score + min(len(part), 30) / 100)
    return sorted(best.items(), key=lambda t: -t[1])


def _one(question: str, table: Table, index: int, sole_column: bool = False) -> TableAnswer | None:
    values = _value_columns(table)
    stub = _stub(table, values)
    rows = _body_rows(table, stub)
    labels = {r: getattr(table.cell(r, stub), "text", "") for r in rows}
    if _COUNT.search(question):
        cells = [c for r in rows if (c := table.cell(r, stub)) is not None]
        if cells:
            return TableAnswer(
                str(len(rows)), tuple(cells), _union(cells), confidence=0.8, operation="count", table=index
            )
        return None
    col_hits = [(c, min(s, 100.0)) for c, s in _column_hits(question, table) if c != stub]
    value_hits = [(c, s) for c, s in col_hits if c in values]
    row_hits = _mentioned(question, [labels.get(r, "") for r in rows], 80.0)
    if not (value_hits or col_hits) and sole_column and len(values) == 1:
        # A table of one value column (a chart of one series): a question that names no column asks about it.
        value_hits = [(values[0], 85.0)]
    if not (value_hits or col_hits):
        return None
    col, col_score = (value_hits or col_hits)[0]
    if (_ARGMAX.search(question) or _ARGMIN.search(question)) and _WHICH.search(question) and col in values:
        ranked = [(r, x) for r in rows if (x := table.cell(r, col)) is not None and x.value is not None]
        if len(ranked) >= 2:
            pick = max if _ARGMAX.search(question) else min
            best_row, best = pick(ranked, key=lambda t: t[1].value or 0.0)
            label = table.cell(best_row, stub)
            if label is not None and label.text:
                return TableAnswer(
                    label.text,
                    (best, label),
                    label.box,
                    confidence=col_score / 100 * 0.9,
                    operation="argmax" if pick is max else "argmin",
                    table=index,
                )
    if col in values and _DIFF.search(question) and len(row_hits) >= 2:
        a, b = (table.cell(rows[row_hits[k][0]], col) for k in (0, 1))
        if a is not None and b is not None and a.value is not None and b.value is not None:
            return TableAnswer(
                _format(abs(a.value - b.value), [a, b]),
                (a, b),
                _union([a, b]),
                confidence=min(col_score, row_hits[1][1]) / 100 * 0.85,
                operation="difference",
                table=index,
            )
    if col in values and (_SUM.search(question) or _MEAN.search(question)) and not row_hits:
        total_row = next((r for r in range(table.header_rows, table.n_rows) if r not in rows), None)
        cells = [x for r in rows if (x := table.cell(r, col)) is not None and x.value is not None]
        if _SUM.search(question) and total_row is not None and (t := table.cell(total_row, col)) is not None and t.text:
            return TableAnswer(t.text, (t,), t.box, confidence=col_score / 100 * 0.9, operation="lookup", table=index)
        if cells:
            total = sum(x.value or 0.0 for x in cells)
            value = total / len(cells) if _MEAN.search(question) else total
            return TableAnswer(
                _format(value, cells),
                tuple(cells),
                _union(cells),
                confidence=col_score / 100 * 0.85,
                operation="mean" if _MEAN.search(question) else "sum",
                table=index,
            )
    if row_hits:
        found = table.cell(rows[row_hits[0][0]], col)
        if found is not None and found.text:
            return TableAnswer(
                found.text,
                (found,),
                found.box,
                confidence=min(col_score, row_hits[0][1]) / 100,
                operation="lookup",
                table=index,
            )
    return None


#: The grid operations that answer a question of each analysed intent
#: (:func:`docintent.reader.question.analyse`): a claim to verify, a comparison of two named rows or a change
#: between two columns is not read here, and a grid answer of another kind is no answer to it.
OPERATIONS_FOR_INTENT = {
    "lookup": ("lookup", "sum"),
    "max": ("argmax",),
    "min": ("argmin",),
    "avg": ("mean",),
    "diff": ("difference",),
    "count": ("count",),
}


def answer(
    tables: Sequence[Table], question: str, intent: str | None = None, *, sole_column: bool = False
) -> TableAnswer | None:
    """The best answer any of ``tables`` gives to ``question`` (None when no table's labels are named).
    ``intent``: the question's analysed intent; a grid answer whose operation does not serve it is dropped.
    ``sole_column``: a table with one value column answers questions that name none of its columns from it
    (a chart's one series)."""
    best: TableAnswer | None = None
    for index, table in enumerate(tables):
        if table.n_rows < 2 or table.n_cols < 2:
            continue
        got = _one(question, table, index, sole_column)
        if got is not None and intent is not None and got.operation not in OPERATIONS_FOR_INTENT.get(intent, ()):
            continue
        if got is not None and (best is None or got.confidence > best.confidence):
            best = got
    return best


__all__ = ["TableAnswer", "answer"]
