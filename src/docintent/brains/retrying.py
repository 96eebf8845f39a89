"""Retries, back-off and the run's rate limit around any chat model: one implementation of each rule.

A model *transport* sends one request and says how it failed with docintent's own errors
(:mod:`docintent.errors`), whatever API it speaks:

- :class:`~docintent.errors.TransientError`: a failure that may pass (HTTP 5xx, a reply that is not a reply),
  with the seconds the server asked to wait (``retry_after``, read by :func:`retry_after_seconds`) when it
  said any, and the fix to name if every attempt fails alike (``hint``);
- :class:`~docintent.errors.RateLimited`: HTTP 429, the run is too fast;
- :class:`~docintent.errors.ModelTimeout`: no reply within the attempt's timeout;
- any other :class:`~docintent.errors.ModelEndpointError`: a failure that will not pass (never retried).

:class:`Retrying` wraps such a transport (any :class:`~docintent.brains.chat.ChatModel`) and is a ChatModel
itself; the rules live in its :class:`RetryPolicy`:

- **attempts**: ``max_retries + 1`` in all; after the last, one error naming the server, the count and what
  the last attempt got (and its hint);
- **waits**: the server's ``retry_after`` when it gave one, else ``backoff x 2^attempt`` (less up to
  ``jitter`` of it, drawn from a generator seeded by ``seed`` and the request, so a rerun waits the same and
  concurrent requests spread out); every wait at most ``max_wait``;
- **timeouts**: after a timeout the next attempt gets twice as long, at most ``timeout_cap`` x the
  transport's own ``timeout`` (for a transport whose ``chat`` takes a ``timeout`` keyword), and the retry waits
  at least as long as the attempt given up on had (a one-slot server is still working on it);
- **the rate limit**: every attempt waits for its slot under the process's limiter
  (:mod:`docintent.brains.ratelimit`), and a 429 pauses and slows the whole run.

:class:`~docintent.brains.endpoint.Endpoint` is this wrapper around the OpenAI-compatible transport; a model
behind another API gets the same rules as ``ModelBrain(chat_model=Retrying(MyApi(...), RetryPolicy(...)))``.

>>> from docintent.brains.chat import Reply
>>> from docintent.brains.decisions import Usage
>>> from docintent.errors import RateLimited, TransientError
>>> class Flaky:  # fails twice, then answers (only ``chat`` is needed to be retried)
...     failures = [RateLimited("HTTP 429: slow down", retry_after=2.0), TransientError("HTTP 503: busy")]
...     where = "flaky (in-process)"
...     def chat(self, messages, tools=None, *, max_tokens=None):
...         if self.failures:
...             raise self.failures.pop(0)
...         return Reply("ok", "ok", [], finish_reason="stop", usage=Usage(1, 1, 1))
>>> waits = []
>>> model = Retrying(Flaky(), RetryPolicy(max_retries=2, backoff=0.5), sleep=waits.append)
>>> model.chat([{"role": "user", "content": "hi"}]).text, waits   # the server's 2 s, then 0.5 x 2^1
('ok', [2.0, 1.0])
"""

from __future__ import annotations

import asyncio
import email.utils
import inspect
import json
import logging
import math
import random
import time
import zlib
from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass
from typing import Any

from ..errors import ConfigError, ModelEndpointError, ModelTimeout, RateLimited, TransientError
from ..page import Page
from . import ratelimit
from .chat import ChatModel, Reply
from .decisions import Usage
from .tokens import request_tokens

log = logging.getLogger(__name__)


def retry_after_seconds(headers: Mapping[str, Any] | None) -> float | None:
    """The seconds an HTTP reply asks the client to wait: ``retry-after-ms``, else ``Retry-After`` as seconds
    or as an HTTP date (then possibly < 0: a time already past); None when neither says.

    >>> retry_after_seconds({"Retry-After": "3"}), retry_after_seconds({"retry-after-ms": "250"})
    (3.0, 0.25)
    >>> retry_after_seconds({}) is None
    True
    """
    if not headers:
        return None
    fields = {str(name).lower(): value for name, value in headers.items()}
    if fields.get("retry-after-ms"):
        try:
            return float(fields["retry-after-ms"]) / 1000.0
        except ValueError:
            pass
    value = fields.get("retry-after")
    if not value:
        return None
    try:
        return float(value)
    except ValueError:
        try:
            parsed = email.utils.parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return parsed.timestamp() - time.time()


@dataclass(frozen=True)
class RetryPolicy:
    """How :class:`Retrying` retries: ``max_retries`` after the first attempt; ``backoff`` seconds before the
    first retry when the server names no wait (doubling each retry), less a share of at most ``jitter`` (0-1)
    drawn from ``seed`` and the request; ``max_wait``: the longest single wait, the server's included;
    ``timeout_cap``: the longest attempt after timeouts, as a multiple of the transport's timeout;
    ``wait_out_timeouts``: after a timeout, wait at least as long as the abandoned attempt had."""

    max_retries: int = 4
    backoff: float = 1.0
    max_wait: float = 60.0
    _: KW_ONLY
    jitter: float = 0.0
    seed: int = 0
    timeout_cap: float = 4.0
    wait_out_timeouts: bool = True

    def __post_init__(self) -> None:
        if isinstance(self.max_retries, bool) or not isinstance(self.max_retries, int) or self.max_retries < 0:
            raise ConfigError(f"max_retries must be a whole number >= 0, got {self.max_retries!r}")
        for name in ("backoff", "max_wait"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ConfigError(f"{name} must be a finite number >= 0, got {value!r}")
        if not (0.0 <= self.jitter <= 1.0):
            raise ConfigError(f"jitter must be between 0 and 1, got {self.jitter!r}")
        if not (math.isfinite(self.timeout_cap) and self.timeout_cap >= 1.0):
            raise ConfigError(f"timeout_cap must be a finite number >= 1, got {self.timeout_cap!r}")

    @property
    def attempts(self) -> int:
        """Attempts in all: the first and ``max_retries`` more."""
        return self.max_retries + 1

    def wait(self, attempt: int, retry_after: float | None = None, *, key: int = 0) -> float:
        """Seconds before retrying after failed attempt ``attempt`` (0 = the first): ``retry_after`` when the
        server gave one (and it is not past), else the back-off with its jitter; at most ``max_wait``.

        >>> RetryPolicy(backoff=0.5).wait(2), RetryPolicy(max_wait=30).wait(0, 3600.0)
        (2.0, 30.0)
        """
        if retry_after is not None and retry_after >= 0:  # NaN fails the comparison: back-off instead
            seconds = retry_after
        else:
            seconds = self.backoff * 2**attempt
            if self.jitter:
                seconds *= 1.0 - self.jitter * random.Random(f"{self.seed}:{key}:{attempt}").random()
        return float(min(seconds, self.max_wait))

    def after_timeout(self, attempt: int, waited: float, base: float, *, key: int = 0) -> tuple[float, float]:
        """After attempt ``attempt`` timed out having waited ``waited`` seconds (the transport's own timeout is
        ``base``): (seconds to wait before the retry, the retry's timeout). The server may still be writing the
        reply given up on, so the wait is as long again as the attempt had; the next attempt gets twice as long;
        both at most ``timeout_cap`` x ``base``."""
        cap = self.timeout_cap * base
        seconds = self.wait(attempt, key=key)
        if self.wait_out_timeouts:
            seconds = max(seconds, min(waited, cap))
        return float(seconds), float(min(2 * waited, cap))


class Retrying:
    """A :class:`~docintent.brains.chat.ChatModel` that sends each request through ``inner`` under ``policy``
    (see the module's rules). ``sleep`` replaces :func:`time.sleep` between attempts (tests); ``name`` is
    how retry log lines name the model (default: ``inner.where``). Everything but ``chat`` / ``achat`` is
    ``inner``'s own."""

    def __init__(
        self,
        inner: ChatModel,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        name: str | None = None,
    ) -> None:
        self.inner = inner
        self.policy = policy or RetryPolicy()
        self._sleep = sleep
        self._name = name
        self._sync_timeout = _takes_keyword(getattr(inner, "chat", None), "timeout")
        self._async_timeout = _takes_keyword(getattr(inner, "achat", None), "timeout")

    # -- the inner model's own members ------------------------------------------------------------

    @property
    def model(self) -> str:
        return self.inner.model

    @property
    def configured_model(self) -> str | None:
        return self.inner.configured_model

    @property
    def where(self) -> str:
        return self.inner.where

    @property
    def usage(self) -> Usage:
        return self.inner.usage

    @usage.setter
    def usage(self, value: Usage) -> None:
        self.inner.usage = value  # type: ignore[misc]  # the protocol declares it read-only; transports keep it

    def image_part(
        self,
        page: Page,
        max_side: int | None = None,
        *,
        max_pixels: int | None = None,
        fmt: str = "auto",
        quality: int = 90,
    ) -> dict[str, Any]:
        return self.inner.image_part(page, max_side, max_pixels=max_pixels, fmt=fmt, quality=quality)

    def served_models(self) -> list[str]:
        return self.inner.served_models()

    def close(self) -> None:
        self.inner.close()

    async def aclose(self) -> None:
        """Close ``inner``'s async connections, when it has any."""
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()

    # -- requests ----------------------------------------------------------------------------------

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Reply:
        """``inner.chat(messages, tools, max_tokens=..., **options)``, retried under the policy. Raises the
        inner model's error for a failure that will not pass, and :class:`~docintent.errors.ModelEndpointError`
        after the last attempt."""
        attempts = _Attempts(self, messages)
        while True:
            # Under a run-wide limiter (benchmark executors) wait for a slot; without one this returns at once.
            reserved = ratelimit.wait_turn(lambda: self._estimate(messages, tools))
            try:
                reply = self.inner.chat(
                    messages, tools, max_tokens=max_tokens, **options, **attempts.options(self._sync_timeout)
                )
            except TransientError as err:
                seconds = attempts.wait_after(err)
                if isinstance(err, RateLimited):
                    seconds = ratelimit.backoff(seconds)  # the whole run pauses and slows down
                attempts.retry_or_fail(seconds)
                self._sleep(seconds)
                continue
            ratelimit.done(reserved, reply.usage.total_tokens)
            return reply

    async def achat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        max_tokens: int | None = None,
        **options: Any,
    ) -> Reply:
        """:meth:`chat` as a coroutine: the same attempts, waits and errors, the waits spent on the event loop.
        An inner model without ``achat`` is called in a worker thread."""
        attempts = _Attempts(self, messages)
        send = getattr(self.inner, "achat", None)
        while True:
            reserved = await ratelimit.await_turn(lambda: self._estimate(messages, tools))
            try:
                if send is not None:
                    reply = await send(
                        messages, tools, max_tokens=max_tokens, **options, **attempts.options(self._async_timeout)
                    )
                else:
                    reply = await asyncio.to_thread(
                        self.inner.chat,
                        messages,
                        tools,
                        max_tokens=max_tokens,
                        **options,
                        **attempts.options(self._sync_timeout),
                    )
            except TransientError as err:
                seconds = attempts.wait_after(err)
                if isinstance(err, RateLimited):
                    seconds = await ratelimit.abackoff(seconds)
                attempts.retry_or_fail(seconds)
                if self._sleep is time.sleep:
                    await asyncio.sleep(seconds)
                else:  # a test's clock
                    self._sleep(seconds)
                continue
            await ratelimit.adone(reserved, reply.usage.total_tokens)
            return reply

    def _estimate(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]] | None) -> int:
        """The request's token estimate for the rate limiter: the inner model's ``estimate_tokens`` when it
        has one, else :func:`~docintent.brains.tokens.request_tokens` on the messages and tools."""
        estimate = getattr(self.inner, "estimate_tokens", None)
        if estimate is not None:
            return int(estimate(messages, tools))
        return request_tokens({"messages": messages, "tools": tools}).total

    @property
    def name(self) -> str:
        """How retry log lines name the model."""
        return self._name or self.inner.where


class _Attempts:
    """The state of one request's attempts: which attempt this is, the timeout the next one gets, and the
    last failure (what the final error reports)."""

    def __init__(self, owner: Retrying, messages: list[dict[str, Any]]) -> None:
        self.owner = owner
        self.policy = owner.policy
        self.attempt = 0
        base = getattr(owner.inner, "timeout", None)
        #: The transport's own timeout (None: it has none to read; the first timeout's length stands in).
        self.base: float | None = float(base) if isinstance(base, (int, float)) and base > 0 else None
        self.timeout = self.base
        self.last: TransientError | None = None
        self._messages = messages
        self._key: int | None = None

    def options(self, takes_timeout: bool) -> dict[str, Any]:
        """The attempt's ``timeout`` keyword, once a timeout has made it longer than the transport's own."""
        if takes_timeout and self.timeout is not None and self.timeout != self.base:
            return {"timeout": self.timeout}
        return {}

    @property
    def key(self) -> int:
        """A number of the request for the jitter's seed (computed only when there is jitter)."""
        if self._key is None:
            text = json.dumps(self._messages, sort_keys=True, default=str) if self.policy.jitter else ""
            self._key = zlib.crc32(text.encode())
        return self._key

    def wait_after(self, err: TransientError) -> float:
        """Seconds to wait after the current attempt failed with ``err`` (a retry-after, a timeout's rules,
        or the back-off)."""
        self.last = err
        if isinstance(err, ModelTimeout):
            if self.base is None:
                self.base = err.seconds
            seconds, self.timeout = self.policy.after_timeout(self.attempt, err.seconds, self.base, key=self.key)
            return seconds
        return self.policy.wait(self.attempt, err.retry_after, key=self.key)

    def retry_or_fail(self, seconds: float) -> None:
        """Log the retry to come, or after the last attempt raise the error that ends the request."""
        total = self.policy.attempts
        if self.attempt + 1 >= total:
            raise self.failure() from None
        log.warning(
            "%s: %s; retry %d of %d in %.1f s", self.owner.name, self.last, self.attempt + 1, total - 1, seconds
        )
        self.attempt += 1

    def failure(self) -> ModelEndpointError:
        last = self.last
        said = str(last).strip().rstrip(".").rstrip() if last is not None else "nothing"
        hint = f" {last.hint}" if last is not None and last.hint else ""
        return ModelEndpointError(
            f"{self.owner.where}: gave up after {self.policy.attempts} attempt(s); last: {said}.{hint}"
        )


def _takes_keyword(fn: Any, name: str) -> bool:
    """Whether callable ``fn`` declares a parameter ``name`` (a transport that can be given a longer timeout)."""
    if fn is None:
        return False
    try:
        return name in inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False


__all__ = ["RetryPolicy", "Retrying", "retry_after_seconds"]
