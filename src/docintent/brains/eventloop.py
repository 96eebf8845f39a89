"""One event loop per process for model requests: many requests in flight without a thread each.

``bench --concurrency N`` runs N samples at once in worker threads, because strategies are synchronous code.
With an :class:`EventLoop` installed (the executors install one when ``concurrency > 1``), every model request
of the process is a coroutine on one loop in one thread: the endpoints of all N brains share one
``openai.AsyncOpenAI`` client (one connection pool) per server, retries and rate-limit waits sleep on the loop,
and a worker thread that needs a reply only waits for its coroutine. :class:`~docintent.brains.endpoint.Endpoint`
asks :func:`current` on every request; with none installed it uses its synchronous client.

>>> import asyncio
>>> loop = EventLoop()
>>> async def double(x):
...     await asyncio.sleep(0)
...     return 2 * x
>>> loop.run(double(21))
42
>>> loop.close()
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

T = TypeVar("T")

#: Seconds :meth:`EventLoop.close` waits for the shared clients to close and the loop thread to end.
CLOSE_SECONDS = 10.0


class EventLoop:
    """An asyncio loop running in a daemon thread of its own, with objects shared by every caller.

    :meth:`run` sends a coroutine to the loop from any other thread and returns its result there (or raises
    its exception); :meth:`shared` keeps one object per key (an async client per server); :meth:`close`
    closes those and stops the loop.
    """

    def __init__(self) -> None:
        self._loop = asyncio.new_event_loop()
        self._shared: dict[Any, Any] = {}
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, name="docintent-model-requests", daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_forever()

    @property
    def loop(self) -> asyncio.AbstractEventLoop:
        """The asyncio loop itself."""
        return self._loop

    def in_loop(self) -> bool:
        """True when called from the loop's own thread (where :meth:`run` would wait on itself forever)."""
        return threading.current_thread() is self._thread

    def run(self, coroutine: Coroutine[Any, Any, T]) -> T:
        """Run ``coroutine`` on the loop and wait for it in this thread."""
        if self.in_loop():
            coroutine.close()
            raise RuntimeError("EventLoop.run was called from the loop's own thread; await the coroutine instead")
        future = asyncio.run_coroutine_threadsafe(coroutine, self._loop)
        try:
            return future.result()
        except BaseException:
            future.cancel()  # an interrupted caller takes its request with it
            raise

    def shared(self, key: Any, make: Callable[[], T]) -> T:
        """The object ``make()`` built the first time ``key`` was asked for; one per key for the loop's life."""
        with self._lock:
            if key not in self._shared:
                self._shared[key] = make()
            return self._shared[key]

    def close(self) -> None:
        """Close every shared object that has an async ``close`` (HTTP clients), then stop the loop."""
        if self._loop.is_closed():
            return
        if self._thread.is_alive():
            with contextlib.suppress(Exception):
                asyncio.run_coroutine_threadsafe(self._close_shared(), self._loop).result(CLOSE_SECONDS)
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(CLOSE_SECONDS)
        if not self._thread.is_alive():
            self._loop.close()

    async def _close_shared(self) -> None:
        with self._lock:
            objects = list(self._shared.values())
            self._shared.clear()
        for obj in objects:
            close = getattr(obj, "close", None)
            if close is not None:
                with contextlib.suppress(Exception):
                    result = close()
                    if asyncio.iscoroutine(result):
                        await result


_installed: EventLoop | None = None


def install(loop: EventLoop | None) -> None:
    """Make ``loop`` the one every model request of this process runs on (None: synchronous requests)."""
    global _installed
    _installed = loop


def current() -> EventLoop | None:
    """The event loop installed in this process, if any."""
    return _installed


__all__ = ["EventLoop", "current", "install"]
