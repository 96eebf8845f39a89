"""The model brain's requests to its chat model: what the model takes, found out once (images or text, native tool
calls or JSON actions), what each request carries (``max_tokens`` sized to its phase, stop sequences, a JSON
schema), the refusals a server answers by a different request (a refused ``response_format`` or ``stop``, a
context overflow) sent again the way it takes them, and the exchange that gives an unusable reply one corrective
turn.

It knows the brain only by its options (:class:`~docintent.brains.modeloptions.ModelBrainOptions`): the brain
decides what to ask, this module how to ask it of this server.
"""

from __future__ import annotations

import base64
import json
import logging
import re
from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from ..io.encode import resize_longest, to_data_url
from ..page import Page
from .chat import ChatModel, Reply
from .decisions import Usage
from .endpoint import Endpoint, RequestRejected
from .messages import open_call, replayed
from .modeloptions import ModelBrainOptions
from .probes import image_probe, tool_probe
from .prompts import render
from .textcontext import text_messages
from .toolcalls import ParsedCall, parse_json_object

log = logging.getLogger(__name__)

#: Output tokens each phase needs at most (``phase_tokens``): one function call with a sentence of reasoning
#: (decide, execute), a verdict (review, judge), a JSON answer (answer, conclude, diagnose), a few short plans.
#: Measured replies of instruction-tuned models stay under a fifth of these; a reply that reaches one ran away.
PHASE_TOKENS = {
    "decide": 512,
    "review": 256,
    "answer": 384,
    "diagnose": 256,
    "plan": 1024,
    "execute": 512,
    "judge": 384,
    "conclude": 384,
}
#: Chat-turn end markers sent as stop sequences by default: a server whose chat template misses the model's
#: end-of-turn token otherwise lets the model write the next turns itself until max_tokens.
TURN_ENDS = ("<end_of_turn>", "<|im_end|>", "<|eot_id|>")
#: Longest string a JSON action's argument may hold (a grammar-constrained small model otherwise fills it up to
#: max_tokens), and the most numbers in an array argument (a region is four).
ACTION_STRING_CHARS, ACTION_ARRAY_ITEMS = 200, 4

#: What an exchange asks of each reply: the call to act on, or None with the problem the corrective turn names.
Validate = Callable[[ParsedCall | None, Reply], tuple[ParsedCall | None, str | None]]


class ModelLink:
    """One chat model as the model brain asks it: ``endpoint`` (any :class:`~docintent.brains.chat.ChatModel`)
    under ``options``, with what was found out about it so far. ``options`` is the brain's own object: a server
    that refuses stop sequences leaves ``options.stop`` empty for the rest of the run."""

    def __init__(self, endpoint: ChatModel, options: ModelBrainOptions) -> None:
        self.endpoint = endpoint
        self.options = options
        self._native: bool | None = None  # native_tools=auto: None until a reply shows whether the server parses calls
        self._sees: bool | None = None  # context=auto: None until the server is asked whether the model reads images
        self._reasons = False  # True once a reply carried reasoning: requests get max_tokens from then on
        self._json_ok: bool | None = None  # json_replies=auto: False once the server refused response_format

    # -- what the model takes: images or text, native tool calls or JSON actions --------------------

    @property
    def native_tools(self) -> bool:
        """Whether tools go in the API's ``tools`` field (else they are described in the prompt); ``auto`` asks
        the server once per endpoint and model (:func:`~docintent.brains.probes.tool_probe`), and a reply that
        shows the tools were dropped after all switches to the prompt (:meth:`tools_dropped`)."""
        setting = self.options.native_tools
        if setting != "auto":
            return bool(setting)
        if self._native is None and isinstance(self.endpoint, Endpoint):
            self._native = tool_probe(self)[0]
        return self._native is not False

    def tools_dropped(self, reply: Reply) -> bool:
        """After a reply to a request that offered tools natively: True (once) when it shows the server dropped
        them after all (no call, native or written, and no reasoning; a one-function probe can pass where a real
        request is not shown the tools); from then on tools are described in the prompt."""
        if self.options.native_tools != "auto" or self._native is False:
            return False
        if reply.calls or reply.reasoning or parse_json_object(reply.text) is not None:
            return False  # a written call, a model still reasoning, or a JSON answer: the tools were seen
        self._native = False
        log.warning(
            "%s: the model made no function call with tools offered in the API; describing them in the "
            "prompt from now on (native_tools=false)",
            self.endpoint.where,
        )
        return True

    def sees_images(self) -> bool:
        """Whether the model reads images: ``context=image`` / ``text`` say so; ``auto`` asks the server once per
        endpoint and model in this process (:func:`~docintent.brains.probes.image_probe`) and says what it found
        in one line."""
        if self.options.context != "auto":
            return self.options.context == "image"
        if self._sees is None:
            self._sees = image_probe(self)[0]
        return self._sees

    def text_context(self) -> bool:
        """Whether pages go as text already (``context=text``, or ``auto`` once the probe found a text model);
        asks nothing."""
        return self.options.context == "text" or (self.options.context == "auto" and self._sees is False)

    def with_text_tools(self, text: str, functions: list[dict[str, Any]]) -> str:
        """``text`` with ``functions`` described in it when they are not sent natively (JSON actions)."""
        if self.native_tools or not functions:
            return text
        listing = json.dumps([f["function"] for f in functions], indent=1)
        return f"{text}\n\n{render('text_tools', tools=listing)}"

    # -- what a request carries -------------------------------------------------------------------

    def budget(self, phase: str | None) -> int:
        """Output tokens a request of ``phase`` may use: :data:`PHASE_TOKENS` (at most ``max_tokens``) with
        ``phase_tokens`` on and a model that does not reason first, else ``max_tokens``."""
        most = self.options.max_tokens
        if phase is None or not self.options.phase_tokens or self._reasons:
            return most
        return min(most, PHASE_TOKENS.get(phase, most))

    def request_extras(
        self, tools: list[dict[str, Any]] | None, functions: list[dict[str, Any]] | None, phase: str | None
    ) -> dict[str, Any]:
        """The fields a request carries beyond messages, tools and max_tokens: ``stop`` (``stop``, default
        :data:`TURN_ENDS`) and ``response_format`` when a JSON object is wanted (:meth:`_json_wanted`). None for
        a model behind another API (a :class:`~docintent.brains.chat.ChatModel` takes neither)."""
        if not isinstance(self.endpoint, Endpoint):
            return {}
        stop = self.options.stop if self.options.stop is not None else list(TURN_ENDS)
        extra: dict[str, Any] = {"stop": stop} if stop else {}
        if self._json_wanted(tools, functions, phase):
            schema = action_schema(functions, phase)
            extra["response_format"] = {"type": "json_object", **({"schema": schema} if schema else {})}
        return extra

    def _json_wanted(
        self, tools: list[dict[str, Any]] | None, functions: list[dict[str, Any]] | None, phase: str | None
    ) -> bool:
        """Whether this request asks for a JSON object: ``json_replies`` on (or auto and not refused), and the
        reply is a JSON action (tools described in the prompt) or a JSON answer in the JSON-action mode."""
        setting = self.options.json_replies
        if setting is False or (setting == "auto" and self._json_ok is False) or tools:
            return False
        return bool(functions) or (not self.native_tools and phase in ("answer", "diagnose", "conclude"))

    # -- sending ----------------------------------------------------------------------------------

    def chat(
        self,
        messages: list[dict[str, Any]],
        functions: list[dict[str, Any]] | None = None,
        *,
        max_tokens: int | None = None,
        phase: str | None = None,
    ) -> Reply:
        """Send ``messages`` (offering ``functions`` natively unless the server takes none) and return the reply.

        ``max_tokens`` defaults to what ``phase`` needs (:meth:`budget`). With the page given as text
        (:meth:`sees_images` False) the system message says so. A request the server refuses because it does
        not fit the context is sent once more with every image at half size (the images are replaced in
        ``messages``, so a ``full`` conversation stays small).
        """
        tools = functions if functions and self.native_tools else None
        if max_tokens is None:
            max_tokens = self.budget(phase)
        given = messages
        if self.text_context():
            messages = text_messages(messages)
        extra = self.request_extras(tools, functions, phase)
        stop = extra.get("stop")
        try:
            reply = self.endpoint.chat(messages, tools, max_tokens=max_tokens, **extra)
        except RequestRejected as err:
            if "response_format" in extra and re.search(r"response_format|json_object|json mode", err.text, re.I):
                log.info("%s refuses response_format json_object; not asking for it again", self.endpoint.where)
                self._json_ok = False
                return self.chat(given, functions, max_tokens=max_tokens, phase=phase)
            if err.kind == "stop" and stop and self.options.stop is None:
                log.info("%s refuses stop sequences; sending none", self.endpoint.where)
                self.options.stop = []
                return self.chat(given, functions, max_tokens=max_tokens, phase=phase)
            if err.kind != "context" or not shrink_images(messages):
                raise
            log.warning("%s; sending it once more with images at half size", err)
            reply = self.endpoint.chat(messages, tools, max_tokens=max_tokens, **extra)
        if reply.reasoning and not self._reasons and self.options.phase_tokens:
            self._reasons = True
            log.info(
                "%s reasons before it answers: every request now gets max_tokens=%d",
                self.endpoint.where,
                self.options.max_tokens,
            )
        return reply

    def ask(
        self, messages: list[dict[str, Any]], functions: list[dict[str, Any]] | None = None, phase: str | None = None
    ) -> Reply:
        """:meth:`chat`; a reply cut by the token limit while the model was still reasoning, before it said
        anything usable, is asked again with more room (at temperature 0 the same budget would be cut at the
        same place). A reply cut without reasoning ran away: more room would only let it run longer."""
        budget = self.budget(phase)
        reply = self.chat(messages, functions, max_tokens=budget, phase=phase)
        if reply.truncated and not reply.calls and parse_json_object(reply.text) is None and reply.reasoning:
            more = max(self.options.max_tokens, 2 * budget)
            log.warning(
                "%s: the reply was cut at max_tokens=%d; asking again with %d", self.endpoint.where, budget, more
            )
            again = self.chat(messages, functions, max_tokens=more, phase=phase)
            again.usage = reply.usage + again.usage
            return again
        return reply

    def exchange(
        self,
        messages: list[dict[str, Any]],
        functions: list[dict[str, Any]],
        validate: Validate,
        phase: str | None = None,
    ) -> tuple[ParsedCall | None, list[Reply], Usage, str | None, str | None]:
        """Ask, validate the call; on an unusable reply send one corrective message and ask again.

        The call validated is the first one naming an offered function (else the first one). A reply cut by
        ``max_tokens`` is asked again with more room (:meth:`ask`) instead of being corrected. Every reply is
        recorded in ``messages``. Returns (call or None, every reply, usage of every call, the problem when no
        call was usable, the id of the last reply's native call, which the conversation still owes an answer).
        """
        usage = Usage()
        problem = None
        replies: list[Reply] = []
        offered = [f["function"]["name"] for f in functions]
        first = None
        for attempt in range(2):
            sent_natively = self.native_tools
            reply = self.ask(messages, functions, phase)
            replies.append(reply)
            usage = usage + reply.usage
            first = reply.call_for(offered)
            call, problem = validate(first, reply)
            messages.append(replayed(reply, first))
            if problem is None:
                return call, replies, usage, None, open_call(first)
            dropped = sent_natively and self.tools_dropped(reply)
            if reply.truncated and not dropped:
                problem = (
                    f"the reply was cut by the output-token limit (finish_reason=length, max_tokens="
                    f"{self.budget(phase)}) before it made a usable call; raise max_tokens "
                    "(reasoning models need 8192 or more)"
                )
                log.warning("%s: %s", self.endpoint.where, problem)
                break
            log.info("unusable model reply (%s)%s", problem, "; asking again" if attempt == 0 else "")
            if attempt == 1:
                break
            correction = render("corrective", problem=problem, names=", ".join(offered))
            if dropped:
                correction = self.with_text_tools(correction, functions)
            open_id = open_call(first)
            if open_id:
                messages.append({"role": "tool", "tool_call_id": open_id, "content": correction})
            else:
                messages.append({"role": "user", "content": correction})
        return None, replies, usage, problem, open_call(first)


def action_schema(functions: list[dict[str, Any]] | None, phase: str | None = None) -> dict[str, Any] | None:
    """The JSON schema of a reply that asks for a JSON object: one JSON action naming an offered function (its
    ``name`` one of theirs, its ``arguments`` theirs with strings and arrays bounded), or, without functions, an
    ``answer`` (the answer phases; None for another JSON reply, e.g. a diagnosis). llama.cpp's server turns it into
    a grammar, so even a small model writes a call it can parse; a server that refuses the schema is not asked for
    a JSON object again (``json_replies``)."""
    if not functions:
        if phase not in ("answer", "conclude"):
            return None
        return {
            "type": "object",
            "properties": {"answer": _bounded({"type": "string"})},
            "required": ["answer"],
            "additionalProperties": False,
        }
    actions = []
    for spec in functions:
        function = spec["function"]
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        arguments = {
            "type": "object",
            "properties": {k: _bounded(v) for k, v in (parameters.get("properties") or {}).items()},
            "required": list(parameters.get("required") or []),
            "additionalProperties": False,
        }
        actions.append(
            {
                "type": "object",
                "properties": {"name": {"const": function["name"]}, "arguments": arguments},
                "required": ["name", "arguments"],
                "additionalProperties": False,
            }
        )
    return {"oneOf": actions}


def _bounded(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its strings and arrays bounded (:data:`ACTION_STRING_CHARS`, :data:`ACTION_ARRAY_ITEMS`)."""
    if schema.get("type") == "string" and "enum" not in schema:
        return {**schema, "maxLength": ACTION_STRING_CHARS}
    if schema.get("type") == "array":
        return {**schema, "maxItems": ACTION_ARRAY_ITEMS}
    return schema


def shrink_images(messages: list[dict[str, Any]]) -> bool:
    """Replace every data-URL image in ``messages`` by one at half its size; False when none could shrink."""
    changed = False
    for message in messages:
        content = message.get("content")
        if not isinstance(content, list):
            continue
        for part in content:
            url = part.get("image_url", {}).get("url", "") if part.get("type") == "image_url" else ""
            if not url.startswith("data:image/") or "," not in url:
                continue
            header, data = url.split(",", 1)
            pixels = cv2.imdecode(np.frombuffer(base64.b64decode(data), np.uint8), cv2.IMREAD_COLOR)
            if pixels is None or max(pixels.shape[:2]) < 112:
                continue
            page = Page.from_array(cv2.cvtColor(pixels, cv2.COLOR_BGR2RGB))
            fmt = "png" if "png" in header else "jpeg"
            part["image_url"] = {"url": to_data_url(resize_longest(page, max(page.width, page.height) // 2), fmt)}
            changed = True
    return changed


__all__ = [
    "ACTION_ARRAY_ITEMS",
    "ACTION_STRING_CHARS",
    "PHASE_TOKENS",
    "TURN_ENDS",
    "ModelLink",
    "Validate",
    "action_schema",
    "shrink_images",
]
