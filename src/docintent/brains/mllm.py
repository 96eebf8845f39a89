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

import time
from collections.abc import Callable
from typing import Any

from ..errors import ConfigError
from ..page import Box, Page
from ..settings import Settings, get_settings
from ..tools import TOOLS, get_tool
from . import mact_model, replies
from .base import MactRoles, Restorer, State
from .chat import ChatModel, Reply
from .decisions import Answer, Change, Decision, Diagnosis, Review, Rollback, Usage, UseTool
from .endpoint import PLACEHOLDER_KEY, Endpoint, RequestRejected
from .messages import (
    ANSWER_FUNCTION,
    CONTINUE_FUNCTION,
    ROLLBACK_FUNCTION,
    Conversation,
    Shown,
    after_history,
    answer_messages,
    diagnose_messages,
    history_text,
    last_applied,
    outcome_note,
    review_prompt,
    situation,
    tool_spec,
    user_message,
)
from .modellink import PHASE_TOKENS, ModelLink, Validate
from .modeloptions import ENDPOINT_OPTIONS, ModelBrainOptions, brain_options
from .pageviews import PageViews, measured_damage
from .pricing import Price, PriceTable
from .prompts import PROMPT_VERSION, render, task_noun, task_rules
from .roles import Correction, Execution, Plan, PlanStep, Verdict
from .toolcalls import ParsedCall


class ModelBrain(Restorer, MactRoles):
    """A :class:`Brain` backed by an OpenAI-compatible chat-completions endpoint with tool calling.

    ``ModelBrain(base_url="http://localhost:8000/v1", model="Qwen/Qwen2.5-VL-7B-Instruct")``; every keyword
    of :class:`ModelBrainOptions` is accepted. ``chat_model`` drives a model behind another API instead (any
    :class:`~docintent.brains.chat.ChatModel`: one class that translates the messages). ``client`` injects a
    ready ``openai.OpenAI`` client and
    ``prices`` a :class:`~docintent.brains.pricing.PriceTable`. ``usage`` and :attr:`cost` total every call.

    The brain is the policy (which phase asks what, what a review compares, what each history keeps, what an
    unusable reply costs) over its ``link`` (:mod:`~docintent.brains.modellink`: requests) and ``pages``
    (:mod:`~docintent.brains.pageviews`), with :mod:`~docintent.brains.messages` and :mod:`~docintent.brains.replies`.
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
        self.options = brain_options(options, kwargs)
        settings = get_settings()
        opts = self.options
        self.max_side = opts.max_side or settings.max_side
        self.prices = prices or PriceTable(default=Price(opts.price_in, opts.price_out))
        self.base_url, self.api_key, endpoint = _connect(opts, settings, client, sleep, chat_model)
        self.link = ModelLink(endpoint, opts)
        self.pages = PageViews(endpoint, opts, self.max_side, self.link.sees_images)

    # -- the model and what it cost -----------------------------------------------------------------

    @property
    def endpoint(self) -> ChatModel:
        """The chat model every request goes to."""
        return self.link.endpoint

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

    def close(self) -> None:
        self.endpoint.close()

    # -- requests and pages, as the link and the page views make them -------------------------------

    def chat(
        self,
        messages: list[dict[str, Any]],
        functions: list[dict[str, Any]] | None = None,
        *,
        max_tokens: int | None = None,
        phase: str | None = None,
    ) -> Reply:
        """Send ``messages`` and return the reply (:meth:`ModelLink.chat`)."""
        return self.link.chat(messages, functions, max_tokens=max_tokens, phase=phase)

    def request_extras(
        self, tools: list[dict[str, Any]] | None, functions: list[dict[str, Any]] | None, phase: str | None
    ) -> dict[str, Any]:
        """A request's fields beyond messages, tools and max_tokens (:meth:`ModelLink.request_extras`)."""
        return self.link.request_extras(tools, functions, phase)

    def budget(self, phase: str | None) -> int:
        """Output tokens a request of ``phase`` may use (:meth:`ModelLink.budget`)."""
        return self.link.budget(phase)

    @property
    def native_tools(self) -> bool:
        """Whether tools go in the API's ``tools`` field (:attr:`ModelLink.native_tools`)."""
        return self.link.native_tools

    def tools_dropped(self, reply: Reply) -> bool:
        """Whether ``reply`` shows the server dropped the tools after all (:meth:`ModelLink.tools_dropped`)."""
        return self.link.tools_dropped(reply)

    def sees_images(self) -> bool:
        """Whether the model reads images (:meth:`ModelLink.sees_images`)."""
        return self.link.sees_images()

    def with_text_tools(self, text: str, functions: list[dict[str, Any]]) -> str:
        """``text`` with ``functions`` described in it unless sent natively (:meth:`ModelLink.with_text_tools`)."""
        return self.link.with_text_tools(text, functions)

    def image_part(self, page: Page, max_side: int | None = None, question: str | None = None) -> dict[str, Any]:
        """The page as a content part: an image, or its OCR text (:meth:`PageViews.image_part`)."""
        return self.pages.image_part(page, max_side, question)

    def transcript(self, page: Page, question: str | None = None) -> str:
        """What a text-only model is shown of ``page`` (:meth:`PageViews.transcript`)."""
        return self.pages.transcript(page, question)

    @staticmethod
    def damage(page: Page) -> str:
        """The damage measured on ``page``'s pixels, as a text-only model is told it (:func:`measured_damage`)."""
        return measured_damage(page)

    def image_tokens(self, page: Page, max_side: int | None = None) -> int:
        """Tokens the page costs as sent (:meth:`PageViews.image_tokens`)."""
        return self.pages.image_tokens(page, max_side)

    @staticmethod
    def history_text(state: State) -> str:
        """Earlier decisions and reviews as short text lines (:func:`~docintent.brains.messages.history_text`)."""
        return history_text(state)

    def exchange(
        self,
        state: State,
        messages: list[dict[str, Any]],
        functions: list[dict[str, Any]],
        validate: Validate,
        phase: str | None = None,
    ) -> tuple[ParsedCall | None, list[Reply], Usage, str | None]:
        """One exchange with one corrective retry (:meth:`ModelLink.exchange`); in a ``full`` conversation the
        last reply's call, usable or not, stays open until the next phase's note answers it."""
        call, answered, usage, problem, unanswered = self.link.exchange(messages, functions, validate, phase)
        if self.options.history == "full":
            self.memo(state, Conversation).open_call = unanswered
        return call, answered, usage, problem

    # -- what each phase sends: the history strategy and the image budget ---------------------------

    def _conversation(self, state: State, system: str) -> list[dict[str, Any]]:
        """The messages a phase starts from: the stored conversation (``full``) or a fresh one."""
        if self.options.history != "full":
            return [{"role": "system", "content": system}]
        return self.memo(state, Conversation).resume(system, outcome_note(state))

    def _user(self, state: State, text: str, pages: list[Shown]) -> dict[str, Any]:
        """A user turn showing ``pages`` (a ``full`` conversation's outcome note first)."""
        note = self.memo(state, Conversation).take_note() if self.options.history == "full" else ""
        return user_message(note, text, [(label, self._image(state, page, side)) for label, page, side in pages])

    def _image(self, state: State, page: Page, max_side: int | None = None) -> dict[str, Any]:
        """:meth:`image_part` within the sample's ``image_budget`` (:meth:`PageViews.within_budget`)."""
        side = min(max_side or self.max_side, self.max_side)
        if self.options.image_budget:
            memo = self.memo(state, Conversation)
            side = self.pages.within_budget(page, side, memo.image_tokens)
            memo.image_tokens += self.image_tokens(page, side)
        return self.image_part(page, side, question=state.question)

    # -- the four questions -----------------------------------------------------------------------

    def phase_a_request(self, state: State) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The messages and functions of a Phase A request (in ``full`` context: the stored conversation)."""
        system = render("decide", family=task_noun(state.task), rules=task_rules(state.task))
        functions = [ANSWER_FUNCTION] + [tool_spec(n, self.options.review) for n in state.available_tools]
        messages = self._conversation(state, system)
        text = situation(state, self.options.review)
        if self.options.history == "text":
            text = after_history(state, text)
        messages.append(self._user(state, self.with_text_tools(text, functions), [("", state.page, None)]))
        return messages, functions

    def decide(self, state: State) -> Decision:
        """Phase A: call ``answer`` or one restoration tool still in ``state.available_tools``; after an unusable
        reply, the baseline answer."""
        messages, functions = self.phase_a_request(state)
        check = replies.DecisionCheck(state.available_tools)
        call, answered, usage, problem = self.exchange(state, messages, functions, check, "decide")
        if call is None:
            forced = self.answer(state)
            return Answer(
                forced.text,
                forced.confidence,
                f"forced answer after an unusable reply ({problem}). {forced.reasoning}".strip(),
                usage=usage + forced.usage,
            )
        decision = replies.decision(call, answered[-1], usage)
        if isinstance(decision, UseTool):
            box = replies.region_box(check.region)
            if box is not None:
                self.memo(state, Conversation).region = (box, state.page.size)
        return decision

    def evidence_region(self, state: State, page: Page) -> Box | None:
        """The evidence region on ``page``: the last one Phase A named, else the last zoom's, when it was named
        on a page of the same size (a rotation or dewarping since then invalidates it)."""
        named = self.memo(state, Conversation).region
        if named is not None and named[1] == page.size:
            return named[0]
        for evidence in reversed(state.evidence):
            box = getattr(evidence, "box", None)
            if isinstance(box, Box) and getattr(evidence, "page_hash", None) == page.hash:
                return box
        return None

    def phase_b_request(
        self, state: State, before: Page, after: Page, tool: str | None = None, region: Box | None = None
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The messages and functions of a Phase B review of ``tool`` (default: the last tool applied) that
        turned ``before`` into ``after``; ``region`` overrides the evidence region (:meth:`evidence_region`)."""
        tool = tool or last_applied(state)
        functions = [CONTINUE_FUNCTION, ROLLBACK_FUNCTION]
        messages = self._conversation(state, render("review_system"))
        if self.options.review == "page":
            region = None
        elif region is None:
            region = self.evidence_region(state, before)
        moves = tool in TOOLS and get_tool(tool).geometric
        if region is not None and (moves or before.size != after.size):
            region = None  # pixels moved: the same crop would not show the same text
        opts = self.options
        text, pages = review_prompt(
            state.question, tool, before, after, region, self.max_side, opts.max_pixels, opts.thumbnail_side
        )
        if opts.history == "text":
            text = after_history(state, text)
        messages.append(self._user(state, self.with_text_tools(text, functions), pages))
        return messages, functions

    def review(self, state: State, change: Change) -> Review:
        """Phase B: compare the evidence before and after the tool of ``change``; ``continue`` keeps it,
        ``rollback`` undoes it. A review the server refuses (too many images, context) counts as a rollback."""
        messages, functions = self.phase_b_request(state, change.before, change.after, change.tool)
        sent = len(messages)
        try:
            call, answered, usage, problem = self.exchange(state, messages, functions, replies.check_verdict, "review")
        except RequestRejected as err:
            del messages[sent - 1 :]  # a full conversation must not keep a request the server refused
            # The restored page was never checked, so the page before the tool stays: the known-good one.
            return Rollback(f"review could not be sent, the page before the tool is kept: {err}")
        return replies.verdict(call, answered, usage, problem)

    def answer(self, state: State) -> Answer:
        """Answer from the current page with the baseline prompt (JSON ``{"answer": ...}``), no tools."""
        messages = answer_messages(state, self._image(state, state.page), self.options.history != "none")
        return replies.answer(self.link.ask(messages, phase="answer"), self.options.max_tokens)

    def diagnose(self, state: State) -> Diagnosis:
        """List the degradations on the page (MLLM-Judge baseline), with the rotation for orientation."""
        return replies.diagnosis(self.link.ask(diagnose_messages(self._image(state, state.page)), phase="diagnose"))

    # -- MACT roles: one prompt and one request per role call (docintent.brains.mact_model) ----------

    def plan(
        self, state: State, count: int = 1, feedback: Verdict | None = None, previous: tuple[Plan, ...] = ()
    ) -> list[Plan]:
        """Planning: ``count`` plans in one ``submit_plans`` call."""
        return mact_model.plan(self, state, count, feedback, previous)

    def execute(
        self,
        state: State,
        plan: Plan,
        step: PlanStep,
        results: dict[str, Execution],
        candidate: int = 0,
        feedback: Verdict | None = None,
    ) -> Execution:
        """Execution of one step with the execution tools, ending in ``record``."""
        return mact_model.execute(self, state, plan, step, results, candidate, feedback)

    def judge(self, state: State, plan: Plan, results: dict[str, Execution]) -> Verdict:
        """Judgment: ``accept``, ``flag_plan`` or ``flag_execution``."""
        return mact_model.judge(self, state, plan, results)

    def conclude(
        self, state: State, runs: list[tuple[Plan, dict[str, Execution], Verdict]], corrections: list[Correction]
    ) -> Answer:
        """The answer role: a JSON answer from the process and its corrections."""
        return mact_model.conclude(self, state, runs, corrections)


def _connect(
    opts: ModelBrainOptions,
    settings: Settings,
    client: Any,
    sleep: Callable[[float], None],
    chat_model: ChatModel | None,
) -> tuple[str, str, ChatModel]:
    """(base_url, api_key, the chat model) the options describe: ``chat_model`` as it is (refusing the options
    only the OpenAI endpoint reads, which it would silently ignore), else an :class:`Endpoint` to ``base_url``."""
    if chat_model is not None:  # a model behind another API (brains/chat.py): no OpenAI endpoint to build
        ignored = (
            sorted(ENDPOINT_OPTIONS & opts.model_fields_set)
            + (["client"] if client is not None else [])
            + (["sleep"] if sleep is not time.sleep else [])
        )
        if ignored:
            raise ConfigError(
                f"openai brain: {', '.join(ignored)} configure the OpenAI endpoint, which a ready chat_model "
                "replaces: set them on the chat model (retries: Retrying(chat_model, RetryPolicy(max_retries=...)) "
                "from docintent.brains.retrying)"
            )
        return "", "", chat_model
    base_url = (opts.base_url or settings.resolved_base_url() or "").rstrip("/")
    if not base_url:
        raise ConfigError(
            "openai brain: no endpoint; pass base_url=... (CLI: --brain-opt base_url=URL) "
            "or set DOCINTENT_BASE_URL or OPENAI_BASE_URL"
        )
    api_key = opts.api_key or settings.resolved_api_key() or PLACEHOLDER_KEY
    endpoint = Endpoint(
        base_url,
        opts.model or settings.model,
        api_key,
        timeout=opts.timeout,
        max_retries=opts.max_retries,
        backoff=opts.backoff,
        max_wait=opts.max_wait,
        temperature=opts.temperature,
        top_p=opts.top_p,
        max_tokens=opts.max_tokens,
        max_tokens_param=opts.max_tokens_param,
        extra_body=opts.extra_body,
        client=client,
        sleep=sleep,
    )
    return base_url, api_key, endpoint


__all__ = ["PHASE_TOKENS", "ModelBrain", "ModelBrainOptions"]
