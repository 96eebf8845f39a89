"""Where the work of a run happens: in this process, in local worker processes, or on a Ray cluster.

A run (a benchmark, an index build) gives an executor a list of items and a *job*. The executor runs the job
on every item somewhere and hands each result back through ``emit``, in the caller's thread, as soon as it
arrives. The caller alone writes results (``results.jsonl``, the index database), so resuming, retrying failed
rows, sharding and the manifest are the same whichever executor ran the work; only the order of arrival
differs.

A job is a picklable object with

- ``setup() -> state``: the expensive part, done once per worker slot (build a brain, load an OCR engine);
- ``run(state, item) -> result``: one item; an exception stops the run (batch jobs return errors as data);
- ``lost(item, reason) -> result``: the result for an item whose worker died on every try (or raise);
- ``close(state)``; and ``batch``: items per remote call (1 streams results; more amortises the per-call cost
  of items that take milliseconds, such as reading a PDF text layer).

Executors:

- :class:`LocalExecutor` — ``workers`` spawned processes (1 = this process), each with ``concurrency`` items
  in flight on a thread pool (for brains that wait on a model server);
- :class:`RayExecutor` — one Ray actor per worker, each building its state once and keeping ``concurrency``
  items in flight; a worker that dies is restarted and its items are run again (``max_retries``).

Both share one :class:`~docintent.brains.ratelimit.RateLimiter` between every model call of the run when a
rate limit is set or ``concurrency > 1`` (so an HTTP 429 slows the whole run down). With ``concurrency > 1``
(or ``async_calls=True``) each process also runs its model requests as coroutines on one
:class:`~docintent.brains.eventloop.EventLoop`: the items' threads run the strategies, the loop holds every
request in flight on one connection pool (``async_calls=False`` keeps one synchronous client per item).

>>> class Square:
...     batch = 1
...     def setup(self): return None
...     def run(self, state, item): return item * item
...     def lost(self, item, reason): raise RuntimeError(reason)
...     def close(self, state): pass
>>> got = []
>>> LocalExecutor(concurrency=4).map([1, 2, 3], Square(), got.append)
>>> sorted(got)
[1, 4, 9]
"""

from __future__ import annotations

import contextlib
import logging
import math
import os
import queue
import signal
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ProcessPoolExecutor, ThreadPoolExecutor, wait
from dataclasses import KW_ONLY, dataclass, field
from multiprocessing.managers import BaseManager
from typing import Any, Protocol

from ..brains import eventloop, ratelimit
from ..errors import ConfigError, DocIntentError

log = logging.getLogger(__name__)

EXECUTORS = ("local", "ray")
#: Environment variables that set inference threads; each worker gets its share of the cores unless set.
THREAD_VARIABLES = ("DOCINTENT_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
#: Object store of a Ray started here: rows and page texts are small, so a modest store is plenty.
LOCAL_OBJECT_STORE_BYTES = 256 * 1024**2
#: Seconds between probes of a Ray worker that failed (restarting), and before giving up when all are gone.
PROBE_SECONDS = 0.5
RAY_WORKERS_GONE_SECONDS = 120.0


class Job(Protocol):
    """What an executor runs (see the module docstring)."""

    @property
    def batch(self) -> int: ...

    def setup(self) -> Any: ...

    def run(self, state: Any, item: Any) -> Any: ...

    def lost(self, item: Any, reason: str) -> Any: ...

    def close(self, state: Any) -> None: ...


class Executor(Protocol):
    """Runs a job over items and emits each result in the caller's thread."""

    name: str

    def map(self, items: Sequence[Any], job: Job, emit: Callable[[Any], None], *, state: Any = None) -> None: ...

    def describe(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class RateLimit:
    """A run-wide budget for model calls: requests and tokens per minute (None = unlimited)."""

    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None

    def make(self) -> ratelimit.RateLimiter:
        return ratelimit.RateLimiter(self.requests_per_minute, self.tokens_per_minute)


def usable_cores() -> int:
    """CPU cores this process may run on (its affinity mask where the OS has one, e.g. under taskset)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def thread_environment(cores: int) -> dict[str, str]:
    """Inference-thread variables giving a worker ``cores`` threads, except those the user has set."""
    share = str(max(1, int(cores)))
    return {name: share for name in THREAD_VARIABLES if name not in os.environ}


@contextlib.contextmanager
def _environment(values: dict[str, str]) -> Iterator[None]:
    for name, value in values.items():
        os.environ[name] = value
    try:
        yield
    finally:
        for name in values:
            os.environ.pop(name, None)


def apply_thread_setting() -> None:
    """Give OpenCV the thread count of ``DOCINTENT_THREADS`` in a worker (ONNX Runtime reads it itself)."""
    threads = os.environ.get("DOCINTENT_THREADS")
    if threads:
        with contextlib.suppress(Exception):
            import cv2

            cv2.setNumThreads(int(threads))


def _chunks(items: Sequence[Any], size: int) -> list[list[Any]]:
    size = max(1, size)
    return [list(items[i : i + size]) for i in range(0, len(items), size)]


# --- worker slots --------------------------------------------------------------------------------------------


class _Slots:
    """Up to ``size`` job states in one process, built on first need and lent to one item at a time."""

    def __init__(self, job: Job, size: int, first: Any = None) -> None:
        self.job = job
        self.size = max(1, size)
        self._free: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._owned: list[Any] = []
        self._made = 0
        self._lock = threading.Lock()
        self._warm = threading.Event()
        self._warming = threading.Lock()
        if first is not None:  # a state the caller built and will close itself
            self._free.put(first)
            self._made = 1

    def run(self, item: Any) -> Any:
        if not self._warm.is_set():
            # The first item of a process runs alone: libraries build things lazily on first use (the
            # openai SDK its pydantic models), and 32 threads doing that at once fail in pydantic.
            with self._warming:
                if not self._warm.is_set():
                    try:
                        return self._run(item)
                    finally:
                        self._warm.set()
        return self._run(item)

    def _run(self, item: Any) -> Any:
        state = self._take()
        try:
            return self.job.run(state, item)
        finally:
            self._free.put(state)

    def run_all(self, items: list[Any], pool: ThreadPoolExecutor | None) -> list[Any]:
        if pool is None or len(items) == 1:
            return [self.run(item) for item in items]
        return list(pool.map(self.run, items))

    def _take(self) -> Any:
        try:
            return self._free.get_nowait()
        except queue.Empty:
            pass
        with self._lock:
            build = self._made < self.size
            if build:
                self._made += 1
        if not build:
            return self._free.get()
        state = self.job.setup()
        with self._lock:
            self._owned.append(state)
        return state

    def close(self) -> None:
        for state in self._owned:
            with contextlib.suppress(Exception):
                self.job.close(state)
        self._owned.clear()


# --- local ---------------------------------------------------------------------------------------------------


def async_model_calls(concurrency: int, async_calls: bool | None) -> bool:
    """Whether a worker with ``concurrency`` items in flight runs its model requests on an event loop
    (``async_calls`` None: when more than one item is in flight)."""
    return concurrency > 1 if async_calls is None else bool(async_calls)


@contextlib.contextmanager
def _model_loop(wanted: bool) -> Iterator[None]:
    """An :class:`~docintent.brains.eventloop.EventLoop` installed for the block when ``wanted`` and none is."""
    if not wanted or eventloop.current() is not None:
        yield
        return
    loop = eventloop.EventLoop()
    eventloop.install(loop)
    try:
        yield
    finally:
        eventloop.install(None)
        loop.close()


@dataclass
class LocalExecutor:
    """Work on this machine: ``workers`` processes (1 = this process), ``concurrency`` items in flight in each.

    With ``workers > 1`` the job must be picklable; processes are spawned (not forked: forked children
    inherit ONNX Runtime / OpenMP thread pools in undefined states) and each gets cores/workers inference
    threads unless ``DOCINTENT_THREADS`` / ``OMP_NUM_THREADS`` are set. A worker process that dies ends the
    run with a :class:`~docintent.errors.DocIntentError` (everything emitted so far is kept by the caller).
    ``async_calls``: model requests on one event loop per process (None: when ``concurrency > 1``).
    """

    workers: int = 1
    concurrency: int = 1
    rate_limit: RateLimit | None = None
    async_calls: bool | None = None
    name: str = field(default="local", init=False)

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ConfigError(f"workers must be >= 1, got {self.workers}")
        if self.concurrency < 1:
            raise ConfigError(f"concurrency must be >= 1, got {self.concurrency}")

    def describe(self) -> dict[str, Any]:
        """The settings a manifest records."""
        return {
            "executor": "local",
            "workers": self.workers,
            "concurrency": self.concurrency,
            "model_calls": _calls_fact(self.concurrency, self.async_calls),
            **_limit_facts(self.rate_limit),
        }

    def _needs_limiter(self) -> bool:
        return self.rate_limit is not None or self.concurrency > 1

    def map(self, items: Sequence[Any], job: Job, emit: Callable[[Any], None], *, state: Any = None) -> None:
        """Run ``job`` on every item; ``state``: a ready state for this process (e.g. the caller's brain)."""
        if not items:
            return
        if self.workers == 1 or len(items) == 1:
            self._map_here(items, job, emit, state)
        else:
            self._map_processes(items, job, emit)

    def _map_here(self, items: Sequence[Any], job: Job, emit: Callable[[Any], None], state: Any) -> None:
        slots = _Slots(job, self.concurrency, first=state)
        previous = ratelimit.current()
        if self._needs_limiter():
            ratelimit.install((self.rate_limit or RateLimit()).make())
        try:
            with _model_loop(async_model_calls(self.concurrency, self.async_calls)):
                try:
                    if self.concurrency == 1:
                        for item in items:
                            emit(slots.run(item))
                        return
                    with ThreadPoolExecutor(self.concurrency, thread_name_prefix="docintent-item") as pool:
                        _stream(pool, slots.run, [(item,) for item in items], 2 * self.concurrency, emit)
                finally:
                    slots.close()  # before the loop: its brains' clients close while it still runs
        finally:
            ratelimit.install(previous)

    def _map_processes(self, items: Sequence[Any], job: Job, emit: Callable[[Any], None]) -> None:
        import multiprocessing
        import pickle
        from concurrent.futures.process import BrokenProcessPool

        try:
            pickle.dumps(job)
        except Exception as err:
            raise ConfigError(
                f"workers > 1 need a picklable job (module-level functions or classes, BrainFactory or "
                f"functools.partial; not a lambda or local function): {err}"
            ) from None
        context = multiprocessing.get_context("spawn")
        size = job.batch * self.concurrency
        with contextlib.ExitStack() as stack:
            limiter = None
            if self._needs_limiter():
                manager = stack.enter_context(_LimiterManager(ctx=context))
                spec = self.rate_limit or RateLimit()
                limiter = manager.RateLimiter(spec.requests_per_minute, spec.tokens_per_minute)  # type: ignore[attr-defined]
            stack.enter_context(_environment(thread_environment(usable_cores() // self.workers)))
            pool = stack.enter_context(
                ProcessPoolExecutor(
                    max_workers=self.workers,
                    mp_context=context,
                    initializer=_init_process,
                    initargs=(
                        job,
                        self.concurrency,
                        limiter,
                        os.getpid(),
                        async_model_calls(self.concurrency, self.async_calls),
                    ),
                )
            )

            def emit_all(results: list[Any]) -> None:
                for result in results:
                    emit(result)

            try:
                _stream(
                    pool,
                    _run_in_process,
                    [(chunk,) for chunk in _chunks(items, size)],
                    2 * self.workers,
                    emit_all,
                    start_quietly=True,
                )
            except BrokenProcessPool as err:
                raise DocIntentError(
                    f"a worker process died ({err}); the results finished so far are saved, run the same "
                    "command again to resume"
                ) from None
            except BaseException:
                # Ctrl-C or an error here: stop now, without waiting for the items in progress.
                pool.shutdown(wait=False, cancel_futures=True)
                for process in list((getattr(pool, "_processes", None) or {}).values()):
                    with contextlib.suppress(Exception):
                        process.terminate()
                raise


def _stream(
    pool: Any,
    fn: Callable[..., Any],
    calls: list[tuple[Any, ...]],
    ahead: int,
    emit: Callable[[Any], None],
    *,
    start_quietly: bool = False,
) -> None:
    """Submit ``fn(*args)`` for every call, keeping ``ahead`` in flight, and emit results as they finish.

    ``start_quietly``: the first submissions start worker processes; with Ctrl-C ignored meanwhile, they never
    print a KeyboardInterrupt of their own (the caller alone decides how to stop)."""
    pending = iter(calls)
    in_flight: set[Future[Any]] = set()
    try:
        with _sigint_ignored() if start_quietly else contextlib.nullcontext():
            for args in _take(pending, ahead):
                in_flight.add(pool.submit(fn, *args))
        while in_flight:
            done, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
            for future in done:
                emit(future.result())
            for args in _take(pending, len(done)):
                in_flight.add(pool.submit(fn, *args))
    except BaseException:
        for future in in_flight:
            future.cancel()
        raise


def _take(iterator: Iterator[Any], n: int) -> list[Any]:
    out = []
    for _ in range(n):
        try:
            out.append(next(iterator))
        except StopIteration:
            break
    return out


_process_slots: dict[str, Any] = {}


@contextlib.contextmanager
def _sigint_ignored() -> Iterator[None]:
    """Ignore Ctrl-C in this block (processes started in it inherit that); only possible in the main thread."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


def _exit_with_parent(parent: int) -> None:
    """Exit this worker as soon as its parent is gone (killed, crashed): the pool cannot tell it to stop then."""
    while True:
        time.sleep(0.5)
        if os.getppid() != parent:
            os._exit(1)


def _init_process(
    job: Job, concurrency: int, limiter: Any, parent: int | None = None, async_calls: bool = False
) -> None:
    # Ctrl-C reaches every process of the terminal's group; the parent alone decides how to stop.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if parent is not None:
        threading.Thread(target=_exit_with_parent, args=(parent,), daemon=True, name="exit-with-parent").start()
    apply_thread_setting()
    if limiter is not None:
        ratelimit.install(limiter)
    if async_calls:  # for the worker's life: its loop thread ends with the process
        eventloop.install(eventloop.EventLoop())
    _process_slots["slots"] = _Slots(job, concurrency)
    _process_slots["pool"] = ThreadPoolExecutor(concurrency) if concurrency > 1 else None


def _run_in_process(items: list[Any]) -> list[Any]:
    return _process_slots["slots"].run_all(items, _process_slots["pool"])


class _LimiterManager(BaseManager):
    """A ``multiprocessing`` manager process holding the run's one RateLimiter; workers call it by proxy."""


_LimiterManager.register("RateLimiter", ratelimit.RateLimiter)


# --- Ray -----------------------------------------------------------------------------------------------------


def _import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise ImportError("--executor ray needs Ray: pip install 'docintent[ray]'") from None
    return ray


class _RayLimiterClient:
    """The run's limiter actor seen from a worker: the :class:`~docintent.brains.ratelimit.Limiter` calls."""

    def __init__(self, handle: Any) -> None:
        self._handle = handle

    def reserve(self, tokens: int = 0) -> float:
        import ray

        return float(ray.get(self._handle.reserve.remote(tokens)))

    def settle(self, tokens: int) -> None:
        self._handle.settle.remote(tokens)  # fire and forget: nothing waits on a correction

    def throttled(self, wait: float) -> float:
        import ray

        return float(ray.get(self._handle.throttled.remote(wait)))


class _RayWorker:
    """A Ray actor: builds up to ``concurrency`` job states once and runs chunks of items with them."""

    def __init__(self, job: Job, concurrency: int, limiter_name: str | None, async_calls: bool = False) -> None:
        apply_thread_setting()
        if limiter_name is not None:
            import ray

            ratelimit.install(_RayLimiterClient(ray.get_actor(limiter_name)))
        if async_calls:
            eventloop.install(eventloop.EventLoop())
        self._slots = _Slots(job, concurrency)
        # A threaded actor runs up to ``concurrency`` calls at once; each takes one state from the slots.

    def run(self, items: list[Any]) -> list[Any]:
        return [self._slots.run(item) for item in items]

    def pid(self) -> int:
        return os.getpid()


@dataclass
class RayExecutor:
    """Work on a Ray cluster (``address``; None starts a local Ray on at most ``num_cpus`` cores).

    ``workers``: actors (default: the cluster's CPUs / ``cpus_per_task``); each reserves ``cpus_per_task`` CPUs
    and ``memory_per_task`` bytes and keeps ``concurrency`` items in flight. Inputs the items name (images,
    PDFs, a steps folder) must be readable at the same path on every node (shared storage). An actor that dies
    is restarted; the items it held run again, each alone on an idle actor, and an item whose worker dies
    while it runs alone more than ``max_retries`` times becomes ``job.lost(item, reason)``.
    """

    address: str | None = None
    workers: int | None = None
    concurrency: int = 1
    _: KW_ONLY
    cpus_per_task: float = 1.0
    memory_per_task: int | None = None
    num_cpus: int | None = None
    max_retries: int = 3
    rate_limit: RateLimit | None = None
    async_calls: bool | None = None
    name: str = field(default="ray", init=False)

    def __post_init__(self) -> None:
        if self.workers is not None and self.workers < 1:
            raise ConfigError(f"workers must be >= 1, got {self.workers}")
        if self.concurrency < 1:
            raise ConfigError(f"concurrency must be >= 1, got {self.concurrency}")
        if self.cpus_per_task <= 0:
            raise ConfigError(f"cpus per task must be > 0, got {self.cpus_per_task}")
        if self.max_retries < 0:
            raise ConfigError(f"max retries must be >= 0, got {self.max_retries}")

    def describe(self) -> dict[str, Any]:
        """The settings a manifest records."""
        return {
            "executor": "ray",
            "ray_address": self.address,
            "workers": self.workers,
            "concurrency": self.concurrency,
            "cpus_per_task": self.cpus_per_task,
            "memory_per_task": self.memory_per_task,
            "model_calls": _calls_fact(self.concurrency, self.async_calls),
            **_limit_facts(self.rate_limit),
        }

    @contextlib.contextmanager
    def connected(self) -> Iterator[Any]:
        """Ray, initialised: the running one, the cluster at ``address``, or a local one started (and shut
        down afterwards) here."""
        ray = _import_ray()
        if ray.is_initialized():
            yield ray
            return
        if self.address:
            ray.init(address=self.address, logging_level=logging.WARNING, log_to_driver=False)
        else:
            cpus = min(self.num_cpus or usable_cores(), usable_cores())
            # "local": a new Ray of our own, even where `ray start` runs a cluster on this machine.
            ray.init(
                address="local",
                num_cpus=cpus,
                include_dashboard=False,
                logging_level=logging.WARNING,
                log_to_driver=False,
                object_store_memory=LOCAL_OBJECT_STORE_BYTES,
            )
        try:
            yield ray
        finally:
            ray.shutdown()

    def map(self, items: Sequence[Any], job: Job, emit: Callable[[Any], None], *, state: Any = None) -> None:
        """Run ``job`` on every item on Ray actors (``state`` is not used: every actor builds its own)."""
        if not items:
            return
        with self.connected() as ray:
            _RayRun(ray, self, job, emit).run(_chunks(items, job.batch))


def _calls_fact(concurrency: int, async_calls: bool | None) -> str:
    return "async" if async_model_calls(concurrency, async_calls) else "sync"


def _limit_facts(limit: RateLimit | None) -> dict[str, Any]:
    if limit is None:
        return {}
    return {"requests_per_minute": limit.requests_per_minute, "tokens_per_minute": limit.tokens_per_minute}


class _RayRun:
    """One :meth:`RayExecutor.map`: start actors, keep each busy, collect results, retry what a death lost."""

    def __init__(self, ray: Any, executor: RayExecutor, job: Job, emit: Callable[[Any], None]) -> None:
        self.ray = ray
        self.ex = executor
        self.job = job
        self.emit = emit

    def _actor_count(self, chunks: int) -> int:
        if self.ex.workers:
            return min(self.ex.workers, chunks)
        cpus = float(self.ray.cluster_resources().get("CPU", 1))
        return max(1, min(chunks, int(cpus // self.ex.cpus_per_task)))

    def _start(self, count: int) -> tuple[list[Any], Any]:
        ray, ex = self.ray, self.ex
        limiter = limiter_name = None
        if ex.rate_limit is not None or ex.concurrency > 1:
            spec = ex.rate_limit or RateLimit()
            # Named, so workers look it up instead of carrying its handle as a constructor argument (a
            # restarted actor re-reads its arguments, and handles held there outlive the run poorly).
            limiter_name = f"docintent-limiter-{os.getpid()}-{time.monotonic_ns()}"
            limiter = (
                ray.remote(ratelimit.RateLimiter)
                .options(num_cpus=0, name=limiter_name)
                .remote(spec.requests_per_minute, spec.tokens_per_minute)
            )
        options: dict[str, Any] = {
            "num_cpus": ex.cpus_per_task,
            "max_restarts": -1,  # a killed worker comes back (building its state again) ...
            "max_task_retries": 0,  # ... and the driver, not Ray, decides what to run again
            "max_concurrency": ex.concurrency,
        }
        env = thread_environment(math.ceil(ex.cpus_per_task))
        if env:
            options["runtime_env"] = {"env_vars": env}
        if ex.memory_per_task:
            options["memory"] = ex.memory_per_task
        worker = ray.remote(_RayWorker).options(**options)
        calls = async_model_calls(ex.concurrency, ex.async_calls)
        return [worker.remote(self.job, ex.concurrency, limiter_name, calls) for _ in range(count)], limiter

    def run(self, chunks: list[list[Any]]) -> None:
        ray = self.ray
        lost_errors = (ray.exceptions.RayActorError, ray.exceptions.WorkerCrashedError, ray.exceptions.ObjectLostError)
        actors, limiter = self._start(self._actor_count(len(chunks)))
        todo: deque[tuple[list[Any], int]] = deque((chunk, 0) for chunk in chunks)
        in_flight: dict[Any, tuple[list[Any], int, int, bool]] = {}
        # Work an actor held when it died: the culprit or bystanders, which cannot be told apart. Each such
        # chunk runs again alone on an idle actor, and only a death while alone counts as one of its tries,
        # so a sample that kills its worker never uses up the tries of the samples queued beside it.
        suspects: deque[tuple[list[Any], int]] = deque()
        alone: set[int] = set()  # actors running a suspect by itself
        load = [0] * len(actors)
        ahead = self.ex.concurrency + 1  # calls queued per actor: all slots busy and one waiting
        # Actors that failed a call are left alone until a probe call succeeds: a restarting actor rejects
        # calls at once, and sending it work would burn the items' tries in milliseconds.
        down: dict[int, float] = {}  # actor -> when to probe it next
        probes: dict[Any, int] = {}
        all_down_since: float | None = None

        def submit() -> None:
            live = [i for i in range(len(actors)) if i not in down]
            while suspects:
                idle = [i for i in live if load[i] == 0]
                if not idle:
                    break
                chunk, tries = suspects.popleft()
                in_flight[actors[idle[0]].run.remote(chunk)] = (chunk, idle[0], tries, True)
                load[idle[0]] += 1
                alone.add(idle[0])
            shared = [i for i in live if i not in alone]
            while todo and shared:
                index = min(shared, key=load.__getitem__)
                if load[index] >= ahead:
                    return
                chunk, tries = todo.popleft()
                in_flight[actors[index].run.remote(chunk)] = (chunk, index, tries, False)
                load[index] += 1

        try:
            while todo or suspects or in_flight:
                now = time.monotonic()
                for index, when in list(down.items()):
                    if when <= now and index not in probes.values():
                        probes[actors[index].pid.remote()] = index
                if len(down) == len(actors):
                    all_down_since = all_down_since or now
                    if now - all_down_since > RAY_WORKERS_GONE_SECONDS:
                        raise DocIntentError(
                            f"no Ray worker has been available for {RAY_WORKERS_GONE_SECONDS:.0f} s; the results "
                            "finished so far are saved, run the same command again to resume"
                        )
                else:
                    all_down_since = None
                submit()
                refs = list(in_flight) + list(probes)
                if not refs:
                    time.sleep(PROBE_SECONDS)
                    continue
                ready, rest = ray.wait(refs, num_returns=1, timeout=PROBE_SECONDS if down else None)
                if rest and ready:
                    more, _ = ray.wait(rest, num_returns=len(rest), timeout=0)
                    ready += more
                for ref in ready:
                    if ref in probes:
                        index = probes.pop(ref)
                        try:
                            ray.get(ref)
                            down.pop(index, None)
                        except lost_errors:
                            down[index] = time.monotonic() + PROBE_SECONDS
                        continue
                    chunk, index, tries, isolated = in_flight.pop(ref)
                    load[index] -= 1
                    if isolated:
                        alone.discard(index)
                    try:
                        results = ray.get(ref)
                    except ray.exceptions.RayTaskError as err:
                        cause = getattr(err, "cause", None)
                        if isinstance(cause, Exception):
                            raise cause from None
                        raise
                    except lost_errors as err:
                        down.setdefault(index, time.monotonic() + PROBE_SECONDS)
                        reason = f"worker died: {type(err).__name__}"
                        tries += isolated
                        if tries <= self.ex.max_retries:
                            log.warning(
                                "%s; running its %d item(s) again, alone (%d of %d tries used)",
                                reason,
                                len(chunk),
                                tries,
                                self.ex.max_retries,
                            )
                            suspects.append((chunk, tries))
                        else:
                            for item in chunk:
                                self.emit(self.job.lost(item, f"{reason} each of {tries} times it ran alone"))
                        continue
                    for result in results:
                        self.emit(result)
        finally:
            for actor in actors:
                with contextlib.suppress(Exception):
                    ray.kill(actor)
            if limiter is not None:
                with contextlib.suppress(Exception):
                    ray.kill(limiter)


# --- choosing one --------------------------------------------------------------------------------------------


def parse_memory(text: str | None) -> int | None:
    """``"2G"``, ``"512M"``, ``"1.5GB"`` or a number of bytes -> bytes (None stays None)."""
    if text is None:
        return None
    units = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}
    raw = text.strip().lower().removesuffix("b").removesuffix("i")
    unit = raw[-1:] if raw[-1:] in units and not raw[-1:].isdigit() else ""
    number = raw[: len(raw) - len(unit)] if unit else raw
    try:
        value = float(number) * units[unit]
    except ValueError:
        raise ConfigError(f"memory {text!r}: expected a size such as 2G, 512M or a number of bytes") from None
    if not math.isfinite(value) or value < 1:
        raise ConfigError(f"memory {text!r}: must be a finite size of at least one byte")
    return int(value)


def make_executor(
    kind: str = "local",
    *,
    workers: int | None = None,
    concurrency: int = 1,
    ray_address: str | None = None,
    cpus_per_task: float = 1.0,
    memory_per_task: str | int | None = None,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
) -> Executor:
    """The executor the command-line options describe (``kind``: "local" or "ray")."""
    limit = None
    if requests_per_minute is not None or tokens_per_minute is not None:
        limit = RateLimit(requests_per_minute, tokens_per_minute)
    memory = parse_memory(memory_per_task) if isinstance(memory_per_task, str) else memory_per_task
    if kind == "local":
        if ray_address:
            raise ConfigError("--ray-address needs --executor ray")
        return LocalExecutor(workers=1 if workers is None else workers, concurrency=concurrency, rate_limit=limit)
    if kind == "ray":
        return RayExecutor(
            address=ray_address,
            workers=workers,
            concurrency=concurrency,
            cpus_per_task=cpus_per_task,
            memory_per_task=memory,
            rate_limit=limit,
        )
    raise ConfigError(f"executor {kind!r} is unknown; valid: {', '.join(EXECUTORS)}")


# --- progress ------------------------------------------------------------------------------------------------


class Progress:
    """One progress line for a run: items done (of the total), failures, items per second and time left.

    Shown on a terminal (``show=None``) or when asked; ``update(failed)`` once per emitted result.
    """

    def __init__(self, total: int, *, desc: str, unit: str = "row", initial: int = 0, show: bool | None = None):
        from tqdm import tqdm

        self.failed = 0
        self._last_error = ""
        visible = sys.stderr.isatty() if show is None else show
        self._bar = tqdm(
            total=total,
            initial=initial,
            disable=not visible,
            unit=unit,
            desc=desc,
            dynamic_ncols=True,
            bar_format="{desc}: {n_fmt}/{total_fmt} {unit}s{postfix} | {rate_fmt} | {elapsed} elapsed, ETA {remaining}",
        )
        self._bar.set_postfix_str("0 failed", refresh=False)

    def update(self, failed: bool = False, note: str | None = None) -> None:
        """One more item done; ``failed`` with its error text ``note`` (the last one stays on the line)."""
        if failed:
            self.failed += 1
            self._last_error = (note or "")[:50]
        text = f"{self.failed} failed" + (f" (last: {self._last_error})" if self._last_error else "")
        self._bar.set_postfix_str(text, refresh=False)
        self._bar.update(1)

    def close(self) -> None:
        self._bar.close()


class Activity:
    """One status line for one long task (a question about a document, a page restored): what it is doing now
    and for how long, on stderr. Shown on a terminal (``show=None``) or when asked; ``say(text)`` replaces
    the line's text."""

    def __init__(self, desc: str, *, show: bool | None = None) -> None:
        from tqdm import tqdm

        visible = sys.stderr.isatty() if show is None else show
        self._desc = desc
        # The text goes in the description: tqdm puts ", " before a postfix, which would read "demo: , ...".
        self._bar = tqdm(
            total=None,
            disable=not visible,
            desc=f"{desc}: starting",
            dynamic_ncols=True,
            leave=False,
            bar_format="{desc} [{elapsed}]",
        )

    def say(self, text: str) -> None:
        """Show ``text`` as what the task is doing now."""
        self._bar.set_description_str(f"{self._desc}: {text[:100]}")

    def close(self) -> None:
        self._bar.close()
