"""A small client of ``docintent serve`` (standard library only).

>>> from docintent.client import ask
>>> run = ask("http://127.0.0.1:8737", "invoice.jpg", "What is the total?")   # doctest: +SKIP
>>> run["answer"], run["tools_kept"], run["status"]                            # doctest: +SKIP
('$1,250.00', ['deshadowing'], 'done')

The same with ``curl``::

    id=$(curl -s -F file=@invoice.jpg -F question="What is the total?" http://127.0.0.1:8737/v1/ask | jq -r .id)
    curl -sN http://127.0.0.1:8737/v1/runs/$id/events      # the steps as they happen
    curl -s  http://127.0.0.1:8737/v1/runs/$id             # answer, tools kept / rolled back, trace
"""

from __future__ import annotations

import json
import mimetypes
import os
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path
from typing import Any

from .errors import DocIntentError


class ServiceError(DocIntentError):
    """The service refused a request or could not be reached; the message is the service's own."""

    def __init__(self, status: int | None, message: str) -> None:
        self.status = status
        super().__init__(f"HTTP {status}: {message}" if status else message)


def _request(
    url: str, *, data: bytes | None = None, headers: dict[str, str] | None = None, timeout: float = 30.0
) -> Any:
    request = urllib.request.Request(
        url, data=data, headers=headers or {}, method="POST" if data is not None else "GET"
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return json.loads(response.read().decode("utf-8"))
    except urllib.error.HTTPError as err:
        body = err.read().decode("utf-8", "replace")
        try:
            message = json.loads(body).get("error", body)
        except (json.JSONDecodeError, AttributeError):
            message = body or err.reason
        raise ServiceError(err.code, str(message)) from None
    except urllib.error.URLError as err:
        raise ServiceError(None, f"{url}: cannot reach the service ({err.reason})") from None


def _multipart(fields: dict[str, str], file_name: str, file_data: bytes) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    parts = []
    for name, value in fields.items():
        parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
    mime = mimetypes.guess_type(file_name)[0] or "application/octet-stream"
    safe = file_name.replace('"', "")
    parts.append(
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{safe}"\r\n'
        f"Content-Type: {mime}\r\n\r\n".encode()
        + file_data
        + b"\r\n"
    )
    parts.append(f"--{boundary}--\r\n".encode())
    return b"".join(parts), f"multipart/form-data; boundary={boundary}"


def submit(
    url: str,
    image: str | os.PathLike | bytes,
    question: str,
    *,
    task: str = "doc",
    strategy: str = "docintent",
    brain: str | None = None,
    pages: str | int | None = None,
    max_rounds: int | None = None,
    token: str | None = None,
    file_name: str | None = None,
    timeout: float = 60.0,
) -> str:
    """Send a question and an image or PDF (path or bytes) to the service; returns the run id at once.
    ``pages``: the PDF pages to consider, counted from 1 (``2``, ``"1-3"``; default: every page)."""
    if isinstance(image, (bytes, bytearray)):
        data, name = bytes(image), file_name or "page"
    else:
        data, name = Path(image).read_bytes(), file_name or Path(image).name
    fields = {"question": question, "task": task, "strategy": strategy}
    if pages is not None:
        fields["pages"] = str(pages)
    if brain:
        fields["brain"] = brain
    if max_rounds is not None:
        fields["max_rounds"] = str(max_rounds)
    body, content_type = _multipart(fields, name, data)
    headers = {"Content-Type": content_type, **_auth(token)}
    return str(_request(f"{url.rstrip('/')}/v1/ask", data=body, headers=headers, timeout=timeout)["id"])


def get_run(url: str, run_id: str, *, token: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
    """The run's current state: status, answer, confidence, tools kept / rolled back and trace."""
    return dict(_request(f"{url.rstrip('/')}/v1/runs/{run_id}", headers=_auth(token), timeout=timeout))


def ask(
    url: str,
    image: str | os.PathLike | bytes,
    question: str,
    *,
    wait: float = 600.0,
    poll: float = 0.2,
    token: str | None = None,
    **options: Any,
) -> dict[str, Any]:
    """Ask ``question`` about ``image`` on the service at ``url`` and wait (at most ``wait`` seconds) for the
    finished run (its answer, ``page``, ``box`` and ``evidence``). ``options``: task, strategy, brain, pages,
    max_rounds. Token: ``token`` or
    ``DOCINTENT_SERVE_TOKEN``."""
    token = token or os.environ.get("DOCINTENT_SERVE_TOKEN") or None
    run_id = submit(url, image, question, token=token, **options)
    deadline = time.monotonic() + wait
    while True:
        run = get_run(url, run_id, token=token)
        if run["status"] in ("done", "failed", "timeout"):
            return run
        if time.monotonic() > deadline:
            raise ServiceError(None, f"run {run_id} did not finish within {wait:g} s (last status {run['status']})")
        time.sleep(poll)


def _auth(token: str | None) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"} if token else {}
