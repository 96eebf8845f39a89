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
- ``GET /v1/runs?limit=N`` -> the runs the service holds, newest first (at most ``N``, default 50, up to 500):
  id, question, status, answer, created, links; runs posted through the API as well as from the viewer;
- ``GET /v1/runs/{id}`` -> status, answer, confidence, page (from 1), box and evidence lines, tools kept /
  rolled back, trace;
- ``GET /v1/runs/{id}/events`` -> the steps as Server-Sent Events while the run executes;
- ``GET /v1/runs/{id}/pages/{hash}.jpg`` -> any page state of the run;
- ``GET /v1/runs/{id}/trace.json``, ``GET /v1/runs/{id}/evidence`` (where the answer stands on the page);
- ``GET /v1/tools``, ``GET /v1/health``, ``GET /v1/config``;
- ``GET /v1/sample``, ``GET /v1/sample/image`` -> a damaged page to try, with its question (the demo's first);
- ``GET /v1/benchmarks``, ``GET /v1/benchmarks/{name}``, ``GET /v1/benchmarks/{name}/files/{i}`` (with ``--runs``).
"""

from __future__ import annotations

import asyncio
import hmac
import json
import logging
import re
import shutil
import tempfile
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from importlib import resources
from pathlib import Path
from typing import Any

from .. import __version__
from ..errors import DocIntentError
from ..redaction import public_url, redact
from ..strategies import applicable_options
from .config import MB, ServeConfig
from .runs import QueueFull, Run, RunStore
from .uploads import UploadError, display_name, load_upload_document

try:
    from fastapi import FastAPI, Request
    from fastapi.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
    from starlette.requests import ClientDisconnect
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError("docintent serve needs FastAPI and uvicorn: pip install 'docintent[serve]'") from err

log = logging.getLogger(__name__)
#: One line per request (method, path, status, milliseconds); ``docintent serve`` shows it on stderr.
access_log = logging.getLogger("docintent.access")

#: Static files of the viewer, read once into memory: a request never names a file on disk.
STATIC = {"app.js": "text/javascript", "style.css": "text/css"}
_FIELD_LIMIT = 1 * MB  # room for the form fields beside the file
_SSE_KEEPALIVE_S = 15.0
#: How often running runs are checked against their deadline.
_WATCH_S = 1.0
_WHOLE = re.compile(r"[0-9]{1,18}")
#: How many runs ``GET /v1/runs`` lists without a ``limit``, and at most.
RUNS_LISTED = 50
MAX_RUNS_LISTED = 500


def _static(name: str) -> bytes:
    return resources.files(__package__).joinpath("static", name).read_bytes()


class _Json(JSONResponse):
    """A JSON response whose body has every secret removed (an endpoint password in an error message)."""

    def render(self, content: Any) -> bytes:
        # ASCII escapes: a lone surrogate in an answer would make UTF-8 encoding fail (a 500).
        return redact(json.dumps(content, ensure_ascii=True, separators=(",", ":"))).encode("ascii")


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return _Json({"error": message}, status_code=status, headers=headers)


def whole_number(text: str | None, name: str, low: int, high: int) -> int | None:
    """A header or form value as a whole number in [low, high]; None when absent. Only ASCII digits count
    (``int()`` would also take other scripts' digits, and fail on thousands of them)."""
    if text is None or text == "":
        return None
    value = text.strip()
    if not _WHOLE.fullmatch(value) or not low <= int(value) <= high:
        raise ValueError(f"{name} must be a whole number between {low} and {high}")
    return int(value)


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
    own_dir = config.data_dir is None
    data_dir = Path(tempfile.mkdtemp(prefix="docintent-serve-")) if own_dir else Path(config.data_dir)  # type: ignore[arg-type]
    data_dir.mkdir(parents=True, exist_ok=True)
    store = RunStore(data_dir / "runs", config.brains, workers=config.workers, timeout_s=config.run_timeout_s,
                     keep_runs=config.keep_runs, keep_seconds=config.keep_seconds, max_queued=config.max_queued)
    benchmarks = None
    if config.runs_dir is not None:
        from .benchmarks import BenchmarkRuns

        benchmarks = BenchmarkRuns(Path(config.runs_dir), data_dir / "reports")
    static = {name: _static(name) for name in STATIC}
    # The page says whether this service wants a token, so the viewer shows its Token field only then.
    index_html = _static("index.html").replace(
        b"<body>", b'<body data-token="required">' if config.token else b'<body data-token="none">', 1)
    sample: dict[str, Any] = {}
    sample_lock = asyncio.Lock()
    health_cache: dict[str, Any] = {}
    engine_state: dict[str, Any] = {"kind": None, "loaded": False, "seconds": None}

    @asynccontextmanager
    async def lifespan(app: FastAPI) -> AsyncIterator[None]:
        if config.warm_up:
            from ..ocr import get_engine

            started = time.perf_counter()
            engine = await asyncio.to_thread(get_engine)
            engine_state.update(kind=getattr(engine, "name", type(engine).__name__), loaded=True,
                                seconds=round(time.perf_counter() - started, 2))
        sweeper = asyncio.create_task(_sweep(store))
        watchdog = asyncio.create_task(_watch(store))
        try:
            yield
        finally:
            sweeper.cancel()
            watchdog.cancel()
            store.shutdown()
            if own_dir:
                shutil.rmtree(data_dir, ignore_errors=True)

    app = FastAPI(title="docintent", version=__version__, lifespan=lifespan, docs_url="/docs", redoc_url=None)
    app.state.store = store
    app.state.config = config
    if config.cors_origins:
        from fastapi.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(config.cors_origins), allow_methods=["GET", "POST"],
                           allow_headers=["Authorization", "Content-Type"])

    def authorised(request: Request) -> bool:
        if not config.token:
            return True
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(value.strip().encode("utf-8", "replace"),
                                                                   config.token.encode("utf-8"))

    @app.middleware("http")
    async def authorise(request: Request, call_next: Any) -> Any:
        path = request.url.path
        if path.startswith("/v1/") and path != "/v1/health" and request.method != "OPTIONS" and not authorised(request):
            return _error(401, "missing or wrong bearer token (send it in the Authorization header, as Bearer "
                               "followed by the token)", {"WWW-Authenticate": "Bearer"})
        response = await call_next(request)
        response.headers.setdefault("X-Content-Type-Options", "nosniff")
        return response

    @app.middleware("http")
    async def log_access(request: Request, call_next: Any) -> Any:
        started = time.perf_counter()
        status = 500
        try:
            response = await call_next(request)
            status = response.status_code
            return response
        finally:
            # The path only: a query string may carry what a log should not keep.
            client = request.client.host if request.client else "-"
            access_log.info('%s "%s %s" %d %.1f ms', client, request.method, request.url.path, status,
                            1000 * (time.perf_counter() - started))

    # -- the viewer ---------------------------------------------------------------------------------

    @app.get("/", include_in_schema=False)
    async def index() -> HTMLResponse:
        return HTMLResponse(index_html, headers={"Cache-Control": "no-cache"})

    @app.get("/static/{name}", include_in_schema=False)
    async def static_file(name: str) -> Response:
        if name not in static:
            return _error(404, "no such file")
        return Response(static[name], media_type=STATIC[name], headers={"Cache-Control": "no-cache"})

    # -- asking -----------------------------------------------------------------------------------------

    async def read_upload(request: Request, max_fields: int) -> tuple[Any, bytes, Any] | JSONResponse:
        """The form, the uploaded file's bytes and the upload of a multipart request (an error reply when the
        upload is missing, malformed, cut off or over the limit)."""
        limit = config.max_upload_bytes
        try:
            length = whole_number(request.headers.get("content-length"), "Content-Length", 0, 10**18)
        except ValueError as err:
            return _error(400, str(err))
        if length is not None and length > limit + _FIELD_LIMIT:
            return _error(413, f"the upload is larger than the limit of {_size(limit)}")
        try:
            form = await request.form(max_files=1, max_fields=max_fields)
        except ClientDisconnect:
            if request.scope.get("docintent.too_large"):
                return _error(413, f"the upload is larger than the limit of {_size(limit)}")
            # Nobody is left to answer: one line in the log, not a traceback.
            log.info("a client went away while sending an upload to %s", request.url.path)
            return _error(400, "the client disconnected before the upload was complete")
        except Exception as err:  # a malformed multipart body
            return _error(400, f"cannot read the form: {err}")
        upload = form.get("file")
        if upload is None or isinstance(upload, str):
            return _error(400, "send the image or PDF as the multipart field 'file'")
        data = await upload.read(limit + 1)
        await upload.close()
        if len(data) > limit:
            return _error(413, f"{display_name(upload.filename)}: the upload is larger than the limit of {_size(limit)}")
        return form, data, upload

    @app.post("/v1/ask", status_code=202)
    async def post_ask(request: Request) -> JSONResponse:
        got = await read_upload(request, max_fields=16)
        if isinstance(got, JSONResponse):
            return got
        form, data, upload = got
        question = str(form.get("question") or "").strip()
        if not question:
            return _error(400, "the question is empty")
        if len(question) > config.max_question_chars:
            return _error(400, f"the question is longer than {config.max_question_chars} characters")
        task = str(form.get("task") or "doc")
        strategy = str(form.get("strategy") or "docintent")
        brain = str(form.get("brain") or config.default_brain)
        problem = _check_choice(task, strategy, brain, config)
        if problem:
            return _error(400, problem)
        if str(form.get("page") or "") != "":
            return _error(400, "the page field counted pages from 0 and is gone; send pages, counted from 1 "
                               "(pages=1 is the first page; without it every page of a PDF is considered)")
        pages = str(form.get("pages") or "").strip() or None
        try:
            max_rounds = whole_number(_field(form, "max_rounds"), "max_rounds", 0, config.max_rounds)
        except ValueError as err:
            return _error(400, str(err))
        max_rounds = config.max_rounds if max_rounds is None else max_rounds
        try:
            page = await asyncio.to_thread(load_upload_document, data, upload.filename, pages=pages,
                                           max_pixels=config.max_pixels, scratch=data_dir / "uploads")
        except UploadError as err:
            return _error(err.status, err.message)
        try:
            run = store.submit(page, question, input_name=display_name(upload.filename), task=task,
                               strategy=strategy, brain=brain,
                               options=applicable_options(strategy, max_rounds=max_rounds))
        except QueueFull as err:
            return _error(503, str(err), {"Retry-After": "5"})
        summary = run.summary()
        return _Json({"id": run.id, "status": run.status, "links": summary["links"]}, status_code=202)

    @app.post("/v1/extract")
    async def post_extract(request: Request) -> JSONResponse:
        """The uploaded page or PDF as structure (the ``docintent extract`` schema), answered when it is done."""
        got = await read_upload(request, max_fields=8)
        if isinstance(got, JSONResponse):
            return got
        form, data, upload = got
        pages = str(form.get("pages") or "").strip() or None
        restore = str(form.get("restore") or "true").strip().lower() not in ("0", "false", "no", "off")
        try:
            document = await asyncio.to_thread(load_upload_document, data, upload.filename, pages=pages,
                                               max_pixels=config.max_pixels, scratch=data_dir / "uploads")
        except UploadError as err:
            return _error(err.status, err.message)
        from ..extraction import envelope, extract_document

        try:
            entry = await asyncio.to_thread(extract_document, document, restore=restore,
                                            name=display_name(upload.filename))
        except DocIntentError as err:
            return _error(400, str(err))
        return _Json(envelope([entry]))

    def _run_or_404(run_id: str) -> Run | JSONResponse:
        run = store.get(run_id)
        if run is None:
            return _error(404, "no such run (unknown, malformed or evicted id)")
        return run

    @app.get("/v1/runs")
    async def list_runs(request: Request) -> JSONResponse:
        try:
            limit = whole_number(request.query_params.get("limit"), "limit", 1, MAX_RUNS_LISTED)
        except ValueError as err:
            return _error(400, str(err))
        runs, total = store.newest(RUNS_LISTED if limit is None else limit)
        return _Json({"runs": [run.brief() for run in runs], "total": total})

    @app.get("/v1/runs/{run_id}")
    async def get_run(run_id: str) -> JSONResponse:
        run = _run_or_404(run_id)
        if isinstance(run, JSONResponse):
            return run
        return _Json(run.summary())

    @app.get("/v1/runs/{run_id}/trace.json")
    async def get_trace(run_id: str) -> Response:
        run = _run_or_404(run_id)
        if isinstance(run, JSONResponse):
            return run
        body = redact(json.dumps(run.summary(), indent=2))
        return Response(body, media_type="application/json",
                        headers={"Content-Disposition": f'attachment; filename="docintent-{run.id}.json"'})

    @app.get("/v1/runs/{run_id}/events")
    async def get_events(run_id: str, request: Request) -> Response:
        run = _run_or_404(run_id)
        if isinstance(run, JSONResponse):
            return run
        try:
            last = whole_number(request.headers.get("last-event-id"), "Last-Event-ID", 0, 10**12)
        except ValueError as err:
            return _error(400, str(err))
        start = 0 if last is None else last + 1
        return StreamingResponse(_events(run, start, request), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"})

    @app.get("/v1/runs/{run_id}/pages/{name}")
    async def get_page(run_id: str, name: str) -> Response:
        run = _run_or_404(run_id)
        if isinstance(run, JSONResponse):
            return run
        page_hash = name.removesuffix(".jpg")
        data = None if page_hash == name else await asyncio.to_thread(store.page_jpeg, run, page_hash)
        if data is None:
            return _error(404, "no such page in this run")
        return Response(data, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})

    @app.get("/v1/runs/{run_id}/evidence")
    async def get_evidence(run_id: str) -> JSONResponse:
        run = _run_or_404(run_id)
        if isinstance(run, JSONResponse):
            return run
        if not run.is_finished:
            return _error(409, "the run has not finished")
        if run.evidence is None:
            run.evidence = await asyncio.to_thread(_evidence, store, run)
        return _Json(run.evidence)

    # -- a page to try -------------------------------------------------------------------------------------

    async def the_sample() -> Any:
        """The demo's first page and question, generated on the first request (a few seconds) and kept."""
        async with sample_lock:
            if "page" not in sample:
                from ..demo import sample_page

                sample["page"] = await asyncio.to_thread(sample_page)
        return sample["page"]

    @app.get("/v1/sample")
    async def get_sample() -> JSONResponse:
        page = await the_sample()
        return _Json({"name": page.name, "question": page.question, "task": page.task, "damage": page.damage,
                      "image": "/v1/sample/image"})

    @app.get("/v1/sample/image")
    async def get_sample_image() -> Response:
        page = await the_sample()
        return Response(page.image, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})

    # -- facts ------------------------------------------------------------------------------------------

    @app.get("/v1/tools")
    async def get_tools() -> JSONResponse:
        from ..tools import list_tools

        return _Json([{"name": t.name, "degradation": t.degradation, "description": t.description,
                              "parameters": t.parameters} for t in list_tools()])

    @app.get("/v1/config")
    async def get_config() -> JSONResponse:
        from ..strategies import STRATEGIES
        from ..vocabulary import TASKS

        return _Json({
            "tasks": list(TASKS), "strategies": list(STRATEGIES), "brains": list(config.brains),
            "default_brain": config.default_brain, "max_upload_bytes": config.max_upload_bytes,
            "max_rounds": config.max_rounds, "runs_browser": benchmarks is not None,
        })

    @app.get("/v1/health")
    async def get_health(request: Request) -> JSONResponse:
        now = time.monotonic()
        model = None
        if config.model_base_url:
            if not health_cache or now - health_cache["at"] > 10.0:
                health_cache.update(at=now, model=await asyncio.to_thread(_probe, config.model_base_url))
            model = health_cache["model"]
        status = "ok" if model is None or model["reachable"] else "degraded"
        if not authorised(request):  # a load balancer's question; the details are for token holders
            return _Json({"status": status, "version": __version__})
        return _Json({
            "status": status,
            "version": __version__,
            "ocr_engine": engine_state,
            "brains": list(config.brains),
            "model_endpoint": model,
            "workers": config.workers,
            "runs": store.counts(),
        })

    # -- the runs browser -------------------------------------------------------------------------------

    @app.get("/v1/benchmarks")
    async def list_benchmarks() -> JSONResponse:
        if benchmarks is None:
            return _error(404, "the runs browser is off (start the service with --runs DIR)")
        return _Json(await asyncio.to_thread(benchmarks.listing))

    @app.get("/v1/benchmarks/{name}")
    async def get_benchmark(name: str) -> JSONResponse:
        if benchmarks is None:
            return _error(404, "the runs browser is off (start the service with --runs DIR)")
        try:
            report = await asyncio.to_thread(benchmarks.report, name)
        except DocIntentError as err:
            return _error(400, str(err))
        if report is None:
            return _error(404, "no such benchmark run")
        return _Json({k: v for k, v in report.items() if not k.startswith("_")})

    @app.get("/v1/benchmarks/{name}/files/{index}")
    async def get_benchmark_file(name: str, index: int) -> Response:
        if benchmarks is None:
            return _error(404, "the runs browser is off (start the service with --runs DIR)")
        try:
            path = await asyncio.to_thread(benchmarks.file, name, index)
        except DocIntentError as err:  # the run cannot be reported on (as GET /v1/benchmarks/NAME says)
            return _error(400, str(err))
        if path is None or not path.is_file():
            return _error(404, "no such file in this report")
        media = "image/png" if path.suffix == ".png" else "image/jpeg"
        return Response(path.read_bytes(), media_type=media)

    app.add_middleware(_BodyLimit, limit=config.max_upload_bytes + _FIELD_LIMIT)
    return app


# -- helpers ---------------------------------------------------------------------------------------------


def _size(n: int) -> str:
    return f"{n / MB:g} MB" if n >= MB else f"{n} bytes"


def _check_choice(task: str, strategy: str, brain: str, config: ServeConfig) -> str | None:
    from ..strategies import STRATEGIES
    from ..vocabulary import TASKS

    if task not in TASKS:
        return f"task must be one of {', '.join(TASKS)}"
    if strategy not in STRATEGIES:
        return f"strategy must be one of {', '.join(STRATEGIES)}"
    if brain not in config.brains:
        return f"brain must be one of {', '.join(config.brains)}"
    return None


def _field(form: Any, name: str) -> str | None:
    value = form.get(name)
    return None if value is None else str(value)


def _probe(base_url: str) -> dict[str, Any]:
    """Whether the OpenAI-compatible endpoint answers ``GET /models`` within 2 s, asked the way the model
    brain asks (the same client, so credentials in the URL are sent as the brain sends them). The URL is
    reported with its credentials masked."""
    from ..brains.endpoint import Endpoint

    start = time.perf_counter()
    endpoint = Endpoint(base_url, timeout=2.0, max_retries=0)
    try:
        ok, problem = endpoint.probe()
    finally:
        endpoint.close()
    return {"url": public_url(base_url), "reachable": ok, "problem": problem,
            "seconds": round(time.perf_counter() - start, 3)}


def _evidence(store: RunStore, run: Run) -> dict[str, Any]:
    from .evidence import locate_answer

    result = run.result or {}
    page_hash = result.get("final_page")
    answer = result.get("answer") or ""
    if not page_hash or not answer:
        return {"page": page_hash, "box": None, "text": None, "score": None}
    page = store.page_object(run, page_hash)
    if page is None:
        return {"page": page_hash, "box": None, "text": None, "score": None}
    found = locate_answer(page, answer)
    return {"page": page_hash, **(found or {"box": None, "text": None, "score": None})}


async def _events(run: Run, start: int, request: Request) -> AsyncIterator[bytes]:
    """Server-Sent Events of ``run`` from event ``start`` on, until its "done" event.

    The worker wakes this stream when it records an event (no polling); a comment line keeps idle
    connections open through proxies."""
    loop = asyncio.get_running_loop()
    news = asyncio.Event()

    def wake() -> None:
        loop.call_soon_threadsafe(news.set)

    with run.lock:
        run.listeners.append(wake)
        # Resuming past the last event: nothing more will come once the run is over, and while it runs the
        # next new event is the next one to send.
        index = min(start, len(run.events))
    try:
        yield b"retry: 2000\n\n"
        while True:
            news.clear()
            with run.lock:
                pending = run.events[index:]
                over = not pending and bool(run.events) and run.events[-1][0] == "done"
            if over:
                return
            for kind, data in pending:
                yield f"id: {index}\nevent: {kind}\ndata: {redact(json.dumps(data))}\n\n".encode()
                index += 1
                if kind == "done":
                    return
            if pending:
                continue
            try:
                await asyncio.wait_for(news.wait(), _SSE_KEEPALIVE_S)
            except TimeoutError:
                if await request.is_disconnected():
                    return
                yield b": keep-alive\n\n"
    finally:
        with run.lock:
            run.listeners.remove(wake)


async def _watch(store: RunStore) -> None:
    """End every run past its deadline, even one whose worker is stuck where the deadline is not checked."""
    while True:
        await asyncio.sleep(_WATCH_S)
        store.expire()


async def _sweep(store: RunStore) -> None:
    """Evict expired runs every half minute even when no request arrives."""
    while True:
        await asyncio.sleep(30.0)
        await asyncio.to_thread(store.evict)
