"""The FastAPI application behind ``docintent serve``: the JSON API and the web viewer.

>>> from docintent.server import ServeConfig, create_app
>>> app = create_app(ServeConfig(workers=2))            # doctest: +SKIP
>>> # uvicorn.run(app, host="127.0.0.1", port=8737)

Endpoints (all JSON unless said otherwise; with a token configured every ``/v1`` endpoint needs
``Authorization: Bearer <token>``, but ``/v1/health`` answers its ``status`` and ``version`` to anyone, for
load balancers). Every response body and event passes through :func:`docintent.redaction.redact`; header and
form values are parsed with bounds (a malformed ``Last-Event-ID`` or ``page`` is a 400, never a 500).

- ``POST /v1/ask`` (multipart: ``file``, ``question``, ``task``, ``strategy``, ``brain``, ``pages`` (counted
  from 1; default every page of a PDF), ``max_rounds``) -> ``202 {"id", "status", "links"}`` at once;
- ``POST /v1/extract`` (multipart: ``file``, ``pages``, ``restore``) -> the page or PDF as structure (the
  ``docintent extract`` schema), answered when it is done;
- ``GET /v1/runs?limit=N`` -> the runs the service holds, newest first (at most ``N``, default 50, up to 500):
  id, question, status, answer, created, links; runs posted through the API as well as from the viewer;
- ``GET /v1/runs/{id}`` -> status, answer, confidence, page (from 1), box and evidence lines, tools kept /
  rolled back, trace;
- ``GET /v1/runs/{id}/events`` -> the steps as Server-Sent Events while the run executes;
- ``GET /v1/runs/{id}/pages/{hash}.jpg`` -> any page state of the run;
- ``GET /v1/runs/{id}/trace.json``, ``GET /v1/runs/{id}/evidence`` (where the answer stands on the page);
- ``GET /v1/tools``, ``GET /v1/health``, ``GET /v1/config``;
- ``GET /v1/sample``, ``GET /v1/sample/image`` -> a damaged page to try, with its question (the demo's first);
- ``GET /v1/benchmarks``, ``GET /v1/benchmarks/{name}``, ``GET /v1/benchmarks/{name}/files/{i}`` (with ``--runs``);
- ``GET /`` and ``GET /static/{name}`` -> the viewer's page, script and style sheet (not in the OpenAPI document).

The routes live in :mod:`docintent.server.routes`, one router per concern (``runs``: asking and what the runs
hold; ``catalogue``: the sample, tools, config and health; ``benchmarks``; ``viewer``); what they share (the
settings, the run store, the sample, the runs browser) is a :class:`~docintent.server.state.ServiceState` in
``app.state.service``, which each route receives through ``Depends``. This module puts them together.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

try:
    from fastapi import FastAPI, Request
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError("docintent serve needs FastAPI and uvicorn: pip install 'docintent[serve]'") from err

from .. import __version__
from .config import ServeConfig
from .replies import error, whole_number
from .routes import ROUTERS
from .routes.runs import FIELD_LIMIT, MAX_RUNS_LISTED, RUNS_LISTED
from .routes.viewer import STATIC
from .state import ServiceState

#: One line per request (method, path, status, milliseconds); ``docintent serve`` shows it on stderr.
access_log = logging.getLogger("docintent.access")

#: How often running runs are checked against their deadline.
_WATCH_S = 1.0

__all__ = ["MAX_RUNS_LISTED", "RUNS_LISTED", "STATIC", "access_log", "create_app", "whole_number"]


class _BodyLimit:
    """ASGI wrapper that stops reading a request body past ``limit`` bytes (for clients that send no or a
    false Content-Length); the handler then answers 413."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: dict, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        received = 0

        async def limited() -> dict:
            nonlocal received
            message = await receive()
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > self.limit:
                    scope["docintent.too_large"] = True
                    return {"type": "http.disconnect"}
            return message

        await self.app(scope, limited, send)


def create_app(config: ServeConfig | None = None) -> Any:
    """The ASGI application for ``config`` (defaults: offline reader, 2 workers, 25 MB uploads, no token)."""
    config = config or ServeConfig()
    state = ServiceState.open(config)
    app = FastAPI(title="docintent", version=__version__, lifespan=_lifespan, docs_url="/docs", redoc_url=None)
    app.state.service = state
    # Also under their own names, for code holding the application (a test evicting runs through the store).
    app.state.store = state.store
    app.state.config = config
    if config.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(
            CORSMiddleware,
            allow_origins=list(config.cors_origins),
            allow_methods=["GET", "POST"],
            allow_headers=["Authorization", "Content-Type"],
        )
    # Each middleware added wraps those before it: the body limit is outermost, then the access log, then
    # the token check (CORS, when on, answers preflights inside them).
    app.middleware("http")(_authorise)
    app.middleware("http")(_log_access)
    for router in ROUTERS:
        app.include_router(router)
    app.add_middleware(_BodyLimit, limit=config.max_upload_bytes + FIELD_LIMIT)
    return app


@asynccontextmanager
async def _lifespan(app: FastAPI) -> AsyncIterator[None]:
    """Load the OCR engine (unless told not to), run the sweeper and the watchdog, and close the service."""
    state: ServiceState = app.state.service
    if state.config.warm_up:
        from ..ocr import get_engine

        started = time.perf_counter()
        engine = await asyncio.to_thread(get_engine)
        state.engine.update(
            kind=getattr(engine, "name", type(engine).__name__),
            loaded=True,
            seconds=round(time.perf_counter() - started, 2),
        )
    sweeper = asyncio.create_task(_sweep(state))
    watchdog = asyncio.create_task(_watch(state))
    try:
        yield
    finally:
        sweeper.cancel()
        watchdog.cancel()
        state.close()


async def _authorise(request: Request, call_next: Any) -> Any:
    """A 401 for a ``/v1`` request without the token, except the health check (load balancers have no token)
    and CORS preflights (browsers send them without one); ``nosniff`` on every answer."""
    path = request.url.path
    if (
        path.startswith("/v1/")
        and path != "/v1/health"
        and request.method != "OPTIONS"
        and not request.app.state.service.authorised(request)
    ):
        return error(
            401,
            "missing or wrong bearer token (send it in the Authorization header, as Bearer followed by the token)",
            {"WWW-Authenticate": "Bearer"},
        )
    response = await call_next(request)
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    return response


async def _log_access(request: Request, call_next: Any) -> Any:
    """One line in the access log per request, a 401 or a failed handler (logged as 500) included."""
    started = time.perf_counter()
    status = 500
    try:
        response = await call_next(request)
        status = response.status_code
        return response
    finally:
        # The path only: a query string may carry what a log should not keep.
        client = request.client.host if request.client else "-"
        access_log.info(
            '%s "%s %s" %d %.1f ms',
            client,
            request.method,
            request.url.path,
            status,
            1000 * (time.perf_counter() - started),
        )


async def _watch(state: ServiceState) -> None:
    """End every run past its deadline, even one whose worker is stuck where the deadline is not checked."""
    while True:
        await asyncio.sleep(_WATCH_S)
        state.store.expire()


async def _sweep(state: ServiceState) -> None:
    """Evict expired runs every half minute even when no request arrives."""
    while True:
        await asyncio.sleep(30.0)
        await asyncio.to_thread(state.store.evict)
