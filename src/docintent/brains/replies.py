"""What the model brain reads out of a model's replies: whether a call is usable (the validators an exchange
asks, whose problem text goes back to the model in the corrective turn), and the decision, review verdict, answer
or diagnosis a reply gives, with the fallbacks for replies that ignore the requested form. Functions of the
replies only: the brain decides what an unusable reply costs (a forced answer, a rollback).
"""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from typing import Any

from ..errors import InvalidBoxError, ToolError
from ..page import Box
from ..perception.degradations import parse_degradation
from ..tools import get_tool
from .chat import Reply
from .decisions import Answer, Decision, Diagnosis, Keep, Review, Rollback, Usage, UseTool
from .toolcalls import ParsedCall, answer_from_prose, parse_json_object, strip_reasoning, verdict_from_text

log = logging.getLogger(__name__)

#: The ``confidence`` levels of the answer function, as numbers for :class:`Answer`.
CONFIDENCE = {"low": 0.3, "medium": 0.6, "high": 0.9}


# -- validators: a usable call, or the problem the corrective turn names -------------------------------


@dataclass
class DecisionCheck:
    """Validates a Phase A call: ``answer`` with an answer, or one of ``tools`` with arguments the tool accepts
    (a bare ``{"answer": ...}`` counts as an answer call). The optional ``region`` argument is taken off the
    tool's arguments and kept as ``region``, as the last call checked gave it."""

    tools: list[str]
    region: Any = None

    def __call__(self, call: ParsedCall | None, reply: Reply) -> tuple[ParsedCall | None, str | None]:
        if call is None:
            obj = parse_json_object(reply.text)
            if obj is not None and "answer" in obj:  # a bare {"answer": ...} is an answer call
                return ParsedCall("answer", obj), None
            return None, "the reply contains no function call"
        if call.error:
            return None, f"{call.name}: {call.error}"
        if call.name == "answer":
            value = (call.arguments or {}).get("answer")
            if not isinstance(value, (str, int, float)):
                return None, "answer needs an 'answer' argument holding the answer text"
            return call, None
        if call.name not in self.tools:
            offered = ", ".join(["answer"] + self.tools)
            return None, f"{call.name!r} is not an offered function; offered: {offered}"
        arguments = dict(call.arguments or {})
        self.region = arguments.pop("region", None)
        try:
            call.arguments = get_tool(call.name).check_args(arguments)
        except ToolError as err:
            return None, str(err)
        return call, None


def check_verdict(call: ParsedCall | None, reply: Reply) -> tuple[ParsedCall | None, str | None]:
    """Validates a Phase B call: ``continue`` or ``rollback`` (``keep`` and ``roll_back`` are renamed to them)."""
    if call is None:
        return None, "the reply contains no function call"
    if call.error:
        return None, f"{call.name}: {call.error}"
    name = {"keep": "continue", "roll_back": "rollback"}.get(call.name, call.name)
    if name not in ("continue", "rollback"):
        return None, f"{call.name!r} is not an offered function; offered: continue, rollback"
    call.name = name
    return call, None


# -- what a reply says ----------------------------------------------------------------------------------


def decision(call: ParsedCall, reply: Reply, usage: Usage) -> Decision:
    """The Phase A decision of a usable ``call`` in ``reply``: the answer, or the tool with its arguments (one
    tool runs per round: other calls in the reply are named in the reasoning)."""
    content = plain_text(reply.content)
    others = [c.name for c in reply.calls if c is not call]
    if others:  # one tool runs per round; the model sees the outcome and may call the next one then
        log.info("the model called %d functions at once; running %s only", len(others) + 1, call.name)
        content = f"{content} (also called {', '.join(others)}; one function runs per round)".strip()
    if call.name == "answer":
        args = call.arguments or {}
        confidence = CONFIDENCE.get(str(args.get("confidence", "medium")).strip().lower(), 0.5)
        reasoning = str(args.get("reasoning") or content)
        return Answer(str(args["answer"]).strip(), confidence, reasoning, usage=usage)
    return UseTool(call.name, content, dict(call.arguments or {}), usage=usage)


def verdict(call: ParsedCall | None, replies: list[Reply], usage: Usage, problem: str | None) -> Review:
    """The Phase B verdict of an exchange: its call, else the latest reply that states a verdict in words; an
    unchecked restoration is not kept."""
    content = plain_text(replies[-1].content)
    if call is None:
        # the latest reply that states a verdict in words (the corrective turn may only apologise)
        verdicts = [v for v in (verdict_from_text(r.text) for r in replies) if v is not None]
        said = verdicts[-1] if verdicts else None
        if said == "continue":
            return Keep(f"read from text after an unusable reply ({problem}): {content[:200]}", usage)
        # An unchecked restoration is not kept: the previous page is the one known to be no worse.
        return Rollback(f"no usable verdict ({problem})", usage)
    if call.name == "continue":
        return Keep(content, usage)
    return Rollback(str((call.arguments or {}).get("reason") or content or "the model rolled back"), usage)


def answer(reply: Reply, max_tokens: int) -> Answer:
    """The answer of a reply asked for JSON ``{"answer": ...}``: that object, an ``answer`` call's arguments, or
    the answer written in prose (confidence 0.3); an empty answer says why (``max_tokens``: the limit a cut
    reply reached)."""
    usage = reply.usage
    obj = parse_json_object(reply.text)
    if obj is None:
        call = reply.call_for(["answer"])
        if call is not None and call.arguments and "answer" in call.arguments:
            obj = call.arguments
    if obj is not None and "answer" in obj:
        confidence = CONFIDENCE.get(str(obj.get("confidence", "")).lower(), 0.5)
        return Answer(str(obj["answer"]).strip(), confidence, str(obj.get("reasoning", "")), usage=usage)
    text_answer = answer_from_prose(reply.text)
    if not text_answer:
        why = "the model returned an empty reply"
        if reply.truncated:
            why = (
                f"the reply was cut at max_tokens (finish_reason=length) before the answer; "
                f"raise max_tokens (now {max_tokens})"
            )
        return Answer("", 0.0, why, usage=usage)
    return Answer(text_answer, 0.3, "answer read from a reply without the requested JSON", usage=usage)


def diagnosis(reply: Reply) -> Diagnosis:
    """The degradations a reply lists (JSON ``{"degradations": [...], "rotation": ...}``, else the degradation
    words of its prose), with the rotation tool when orientation is among them."""
    content = reply.text
    obj = parse_json_object(content)
    if obj is not None and isinstance(obj.get("degradations"), list):
        names = [str(d) for d in obj["degradations"]]
        rotation = obj.get("rotation")
    else:  # prose: take the degradation words it mentions
        names = re.findall(r"[a-zA-Zé]+", content)
        rotation = content if any(parse_degradation(n) == "orientation" for n in names) else None
    found = []
    for raw in names:
        name = parse_degradation(raw)
        if name and name not in found:
            found.append(name)
    rotate = _rotation_name(rotation)
    if rotate and "orientation" not in found:
        found.insert(0, "orientation")
    return Diagnosis(tuple(found), rotate if "orientation" in found else None, reply.usage)


def region_box(value: Any) -> Box | None:
    """A region argument as a :class:`Box` ([0, 1] fractions or 0-1000), None when absent or unusable."""
    if value is None:
        return None
    try:
        box = Box.from_model(value)
    except (InvalidBoxError, TypeError, ValueError):
        log.info("ignoring an unusable region argument %r", value)
        return None
    return box if box.area < 0.95 else None  # the whole page is no region


def plain_text(content: str | None) -> str:
    """Model text with any written-out function call removed (kept as the decision's reasoning)."""
    text, _ = strip_reasoning(content)
    text = re.sub(r"<tool_call>.*?(</tool_call>|$)", "", text, flags=re.S)
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = text.strip()
    return "" if text.startswith("{") and text.endswith("}") else text


def _rotation_name(value: Any) -> str | None:
    if value is None:
        return None
    match = re.search(r"(90|180|270)", str(value))
    return f"rotate_{match.group(1)}" if match else None


__all__ = [
    "CONFIDENCE",
    "DecisionCheck",
    "answer",
    "check_verdict",
    "decision",
    "diagnosis",
    "plain_text",
    "region_box",
    "verdict",
]
