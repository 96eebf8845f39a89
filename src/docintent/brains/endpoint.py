"""One client for every OpenAI-compatible chat-completions endpoint docintent talks to.

The model brain, ``docintent doctor`` and the retrieval planner all send their requests through
:class:`Endpoint`; nothing else in the package builds an ``openai.OpenAI`` client. It owns:

- **retries**: HTTP 429 and 5xx, a reply that is not a chat completion (an HTML page, a body that is not JSON,
  an empty ``choices`` list) and timeouts are retried with backoff, honouring ``Retry-After`` /
  ``retry-after-ms``; the SDK's own retries are off. A timeout is retried once only, so one hung call fails
  after about ``2 x timeout`` seconds instead of waiting through every retry.
- **error mapping**: every failure is a :class:`~docintent.errors.ModelEndpointError` naming the URL and model;
  a rejected request is a :class:`RequestRejected` whose ``kind`` says what was wrong (context too small, too
  many images, no vision, tools, temperature, ...) and whose message ends with the one fix for it.
- **token usage**: each :class:`Reply` carries its :class:`~docintent.brains.base.Usage`; ``usage`` totals them.
- **images**: :meth:`Endpoint.image_part` encodes a page with :mod:`docintent.io.encode`.
- **parsing**: a :class:`Reply` holds the text with reasoning removed, the function calls (native or written
  as text) and ``finish_reason``.

>>> from docintent.testing.fake_openai import FakeOpenAI, tool_call
>>> with FakeOpenAI([tool_call("answer", answer="42")]) as server:
...     reply = Endpoint(server.base_url, server.model).chat([{"role": "user", "content": "Hi"}])
>>> reply.calls[0].name, reply.calls[0].arguments, reply.finish_reason
('answer', {'answer': '42'}, 'tool_calls')
"""

from __future__ import annotations

import email.utils
import logging
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import ModelEndpointError
from ..io.encode import cap_pixels, resize_longest, to_data_url
from ..page import Page
from . import ratelimit
from .base import Usage
from .tokens import request_tokens
from .toolcalls import ParsedCall, calls_from_message, strip_reasoning

log = logging.getLogger(__name__)

#: Sent as the API key when none is configured: local servers ignore it, the SDK insists on one.
PLACEHOLDER_KEY = "no-key-needed"
#: Seconds to wait for one reply by default (``timeout``); reasoning models on slow hardware may need more.
DEFAULT_TIMEOUT = 60.0


class RequestRejected(ModelEndpointError):
    """The server refused a request (HTTP 4xx other than 401/403/404/429).

    ``kind``: "context" (prompt + reply exceed the context), "image_limit" (more images than the server allows
    per request), "vision" (no image input), "tools", "temperature", "max_tokens_param", "arguments" (the server
    could not parse replayed tool-call arguments) or "other". ``status`` is the HTTP status, ``text`` the
    server's own message.
    """

    def __init__(self, message: str, *, status: int, kind: str, text: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.text = text


@dataclass
class Reply:
    """One chat-completion reply.

    ``content``: the message text as sent; ``text``: the same without reasoning (everything up to the last
    ``</think>``, and ``<think>`` blocks); ``reasoning``: the reasoning text (from ``reasoning_content`` or the
    think block); ``calls``: function calls, native first, else those written in ``text``; ``finish_reason``:
    "stop", "tool_calls", "length" (cut by ``max_tokens``), ...; ``usage``: tokens of this call.
    """

    content: str
    text: str
    calls: list[ParsedCall]
    finish_reason: str | None
    usage: Usage
    reasoning: str = ""
    message: Any = field(default=None, repr=False)

    @property
    def truncated(self) -> bool:
        """True when the server stopped the reply at the output-token limit."""
        return self.finish_reason == "length"

    def call_for(self, offered: list[str] | tuple[str, ...] | set[str]) -> ParsedCall | None:
        """The first call naming an ``offered`` function, else the first call, else None."""
        for call in self.calls:
            if call.name in offered:
                return call
        return self.calls[0] if self.calls else None


def _sentence(text: str) -> str:
    """``text`` without trailing full stops or spaces, so messages built from it end in exactly one."""
    return text.strip().rstrip(".").rstrip()


def error_text(err: Any) -> str:
    """The server's own message from an SDK error (``{"error": {"message": ...}}`` bodies and plain ones)."""
    body = getattr(err, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return str(inner["message"])
        if isinstance(inner, str):
            return inner
        if isinstance(body.get("detail"), str):
            return str(body["detail"])
    if isinstance(body, str) and body.strip():
        return body.strip()[:300]
    return str(getattr(err, "message", None) or err)


#: (kind, pattern on the server's message); the first that matches decides the hint.
_REJECTION_KINDS = (
    ("image_limit", r"at most \d+ image|limit[_ -]mm[_ -]per[_ -]prompt|too many images|only (?:one|1|\d+) images?|"
                    r"maximum (?:number of )?images|images? per (?:prompt|request|message)|multiple images"),
    ("arguments", r"expecting property name|expecting value|unterminated string|invalid (?:json|control character)|"
                  r"extra data"),
    ("max_tokens_param", r"max_tokens.*(?:not supported|unsupported).*max_completion_tokens|use 'max_completion_tokens'"),
    ("temperature", r"temperature"),
    ("context", r"context|too long|maximum.*tokens|max_model_len|n_ctx|prompt is too|exceeds? the (?:model|limit)"),
    ("vision", r"image|multimodal|vision|mm_processor|not a multimodal"),
    ("tools", r"tool|function"),
)


def rejection_kind(text: str) -> str:
    """What a server's rejection message is about (see :class:`RequestRejected` ``kind``)."""
    for kind, pattern in _REJECTION_KINDS:
        if re.search(pattern, text, re.I):
            return kind
    return "other"


class Endpoint:
    """An OpenAI-compatible chat-completions endpoint with retries, error hints and usage accounting.

    ``Endpoint(base_url, model, api_key, timeout=60, max_retries=4)``; ``model=None`` uses the only model the
    server lists. ``temperature``, ``top_p``, ``max_tokens`` (sent as ``max_tokens_param``) and ``extra_body``
    are the defaults of every :meth:`chat`; ``max_tokens=None`` leaves the field out. ``client`` injects a
    ready ``openai.OpenAI``; ``sleep`` replaces :func:`time.sleep` between retries (tests).
    """

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        max_retries: int = 4,
        backoff: float = 1.0,
        max_wait: float = 60.0,
        temperature: float | None = 0.0,
        top_p: float | None = None,
        max_tokens: int | None = None,
        max_tokens_param: str = "max_tokens",
        extra_body: dict[str, Any] | None = None,
        client: Any = None,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self.api_key = api_key or PLACEHOLDER_KEY
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_wait = max_wait
        self.temperature = temperature
        self.top_p = top_p
        self.max_tokens = max_tokens
        self.max_tokens_param = max_tokens_param
        self.extra_body = extra_body
        self.usage = Usage()
        self._model = model
        self._client = client
        self._sleep = sleep
        self._urls: dict[tuple[Any, ...], str] = {}

    # -- connection --------------------------------------------------------------------------------

    @property
    def client(self) -> Any:
        """The ``openai.OpenAI`` client (its retries off: this class retries and honours Retry-After)."""
        if self._client is None:
            openai = _sdk()
            self._client = openai.OpenAI(base_url=self.base_url, api_key=self.api_key, max_retries=0, timeout=self.timeout)
        return self._client

    @property
    def configured_model(self) -> str | None:
        """The model name given in the configuration (None: the endpoint's only model is used)."""
        return self._model

    @property
    def where(self) -> str:
        """``URL (model NAME)`` for messages."""
        return f"{self.base_url} (model {self._model or 'not set'})"

    @property
    def model(self) -> str:
        """The model name; when none is configured, the only model the endpoint lists."""
        if self._model is None:
            served = self.served_models()
            if len(served) != 1:
                raise ModelEndpointError(
                    f"{self.base_url}: no model configured and the server lists {len(served)} "
                    f"({', '.join(served) or 'none'}); pass model=... or set DOCINTENT_MODEL"
                )
            self._model = served[0]
        return self._model

    @model.setter
    def model(self, name: str) -> None:
        self._model = name

    def served_models(self) -> list[str]:
        """Model names the endpoint lists at ``/models``."""
        openai = _sdk()

        try:
            return [m.id for m in self.client.models.list()]
        except openai.APIConnectionError as err:
            raise self._unreachable(err) from None
        except openai.APIStatusError as err:
            raise ModelEndpointError(
                f"{self.base_url}: listing models failed with HTTP {err.status_code}: {_sentence(error_text(err))}"
            ) from None
        except (ValueError, AttributeError, TypeError) as err:  # a body that is not the models list
            raise ModelEndpointError(
                f"{self.base_url}: /models did not return a model list ({type(err).__name__}); "
                "is the URL the API's, ending in /v1?"
            ) from None

    def close(self) -> None:
        """Close the HTTP client."""
        if self._client is not None and hasattr(self._client, "close"):
            self._client.close()

    # -- errors ------------------------------------------------------------------------------------

    def _unreachable(self, err: Exception) -> ModelEndpointError:
        cause = err.__cause__ or err.__context__ or err
        return ModelEndpointError(
            f"cannot reach the model endpoint {self.where}: {type(cause).__name__}: {_sentence(str(cause))}. "
            "Is the server running, and does the URL end in /v1?"
        )

    def retry_wait(self, err: Any, attempt: int) -> float:
        """Seconds to wait before retry ``attempt``: Retry-After (or retry-after-ms) when given, else backoff."""
        headers = getattr(getattr(err, "response", None), "headers", None) or {}
        wait = None
        if headers.get("retry-after-ms"):
            try:
                wait = float(headers["retry-after-ms"]) / 1000.0
            except ValueError:
                wait = None
        if wait is None and headers.get("retry-after"):
            value = headers["retry-after"]
            try:
                wait = float(value)
            except ValueError:
                try:
                    parsed = email.utils.parsedate_to_datetime(value)
                except (TypeError, ValueError):
                    parsed = None
                if parsed is not None:
                    wait = parsed.timestamp() - time.time()
        if wait is None or wait < 0:
            wait = self.backoff * (2**attempt)
        return min(wait, self.max_wait)

    def hint(self, kind: str, *, max_tokens: int | None = None, images: int | None = None) -> str:
        """The one fix for a rejection of ``kind`` (see :class:`RequestRejected`)."""
        budget = max_tokens if max_tokens is not None else self.max_tokens
        if kind == "context":
            reserved = f" (max_tokens={budget} of it is reserved for the reply)" if budget else ""
            return (f"The prompt, its images and the reply do not fit the model's context{reserved}: lower max_pixels, "
                    "max_side or max_tokens, or raise the server's context length (vLLM --max-model-len, SGLang "
                    "--context-length, llama.cpp -c, Ollama num_ctx)")
        if kind == "image_limit":
            sent = f" ({images} were sent)" if images else ""
            return (f"The server accepts fewer images per request than docintent sends{sent}: start vLLM with "
                    "--limit-mm-per-prompt '{\"image\": 4}' (a Phase B review sends two or three)")
        if kind == "vision":
            return "The model or server may not accept images: serve a vision-language model"
        if kind == "tools":
            return "The server may not support tool calls: see `docintent doctor`, or use native_tools=false"
        if kind == "temperature":
            return (f"This model rejects temperature={self.temperature:g} (reasoning models accept only their default): "
                    "pass temperature=1 and max_tokens_param=max_completion_tokens")
        if kind == "max_tokens_param":
            return "This model wants max_completion_tokens: pass max_tokens_param=max_completion_tokens"
        if kind == "arguments":
            return "The server could not parse a tool call sent back to it: report this with the trace"
        return ""

    def _status_error(self, err: Any, body: dict[str, Any]) -> ModelEndpointError:
        status = err.status_code
        text = _sentence(error_text(err))
        if status in (401, 403):
            return ModelEndpointError(
                f"{self.where} rejected the API key (HTTP {status}): {text}. "
                "Set api_key=..., DOCINTENT_API_KEY or OPENAI_API_KEY"
            )
        if status == 404:
            try:
                served = self.served_models()
            except ModelEndpointError:
                served = []
            if served and self._model not in served:
                return ModelEndpointError(
                    f"model {self._model!r} is not served at {self.base_url}; it serves: {', '.join(served)}"
                )
            return ModelEndpointError(f"{self.where} answered HTTP 404: {text}. Check the base URL (usually ending in /v1)")
        kind = rejection_kind(text)
        hint = self.hint(kind, max_tokens=body.get(self.max_tokens_param), images=_count_images(body.get("messages")))
        message = f"{self.where} rejected the request (HTTP {status}): {text}."
        if hint:
            message += f" {hint}."
        return RequestRejected(message, status=status, kind=kind, text=text)

    # -- requests ----------------------------------------------------------------------------------

    def _create(self, body: dict[str, Any]) -> Any:
        """One chat completion, retrying what may pass (429, 5xx, a non-completion reply, one timeout)."""
        openai = _sdk()

        attempts = self.max_retries + 1
        timeouts = 0
        last = ""
        for attempt in range(attempts):
            wait = None
            # Under a run-wide limiter (benchmark executors) wait for a slot; without one this returns at once.
            # The client is built first: building it may take longer than the slot lasts.
            client = self.client
            reserved = ratelimit.wait_turn(lambda: request_tokens(body).total)
            try:
                completion = client.chat.completions.create(**body)
            except openai.APITimeoutError:
                timeouts += 1
                last = f"no reply within {self.timeout:g} s"
                if timeouts > 1:  # a server that hung twice will hang again: stop here
                    attempts = attempt + 1
                    break
                wait = self.retry_wait(None, attempt)
            except openai.APIConnectionError as err:
                raise self._unreachable(err) from None
            except openai.APIStatusError as err:
                if err.status_code != 429 and err.status_code < 500:
                    raise self._status_error(err, body) from None
                last = f"HTTP {err.status_code}: {_sentence(error_text(err))}"
                wait = self.retry_wait(err, attempt)
                if err.status_code == 429:
                    wait = ratelimit.backoff(wait)  # the whole run pauses and slows down, not this call alone
            except ValueError as err:  # json.JSONDecodeError: the body is not JSON
                last = f"the reply body is not JSON ({err})"
                wait = self.retry_wait(None, attempt)
            else:
                problem = _not_a_completion(completion)
                if problem is None:
                    ratelimit.done(reserved, getattr(getattr(completion, "usage", None), "total_tokens", 0) or 0)
                    return completion
                last = problem
                wait = self.retry_wait(None, attempt)
            if attempt + 1 < attempts:
                log.warning("%s: %s; retry %d of %d in %.1f s", self.base_url, last, attempt + 1, attempts - 1, wait)
                self._sleep(wait)
        hint = ""
        if "not JSON" in last or "not a chat completion" in last:
            hint = " Is base_url the API's URL ending in /v1 (not a web page or a login proxy)?"
        elif "no choices" in last:
            hint = " The server produced no completion: check its log."
        elif "no reply within" in last:
            hint = " Raise timeout (reasoning models and long replies need more) or check that the server is not stuck."
        raise ModelEndpointError(f"{self.where}: gave up after {attempts} attempt(s); last: {_sentence(last)}.{hint}")

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
    ) -> Reply:
        """Send ``messages`` (offering ``tools`` natively when given) and return the parsed :class:`Reply`.

        ``max_tokens`` / ``temperature`` / ``top_p`` override the endpoint's defaults for this call.
        Raises :class:`~docintent.errors.ModelEndpointError` (:class:`RequestRejected` for a refused request).
        """
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        temperature = self.temperature if temperature is None else temperature
        if temperature is not None:
            body["temperature"] = temperature
        top_p = self.top_p if top_p is None else top_p
        if top_p is not None:
            body["top_p"] = top_p
        budget = self.max_tokens if max_tokens is None else max_tokens
        if budget is not None:
            body[self.max_tokens_param] = budget
        if tools:
            body["tools"] = tools
        if self.extra_body:
            body["extra_body"] = self.extra_body
        completion = self._create(body)
        choice = completion.choices[0]
        message = choice.message
        u = getattr(completion, "usage", None)
        usage = Usage(int(getattr(u, "prompt_tokens", 0) or 0), int(getattr(u, "completion_tokens", 0) or 0), 1)
        self.usage = self.usage + usage
        content = getattr(message, "content", None) or ""
        text, thought = strip_reasoning(content)
        reasoning = _reasoning_field(message) or thought
        calls = calls_from_message(message, text=text)
        return Reply(content, text, calls, getattr(choice, "finish_reason", None), usage, reasoning, message)

    # -- images ------------------------------------------------------------------------------------

    def image_part(
        self, page: Page, max_side: int | None = None, *, max_pixels: int | None = None, fmt: str = "auto",
        quality: int = 90,
    ) -> dict[str, Any]:
        """``page`` as an ``image_url`` content part: longest side <= ``max_side`` (default DOCINTENT_MAX_SIDE),
        at most ``max_pixels`` pixels, encoded by :func:`docintent.io.encode.to_data_url` (cached by page hash)."""
        key = (page.hash, max_side, max_pixels, fmt, quality)
        url = self._urls.get(key)
        if url is None:
            small = resize_longest(page, max_side)
            if max_pixels:
                small = cap_pixels(small, max_pixels)
            url = to_data_url(small, fmt, quality=quality)
            if len(self._urls) > 64:
                self._urls.clear()
            self._urls[key] = url
        return {"type": "image_url", "image_url": {"url": url}}


def _sdk() -> Any:
    """The ``openai`` package, imported on first use."""
    import openai  # local for start-up speed: the SDK takes a second or more to import; offline runs never need it

    return openai


def _count_images(messages: Any) -> int:
    count = 0
    for message in messages or []:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            count += sum(1 for part in content if isinstance(part, dict) and part.get("type") == "image_url")
    return count


def _not_a_completion(completion: Any) -> str | None:
    """Why a 200 reply is not a usable chat completion, or None when it is one."""
    if isinstance(completion, (str, bytes)):
        start = completion[:60] if isinstance(completion, str) else completion[:60].decode("utf-8", "replace")
        return f"the reply is not a chat completion (it starts {start.strip()!r})"
    choices = getattr(completion, "choices", None)
    if choices is None:
        return f"the reply is not a chat completion ({type(completion).__name__})"
    if not choices:
        return "the reply has no choices"
    if getattr(choices[0], "message", None) is None:
        return "the reply's first choice has no message"
    return None


def _reasoning_field(message: Any) -> str:
    """Reasoning a server returns beside the content (vLLM/SGLang ``reasoning_content``, others ``reasoning``)."""
    for name in ("reasoning_content", "reasoning"):
        value = getattr(message, name, None)
        if value is None:
            extra = getattr(message, "model_extra", None) or {}
            value = extra.get(name)
        if isinstance(value, str) and value:
            return value
    return ""


def parse_json_reply(content: str) -> dict[str, Any]:
    """The first JSON object of a reply after its reasoning; raises ValueError when there is none."""
    from .toolcalls import parse_json_object

    text, _ = strip_reasoning(content)
    obj = parse_json_object(text)
    if obj is None:
        raise ValueError("the reply holds no JSON object")
    return obj


__all__ = ["DEFAULT_TIMEOUT", "Endpoint", "PLACEHOLDER_KEY", "Reply", "RequestRejected", "error_text",
           "parse_json_reply", "rejection_kind"]
