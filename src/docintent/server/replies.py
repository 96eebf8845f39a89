"""How every route of the service answers: redacted JSON bodies, error replies, bounded numbers from text."""

from __future__ import annotations

import json
import re
from typing import Any

from fastapi.responses import JSONResponse

from ..redaction import redact

_WHOLE = re.compile(r"[0-9]{1,18}")


class Json(JSONResponse):
    """A JSON response whose body has every secret removed (an endpoint password in an error message)."""

    def render(self, content: Any) -> bytes:
        # ASCII escapes: a lone surrogate in an answer would make UTF-8 encoding fail (a 500).
        return redact(json.dumps(content, ensure_ascii=True, separators=(",", ":"))).encode("ascii")


def error(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return Json({"error": message}, status_code=status, headers=headers)


def whole_number(text: str | None, name: str, low: int, high: int) -> int | None:
    """A header or form value as a whole number in [low, high]; None when absent. Only ASCII digits count
    (``int()`` would also take other scripts' digits, and fail on thousands of them)."""
    if text is None or text == "":
        return None
    value = text.strip()
    if not _WHOLE.fullmatch(value) or not low <= int(value) <= high:
        raise ValueError(f"{name} must be a whole number between {low} and {high}")
    return int(value)
