"""One client for every OpenAI-compatible chat-completions endpoint docintent talks to.

The model brain, ``docintent doctor`` and the retrieval planner all send their requests through
:class:`Endpoint`; nothing else in the package builds an ``openai.OpenAI`` client. An Endpoint is the
:class:`OpenAIChat` transport (one attempt per request) inside :class:`~docintent.brains.retrying.Retrying`
(the attempts), so:

- **retries** are the wrapper's, under its :class:`~docintent.brains.retrying.RetryPolicy`: the transport calls
  HTTP 429 :class:`~docintent.errors.RateLimited`, HTTP 5xx, a reply that is not a chat completion (an HTML
  page, a body that is not JSON, an empty ``choices`` list) a :class:`~docintent.errors.TransientError`
  carrying the ``Retry-After`` / ``retry-after-ms`` it read, and a timeout a
  :class:`~docintent.errors.ModelTimeout`; the wrapper retries them up to ``max_retries`` times, the same rules
  as for a model behind any other API. The SDK's own retries are off.
- **two ways to wait**: :meth:`Endpoint.chat` is synchronous (the SDK's ``openai.OpenAI``);
  :meth:`Endpoint.achat` is the same request as a coroutine (``httpx2.AsyncClient``, raising the SDK's own
  exceptions). Both end in one reading of the outcome (``OpenAIChat._check``) and one set of retry rules, so
  they give the same replies and the same errors. When an :class:`~docintent.brains.eventloop.EventLoop` is
  installed (``bench --concurrency N``), each attempt of :meth:`~Endpoint.chat` runs on it, so every request
  of the process shares one loop and one connection pool per server.
- **error mapping**: every failure is a :class:`~docintent.errors.ModelEndpointError` naming the URL and model;
  a rejected request is a :class:`RequestRejected` whose ``kind`` says what was wrong (context too small, too
  many images, no vision, tools, temperature, ...) and whose message ends with the one fix for it.
- **token usage**: each :class:`Reply` carries its :class:`~docintent.brains.base.Usage`; ``usage`` totals them.
- **images**: :meth:`Endpoint.image_part` encodes a page with :mod:`docintent.io.encode`, once per page state
  and settings for the whole process.
- **parsing**: a :class:`Reply` holds the text with reasoning removed, the function calls (native or written
  as text) and ``finish_reason``.

>>> from docintent.testing.fake_openai import FakeOpenAI, tool_call
>>> with FakeOpenAI([tool_call("answer", answer="42")]) as server:
...     reply = Endpoint(server.base_url, server.model).chat([{"role": "user", "content": "Hi"}])
>>> reply.calls[0].name, reply.calls[0].arguments, reply.finish_reason
('answer', {'answer': '42'}, 'tool_calls')
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from typing import Any

from .._version import __version__
from ..errors import ModelEndpointError, ModelTimeout, RateLimited, TransientError
from ..io.encode import cap_pixels, resize_longest, to_data_url
from ..page import Page
from ..redaction import public_url, register_secret, register_url
from . import eventloop
from .base import Usage
from .chat import Reply
from .retrying import Retrying, RetryPolicy, retry_after_seconds
from .tokens import data_url_size, request_tokens
from .toolcalls import calls_from_message, strip_reasoning

#: Sent as the API key when none is configured: local servers ignore it, the SDK insists on one.
PLACEHOLDER_KEY = "no-key-needed"
#: Seconds to wait for one reply by default (``timeout``); reasoning models on slow hardware may need more.
DEFAULT_TIMEOUT = 60.0


class RequestRejected(ModelEndpointError):
    """The server refused a request (HTTP 4xx other than 401/403/404/429).

    ``kind``: "context" (prompt + reply exceed the context), "image_limit" (more images than the server allows
    per request), "vision" (no image input), "tools", "temperature", "stop" (stop sequences refused),
    "max_tokens_param", "arguments" (the server
    could not parse replayed tool-call arguments) or "other". ``status`` is the HTTP status, ``text`` the
    server's own message.
    """

    def __init__(self, message: str, *, status: int, kind: str, text: str) -> None:
        super().__init__(message)
        self.status = status
        self.kind = kind
        self.text = text


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
    (
        "image_limit",
        r"at most \d+ image|limit[_ -]mm[_ -]per[_ -]prompt|too many images|only (?:one|1|\d+) images?|"
        r"maximum (?:number of )?images|images? per (?:prompt|request|message)|multiple images",
    ),
    (
        "arguments",
        r"expecting property name|expecting value|unterminated string|invalid (?:json|control character)|"
        r"extra data",
    ),
    (
        "max_tokens_param",
        r"max_tokens.*(?:not supported|unsupported).*max_completion_tokens|use 'max_completion_tokens'",
    ),
    ("temperature", r"temperature"),
    ("stop", r"'stop'|\bstop\b.*(?:not supported|unsupported|at most|invalid)|stop sequences?"),
    ("context", r"context|too long|maximum.*tokens|max_model_len|n_ctx|prompt is too|exceeds? the (?:model|limit)"),
    ("vision", r"image|multimodal|vision|mm_processor|not a multimodal"),
    ("tools", r"tool|function"),
)


#: An HTTP 500 that is a refused request, not a server failure (llama-cpp-python's request validation).
_INVALID_REQUEST = re.compile(r"\d+ validation errors? |Input should be a valid|Field required", re.I)


def rejection_kind(text: str) -> str:
    """What a server's rejection message is about (see :class:`RequestRejected` ``kind``)."""
    for kind, pattern in _REJECTION_KINDS:
        if re.search(pattern, text, re.I):
            return kind
    return "other"


class OpenAIChat:
    """One request at a time to an OpenAI-compatible chat-completions endpoint: the transport of :class:`Endpoint`.

    It sends a request once and says how it failed with docintent's errors: :class:`~docintent.errors.RateLimited`
    (HTTP 429), :class:`~docintent.errors.TransientError` (5xx, a reply that is not a chat completion, a body that
    is not JSON), :class:`~docintent.errors.ModelTimeout`, each with the server's ``Retry-After``; a refused
    request is a :class:`RequestRejected` and an unreachable server a :class:`~docintent.errors.ModelEndpointError`
    naming the fix. It never retries: :class:`~docintent.brains.retrying.Retrying` does (:class:`Endpoint` is the
    two together).

    ``OpenAIChat(base_url, model, api_key, timeout=60)``; ``model=None`` uses the only model the server lists.
    ``temperature``, ``top_p``, ``max_tokens`` (sent as ``max_tokens_param``) and ``extra_body`` are the
    defaults of every :meth:`chat`; ``max_tokens=None`` leaves the field out. ``client`` injects a ready
    ``openai.OpenAI`` (its requests then stay synchronous).
    """

    def __init__(
        self,
        base_url: str,
        model: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        temperature: float | None = 0.0,
        top_p: float | None = None,
        max_tokens: int | None = None,
        max_tokens_param: str = "max_tokens",
        extra_body: dict[str, Any] | None = None,
        client: Any = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        # Credentials in the URL or the key never appear in a message, a log line or a trace.
        register_url(self.base_url)
        register_secret(api_key)
        #: The URL as messages show it: its user and password masked.
        self.public_url = public_url(self.base_url) or ""
        self.api_key = api_key or PLACEHOLDER_KEY
        self.timeout = timeout
        self.temperature = temperature
        self.top_p = top_p
        self.max_tokens = max_tokens
        self.max_tokens_param = max_tokens_param
        self.extra_body = extra_body
        self.usage = Usage()
        self._model = model
        self._client = client
        self._injected = client is not None
        self._own_transport: _AsyncTransport | None = None

    # -- connection --------------------------------------------------------------------------------

    @property
    def client(self) -> Any:
        """The ``openai.OpenAI`` client (its retries off: :class:`Endpoint` retries and honours Retry-After)."""
        if self._client is None:
            openai = _sdk()
            self._client = openai.OpenAI(
                base_url=self.base_url, api_key=self.api_key, max_retries=0, timeout=self.timeout
            )
        return self._client

    def _transport(self) -> _AsyncTransport:
        """The async HTTP client of :meth:`achat`: on the installed event loop, the one that loop shares
        between every endpoint of the same server and key (one connection pool); elsewhere this endpoint's."""
        loop = eventloop.current()
        if loop is not None and loop.in_loop():
            return loop.shared(("chat", self.base_url, self.api_key, self.timeout), self._new_transport)
        if self._own_transport is None:
            self._own_transport = self._new_transport()
        return self._own_transport

    def _new_transport(self) -> _AsyncTransport:
        return _AsyncTransport(self.base_url, self.api_key, self.timeout)

    @property
    def configured_model(self) -> str | None:
        """The model name given in the configuration (None: the endpoint's only model is used)."""
        return self._model

    @property
    def where(self) -> str:
        """``URL (model NAME)`` for messages."""
        return f"{self.public_url} (model {self._model or 'not set'})"

    @property
    def model(self) -> str:
        """The model name; when none is configured, the only model the endpoint lists."""
        if self._model is None:
            served = self.served_models()
            if len(served) != 1:
                raise ModelEndpointError(
                    f"{self.public_url}: no model configured and the server lists {len(served)} "
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
                f"{self.public_url}: listing models failed with HTTP {err.status_code}: {_sentence(error_text(err))}"
            ) from None
        except (ValueError, AttributeError, TypeError) as err:  # a body that is not the models list
            raise ModelEndpointError(
                f"{self.public_url}: /models did not return a model list ({type(err).__name__}); "
                "is the URL the API's, ending in /v1?"
            ) from None

    def probe(self) -> tuple[bool, str | None]:
        """Whether the endpoint answers ``GET /models``, and the problem when it does not. A 401 or 403 counts
        as reachable: the server is there, and the key is the brain's business. Never raises."""
        openai = _sdk()

        try:
            self.client.models.list()
        except openai.APIStatusError as err:
            return err.status_code in (401, 403), f"HTTP {err.status_code}"
        except openai.APIConnectionError as err:
            cause = err.__cause__ or err.__context__ or err
            return False, f"{type(cause).__name__}: {_sentence(str(cause))}"
        except Exception as err:  # noqa: BLE001 - a body that is not a model list, a bad URL: not usable
            return False, f"{type(err).__name__}: {_sentence(str(err))}"
        return True, None

    def close(self) -> None:
        """Close the synchronous HTTP client (the event loop closes the async clients it shares)."""
        if self._client is not None and hasattr(self._client, "close"):
            self._client.close()

    async def aclose(self) -> None:
        """Close this endpoint's own async HTTP client (one made for :meth:`achat` outside an installed loop)."""
        if self._own_transport is not None:
            await self._own_transport.close()
            self._own_transport = None

    # -- errors ------------------------------------------------------------------------------------

    def _unreachable(self, err: Exception) -> ModelEndpointError:
        cause = err.__cause__ or err.__context__ or err
        return ModelEndpointError(
            f"cannot reach the model endpoint {self.where}: {type(cause).__name__}: {_sentence(_system_error(cause))}. "
            "Is the server running, and does the URL end in /v1?"
        )

    def hint(self, kind: str, *, max_tokens: int | None = None, images: int | None = None) -> str:
        """The one fix for a rejection of ``kind`` (see :class:`RequestRejected`)."""
        budget = max_tokens if max_tokens is not None else self.max_tokens
        if kind == "context":
            reserved = f" (max_tokens={budget} of it is reserved for the reply)" if budget else ""
            return (
                f"The prompt, its images and the reply do not fit the model's context{reserved}: lower max_pixels, "
                "max_side or max_tokens, or raise the server's context length (vLLM --max-model-len, SGLang "
                "--context-length, llama.cpp -c, Ollama num_ctx)"
            )
        if kind == "image_limit":
            sent = f" ({images} were sent)" if images else ""
            return (
                f"The server accepts fewer images per request than docintent sends{sent}: start vLLM with "
                "--limit-mm-per-prompt '{\"image\": 4}' (a Phase B review sends two or three)"
            )
        if kind == "vision":
            return "The model or server may not accept images: serve a vision-language model"
        if kind == "tools":
            return "The server may not support tool calls: see `docintent doctor`, or use native_tools=false"
        if kind == "temperature":
            return (
                f"This model rejects temperature={self.temperature:g} (reasoning models accept only their default): "
                "pass temperature=1 and max_tokens_param=max_completion_tokens"
            )
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
                    f"model {self._model!r} is not served at {self.public_url}; it serves: {', '.join(served)}"
                )
            return ModelEndpointError(
                f"{self.where} answered HTTP 404: {text}. Check the base URL (usually ending in /v1)"
            )
        kind = rejection_kind(text)
        hint = self.hint(kind, max_tokens=body.get(self.max_tokens_param), images=_count_images(body.get("messages")))
        message = f"{self.where} rejected the request (HTTP {status}): {text}."
        if hint:
            message += f" {hint}."
        return RequestRejected(message, status=status, kind=kind, text=text)

    # -- requests ----------------------------------------------------------------------------------

    def _body(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        max_tokens: int | None,
        temperature: float | None,
        top_p: float | None,
        stop: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> dict[str, Any]:
        """The JSON body of one chat-completions request (``extra_body`` merged in, as the SDK would)."""
        body: dict[str, Any] = {"model": self.model, "messages": messages}
        if stop:
            body["stop"] = list(stop)
        if response_format:
            body["response_format"] = response_format
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
            body.update(self.extra_body)
        return body

    def estimate_tokens(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None = None) -> int:
        """The request's token estimate for the rate limiter (image sizes known from encoding them)."""
        return request_tokens({"messages": messages, "tools": tools}, size_of=_DATA_URLS.size_of).total

    def _post(self, body: dict[str, Any], timeout: float | None) -> Any:
        """One chat completion on the synchronous client, or the docintent error of its failure (:meth:`_check`)."""
        client = self.client
        cast = _completion_type()
        # ``post`` sends the body as it is: ``chat.completions.create`` would first walk every message against
        # the SDK's type annotations, which was 40 % of the client's CPU per call.
        options = {"timeout": timeout} if timeout is not None and timeout != self.timeout else {}
        try:
            completion = client.post("/chat/completions", body=body, cast_to=cast, options=options)
            error = None
        except Exception as err:
            completion, error = None, err
        return self._check(body, completion, error, self.timeout if timeout is None else timeout)

    async def _apost(self, body: dict[str, Any], timeout: float | None) -> Any:
        """:meth:`_post` as a coroutine on the async transport: the same completion or the same error."""
        timeout = self.timeout if timeout is None else timeout
        transport = self._transport()
        try:
            completion, error = await transport.post(body, timeout), None
        except Exception as err:
            completion, error = None, err
        return self._check(body, completion, error, timeout)

    def _check(self, body: dict[str, Any], completion: Any, error: BaseException | None, timeout: float) -> Any:
        """The completion when it is a usable one; else raise what went wrong as docintent's error: a
        :class:`~docintent.errors.TransientError` for what may pass (HTTP 429 or 5xx, a timeout, a reply that is
        not a chat completion), the endpoint's error naming the fix for what will not (a refused request, an
        unreachable server). The synchronous and the async path both end here."""
        openai = _sdk()
        if error is None:
            problem = _not_a_completion(completion)
            if problem is None:
                return completion
            raise TransientError(problem, hint=_problem_hint(problem))
        if isinstance(error, openai.APITimeoutError):
            raise ModelTimeout(timeout)
        if isinstance(error, openai.APIConnectionError):
            raise self._unreachable(error) from None
        if isinstance(error, openai.APIStatusError):
            status = error.status_code
            if status != 429 and status < 500:
                raise self._status_error(error, body) from None
            if status == 500 and _INVALID_REQUEST.search(error_text(error)):
                # llama-cpp-python answers a request its schema refuses with HTTP 500: the same request fails again
                raise self._status_error(error, body) from None
            retry_after = retry_after_seconds(getattr(getattr(error, "response", None), "headers", None))
            kind = RateLimited if status == 429 else TransientError
            raise kind(f"HTTP {status}: {_sentence(error_text(error))}", retry_after=retry_after) from None
        if isinstance(error, ValueError):  # json.JSONDecodeError: the body is not JSON
            raise TransientError(f"the reply body is not JSON ({error})", hint=_URL_HINT) from None
        raise error

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Reply:
        """Send ``messages`` once (offering ``tools`` natively when given) and return the parsed :class:`Reply`.

        ``max_tokens`` / ``temperature`` / ``top_p`` / ``timeout`` override the defaults for this call;
        ``stop``: stop sequences; ``response_format``: e.g. ``{"type": "json_object"}``. With an event loop
        installed (:mod:`docintent.brains.eventloop`) the request runs on it as :meth:`achat` does.
        """
        body = self._body(messages, tools, max_tokens, temperature, top_p, stop, response_format)
        loop = eventloop.current()
        if loop is not None and not self._injected and not loop.in_loop():
            completion = loop.run(self._apost(body, timeout))
        else:
            completion = self._post(body, timeout)
        return self._reply(completion)

    async def achat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
        timeout: float | None = None,
    ) -> Reply:
        """:meth:`chat` as a coroutine: the same request, errors and reply.

        Run every call of one endpoint on one event loop (its HTTP client keeps connections to that loop). With
        no model configured, the first call lists the server's models synchronously (:attr:`model`).
        """
        body = self._body(messages, tools, max_tokens, temperature, top_p, stop, response_format)
        return self._reply(await self._apost(body, timeout))

    def _reply(self, completion: Any) -> Reply:
        """The :class:`Reply` of a completion, its tokens added to ``usage``."""
        choice = completion.choices[0]
        message = choice.message
        u = getattr(completion, "usage", None)
        usage = Usage(int(getattr(u, "prompt_tokens", 0) or 0), int(getattr(u, "completion_tokens", 0) or 0), 1)
        self.usage = self.usage + usage
        content = getattr(message, "content", None) or ""
        text, thought = strip_reasoning(content)
        reasoning = _reasoning_field(message) or thought
        calls = calls_from_message(message, text=text)
        return Reply(
            content,
            text,
            calls,
            finish_reason=getattr(choice, "finish_reason", None),
            usage=usage,
            reasoning=reasoning,
            message=message,
        )

    # -- images ------------------------------------------------------------------------------------

    def image_part(
        self,
        page: Page,
        max_side: int | None = None,
        *,
        max_pixels: int | None = None,
        fmt: str = "auto",
        quality: int = 90,
    ) -> dict[str, Any]:
        """``page`` as an ``image_url`` content part: longest side <= ``max_side`` (default DOCINTENT_MAX_SIDE),
        at most ``max_pixels`` pixels, encoded by :func:`docintent.io.encode.to_data_url`. A page state is
        encoded once per settings for the whole process (every phase, strategy and brain that sends it)."""

        def encode() -> tuple[str, tuple[int, int]]:
            small = resize_longest(page, max_side)
            if max_pixels:
                small = cap_pixels(small, max_pixels)
            return to_data_url(small, fmt, quality=quality), small.size

        url = _DATA_URLS.get((page.hash, max_side, max_pixels, fmt, quality), encode)
        return {"type": "image_url", "image_url": {"url": url}}


class Endpoint(Retrying):
    """An OpenAI-compatible chat-completions endpoint with retries, error hints and usage accounting: the
    :class:`OpenAIChat` transport inside :class:`~docintent.brains.retrying.Retrying`.

    ``Endpoint(base_url, model, api_key, timeout=60, max_retries=4)``; ``model=None`` uses the only model the
    server lists. ``max_retries``, ``backoff`` and ``max_wait`` make the :class:`~docintent.brains.retrying.RetryPolicy`;
    ``temperature``, ``top_p``, ``max_tokens`` (sent as ``max_tokens_param``) and ``extra_body`` are the
    transport's defaults of every :meth:`chat`; ``max_tokens=None`` leaves the field out. ``client`` injects a
    ready ``openai.OpenAI`` (its requests then stay synchronous); ``sleep`` replaces :func:`time.sleep`
    between retries (tests). The transport's members (``base_url``, ``public_url``, ``timeout``, :meth:`probe`,
    :meth:`hint`, ...) are read through it.
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
        self.transport = OpenAIChat(
            base_url,
            model,
            api_key,
            timeout=timeout,
            temperature=temperature,
            top_p=top_p,
            max_tokens=max_tokens,
            max_tokens_param=max_tokens_param,
            extra_body=extra_body,
            client=client,
        )
        policy = RetryPolicy(max_retries=max_retries, backoff=backoff, max_wait=max_wait)
        super().__init__(self.transport, policy, sleep=sleep, name=self.transport.public_url)

    # -- the transport's settings, read through ---------------------------------------------------

    @property
    def base_url(self) -> str:
        return self.transport.base_url

    @property
    def public_url(self) -> str:
        """The URL as messages show it: its user and password masked."""
        return self.transport.public_url

    @property
    def api_key(self) -> str:
        return self.transport.api_key

    @property
    def timeout(self) -> float:
        """Seconds to wait for one reply (a retry after a timeout waits longer: the policy's rule)."""
        return self.transport.timeout

    @property
    def temperature(self) -> float | None:
        return self.transport.temperature

    @property
    def top_p(self) -> float | None:
        return self.transport.top_p

    @property
    def max_tokens(self) -> int | None:
        return self.transport.max_tokens

    @property
    def max_tokens_param(self) -> str:
        return self.transport.max_tokens_param

    @property
    def extra_body(self) -> dict[str, Any] | None:
        return self.transport.extra_body

    @property
    def max_retries(self) -> int:
        return self.policy.max_retries

    @property
    def client(self) -> Any:
        """The transport's ``openai.OpenAI`` client."""
        return self.transport.client

    @property
    def model(self) -> str:
        """The model name; when none is configured, the only model the endpoint lists."""
        return self.transport.model

    @model.setter
    def model(self, name: str) -> None:
        self.transport.model = name

    def probe(self) -> tuple[bool, str | None]:
        """:meth:`OpenAIChat.probe`: whether the endpoint answers ``GET /models`` (never raises)."""
        return self.transport.probe()

    def hint(self, kind: str, *, max_tokens: int | None = None, images: int | None = None) -> str:
        """:meth:`OpenAIChat.hint`: the one fix for a rejection of ``kind``."""
        return self.transport.hint(kind, max_tokens=max_tokens, images=images)

    def retry_wait(self, err: Any, attempt: int) -> float:
        """Seconds the policy waits before retry ``attempt`` after the SDK error ``err`` (None: no reply):
        its Retry-After (or retry-after-ms) when given, else the back-off."""
        headers = getattr(getattr(err, "response", None), "headers", None)
        return self.policy.wait(attempt, retry_after_seconds(headers))

    # -- requests (the transport's options spelled out) ------------------------------------------

    def chat(  # type: ignore[override]  # the same call as Retrying.chat, its options named
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> Reply:
        """Send ``messages`` (offering ``tools`` natively when given) and return the parsed :class:`Reply`,
        retrying what may pass.

        ``max_tokens`` / ``temperature`` / ``top_p`` override the endpoint's defaults for this call; ``stop``:
        stop sequences; ``response_format``: e.g. ``{"type": "json_object"}``. With an event loop installed
        (:mod:`docintent.brains.eventloop`) each attempt runs on it as :meth:`achat` does.
        Raises :class:`~docintent.errors.ModelEndpointError` (:class:`RequestRejected` for a refused request).
        """
        return super().chat(
            messages,
            tools,
            max_tokens=max_tokens,
            **_given(temperature=temperature, top_p=top_p, stop=stop, response_format=response_format),
        )

    async def achat(  # type: ignore[override]  # as chat
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        max_tokens: int | None = None,
        temperature: float | None = None,
        top_p: float | None = None,
        stop: list[str] | None = None,
        response_format: dict[str, Any] | None = None,
    ) -> Reply:
        """:meth:`chat` as a coroutine: the same request, retries, errors and reply."""
        return await super().achat(
            messages,
            tools,
            max_tokens=max_tokens,
            **_given(temperature=temperature, top_p=top_p, stop=stop, response_format=response_format),
        )


def _given(**options: Any) -> dict[str, Any]:
    """The options that are set (not None)."""
    return {name: value for name, value in options.items() if value is not None}


#: The fix for a reply that is not the API's.
_URL_HINT = "Is base_url the API's URL ending in /v1 (not a web page or a login proxy)?"


def _problem_hint(problem: str) -> str:
    """The fix to name when every attempt got a reply that is not a usable chat completion (``problem``)."""
    if "not a chat completion" in problem:
        return _URL_HINT
    if "no choices" in problem:
        return "The server produced no completion: check its log."
    return ""


class _DataUrls:
    """Data URLs of the page images sent in this process, by (page hash, size and format settings), and the
    pixel size of each (the rate limiter's token estimate reads it instead of decoding the URL again).

    Bounded by ``budget`` characters, least recently used out first; thread-safe. Two threads asking for the
    same new image at once may both encode it (the same bytes): cheaper than holding a lock while encoding.
    """

    def __init__(self, budget: int = 64 * 1024 * 1024) -> None:
        self.budget = budget
        self._urls: OrderedDict[tuple[Any, ...], str] = OrderedDict()
        self._sizes: dict[str, tuple[int, int]] = {}
        self._chars = 0
        self._lock = threading.Lock()

    def get(self, key: tuple[Any, ...], encode: Callable[[], tuple[str, tuple[int, int]]]) -> str:
        with self._lock:
            url = self._urls.get(key)
            if url is not None:
                self._urls.move_to_end(key)
                return url
        url, size = encode()
        with self._lock:
            if key not in self._urls:
                self._urls[key] = url
                self._sizes[url] = size
                self._chars += len(url)
                while self._chars > self.budget and len(self._urls) > 1:
                    _, old = self._urls.popitem(last=False)
                    self._sizes.pop(old, None)
                    self._chars -= len(old)
        return url

    def size_of(self, url: str) -> tuple[int, int] | None:
        """(width, height) of an image URL: remembered for URLs made here, else read from its header."""
        size = self._sizes.get(url)
        return size if size is not None else data_url_size(url)


_DATA_URLS = _DataUrls()


class _AsyncTransport:
    """Chat-completion requests on ``httpx2.AsyncClient``, the HTTP library under the openai SDK, used directly.

    It answers as the SDK's ``post`` does, so ``OpenAIChat._check`` and ``OpenAIChat._reply`` read both alike:
    the SDK's ``ChatCompletion`` model, the reply's text when it is not JSON and not labelled JSON, and the
    SDK's own exceptions (``APIStatusError`` with the same body and message, ``APITimeoutError``,
    ``APIConnectionError`` with the transport's error as its cause). It skips the SDK's request building:
    against the loopback server it spends 0.75-0.85 CPU-ms per call where ``AsyncOpenAI.post`` spends 1.26
    (``benchmarks/scale.py --part client``).
    """

    def __init__(self, base_url: str, api_key: str, timeout: float) -> None:
        import httpx2  # with the SDK, which depends on it: imported on first use

        self._httpx = httpx2
        self._url = f"{base_url}/chat/completions"
        # The SDK's own defaults: connection limits, redirects followed, one timeout for every phase.
        self._http = httpx2.AsyncClient(
            timeout=httpx2.Timeout(timeout),
            follow_redirects=True,
            limits=httpx2.Limits(max_connections=1000, max_keepalive_connections=100),
            headers={
                "Authorization": f"Bearer {api_key}",
                "Accept": "application/json",
                "Content-Type": "application/json",
                "User-Agent": f"docintent/{__version__}",
            },
        )

    async def post(self, body: dict[str, Any], timeout: float | None = None) -> Any:
        openai = _sdk()
        request = self._http.build_request(
            "POST",
            self._url,
            content=json.dumps(body).encode(),
            timeout=self._httpx.Timeout(timeout) if timeout else self._http.timeout,
        )
        try:
            response = await self._http.send(request)
        except self._httpx.TimeoutException as err:
            raise openai.APITimeoutError(request=request) from err
        except Exception as err:  # the SDK, too, calls every failure to get a response a connection error
            raise openai.APIConnectionError(request=request) from err
        if response.status_code >= 400:
            raise _status_error(openai, response)
        kind = response.headers.get("content-type", "*").split(";")[0]
        try:
            data = json.loads(response.content)
        except ValueError:
            if kind.endswith("json"):
                raise
            return response.text
        # The SDK's own model, built the way its ``post`` builds it: no validation, fields it lacks set to None.
        return _completion_type().construct(**data) if isinstance(data, dict) else data

    async def close(self) -> None:
        await self._http.aclose()


def _status_error(openai: Any, response: Any) -> Exception:
    """The SDK's ``APIStatusError`` for an HTTP error reply: message ``Error code: N - message``, ``body`` the
    JSON's ``error`` object (or the JSON, or the text)."""
    text = response.text.strip()
    body: Any = text
    message = f"Error code: {response.status_code}"
    try:
        body = json.loads(text)
    except ValueError:
        pass
    else:
        inner = body.get("error", body) if isinstance(body, dict) else None
        if isinstance(inner, dict) and isinstance(inner.get("message"), str) and inner["message"]:
            message += f" - {inner['message']}"
    data = body.get("error", body) if isinstance(body, dict) else body
    return openai.APIStatusError(message, response=response, body=data)


def _completion_type() -> Any:
    """The SDK's chat-completion model (what ``chat.completions.create`` returns)."""
    from openai.types.chat import ChatCompletion  # with the SDK: imported on first use

    return ChatCompletion


def _sdk() -> Any:
    """The ``openai`` package, imported on first use."""
    import openai  # local for start-up speed: the SDK takes a second or more to import; offline runs never need it

    return openai


def _system_error(err: BaseException) -> str:
    """The operating system's words for the error under ``err`` (``[Errno 111] Connection refused``), which
    the synchronous and the async transport word differently; ``str(err)`` when none is found."""
    seen: set[int] = set()
    found = None
    current: BaseException | None = err
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and isinstance(current.errno, int) and current.errno > 0:
            found = current
        current = current.__cause__ or current.__context__
    if found is None:
        return str(err)
    return f"[Errno {found.errno}] {os.strerror(found.errno or 0)}"


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


__all__ = [
    "DEFAULT_TIMEOUT",
    "Endpoint",
    "OpenAIChat",
    "PLACEHOLDER_KEY",
    "Reply",
    "RequestRejected",
    "error_text",
    "parse_json_reply",
    "rejection_kind",
]
