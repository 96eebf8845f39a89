"""What the routes of one service share, kept in ``app.state.service`` and handed to each route by ``Depends``.

A route names it as a parameter (``state: Service``) instead of closing over the locals of ``create_app``, so
the routers are plain modules and two applications in one process (as in the tests) never share a store.
"""

from __future__ import annotations

import asyncio
import hmac
import shutil
import tempfile
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from fastapi import Depends, Request

from .config import ServeConfig
from .runs import RunStore

if TYPE_CHECKING:
    from .benchmarks import BenchmarkRuns


@dataclass(eq=False)
class ServiceState:
    """The settings, the run store, the runs browser and what the service learns while it runs.

    ``own_dir``: ``data_dir`` is a scratch folder made for this service, removed when it stops.
    ``benchmarks``: the runs browser over ``config.runs_dir`` (None when the service has no ``--runs``).
    """

    config: ServeConfig
    data_dir: Path
    own_dir: bool
    _: KW_ONLY
    store: RunStore
    benchmarks: BenchmarkRuns | None
    #: The OCR engine loaded at start (``/v1/health`` reports it).
    engine: dict[str, Any] = field(default_factory=lambda: {"kind": None, "loaded": False, "seconds": None})
    #: The last probe of the model endpoint and when it was made, so health checks do not hammer the endpoint.
    health: dict[str, Any] = field(default_factory=dict)
    _sample: Any = None
    _sample_lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @classmethod
    def open(cls, config: ServeConfig) -> ServiceState:
        """The state of a new service: its data folder (a scratch one without ``config.data_dir``) and store."""
        own_dir = config.data_dir is None
        data_dir = Path(tempfile.mkdtemp(prefix="docintent-serve-")) if own_dir else Path(config.data_dir)  # type: ignore[arg-type]
        data_dir.mkdir(parents=True, exist_ok=True)
        store = RunStore(
            data_dir / "runs",
            config.brains,
            workers=config.workers,
            timeout_s=config.run_timeout_s,
            keep_runs=config.keep_runs,
            keep_seconds=config.keep_seconds,
            max_queued=config.max_queued,
        )
        benchmarks = None
        if config.runs_dir is not None:
            from .benchmarks import BenchmarkRuns  # the report machinery, only for a service with --runs

            benchmarks = BenchmarkRuns(Path(config.runs_dir), data_dir / "reports")
        return cls(config=config, data_dir=data_dir, own_dir=own_dir, store=store, benchmarks=benchmarks)

    def authorised(self, request: Request) -> bool:
        """Whether ``request`` carries the bearer token (always, when the service has none)."""
        token = self.config.token
        if not token:
            return True
        scheme, _, value = request.headers.get("authorization", "").partition(" ")
        return scheme.lower() == "bearer" and hmac.compare_digest(
            value.strip().encode("utf-8", "replace"), token.encode("utf-8")
        )

    async def sample(self) -> Any:
        """The demo's first page and question, generated on the first request (a few seconds) and kept."""
        async with self._sample_lock:
            if self._sample is None:
                from ..demo import sample_page

                self._sample = await asyncio.to_thread(sample_page)
        return self._sample

    def close(self) -> None:
        """Stop the workers and remove the scratch folder (a configured ``data_dir`` is kept)."""
        self.store.shutdown()
        if self.own_dir:
            shutil.rmtree(self.data_dir, ignore_errors=True)


async def service(request: Request) -> ServiceState:
    """The state of the application serving ``request`` (async, so FastAPI calls it without a thread)."""
    state: ServiceState = request.app.state.service
    return state


#: A route's parameter annotated with this receives the :class:`ServiceState` of its application.
Service = Annotated[ServiceState, Depends(service)]
