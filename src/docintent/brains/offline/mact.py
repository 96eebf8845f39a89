"""The offline reader's four MACT roles: plans from the question's intent, execution through the reader's
primitives, judgment by independent checks, and the answer from the corrected process.

- **Planning** (:func:`make_plans`): the question is parsed into an intent (look-up, compare, difference,
  sum, average, count with a condition, extreme / k-th highest, claim check) with its targets, and up to ``Np``
  plans are written for it. Alternatives differ in structure, not in tools: per-target look-ups then
  arithmetic; the whole series (every label with its value) then arithmetic, counting or ranking over it;
  the single-pass reading as a one-step plan.
- **Execution** (:func:`execute_step`): each step picks its tool by what the page is and what the step asks:
  the chart-value reader (value labels, slice labels by angle, bars measured on the axis), table
  reconstruction (``reconstruct_table``), the reader's layout look-ups, the calculator, or the single-pass
  reader. Candidate ``k`` reads the evidence differently (0: the page's OCR; 1: the evidence region zoomed and
  read again; 2: the second OCR engine, Tesseract, on the page), and the strategy keeps the most confident.
- **Judgment** (:func:`judge_plan`): checks that do not repeat the execution: the answer has the type the
  intent asks for; each referenced label exists on the page; a value read from a label agrees with a re-read
  of its zoomed crop by the second OCR engine; the arithmetic recomputed from the inputs agrees.
- **Answer** (:func:`conclude`): the accepted plan's result formatted for the task; when every plan is still
  flagged, the most confident plan, preferring those whose flags were corrected.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np
from rapidfuzz import fuzz

from ...layout.lines import Item, Layout
from ...ocr import get_engine
from ...ocr.base import OcrResult
from ...page import Box, Page
from ...tools.calculator import CalculatorError, calculate
from ..base import Answer, State
from ..roles import Correction, Execution, Plan, PlanStep, Verdict
from .question import analyse, content_words
from .values import find_numbers, format_number

if TYPE_CHECKING:  # pragma: no cover
    from . import OfflineReader

# -- the question's intent ------------------------------------------------------------------------------

_OPS = {"diff": "difference", "sum": "sum", "avg": "average"}
_OP_WORDS = set(
    """difference differ differs between gap much more higher lower less than sum combined total add up
    average mean across all years shown change changed many value values have has does rank ranks second highest
    largest most lowest smallest fewest above below over under which what how whose""".split()
)
_COUNT_TESTS = {
    "above": lambda v, b: v > b, "over": lambda v, b: v > b, "more than": lambda v, b: v > b,
    "greater than": lambda v, b: v > b, "higher than": lambda v, b: v > b, "at least": lambda v, b: v >= b,
    "below": lambda v, b: v < b, "under": lambda v, b: v < b, "less than": lambda v, b: v < b,
    "lower than": lambda v, b: v < b, "fewer than": lambda v, b: v < b, "at most": lambda v, b: v <= b,
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
    context: list[str] = field(default_factory=list)
    condition: tuple[str, float] | None = None
    order: str = "max"
    rank: int = 1
    across: bool = False
    series: str | None = None  # grouped charts: the legend entry ("2017") the question restricts to


def _strip(t: str) -> str:
    return re.sub(r"^(the|a|an)\s+", "", t.strip(" ?.,'\"")).strip()


def parse_intent(question: str, task: str) -> Intent:
    """The question's intent and its targets (see :class:`Intent`)."""
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
        return Intent(kind, answer_type, [_strip(t) for t in targets], ctx, series=series, **kw)

    rank = re.search(r"\b(second|third|2nd|3rd)[- ](highest|largest|most|biggest|greatest|lowest|smallest|least|fewest)\b|\branks? (second|third)\b", low)
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
    by_year = re.search(r"\b(sum|total|combined|average|mean|difference)\b (?:of )?(.+?) (?:in|for|between) ((?:19|20)\d\d) and ((?:19|20)\d\d)\s*\??$", q, re.I)
    if by_year and task == "table":
        k = {"sum": "sum", "total": "sum", "combined": "sum", "average": "avg", "mean": "avg"}.get(by_year.group(1).lower(), "diff")
        return Intent(k, "number", [by_year.group(3), by_year.group(4)], content_words(by_year.group(2)), series=series)
    patterns = (
        ("diff", r"difference (?:in [\w ()%]+? )?between (.+?) and (.+?)(?: in (?:19|20)\d\d)?\s*\??$"),
        ("diff", r"(?:does|did|do) (.+?) differ from (.+?)(?: in (?:19|20)\d\d)?\s*\??$"),
        ("diff", r"gap between (?:the values of )?(.+?) and (.+?)(?: in (?:19|20)\d\d)?\s*\??$"),
        ("diff", r"how much (?:more|higher|greater|larger|less|lower|smaller) is (.+?) than (.+?)(?: in (?:19|20)\d\d)?\s*\??$"),
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
    if kind == "sum" and task == "table" and len(years) == 2 and two and all(re.fullmatch(r"(?:19|20)\d\d", _strip(t)) for t in two):
        pass  # "sum of <item> in 2010 and 2008": the years are the targets, the item is context
    if kind is None and info.intent in ("diff", "sum", "avg") and len(info.targets) == 2:
        kind, two = info.intent, list(info.targets)
    if kind is not None and two is not None:
        return with_context(kind, two, "number")
    across = re.search(r"\b(?:total|sum|average|mean)\b.*\b(?:for|of) (.+?) (?:across|over) (?:all|the)\b", q, re.I) or re.search(
        r"\b(?:average|mean) (.+?) (?:across|over) (?:all|the)\b", q, re.I
    ) or re.search(r"values for (.+?) add up to over all", q, re.I)
    if across:
        kind = "avg" if re.search(r"\b(average|mean)\b", low) else "sum"
        return with_context(kind, [across.group(1)], "number", across=True)
    if info.intent == "compare" and len(info.targets) == 2:
        return with_context("compare", list(info.targets), "category")
    if info.intent in ("max", "min"):
        return with_context("extreme", [], info.answer_type, order=info.intent, rank=1)
    return with_context("lookup", [], info.answer_type)


# -- planning -------------------------------------------------------------------------------------------


def make_plans(question: str, task: str, count: int, feedback: Verdict | None = None, tried: int = 0) -> list[Plan]:
    """Up to ``count`` plans for the question, best first. ``tried``: plans already used (a re-plan after a
    plan mistake starts from the next alternative)."""
    intent = parse_intent(question, task)
    alternatives = _alternatives(intent)
    why = f"; re-planned because: {feedback.mistake}" if feedback is not None else ""
    out = []
    for k, (steps, rationale) in enumerate(alternatives[tried : tried + count]):
        out.append(Plan(f"p{tried + k + 1}", intent.kind, tuple(steps), rationale + why))
    if not out:  # every alternative used: fall back to the single reading
        out.append(Plan(f"p{tried + 1}", intent.kind, (_read_step(intent),), f"no alternative left{why}"))
    return out


def _read_step(intent: Intent) -> PlanStep:
    return PlanStep("s1", "read the answer to the question directly from the page", intent.answer_type, op="read")


def _alternatives(intent: Intent) -> list[tuple[list[PlanStep], str]]:
    k = intent.kind
    read = ([_read_step(intent)], "one reading of the answer where the question's words point")
    if k == "lookup":
        return [read]
    if k in ("diff", "sum", "avg") and intent.across:
        target = intent.targets[0]
        return [
            ([PlanStep("s1", f"read every value of {target}", "series", op="series", args={"target": target}),
              PlanStep("s2", f"{_OPS[k]} of those values", "number", ("s1",), op="compute", args={"operation": k, "all": True})],
             f"the {_OPS[k]} runs over every value of one row or category"),
            read,
        ]
    if k in ("diff", "sum", "avg"):
        a, b = intent.targets
        lookups = [
            PlanStep("s1", f"read the value of {a}", "number", op="lookup", args={"target": a}),
            PlanStep("s2", f"read the value of {b}", "number", op="lookup", args={"target": b}),
            PlanStep("s3", f"{_OPS[k]} of the two values", "number", ("s1", "s2"), op="compute", args={"operation": k}),
        ]
        series = [
            PlanStep("s1", "read every label with its value", "series", op="series"),
            PlanStep("s2", f"{_OPS[k]} of {a} and {b} in that series", "number", ("s1",), op="compute",
                     args={"operation": k, "select": [a, b]}),
        ]
        return [(lookups, f"two look-ups ({a}, {b}), then the {_OPS[k]}"),
                (series, f"the whole series, then the {_OPS[k]} of {a} and {b} in it"), read]
    if k == "count":
        word, bound = intent.condition or ("above", 0.0)
        return [
            ([PlanStep("s1", "read every label with its value", "series", op="series"),
              PlanStep("s2", f"count the values {word} {format_number(bound)}", "count", ("s1",), op="count",
                       args={"condition": [word, bound]})],
             "the whole series, then count the values that meet the condition"),
            read,
        ]
    if k == "extreme":
        which = {1: "", 2: "second ", 3: "third "}.get(intent.rank, f"#{intent.rank} ")
        word = "highest" if intent.order == "max" else "lowest"
        steps = [PlanStep("s1", "read every label with its value", "series", op="series"),
                 PlanStep("s2", f"the label with the {which}{word} value", intent.answer_type, ("s1",), op="rank",
                          args={"order": intent.order, "rank": intent.rank})]
        plans = [(steps, f"the whole series, then the {which}{word}")]
        return plans + [read] if intent.rank == 1 else plans + [(steps, "the whole series read again")]
    if k == "compare":
        a, b = intent.targets
        return [
            ([PlanStep("s1", f"read the value of {a}", "number", op="lookup", args={"target": a}),
              PlanStep("s2", f"read the value of {b}", "number", op="lookup", args={"target": b}),
              PlanStep("s3", "name the one the question asks for", "category", ("s1", "s2"), op="compute",
                       args={"operation": "compare"})],
             f"two look-ups ({a}, {b}), then the comparison"),
            read,
        ]
    return [read]


# -- reading the page's structure ---------------------------------------------------------------------


@dataclass
class Point:
    """One label of a chart or table with its value and where both are on the page."""

    label: str
    value: float
    box: Box
    how: str


def _ocr_for(reader: OfflineReader, state: State, page: Page, candidate: int, region: Box | None) -> tuple[OcrResult, str]:
    """The OCR a candidate reads from: 0 the page (cached), 1 the region zoomed, 2 Tesseract on the page."""
    if candidate == 1 and region is not None and region != Box.FULL:
        return reader.engine.read(page, region.expand(0.03, 0.03), min_side=900), "zoomed region"
    if candidate >= 2:
        try:
            return get_engine("tesseract").read(page), "tesseract"
        except ImportError:
            pass
    return reader.read(state, page).ocr, "page"


def chart_points(layout: Layout, page: Page, series: str | None = None, across: str | None = None,
                 zoom: Any = None) -> list[Point]:
    """Every category of a chart with its value (value labels, slice labels by angle, bars on the axis).

    Grouped bars (a legend of years): ``series`` picks the legend entry whose bars are read; ``across``
    names one category, and its value in every series is returned instead (labelled by the series name).
    """
    from .chart import _bar_end, _by_angle, _categories, _numeric, _pie_center, _value_label_for, find_axis

    numeric = [it for it in layout.items if _numeric(it) is not None]
    y_axis = find_axis(numeric, vertical=True)
    axis = y_axis or find_axis(numeric, vertical=False)
    vertical = axis is None or axis.vertical
    ticks = {t.index for t in axis.ticks} if axis else set()
    cats, _ = _categories(layout, axis, ticks)
    cat_ids = {c.index for c in cats}
    bottom = max((c.box.y0 for c in cats), default=1.0)
    legend = sorted((it for it in layout.items if re.fullmatch(r"(?:19|20)\d\d", it.text.strip()) and it.index not in ticks
                     and it.index not in cat_ids and it.cy < bottom), key=lambda i: (i.cy, i.cx))
    legend_ids = {it.index for it in legend}
    labels = [it for it in numeric if it.index not in ticks and it.index not in cat_ids and it.index not in legend_ids]
    if axis is not None and vertical and len(legend) >= 2 and len(cats) >= 2:
        return _grouped_points(page, axis, cats, labels, [it.text.strip() for it in legend], series, across)
    pie = _pie_center(page) if axis is None else None
    out = []
    for cat in cats:
        v, how, box = None, "", cat.box
        if pie is not None:
            lab = _by_angle(cat, cats, labels, pie)
            if lab is not None:
                v, how, box = find_numbers(lab.text)[0].value, "slice label", lab.box
            elif zoom is not None:
                v, box = _zoom_slice(cat, pie, zoom)
                how = "slice label read on a zoomed crop"
        if v is None and axis is not None:
            lab = _value_label_for(cat, labels, vertical)
            if lab is not None and find_numbers(lab.text):
                v, how, box = find_numbers(lab.text)[0].value, "value label", lab.box
        if v is None:
            nums = find_numbers(cat.text)
            if nums and re.search(r"[A-Za-z]", cat.text):
                v, how = nums[-1].value, "label text"
        if v is None and axis is not None:
            m = _bar_end(page, cat, axis, vertical)
            if m is not None:
                v, how = axis.snap(m), "bar measured on the axis"
        if v is not None:
            label = re.sub(r"\s*[-\d.,%]+%?\s*$", "", cat.text).strip() if how == "label text" else cat.text.strip()
            out.append(Point(label, float(v), box, how))
        else:  # the label is there, its value did not read: kept so the judge can ask for a closer look
            out.append(Point(cat.text.strip(), float("nan"), cat.box, "unread"))
    return out


def _zoom_slice(cat: Item, center: tuple[float, float], zoom: Any) -> tuple[float | None, Box]:
    """A slice's percentage read from a crop around where it is printed: autopct labels sit at 0.6 of the
    radius and the names at 1.1, along the same direction from the centre."""
    cx, cy = center
    dx, dy = cat.cx - cx, cat.cy - cy
    px, py = cx + dx * 0.6 / 1.1, cy + dy * 0.6 / 1.1
    box = Box.clamped(px - 0.06, py - 0.05, px + 0.06, py + 0.05)
    result = zoom(box)
    found = [(abs(line.box.center[0] - px) + abs(line.box.center[1] - py), n.value, line.box)
             for line in result.lines for n in find_numbers(line.text) if 0 <= n.value <= 100]
    if found:
        _, value, where = min(found, key=lambda f: f[0])
        return value, where
    return None, box


def _grouped_points(page: Page, axis: Any, cats: list[Item], labels: list[Item], names: list[str],
                    series: str | None, across: str | None) -> list[Point]:
    """Grouped bars: series ``k`` of a category sits at offset (k - (S-1)/2) * 0.8/S category spacings."""
    from .chart import _bar_end

    cats = sorted(cats, key=lambda c: c.cx)
    spacing = float(np.median(np.diff([c.cx for c in cats]))) if len(cats) > 1 else 0.2
    n = len(names)
    width = 0.8 * spacing / n

    def value(cat: Item, k: int) -> tuple[float | None, str, Box]:
        x = cat.cx + (k - (n - 1) / 2) * width
        lane = [l for l in labels if abs(l.cx - x) < 0.5 * width and find_numbers(l.text)]
        if lane:
            lab = min(lane, key=lambda l: abs(l.cx - x))
            return find_numbers(lab.text)[0].value, f"value label of {names[k]}", lab.box
        probe = Item(cat.text, Box.clamped(x - 0.3 * width, cat.box.y0, x + 0.3 * width, cat.box.y1), cat.confidence, cat.index)
        m = _bar_end(page, probe, axis, True)
        return (axis.snap(m), f"bar of {names[k]} measured on the axis", probe.box) if m is not None else (None, "", probe.box)

    out = []
    if across is not None:
        cat = max(cats, key=lambda c: fuzz.ratio(across.lower(), c.text.lower()))
        for k, name in enumerate(names):
            v, how, box = value(cat, k)
            if v is not None:
                out.append(Point(name, float(v), box, how))
        return out
    k = names.index(series) if series in names else n - 1
    for cat in cats:
        v, how, box = value(cat, k)
        if v is not None:
            out.append(Point(cat.text.strip(), float(v), box, how))
    return out


def _tokens(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9%]+", text.lower()) if w not in ("the", "of", "in", "a")}


def _context_score(name: str, context: list[str]) -> float:
    toks = _tokens(name)
    if not toks or not context:
        return 0.0
    hits = sum(max((fuzz.ratio(c, t) for t in toks), default=0) >= 85 for c in context)
    return hits / max(len(toks), 1)


def _header_and_body(table: Any) -> tuple[list[str], list[tuple[str, list[Any]]]]:
    """Column names and body rows of a reconstructed table, judged from its cells: the body starts at the
    first row holding a figure (a number that is not a year); header lines are the rows above it with at
    least two cells (a one-cell row is the title)."""
    from ...layout.table import _is_figure

    grid_rows = table.rows
    n = table.n_cols
    start = next((r for r, row in enumerate(grid_rows) if any(_is_figure(c.text) for c in row[1:] if c.text)), len(grid_rows))
    names = [""] * n
    for row in grid_rows[:start]:
        if sum(1 for c in row if c.text) < 2:
            continue
        for c in row:
            for k in range(c.col, c.col + c.colspan):
                if c.text and k < n:
                    names[k] = f"{names[k]} {c.text}".strip()
    body = []
    for row in grid_rows[start:]:
        label = next((c.text for c in row if c.text and not _is_figure(c.text)), "")
        cells = [table.cell(row[0].row, k) for k in range(n)]
        body.append((label, cells))
    return names, body


def table_points(ocr: OcrResult, page: Page, intent: Intent, target: str | None = None) -> list[Point]:
    """A table rebuilt from the OCR words, read as one series: the column the question names (every row's
    label with its value), or for ``across`` questions / year targets the row named by ``target`` or the
    context (every column's header with the row's value)."""
    from ...layout.table import reconstruct_table

    table = reconstruct_table(ocr, page_size=(page.width, page.height))
    if not table.rows:
        return []
    names, body = _header_and_body(table)
    if not body:
        return []
    labels = [label for label, _ in body]
    years = [t for t in intent.targets if re.fullmatch(r"(?:19|20)\d\d", t)]
    by_row = intent.across or (years and len(years) == len(intent.targets))
    if by_row:
        key = (target if intent.across and target else " ".join(w for w in intent.context if not re.fullmatch(r"(?:19|20)\d\d", w))).lower()
        best = max(range(len(labels)), key=lambda i: fuzz.token_set_ratio(key, labels[i].lower()))
        if fuzz.token_set_ratio(key, labels[best].lower()) < 60:
            return []
        out = []
        for k, cell in enumerate(body[best][1]):
            if cell is not None and cell.value is not None and names[k] and cell.text != labels[best]:
                out.append(Point(names[k], float(cell.value), cell.box, "table row"))
        return out
    numeric_cols = [k for k in range(len(names)) if sum(1 for _, cells in body if cells[k] is not None and cells[k].value is not None) >= max(2, len(body) // 2)]
    if not numeric_cols:
        return []
    scores = [_context_score(n, intent.context) for n in names]
    col = max(numeric_cols, key=lambda k: (scores[k], -k))
    if intent.kind == "extreme" and scores[col] == 0 and years:
        return []
    out = []
    for label, cells in body:
        cell = cells[col]
        if cell is not None and cell.value is not None and label and not re.fullmatch(r"\s*(sub-?total|total|grand total)\s*:?\s*", label, re.I):
            out.append(Point(label, float(cell.value), cell.box, f"table column {names[col] or col}"))
    return out


def _match(target: str, points: list[Point]) -> tuple[Point | None, float]:
    """The point whose label best matches ``target`` (fuzzy), with the match score in [0, 1]."""
    if not points:
        return None, 0.0
    scored = [(max(fuzz.ratio(target.lower(), p.label.lower()), fuzz.token_set_ratio(target.lower(), p.label.lower()) - 5) / 100.0, p) for p in points]
    score, best = max(scored, key=lambda s: s[0])
    return best, score


# -- execution ---------------------------------------------------------------------------------------------

#: Ways a step can read its evidence: the page's OCR, the region zoomed, the second OCR engine.
CANDIDATES = 3

#: Series read per (page, question, candidate): the same reading serves every plan and correction.
_POINTS: dict[tuple, tuple[list[Point], str, Box]] = {}


def _points(reader: OfflineReader, state: State, intent: Intent, candidate: int, target: str | None = None) -> tuple[list[Point], str, Box]:
    page = state.page
    base = reader.read(state, page)
    region = base.region if state.task != "chart" else Box.FULL
    key = (page.hash, state.question, state.task, candidate, target if intent.across else None)
    if key in _POINTS:
        return _POINTS[key]
    if candidate == 1 and state.task != "chart":
        region = _structure_region(reader, state, intent)
    # charts: the page's own reading, with the labels that did not read zoomed one by one (candidates >= 1)
    ocr, source = _ocr_for(reader, state, page, candidate if state.task != "chart" else 0, region)
    if state.task == "chart" and candidate >= 1:
        source = "zoomed labels" if candidate == 1 else "zoomed labels, second OCR engine"
    layout = Layout.from_ocr(ocr)
    if state.task == "chart":
        zoom = None
        if candidate >= 1:
            engine = reader.engine if candidate == 1 else _second_engine(reader)
            zoom = lambda box: _safe_read(engine, page, box, 160) or OcrResult((), "none", page.hash)  # noqa: E731
        pts = chart_points(layout, page, intent.series, target if intent.across else None, zoom)
        tool = "chart_reader"
    else:
        pts = table_points(ocr, page, intent, target)
        tool = "table_reconstruction"
        if not pts:
            pts = _layout_points(layout, intent)
            tool = "layout_reader"
    result = (pts, f"{tool} ({source})", layout.region_of([]) if not pts else _union([p.box for p in pts]))
    if len(_POINTS) > 256:
        _POINTS.clear()
    _POINTS[key] = result
    return result


def _safe_read(engine: Any, page: Page, box: Box, min_side: int) -> OcrResult | None:
    """``engine`` on a crop; None when it cannot read it (Tesseract raises on some empty crops)."""
    try:
        return engine.read(page, box, min_side=min_side)
    except (ImportError, RuntimeError):
        return None


def _second_engine(reader: OfflineReader) -> Any:
    try:
        import tesserocr  # noqa: F401  (the second engine is optional)

        return get_engine("tesseract", psm=6)
    except ImportError:
        return reader.engine


def _structure_region(reader: OfflineReader, state: State, intent: Intent) -> Box:
    pts, _, region = _points(reader, state, intent, 0)
    return region if pts else Box.FULL


def _union(boxes: list[Box]) -> Box:
    box = boxes[0]
    for b in boxes[1:]:
        box = box.union(b)
    return box.expand(0.02, 0.02)


def _layout_points(layout: Layout, intent: Intent) -> list[Point]:
    """Without a reconstructed table: the numeric column under the header the question names."""
    from .extract import Matcher, column_values, row_label
    from .question import QuestionInfo

    info = QuestionInfo(" ".join(intent.context), "number", "lookup", list(intent.context))
    found = column_values(info, layout, Matcher(info, layout))
    if found is None:
        return []
    out = []
    for cell, value in found[1]:
        label = row_label(layout, cell)
        if label is not None and label is not cell:
            out.append(Point(label.text, value, cell.box, "layout column"))
    return out


def execute_step(reader: OfflineReader, state: State, plan: Plan, step: PlanStep, results: dict[str, Execution],
                 candidate: int = 0, feedback: Verdict | None = None) -> Execution:
    """Execute one plan step with candidate reading ``candidate`` (see the module docstring)."""
    intent = parse_intent(state.question, state.task)
    if step.op == "read":
        return _execute_read(reader, state, step, candidate)
    if step.op in ("series", "lookup"):
        target = step.args.get("target")
        pts, tool, region = _points(reader, state, intent, candidate, target)
        unread = [p.label for p in pts if p.how == "unread"]
        pts = [p for p in pts if p.how != "unread"] if step.op == "series" else pts
        if step.op == "series":
            conf = min(0.9, 0.3 + 0.1 * len(pts)) if len(pts) >= 2 else 0.1
            conf *= 0.7 if unread else 1.0
            return Execution(step.id, tool, "; ".join(f"{p.label}: {format_number(p.value)}" for p in pts),
                             [[p.label, p.value] for p in pts], conf, {"region": list(region.as_tuple(4)), "unread": unread or None},
                             f"{len(pts)} labelled values" + (f"; no value read for {', '.join(unread)}" if unread else ""), candidate)
        point, score = _match(str(target), pts)
        if point is not None and point.how == "unread" and score >= 0.5:
            return Execution(step.id, tool, "", None, 0.0, {"target": target, "match": score, "unread": [point.label]},
                             f"{point.label}: the label is there, its value did not read", candidate)
        if point is None or score < 0.5:
            # the series reader did not find it: the reader's layout look-up of the target
            from .answer import _lookup_value

            info = analyse(state.question, state.task)
            info.targets = list(intent.targets)
            ocr, source = _ocr_for(reader, state, state.page, candidate, None if candidate != 1 else _structure_region(reader, state, intent))
            layout = Layout.from_ocr(ocr)
            cand = _lookup_value(str(target), info, state.task, layout, state.page)
            if cand is not None and find_numbers(cand.text):
                value = find_numbers(cand.text)[0].value
                box = layout.region_of(cand.items, margin=0.3)
                return Execution(step.id, f"layout_reader ({source})", format_number(value), value, min(cand.score, 0.8) * 0.8,
                                 {"target": target, "box": list(box.as_tuple(4)), "label": cand.text, "match": 0.5},
                                 f"{target} -> {cand.text}", candidate)
            return Execution(step.id, tool, "", None, 0.0, {"target": target, "match": score,
                             "labels": [p.label for p in pts][:12]}, f"{target!r} not found", candidate)
        return Execution(step.id, tool, format_number(point.value), point.value, round(0.35 + 0.6 * score if point.how != "bar measured on the axis" else 0.3 + 0.4 * score, 3),
                         {"target": target, "box": list(point.box.as_tuple(4)), "label": point.label, "match": round(score, 3), "how": point.how},
                         f"{target} -> {point.label} ({point.how})", candidate)
    if step.op == "compute":
        return _execute_compute(step, results, state)
    if step.op == "count":
        src = results.get(step.inputs[0]) if step.inputs else None
        pairs = src.value if src is not None and isinstance(src.value, list) else []
        word, bound = step.args.get("condition", ["above", 0.0])
        test = _COUNT_TESTS.get(word, _COUNT_TESTS["above"])
        n = sum(1 for _, v in pairs if test(v, float(bound)))
        conf = (src.confidence if src else 0.0) * (1.0 if pairs else 0.0)
        return Execution(step.id, "calculator", str(n), n, conf, {"condition": [word, bound], "of": len(pairs)},
                         f"{n} of {len(pairs)} values {word} {format_number(float(bound))}", candidate)
    if step.op == "rank":
        src = results.get(step.inputs[0]) if step.inputs else None
        pairs = src.value if src is not None and isinstance(src.value, list) else []
        rank = int(step.args.get("rank", 1))
        order = step.args.get("order", "max")
        ordered = sorted(pairs, key=lambda p: p[1], reverse=order == "max")
        if len(ordered) < rank:
            return Execution(step.id, "calculator", "", None, 0.0, {"rank": rank}, f"only {len(ordered)} values", candidate)
        label, value = ordered[rank - 1]
        text = label if step.expected in ("category", "name", "text") else format_number(value)
        return Execution(step.id, "calculator", text, label, src.confidence if src else 0.0,
                         {"rank": rank, "order": order, "value": value}, f"#{rank} by {order}: {label} ({format_number(value)})", candidate)
    return _execute_read(reader, state, step, candidate)


def _execute_read(reader: OfflineReader, state: State, step: PlanStep, candidate: int) -> Execution:
    from .answer import solve

    base = reader.read(state, state.page)
    if candidate == 0:
        return Execution(step.id, "reader", base.answer, base.answer, base.confidence,
                         {"region": list(base.region.as_tuple(4))}, f"read by {base.source}", candidate)
    ocr, source = _ocr_for(reader, state, state.page, candidate, base.region)
    layout = Layout.from_ocr(ocr)
    sol = solve(reader._info(state), state.task, layout, state.page)
    return Execution(step.id, f"reader ({source})", sol.text, sol.text, sol.confidence,
                     {"region": list(sol.region.as_tuple(4))}, f"read by {sol.source}", candidate)


def _execute_compute(step: PlanStep, results: dict[str, Execution], state: State) -> Execution:
    op = step.args.get("operation")
    inputs = [results[i] for i in step.inputs if i in results]
    conf = min((r.confidence for r in inputs), default=0.0)
    if step.args.get("all") or step.args.get("select"):
        pairs = inputs[0].value if inputs and isinstance(inputs[0].value, list) else []
        if step.args.get("select"):
            picked = []
            for target in step.args["select"]:
                pts = [Point(lbl, v, Box.FULL, "") for lbl, v in pairs]
                p, score = _match(str(target), pts)
                if p is None or score < 0.5:
                    return Execution(step.id, "calculator", "", None, 0.0, {"missing": target}, f"{target!r} not in the series")
                picked.append(p.value)
                conf = min(conf, 0.35 + 0.6 * score)
            values = picked
        else:
            values = [v for _, v in pairs]
    else:
        values = [r.value for r in inputs]
    if len(values) < (1 if step.args.get("all") else 2) or any(not isinstance(v, (int, float)) for v in values):
        return Execution(step.id, "calculator", "", None, 0.0, {"operation": op}, "an input value is missing")
    if op == "compare":
        less = re.search(r"\b(less|lower|smaller|fewer|least|below|under|cheaper|worse)\b", state.question, re.I)
        pick = int(np.argmin(values) if less else np.argmax(values))
        label = str(inputs[pick].args.get("target", ""))
        return Execution(step.id, "calculator", label, label, conf, {"operation": op, "values": values}, f"{values} -> {label}")
    nums = ", ".join(format_number(float(v)) for v in values)
    expr = {"diff": f"abs({' - '.join(format_number(float(v)) for v in values[:2])})", "sum": f"sum({nums})",
            "avg": f"avg({nums})"}.get(str(op), f"sum({nums})")
    try:
        value = calculate(expr.replace("- -", "+ "))
    except CalculatorError as err:
        return Execution(step.id, "calculator", "", None, 0.0, {"expression": expr}, str(err))
    return Execution(step.id, "calculator", format_number(round(value, 6)), value, conf,
                     {"expression": expr, "operation": op}, f"{expr} = {format_number(round(value, 6))}")


# -- judgment ----------------------------------------------------------------------------------------------


def _reread(page: Page, box: Box) -> tuple[float | None, float]:
    """The number in ``box`` re-read by the second OCR engine on an enlarged crop: (value, confidence)."""
    try:
        engine = get_engine("tesseract", psm=7)
    except Exception:  # the second engine is optional
        return None, 0.0
    region = box.expand(0.012, 0.008)
    result = _safe_read(engine, page, region, 96)
    if result is None:
        return None, 0.0
    text = " ".join(line.text for line in result.lines)
    nums = find_numbers(text)
    if len(nums) != 1:
        return None, 0.0
    conf = float(np.mean([line.confidence for line in result.lines])) if result.lines else 0.0
    return nums[0].value, conf


def judge_plan(reader: OfflineReader, state: State, plan: Plan, results: dict[str, Execution]) -> Verdict:
    """Independent checks of a plan and its executions (see the module docstring); the first failure is
    the verdict."""
    checks: list[str] = []
    intent = parse_intent(state.question, state.task)
    final = results.get(plan.steps[-1].id) if plan.steps else None
    # 1. every referenced label exists, every series has values
    for step in plan.steps:
        ex = results.get(step.id)
        if ex is None:
            return Verdict.flag_execution(step.id, "the step produced nothing", tuple(checks))
        if step.op == "lookup":
            match = float(ex.args.get("match", 0.0))
            if ex.args.get("unread") and ex.candidate < 2:
                return Verdict.flag_execution(step.id, f"the label {ex.args['unread'][0]!r} is on the page but its value did not read; read it closer", tuple(checks))
            if ex.value is None or match < 0.5:
                labels = ", ".join(ex.args.get("labels", [])[:8])
                if ex.candidate == 0:
                    return Verdict.flag_execution(step.id, f"{step.args.get('target')!r} was not found on the first reading (labels: {labels})", tuple(checks))
                return Verdict.flag_plan(f"{step.args.get('target')!r} is not among the labels read ({labels}); the target does not exist as written",
                                         tuple(checks))
            checks.append(f"{step.id}: label {ex.args.get('label')!r} matches {step.args.get('target')!r} ({match:.2f})")
        if step.op == "series":
            n = len(ex.value or [])
            if n < 2:
                return Verdict.flag_execution(step.id, f"the series has {n} value(s); a chart or table holds at least 2", tuple(checks))
            if ex.args.get("unread") and ex.candidate < 2:
                return Verdict.flag_execution(step.id, f"no value read for {', '.join(ex.args['unread'])}; read those labels closer", tuple(checks))
            checks.append(f"{step.id}: {n} labelled values")
        if step.op == "compute" and ex.value is None and ex.args.get("missing") and step.inputs:
            src = results.get(step.inputs[0])
            if src is not None and src.candidate < 2:
                return Verdict.flag_execution(step.inputs[0], f"{ex.args['missing']!r} is not in the series read; read the labels again", tuple(checks))
            return Verdict.flag_plan(f"{ex.args['missing']!r} is not among the labels read; the target does not exist as written", tuple(checks))
    # a chart value that reads like a year among values that do not is a category or legend label read as a value
    if state.task == "chart":
        for step in plan.steps:
            ex = results[step.id]
            values = [v for _, v in ex.value] if isinstance(ex.value, list) else [ex.value] if step.op == "lookup" else []
            years = [v for v in values if isinstance(v, (int, float)) and float(v).is_integer() and 1900 <= v <= 2100]
            others = [p for p in plan.steps if p.op in ("lookup", "series") and p.id != step.id]
            if years and (len(years) < len(values) or any(isinstance(results[o.id].value, (int, float)) and not 1900 <= results[o.id].value <= 2100 for o in others if o.op == "lookup")):
                if ex.candidate < CANDIDATES - 1:
                    return Verdict.flag_execution(step.id, f"{format_number(years[0])} reads like a year label, not a value", tuple(checks))
    # 2. a value read from a label agrees with a re-read by the second engine on its zoomed crop
    for step in plan.steps:
        ex = results[step.id]
        if step.op == "lookup" and "box" in ex.args and isinstance(ex.value, (int, float)) and ex.args.get("how") != "bar measured on the axis":
            value, conf = _reread(state.page, Box(*ex.args["box"]))
            if value is None:
                checks.append(f"{step.id}: re-read inconclusive")
                continue
            if abs(value - float(ex.value)) > 1e-6 * max(1.0, abs(value)) and conf >= 0.8 and abs(abs(value) - abs(float(ex.value))) > 1e-6:
                return Verdict.flag_execution(step.id, f"the value of {step.args.get('target')!r} was read as {format_number(float(ex.value))}, "
                                              f"a zoomed re-read with the second OCR engine gives {format_number(value)}", tuple(checks))
            checks.append(f"{step.id}: re-read agrees ({format_number(value) if value is not None else '-'})")
    # 3. arithmetic recomputed from the inputs
    for step in plan.steps:
        ex = results[step.id]
        if step.op == "compute" and ex.args.get("expression"):
            try:
                again = calculate(str(ex.args["expression"]).replace("- -", "+ "))
            except CalculatorError as err:
                return Verdict.flag_execution(step.id, f"the arithmetic does not compute: {err}", tuple(checks))
            if not isinstance(ex.value, (int, float)) or abs(again - float(ex.value)) > 1e-6 * max(1.0, abs(again)):
                return Verdict.flag_execution(step.id, f"{ex.args['expression']} is {format_number(again)}, not {ex.output}", tuple(checks))
            checks.append(f"{step.id}: {ex.args['expression']} = {format_number(again)} recomputed")
    # 4. the answer has the type the intent asks for
    if final is None or not final.output.strip():
        target_step = plan.steps[-1].id if plan.steps else None
        if len(plan.steps) == 1:
            return Verdict.flag_plan("the reading found no answer; a plan over the page's structure is needed", tuple(checks))
        return Verdict.flag_execution(target_step or "s1", "the last step gave no answer", tuple(checks))
    problem = _type_problem(intent, plan, final, results)
    if problem:
        if len(plan.steps) == 1:
            return Verdict.flag_plan(problem, tuple(checks))
        return Verdict.flag_execution(plan.steps[-1].id, problem, tuple(checks))
    checks.append(f"answer {final.output!r} has the type a {intent.kind} question asks for")
    return Verdict.ok(tuple(checks))


def _type_problem(intent: Intent, plan: Plan, final: Execution, results: dict[str, Execution]) -> str | None:
    text = final.output.strip()
    if intent.kind in ("diff", "sum", "avg"):
        if not find_numbers(text):
            return f"a {_OPS[intent.kind]} is a number, the answer {text!r} is not"
        if intent.kind == "diff" and find_numbers(text)[0].value < 0:
            return "a difference asked as 'by how much' is not negative"
    if intent.kind == "count":
        if not re.fullmatch(r"\d+", text):
            return f"a count is a whole number, the answer {text!r} is not"
        series = next((r for r in results.values() if isinstance(r.value, list)), None)
        if series is not None and int(text) > len(series.value):
            return f"the count {text} exceeds the {len(series.value)} values read"
    if intent.kind in ("extreme", "compare") and intent.answer_type == "category":
        if find_numbers(text) and not re.search(r"[A-Za-z]", text) and not re.fullmatch(r"(?:19|20)\d\d", text):
            return f"the question asks which one, the answer {text!r} is a number"
    return None


# -- the answer ---------------------------------------------------------------------------------------------


def conclude(state: State, runs: list[tuple[Plan, dict[str, Execution], Verdict]], corrections: list[Correction]) -> Answer:
    """The answer from the corrected process: the first accepted plan's result (formatted for the task);
    with none accepted, the most confident final output."""
    from .answer import format_answer

    info = analyse(state.question, state.task)
    intent = parse_intent(state.question, state.task)
    scored = []
    for plan, results, verdict in runs:
        final = results.get(plan.steps[-1].id) if plan.steps else None
        if final is None or not final.output:
            continue
        scored.append((verdict.accept, final.confidence, plan, final))
    if not scored:
        return Answer("", 0.0, "no plan produced an answer")
    accepted = [s for s in scored if s[0]]
    pick = accepted[0] if accepted else max(scored, key=lambda s: s[1])
    _, conf, plan, final = pick
    text = final.output
    value = final.value if isinstance(final.value, (int, float)) else None
    if intent.kind in ("diff", "sum", "avg", "count") and value is not None:
        text = format_number(round(float(value), 2))
    elif plan.steps[-1].op != "read":
        text = format_answer(text, info, state.task, value)
    fixes = "; ".join(f"{c.verdict.target} mistake ({c.verdict.mistake}) -> {c.after!r}" for c in corrections)
    why = f"plan {plan.id} ({'accepted' if pick[0] else 'no plan accepted; most confident'})" + (f"; corrections: {fixes}" if fixes else "")
    return Answer(text, conf if pick[0] else conf * 0.8, why)


__all__ = ["Intent", "chart_points", "conclude", "execute_step", "judge_plan", "make_plans", "parse_intent", "table_points"]
