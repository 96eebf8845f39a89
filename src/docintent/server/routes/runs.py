"""Asking and reading: ``POST /v1/ask``, ``POST /v1/extract`` and what ``/v1/runs`` holds of every run."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response, StreamingResponse
from starlette.requests import ClientDisconnect

from ...errors import DocIntentError, did_you_mean
from ...redaction import redact
from ...strategies import applicable_options
from ..config import MB, ServeConfig
from ..replies import Json, error, whole_number
from ..runs import QueueFull, Run, RunStore
from ..state import Service, ServiceState
from ..uploads import UploadError, display_name, load_upload_document

# The name the service has always logged under, whichever module of it writes the line.
log = logging.getLogger("docintent.server.app")

#: Room for the form fields beside the file (the request body may be this much over the upload limit).
FIELD_LIMIT = 1 * MB
_SSE_KEEPALIVE_S = 15.0
#: How many runs ``GET /v1/runs`` lists without a ``limit``, and at most.
RUNS_LISTED = 50
MAX_RUNS_LISTED = 500

router = APIRouter()


async def read_upload(request: Request, config: ServeConfig, max_fields: int) -> tuple[Any, bytes, Any] | JSONResponse:
    """The form, the uploaded file's bytes and the upload of a multipart request (an error reply when the
    upload is missing, malformed, cut off or over the limit)."""
    limit = config.max_upload_bytes
    try:
        length = whole_number(request.headers.get("content-length"), "Content-Length", 0, 10**18)
    except ValueError as err:
        return error(400, str(err))
    if length is not None and length > limit + FIELD_LIMIT:
        return error(413, f"the upload is larger than the limit of {_size(limit)}")
    try:
        form = await request.form(max_files=1, max_fields=max_fields)
    except ClientDisconnect:
        if request.scope.get("docintent.too_large"):
            return error(413, f"the upload is larger than the limit of {_size(limit)}")
        # Nobody is left to answer: one line in the log, not a traceback.
        log.info("a client went away while sending an upload to %s", request.url.path)
        return error(400, "the client disconnected before the upload was complete")
    except Exception as err:  # a malformed multipart body
        return error(400, f"cannot read the form: {err}")
    upload = form.get("file")
    if upload is None or isinstance(upload, str):
        return error(400, "send the image or PDF as the multipart field 'file'")
    data = await upload.read(limit + 1)
    await upload.close()
    if len(data) > limit:
        return error(413, f"{display_name(upload.filename)}: the upload is larger than the limit of {_size(limit)}")
    return form, data, upload


# The routes keep their names and docstrings: FastAPI makes the OpenAPI operation ids and texts of them.


@router.post("/v1/ask", status_code=202)
async def post_ask(request: Request, state: Service) -> JSONResponse:
    config = state.config
    got = await read_upload(request, config, max_fields=16)
    if isinstance(got, JSONResponse):
        return got
    form, data, upload = got
    question = str(form.get("question") or "").strip()
    if not question:
        return error(400, "the question is empty")
    if len(question) > config.max_question_chars:
        return error(400, f"the question is longer than {config.max_question_chars} characters")
    task = str(form.get("task") or "doc")
    strategy = str(form.get("strategy") or "docintent")
    brain = str(form.get("brain") or config.default_brain)
    problem = _check_choice(task, strategy, brain, config)
    if problem:
        return error(400, problem)
    if str(form.get("page") or "") != "":
        return error(
            400,
            "the page field counted pages from 0 and is gone; send pages, counted from 1 "
            "(pages=1 is the first page; without it every page of a PDF is considered)",
        )
    pages = str(form.get("pages") or "").strip() or None
    try:
        max_rounds = whole_number(_field(form, "max_rounds"), "max_rounds", 0, config.max_rounds)
    except ValueError as err:
        return error(400, str(err))
    max_rounds = config.max_rounds if max_rounds is None else max_rounds
    try:
        page = await asyncio.to_thread(
            load_upload_document,
            data,
            upload.filename,
            pages=pages,
            max_pixels=config.max_pixels,
            scratch=state.data_dir / "uploads",
        )
    except UploadError as err:
        return error(err.status, err.message)
    try:
        run = state.store.submit(
            page,
            question,
            input_name=display_name(upload.filename),
            task=task,
            strategy=strategy,
            brain=brain,
            options=applicable_options(strategy, max_rounds=max_rounds),
        )
    except QueueFull as err:
        return error(503, str(err), {"Retry-After": "5"})
    summary = run.summary()
    return Json({"id": run.id, "status": run.status, "links": summary["links"]}, status_code=202)


@router.post("/v1/extract")
async def post_extract(request: Request, state: Service) -> JSONResponse:
    """The uploaded page or PDF as structure (the ``docintent extract`` schema), answered when it is done."""
    got = await read_upload(request, state.config, max_fields=8)
    if isinstance(got, JSONResponse):
        return got
    form, data, upload = got
    pages = str(form.get("pages") or "").strip() or None
    restore = str(form.get("restore") or "true").strip().lower() not in ("0", "false", "no", "off")
    try:
        document = await asyncio.to_thread(
            load_upload_document,
            data,
            upload.filename,
            pages=pages,
            max_pixels=state.config.max_pixels,
            scratch=state.data_dir / "uploads",
        )
    except UploadError as err:
        return error(err.status, err.message)
    from ...extraction import envelope, extract_document

    try:
        entry = await asyncio.to_thread(extract_document, document, restore=restore, name=display_name(upload.filename))
    except DocIntentError as err:
        return error(400, str(err))
    return Json(envelope([entry]))


def _run_or_404(state: ServiceState, run_id: str) -> Run | JSONResponse:
    run = state.store.get(run_id)
    if run is None:
        return error(404, "no such run (unknown, malformed or evicted id)")
    return run


@router.get("/v1/runs")
async def list_runs(request: Request, state: Service) -> JSONResponse:
    try:
        limit = whole_number(request.query_params.get("limit"), "limit", 1, MAX_RUNS_LISTED)
    except ValueError as err:
        return error(400, str(err))
    runs, total = state.store.newest(RUNS_LISTED if limit is None else limit)
    return Json({"runs": [run.brief() for run in runs], "total": total})


@router.get("/v1/runs/{run_id}")
async def get_run(run_id: str, state: Service) -> JSONResponse:
    run = _run_or_404(state, run_id)
    if isinstance(run, JSONResponse):
        return run
    return Json(run.summary())


@router.get("/v1/runs/{run_id}/trace.json")
async def get_trace(run_id: str, state: Service) -> Response:
    run = _run_or_404(state, run_id)
    if isinstance(run, JSONResponse):
        return run
    body = redact(json.dumps(run.summary(), indent=2))
    return Response(
        body,
        media_type="application/json",
        headers={"Content-Disposition": f'attachment; filename="docintent-{run.id}.json"'},
    )


@router.get("/v1/runs/{run_id}/events")
async def get_events(run_id: str, request: Request, state: Service) -> Response:
    run = _run_or_404(state, run_id)
    if isinstance(run, JSONResponse):
        return run
    try:
        last = whole_number(request.headers.get("last-event-id"), "Last-Event-ID", 0, 10**12)
    except ValueError as err:
        return error(400, str(err))
    start = 0 if last is None else last + 1
    return StreamingResponse(
        _events(run, start, request),
        media_type="text/event-stream",
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


@router.get("/v1/runs/{run_id}/pages/{name}")
async def get_page(run_id: str, name: str, state: Service) -> Response:
    run = _run_or_404(state, run_id)
    if isinstance(run, JSONResponse):
        return run
    page_hash = name.removesuffix(".jpg")
    data = None if page_hash == name else await asyncio.to_thread(state.store.page_jpeg, run, page_hash)
    if data is None:
        return error(404, "no such page in this run")
    return Response(data, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})


@router.get("/v1/runs/{run_id}/evidence")
async def get_evidence(run_id: str, state: Service) -> JSONResponse:
    run = _run_or_404(state, run_id)
    if isinstance(run, JSONResponse):
        return run
    if not run.is_finished:
        return error(409, "the run has not finished")
    if run.evidence is None:
        run.evidence = await asyncio.to_thread(_evidence, state.store, run)
    return Json(run.evidence)


# -- helpers ---------------------------------------------------------------------------------------------


def _size(n: int) -> str:
    return f"{n / MB:g} MB" if n >= MB else f"{n} bytes"


def _check_choice(task: str, strategy: str, brain: str, config: ServeConfig) -> str | None:
    from ...strategies import STRATEGIES
    from ...vocabulary import TASKS

    for what, value, valid in (
        ("task", task, list(TASKS)),
        ("strategy", strategy, list(STRATEGIES)),
        ("brain", brain, list(config.brains)),
    ):
        if value not in valid:
            return f"{what} must be one of {', '.join(valid)}: got {value[:80]!r}{did_you_mean(value, valid)}"
    return None


def _field(form: Any, name: str) -> str | None:
    value = form.get(name)
    return None if value is None else str(value)


def _evidence(store: RunStore, run: Run) -> dict[str, Any]:
    from ..evidence import locate_answer

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
