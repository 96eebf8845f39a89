"""The model brain: any OpenAI-compatible multimodal endpoint drives DocIntent through tool calling.

Works with vLLM and SGLang (Qwen-VL, InternVL), Ollama, llama.cpp's server and hosted APIs (OpenAI, Gemini's
OpenAI-compatible endpoint, Qwen, Doubao). Phase A offers ``answer`` plus the restoration tools still
available; Phase B offers only ``continue`` and ``rollback`` and shows the page before and after the tool.

>>> from docintent.testing.fake_openai import FakeOpenAI, tool_call
>>> from docintent.strategies import get_strategy
>>> from docintent.page import Page
>>> import numpy as np
>>> page = Page.from_array(np.full((64, 96), 255, dtype=np.uint8))
>>> with FakeOpenAI([tool_call("answer", answer="42", confidence="high")]) as server:
...     brain = ModelBrain(base_url=server.base_url, model=server.model)
...     result = get_strategy("docintent").run(page, "What is the total?", "doc", brain)
>>> result.answer, result.confidence
('42', 0.9)

Options (constructor keywords, or ``--brain-opt key=value`` on the command line) are listed in
:class:`ModelBrainOptions`. Context strategies (``context=``):

- ``none``: every phase is a fresh conversation with the current image only;
- ``text`` (default): earlier decisions and reviews are summarised as text; only the current image is sent
  (Phase B: the page before and after the tool);
- ``full``: one growing conversation with every message and image so far.
"""

from __future__ import annotations

import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..errors import ConfigError, ToolError
from ..page import Page
from ..settings import get_settings
from ..tools import get_tool
from ..trace import Action, Phase
from ..vocabulary import DEGRADATIONS
from . import mact_model
from .base import (
    Answer,
    Brain,
    Decision,
    Diagnosis,
    Keep,
    Review,
    Rollback,
    State,
    Usage,
    UseTool,
)
from .endpoint import PLACEHOLDER_KEY, Endpoint, Reply
from .pricing import Price, PriceTable
from .prompts import FAMILY, PROMPT_VERSION, answer_rules, render
from .roles import Correction, Execution, Plan, PlanStep, Verdict
from .toolcalls import ParsedCall, parse_json_object

log = logging.getLogger(__name__)

#: The ``confidence`` levels of the answer function, as numbers for :class:`Answer`.
CONFIDENCE = {"low": 0.3, "medium": 0.6, "high": 0.9}
#: Degradation names the diagnosis may list (the MLLM-Judge baseline's vocabulary).
DEGRADATION_NAMES = DEGRADATIONS

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
                "reasoning": {"type": "string", "description": "One or two sentences: where the evidence is, how legible."},
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


@dataclass
class _Conversation:
    """The model brain's memo for one question (``full`` context): the conversation so far and the call whose
    outcome the next phase reports. ``open_call`` is False when no call awaits its outcome, None for a call made
    in text (its outcome goes into the next user turn as ``note``), else the native call id."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    open_call: str | None | bool = False
    note: str = ""


class ModelBrainOptions(BaseModel):
    """Options of :class:`ModelBrain`. Strings are converted (``"4096"`` -> 4096), so CLI values work as given."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["openai"] = "openai"
    model: str | None = Field(None, description="Model name; default DOCINTENT_MODEL, else the only model the server lists.")
    base_url: str | None = Field(None, description="Endpoint URL ending in /v1; default DOCINTENT_BASE_URL or OPENAI_BASE_URL.")
    api_key: str | None = Field(None, description="API key; default DOCINTENT_API_KEY or OPENAI_API_KEY; local servers need none.")
    context: Literal["text", "full", "none"] = Field("text", description="What earlier steps each call carries.")
    temperature: float = Field(0.0, description="Sampling temperature (the paper decodes greedily).")
    top_p: float = Field(1.0, description="Nucleus sampling mass.")
    max_tokens: int = Field(4096, ge=1, description="Most output tokens per call.")
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = Field(
        "max_tokens", description="Request field for max_tokens (OpenAI's reasoning models need max_completion_tokens).")
    timeout: float = Field(120.0, gt=0, description="Seconds to wait for one reply before retrying.")
    max_retries: int = Field(4, ge=0, description="Retries after HTTP 429, 5xx or a timeout.")
    backoff: float = Field(1.0, ge=0, description="First retry wait in seconds (doubles each retry) when no Retry-After is given.")
    max_wait: float = Field(60.0, ge=0, description="Longest single wait between retries, Retry-After included.")
    max_side: int | None = Field(None, ge=28, description="Longest image side sent to the model; default DOCINTENT_MAX_SIDE (2048).")
    max_pixels: int | None = Field(None, ge=784, description="Cap on width x height of each image sent (small contexts).")
    image_format: Literal["auto", "png", "jpeg"] = Field("auto", description="auto: PNG for line art, JPEG for photos.")
    jpeg_quality: int = Field(90, ge=1, le=100)
    native_tools: bool = Field(True, description="Send tools in the API; False describes them in the prompt (text calls).")
    price_in: float = Field(0.0, ge=0, description="$ per 1M prompt tokens (cost accounting).")
    price_out: float = Field(0.0, ge=0, description="$ per 1M completion tokens.")
    extra_body: dict[str, Any] | None = Field(None, description="Extra JSON fields for every request (server-specific).")


class ModelBrain(Brain):
    """A :class:`Brain` backed by an OpenAI-compatible chat-completions endpoint with tool calling.

    ``ModelBrain(base_url="http://localhost:8000/v1", model="Qwen/Qwen2.5-VL-7B-Instruct")``; every keyword
    of :class:`ModelBrainOptions` is accepted. ``client`` injects a ready ``openai.OpenAI`` client and
    ``prices`` a :class:`~docintent.brains.pricing.PriceTable`. ``usage`` and :attr:`cost` total every call.
    """

    name = "openai"
    prompt_version = PROMPT_VERSION

    def __init__(
        self,
        options: ModelBrainOptions | None = None,
        *,
        client: Any = None,
        prices: PriceTable | None = None,
        sleep: Callable[[float], None] = time.sleep,
        **kwargs: Any,
    ) -> None:
        base = options.model_dump(exclude_unset=True) if options else {}
        unknown = set(kwargs) - set(ModelBrainOptions.model_fields)
        if unknown:
            raise ConfigError(
                f"openai brain: unknown option(s) {sorted(unknown)}; valid: {', '.join(sorted(ModelBrainOptions.model_fields))}"
            )
        try:
            self.options = ModelBrainOptions(**{**base, **kwargs})
        except ValidationError as err:
            problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
            raise ConfigError(f"openai brain: invalid option(s): {problems}") from None
        settings = get_settings()
        opts = self.options
        self.base_url = (opts.base_url or settings.resolved_base_url() or "").rstrip("/")
        if not self.base_url:
            raise ConfigError(
                "openai brain: no endpoint; pass base_url=... (CLI: --brain-opt base_url=URL) "
                "or set DOCINTENT_BASE_URL or OPENAI_BASE_URL"
            )
        self.api_key = opts.api_key or settings.resolved_api_key() or PLACEHOLDER_KEY
        self.max_side = opts.max_side or settings.max_side
        self.endpoint = Endpoint(
            self.base_url, opts.model or settings.model, self.api_key, timeout=opts.timeout,
            max_retries=opts.max_retries, backoff=opts.backoff, max_wait=opts.max_wait, temperature=opts.temperature,
            top_p=opts.top_p, max_tokens=opts.max_tokens, max_tokens_param=opts.max_tokens_param,
            extra_body=opts.extra_body, client=client, sleep=sleep,
        )
        own_price = Price(opts.price_in, opts.price_out)
        self.prices = prices or PriceTable(default=own_price)

    # -- endpoint ---------------------------------------------------------------------------------

    @property
    def model(self) -> str:
        """The model name; when none is configured, the only model the endpoint lists."""
        return self.endpoint.model

    @property
    def usage(self) -> Usage:
        """Tokens of every call so far."""
        return self.endpoint.usage

    def served_models(self) -> list[str]:
        """Model names the endpoint lists at ``/models``."""
        return self.endpoint.served_models()

    @property
    def cost(self) -> float:
        """Dollars spent so far by this brain (from ``usage`` and the price table)."""
        return self.prices.cost(self.endpoint._model, self.usage)

    def chat(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]] | None = None) -> Reply:
        """Send ``messages`` (offering ``functions`` natively unless ``native_tools=false``) and return the reply."""
        return self.endpoint.chat(messages, functions if functions and self.options.native_tools else None)

    def close(self) -> None:
        self.endpoint.close()

    # -- message building -------------------------------------------------------------------------

    def image_part(self, page: Page) -> dict[str, Any]:
        """The page as an ``image_url`` content part (longest side and pixel count capped; cached by hash)."""
        opts = self.options
        return self.endpoint.image_part(page, self.max_side, max_pixels=opts.max_pixels, fmt=opts.image_format,
                                        quality=opts.jpeg_quality)

    def _with_text_tools(self, text: str, functions: list[dict[str, Any]]) -> str:
        if self.options.native_tools or not functions:
            return text
        listing = json.dumps([f["function"] for f in functions], indent=1)
        return f"{text}\n\n{render('text_tools', tools=listing)}"

    @staticmethod
    def _situation(state: State) -> str:
        tools = ", ".join(state.available_tools) if state.available_tools else "none (answer now)"
        lines = [f"Question: {state.question}", f"Round {state.round + 1} of at most {state.max_rounds}. "
                 f"Restoration tools you can still call: {tools}."]
        if state.round + 1 >= state.max_rounds:
            lines.append("This is the last round: call answer.")
        return "\n".join(lines)

    @staticmethod
    def history_text(state: State) -> str:
        """Earlier decisions and reviews as short text lines (the ``text`` context strategy)."""
        lines = []
        for step in state.history:
            round_label = f"round {step.round + 1}" if step.round is not None else "earlier"
            # long model reasoning would make the summary cost what the full context costs
            short = step.reason if len(step.reason) <= 200 else step.reason[:197] + "..."
            reason = f" ({short})" if short else ""
            if step.phase == Phase.DECIDE and step.action == Action.USE_TOOL:
                lines.append(f"- {round_label}: the evidence was not readable enough{reason}; you called {step.tool}.")
            elif step.phase == Phase.TOOL and step.action == Action.NO_CHANGE:
                lines.append(f"- {round_label}: {step.tool} found nothing to change on the page; it is no longer offered.")
            elif step.phase == Phase.TOOL and step.action in (Action.FAILED, Action.SKIPPED):
                lines.append(f"- {round_label}: {step.tool} did not run{reason}; it is no longer offered.")
            elif step.phase == Phase.REVIEW and step.action == Action.KEEP:
                lines.append(f"- {round_label}: review kept the result of {step.tool}{reason}.")
            elif step.phase == Phase.REVIEW and step.action == Action.ROLLBACK:
                lines.append(f"- {round_label}: review rolled back {step.tool}{reason}; it is no longer offered.")
            elif step.phase == Phase.INSPECT and step.action == Action.INSPECTED:
                lines.append(f"- {round_label}: {step.tool} found: {step.data.get('evidence', '')}")
        return "Earlier steps:\n" + "\n".join(lines) if lines else ""

    @staticmethod
    def _outcome_note(state: State) -> str:
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
        if step.phase == Phase.INSPECT:
            return f"{step.tool}: {step.data.get('evidence', step.reason)}"
        return "Done."

    def _conversation(self, state: State, system: str) -> list[dict[str, Any]]:
        """The messages a phase starts from: the stored conversation (``full``) or a fresh one."""
        if self.options.context != "full":
            return [{"role": "system", "content": system}]
        memo = self.memo(state, _Conversation)
        conv = memo.messages
        if not conv:
            conv.append({"role": "system", "content": system})
        open_call, memo.open_call = memo.open_call, False
        if open_call is not False:
            note = self._outcome_note(state)
            if open_call:
                conv.append({"role": "tool", "tool_call_id": open_call, "content": note})
            else:
                memo.note = note
        return conv

    def _user(self, state: State, text: str, images: list[tuple[str, Page]]) -> dict[str, Any]:
        note = ""
        if self.options.context == "full":
            memo = self.memo(state, _Conversation)
            note, memo.note = memo.note, ""
        content: list[dict[str, Any]] = [{"type": "text", "text": f"{note}\n\n{text}".strip()}]
        for label, page in images:
            if label:
                content.append({"type": "text", "text": label})
            content.append(self.image_part(page))
        return {"role": "user", "content": content}

    # -- one exchange with one corrective retry ---------------------------------------------------

    def _exchange(
        self,
        state: State,
        messages: list[dict[str, Any]],
        functions: list[dict[str, Any]],
        validate: Callable[[list[ParsedCall], Reply], tuple[ParsedCall | None, str | None]],
    ) -> tuple[ParsedCall | None, Reply | None, Usage, str | None]:
        """Ask, validate the call; on an unusable reply send one corrective message and ask again.

        Returns (call or None, last reply message, usage of both calls, the problem when no call was usable).
        """
        usage = Usage()
        problem = None
        message = None
        names = ", ".join(f["function"]["name"] for f in functions)
        for attempt in range(2):
            message = self.chat(messages, functions)
            usage = usage + message.usage
            calls = message.calls
            call, problem = validate(calls, message)
            first = calls[0] if calls else None
            reply: dict[str, Any] = {"role": "assistant", "content": message.content}
            if first is not None and first.native:
                reply["tool_calls"] = [{"id": first.call_id, "type": "function",
                                        "function": {"name": first.name, "arguments": first.raw or "{}"}}]
            messages.append(reply)
            if problem is None:
                if self.options.context == "full":
                    self.memo(state, _Conversation).open_call = first.call_id if first is not None and first.native else None
                return call, message, usage, None
            log.info("unusable model reply (%s)%s", problem, "; asking again" if attempt == 0 else "")
            if attempt == 1:
                break
            correction = render("corrective", problem=problem, names=names)
            if first is not None and first.native:
                messages.append({"role": "tool", "tool_call_id": first.call_id, "content": correction})
            else:
                messages.append({"role": "user", "content": correction})
        if self.options.context == "full":
            # the second unusable reply stays in the conversation; the next phase's note answers it
            self.memo(state, _Conversation).open_call = first.call_id if first is not None and first.native else None
        return None, message, usage, problem

    # -- the four questions -----------------------------------------------------------------------

    def phase_a_request(self, state: State) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The messages and functions of a Phase A request (in ``full`` context: the stored conversation)."""
        family = FAMILY.get(state.task, "document")
        system = render("decide", family=family, rules=answer_rules(_task(state.task)))
        functions = [ANSWER_FUNCTION] + [get_tool(n).spec() for n in state.available_tools]
        messages = self._conversation(state, system)
        text = self._situation(state)
        if self.options.context == "text":
            text = f"{self.history_text(state)}\n\n{text}".strip()
        messages.append(self._user(state, self._with_text_tools(text, functions), [("", state.page)]))
        return messages, functions

    def decide(self, state: State) -> Decision:
        """Phase A: call ``answer`` or one restoration tool still in ``state.available_tools``."""
        messages, functions = self.phase_a_request(state)

        def validate(calls: list[ParsedCall], message: Reply) -> tuple[ParsedCall | None, str | None]:
            if not calls:
                obj = parse_json_object(message.text)
                if obj is not None and "answer" in obj:  # a bare {"answer": ...} is an answer call
                    return ParsedCall("answer", obj), None
                return None, "the reply contains no function call"
            call = calls[0]
            if call.error:
                return None, f"{call.name}: {call.error}"
            if call.name == "answer":
                value = (call.arguments or {}).get("answer")
                if not isinstance(value, (str, int, float)):
                    return None, "answer needs an 'answer' argument holding the answer text"
                return call, None
            if call.name not in state.available_tools:
                offered = ", ".join(["answer"] + state.available_tools)
                return None, f"{call.name!r} is not an offered function; offered: {offered}"
            try:
                call.arguments = get_tool(call.name).check_args(call.arguments or {})
            except ToolError as err:
                return None, str(err)
            return call, None

        call, message, usage, problem = self._exchange(state, messages, functions, validate)
        content = _plain_text(message.content if message is not None else None)
        if call is None:
            forced = self.answer(state)
            return Answer(forced.text, forced.confidence,
                          f"forced answer after an unusable reply ({problem}). {forced.reasoning}".strip(),
                          usage + forced.usage)
        if call.name == "answer":
            args = call.arguments or {}
            confidence = CONFIDENCE.get(str(args.get("confidence", "medium")).strip().lower(), 0.5)
            reasoning = str(args.get("reasoning") or content)
            return Answer(str(args["answer"]).strip(), confidence, reasoning, usage)
        return UseTool(call.name, content, dict(call.arguments or {}), usage)

    def review(self, state: State, before: Page, after: Page) -> Review:
        """Phase B: show the page before and after the last tool; ``continue`` keeps it, ``rollback`` undoes it."""
        tool = next((s.tool for s in reversed(state.history) if s.phase == Phase.TOOL and s.action == Action.APPLIED), None) or "the tool"
        try:
            degradation = get_tool(tool).degradation
        except Exception:  # an unregistered name only changes the wording of the prompt
            degradation = "a degradation"
        functions = [CONTINUE_FUNCTION, ROLLBACK_FUNCTION]
        messages = self._conversation(state, render("review_system"))
        text = render("review", tool=tool, degradation=degradation, question=state.question)
        if self.options.context == "text":
            text = f"{self.history_text(state)}\n\n{text}".strip()
        messages.append(self._user(state, self._with_text_tools(text, functions),
                                   [("BEFORE the tool:", before), ("AFTER the tool:", after)]))

        def validate(calls: list[ParsedCall], message: Reply) -> tuple[ParsedCall | None, str | None]:
            if not calls:
                return None, "the reply contains no function call"
            call = calls[0]
            if call.error:
                return None, f"{call.name}: {call.error}"
            name = {"keep": "continue", "roll_back": "rollback"}.get(call.name, call.name)
            if name not in ("continue", "rollback"):
                return None, f"{call.name!r} is not an offered function; offered: continue, rollback"
            call.name = name
            return call, None

        call, message, usage, problem = self._exchange(state, messages, functions, validate)
        content = _plain_text(message.content if message is not None else None)
        if call is None:
            verdict = _verdict_from_text(content)
            if verdict == "continue":
                return Keep(f"read from text after an unusable reply ({problem}): {content[:200]}", usage)
            # An unchecked restoration is not kept: the previous page is the one known to be no worse.
            return Rollback(f"no usable verdict ({problem})", usage)
        if call.name == "continue":
            return Keep(content, usage)
        return Rollback(str((call.arguments or {}).get("reason") or content or "the model rolled back"), usage)

    def answer(self, state: State) -> Answer:
        """Answer from the current page with the baseline prompt (JSON ``{"answer": ...}``), no tools."""
        system = render("answer", family=FAMILY.get(state.task, "document"), rules=answer_rules(_task(state.task)))
        text = f"Question: {state.question}"
        if self.options.context != "none":
            text = f"{self.history_text(state)}\n\n{text}".strip()
        messages: list[dict[str, Any]] = [{"role": "system", "content": system},
                    {"role": "user", "content": [{"type": "text", "text": text}, self.image_part(state.page)]}]
        message = self.chat(messages)
        usage = message.usage
        content = message.content
        obj = parse_json_object(message.text)
        if obj is None:
            calls = message.calls
            if calls and calls[0].arguments and "answer" in calls[0].arguments:
                obj = calls[0].arguments
        if obj is not None and "answer" in obj:
            confidence = CONFIDENCE.get(str(obj.get("confidence", "")).lower(), 0.5)
            return Answer(str(obj["answer"]).strip(), confidence, str(obj.get("reasoning", "")), usage)
        text_answer = _answer_from_prose(content)
        if not text_answer:
            return Answer("", 0.0, "the model returned an empty reply", usage)
        return Answer(text_answer, 0.3, "answer read from a reply without the requested JSON", usage)

    def diagnose(self, state: State) -> Diagnosis:
        """List the degradations on the page (MLLM-Judge baseline), with the rotation for orientation."""
        messages: list[dict[str, Any]] = [{"role": "system", "content": render("diagnose")},
                    {"role": "user", "content": [{"type": "text", "text": "Which degradations does this page show?"},
                                                 self.image_part(state.page)]}]
        message = self.chat(messages)
        usage = message.usage
        content = message.text
        obj = parse_json_object(content)
        if obj is not None and isinstance(obj.get("degradations"), list):
            names = [str(d) for d in obj["degradations"]]
            rotation = obj.get("rotation")
        else:  # prose: take the degradation words it mentions
            names = re.findall(r"[a-zA-Zé]+", content)
            rotation = content if any(_degradation_name(n) == "orientation" for n in names) else None
        found = []
        for raw in names:
            name = _degradation_name(raw)
            if name and name not in found:
                found.append(name)
        rotate = _rotation_name(rotation)
        if rotate and "orientation" not in found:
            found.insert(0, "orientation")
        return Diagnosis(tuple(found), rotate if "orientation" in found else None, usage)

    # -- MACT roles: one prompt and one request per role call (docintent.brains.mact_model) ----------

    def plan(self, state: State, count: int = 1, feedback: Verdict | None = None,
             previous: tuple[Plan, ...] = ()) -> list[Plan]:
        """Planning: ``count`` plans in one ``submit_plans`` call."""
        return mact_model.plan(self, state, count, feedback, previous)

    def execute(self, state: State, plan: Plan, step: PlanStep, results: dict[str, Execution],
                candidate: int = 0, feedback: Verdict | None = None) -> Execution:
        """Execution of one step with the execution tools, ending in ``record``."""
        return mact_model.execute(self, state, plan, step, results, candidate, feedback)

    def judge(self, state: State, plan: Plan, results: dict[str, Execution]) -> Verdict:
        """Judgment: ``accept``, ``flag_plan`` or ``flag_execution``."""
        return mact_model.judge(self, state, plan, results)

    def conclude(self, state: State, runs: list[tuple[Plan, dict[str, Execution], Verdict]],
                 corrections: list[Correction]) -> Answer:
        """The answer role: a JSON answer from the process and its corrections."""
        return mact_model.conclude(self, state, runs, corrections)


# -- parsing helpers --------------------------------------------------------------------------------


def _task(task: str) -> str:
    return task if task in FAMILY else "doc"


def _plain_text(content: str | None) -> str:
    """Model text with any written-out function call removed (kept as the decision's reasoning)."""
    if not content:
        return ""
    text = re.sub(r"<tool_call>.*?(</tool_call>|$)", "", content, flags=re.S)
    text = re.sub(r"```.*?```", "", text, flags=re.S)
    text = re.sub(r"<think>.*?</think>", "", text, flags=re.S)
    text = text.strip()
    return "" if text.startswith("{") and text.endswith("}") else text


def _answer_from_prose(content: str) -> str:
    text = re.sub(r"<think>.*?</think>", "", content, flags=re.S).strip()
    match = re.search(r"(?im)^\s*(?:final\s+)?answer\s*[:：]\s*(.+)$", text)
    if match:
        text = match.group(1)
    text = text.strip().strip("`").strip()
    return text.strip('"').strip()


def _verdict_from_text(content: str) -> str | None:
    lowered = content.lower()
    if re.search(r"\broll\s*back\b|\brollback\b|\bworse\b", lowered):
        return "rollback"
    if re.search(r"\bcontinue\b|\bkeep\b", lowered):
        return "continue"
    return None


_DEGRADATION_WORDS = (
    ("orientation", ("orient", "rotat", "upside", "sideways")),
    ("warp", ("warp", "curl", "perspect", "fold", "bent", "distort")),
    ("moire", ("moir",)),
    ("blur", ("blur", "focus")),
    ("shadow", ("shadow", "lighting", "illumin")),
    ("appearance", ("appear", "contrast", "fade", "colour", "color", "stain")),
)


def _degradation_name(raw: str) -> str | None:
    word = raw.strip().lower()
    for name, stems in _DEGRADATION_WORDS:
        if any(s in word for s in stems):
            return name
    return None


def _rotation_name(value: Any) -> str | None:
    if value is None:
        return None
    match = re.search(r"(90|180|270)", str(value))
    return f"rotate_{match.group(1)}" if match else None
