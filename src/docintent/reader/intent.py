"""What a question needs, parsed from its words: the operation (look-up, compare, difference, sum, average,
count with a condition, extreme / k-th highest, claim check), the targets it names and the context words that
pick the column or series. Built on :func:`docintent.reader.question.analyse` (the one question analysis).

>>> parse_intent("What is the difference between 2019 and 2020?", "table").kind
'diff'
"""

from __future__ import annotations

import re
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from .question import QuestionInfo, analyse, content_words

_OPS = {"diff": "difference", "sum": "sum", "avg": "average"}
_OP_WORDS = set(
    """difference differ differs between gap much more higher lower less than sum combined total add up
    average mean across all years shown change changed many value values have has does rank ranks second highest
    largest most lowest smallest fewest above below over under which what how whose""".split()
)
#: Comparison words of counting conditions, as tests of a value against the bound.
COUNT_TESTS = {
    "above": lambda v, b: v > b,
    "over": lambda v, b: v > b,
    "more than": lambda v, b: v > b,
    "greater than": lambda v, b: v > b,
    "higher than": lambda v, b: v > b,
    "at least": lambda v, b: v >= b,
    "below": lambda v, b: v < b,
    "under": lambda v, b: v < b,
    "less than": lambda v, b: v < b,
    "lower than": lambda v, b: v < b,
    "fewer than": lambda v, b: v < b,
    "at most": lambda v, b: v <= b,
}
_ORDINALS = {"second": 2, "third": 3, "2nd": 2, "3rd": 3}


@dataclass
class Intent:
    """What the question needs: ``kind`` (lookup, compare, diff, sum, avg, count, extreme, verify), the
    ``targets`` it names, the ``context`` words that pick the column or series, and for counts the
    ``condition``, for extremes the ``order`` and ``rank``; ``across``: an aggregate over a whole row or
    category (every year / series) rather than over two named targets."""

    kind: str
    answer_type: str
    targets: list[str] = field(default_factory=list)
    _: KW_ONLY
    context: list[str] = field(default_factory=list)
    condition: tuple[str, float] | None = None
    order: str = "max"
    rank: int = 1
    across: bool = False
    series: str | None = None  # grouped charts: the legend entry ("2017") the question restricts to


def _strip(t: str) -> str:
    return re.sub(r"^(the|a|an)\s+", "", t.strip(" ?.,'\"")).strip()


def parse_intent(question: str, task: str, info: QuestionInfo | None = None) -> Intent:
    """The question's intent and its targets (see :class:`Intent`); ``info``: the question's analysis when it was
    made already (:func:`docintent.reader.query.understand` makes it once and keeps the intent on its record)."""
    if info is None:
        info = analyse(question, task)
    q = question.strip()
    low = q.lower()
    years = re.findall(r"\b(?:19|20)\d\d\b", q)
    series = None
    m = re.search(r"\bin ((?:19|20)\d\d)\s*\??$", q)
    if task == "chart" and m:
        series = m.group(1)

    def with_context(kind: str, targets: list[str], answer_type: str = "number", **kw: Any) -> Intent:
        tw = {w for t in targets for w in content_words(t)}
        ctx = [w for w in content_words(q) if w not in tw and w not in _OP_WORDS and w != (series or "")]
        return Intent(kind, answer_type, [_strip(t) for t in targets], context=ctx, series=series, **kw)

    rank = re.search(
        r"\b(second|third|2nd|3rd)[- ](highest|largest|most|biggest|greatest|lowest|smallest|least|fewest)\b|\branks? (second|third)\b",
        low,
    )
    if rank:
        word = rank.group(1) or rank.group(3)
        order = "min" if rank.group(2) in ("lowest", "smallest", "least", "fewest") else "max"
        return with_context("extreme", [], "category", order=order, rank=_ORDINALS[word])
    if info.intent == "verify":
        return with_context("verify", [], info.answer_type)
    if info.intent == "count" and info.condition is not None:
        return with_context("count", [], "count", condition=info.condition)
    two = None
    kind = None
    by_year = re.search(
        r"\b(sum|total|combined|average|mean|difference)\b (?:of )?(.+?) (?:in|for|between) ((?:19|20)\d\d) and ((?:19|20)\d\d)\s*\??$",
        q,
        re.I,
    )
    if by_year and task == "table":
        k = {"sum": "sum", "total": "sum", "combined": "sum", "average": "avg", "mean": "avg"}.get(
            by_year.group(1).lower(), "diff"
        )
        return Intent(
            k, "number", [by_year.group(3), by_year.group(4)], context=content_words(by_year.group(2)), series=series
        )
    patterns = (
        ("diff", r"difference (?:in [\w ()%]+? )?between (.+?) and (.+?)(?: in (?:19|20)\d\d)?\s*\??$"),
        ("diff", r"(?:does|did|do) (.+?) differ from (.+?)(?: in (?:19|20)\d\d)?\s*\??$"),
        ("diff", r"gap between (?:the values of )?(.+?) and (.+?)(?: in (?:19|20)\d\d)?\s*\??$"),
        (
            "diff",
            r"how much (?:more|higher|greater|larger|less|lower|smaller) is (.+?) than (.+?)(?: in (?:19|20)\d\d)?\s*\??$",
        ),
        ("diff", r"how many more [\w ()%]+? (?:does|did) (.+?) have than (.+?)\s*\??$"),
        ("sum", r"sum of (?:[\w ()%]+? (?:of|for) )?(.+?) and (.+?)(?: in (?:19|20)\d\d)?\s*\??$"),
        ("sum", r"(?:do|does) (.+?) and (.+?) add up to"),
        ("sum", r"(?:combined|total) [\w ()%]*?(?:of|for) (.+?) and (.+?)(?: in (?:19|20)\d\d)?\s*\??$"),
        ("avg", r"(?:average|mean) [\w ()%]*?of (.+?) and (.+?)(?: in (?:19|20)\d\d)?\s*\??$"),
        ("avg", r"average of (.+?) and (.+?)(?: in (?:19|20)\d\d)?\s*\??$"),
    )
    for k, pat in patterns:
        m = re.search(pat, q, re.IGNORECASE)
        if m:
            kind, two = k, [m.group(1), m.group(2)]
            break
    if (
        kind == "sum"
        and task == "table"
        and len(years) == 2
        and two
        and all(re.fullmatch(r"(?:19|20)\d\d", _strip(t)) for t in two)
    ):
        pass  # "sum of <item> in 2010 and 2008": the years are the targets, the item is context
    if kind is None and info.intent in ("diff", "sum", "avg") and len(info.targets) == 2:
        kind, two = info.intent, list(info.targets)
    if kind is not None and two is not None:
        return with_context(kind, two, "number")
    across = (
        re.search(r"\b(?:total|sum|average|mean)\b.*\b(?:for|of) (.+?) (?:across|over) (?:all|the)\b", q, re.I)
        or re.search(r"\b(?:average|mean) (.+?) (?:across|over) (?:all|the)\b", q, re.I)
        or re.search(r"values for (.+?) add up to over all", q, re.I)
    )
    if across:
        kind = "avg" if re.search(r"\b(average|mean)\b", low) else "sum"
        return with_context(kind, [across.group(1)], "number", across=True)
    if info.intent == "compare" and len(info.targets) == 2:
        return with_context("compare", list(info.targets), "category")
    if info.intent in ("max", "min"):
        return with_context("extreme", [], info.answer_type, order=info.intent, rank=1)
    return with_context("lookup", [], info.answer_type)


#: Operation names in words, by intent kind.
OPERATION_WORDS = _OPS

__all__ = ["COUNT_TESTS", "OPERATION_WORDS", "Intent", "parse_intent"]
