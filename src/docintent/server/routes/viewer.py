"""The web viewer: its page at ``/`` and its script and style sheet under ``/static`` (none in the OpenAPI)."""

from __future__ import annotations

import functools
from importlib import resources

from fastapi import APIRouter
from fastapi.responses import HTMLResponse, Response

from ..replies import error
from ..state import Service

#: Static files of the viewer, read once into memory: a request never names a file on disk.
STATIC = {"app.js": "text/javascript", "style.css": "text/css"}

router = APIRouter()


@functools.cache
def _static(name: str) -> bytes:
    return resources.files("docintent.server").joinpath("static", name).read_bytes()


@functools.cache
def _index(token: bool) -> bytes:
    # The page says whether this service wants a token, so the viewer shows its Token field only then.
    return _static("index.html").replace(
        b"<body>", b'<body data-token="required">' if token else b'<body data-token="none">', 1
    )


@router.get("/", include_in_schema=False)
async def index(state: Service) -> HTMLResponse:
    return HTMLResponse(_index(bool(state.config.token)), headers={"Cache-Control": "no-cache"})


@router.get("/static/{name}", include_in_schema=False)
async def static_file(name: str) -> Response:
    if name not in STATIC:
        return error(404, "no such file")
    return Response(_static(name), media_type=STATIC[name], headers={"Cache-Control": "no-cache"})
