"""From a page layout and an analysed question to one formatted answer with a confidence and its region."""

from __future__ import annotations

import re

from ..layout.lines import Layout
from ..layout.structure import tables_of
from ..page import Box, Page
from .blocks import solve_block
from .chart import solve_chart
from .chart_qa import answer as chart_answer
from .chart_table import read_chart
from .extract import (
    Candidate,
    Matcher,
    aggregate_candidates,
    best_candidate,
    cell_value,
    column_values,
    heading_candidates,
    intersection_candidates,
    key_value_candidates,
    prose_candidates,
    row_typed_candidates,
)
from .operations import solve_operation
from .question import QuestionInfo, analyse
from .relations import solve_relation
from .series import solve_series
from .solution import Solution
from .spans import classify, span_candidates, trim_span
from .table_qa import answer as table_answer
from .values import find_numbers, format_number


def _region(layout: Layout, cand: Candidate | None) -> Box:
    if cand is None or not cand.items:
        return Box.FULL
    return layout.region_of(cand.items)


#: Typed spans that have their own reader (table-of-contents pages, section titles, versions...): the row,
#: relation and block rules do not answer them.
_OWN_READERS = frozenset(
    {
        "page",
        "section_title",
        "caption",
        "version",
        "define",
        "term",
        "issue",
        "year",
        "years",
        "url",
        "postal",
        "street",
    }
)


#: A table-grid answer below this label-match score is left to the other rules.
GRID_SURE = 0.8


def solve_grid(info: QuestionInfo, layout: Layout, page: Page) -> Solution | None:
    """The answer read over the grid of a table on the page (:mod:`~docintent.reader.table_qa`): its region is
    the cell it was read from (or the cells it was computed from), or None when no table's labels are named."""
    got = table_answer(tables_of(layout, page.width, page.height), info.text, info.intent)
    if got is None or got.confidence < GRID_SURE:
        return None
    return Solution(got.text, min(got.confidence, 1.0), got.box, f"table grid ({got.operation})")


#: A chart-table answer below this confidence (the weaker of the label match and the values' own) is left to the
#: other chart rules.
CHART_SURE = 0.6


def solve_chart_table(info: QuestionInfo, layout: Layout, page: Page) -> tuple[Solution, bool] | None:
    """The answer read over the data table of the chart on the page (:mod:`~docintent.reader.chart_table`,
    :mod:`~docintent.reader.chart_qa`): its region is the marks of the values it was read or computed from; None
    when no chart is read, the question names nothing on it, or the answer is not sure enough. With it, whether it
    was read from printed values alone (neither measured off the marks nor a count of labels)."""
    chart = read_chart(layout, page)
    if chart is None:
        return None
    got = chart_answer(chart, info.text, info.intent)
    if got is None or got.confidence < CHART_SURE:
        return None
    measured = any(v.how == "measured" for v in got.values)
    solution = Solution(
        got.text, min(got.confidence, 1.0), got.box, f"chart table ({got.operation}{', measured' if measured else ''})"
    )
    return solution, not measured and not got.operation.startswith("count")


def solve(info: QuestionInfo, task: str, layout: Layout, page: Page) -> Solution:
    """Best answer for ``info`` on ``layout`` (read from ``page``), formatted for ``task``."""
    if not layout.items:
        return Solution("", 0.0, Box.FULL, "nothing readable")
    if task == "table":
        grid = solve_grid(info, layout, page)
        if grid is not None:
            return grid
    read = solve_chart_table(info, layout, page) if task == "chart" else None
    charted = read[0] if read is not None else None
    if read is not None and read[1]:
        return read[0]  # read from printed values: the chart table is sure
    matcher = Matcher(info, layout)
    span_kind = classify(info.text)
    if span_kind is None or span_kind.kind not in _OWN_READERS or task == "chart":
        ruled = (
            solve_series(info, layout, task)
            or solve_operation(info, layout)
            or solve_relation(info, layout)
            or solve_block(info, layout)
        )
        if ruled is not None:
            return ruled
    if task == "chart":
        chart = solve_chart(info, layout, page, matcher)
        if chart is not None:
            return chart
        if charted is not None:
            # A value measured off the marks (or a count of labels an OCR may have missed) answers where the older
            # chart rules have nothing; where they answer, they keep their answer (the less proven of the two).
            return charted
    typed = span_candidates(info.text, layout, matcher)
    if typed:
        # The question wants one typed entity (a version, a date, a ToC page...) and the page has some:
        # the best of those is the answer, not the text next to a label.
        best = best_candidate(typed)
        assert best is not None
        text = trim_span(best.text, span_kind.kind if span_kind else "")
        return Solution(text, min(best.score, 1.0), _region(layout, best), best.source)
    if info.intent == "verify":
        return _verify(info, task, layout, matcher)
    if info.intent == "diff" and len(info.targets) == 2:
        sol = _difference(info, task, layout, page)
        if sol is not None:
            return sol
    if info.intent == "compare" and len(info.targets) == 2:
        sol = _compare(info, layout)
        if sol is not None:
            return sol
    if info.intent == "count" and info.condition is not None:
        sol = _conditional_count(info, layout, matcher)
        if sol is not None:
            return sol
    cands: list[Candidate] = heading_candidates(info, layout)
    if info.intent in ("max", "min", "sum", "avg", "count"):
        cands += aggregate_candidates(info, layout, matcher)
    cands += intersection_candidates(info, layout, matcher)
    cands += key_value_candidates(info, layout, matcher)
    cands += row_typed_candidates(info, layout, matcher)
    cands += prose_candidates(info, layout, matcher)
    best = best_candidate(cands)
    if best is None:
        return Solution("", 0.0, Box.FULL, "no label of the question found")
    text = format_answer(trim_span(best.text, info.answer_type), info, task, best.value)
    return Solution(text, min(best.score, 1.0), _region(layout, best), best.source)


def format_answer(text: str, info: QuestionInfo, task: str, value: float | None = None) -> str:
    """Answer formatting per task: charts take bare numbers; tables and documents keep the span as printed."""
    text = text.strip()
    if task == "chart" and info.answer_type not in ("category", "name", "text", "date", "yesno"):
        if value is None:
            nums = find_numbers(text)
            value = nums[0].value if nums else None
        if value is not None:
            return format_number(value)
    return text


def lookup_value(phrase: str, info: QuestionInfo, task: str, layout: Layout, page: Page) -> Candidate | None:
    """Value of one compared target: the question's other words plus the target's own words."""
    sub = analyse(f"What is the value of {phrase}?", task)
    others = [k for k in info.keywords if k not in {"difference", "between", "differ", "gap"}]
    sub.keywords = list(dict.fromkeys(sub.keywords + [k for k in others if k not in " ".join(info.targets).lower()]))
    sub.answer_type = "number"
    matcher = Matcher(sub, layout)
    cands = intersection_candidates(sub, layout, matcher) + key_value_candidates(sub, layout, matcher)
    cands = [c for c in cands if find_numbers(c.text)]
    return best_candidate(cands)


def _value_cells(found: Candidate) -> set[int]:
    """The items a look-up read its value from (not the labels that located it: two look-ups may share a row's
    label and read different columns)."""
    return {id(i) for i in found.items if found.text.strip() and found.text.strip() in i.text}


def _difference(info: QuestionInfo, task: str, layout: Layout, page: Page) -> Solution | None:
    a = lookup_value(info.targets[0], info, task, layout, page)
    b = lookup_value(info.targets[1], info, task, layout, page)
    if a is None or b is None or _value_cells(a) & _value_cells(b):
        return None  # two targets read from one cell: a failed look-up, not a difference of 0
    va, vb = find_numbers(a.text)[0].value, find_numbers(b.text)[0].value
    diff = abs(va - vb)
    region = layout.region_of(a.items + b.items)
    return Solution(format_number(diff), min(a.score, b.score), region, "difference of two look-ups")


_LESS = re.compile(r"\b(less|lower|smaller|fewer|least|below|under|cheaper|worse)\b", re.I)


def _compare(info: QuestionInfo, layout: Layout) -> Solution | None:
    """ "Which has more X, A or B?": look both up under the X column and name the winner."""
    col = [
        k
        for k in info.keywords
        if k
        not in {"more", "less", "higher", "lower", "greater", "larger", "bigger", "smaller", "fewer", "most", "least"}
    ]
    found = []
    for target in info.targets:
        cell = cell_value(layout, [w.lower() for w in re.findall(r"[A-Za-z0-9]+", target)], col)
        if cell is None:
            return None
        found.append((target, cell))
    pick = min(found, key=lambda t: _num(t[1])) if _LESS.search(info.text) else max(found, key=lambda t: _num(t[1]))
    label = pick[1].items[0].text if pick[1].items else pick[0]
    text = pick[0] if len(label) > 2 * len(pick[0]) + 10 else label
    items = [i for _, c in found for i in c.items]
    return Solution(text, min(c.score for _, c in found), layout.region_of(items), "comparison of two rows")


def _num(cell: Candidate) -> float:
    """The value of a numeric cell (:func:`cell_value` only returns cells that hold a number)."""
    if cell.value is None:
        raise ValueError(f"cell {cell.text!r} holds no number")
    return cell.value


def _conditional_count(info: QuestionInfo, layout: Layout, matcher: Matcher) -> Solution | None:
    """ "How many X have Y above N?": count the cells of column Y that satisfy the condition."""
    if info.condition is None:
        return None
    word, bound = info.condition
    found = column_values(info, layout, matcher)
    if found is None:
        return None
    header, column = found
    tests = {
        "above": lambda v: v > bound,
        "over": lambda v: v > bound,
        "more than": lambda v: v > bound,
        "greater than": lambda v: v > bound,
        "higher than": lambda v: v > bound,
        "at least": lambda v: v >= bound,
        "below": lambda v: v < bound,
        "under": lambda v: v < bound,
        "less than": lambda v: v < bound,
        "lower than": lambda v: v < bound,
        "fewer than": lambda v: v < bound,
        "at most": lambda v: v <= bound,
    }
    n = sum(1 for _, v in column if tests[word](v))
    return Solution(
        str(n),
        0.6 * matcher.match(header)[0] + 0.2,
        layout.region_of([header] + [c for c, _ in column]),
        "conditional count over a column",
    )


_COMPARATIVE = re.compile(
    r"\b(more|higher|greater|larger|bigger|exceeds?|above|over|less|lower|smaller|fewer|below|under)\b", re.I
)


def _verify(info: QuestionInfo, task: str, layout: Layout, matcher: Matcher) -> Solution:
    """Check a claim against the page: its numbers must sit in the row its words point to."""
    yes, no = ("True", "False") if info.answer_type == "truefalse" else ("Yes", "No")
    claim = re.sub(
        r"(?i)^(is it true that|true or false:?|verify( that)?:?|is the (following )?(claim|statement) (true|correct):?)",
        "",
        info.text,
    ).strip()
    low = claim.lower()
    claim_words = [
        k
        for k in info.keywords
        if k not in {"true", "false", "table", "statement", "claim", "correct", "figure", "support", "according"}
    ]
    sign = re.search(r"\b(?:for|in) ([\w.-]+) (?:is|was|were|are) (positive|negative|zero)\b", low)
    if sign:
        col = sign.group(1)
        row = [w for w in claim_words if w not in {col, "positive", "negative", "zero"}]
        cell = cell_value(layout, row, [col])
        if cell is not None:
            value = _num(cell)
            holds = {"positive": value > 0, "negative": value < 0, "zero": value == 0}[sign.group(2)]
            return Solution(
                yes if holds else no,
                min(0.5 + cell.score / 2, 0.95),
                layout.region_of(cell.items),
                f"sign of the cell {cell.text}",
            )
    cmp = re.search(
        r"\b(higher|greater|larger|more|bigger|lower|less|smaller|fewer) in ([\w.-]+) than in ([\w.-]+)", low
    )
    if cmp:
        a_col, b_col = cmp.group(2), cmp.group(3)
        row = [w for w in claim_words if w not in {a_col, b_col, cmp.group(1)}]
        a, b = cell_value(layout, row, [a_col]), cell_value(layout, row, [b_col])
        if a is not None and b is not None:
            holds = (
                _num(a) > _num(b)
                if cmp.group(1) in ("higher", "greater", "larger", "more", "bigger")
                else _num(a) < _num(b)
            )
            return Solution(
                yes if holds else no,
                min(0.5 + min(a.score, b.score) / 2, 0.95),
                layout.region_of(a.items + b.items),
                "comparison of two cells",
            )
    numbers = [n for n in find_numbers(claim) if not re.fullmatch(r"(19|20)\d\d", n.text)]
    ranked = matcher.ranked()
    if not ranked:
        return Solution(no, 0.3, Box.FULL, "claim words not found")
    if numbers:
        best_item, best_score, found = None, 0.0, False
        for score, item in ranked[:6]:
            row_items = [item] + layout.same_row(item, 0.4)
            values = [n.value for cell in row_items for n in find_numbers(cell.text)]
            for target in numbers:
                if any(abs(v - target.value) <= 1e-6 + 1e-9 * abs(target.value) for v in values):
                    if score > best_score:
                        best_item, best_score, found = item, score, True
        if found and best_item is not None:
            return Solution(
                yes, min(0.5 + best_score / 2, 0.95), layout.region_of([best_item]), "claim value found in its row"
            )
        top_score, top_item = ranked[0]
        return Solution(
            no, min(0.4 + top_score / 2, 0.9), layout.region_of([top_item]), "claim value not in the matching row"
        )
    top_score, top_item = ranked[0]
    answer = yes if top_score >= 0.6 else no
    return Solution(answer, 0.5, layout.region_of([top_item]), "claim words matched on the page")
