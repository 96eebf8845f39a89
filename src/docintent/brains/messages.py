"""What the model brain says to a model: the functions each phase offers, the text of each phase's user turn, the
pages a review shows, and the conversation a ``full`` history keeps (:class:`Conversation`, the brain's memo for
one question). Functions of the state and the pages, with no request sent: the brain picks which to send and when.
"""

from __future__ import annotations

import json
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from ..page import Box, Page
from ..tools import get_tool
from ..trace import Action, InspectStep, Phase
from ..vocabulary import INSPECTION
from .base import State
from .chat import Reply
from .pageviews import crop_region, sent_size, thumbnail
from .prompts import render, task_noun, task_rules
from .toolcalls import ParsedCall

#: The optional argument every restoration tool is offered with (``review=region``): where the question's
#: evidence is. Kept bare because it is repeated in every tool's schema; the situation text explains it once.
REGION_ARGUMENT = {"type": "array", "items": {"type": "number"}}
REGION_NOTE = (
    "With a restoration tool you may pass region=[x0, y0, x1, y1], the evidence's box as fractions (0-1) "
    "of this page: the review then compares that region."
)

ANSWER_FUNCTION = {
    "type": "function",
    "function": {
        "name": "answer",
        "description": "Give the final answer. Call it when the region holding the evidence is readable, "
        "or when no offered tool would make it more readable.",
        "parameters": {
            "type": "object",
            "properties": {
                "answer": {"type": "string", "description": "The answer, written by the answer-format rules."},
                "confidence": {"type": "string", "enum": ["low", "medium", "high"]},
                "reasoning": {
                    "type": "string",
                    "description": "One or two sentences: where the evidence is, how legible.",
                },
            },
            "required": ["answer", "confidence"],
        },
    },
}
CONTINUE_FUNCTION = {
    "type": "function",
    "function": {
        "name": "continue",
        "description": "The evidence region is at least as legible after the tool: keep the restored page.",
        "parameters": {"type": "object", "properties": {}},
    },
}
ROLLBACK_FUNCTION = {
    "type": "function",
    "function": {
        "name": "rollback",
        "description": "The tool made the evidence harder to read: return to the page before it.",
        "parameters": {
            "type": "object",
            "properties": {"reason": {"type": "string", "description": "What got worse in the evidence region."}},
            "required": ["reason"],
        },
    },
}

#: A page a user turn shows: (the label before it, the page, the longest side to send it at; None: the page's).
Shown = tuple[str, Page, int | None]


@dataclass
class Conversation:
    """The model brain's memo for one question. ``full`` context: the conversation so far and the call whose
    outcome the next phase reports (``open_call`` is False when no call awaits its outcome, None for a call made
    in text (its outcome goes into the next user turn as ``note``), else the native call id). Every context: the
    evidence ``region`` Phase A named (with the size of the page it was named on) and the ``image_tokens`` sent."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    open_call: str | None | bool = False
    note: str = ""
    _: KW_ONLY
    region: tuple[Box, tuple[int, int]] | None = None
    image_tokens: int = 0

    def resume(self, system: str, outcome: str) -> list[dict[str, Any]]:
        """The stored conversation a phase continues (begun with ``system``), with ``outcome`` (what happened
        since the model's last call) answering that call: as its tool message, or as the next user turn's note."""
        if not self.messages:
            self.messages.append({"role": "system", "content": system})
        open_call, self.open_call = self.open_call, False
        if open_call is not False:
            if open_call:
                self.messages.append({"role": "tool", "tool_call_id": open_call, "content": outcome})
            else:
                self.note = outcome
        return self.messages

    def take_note(self) -> str:
        """The outcome note the next user turn starts with, once."""
        note, self.note = self.note, ""
        return note


# -- the functions offered ------------------------------------------------------------------------------


def restores(name: str) -> bool:
    """True for a registered restoration tool (not an inspection tool such as zoom)."""
    try:
        return get_tool(name).degradation != INSPECTION
    except Exception:  # an unregistered name offers nothing to restore
        return False


def tool_spec(name: str, review: str) -> dict[str, Any]:
    """A tool's function spec; with ``review=region``, restoration tools also take the optional evidence
    ``region``."""
    tool = get_tool(name)
    spec = tool.spec()
    if review != "region" or not restores(name):
        return spec
    parameters = dict(spec["function"]["parameters"])
    parameters["properties"] = {**parameters.get("properties", {}), "region": REGION_ARGUMENT}
    return {"type": "function", "function": {**spec["function"], "parameters": parameters}}


# -- the text of a turn ---------------------------------------------------------------------------------


def situation(state: State, review: str) -> str:
    """Phase A's user text: the question, the round, the restoration tools still offered (with the note on the
    ``region`` argument when ``review=region`` offers it), and on the last round the order to answer."""
    tools = ", ".join(state.available_tools) if state.available_tools else "none (answer now)"
    lines = [
        f"Question: {state.question}",
        f"Round {state.round + 1} of at most {state.max_rounds}. Restoration tools you can still call: {tools}.",
    ]
    if review == "region" and any(restores(n) for n in state.available_tools):
        lines.append(REGION_NOTE)
    if state.round + 1 >= state.max_rounds:
        lines.append("This is the last round: call answer.")
    return "\n".join(lines)


def history_text(state: State) -> str:
    """Earlier decisions and reviews as short text lines (the ``text`` context strategy): each step's own
    :meth:`~docintent.trace.Step.for_model` line."""
    lines = []
    for step in state.history:
        line = step.for_model()
        if line is not None:
            round_label = f"round {step.round + 1}" if step.round is not None else "earlier"
            lines.append(f"- {round_label}: {line}")
    return "Earlier steps:\n" + "\n".join(lines) if lines else ""


def after_history(state: State, text: str) -> str:
    """``text`` after the summary of the earlier steps (:func:`history_text`)."""
    return f"{history_text(state)}\n\n{text}".strip()


def outcome_note(state: State) -> str:
    """What happened since the model's last call (the reply to that call in a ``full`` conversation)."""
    if not state.history:
        return "Done."
    step = state.history[-1]
    if step.phase == Phase.TOOL and step.action == Action.APPLIED:
        return f"{step.tool} was applied to the page."
    if step.phase == Phase.TOOL and step.action == Action.NO_CHANGE:
        return f"{step.tool} found nothing to change on the page; it is no longer offered."
    if step.phase == Phase.TOOL:
        return f"{step.tool} did not run ({step.reason}); it is no longer offered."
    if step.phase == Phase.REVIEW and step.action == Action.KEEP:
        return "The restored page is kept; work continues from it."
    if step.phase == Phase.REVIEW and step.action == Action.ROLLBACK:
        return f"The restoration was rolled back to the previous page; {step.tool} is no longer offered."
    if isinstance(step, InspectStep):
        return f"{step.tool}: {step.evidence if step.evidence is not None else step.reason}"
    return "Done."


def last_applied(state: State) -> str:
    """The tool a review judges when none is named: the last one applied."""
    return (
        next((s.tool for s in reversed(state.history) if s.phase == Phase.TOOL and s.action == Action.APPLIED), None)
        or "the tool"
    )


def review_prompt(
    question: str,
    tool: str,
    before: Page,
    after: Page,
    region: Box | None,
    max_side: int,
    max_pixels: int,
    thumbnail_side: int,
) -> tuple[str, list[Shown]]:
    """Phase B's user text and pages: the whole page before and after ``tool``, or, with a ``region``, crops of
    it before and after at the scale the whole page is sent at (``max_side``, ``max_pixels``: the review sees the
    pixels the answer is read from) and a ``thumbnail_side`` thumbnail of the page after with the region
    outlined."""
    try:
        degradation = get_tool(tool).degradation
    except Exception:  # an unregistered name only changes the wording of the prompt
        degradation = "a degradation"
    if region is None:
        text = render("review", tool=tool, degradation=degradation, question=question)
        return text, [("BEFORE the tool:", before, None), ("AFTER the tool:", after, None)]
    box = [round(v, 3) for v in region.as_tuple()]
    text = render("review_region", tool=tool, degradation=degradation, question=question, box=box)
    scale = sent_size(before, max_side, max_pixels)[0] / before.width
    crops = [crop_region(before, region), crop_region(after, region)]
    side = max(28, round(max(crops[0].width, crops[0].height) * scale))
    return text, [
        ("BEFORE the tool (evidence region):", crops[0], side),
        ("AFTER the tool (evidence region):", crops[1], side),
        (
            "The page after the tool, evidence region outlined:",
            thumbnail(after, region, thumbnail_side),
            thumbnail_side,
        ),
    ]


# -- messages -------------------------------------------------------------------------------------------


def user_message(note: str, text: str, pages: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
    """A user turn: ``note`` (a ``full`` conversation's outcome of the last call) and ``text``, then each page's
    label and content part."""
    content: list[dict[str, Any]] = [{"type": "text", "text": f"{note}\n\n{text}".strip()}]
    for label, part in pages:
        if label:
            content.append({"type": "text", "text": label})
        content.append(part)
    return {"role": "user", "content": content}


def answer_messages(state: State, page: dict[str, Any], history: bool) -> list[dict[str, Any]]:
    """The baseline answer request: its prompt, the question (after the earlier steps with ``history``) and the
    page's content part."""
    system = render("answer", family=task_noun(state.task), rules=task_rules(state.task))
    text = f"Question: {state.question}"
    if history:
        text = after_history(state, text)
    return [{"role": "system", "content": system}, {"role": "user", "content": [{"type": "text", "text": text}, page]}]


def diagnose_messages(page: dict[str, Any]) -> list[dict[str, Any]]:
    """The MLLM-Judge request: its prompt and the page's content part."""
    return [
        {"role": "system", "content": render("diagnose")},
        {"role": "user", "content": [{"type": "text", "text": "Which degradations does this page show?"}, page]},
    ]


def replayed(reply: Reply, call: ParsedCall | None) -> dict[str, Any]:
    """The assistant message that records ``reply`` in the conversation.

    A native call is sent back with its arguments re-encoded; a call whose arguments were not valid JSON is
    sent back as text, because servers (vLLM) parse replayed arguments and refuse the whole request.
    """
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if call is not None and call.native:
        if call.error is None:
            message["tool_calls"] = [
                {
                    "id": call.call_id,
                    "type": "function",
                    "function": {"name": call.name, "arguments": json.dumps(call.arguments or {})},
                }
            ]
        else:
            message["content"] = f"{reply.content}\n{call.name}({call.raw})".strip()
    return message


def open_call(call: ParsedCall | None) -> str | None:
    """The id of a replayed native call that a tool message must answer, else None."""
    return call.call_id if call is not None and call.native and call.error is None else None


__all__ = [
    "ANSWER_FUNCTION",
    "CONTINUE_FUNCTION",
    "REGION_ARGUMENT",
    "REGION_NOTE",
    "ROLLBACK_FUNCTION",
    "Conversation",
    "Shown",
    "after_history",
    "answer_messages",
    "diagnose_messages",
    "history_text",
    "last_applied",
    "open_call",
    "outcome_note",
    "replayed",
    "restores",
    "review_prompt",
    "situation",
    "tool_spec",
    "user_message",
]
