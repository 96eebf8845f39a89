"""One request/token budget for every model call of a run, and a run-wide slow-down when the server says 429.

A benchmark with ``--concurrency 32`` on four worker processes has 128 callers; a per-minute limit set by the
provider applies to all of them together, and an HTTP 429 means *the run* is too fast, not one request. So
callers do not retry on their own schedules: they share one :class:`RateLimiter`, which

- spaces requests and tokens to ``requests_per_minute`` / ``tokens_per_minute`` (a GCRA: each caller reserves
  its slot and sleeps until it; up to ``burst_seconds`` of budget may go at once);
- on a 429, pauses every caller until the wait the server asked for (``Retry-After``) has passed, and halves
  the request rate once per such pause (with no configured rate, it starts from the rate observed over the last half minute);
- gives the rate back gradually (x1.25 every ``recover_after`` successful requests).

The limiter's methods only compute and never sleep, so one instance can live in another process (a
``multiprocessing`` manager) or on another machine (a Ray actor) and be called through a proxy; the caller
sleeps locally. A process installs the limiter its model calls use with :func:`install`; the endpoint asks
:func:`current`. Requests made as coroutines use the ``a``-prefixed twins (:func:`await_turn`, :func:`adone`,
:func:`abackoff`), which sleep on the event loop and call a proxied limiter from a worker thread, so one
caller waiting on another process never stalls every request of the loop.

>>> clock = iter([0.0, 0.0, 0.0, 0.0]).__next__
>>> limiter = RateLimiter(requests_per_minute=60, burst_seconds=0.0, clock=clock)
>>> [round(limiter.reserve(), 2) for _ in range(3)]   # one request a second, the first goes at once
[0.0, 1.0, 2.0]
"""

from __future__ import annotations

import asyncio
import math
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass
from typing import Any, Protocol

from ..errors import ConfigError

#: The most a run slows itself down after repeated 429s (request interval x this).
MAX_SLOWDOWN = 64.0
#: Seconds of request history used to learn the rate that drew a 429 when no rate is configured.
OBSERVE_SECONDS = 30.0


@dataclass(frozen=True)
class LimitStats:
    """What a limiter has seen: requests and tokens reserved, 429s, the current slow-down factor and the
    total seconds callers were told to wait."""

    requests: int
    tokens: int
    throttled: int
    _: KW_ONLY
    slowdown: float
    waited_seconds: float


class RateLimiter:
    """A shared requests-per-minute / tokens-per-minute budget with run-wide backoff on HTTP 429.

    ``requests_per_minute`` / ``tokens_per_minute``: None = no limit of that kind (a 429 still slows the run).
    ``burst_seconds``: how much budget may be spent at once. ``recover_after``: successful requests between
    two steps back towards the configured rate. Thread-safe; no method blocks.
    """

    def __init__(
        self,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        *,
        burst_seconds: float = 1.0,
        recover_after: int = 20,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        for name, value in (("requests_per_minute", requests_per_minute), ("tokens_per_minute", tokens_per_minute)):
            if value is not None and not (math.isfinite(value) and value > 0):  # NaN compares false to everything
                raise ConfigError(f"{name} must be a finite number above 0, got {value}")
        if not (math.isfinite(burst_seconds) and burst_seconds >= 0):
            raise ConfigError(f"burst_seconds must be a finite number >= 0, got {burst_seconds}")
        self.requests_per_minute = requests_per_minute
        self.tokens_per_minute = tokens_per_minute
        self.burst_seconds = burst_seconds
        self.recover_after = max(1, recover_after)
        self._clock = clock
        self._lock = threading.Lock()
        self._request_interval = 60.0 / requests_per_minute if requests_per_minute else 0.0
        self._token_interval = 60.0 / tokens_per_minute if tokens_per_minute else 0.0
        self._next_request = -float("inf")  # theoretical arrival times (GCRA)
        self._next_token = -float("inf")
        self._paused_until = -float("inf")
        self._slowdown = 1.0
        self._successes = 0
        self._recent: deque[float] = deque()
        self._requests = self._tokens = self._throttled = 0
        self._waited = 0.0

    def reserve(self, tokens: int = 0) -> float:
        """Book one request of about ``tokens`` tokens; return the seconds the caller must wait before sending."""
        with self._lock:
            now = self._clock()
            start = max(now, self._paused_until)
            if self._request_interval:
                interval = self._request_interval * self._slowdown
                tolerance = self.burst_seconds if self._slowdown == 1.0 else 0.0
                slot = max(self._next_request, start - tolerance)
                self._next_request = slot + interval
                start = max(start, slot)
            if self._token_interval and tokens > 0:
                slot = max(self._next_token, start - self.burst_seconds)
                self._next_token = slot + tokens * self._token_interval
                start = max(start, slot)
            self._requests += 1
            self._tokens += max(0, tokens)
            self._recent.append(start)
            while self._recent and self._recent[0] < now - OBSERVE_SECONDS:
                self._recent.popleft()
            wait = max(0.0, start - now)
            self._waited += wait
            return wait

    def settle(self, tokens: int) -> None:
        """Correct the last reservation by ``tokens`` (the reply's real count minus the estimate; may be < 0),
        and count a successful request towards giving the rate back."""
        with self._lock:
            if self._token_interval and tokens:
                self._next_token += tokens * self._token_interval
            self._tokens += tokens
            self._successes += 1
            if self._slowdown > 1.0 and self._successes >= self.recover_after:
                self._slowdown = max(1.0, self._slowdown / 1.25)
                self._successes = 0

    def throttled(self, wait: float) -> float:
        """The server answered 429 and asked for ``wait`` seconds: pause every caller that long and halve the
        request rate. Returns the seconds this caller waits before retrying (at least ``wait``)."""
        with self._lock:
            now = self._clock()
            self._throttled += 1
            self._successes = 0
            if not self._request_interval:
                # No rate configured: start from the rate that drew the 429.
                span = max(1.0, now - self._recent[0]) if self._recent else 1.0
                self._request_interval = span / max(1, len(self._recent))
            if now >= self._paused_until:  # 429s that arrive during a pause belong to the same episode
                self._slowdown = min(MAX_SLOWDOWN, self._slowdown * 2.0)
            self._paused_until = max(self._paused_until, now + max(0.0, wait))
            self._next_request = max(self._next_request, self._paused_until)
            return max(0.0, self._paused_until - now)

    def stats(self) -> LimitStats:
        """Counts so far (see :class:`LimitStats`)."""
        with self._lock:
            return LimitStats(
                self._requests,
                self._tokens,
                self._throttled,
                slowdown=self._slowdown,
                waited_seconds=round(self._waited, 3),
            )


class Limiter(Protocol):
    """What a model call needs from a limiter: the methods of :class:`RateLimiter`, possibly via a proxy."""

    def reserve(self, tokens: int = 0) -> float: ...

    def settle(self, tokens: int) -> None: ...

    def throttled(self, wait: float) -> float: ...


_installed: Limiter | None = None


def install(limiter: Limiter | None) -> None:
    """Make ``limiter`` the one every model call in this process goes through (None: no shared limit)."""
    global _installed
    _installed = limiter


def current() -> Limiter | None:
    """The limiter installed in this process, if any."""
    return _installed


def wait_turn(tokens: int | Callable[[], int] = 0, *, sleep: Callable[[float], None] = time.sleep) -> int:
    """Before a model request: wait for a slot under the installed limiter. ``tokens``: the request's token
    estimate, or a function computing it (called only when a limiter is installed). Returns the tokens
    reserved (pass them to :func:`done`); 0 and no wait when none is installed."""
    limiter = _installed
    if limiter is None:
        return 0
    count = int(tokens() if callable(tokens) else tokens)
    wait = limiter.reserve(count)
    if wait > 0:
        sleep(wait)
    return count


def done(reserved: int, used: int) -> None:
    """After a successful model request that reserved ``reserved`` tokens and used ``used``."""
    limiter = _installed
    if limiter is not None:
        limiter.settle(used - reserved)


def backoff(wait: float) -> float:
    """After an HTTP 429 asking for ``wait`` seconds: the seconds to sleep before retrying. With a limiter
    installed the whole run pauses and slows down; without one this is just ``wait``."""
    limiter = _installed
    return wait if limiter is None else limiter.throttled(wait)


async def _call(limiter: Limiter, method: str, *args: Any) -> Any:
    """``limiter.method(*args)`` from a coroutine: directly for an in-process limiter (it only computes), in a
    worker thread for a proxy (its call waits on another process)."""
    fn = getattr(limiter, method)
    if isinstance(limiter, RateLimiter):
        return fn(*args)
    return await asyncio.to_thread(fn, *args)


async def await_turn(tokens: int | Callable[[], int] = 0) -> int:
    """:func:`wait_turn` for a request made as a coroutine: the wait is spent on the event loop."""
    limiter = _installed
    if limiter is None:
        return 0
    count = int(tokens() if callable(tokens) else tokens)
    wait = await _call(limiter, "reserve", count)
    if wait > 0:
        await asyncio.sleep(wait)
    return count


async def adone(reserved: int, used: int) -> None:
    """:func:`done` for a request made as a coroutine."""
    limiter = _installed
    if limiter is not None:
        await _call(limiter, "settle", used - reserved)


async def abackoff(wait: float) -> float:
    """:func:`backoff` for a request made as a coroutine."""
    limiter = _installed
    return wait if limiter is None else float(await _call(limiter, "throttled", wait))


def limiter_spec(requests_per_minute: float | None, tokens_per_minute: float | None) -> dict[str, Any] | None:
    """Constructor keywords of the run's limiter, or None when neither limit is set."""
    if requests_per_minute is None and tokens_per_minute is None:
        return None
    return {"requests_per_minute": requests_per_minute, "tokens_per_minute": tokens_per_minute}
