"""From a page layout and an analysed question to one formatted answer with a confidence and its region."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ...page import Box, Page
from .extract import (
    Candidate,
    Matcher,
    aggregate_candidates,
    best_candidate,
    row_typed_candidates,
    intersection_candidates,
    key_value_candidates,
    typed_span,
)
from .layout import Layout
from .question import QuestionInfo, analyse
from .values import find_numbers, format_number


@dataclass
class Solution:
    text: str
    confidence: float
    region: Box
    source: str


def _region(layout: Layout, cand: Candidate | None) -> Box:
    if cand is None or not cand.items:
        return Box.FULL
    return layout.region_of(cand.items)


def solve(info: QuestionInfo, task: str, layout: Layout, page: Page) -> Solution:
    """Best answer for ``info`` on ``layout`` (read from ``page``), formatted for ``task``."""
    if not layout.items:
        return Solution("", 0.0, Box.FULL, "nothing readable")
    matcher = Matcher(info, layout)
    if task == "chart":
        from .chart import solve_chart

        chart = solve_chart(info, layout, page, matcher)
        if chart is not None:
            return chart
    if info.intent == "verify":
        return _verify(info, task, layout, matcher)
    if info.intent == "diff" and len(info.targets) == 2:
        sol = _difference(info, task, layout, page)
        if sol is not None:
            return sol
    cands: list[Candidate] = []
    if info.intent in ("max", "min", "sum", "avg", "count"):
        cands += aggregate_candidates(info, layout, matcher)
    cands += intersection_candidates(info, layout, matcher)
    cands += key_value_candidates(info, layout, matcher)
    cands += row_typed_candidates(info, layout, matcher)
    best = best_candidate(cands)
    if best is None:
        return Solution("", 0.0, Box.FULL, "no label of the question found")
    text = format_answer(best.text, info, task, best.value)
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


def _lookup_value(phrase: str, info: QuestionInfo, task: str, layout: Layout, page: Page) -> Candidate | None:
    """Value of one compared target: the question's other words plus the target's own words."""
    sub = analyse(f"What is the value of {phrase}?", task)
    others = [k for k in info.keywords if k not in {"difference", "between", "differ", "gap"}]
    sub.keywords = list(dict.fromkeys(sub.keywords + [k for k in others if k not in " ".join(info.targets).lower()]))
    sub.answer_type = "number"
    matcher = Matcher(sub, layout)
    cands = intersection_candidates(sub, layout, matcher) + key_value_candidates(sub, layout, matcher)
    cands = [c for c in cands if find_numbers(c.text)]
    return best_candidate(cands)


def _difference(info: QuestionInfo, task: str, layout: Layout, page: Page) -> Solution | None:
    a = _lookup_value(info.targets[0], info, task, layout, page)
    b = _lookup_value(info.targets[1], info, task, layout, page)
    if a is None or b is None:
        return None
    va, vb = find_numbers(a.text)[0].value, find_numbers(b.text)[0].value
    diff = abs(va - vb)
    region = layout.region_of(a.items + b.items)
    return Solution(format_number(diff), min(a.score, b.score), region, "difference of two look-ups")


_COMPARATIVE = re.compile(r"\b(more|higher|greater|larger|bigger|exceeds?|above|over|less|lower|smaller|fewer|below|under)\b", re.I)


def _verify(info: QuestionInfo, task: str, layout: Layout, matcher: Matcher) -> Solution:
    """Check a claim against the page: its numbers must sit in the row its words point to."""
    yes, no = ("True", "False") if info.answer_type == "truefalse" else ("Yes", "No")
    claim = re.sub(r"(?i)^(is it true that|true or false:?|verify( that)?:?|is the (following )?(claim|statement) (true|correct):?)", "", info.text).strip()
    numbers = [n for n in find_numbers(claim) if not re.fullmatch(r"(19|20)\d\d", n.text)]
    ranked = matcher.ranked()
    if not ranked:
        return Solution(no, 0.3, Box.FULL, "claim words not found")
    if numbers:
        best_item, best_score, found = None, 0.0, False
        for score, item in ranked[:6]:
            row = [item] + layout.same_row(item, 0.4)
            values = [n.value for cell in row for n in find_numbers(cell.text)]
            for target in numbers:
                if any(abs(v - target.value) <= 1e-6 + 1e-9 * abs(target.value) for v in values):
                    if score > best_score:
                        best_item, best_score, found = item, score, True
        if found and best_item is not None:
            return Solution(yes, min(0.5 + best_score / 2, 0.95), layout.region_of([best_item]), "claim value found in its row")
        top_score, top_item = ranked[0]
        return Solution(no, min(0.4 + top_score / 2, 0.9), layout.region_of([top_item]), "claim value not in the matching row")
    top_score, top_item = ranked[0]
    answer = yes if top_score >= 0.6 else no
    return Solution(answer, 0.5, layout.region_of([top_item]), "claim words matched on the page")
