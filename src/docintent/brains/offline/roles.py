"""The offline reader's four MACT roles: plans from the question's intent, execution through the reader's
primitives, judgment by independent checks, and the answer from the corrected process.

- **Planning** (:func:`make_plans`): the question's intent (``Question.intent``, from its one analysis) with its
  targets, and up to ``Np`` plans written for it. Alternatives differ in structure, not in tools: per-target
  look-ups then arithmetic; the whole series (every label with its value) then arithmetic, counting or ranking
  over it; the single-pass reading as a one-step plan.
- **Execution** (:func:`execute_step`): each step picks its tool by what the page is and what the step asks:
  the chart-value reader (value labels, slice labels by angle, bars measured on the axis), table
  reconstruction, the reader's layout look-ups, the calculator, or the single-pass reader. Candidate ``k``
  reads the evidence differently (0: the page's OCR; 1: the evidence region zoomed and read again; 2: the second
  OCR engine, Tesseract, on the page), and the strategy keeps the most confident.
- **Judgment** (:func:`judge_plan`): checks that do not repeat the execution: the answer has the type the
  intent asks for; each referenced label exists on the page; a value read from a label agrees with a re-read
  of its zoomed crop by the second OCR engine; the arithmetic recomputed from the inputs agrees.
- **Answer** (:func:`conclude`): the accepted plan's result formatted for the task; when every plan is still
  flagged, the most confident plan, preferring those whose flags were corrected.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import numpy as np

from ...layout.lines import Layout
from ...ocr import get_engine
from ...ocr.base import OcrResult
from ...page import Box, Page
from ...reader.answer import format_answer, lookup_value, solve
from ...reader.intent import COUNT_TESTS, OPERATION_WORDS, Intent, parse_intent
from ...reader.points import Point, chart_points, layout_points, match_point, table_points
from ...reader.query import Question, understand
from ...reader.reading import QuestionReader
from ...reader.values import find_numbers, format_number
from ...tools.calculator import CalculatorError, calculate
from ..base import State
from ..decisions import Answer
from ..roles import Correction, Execution, Plan, PlanStep, Verdict

_OPS = OPERATION_WORDS


def intent_of(query: Question) -> Intent:
    """The intent the question's one analysis found (parsed from that analysis for a record built by hand)."""
    return query.intent if query.intent is not None else parse_intent(query.text, query.task, query.info)


def make_plans(
    question: str | Question, task: str, count: int, feedback: Verdict | None = None, tried: int = 0
) -> list[Plan]:
    """Up to ``count`` plans for the question (its analysis, or its text to analyse), best first. ``tried``: plans
    already used (a re-plan after a plan mistake starts from the next alternative)."""
    intent = intent_of(question if isinstance(question, Question) else understand(question, task))
    alternatives = _alternatives(intent)
    why = f"; re-planned because: {feedback.mistake}" if feedback is not None else ""
    out = []
    for k, (steps, rationale) in enumerate(alternatives[tried : tried + count]):
        out.append(Plan(f"p{tried + k + 1}", intent.kind, tuple(steps), rationale=rationale + why))
    if not out:  # every alternative used: fall back to the single reading
        out.append(Plan(f"p{tried + 1}", intent.kind, (_read_step(intent),), rationale=f"no alternative left{why}"))
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
            (
                [
                    PlanStep("s1", f"read every value of {target}", "series", op="series", args={"target": target}),
                    PlanStep(
                        "s2",
                        f"{_OPS[k]} of those values",
                        "number",
                        inputs=("s1",),
                        op="compute",
                        args={"operation": k, "all": True},
                    ),
                ],
                f"the {_OPS[k]} runs over every value of one row or category",
            ),
            read,
        ]
    if k in ("diff", "sum", "avg"):
        a, b = intent.targets
        lookups = [
            PlanStep("s1", f"read the value of {a}", "number", op="lookup", args={"target": a}),
            PlanStep("s2", f"read the value of {b}", "number", op="lookup", args={"target": b}),
            PlanStep(
                "s3", f"{_OPS[k]} of the two values", "number", inputs=("s1", "s2"), op="compute", args={"operation": k}
            ),
        ]
        series = [
            PlanStep("s1", "read every label with its value", "series", op="series"),
            PlanStep(
                "s2",
                f"{_OPS[k]} of {a} and {b} in that series",
                "number",
                inputs=("s1",),
                op="compute",
                args={"operation": k, "select": [a, b]},
            ),
        ]
        return [
            (lookups, f"two look-ups ({a}, {b}), then the {_OPS[k]}"),
            (series, f"the whole series, then the {_OPS[k]} of {a} and {b} in it"),
            read,
        ]
    if k == "count":
        word, bound = intent.condition or ("above", 0.0)
        return [
            (
                [
                    PlanStep("s1", "read every label with its value", "series", op="series"),
                    PlanStep(
                        "s2",
                        f"count the values {word} {format_number(bound)}",
                        "count",
                        inputs=("s1",),
                        op="count",
                        args={"condition": [word, bound]},
                    ),
                ],
                "the whole series, then count the values that meet the condition",
            ),
            read,
        ]
    if k == "extreme":
        which = {1: "", 2: "second ", 3: "third "}.get(intent.rank, f"#{intent.rank} ")
        word = "highest" if intent.order == "max" else "lowest"
        steps = [
            PlanStep("s1", "read every label with its value", "series", op="series"),
            PlanStep(
                "s2",
                f"the label with the {which}{word} value",
                intent.answer_type,
                inputs=("s1",),
                op="rank",
                args={"order": intent.order, "rank": intent.rank},
            ),
        ]
        plans = [(steps, f"the whole series, then the {which}{word}")]
        return plans + [read] if intent.rank == 1 else plans + [(steps, "the whole series read again")]
    if k == "compare":
        a, b = intent.targets
        return [
            (
                [
                    PlanStep("s1", f"read the value of {a}", "number", op="lookup", args={"target": a}),
                    PlanStep("s2", f"read the value of {b}", "number", op="lookup", args={"target": b}),
                    PlanStep(
                        "s3",
                        "name the one the question asks for",
                        "category",
                        inputs=("s1", "s2"),
                        op="compute",
                        args={"operation": "compare"},
                    ),
                ],
                f"two look-ups ({a}, {b}), then the comparison",
            ),
            read,
        ]
    return [read]


# -- reading the page's structure ---------------------------------------------------------------------


def _ocr_for(
    reader: QuestionReader, state: State, page: Page, candidate: int, region: Box | None
) -> tuple[OcrResult, str]:
    """The OCR a candidate reads from: 0 the page (cached), 1 the region zoomed, 2 Tesseract on the page."""
    if candidate == 1 and region is not None and region != Box.FULL:
        return reader.session.read_with(reader.engine, page, region.expand(0.03, 0.03), min_side=900), "zoomed region"
    if candidate >= 2:
        try:
            return reader.session.read_with(get_engine("tesseract"), page, None), "tesseract"
        except ImportError:
            pass
    return reader.read(page).ocr, "page"


#: Ways a step can read its evidence: the page's OCR, the region zoomed, the second OCR engine.
CANDIDATES = 3


def _points(
    reader: QuestionReader, state: State, intent: Intent, candidate: int, target: str | None = None
) -> tuple[list[Point], str, Box]:
    page = state.page
    base = reader.read(page)
    region = base.region if state.task != "chart" else Box.FULL
    key = (page.hash, state.question, state.task, candidate, target if intent.across else None)
    if key in reader.derived:
        return reader.derived[key]  # type: ignore[return-value]  # stored below with this type
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
            zoom = lambda box: _safe_read(reader, engine, page, box, 160) or OcrResult((), "none", page.hash)  # noqa: E731
        pts = chart_points(layout, page, intent.series, target if intent.across else None, zoom)
        tool = "chart_reader"
    else:
        pts = table_points(ocr, page, intent, target)
        tool = "table_reconstruction"
        if not pts:
            pts = layout_points(layout, intent)
            tool = "layout_reader"
    result = (pts, f"{tool} ({source})", layout.region_of([]) if not pts else _union([p.box for p in pts]))
    # Series read per (page, question, candidate): the same reading serves every plan and correction.
    reader.derived[key] = result
    return result


def _safe_read(reader: QuestionReader, engine: Any, page: Page, box: Box, min_side: int) -> OcrResult | None:
    """``engine`` on a crop (counted in the question's reading work); None when it cannot read it (Tesseract
    raises on some empty crops)."""
    try:
        return reader.session.read_with(engine, page, box, min_side=min_side)
    except (ImportError, RuntimeError):
        return None


def _second_engine(reader: QuestionReader) -> Any:
    try:
        import tesserocr  # noqa: F401  (the second engine is optional)

        return get_engine("tesseract", psm=6)
    except ImportError:
        return reader.engine


def _structure_region(reader: QuestionReader, state: State, intent: Intent) -> Box:
    pts, _, region = _points(reader, state, intent, 0)
    return region if pts else Box.FULL


def _union(boxes: list[Box]) -> Box:
    box = boxes[0]
    for b in boxes[1:]:
        box = box.union(b)
    return box.expand(0.02, 0.02)


def execute_step(
    reader: QuestionReader,
    state: State,
    plan: Plan,
    step: PlanStep,
    results: dict[str, Execution],
    candidate: int = 0,
    feedback: Verdict | None = None,
) -> Execution:
    """Execute one plan step with candidate reading ``candidate`` (see the module docstring)."""
    intent = intent_of(reader.query)
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
            return Execution(
                step.id,
                tool,
                "; ".join(f"{p.label}: {format_number(p.value)}" for p in pts),
                value=[[p.label, p.value] for p in pts],
                confidence=conf,
                args={"region": list(region.as_tuple(4)), "unread": unread or None},
                evidence=f"{len(pts)} labelled values" + (f"; no value read for {', '.join(unread)}" if unread else ""),
                candidate=candidate,
            )
        point, score = match_point(str(target), pts)
        if point is not None and point.how == "unread" and score >= 0.5:
            return Execution(
                step.id,
                tool,
                "",
                value=None,
                confidence=0.0,
                args={"target": target, "match": score, "unread": [point.label]},
                evidence=f"{point.label}: the label is there, its value did not read",
                candidate=candidate,
            )
        if point is None or score < 0.5:
            # the series reader did not find it: the reader's layout look-up of the target

            info = copy.deepcopy(reader.query.info)  # the look-up gets its own targets; the analysis stays as it is
            info.targets = list(intent.targets)
            ocr, source = _ocr_for(
                reader,
                state,
                state.page,
                candidate,
                None if candidate != 1 else _structure_region(reader, state, intent),
            )
            layout = Layout.from_ocr(ocr)
            cand = lookup_value(str(target), info, state.task, layout, state.page)
            if cand is not None and find_numbers(cand.text):
                value = find_numbers(cand.text)[0].value
                box = layout.region_of(cand.items, margin=0.3)
                return Execution(
                    step.id,
                    f"layout_reader ({source})",
                    format_number(value),
                    value=value,
                    confidence=min(cand.score, 0.8) * 0.8,
                    args={"target": target, "box": list(box.as_tuple(4)), "label": cand.text, "match": 0.5},
                    evidence=f"{target} -> {cand.text}",
                    candidate=candidate,
                )
            return Execution(
                step.id,
                tool,
                "",
                value=None,
                confidence=0.0,
                args={"target": target, "match": score, "labels": [p.label for p in pts][:12]},
                evidence=f"{target!r} not found",
                candidate=candidate,
            )
        return Execution(
            step.id,
            tool,
            format_number(point.value),
            value=point.value,
            confidence=round(0.35 + 0.6 * score if point.how != "bar measured on the axis" else 0.3 + 0.4 * score, 3),
            args={
                "target": target,
                "box": list(point.box.as_tuple(4)),
                "label": point.label,
                "match": round(score, 3),
                "how": point.how,
            },
            evidence=f"{target} -> {point.label} ({point.how})",
            candidate=candidate,
        )
    if step.op == "compute":
        return _execute_compute(step, results, state)
    if step.op == "count":
        src = results.get(step.inputs[0]) if step.inputs else None
        pairs = src.value if src is not None and isinstance(src.value, list) else []
        word, bound = step.args.get("condition", ["above", 0.0])
        test = COUNT_TESTS.get(word, COUNT_TESTS["above"])
        n = sum(1 for _, v in pairs if test(v, float(bound)))
        conf = (src.confidence if src else 0.0) * (1.0 if pairs else 0.0)
        return Execution(
            step.id,
            "calculator",
            str(n),
            value=n,
            confidence=conf,
            args={"condition": [word, bound], "of": len(pairs)},
            evidence=f"{n} of {len(pairs)} values {word} {format_number(float(bound))}",
            candidate=candidate,
        )
    if step.op == "rank":
        src = results.get(step.inputs[0]) if step.inputs else None
        pairs = src.value if src is not None and isinstance(src.value, list) else []
        rank = int(step.args.get("rank", 1))
        order = step.args.get("order", "max")
        ordered = sorted(pairs, key=lambda p: p[1], reverse=order == "max")
        if len(ordered) < rank:
            return Execution(
                step.id,
                "calculator",
                "",
                value=None,
                confidence=0.0,
                args={"rank": rank},
                evidence=f"only {len(ordered)} values",
                candidate=candidate,
            )
        label, value = ordered[rank - 1]
        text = label if step.expected in ("category", "name", "text") else format_number(value)
        return Execution(
            step.id,
            "calculator",
            text,
            value=label,
            confidence=src.confidence if src else 0.0,
            args={"rank": rank, "order": order, "value": value},
            evidence=f"#{rank} by {order}: {label} ({format_number(value)})",
            candidate=candidate,
        )
    return _execute_read(reader, state, step, candidate)


def _execute_read(reader: QuestionReader, state: State, step: PlanStep, candidate: int) -> Execution:

    base = reader.read(state.page)
    if candidate == 0:
        return Execution(
            step.id,
            "reader",
            base.answer,
            value=base.answer,
            confidence=base.confidence,
            args={"region": list(base.region.as_tuple(4))},
            evidence=f"read by {base.source}",
            candidate=candidate,
        )
    ocr, source = _ocr_for(reader, state, state.page, candidate, base.region)
    layout = Layout.from_ocr(ocr)
    sol = solve(reader.info, state.task, layout, state.page)
    return Execution(
        step.id,
        f"reader ({source})",
        sol.text,
        value=sol.text,
        confidence=sol.confidence,
        args={"region": list(sol.region.as_tuple(4))},
        evidence=f"read by {sol.source}",
        candidate=candidate,
    )


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
                p, score = match_point(str(target), pts)
                if p is None or score < 0.5:
                    return Execution(
                        step.id,
                        "calculator",
                        "",
                        value=None,
                        confidence=0.0,
                        args={"missing": target},
                        evidence=f"{target!r} not in the series",
                    )
                picked.append(p.value)
                conf = min(conf, 0.35 + 0.6 * score)
            values = picked
        else:
            values = [v for _, v in pairs]
    else:
        values = [r.value for r in inputs]
    if len(values) < (1 if step.args.get("all") else 2) or any(not isinstance(v, (int, float)) for v in values):
        return Execution(
            step.id,
            "calculator",
            "",
            value=None,
            confidence=0.0,
            args={"operation": op},
            evidence="an input value is missing",
        )
    if op == "compare":
        less = re.search(r"\b(less|lower|smaller|fewer|least|below|under|cheaper|worse)\b", state.question, re.I)
        pick = int(np.argmin(values) if less else np.argmax(values))
        label = str(inputs[pick].args.get("target", ""))
        return Execution(
            step.id,
            "calculator",
            label,
            value=label,
            confidence=conf,
            args={"operation": op, "values": values},
            evidence=f"{values} -> {label}",
        )
    nums = ", ".join(format_number(float(v)) for v in values)
    expr = {
        "diff": f"abs({' - '.join(format_number(float(v)) for v in values[:2])})",
        "sum": f"sum({nums})",
        "avg": f"avg({nums})",
    }.get(str(op), f"sum({nums})")
    try:
        value = calculate(expr.replace("- -", "+ "))
    except CalculatorError as err:
        return Execution(
            step.id, "calculator", "", value=None, confidence=0.0, args={"expression": expr}, evidence=str(err)
        )
    return Execution(
        step.id,
        "calculator",
        format_number(round(value, 6)),
        value=value,
        confidence=conf,
        args={"expression": expr, "operation": op},
        evidence=f"{expr} = {format_number(round(value, 6))}",
    )


# -- judgment ----------------------------------------------------------------------------------------------


def _reread(reader: QuestionReader, page: Page, box: Box) -> tuple[float | None, float]:
    """The number in ``box`` re-read by the second OCR engine on an enlarged crop: (value, confidence)."""
    try:
        engine = get_engine("tesseract", psm=7)
    except Exception:  # the second engine is optional
        return None, 0.0
    region = box.expand(0.012, 0.008)
    result = _safe_read(reader, engine, page, region, 96)
    if result is None:
        return None, 0.0
    text = " ".join(line.text for line in result.lines)
    nums = find_numbers(text)
    if len(nums) != 1:
        return None, 0.0
    conf = float(np.mean([line.confidence for line in result.lines])) if result.lines else 0.0
    return nums[0].value, conf


def judge_plan(reader: QuestionReader, state: State, plan: Plan, results: dict[str, Execution]) -> Verdict:
    """Independent checks of a plan and its executions (see the module docstring); the first failure is
    the verdict."""
    checks: list[str] = []
    intent = intent_of(reader.query)
    final = results.get(plan.steps[-1].id) if plan.steps else None
    # 1. every referenced label exists, every series has values
    for step in plan.steps:
        ex = results.get(step.id)
        if ex is None:
            return Verdict.flag_execution(step.id, "the step produced nothing", tuple(checks))
        if step.op == "lookup":
            match = float(ex.args.get("match", 0.0))
            if ex.args.get("unread") and ex.candidate < 2:
                return Verdict.flag_execution(
                    step.id,
                    f"the label {ex.args['unread'][0]!r} is on the page but its value did not read; read it closer",
                    tuple(checks),
                )
            if ex.value is None or match < 0.5:
                labels = ", ".join(ex.args.get("labels", [])[:8])
                if ex.candidate == 0:
                    return Verdict.flag_execution(
                        step.id,
                        f"{step.args.get('target')!r} was not found on the first reading (labels: {labels})",
                        tuple(checks),
                    )
                return Verdict.flag_plan(
                    f"{step.args.get('target')!r} is not among the labels read ({labels}); the target does not exist as written",
                    tuple(checks),
                )
            checks.append(
                f"{step.id}: label {ex.args.get('label')!r} matches {step.args.get('target')!r} ({match:.2f})"
            )
        if step.op == "series":
            n = len(ex.value or [])
            if n < 2:
                return Verdict.flag_execution(
                    step.id, f"the series has {n} value(s); a chart or table holds at least 2", tuple(checks)
                )
            if ex.args.get("unread") and ex.candidate < 2:
                return Verdict.flag_execution(
                    step.id,
                    f"no value read for {', '.join(ex.args['unread'])}; read those labels closer",
                    tuple(checks),
                )
            checks.append(f"{step.id}: {n} labelled values")
        if step.op == "compute" and ex.value is None and ex.args.get("missing") and step.inputs:
            src = results.get(step.inputs[0])
            if src is not None and src.candidate < 2:
                return Verdict.flag_execution(
                    step.inputs[0],
                    f"{ex.args['missing']!r} is not in the series read; read the labels again",
                    tuple(checks),
                )
            return Verdict.flag_plan(
                f"{ex.args['missing']!r} is not among the labels read; the target does not exist as written",
                tuple(checks),
            )
    # a chart value that reads like a year among values that do not is a category or legend label read as a value
    if state.task == "chart":
        for step in plan.steps:
            ex = results[step.id]
            values = (
                [v for _, v in ex.value] if isinstance(ex.value, list) else [ex.value] if step.op == "lookup" else []
            )
            years = [v for v in values if isinstance(v, (int, float)) and float(v).is_integer() and 1900 <= v <= 2100]
            others = [p for p in plan.steps if p.op in ("lookup", "series") and p.id != step.id]
            if years and (
                len(years) < len(values)
                or any(
                    isinstance(results[o.id].value, (int, float)) and not 1900 <= results[o.id].value <= 2100
                    for o in others
                    if o.op == "lookup"
                )
            ):
                if ex.candidate < CANDIDATES - 1:
                    return Verdict.flag_execution(
                        step.id, f"{format_number(years[0])} reads like a year label, not a value", tuple(checks)
                    )
    # 2. a value read from a label agrees with a re-read by the second engine on its zoomed crop
    for step in plan.steps:
        ex = results[step.id]
        if (
            step.op == "lookup"
            and "box" in ex.args
            and isinstance(ex.value, (int, float))
            and ex.args.get("how") != "bar measured on the axis"
        ):
            value, conf = _reread(reader, state.page, Box(*ex.args["box"]))
            if value is None:
                checks.append(f"{step.id}: re-read inconclusive")
                continue
            if (
                abs(value - float(ex.value)) > 1e-6 * max(1.0, abs(value))
                and conf >= 0.8
                and abs(abs(value) - abs(float(ex.value))) > 1e-6
            ):
                return Verdict.flag_execution(
                    step.id,
                    f"the value of {step.args.get('target')!r} was read as {format_number(float(ex.value))}, "
                    f"a zoomed re-read with the second OCR engine gives {format_number(value)}",
                    tuple(checks),
                )
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
                return Verdict.flag_execution(
                    step.id, f"{ex.args['expression']} is {format_number(again)}, not {ex.output}", tuple(checks)
                )
            checks.append(f"{step.id}: {ex.args['expression']} = {format_number(again)} recomputed")
    # 4. the answer has the type the intent asks for
    if final is None or not final.output.strip():
        target_step = plan.steps[-1].id if plan.steps else None
        if len(plan.steps) == 1:
            return Verdict.flag_plan(
                "the reading found no answer; a plan over the page's structure is needed", tuple(checks)
            )
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


def conclude(
    state: State,
    runs: list[tuple[Plan, dict[str, Execution], Verdict]],
    corrections: list[Correction],
    query: Question | None = None,
) -> Answer:
    """The answer from the corrected process: the first accepted plan's result (formatted for the task);
    with none accepted, the most confident final output. ``query``: the question's analysis (made here when
    None)."""
    query = query if query is not None else understand(state.question, state.task)
    info, intent = query.info, intent_of(query)
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
    why = f"plan {plan.id} ({'accepted' if pick[0] else 'no plan accepted; most confident'})" + (
        f"; corrections: {fixes}" if fixes else ""
    )
    return Answer(text, conf if pick[0] else conf * 0.8, why)


__all__ = [
    "Intent",
    "chart_points",
    "conclude",
    "execute_step",
    "intent_of",
    "judge_plan",
    "make_plans",
    "parse_intent",
    "table_points",
]
