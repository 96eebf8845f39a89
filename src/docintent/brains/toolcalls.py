"""Read function calls out of model replies: native ``tool_calls`` or calls written as plain text.

Many servers return a call as text when their tool parser is off or the model drifts from the template:
a bare JSON object, Hermes/Qwen ``<tool_call>...</tool_call>`` tags, or a fenced JSON block. This module turns
all of them into one :class:`ParsedCall`. Reasoning (everything up to the last ``</think>``) is never read for
calls. It is the one JSON / tool-call extractor of the package (model brain, doctor, retrieval planner).

>>> parse_text_calls('<tool_call>{"name": "rotate_90", "arguments": {}}</tool_call>')[0].name
'rotate_90'
>>> parse_text_calls('```json\\n{"name": "answer", "arguments": {"answer": "42"}}\\n```')[0].arguments
{'answer': '42'}
>>> parse_json_object('Sure! {"answer": "Total: 7"} Hope this helps')
{'answer': 'Total: 7'}
"""

from __future__ import annotations

import json
import re
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

_THINK_BLOCK_RE = re.compile(r"<think(?:ing)?>.*?</think(?:ing)?>", re.S)
_THINK_CLOSE_RE = re.compile(r"</think(?:ing)?>")


def strip_reasoning(content: str | None) -> tuple[str, str]:
    """Split a reply into (text after the reasoning, the reasoning).

    Everything up to the last ``</think>`` is reasoning, whether or not ``<think>`` opens it (Qwen3 chat
    templates put the opening tag in the prompt); a ``<think>`` that never closes (a reply cut by the token
    limit) makes the rest reasoning too.

    >>> strip_reasoning('maybe {"name": "x"}</think>{"name": "answer"}')
    ('{"name": "answer"}', 'maybe {"name": "x"}')
    """
    if not content:
        return "", ""
    closes = list(_THINK_CLOSE_RE.finditer(content))
    close = closes[-1] if closes else None
    if close is not None:
        reasoning, text = content[: close.start()], content[close.end() :]
        reasoning = re.sub(r"^\s*<think(?:ing)?>", "", reasoning)
    else:
        reasoning, text = "", content
    opened = re.search(r"<think(?:ing)?>", text)
    if opened:  # a block that never closes: the reply was cut while still thinking
        reasoning, text = (reasoning + text[opened.end() :]).strip(), text[: opened.start()]
    return text.strip(), reasoning.strip()


_TAG_RE = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCE_RE = re.compile(r"```(?:json|JSON|tool_call)?\s*(.*?)```", re.S)


@dataclass
class ParsedCall:
    """One function call. ``arguments`` is None when they could not be decoded (see ``error``).

    ``call_id`` is the server's id for native calls, None for calls read from text.
    """

    name: str
    arguments: dict[str, Any] | None
    call_id: str | None = None
    _: KW_ONLY
    error: str | None = None
    raw: str = field(default="", repr=False)

    @property
    def native(self) -> bool:
        return self.call_id is not None


def decode_arguments(raw: Any) -> tuple[dict[str, Any] | None, str | None]:
    """Arguments as a dict from a JSON string, a dict or nothing; returns (arguments, error)."""
    if raw is None or raw == "":
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    if isinstance(raw, str):
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as err:
            return None, f"arguments are not valid JSON ({err.msg} at character {err.pos}): {raw[:200]!r}"
        if isinstance(value, dict):
            return value, None
        return None, f"arguments must be a JSON object, got {type(value).__name__}: {raw[:200]!r}"
    return None, f"arguments must be a JSON object, got {type(raw).__name__}"


def _json_objects(text: str) -> list[Any]:
    """Every top-level JSON value that starts with '{' in ``text``, in order (decoder scan, not regex)."""
    decoder = json.JSONDecoder()
    found = []
    i = text.find("{")
    while i != -1:
        try:
            value, end = decoder.raw_decode(text, i)
        except json.JSONDecodeError:
            i = text.find("{", i + 1)
            continue
        found.append(value)
        i = text.find("{", end)
    return found


def parse_json_object(text: str | None) -> dict[str, Any] | None:
    """The first JSON object in a reply (fenced or bare, surrounded by prose or not), else None."""
    if not text:
        return None
    for candidate in [m.group(1) for m in _FENCE_RE.finditer(text)] + [text]:
        for value in _json_objects(candidate):
            if isinstance(value, dict):
                return value
    return None


def _as_call(value: Any, raw: str) -> ParsedCall | None:
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("function"), dict):  # {"type": "function", "function": {...}}
        value = value["function"]
    name = value.get("name") or value.get("tool") or value.get("function")
    if not isinstance(name, str) or not name.strip():  # a blank name names no function
        return None
    raw_args: Any = next((value[k] for k in ("arguments", "parameters", "args", "input") if k in value), {})
    arguments, error = decode_arguments(raw_args)
    return ParsedCall(name.strip(), arguments, None, error=error, raw=raw)


def parse_text_calls(text: str | None) -> list[ParsedCall]:
    """Function calls written as text: ``<tool_call>`` tags, fenced JSON or a bare JSON object."""
    if not text:
        return []
    calls: list[ParsedCall] = []
    for pattern in (_TAG_RE, _FENCE_RE):
        for match in pattern.finditer(text):
            for value in _json_objects(match.group(1)):
                call = _as_call(value, match.group(0))
                if call:
                    calls.append(call)
        if calls:
            return calls
    for value in _json_objects(text):
        call = _as_call(value, text)
        if call:
            calls.append(call)
    return calls


def calls_from_message(message: Any, text: str | None = None) -> list[ParsedCall]:
    """The calls of a chat-completion message: native ``tool_calls`` first, else those written in its text.

    ``text``: the message text to read written calls from (default: the content after its reasoning, see
    :func:`strip_reasoning`), so a JSON example inside the reasoning never becomes a call.
    """
    native = []
    for tc in getattr(message, "tool_calls", None) or []:
        fn = getattr(tc, "function", None)
        if fn is None or not getattr(fn, "name", None):
            continue
        arguments, error = decode_arguments(fn.arguments)
        native.append(ParsedCall(fn.name, arguments, tc.id or "call", error=error, raw=fn.arguments or ""))
    if native:
        return native
    if text is None:
        text, _ = strip_reasoning(getattr(message, "content", None))
    return parse_text_calls(text)


_NEGATION = re.compile(
    r"\b(?:no|not|nothing|never|none|neither|nor|without|cannot|can't|don't|doesn't|isn't|"
    r"wasn't|shouldn't|wouldn't|needn't|no need to)\b|n't\b",
    re.I,
)
_ROLLBACK_WORDS = r"roll(?:ed|ing)?[\s_-]*back|revert|undo|worse|degraded|harder to read"
_CONTINUE_WORDS = r"continue|keep|kept|better|improved|clearer|more legible|easier to read"
_VERDICT_LABEL = re.compile(
    r"(?:verdict|decision|final answer|answer|choice)\s*[:：=-]\s*[*`\"']*\s*"
    rf"({_ROLLBACK_WORDS}|{_CONTINUE_WORDS})",
    re.I,
)


def verdict_from_text(content: str) -> str | None:
    """ "continue", "rollback" or None from a Phase B reply written as prose.

    A labelled verdict ("Verdict: continue") wins; otherwise the last mention decides, and a negated mention
    counts for the other side ("nothing is worse" keeps, "I would not continue" rolls back).

    >>> verdict_from_text("Nothing is worse, no need to roll back. Verdict: continue.")
    'continue'
    >>> verdict_from_text("The digits are worse now; I would not continue.")
    'rollback'
    """
    text, _ = strip_reasoning(content)
    labelled = _VERDICT_LABEL.findall(text)
    if labelled:
        return "rollback" if re.fullmatch(_ROLLBACK_WORDS, labelled[-1], re.I) else "continue"
    votes = []
    for clause in re.split(r"[.;!?\n]|,\s*(?:but|so|and)\b", text):
        for match in re.finditer(rf"({_ROLLBACK_WORDS})|({_CONTINUE_WORDS})", clause, re.I):
            before = " ".join(clause[: match.start()].split()[-4:])
            negated = bool(_NEGATION.search(before))
            rollback = match.group(1) is not None
            votes.append("rollback" if rollback != negated else "continue")
    return votes[-1] if votes else None


_QUOTED = re.compile(r"\"([^\"\n]{1,120})\"|“([^”\n]{1,120})”|\*\*([^*\n]{1,120})\*\*|`([^`\n]{1,120})`")


def answer_from_prose(content: str) -> str:
    """The answer span of a reply that ignored the JSON format: an ``Answer:`` line, else the last quoted or
    bold span, else the reply itself (short replies are usually the bare answer).

    >>> answer_from_prose('The total in the last row is "1,250", in dollars.')
    '1,250'
    """
    text, _ = strip_reasoning(content)
    lines = list(re.finditer(r"(?im)^\s*(?:\*\*)?(?:final\s+)?answer(?:\*\*)?\s*[:：]\s*(.+)$", text))
    match = lines[-1] if lines else None
    if match:
        text = match.group(1)
    quoted = [next(g for g in m.groups() if g is not None) for m in _QUOTED.finditer(text)]
    if quoted:
        text = quoted[-1]
    text = text.strip().strip("`*").strip()
    return text.strip('"“”').strip()
