"""Chart questions answered over a chart's data table (:class:`~docintent.reader.chart_table.ChartTable`).

Look-ups, the largest / smallest category, differences, sums and means are the table operations of
:mod:`docintent.reader.table_qa`, run over the chart's grid (categories as rows, series as columns, and the
transposed grid for several series); what only a chart asks is answered here: the number of categories, series
or bars, a trend between two categories ("increase" / "decrease"), a category's share of the total and a stacked
bar's total. An answer keeps the values it was read or computed from, so its box is their marks.

>>> from docintent.page import Box
>>> from docintent.reader.chart_table import ChartTable, ChartValue
>>> v = [ChartValue("Sales", c, x, box=Box(.1 * k, .2, .1 * k + .05, .8), confidence=.9, how="label")
...      for k, (c, x) in enumerate([("2020", 40.0), ("2021", 55.0), ("2022", 50.0)])]
>>> chart = ChartTable("bar", "Sales", ["Sales"], categories=["2020", "2021", "2022"], values=v, region=Box(0, 0, 1, 1))
>>> [answer(chart, q).text for q in ("What was the value in 2021?", "Which year had the highest value?",
...                                  "Did sales increase or decrease from 2020 to 2022?", "How many years are shown?")]
['55', '2021', 'increase', '3']
"""

from __future__ import annotations

import re
from dataclasses import KW_ONLY, dataclass

from ..page import Box
from .chart_table import ChartTable, ChartValue
from .table_qa import answer as table_answer
from .values import format_number

_COUNT = re.compile(r"^\s*how many\b", re.I)
_SERIES_COUNT = re.compile(r"\b(series|legend|groups|compared)\b", re.I)
_BARS = re.compile(r"\bbars?\b", re.I)
_TREND = re.compile(r"\b(increase|decrease|rise|fall|grow|decline)d?\b.*\bor\b|\btrend\b|\bgo up or down\b", re.I)
_SHARE = re.compile(r"\b(share|percentage|per ?cent|proportion)\b.*\b(total|all)\b", re.I)
_TOTAL = re.compile(r"\b(total|sum|combined)\b", re.I)
_LEAD = re.compile(r"^\s*(?:in|on|at|for|during)\s+(which|what)\b", re.I)


@dataclass(frozen=True)
class ChartAnswer:
    """An answer read from a chart's data: its text, the values it came from, its box (their marks), a
    confidence and the operation."""

    text: str
    values: tuple[ChartValue, ...]
    box: Box
    _: KW_ONLY
    confidence: float
    operation: str


def _union(values: tuple[ChartValue, ...], fallback: Box) -> Box:
    return Box.enclosing(v.box for v in values) if values else fallback


def _mentions(question: str, names: list[str]) -> list[str]:
    """The names the question contains (whole words, case folded), in the order the question names them."""
    low = question.lower()
    found = []
    for name in names:
        n = name.strip().lower()
        if len(n) < 2:
            continue
        m = re.search(r"(?<![a-z0-9])" + re.escape(n) + r"(?![a-z0-9])", low)
        if m:
            found.append((m.start(), -len(n), name))
    out: list[str] = []
    for _pos, _len, name in sorted(found):
        if not any(name.lower() in other.lower() for other in out):
            out.append(name)
    return out


def _series_of(chart: ChartTable, question: str) -> str | None:
    if len(chart.series) == 1:
        return chart.series[0]
    named = _mentions(question, chart.series)
    return named[0] if named else None


def _conf(values: tuple[ChartValue, ...]) -> float:
    return min((v.confidence for v in values), default=0.0)


def answer(chart: ChartTable, question: str, intent: str | None = None) -> ChartAnswer | None:
    """The answer ``chart``'s data gives to ``question``, or None (the question names nothing on the chart, or
    the values it needs were not read). ``intent``: the question's analysed intent, passed to the table
    operations (a grid answer of another kind is no answer)."""
    q = _LEAD.sub(r"\1", question)
    cats = _mentions(q, chart.categories)
    if _COUNT.search(q) and not cats:
        if len(chart.series) > 1 and _SERIES_COUNT.search(q):
            n, op = len(chart.series), "count series"
        elif len(chart.series) > 1 and _BARS.search(q) and chart.kind in ("bar", "hbar") and not chart.stacked:
            n, op = len(chart.series) * len(chart.categories), "count bars"
        else:
            n, op = len(chart.categories), "count categories"
        return ChartAnswer(str(n), (), chart.region, confidence=0.8, operation=op)
    series = _series_of(chart, q)
    if _TREND.search(q) and series is not None:
        row = [v for v in chart.values if v.series == series]
        by_cat = {v.category: v for v in row}
        ends = [by_cat[c] for c in cats[:2] if c in by_cat]
        if len(ends) < 2:
            ends = [row[0], row[-1]] if len(row) >= 2 else []
        if len(ends) == 2 and ends[0].value is not None and ends[1].value is not None:
            a, b = ends
            if a.value != b.value:
                word = "increase" if (b.value or 0.0) > (a.value or 0.0) else "decrease"
                return ChartAnswer(
                    word, (a, b), _union((a, b), chart.region), confidence=_conf((a, b)), operation="trend"
                )
    if chart.kind != "pie" and _SHARE.search(q) and series is not None and cats:
        row = [v for v in chart.values if v.series == series]
        target = next((v for v in row if v.category == cats[0]), None)
        if target is not None and target.value is not None and all(v.value is not None for v in row):
            total = sum(v.value or 0.0 for v in row)
            if total > 0:
                share = 100.0 * target.value / total
                return ChartAnswer(
                    f"{share:.1f}",
                    tuple(row),
                    _union((target,), chart.region),
                    confidence=_conf(tuple(row)),
                    operation="share",
                )
    if chart.stacked and _TOTAL.search(q) and len(cats) == 1:
        stack = tuple(v for v in chart.values if v.category == cats[0])
        if stack and all(v.value is not None for v in stack):
            total = sum(v.value or 0.0 for v in stack)
            return ChartAnswer(
                format_number(total),
                stack,
                _union(stack, chart.region),
                confidence=_conf(stack),
                operation="stack total",
            )
    # The orientation the question reads: two categories named ("between Lyon and Oslo for 2023") are rows of one
    # series column; two series named for one category are rows of the transposed grid.
    named_series = _mentions(q, chart.series) if len(chart.series) > 1 else []
    grids = [chart.grid()]
    if len(named_series) >= 2 and len(cats) <= 1:
        grids = [chart.grid(transpose=True)]
    elif len(chart.series) > 1 and len(cats) < 2:
        grids.append(chart.grid(transpose=True))
    got = table_answer(grids, q, intent, sole_column=len(chart.series) == 1)
    if got is None:
        return None
    by_box = {(v.box.as_tuple(), format_number(v.value) if v.value is not None else ""): v for v in chart.values}
    used = tuple(v for c in got.cells if (v := by_box.get((c.box.as_tuple(), c.text))) is not None)
    conf = min(got.confidence, _conf(used)) if used else got.confidence
    return ChartAnswer(got.text, used, got.box, confidence=conf, operation=got.operation)


__all__ = ["ChartAnswer", "answer"]
