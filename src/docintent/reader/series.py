"""Series read from a table or a chart's printed labels: the cell where a named row meets a named column
(often a year), the row with the column's extreme, a change between two columns, and a bar's value label.

Reports print a chart's figures twice: as value labels over the bars and as a data table beside it. The table
is read first (its cells sit under column headers); a chart without one is read from its labels, each tied to
the category printed under (or beside) the same bar.

>>> column_words("What were the sales of North in 2024?")
['2024']
"""

from __future__ import annotations

import re

from ..layout.lines import Item, Layout, h_overlap
from .question import MAX_WORDS, MIN_WORDS, QuestionInfo
from .rows import header_above, is_textual, phrase_score, resolve_target, squash, visual_rows
from .solution import Solution
from .values import find_numbers, format_places, printed_decimals

_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_TOTAL = re.compile(r"^\s*(?:total|sum|all|overall|grand total)\b", re.I)


def column_words(question: str) -> list[str]:
    """The column a question names by a year ("in 2024")."""
    return _YEAR.findall(question)


def _column_header(layout: Layout, word: str) -> list[Item]:
    return [i for i in layout.items if squash(i.text) == squash(word)]


def _cell_under(layout: Layout, row_items: list[Item], header: Item) -> Item | None:
    cells = [c for c in row_items if c is not header and h_overlap(c, header) > 0.3 and find_numbers(c.text)]
    cells = [c for c in cells if header_above(layout, c) is header]
    return cells[0] if cells else None


def _targets(question: str) -> list[str]:
    q = re.sub(r"^\s*\w+", "", question)  # the question word
    m = re.search(
        r"\b(?:of|for)\s+(?:the\s+)?(.+?)(?:\s+(?:in|from|between|during)\s+(?:19|20)\d\d\b|\s+change\b|\?|$)", q
    )
    out = [m.group(1).strip()] if m else []
    out += [c for c in re.findall(r"\b[A-Z][\w&.-]*(?:\s+[A-Z][\w&.-]*)*", q) if not _YEAR.fullmatch(c)]
    return [t for t in dict.fromkeys(out) if t]


def _number_text(item: Item) -> tuple[float, str] | None:
    nums = find_numbers(item.text)
    return (nums[0].value, nums[0].text) if nums else None


def solve_cell(info: QuestionInfo, layout: Layout) -> Solution | None:
    """ "What were the sales of North in 2024?" (one cell) and "How much did X change from 2020 to 2021?"
    (the later cell minus the earlier one)."""
    years = column_words(info.text)
    if (
        info.intent == "verify"
        or not years
        or re.search(r"\b(?:which|who)\b", info.text, re.I)
        and not re.search(r"\bvalue\b", info.text, re.I)
    ):
        return None
    headers = {y: _column_header(layout, y) for y in years}
    if not all(headers.values()):
        return None
    rows = visual_rows(layout)
    for target in _targets(info.text):
        score, row, _matched = resolve_target(layout, target, rows, 0.9)
        if row is None:
            continue
        cells = []
        for y in years[:2]:
            cell = next((c for h in headers[y] for c in [_cell_under(layout, row.items, h)] if c is not None), None)
            if cell is None:
                break
            cells.append(cell)
        if len(cells) != len(years[:2]):
            continue
        found = [_number_text(c) for c in cells]
        values = [v for v in found if v is not None]
        if len(values) != len(found):
            continue
        conf = 0.55 + 0.4 * score * min(c.confidence for c in cells)
        if len(cells) == 1:
            return Solution(
                values[0][1], conf, layout.region_of(cells + row.items[:1]), "table cell under the named column"
            )
        if re.search(
            r"\b(change|differ|difference|grow|grew|fall|fell|rise|rose|increase|decrease|drop)\w*\b", info.text, re.I
        ):
            a, b = values[0], values[1]
            delta = b[0] - a[0]
            text = format_places(delta, max(printed_decimals(a[1], a[0]), printed_decimals(b[1], b[0])))
            return Solution(text, conf, layout.region_of(cells + row.items[:1]), "change between two columns")
    return None


def solve_column_extreme(info: QuestionInfo, layout: Layout) -> Solution | None:
    """ "Which region had the highest sales in 2024?": the row label of the column's extreme (totals left out)."""
    low = info.text.lower()
    if not re.match(r"^\s*(?:which|who|what)\b", low):
        return None
    order = (
        "max"
        if any(re.search(rf"\b{w}\b", low) for w in MAX_WORDS)
        else "min"
        if any(re.search(rf"\b{w}\b", low) for w in MIN_WORDS)
        else ""
    )
    years = column_words(info.text)
    if not order or not years:
        return None
    best = None
    for header in _column_header(layout, years[0]):
        column = []
        for cell in layout.column_under(header):
            if header_above(layout, cell) is not header:
                continue
            num = _number_text(cell)
            row = sorted([cell] + layout.same_row(cell, 0.5), key=lambda o: o.box.x0)
            labels = [
                o
                for o in row
                if o.box.x1 <= cell.box.x0 + 0.01 and is_textual(o) and header_above(layout, o) is not None
            ]
            if num is None or not labels:
                continue
            label = labels[-1]
            if _TOTAL.match(label.text):
                continue
            column.append((num[0], label, cell))
        if len(column) >= 2:
            pick = max(column, key=lambda t: t[0]) if order == "max" else min(column, key=lambda t: t[0])
            best = (pick, header, column)
            break
    if best is None:
        return None
    (value, label, cell), header, column = best
    return Solution(label.text.strip(), 0.8, layout.region_of([header, cell, label]), f"column {order} in a table")


def _bar_labels(layout: Layout) -> tuple[list[Item], list[Item]] | None:
    """A bar chart's category row (three or more short labels side by side) and the numeric labels above it."""
    for row in visual_rows(layout):
        cats = [i for i in row.items if len(i.text.strip()) <= 16 and not re.search(r"[.,]\d", i.text)]
        if len(cats) < 3 or len(cats) != len(row.items):
            continue
        gaps = [b.cx - a.cx for a, b in zip(cats, cats[1:])]
        if min(gaps) <= 0 or max(gaps) > 2.5 * min(gaps):
            continue
        top = min(c.box.y0 for c in cats)
        span = (cats[0].box.x0 - min(gaps), cats[-1].box.x1 + min(gaps))
        labels = [
            i
            for i in layout.items
            if i.box.y1 <= top
            and span[0] <= i.cx <= span[1]
            and re.fullmatch(r"\s*-?[\d.,]+%?\s*", i.text)
            and top - i.box.y1 < 0.6
        ]
        if len(labels) >= 2:
            return cats, labels
    return None


def solve_value_labels(info: QuestionInfo, layout: Layout) -> Solution | None:
    """A chart's printed value labels: "What value is shown for 2023?" and "Which year has a value of 65?"."""
    found = _bar_labels(layout)
    if found is None:
        return None
    cats, labels = found
    width = min(b.cx - a.cx for a, b in zip(cats, cats[1:]))

    def label_of(cat: Item) -> Item | None:
        near = [lb for lb in labels if abs(lb.cx - cat.cx) < 0.45 * width]
        return max(near, key=lambda lb: lb.cy) if near else None

    m = re.search(r"\b(?:has|had|have|with|shows?)\s+(?:a |the )?value of\s+(-?[\d.,]+)", info.text, re.I)
    if m and re.match(r"^\s*(?:which|what)\b", info.text, re.I):
        target = find_numbers(m.group(1))
        for cat in cats:
            lb = label_of(cat)
            printed = _number_text(lb) if lb is not None else None
            if lb is not None and target and printed and abs(printed[0] - target[0].value) < 1e-6:
                return Solution(cat.text.strip(), 0.8, layout.region_of([cat, lb]), "category under the value label")
        return None
    if re.search(
        r"\b(gap|differ\w*|sum|total|average|mean|change\w*|more|less|between|ratio|combined|highest|lowest|"
        r"most|least|largest|smallest|than)\b",
        info.text,
        re.I,
    ):
        return None  # an operation over several bars, not one label
    named = [cat for cat in cats if phrase_score(cat.text, info.text) >= 1.0]
    if len(named) != 1:
        return None
    best = (1.0, named[0])
    lb = label_of(best[1])
    if lb is None:
        return None
    return Solution(lb.text.strip(), 0.8, layout.region_of([best[1], lb]), "value label over the category")


def solve_series(info: QuestionInfo, layout: Layout, task: str) -> Solution | None:
    """The first series rule that reads the question's value from a table or (``task`` "chart") a chart's
    printed labels."""
    rules = (solve_cell, solve_column_extreme) + ((solve_value_labels,) if task == "chart" else ())
    for rule in rules:
        sol = rule(info, layout)
        if sol is not None and sol.text:
            return sol
    return None


__all__ = ["column_words", "solve_cell", "solve_column_extreme", "solve_series", "solve_value_labels"]
