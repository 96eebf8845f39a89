"""Runs of the service: a worker pool executing ``docintent.ask`` with live steps, timeouts and eviction.

Steps reach clients while a run executes through the strategy's ``on_step`` hook, called as each step is
recorded (with the pages it names), so every mode - the restoration loop, the baselines, MACT - is observed the
same way and the brain is never wrapped. The per-run deadline is the run's ``should_stop``: past it, the run
stops after its current step, and the worker is free again.
"""

from __future__ import annotations

import logging
import re
import shutil
import threading
import time
import uuid
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from ..api import ask
from ..brains import Brain
from ..document import Document
from ..errors import DocIntentError
from ..io import encode
from ..page import Page
from ..redaction import redact
from ..strategies import Run as StrategyRun
from ..strategies import RunStopped
from ..trace import Result, Step

log = logging.getLogger(__name__)

RUN_ID = re.compile(r"^[0-9a-f]{32}$")
PAGE_HASH = re.compile(r"^[0-9a-f]{20}$")
FINISHED = ("done", "failed", "timeout")


class RunTimeout(DocIntentError):
    """A run went past the service's per-run time limit."""


class QueueFull(DocIntentError):
    """Too many runs are waiting for a worker."""


@dataclass
class Run:
    """One question on one page or document, from submission to eviction."""

    id: str
    question: str
    task: str
    _: KW_ONLY
    strategy: str
    brain: str
    input_name: str
    input_page: Document | None  # the document (or one page) to answer from, until the run has finished
    options: dict[str, Any] = field(default_factory=dict)
    status: str = "queued"
    created: float = field(default_factory=time.time)
    started: float | None = None
    finished: float | None = None
    deadline: float | None = None
    events: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    steps_seen: int = 0
    result: dict[str, Any] | None = None
    error: str | None = None
    page_order: list[str] = field(default_factory=list)  # page hashes in the order they appeared
    live_pages: dict[str, Page] = field(default_factory=dict)  # until the run's pages are written to disk
    on_disk: set[str] = field(default_factory=set)
    evidence: dict[str, Any] | None = None
    ending: bool = field(default=False, repr=False)  # set by the first of the worker and the deadline to end it
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    listeners: list[Callable[[], None]] = field(default_factory=list, repr=False)

    @property
    def is_finished(self) -> bool:
        return self.status in FINISHED

    def emit(self, kind: str, data: dict[str, Any]) -> None:
        with self.lock:
            if self.events and self.events[-1][0] == "done":  # a stopped run's worker may still be busy
                return
            self.events.append((kind, data))
            listeners = list(self.listeners)
        for wake in listeners:  # event streams waiting for news (no polling)
            wake()

    def add_page(self, page: Page) -> None:
        with self.lock:
            if page.hash not in self.live_pages and page.hash not in self.on_disk:
                self.live_pages[page.hash] = page
                self.page_order.append(page.hash)

    def brief(self) -> dict[str, Any]:
        """The run as ``GET /v1/runs`` lists it: enough to recognise it and a link to open it."""
        result = self.result or {}
        return {
            "id": self.id,
            "question": self.question,
            "status": self.status,
            "answer": result.get("answer"),
            "input": self.input_name,
            "strategy": self.strategy,
            "brain": self.brain,
            "created": self.created,
            "finished": self.finished,
            "links": {"self": f"/v1/runs/{self.id}", "viewer": f"/#/run/{self.id}"},
        }

    def summary(self) -> dict[str, Any]:
        """The JSON form served by ``GET /v1/runs/{id}``."""
        result = self.result or {}
        provenance = result.get("provenance") or {}
        base = f"/v1/runs/{self.id}"
        return {
            "id": self.id,
            "status": self.status,
            "question": self.question,
            "task": self.task,
            "strategy": self.strategy,
            "brain": self.brain,
            "input": {"name": self.input_name, "page": self.page_order[0] if self.page_order else None},
            "created": self.created,
            "started": self.started,
            "finished": self.finished,
            "answer": result.get("answer"),
            "confidence": result.get("confidence"),
            # where the answer came from: the page (counted from 1), the box on it, the evidence lines
            "page": result.get("page"),
            "box": result.get("box"),
            "evidence": provenance.get("lines", []),
            "read_on": provenance.get("read_on", []),
            "answer_page": provenance.get("given_page"),
            "read_box": provenance.get("read_box"),
            "read_page": provenance.get("read_page"),
            "tools_kept": result.get("tools_kept", []),
            "tools_rolled_back": result.get("tools_rolled_back", []),
            "tools_used": result.get("tools_used"),
            "seconds": result.get("seconds"),
            "work": result.get("work", {}),
            "error": self.error,
            "final_page": result.get("final_page"),
            "pages": list(self.page_order),
            "trace": result.get("trace", [s for k, s in list(self.events) if k == "step"]),
            "links": {
                "self": base,
                "events": f"{base}/events",
                "trace": f"{base}/trace.json",
                "evidence": f"{base}/evidence",
                "page": f"{base}/pages/{{hash}}.jpg",
            },
        }


class RunStore:
    """Holds runs, executes them on ``workers`` threads and evicts finished ones by age and count."""

    def __init__(
        self,
        data_dir: Path,
        brains: dict[str, Callable[[], Brain]],
        *,
        workers: int = 2,
        timeout_s: float = 300.0,
        keep_runs: int = 100,
        keep_seconds: float = 3600.0,
        max_queued: int = 64,
    ) -> None:
        self.data_dir = data_dir
        self.brains = brains
        self.timeout_s = timeout_s
        self.keep_runs = keep_runs
        self.keep_seconds = keep_seconds
        self.max_queued = max_queued
        self.runs: dict[str, Run] = {}
        self.lock = threading.Lock()
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="docintent-run")
        self.evicted = 0

    # -- submission and execution -------------------------------------------------------------------

    def submit(
        self,
        page: Page | Document,
        question: str,
        *,
        input_name: str,
        task: str,
        strategy: str,
        brain: str,
        options: dict[str, Any] | None = None,
    ) -> Run:
        """Queue a run of a page or a document and return it at once (status "queued")."""
        document = page if isinstance(page, Document) else Document.of_page(page)
        self.evict()
        with self.lock:
            waiting = sum(1 for r in self.runs.values() if r.status == "queued")
            if waiting >= self.max_queued:
                raise QueueFull(f"{waiting} runs are waiting for a worker; try again later")
            run = Run(
                uuid.uuid4().hex,
                question,
                task,
                strategy=strategy,
                brain=brain,
                input_name=input_name,
                input_page=document,
                options=dict(options or {}),
            )
            self.runs[run.id] = run
        if isinstance(page, Page):  # a PDF's pages are added as they are read
            run.add_page(page)
        run.emit("status", {"status": "queued"})
        self.pool.submit(self._execute, run)
        return run

    def _execute(self, run: Run) -> None:
        with run.lock:
            if run.is_finished:  # ended by its deadline before a worker was free
                return
            run.status = "running"
            run.started = time.time()
            run.deadline = deadline = time.monotonic() + self.timeout_s
        run.emit("status", {"status": "running"})
        document = run.input_page
        assert document is not None
        brain: Brain | None = None

        def on_step(step: Step, context: StrategyRun) -> None:
            run.add_page(context.state.original)
            for page_hash in (step.before, step.after):
                known = context.pages.get(page_hash or "")
                if known is not None:
                    run.add_page(known)
            with run.lock:
                index = run.steps_seen
                run.steps_seen += 1
            run.emit("step", {"index": index, **step.to_dict(), "text": step.describe()})

        def should_stop() -> bool | str:
            if time.monotonic() > deadline:
                return f"the run took longer than the service's limit ({self.timeout_s:g} s) and was stopped"
            return False

        try:
            brain = self.brains[run.brain]()
            result = ask(
                document,
                run.question,
                task=run.task,
                strategy=run.strategy,
                brain=brain,
                on_step=on_step,
                should_stop=should_stop,
                **run.options,
            )
        except DocIntentError as err:  # a bad option, an endpoint that refuses: this run's error
            self._finish(run, None, redact(f"{type(err).__name__}: {err}"))
            return
        except Exception as err:  # an unexpected failure ends this run, never the service
            log.exception("run %s failed", run.id)
            self._finish(run, None, redact(f"{type(err).__name__}: {err}"))
            return
        finally:
            if brain is not None:
                brain.close()
        self._finish(run, result, redact(result.error) if result.error else result.error)

    def expire(self, now: float | None = None) -> int:
        """End every running run past its deadline (plus a second's grace for the run to stop itself) as
        "timeout", even when its worker is stuck where no step comes (a model that never answers); a late
        result of such a run is dropped. Returns how many were ended."""
        now = time.monotonic() if now is None else now
        with self.lock:
            late = [
                r
                for r in self.runs.values()
                if r.status == "running" and r.deadline is not None and now > r.deadline + 1.0
            ]
        for run in late:
            self._finish(
                run,
                None,
                f"{RunTimeout.__name__}: the run took longer than the service's limit of "
                f"{self.timeout_s:g} s and was stopped",
            )
        return len(late)

    def _finish(self, run: Run, result: Result | None, error: str | None) -> None:
        with run.lock:
            if run.ending:  # ended once already (by its deadline): a late result is dropped
                return
            run.ending = True
        if result is not None:
            for page in result.pages.values():
                run.add_page(page)
            trace = result.trace
            while run.steps_seen < len(trace):
                step = trace[run.steps_seen]
                run.emit("step", {"index": run.steps_seen, **step.to_dict(), "text": step.describe()})
                run.steps_seen += 1
            data = result.to_dict()
            data["trace"] = [{**row, "text": step.describe()} for row, step in zip(data["trace"], trace)]
            data["final_page"] = result.final_page.hash if result.final_page is not None else None
            run.result = data
        self._write_pages(run)
        run.input_page = None
        run.error = error
        if error and error.startswith((f"{RunTimeout.__name__}:", f"{RunStopped.__name__}:")):
            run.status = "timeout"
        else:
            run.status = "failed" if error and not (run.result or {}).get("answer") else "done"
        run.finished = time.time()
        run.emit("done", run.summary())

    def _write_pages(self, run: Run) -> None:
        """Move the run's page states from memory to JPEG files under its own folder."""
        folder = self.data_dir / run.id
        folder.mkdir(parents=True, exist_ok=True)
        with run.lock:
            pages = dict(run.live_pages)
        for page_hash, page in pages.items():
            data, _ = encode(page, "jpeg", quality=88)
            (folder / f"{page_hash}.jpg").write_bytes(data)
            with run.lock:
                run.on_disk.add(page_hash)
                run.live_pages.pop(page_hash, None)

    # -- reading --------------------------------------------------------------------------------------

    def get(self, run_id: str) -> Run | None:
        """The run with this id; None for a malformed, unknown or evicted id."""
        if not RUN_ID.match(run_id):
            return None
        return self.runs.get(run_id)

    def newest(self, limit: int) -> tuple[list[Run], int]:
        """The ``limit`` most recently submitted runs the store holds, newest first, and how many it holds
        (queued, running and finished alike; runs submitted through the API and the viewer are the same runs)."""
        with self.lock:
            runs = list(reversed(self.runs.values()))  # the dict keeps submission order
        return runs[:limit], len(runs)

    def page_jpeg(self, run: Run, page_hash: str) -> bytes | None:
        """JPEG bytes of one page state of ``run``; None unless the hash is one of the run's pages."""
        if not PAGE_HASH.match(page_hash):
            return None
        with run.lock:
            page = run.live_pages.get(page_hash)
            stored = page_hash in run.on_disk
        if page is not None:
            return encode(page, "jpeg", quality=88)[0]
        if stored:
            # Both parts of the path were checked: the run id against the store, the hash against the run.
            path = self.data_dir / run.id / f"{page_hash}.jpg"
            try:
                return path.read_bytes()
            except FileNotFoundError:  # evicted in between
                return None
        return None

    def page_object(self, run: Run, page_hash: str) -> Page | None:
        """A page state as a Page (decoded from its stored JPEG once the run has finished)."""
        with run.lock:
            page = run.live_pages.get(page_hash)
        if page is not None:
            return page
        data = self.page_jpeg(run, page_hash)
        if data is None:
            return None
        import cv2
        import numpy as np

        bgr = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_COLOR)
        if bgr is None:  # a damaged file on disk: no page rather than an error page
            return None
        return Page.from_array(cv2.cvtColor(bgr, cv2.COLOR_BGR2RGB), source=f"run {run.id}")

    # -- eviction ---------------------------------------------------------------------------------------

    def evict(self, now: float | None = None) -> int:
        """Forget finished runs older than ``keep_seconds`` and all but the newest ``keep_runs``; delete
        their files. Returns how many were evicted."""
        now = time.time() if now is None else now
        with self.lock:
            finished = sorted((r for r in self.runs.values() if r.is_finished), key=lambda r: r.finished or 0.0)
            expired = [r for r in finished if now - (r.finished or now) > self.keep_seconds]
            rest = [r for r in finished if r not in expired]
            surplus = rest[: max(0, len(rest) - self.keep_runs)]
            gone = expired + surplus
            for run in gone:
                del self.runs[run.id]
        for run in gone:
            shutil.rmtree(self.data_dir / run.id, ignore_errors=True)
        self.evicted += len(gone)
        return len(gone)

    def counts(self) -> dict[str, int]:
        with self.lock:
            statuses = [r.status for r in self.runs.values()]
        return {s: statuses.count(s) for s in ("queued", "running", "done", "failed", "timeout")} | {
            "evicted": self.evicted
        }

    def shutdown(self) -> None:
        self.pool.shutdown(wait=False, cancel_futures=True)
