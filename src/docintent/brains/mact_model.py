"""The model brain's four MACT roles: one prompt per role, one request per role call, only that role's tools.

- **plan**: the ``mact_plan`` prompt, the question and the page; one function, ``submit_plans``.
- **execute**: the ``mact_execute`` prompt, the step (goal, expected output, earlier results, the judge's
  mistake when it is a re-execution) and the page; the tools ``zoom``, ``read_table``, ``chart_values``,
  ``calculator`` run here and their output goes back to the model, which ends with ``record`` (its result and
  its confidence, the score that picks the best of ``Ne`` candidates). At most three exchanges per step.
- **judge**: the ``mact_judge`` prompt, the plan and its results and the page; ``accept``, ``flag_plan``,
  ``flag_execution``.
- **answer**: the ``mact_answer`` prompt with the task's answer rules, the process and the corrections; a JSON
  ``{"answer": ...}`` reply, read with the same fallbacks as the baseline answer.

Every exchange is the brain's ``exchange``: an unusable reply (no call, an unknown function, bad arguments)
gets the same corrective turn as Phase A, once; tokens are summed into each role's result.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, Protocol

from ..errors import DocIntentError
from ..layout.lines import Layout
from ..layout.table import reconstruct_table
from ..ocr import get_engine
from ..page import Page
from ..reader import chart_points
from ..tools import get_tool
from ..tools.calculator import CalculatorError, calculate
from ..tools.zoom import Zoom
from .base import State
from .decisions import Answer, Usage
from .endpoint import Reply
from .prompts import render, task_noun, task_rules
from .roles import Correction, Execution, Plan, PlanStep, Verdict
from .toolcalls import ParsedCall, parse_json_object


class ModelChat(Protocol):
    """What the MACT roles need of the model brain: one validated exchange, plain chat, images, text tools."""

    def exchange(
        self,
        state: State,
        messages: list[dict[str, Any]],
        functions: list[dict[str, Any]],
        validate: Callable[[ParsedCall | None, Reply], tuple[ParsedCall | None, str | None]],
        phase: str | None = None,
    ) -> tuple[ParsedCall | None, list[Reply], Usage, str | None]: ...

    def chat(
        self,
        messages: list[dict[str, Any]],
        functions: list[dict[str, Any]] | None = None,
        *,
        max_tokens: int | None = None,
        phase: str | None = None,
    ) -> Reply: ...

    def image_part(self, page: Page, max_side: int | None = None, question: str | None = None) -> dict[str, Any]: ...

    def with_text_tools(self, text: str, functions: list[dict[str, Any]]) -> str: ...


CONFIDENCE = {"low": 0.3, "medium": 0.6, "high": 0.9}


def _fn(
    name: str, description: str, properties: dict[str, Any] | None = None, required: tuple[str, ...] = ()
) -> dict[str, Any]:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties or {}, "required": list(required)},
        },
    }


SUBMIT_PLANS = _fn(
    "submit_plans",
    "Submit the plans.",
    {
        "plans": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {
                    "steps": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {
                                "goal": {"type": "string"},
                                "expected": {"type": "string"},
                                "inputs": {"type": "array", "items": {"type": "string"}},
                            },
                            "required": ["goal"],
                        },
                    }
                },
                "required": ["steps"],
            },
        }
    },
    ("plans",),
)
RECORD = _fn(
    "record",
    "Report the step's result.",
    {
        "output": {"type": "string", "description": "The result, written as the step expects."},
        "confidence": {"type": "string", "enum": ["low", "medium", "high"]},
    },
    ("output", "confidence"),
)
CALCULATOR = _fn(
    "calculator",
    "Safe arithmetic: + - * / ( ) and sum, avg, min, max, abs, round.",
    {"expression": {"type": "string", "description": 'e.g. "27 - 24" or "avg(12, 15.5)"'}},
    ("expression",),
)
READ_TABLE = _fn("read_table", "The table on the page rebuilt from its text, as Markdown.")
CHART_VALUES = _fn("chart_values", "Every label of the chart with its value, one per line.")
ACCEPT = _fn("accept", "Every check holds: the plan answers the question and every result is right.")
FLAG_PLAN = _fn(
    "flag_plan",
    "The plan is wrong (a missing value, the wrong operation, a label that does not exist).",
    {"mistake": {"type": "string"}},
    ("mistake",),
)
FLAG_EXECUTION = _fn(
    "flag_execution",
    "One step's result is wrong (a misread value, wrong arithmetic).",
    {"step_id": {"type": "string"}, "mistake": {"type": "string"}},
    ("step_id", "mistake"),
)


def _family(state: State) -> str:
    return task_noun(state.task)


def _text_part(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text}


def _process_text(plan: Plan, results: dict[str, Execution]) -> str:
    lines = [f"Plan {plan.id} ({plan.intent}):"]
    for s in plan.steps:
        ex = results.get(s.id)
        got = (
            f" -> {ex.output!r} (tool {ex.tool}, confidence {ex.confidence:.1f})" if ex is not None else " -> (not run)"
        )
        inputs = f" [inputs: {', '.join(s.inputs)}]" if s.inputs else ""
        lines.append(f"- {s.id}: {s.goal} (expected: {s.expected}){inputs}{got}")
    return "\n".join(lines)


# -- planning ------------------------------------------------------------------------------------------------


def plan(
    brain: ModelChat, state: State, count: int, feedback: Verdict | None = None, previous: tuple[Plan, ...] = ()
) -> list[Plan]:
    """Ask for ``count`` plans (one request); a plan mistake comes back as ``feedback``."""
    note = (
        f"\nA judge found a mistake in an earlier plan: {feedback.mistake}\nWrite a plan that avoids it.\n"
        if feedback
        else ""
    )
    system = render("mact_plan", family=_family(state), count=count, feedback=note)
    functions = [SUBMIT_PLANS]
    text = brain.with_text_tools(f"Question: {state.question}", functions)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {"role": "user", "content": [_text_part(text), brain.image_part(state.page, question=state.question)]},
    ]

    def validate(call: ParsedCall | None, reply: Reply) -> tuple[ParsedCall | None, str | None]:
        if call is None:
            obj = parse_json_object(reply.text)
            if obj is not None and isinstance(obj.get("plans"), list):
                call = ParsedCall("submit_plans", obj)
            else:
                return None, "the reply contains no function call"
        if call.error:
            return None, f"{call.name}: {call.error}"
        if call.name != "submit_plans":
            return None, f"{call.name!r} is not an offered function; offered: submit_plans"
        plans = (call.arguments or {}).get("plans")
        if (
            not isinstance(plans, list)
            or not plans
            or not all(isinstance(p, dict) and isinstance(p.get("steps"), list) and p["steps"] for p in plans)
        ):
            return None, "submit_plans needs 'plans': a non-empty list of objects, each with a non-empty 'steps' list"
        if not all(isinstance(s, dict) and str(s.get("goal", "")).strip() for p in plans for s in p["steps"]):
            return None, "every step needs a 'goal'"
        return call, None

    call, _, usage, problem = brain.exchange(state, messages, functions, validate, "plan")
    start = len(previous)
    if call is None:
        step = PlanStep("s1", "answer the question from the page", "text")
        return [
            Plan(
                f"p{start + 1}",
                "lookup",
                (step,),
                rationale=f"one-step plan after an unusable reply ({problem})",
                usage=usage,
            )
        ]
    out = []
    for k, raw in enumerate((call.arguments or {})["plans"][: max(count, 1)]):
        steps = tuple(
            PlanStep(
                f"s{i + 1}",
                str(s["goal"]).strip(),
                str(s.get("expected") or "text"),
                inputs=tuple(str(x) for x in s.get("inputs") or ()),
                op="model",
            )
            for i, s in enumerate(raw["steps"])
        )
        out.append(
            Plan(
                f"p{start + k + 1}",
                str(raw.get("intent") or "model"),
                steps,
                rationale=str(raw.get("rationale") or ""),
                usage=usage if k == 0 else Usage(),
            )
        )
    return out


# -- execution -----------------------------------------------------------------------------------------------


def _run_tool(brain: ModelChat, state: State, call: ParsedCall) -> tuple[str, Any]:
    """Run an execution tool here; (text for the model, an image page to show or None)."""
    name, args = call.name, call.arguments or {}
    try:
        if name == "calculator":
            return _num(calculate(str(args.get("expression", "")))), None
        if name == "zoom":
            zoom = get_tool("zoom")
            assert isinstance(zoom, Zoom)
            evidence = zoom.inspect(state.page, **zoom.check_args(args))
            return getattr(evidence, "summary", lambda: "zoomed")(), getattr(evidence, "crop", None)
        if name in ("read_table", "chart_values"):
            ocr = get_engine().read(state.page)
            if name == "read_table":
                return reconstruct_table(
                    ocr, page_size=(state.page.width, state.page.height)
                ).to_markdown() or "(no table found)", None
            pts = chart_points(Layout.from_ocr(ocr), state.page)
            return "\n".join(
                f"{p.label}: {_num(p.value)}" for p in pts if p.how != "unread"
            ) or "(no labelled values found)", None
    except (CalculatorError, DocIntentError, ValueError, TypeError) as err:
        return f"error: {err}", None
    return f"error: unknown tool {name!r}", None


def _num(v: float) -> str:
    return str(int(v)) if float(v).is_integer() else f"{v:.6g}"


def execute(
    brain: ModelChat,
    state: State,
    plan: Plan,
    step: PlanStep,
    results: dict[str, Execution],
    candidate: int = 0,
    feedback: Verdict | None = None,
) -> Execution:
    """One execution of ``step``: tools run here, the model ends with ``record`` (at most three exchanges)."""
    functions = [RECORD, get_tool("zoom").spec(), READ_TABLE, CHART_VALUES, CALCULATOR]
    names = {f["function"]["name"] for f in functions}
    earlier = "\n".join(f"- {k}: {v.output}" for k, v in results.items()) or "(none)"
    lines = [
        f"Question: {state.question}",
        _process_text(plan, {}),
        f"Earlier results:\n{earlier}",
        f"Your step: {step.id}: {step.goal} (expected: {step.expected})",
    ]
    if feedback is not None and feedback.mistake:
        lines.append(f"A judge flagged the previous result of this step: {feedback.mistake}")
    if candidate:
        lines.append(f"This is attempt {candidate + 1}: read the evidence independently of earlier attempts.")
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": render("mact_execute", family=_family(state))},
        {
            "role": "user",
            "content": [
                _text_part(brain.with_text_tools("\n\n".join(lines), functions)),
                brain.image_part(state.page, question=state.question),
            ],
        },
    ]

    def validate(call: ParsedCall | None, reply: Reply) -> tuple[ParsedCall | None, str | None]:
        if call is None:
            obj = parse_json_object(reply.text)
            if obj is not None and "output" in obj:
                return ParsedCall("record", obj), None
            return None, "the reply contains no function call"
        if call.error:
            return None, f"{call.name}: {call.error}"
        if call.name not in names:
            return None, f"{call.name!r} is not an offered function; offered: {', '.join(sorted(names))}"
        args = call.arguments or {}
        if call.name == "record" and not isinstance(args.get("output"), (str, int, float)):
            return None, "record needs an 'output' argument"
        if call.name == "calculator" and not str(args.get("expression", "")).strip():
            return None, "calculator needs an 'expression' argument"
        return call, None

    usage = Usage()
    last_tool, last_output = "model", ""
    for _ in range(3):
        call, message, used, problem = brain.exchange(state, messages, functions, validate, "execute")
        usage = usage + used
        if call is None:
            return Execution(
                step.id,
                last_tool,
                last_output,
                value=_value(last_output),
                confidence=0.2,
                args={},
                evidence=f"no usable reply ({problem})",
                candidate=candidate,
                usage=usage,
            )
        if call.name == "record":
            args = call.arguments or {}
            output = str(args["output"]).strip()
            conf = CONFIDENCE.get(str(args.get("confidence", "medium")).lower(), 0.5)
            return Execution(
                step.id,
                last_tool,
                output,
                value=_value(output),
                confidence=conf,
                args={},
                evidence="recorded by the model",
                candidate=candidate,
                usage=usage,
            )
        text, image = _run_tool(brain, state, call)
        last_tool, last_output = call.name, text
        content: list[dict[str, Any]] = [_text_part(f"{call.name} output:\n{text}")]
        if image is not None:
            content.append(brain.image_part(image, question=state.question))
        if call.native:
            messages.append({"role": "tool", "tool_call_id": call.call_id, "content": f"{call.name} output:\n{text}"})
            if image is not None:
                messages.append({"role": "user", "content": content})
        else:
            messages.append({"role": "user", "content": content})
    return Execution(
        step.id,
        last_tool,
        last_output,
        value=_value(last_output),
        confidence=0.3,
        args={},
        evidence="no record after three exchanges",
        candidate=candidate,
        usage=usage,
    )


def _value(text: str) -> Any:
    m = re.fullmatch(r"\s*\$?\s*(-?[\d,]*\.?\d+)\s*%?\s*", text or "")
    if m:
        try:
            return float(m.group(1).replace(",", ""))
        except ValueError:
            return text
    return text


# -- judgment ------------------------------------------------------------------------------------------------


def judge(brain: ModelChat, state: State, plan: Plan, results: dict[str, Execution]) -> Verdict:
    """Accept, or flag a plan or execution mistake (one request; only the three verdict functions)."""
    functions = [ACCEPT, FLAG_PLAN, FLAG_EXECUTION]
    text = brain.with_text_tools(f"Question: {state.question}\n\n{_process_text(plan, results)}", functions)
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": render("mact_judge", family=_family(state))},
        {"role": "user", "content": [_text_part(text), brain.image_part(state.page, question=state.question)]},
    ]
    ids = {s.id for s in plan.steps}

    def validate(call: ParsedCall | None, reply: Reply) -> tuple[ParsedCall | None, str | None]:
        if call is None:
            return None, "the reply contains no function call"
        if call.error:
            return None, f"{call.name}: {call.error}"
        if call.name not in ("accept", "flag_plan", "flag_execution"):
            return None, f"{call.name!r} is not an offered function; offered: accept, flag_plan, flag_execution"
        if call.name == "flag_execution" and str((call.arguments or {}).get("step_id")) not in ids:
            return None, f"flag_execution needs a step_id of this plan: {', '.join(sorted(ids))}"
        return call, None

    call, _, usage, problem = brain.exchange(state, messages, functions, validate, "judge")
    if call is None:
        # An unusable judgment does not hold the answer back: the process stands as it is.
        return Verdict(True, None, None, mistake="", checks=(f"no usable verdict ({problem})",), usage=usage)
    if call.name == "accept":
        return Verdict.ok(("accepted by the model",), usage)
    args = call.arguments or {}
    mistake = str(args.get("mistake") or "no description")
    if call.name == "flag_plan":
        return Verdict.flag_plan(mistake, (), usage)
    return Verdict.flag_execution(str(args["step_id"]), mistake, (), usage)


# -- the answer ----------------------------------------------------------------------------------------------


def conclude(
    brain: ModelChat,
    state: State,
    runs: list[tuple[Plan, dict[str, Execution], Verdict]],
    corrections: list[Correction],
) -> Answer:
    """The final answer from the process and the mistake -> correction pairs (one request, no tools)."""
    parts = [f"Question: {state.question}"]
    for plan_, results, verdict in runs:
        state_word = "accepted by the judge" if verdict.accept else f"still flagged: {verdict.mistake}"
        parts.append(f"{_process_text(plan_, results)}\n({state_word})")
    if corrections:
        parts.append(
            "Corrections:\n"
            + "\n".join(
                f"- {c.verdict.target} mistake: {c.verdict.mistake}; result {c.before!r} -> {c.after!r}"
                for c in corrections
            )
        )
    system = render("mact_answer", family=_family(state), rules=task_rules(state.task))
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": system},
        {
            "role": "user",
            "content": [_text_part("\n\n".join(parts)), brain.image_part(state.page, question=state.question)],
        },
    ]
    reply = brain.chat(messages, phase="conclude")
    usage = reply.usage
    content = reply.text
    obj = parse_json_object(content)
    if obj is None:
        calls = reply.calls
        if calls and calls[0].arguments and "answer" in calls[0].arguments:
            obj = calls[0].arguments
    if obj is not None and "answer" in obj:
        return Answer(
            str(obj["answer"]).strip(),
            CONFIDENCE.get(str(obj.get("confidence", "")).lower(), 0.5),
            "answer role",
            usage=usage,
        )
    text = content.strip().splitlines()[-1].strip() if content.strip() else ""
    if not text:
        best = next((r for r in runs if r[2].accept), runs[0] if runs else None)
        if best is not None and best[0].steps and best[0].steps[-1].id in best[1]:
            return Answer(
                best[1][best[0].steps[-1].id].output, 0.3, "empty answer reply: the last result stands", usage=usage
            )
        return Answer("", 0.0, "the model returned an empty reply", usage=usage)
    return Answer(text, 0.3, "answer read from a reply without the requested JSON", usage=usage)


__all__ = ["conclude", "execute", "judge", "plan"]
