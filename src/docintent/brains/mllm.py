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
:class:`ModelBrainOptions`. What the model is shown of a page (``context=``):

- ``image``: the page as an image (a vision-language model);
- ``text``: the page's OCR lines with their boxes, the lines holding the question's words first, within
  ``text_tokens`` (:mod:`docintent.brains.textcontext`): a model that reads no images makes the same decisions;
- ``auto`` (default): one small request with a test image finds out which, once per endpoint and model.

Tools go in the API's ``tools`` field until a reply shows the server dropped them (``native_tools=auto``); then
they are described in the prompt and the model answers with JSON actions. Every request's ``max_tokens`` is sized
to its phase (``phase_tokens``), and the chat-turn end markers are sent as stop sequences.

History strategies (``history=``):

- ``none``: every phase is a fresh conversation with the current image only;
- ``text`` (default): earlier decisions and reviews are summarised as text; only the current image is sent
  (Phase B: the page before and after the tool);
- ``full``: one growing conversation with every message and image so far.

Phase B review (``review=``):

- ``region`` (default): when Phase A names the evidence region (the optional ``region`` argument every
  restoration tool is offered with) or a zoom has read one, Phase B sends crops of that region before and
  after the tool, at the scale the whole page is sent at, plus a small thumbnail of the page with the region
  outlined; tools that move pixels (rotations, dewarping) and calls without a region are reviewed on the
  whole page;
- ``page``: the paper's comparison of the whole page before and after (ablation).

Image budget: ``max_side`` and ``max_pixels`` (default: Qwen-VL's recommended 1280 image tokens) cap every
image; ``image_budget`` caps the image tokens of one sample (Qwen-VL rule, 28x28 pixels per token): each image
may use at most half of what is left, so later images are downsized first (never below 64 tokens). A request the server refuses for its context is
sent once more with every image at half size; a review the server refuses counts as a rollback.
"""

from __future__ import annotations

import base64
import json
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

import cv2
import numpy as np
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import ConfigError, InvalidBoxError, ToolError
from ..io.encode import resize_longest, to_data_url
from ..page import Box, Page
from ..perception.degradations import get_degradation, parse_degradation
from ..perception.service import Perception
from ..settings import get_settings
from ..tools import TOOLS, get_tool, tools_for
from ..trace import Action, InspectStep, Phase
from ..vocabulary import INSPECTION
from . import mact_model
from .base import MactRoles, Restorer, State
from .chat import ChatModel
from .decisions import Answer, Change, Decision, Diagnosis, Keep, Review, Rollback, Usage, UseTool
from .endpoint import DEFAULT_TIMEOUT, PLACEHOLDER_KEY, Endpoint, Reply, RequestRejected
from .pricing import Price, PriceTable
from .probes import image_probe, tool_probe
from .prompts import PROMPT_VERSION, render, task_noun, task_rules
from .roles import Correction, Execution, Plan, PlanStep, Verdict
from .textcontext import damage_note, ocr_transcript, text_messages
from .tokens import image_tokens
from .toolcalls import ParsedCall, answer_from_prose, parse_json_object, strip_reasoning, verdict_from_text

log = logging.getLogger(__name__)

#: The ``confidence`` levels of the answer function, as numbers for :class:`Answer`.
CONFIDENCE = {"low": 0.3, "medium": 0.6, "high": 0.9}
#: The optional argument every restoration tool is offered with (``review=region``): where the question's
#: evidence is. Kept bare because it is repeated in every tool's schema; the situation text explains it once.
REGION_ARGUMENT = {"type": "array", "items": {"type": "number"}}
REGION_NOTE = ("With a restoration tool you may pass region=[x0, y0, x1, y1], the evidence's box as fractions (0-1) "
               "of this page: the review then compares that region.")
#: Qwen-VL's recommended ``max_pixels`` (1280 tokens of 28x28 pixels): the default cap on each image.
DEFAULT_MAX_PIXELS = 1280 * 28 * 28
#: Smallest image a budget may shrink an image to, in tokens (8x8 blocks of 28 px).
MIN_IMAGE_TOKENS = 64
#: Output tokens each phase needs at most (``phase_tokens``): one function call with a sentence of reasoning
#: (decide, execute), a verdict (review, judge), a JSON answer (answer, conclude, diagnose), a few short plans.
#: Measured replies of instruction-tuned models stay under a fifth of these; a reply that reaches one ran away.
PHASE_TOKENS = {"decide": 512, "review": 256, "answer": 384, "diagnose": 256, "plan": 1024, "execute": 512,
                "judge": 384, "conclude": 384}
#: Chat-turn end markers sent as stop sequences by default: a server whose chat template misses the model's
#: end-of-turn token otherwise lets the model write the next turns itself until max_tokens.
TURN_ENDS = ("<end_of_turn>", "<|im_end|>", "<|eot_id|>")

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
    """The model brain's memo for one question. ``full`` context: the conversation so far and the call whose
    outcome the next phase reports (``open_call`` is False when no call awaits its outcome, None for a call made
    in text (its outcome goes into the next user turn as ``note``), else the native call id). Every context: the
    evidence ``region`` Phase A named (with the size of the page it was named on) and the ``image_tokens`` sent."""

    messages: list[dict[str, Any]] = field(default_factory=list)
    open_call: str | None | bool = False
    note: str = ""
    region: tuple[Box, tuple[int, int]] | None = None
    image_tokens: int = 0


class ModelBrainOptions(BaseModel):
    """Options of :class:`ModelBrain`. Strings are converted (``"4096"`` -> 4096), so CLI values work as given."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["openai"] = "openai"
    model: str | None = Field(None, description="Model name; default DOCINTENT_MODEL, else the only model the server lists.")
    base_url: str | None = Field(None, description="Endpoint URL ending in /v1; default DOCINTENT_BASE_URL or OPENAI_BASE_URL.")
    api_key: str | None = Field(None, description="API key; default DOCINTENT_API_KEY or OPENAI_API_KEY; local servers need none.")
    history: Literal["text", "full", "none"] = Field(
        "text", description="What earlier steps each call carries: a text summary, the whole conversation, or none.")
    context: Literal["auto", "image", "text"] = Field(
        "auto", description="What the model is shown of a page: the image, or the OCR text lines with their boxes "
        "(for models that take no images); auto finds out with one small request the first time.")
    text_tokens: int = Field(1500, ge=100, description="Token budget of one page's OCR text (context=text); the lines "
                             "holding the question's words come first.")
    text_damage: bool = Field(True, description="With the OCR text context, state under each page's lines the damage "
                              "measured on its pixels (orientation, warp, blur, shadow, light, moire) and the tools that "
                              "restore it: a model that cannot see the page has no other way to judge it.")
    phase_tokens: bool = Field(True, description="Size each request's max_tokens to what its phase needs (at most "
                               "max_tokens), so a runaway reply cannot hold a small server for minutes; a model that "
                               "reasons before it answers gets max_tokens from its first reasoning reply on.")
    json_replies: bool | Literal["auto"] = Field(
        "auto", description="Ask for a JSON object (response_format json_object, grammar-constrained on llama.cpp) "
        "when tools are described in the prompt; auto: unless the server refuses it once.")
    stop: list[str] | None = Field(None, description="Stop sequences sent with every request (default: the chat-turn "
                                   "end markers some servers miss: <end_of_turn>, <|im_end|>, <|eot_id|>).")
    temperature: float = Field(0.0, description="Sampling temperature (the paper decodes greedily).")
    top_p: float = Field(1.0, description="Nucleus sampling mass.")
    max_tokens: int = Field(4096, ge=1, description="Most output tokens per call.")
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = Field(
        "max_tokens", description="Request field for max_tokens (OpenAI's reasoning models need max_completion_tokens).")
    timeout: float = Field(DEFAULT_TIMEOUT, gt=0,
                           description="Seconds to wait for one reply; a call that times out is retried "
                           "like any transient failure (max_retries).")
    max_retries: int = Field(4, ge=0, description="Retries after HTTP 429, 5xx or a timeout.")
    backoff: float = Field(1.0, ge=0, description="First retry wait in seconds (doubles each retry) when no Retry-After is given.")
    max_wait: float = Field(60.0, ge=0, description="Longest single wait between retries, Retry-After included.")
    max_side: int | None = Field(None, ge=28, description="Longest image side sent to the model; default DOCINTENT_MAX_SIDE (2048).")
    max_pixels: int = Field(DEFAULT_MAX_PIXELS, ge=0, description="Cap on width x height of each image sent "
                            "(default 1,003,520 = Qwen-VL's 1280 image tokens; 0: no cap, only max_side).")
    review: Literal["region", "page"] = Field(
        "region", description="Phase B: crops of the evidence region + a thumbnail (region), or whole pages (page).")
    thumbnail_side: int = Field(384, ge=28, description="Longest side of the page thumbnail a region review adds.")
    image_budget: int = Field(0, ge=0, description="Image tokens per sample (0: no budget); later images shrink first.")
    image_format: Literal["auto", "png", "jpeg"] = Field("auto", description="auto: PNG for line art, JPEG for photos.")
    jpeg_quality: int = Field(90, ge=1, le=100)
    native_tools: bool | Literal["auto"] = Field(
        "auto", description="Send tools in the API (true), describe them in the prompt as JSON actions (false), or "
        "auto: native until a reply shows the server dropped them, then JSON actions for the rest of the run.")

    @model_validator(mode="before")
    @classmethod
    def _history_alias(cls, data: Any) -> Any:
        """``context=full`` / ``context=none`` (before ``context`` named the page's form) mean ``history=...``."""
        if isinstance(data, dict) and data.get("context") in ("full", "none") and "history" not in data:
            data = dict(data)
            data["history"] = data.pop("context")
            log.warning("context=%s is now history=%s (context names what the model sees of a page: auto, image "
                        "or text)", data["history"], data["history"])
        return data
    price_in: float = Field(0.0, ge=0, description="$ per 1M prompt tokens (cost accounting).")
    price_out: float = Field(0.0, ge=0, description="$ per 1M completion tokens.")
    extra_body: dict[str, Any] | None = Field(None, description="Extra JSON fields for every request (server-specific).")


#: Options only the OpenAI endpoint reads (its transport, its retries, what request_extras sends it): refused
#: beside a ready ``chat_model``, which would silently ignore them.
ENDPOINT_OPTIONS = frozenset({"model", "base_url", "api_key", "temperature", "top_p", "max_tokens_param", "timeout",
                              "max_retries", "backoff", "max_wait", "extra_body", "stop", "json_replies"})


class ModelBrain(Restorer, MactRoles):
    """A :class:`Brain` backed by an OpenAI-compatible chat-completions endpoint with tool calling.

    ``ModelBrain(base_url="http://localhost:8000/v1", model="Qwen/Qwen2.5-VL-7B-Instruct")``; every keyword
    of :class:`ModelBrainOptions` is accepted. ``chat_model`` drives a model behind another API instead (any
    :class:`~docintent.brains.chat.ChatModel`: one class that translates the messages). ``client`` injects a
    ready ``openai.OpenAI`` client and
    ``prices`` a :class:`~docintent.brains.pricing.PriceTable`. ``usage`` and :attr:`cost` total every call.
    """

    name = "openai"
    prompt_version = PROMPT_VERSION
    Options = ModelBrainOptions

    def __init__(
        self,
        options: ModelBrainOptions | None = None,
        *,
        client: Any = None,
        prices: PriceTable | None = None,
        sleep: Callable[[float], None] = time.sleep,
        chat_model: ChatModel | None = None,
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
        self.max_side = opts.max_side or settings.max_side
        self._native: bool | None = None  # native_tools=auto: None until a reply shows whether the server parses calls
        self._sees: bool | None = None  # context=auto: None until the server is asked whether the model reads images
        self._reasons = False  # True once a reply carried reasoning: requests get max_tokens from then on
        self._json_ok: bool | None = None  # json_replies=auto: False once the server refused response_format
        self._transcripts: dict[tuple[str, str, int, bool], str] = {}
        own_price = Price(opts.price_in, opts.price_out)
        self.prices = prices or PriceTable(default=own_price)
        if chat_model is not None:  # a model behind another API (brains/chat.py): no OpenAI endpoint to build
            ignored = sorted(ENDPOINT_OPTIONS & opts.model_fields_set) + (["client"] if client is not None else []) + (
                ["sleep"] if sleep is not time.sleep else [])
            if ignored:
                raise ConfigError(
                    f"openai brain: {', '.join(ignored)} configure the OpenAI endpoint, which a ready chat_model "
                    "replaces: set them on the chat model (retries: Retrying(chat_model, RetryPolicy(max_retries=...)) "
                    "from docintent.brains.retrying)")
            self.base_url, self.api_key = "", ""
            self.endpoint: ChatModel = chat_model
            return
        self.base_url = (opts.base_url or settings.resolved_base_url() or "").rstrip("/")
        if not self.base_url:
            raise ConfigError(
                "openai brain: no endpoint; pass base_url=... (CLI: --brain-opt base_url=URL) "
                "or set DOCINTENT_BASE_URL or OPENAI_BASE_URL"
            )
        self.api_key = opts.api_key or settings.resolved_api_key() or PLACEHOLDER_KEY
        self.endpoint = Endpoint(
            self.base_url, opts.model or settings.model, self.api_key, timeout=opts.timeout,
            max_retries=opts.max_retries, backoff=opts.backoff, max_wait=opts.max_wait, temperature=opts.temperature,
            top_p=opts.top_p, max_tokens=opts.max_tokens, max_tokens_param=opts.max_tokens_param,
            extra_body=opts.extra_body, client=client, sleep=sleep,
        )

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
        return self.prices.cost(self.endpoint.configured_model, self.usage)

    def chat(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]] | None = None, *,
             max_tokens: int | None = None, phase: str | None = None) -> Reply:
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
        if self._text_context():
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
            if err.kind != "context" or not _shrink_images(messages):
                raise
            log.warning("%s; sending it once more with images at half size", err)
            reply = self.endpoint.chat(messages, tools, max_tokens=max_tokens, **extra)
        if reply.reasoning and not self._reasons and self.options.phase_tokens:
            self._reasons = True
            log.info("%s reasons before it answers: every request now gets max_tokens=%d",
                     self.endpoint.where, self.options.max_tokens)
        return reply

    def request_extras(self, tools: list[dict[str, Any]] | None, functions: list[dict[str, Any]] | None,
                       phase: str | None) -> dict[str, Any]:
        """The fields a request carries beyond messages, tools and max_tokens: ``stop`` (``stop``, default
        :data:`TURN_ENDS`) and ``response_format`` when a JSON object is wanted (:meth:`_json_wanted`). None for
        a model behind another API (a :class:`~docintent.brains.chat.ChatModel` takes neither)."""
        if not isinstance(self.endpoint, Endpoint):
            return {}
        stop = self.options.stop if self.options.stop is not None else list(TURN_ENDS)
        extra: dict[str, Any] = {"stop": stop} if stop else {}
        if self._json_wanted(tools, functions, phase):
            schema = _action_schema(functions, phase)
            extra["response_format"] = {"type": "json_object", **({"schema": schema} if schema else {})}
        return extra

    def _json_wanted(self, tools: list[dict[str, Any]] | None, functions: list[dict[str, Any]] | None,
                     phase: str | None) -> bool:
        """Whether this request asks for a JSON object: ``json_replies`` on (or auto and not refused), and the
        reply is a JSON action (tools described in the prompt) or a JSON answer in the JSON-action mode."""
        setting = self.options.json_replies
        if setting is False or (setting == "auto" and self._json_ok is False) or tools:
            return False
        return bool(functions) or (not self.native_tools and phase in ("answer", "diagnose", "conclude"))

    def budget(self, phase: str | None) -> int:
        """Output tokens a request of ``phase`` may use: :data:`PHASE_TOKENS` (at most ``max_tokens``) with
        ``phase_tokens`` on and a model that does not reason first, else ``max_tokens``."""
        most = self.options.max_tokens
        if phase is None or not self.options.phase_tokens or self._reasons:
            return most
        return min(most, PHASE_TOKENS.get(phase, most))

    def _ask(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]] | None = None,
             phase: str | None = None) -> Reply:
        """:meth:`chat`; a reply cut by the token limit while the model was still reasoning, before it said
        anything usable, is asked again with more room (at temperature 0 the same budget would be cut at the
        same place). A reply cut without reasoning ran away: more room would only let it run longer."""
        budget = self.budget(phase)
        reply = self.chat(messages, functions, max_tokens=budget, phase=phase)
        if reply.truncated and not reply.calls and parse_json_object(reply.text) is None and reply.reasoning:
            more = max(self.options.max_tokens, 2 * budget)
            log.warning("%s: the reply was cut at max_tokens=%d; asking again with %d", self.endpoint.where, budget, more)
            again = self.chat(messages, functions, max_tokens=more, phase=phase)
            again.usage = reply.usage + again.usage
            return again
        return reply

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
        log.warning("%s: the model made no function call with tools offered in the API; describing them in the "
                    "prompt from now on (native_tools=false)", self.endpoint.where)
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

    def _text_context(self) -> bool:
        return self.options.context == "text" or (self.options.context == "auto" and self._sees is False)

    def close(self) -> None:
        self.endpoint.close()

    # -- message building -------------------------------------------------------------------------

    def image_part(self, page: Page, max_side: int | None = None, question: str | None = None) -> dict[str, Any]:
        """The page as an ``image_url`` content part (longest side and pixel count capped; cached by hash), or,
        for a model that reads no images, as a text part: its OCR lines with their boxes (:meth:`transcript`),
        the lines holding ``question``'s words first."""
        if not self.sees_images():
            return {"type": "text", "text": self.transcript(page, question)}
        opts = self.options
        side = min(max_side or self.max_side, self.max_side)
        return self.endpoint.image_part(page, side, max_pixels=opts.max_pixels, fmt=opts.image_format,
                                        quality=opts.jpeg_quality)

    def transcript(self, page: Page, question: str | None = None) -> str:
        """What a text-only model is shown of ``page``: :func:`ocr_transcript` within ``text_tokens`` (kept for the
        page state and question, so every phase that shows the page shows the same text)."""
        key = (page.hash, question or "", self.options.text_tokens, self.options.text_damage)
        known = self._transcripts.get(key)
        if known is None:
            from ..ocr import get_engine

            known = ocr_transcript(get_engine().read(page), question or "", self.options.text_tokens)
            if self.options.text_damage:
                known = f"{known}\n{self.damage(page)}"
            if len(self._transcripts) >= 64:
                self._transcripts.pop(next(iter(self._transcripts)))
            self._transcripts[key] = known
        return known

    @staticmethod
    def damage(page: Page) -> str:
        """The damage measured on ``page``'s pixels, as a text-only model is told it (:func:`damage_note`): the
        rotation that makes it upright, then every family past its threshold with the tools that restore it."""
        perception = Perception()
        return damage_note(perception.upright_fix(page), perception.above(page), perception.threshold,
                           lambda family: get_degradation(family).plain or family, tools_for)

    def image_tokens(self, page: Page, max_side: int | None = None) -> int:
        """Tokens the page costs as sent (after ``max_side`` and ``max_pixels``), by the Qwen-VL rule."""
        w, h = _sent_size(page, min(max_side or self.max_side, self.max_side), self.options.max_pixels)
        return image_tokens(w, h, max_side=max(w, h))

    def _image(self, state: State, page: Page, max_side: int | None = None) -> dict[str, Any]:
        """:meth:`image_part` within the sample's ``image_budget``: at most half of what is left, so later
        images shrink first and the sample never exceeds the budget."""
        budget = self.options.image_budget
        side = min(max_side or self.max_side, self.max_side)
        if budget:
            memo = self.memo(state, _Conversation)
            used = memo.image_tokens
            allowance = max(MIN_IMAGE_TOKENS, (budget - used) // 2)
            side = min(side, max(page.width, page.height))
            while side > 28 and self.image_tokens(page, side) > allowance:
                side = max(28, int(side * min(0.95, (allowance / self.image_tokens(page, side)) ** 0.5)))
            memo.image_tokens = used + self.image_tokens(page, side)
        return self.image_part(page, side, question=state.question)

    def _tool_spec(self, name: str) -> dict[str, Any]:
        """A tool's function spec; restoration tools also take the optional evidence ``region``."""
        tool = get_tool(name)
        spec = tool.spec()
        if self.options.review != "region" or not _restores(name):
            return spec
        parameters = dict(spec["function"]["parameters"])
        parameters["properties"] = {**parameters.get("properties", {}), "region": REGION_ARGUMENT}
        return {"type": "function", "function": {**spec["function"], "parameters": parameters}}

    def with_text_tools(self, text: str, functions: list[dict[str, Any]]) -> str:
        """``text`` with ``functions`` described in it when they are not sent natively (JSON actions)."""
        if self.native_tools or not functions:
            return text
        listing = json.dumps([f["function"] for f in functions], indent=1)
        return f"{text}\n\n{render('text_tools', tools=listing)}"

    def _situation(self, state: State) -> str:
        tools = ", ".join(state.available_tools) if state.available_tools else "none (answer now)"
        lines = [f"Question: {state.question}", f"Round {state.round + 1} of at most {state.max_rounds}. "
                 f"Restoration tools you can still call: {tools}."]
        if self.options.review == "region" and any(_restores(n) for n in state.available_tools):
            lines.append(REGION_NOTE)
        if state.round + 1 >= state.max_rounds:
            lines.append("This is the last round: call answer.")
        return "\n".join(lines)

    @staticmethod
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
        if isinstance(step, InspectStep):
            return f"{step.tool}: {step.evidence if step.evidence is not None else step.reason}"
        return "Done."

    def _conversation(self, state: State, system: str) -> list[dict[str, Any]]:
        """The messages a phase starts from: the stored conversation (``full``) or a fresh one."""
        if self.options.history != "full":
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

    def _user(self, state: State, text: str, images: list[tuple[str, Page, int | None]]) -> dict[str, Any]:
        note = ""
        if self.options.history == "full":
            memo = self.memo(state, _Conversation)
            note, memo.note = memo.note, ""
        content: list[dict[str, Any]] = [{"type": "text", "text": f"{note}\n\n{text}".strip()}]
        for label, page, side in images:
            if label:
                content.append({"type": "text", "text": label})
            content.append(self._image(state, page, side))
        return {"role": "user", "content": content}

    # -- one exchange with one corrective retry ---------------------------------------------------

    def exchange(
        self,
        state: State,
        messages: list[dict[str, Any]],
        functions: list[dict[str, Any]],
        validate: Callable[[ParsedCall | None, Reply], tuple[ParsedCall | None, str | None]],
        phase: str | None = None,
    ) -> tuple[ParsedCall | None, list[Reply], Usage, str | None]:
        """Ask, validate the call; on an unusable reply send one corrective message and ask again.

        The call validated is the first one naming an offered function (else the first one). A reply cut by
        ``max_tokens`` is asked again with more room (:meth:`_ask`) instead of being corrected.
        Returns (call or None, every reply, usage of every call, the problem when no call was usable).
        """
        usage = Usage()
        problem = None
        replies: list[Reply] = []
        offered = [f["function"]["name"] for f in functions]
        first = None
        for attempt in range(2):
            sent_natively = self.native_tools
            reply = self._ask(messages, functions, phase)
            replies.append(reply)
            usage = usage + reply.usage
            first = reply.call_for(offered)
            call, problem = validate(first, reply)
            messages.append(_replayed(reply, first))
            if problem is None:
                if self.options.history == "full":
                    self.memo(state, _Conversation).open_call = _open_call(first)
                return call, replies, usage, None
            dropped = sent_natively and self.tools_dropped(reply)
            if reply.truncated and not dropped:
                problem = (f"the reply was cut by the output-token limit (finish_reason=length, max_tokens="
                           f"{self.budget(phase)}) before it made a usable call; raise max_tokens "
                           "(reasoning models need 8192 or more)")
                log.warning("%s: %s", self.endpoint.where, problem)
                break
            log.info("unusable model reply (%s)%s", problem, "; asking again" if attempt == 0 else "")
            if attempt == 1:
                break
            correction = render("corrective", problem=problem, names=", ".join(offered))
            if dropped:
                correction = self.with_text_tools(correction, functions)
            open_id = _open_call(first)
            if open_id:
                messages.append({"role": "tool", "tool_call_id": open_id, "content": correction})
            else:
                messages.append({"role": "user", "content": correction})
        if self.options.history == "full":
            # the last unusable reply stays in the conversation; the next phase's note answers it
            self.memo(state, _Conversation).open_call = _open_call(first)
        return None, replies, usage, problem

    # -- the four questions -----------------------------------------------------------------------

    def phase_a_request(self, state: State) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The messages and functions of a Phase A request (in ``full`` context: the stored conversation)."""
        system = render("decide", family=task_noun(state.task), rules=task_rules(state.task))
        functions = [ANSWER_FUNCTION] + [self._tool_spec(n) for n in state.available_tools]
        messages = self._conversation(state, system)
        text = self._situation(state)
        if self.options.history == "text":
            text = f"{self.history_text(state)}\n\n{text}".strip()
        messages.append(self._user(state, self.with_text_tools(text, functions), [("", state.page, None)]))
        return messages, functions

    def decide(self, state: State) -> Decision:
        """Phase A: call ``answer`` or one restoration tool still in ``state.available_tools``."""
        messages, functions = self.phase_a_request(state)
        region: dict[str, Any] = {}

        def validate(call: ParsedCall | None, reply: Reply) -> tuple[ParsedCall | None, str | None]:
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
            if call.name not in state.available_tools:
                offered = ", ".join(["answer"] + state.available_tools)
                return None, f"{call.name!r} is not an offered function; offered: {offered}"
            arguments = dict(call.arguments or {})
            region["value"] = arguments.pop("region", None)
            try:
                call.arguments = get_tool(call.name).check_args(arguments)
            except ToolError as err:
                return None, str(err)
            return call, None

        call, replies, usage, problem = self.exchange(state, messages, functions, validate, "decide")
        reply = replies[-1]
        content = _plain_text(reply.content)
        if call is None:
            forced = self.answer(state)
            return Answer(forced.text, forced.confidence,
                          f"forced answer after an unusable reply ({problem}). {forced.reasoning}".strip(),
                          usage + forced.usage)
        others = [c.name for c in reply.calls if c is not call]
        if others:  # one tool runs per round; the model sees the outcome and may call the next one then
            log.info("the model called %d functions at once; running %s only", len(others) + 1, call.name)
            content = f"{content} (also called {', '.join(others)}; one function runs per round)".strip()
        if call.name == "answer":
            args = call.arguments or {}
            confidence = CONFIDENCE.get(str(args.get("confidence", "medium")).strip().lower(), 0.5)
            reasoning = str(args.get("reasoning") or content)
            return Answer(str(args["answer"]).strip(), confidence, reasoning, usage)
        box = _region(region.get("value"))
        if box is not None:
            self.memo(state, _Conversation).region = (box, state.page.size)
        return UseTool(call.name, content, dict(call.arguments or {}), usage)

    def evidence_region(self, state: State, page: Page) -> Box | None:
        """The evidence region on ``page``: the last one Phase A named, else the last zoom's, when it was named
        on a page of the same size (a rotation or dewarping since then invalidates it)."""
        named = self.memo(state, _Conversation).region
        if named is not None and named[1] == page.size:
            return named[0]
        for evidence in reversed(state.evidence):
            box = getattr(evidence, "box", None)
            if isinstance(box, Box) and getattr(evidence, "page_hash", None) == page.hash:
                return box
        return None

    def phase_b_request(self, state: State, before: Page, after: Page, tool: str | None = None,
                        region: Box | None = None) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The messages and functions of a Phase B review of ``tool`` (default: the last tool applied) that
        turned ``before`` into ``after``; ``region`` overrides the evidence region (:meth:`evidence_region`)."""
        tool = tool or next((s.tool for s in reversed(state.history) if s.phase == Phase.TOOL and s.action == Action.APPLIED),
                            None) or "the tool"
        try:
            degradation = get_tool(tool).degradation
        except Exception:  # an unregistered name only changes the wording of the prompt
            degradation = "a degradation"
        functions = [CONTINUE_FUNCTION, ROLLBACK_FUNCTION]
        messages = self._conversation(state, render("review_system"))
        if self.options.review == "page":
            region = None
        elif region is None:
            region = self.evidence_region(state, before)
        moves = tool in TOOLS and get_tool(tool).geometric
        if region is not None and (moves or before.size != after.size):
            region = None  # pixels moved: the same crop would not show the same text
        images: list[tuple[str, Page, int | None]]
        if region is None:
            text = render("review", tool=tool, degradation=degradation, question=state.question)
            images = [("BEFORE the tool:", before, None), ("AFTER the tool:", after, None)]
        else:
            box = [round(v, 3) for v in region.as_tuple()]
            text = render("review_region", tool=tool, degradation=degradation, question=state.question, box=box)
            # crops at the scale the whole page is sent at: the review sees the pixels the answer is read from
            scale = _sent_size(before, self.max_side, self.options.max_pixels)[0] / before.width
            crops = [crop_region(before, region), crop_region(after, region)]
            side = max(28, round(max(crops[0].width, crops[0].height) * scale))
            images = [("BEFORE the tool (evidence region):", crops[0], side),
                      ("AFTER the tool (evidence region):", crops[1], side),
                      ("The page after the tool, evidence region outlined:",
                       thumbnail(after, region, self.options.thumbnail_side), self.options.thumbnail_side)]
        if self.options.history == "text":
            text = f"{self.history_text(state)}\n\n{text}".strip()
        messages.append(self._user(state, self.with_text_tools(text, functions), images))
        return messages, functions

    def review(self, state: State, change: Change) -> Review:
        """Phase B: compare the evidence before and after the tool of ``change``; ``continue`` keeps it,
        ``rollback`` undoes it. A review the server refuses (too many images, context) counts as a rollback."""
        messages, functions = self.phase_b_request(state, change.before, change.after, change.tool)
        sent = len(messages)

        def validate(call: ParsedCall | None, reply: Reply) -> tuple[ParsedCall | None, str | None]:
            if call is None:
                return None, "the reply contains no function call"
            if call.error:
                return None, f"{call.name}: {call.error}"
            name = {"keep": "continue", "roll_back": "rollback"}.get(call.name, call.name)
            if name not in ("continue", "rollback"):
                return None, f"{call.name!r} is not an offered function; offered: continue, rollback"
            call.name = name
            return call, None

        try:
            call, replies, usage, problem = self.exchange(state, messages, functions, validate, "review")
        except RequestRejected as err:
            del messages[sent - 1:]  # a full conversation must not keep a request the server refused
            # The restored page was never checked, so the page before the tool stays: the known-good one.
            return Rollback(f"review could not be sent, the page before the tool is kept: {err}")
        content = _plain_text(replies[-1].content)
        if call is None:
            # the latest reply that states a verdict in words (the corrective turn may only apologise)
            verdicts = [v for v in (verdict_from_text(r.text) for r in replies) if v is not None]
            verdict = verdicts[-1] if verdicts else None
            if verdict == "continue":
                return Keep(f"read from text after an unusable reply ({problem}): {content[:200]}", usage)
            # An unchecked restoration is not kept: the previous page is the one known to be no worse.
            return Rollback(f"no usable verdict ({problem})", usage)
        if call.name == "continue":
            return Keep(content, usage)
        return Rollback(str((call.arguments or {}).get("reason") or content or "the model rolled back"), usage)

    def answer(self, state: State) -> Answer:
        """Answer from the current page with the baseline prompt (JSON ``{"answer": ...}``), no tools."""
        system = render("answer", family=task_noun(state.task), rules=task_rules(state.task))
        text = f"Question: {state.question}"
        if self.options.history != "none":
            text = f"{self.history_text(state)}\n\n{text}".strip()
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": system},
            {"role": "user", "content": [{"type": "text", "text": text}, self._image(state, state.page)]},
        ]
        reply = self._ask(messages, phase="answer")
        usage = reply.usage
        obj = parse_json_object(reply.text)
        if obj is None:
            call = reply.call_for(["answer"])
            if call is not None and call.arguments and "answer" in call.arguments:
                obj = call.arguments
        if obj is not None and "answer" in obj:
            confidence = CONFIDENCE.get(str(obj.get("confidence", "")).lower(), 0.5)
            return Answer(str(obj["answer"]).strip(), confidence, str(obj.get("reasoning", "")), usage)
        text_answer = answer_from_prose(reply.text)
        if not text_answer:
            why = "the model returned an empty reply"
            if reply.truncated:
                why = (f"the reply was cut at max_tokens (finish_reason=length) before the answer; "
                       f"raise max_tokens (now {self.options.max_tokens})")
            return Answer("", 0.0, why, usage)
        return Answer(text_answer, 0.3, "answer read from a reply without the requested JSON", usage)

    def diagnose(self, state: State) -> Diagnosis:
        """List the degradations on the page (MLLM-Judge baseline), with the rotation for orientation."""
        messages: list[dict[str, Any]] = [{"role": "system", "content": render("diagnose")},
                    {"role": "user", "content": [{"type": "text", "text": "Which degradations does this page show?"},
                                                 self._image(state, state.page)]}]
        reply = self._ask(messages, phase="diagnose")
        usage = reply.usage
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


# -- parsing and image helpers ----------------------------------------------------------------------


def _action_schema(functions: list[dict[str, Any]] | None, phase: str | None = None) -> dict[str, Any] | None:
    """The JSON schema of a reply that asks for a JSON object: one JSON action naming an offered function (its
    ``name`` one of theirs, its ``arguments`` theirs with strings and arrays bounded), or, without functions, an
    ``answer`` (the answer phases; None for another JSON reply, e.g. a diagnosis). llama.cpp's server turns it into
    a grammar, so even a small model writes a call it can parse; a server that refuses the schema is not asked for
    a JSON object again (``json_replies``)."""
    if not functions:
        if phase not in ("answer", "conclude"):
            return None
        return {"type": "object", "properties": {"answer": _bounded({"type": "string"})}, "required": ["answer"],
                "additionalProperties": False}
    actions = []
    for spec in functions:
        function = spec["function"]
        parameters = function.get("parameters") or {"type": "object", "properties": {}}
        arguments = {"type": "object", "properties": {k: _bounded(v) for k, v in (parameters.get("properties") or {}).items()},
                     "required": list(parameters.get("required") or []), "additionalProperties": False}
        actions.append({"type": "object", "properties": {"name": {"const": function["name"]}, "arguments": arguments},
                        "required": ["name", "arguments"], "additionalProperties": False})
    return {"oneOf": actions}


#: Longest string a JSON action's argument may hold (a grammar-constrained small model otherwise fills it up to
#: max_tokens), and the most numbers in an array argument (a region is four).
ACTION_STRING_CHARS, ACTION_ARRAY_ITEMS = 200, 4


def _bounded(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with its strings and arrays bounded (:data:`ACTION_STRING_CHARS`, :data:`ACTION_ARRAY_ITEMS`)."""
    if schema.get("type") == "string" and "enum" not in schema:
        return {**schema, "maxLength": ACTION_STRING_CHARS}
    if schema.get("type") == "array":
        return {**schema, "maxItems": ACTION_ARRAY_ITEMS}
    return schema


def _restores(name: str) -> bool:
    """True for a registered restoration tool (not an inspection tool such as zoom)."""
    try:
        return get_tool(name).degradation != INSPECTION
    except Exception:  # an unregistered name offers nothing to restore
        return False


def _replayed(reply: Reply, call: ParsedCall | None) -> dict[str, Any]:
    """The assistant message that records ``reply`` in the conversation.

    A native call is sent back with its arguments re-encoded; a call whose arguments were not valid JSON is
    sent back as text, because servers (vLLM) parse replayed arguments and refuse the whole request.
    """
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if call is not None and call.native:
        if call.error is None:
            message["tool_calls"] = [{"id": call.call_id, "type": "function",
                                      "function": {"name": call.name, "arguments": json.dumps(call.arguments or {})}}]
        else:
            message["content"] = f"{reply.content}\n{call.name}({call.raw})".strip()
    return message


def _open_call(call: ParsedCall | None) -> str | None:
    """The id of a replayed native call that a tool message must answer, else None."""
    return call.call_id if call is not None and call.native and call.error is None else None


def _region(value: Any) -> Box | None:
    """A region argument as a :class:`Box` ([0, 1] fractions or 0-1000), None when absent or unusable."""
    if value is None:
        return None
    try:
        box = Box.from_model(value)
    except (InvalidBoxError, TypeError, ValueError):
        log.info("ignoring an unusable region argument %r", value)
        return None
    return box if box.area < 0.95 else None  # the whole page is no region


def crop_region(page: Page, region: Box, margin: float = 0.02) -> Page:
    """The region with a margin (``margin`` of the page, at least a tenth of the region's size each side)."""
    dx = max(margin, 0.1 * region.width)
    dy = max(margin, 0.1 * region.height)
    box = Box.clamped(region.x0 - dx, region.y0 - dy, region.x1 + dx, region.y1 + dy)
    x0, y0, x1, y1 = box.to_pixels(page.width, page.height)
    return page.derive(np.ascontiguousarray(page.pixels[y0:y1, x0:x1]), f"crop({x0},{y0},{x1},{y1})")


def thumbnail(page: Page, region: Box, side: int) -> Page:
    """The page scaled to ``side`` with ``region`` outlined in red (what the crops show, in context)."""
    small = resize_longest(page, side)
    pixels = small.pixels.copy()
    x0, y0, x1, y1 = region.to_pixels(small.width, small.height)
    cv2.rectangle(pixels, (x0, y0), (max(x0, x1 - 1), max(y0, y1 - 1)), (220, 0, 0), max(1, side // 192))
    return small.derive(pixels, "outline(region)")


def _sent_size(page: Page, side: int, max_pixels: int | None) -> tuple[int, int]:
    """(width, height) of ``page`` as :meth:`ModelBrain.image_part` sends it."""
    scale = min(1.0, side / max(page.width, page.height))
    w, h = max(1, round(page.width * scale)), max(1, round(page.height * scale))
    if max_pixels and w * h > max_pixels:
        shrink = (max_pixels / (w * h)) ** 0.5
        w, h = max(1, int(w * shrink)), max(1, int(h * shrink))
    return w, h


def _shrink_images(messages: list[dict[str, Any]]) -> bool:
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


def _plain_text(content: str | None) -> str:
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
