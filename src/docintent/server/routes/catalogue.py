"""What the service offers: a sample page to try, the tools, the choices a request may make, its health."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from fastapi import APIRouter, Request
from fastapi.responses import JSONResponse, Response

from ... import __version__
from ...redaction import public_url
from ..replies import Json
from ..state import Service

#: Seconds a probe of the model endpoint stands for before ``/v1/health`` asks again.
_PROBE_KEPT_S = 10.0

router = APIRouter()


# -- a page to try -------------------------------------------------------------------------------------


@router.get("/v1/sample")
async def get_sample(state: Service) -> JSONResponse:
    page = await state.sample()
    return Json(
        {
            "name": page.name,
            "question": page.question,
            "task": page.task,
            "damage": page.damage,
            "image": "/v1/sample/image",
        }
    )


@router.get("/v1/sample/image")
async def get_sample_image(state: Service) -> Response:
    page = await state.sample()
    return Response(page.image, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})


# -- facts ------------------------------------------------------------------------------------------


@router.get("/v1/tools")
async def get_tools() -> JSONResponse:
    from ...tools import list_tools

    return Json(
        [
            {"name": t.name, "degradation": t.degradation, "description": t.description, "parameters": t.parameters}
            for t in list_tools()
        ]
    )


@router.get("/v1/config")
async def get_config(state: Service) -> JSONResponse:
    from ...strategies import STRATEGIES
    from ...vocabulary import TASKS

    config = state.config
    return Json(
        {
            "tasks": list(TASKS),
            "strategies": list(STRATEGIES),
            "brains": list(config.brains),
            "default_brain": config.default_brain,
            "max_upload_bytes": config.max_upload_bytes,
            "max_rounds": config.max_rounds,
            "runs_browser": state.benchmarks is not None,
        }
    )


@router.get("/v1/health")
async def get_health(request: Request, state: Service) -> JSONResponse:
    config, cache = state.config, state.health
    now = time.monotonic()
    model = None
    if config.model_base_url:
        if not cache or now - cache["at"] > _PROBE_KEPT_S:
            cache.update(at=now, model=await asyncio.to_thread(_probe, config.model_base_url))
        model = cache["model"]
    status = "ok" if model is None or model["reachable"] else "degraded"
    if not state.authorised(request):  # a load balancer's question; the details are for token holders
        return Json({"status": status, "version": __version__})
    return Json(
        {
            "status": status,
            "version": __version__,
            "ocr_engine": state.engine,
            "brains": list(config.brains),
            "model_endpoint": model,
            "workers": config.workers,
            "runs": state.store.counts(),
        }
    )


def _probe(base_url: str) -> dict[str, Any]:
    """Whether the OpenAI-compatible endpoint answers ``GET /models`` within 2 s, asked the way the model
    brain asks (the same client, so credentials in the URL are sent as the brain sends them). The URL is
    reported with its credentials masked."""
    from ...brains.endpoint import Endpoint

    start = time.perf_counter()
    endpoint = Endpoint(base_url, timeout=2.0, max_retries=0)
    try:
        ok, problem = endpoint.probe()
    finally:
        endpoint.close()
    return {
        "url": public_url(base_url),
        "reachable": ok,
        "problem": problem,
        "seconds": round(time.perf_counter() - start, 3),
    }
