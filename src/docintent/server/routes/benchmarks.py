"""The runs browser: ``/v1/benchmarks`` lists the benchmark runs of ``--runs DIR`` and reports on each."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter
from fastapi.responses import JSONResponse, Response

from ...errors import DocIntentError
from ..replies import Json, error
from ..state import Service

_OFF = "the runs browser is off (start the service with --runs DIR)"

router = APIRouter()


@router.get("/v1/benchmarks")
async def list_benchmarks(state: Service) -> JSONResponse:
    if state.benchmarks is None:
        return error(404, _OFF)
    return Json(await asyncio.to_thread(state.benchmarks.listing))


@router.get("/v1/benchmarks/{name}")
async def get_benchmark(name: str, state: Service) -> JSONResponse:
    if state.benchmarks is None:
        return error(404, _OFF)
    try:
        report = await asyncio.to_thread(state.benchmarks.report, name)
    except DocIntentError as err:
        return error(400, str(err))
    if report is None:
        return error(404, "no such benchmark run")
    return Json({k: v for k, v in report.items() if not k.startswith("_")})


@router.get("/v1/benchmarks/{name}/files/{index}")
async def get_benchmark_file(name: str, index: int, state: Service) -> Response:
    if state.benchmarks is None:
        return error(404, _OFF)
    try:
        path = await asyncio.to_thread(state.benchmarks.file, name, index)
    except DocIntentError as err:  # the run cannot be reported on (as GET /v1/benchmarks/NAME says)
        return error(400, str(err))
    if path is None or not path.is_file():
        return error(404, "no such file in this report")
    media = "image/png" if path.suffix == ".png" else "image/jpeg"
    return Response(path.read_bytes(), media_type=media)
