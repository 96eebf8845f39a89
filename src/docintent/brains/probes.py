"""What a model takes, found out instead of configured: whether it reads images, and whether the server returns
native tool calls. One small request each, once per endpoint and model in a process, said in one line.

The fake server (:mod:`docintent.testing.fake_openai`) answers both probes the way the model it imitates would.
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from ..errors import ModelEndpointError

log = logging.getLogger(__name__)

#: What the probe image says, what it asks, and what a model that reads it answers.
PROBE_TEXT, PROBE_ANSWER = "Code: 4821", "4821"
PROBE_QUESTION = "What number is written in the image? Reply with the number only."
#: The tool probe: one function, and a request that can only be met by calling it.
TOOL_PROBE_QUESTION = "Call the function record with value set to 7."
TOOL_PROBE_FUNCTION = {
    "type": "function",
    "function": {
        "name": "record",
        "description": "Record a value.",
        "parameters": {"type": "object", "properties": {"value": {"type": "string"}}, "required": ["value"]},
    },
}
#: Answers of the probes by (probe, endpoint, model), for this process.
_SEEN: dict[tuple[str, str, str], tuple[bool, str]] = {}
_PROBING = threading.Lock()  # samples that start together send one probe, not one each


def _key(kind: str, endpoint: Any) -> tuple[str, str, str]:
    return kind, getattr(endpoint, "base_url", ""), getattr(endpoint, "configured_model", None) or ""


def _once(kind: str, endpoint: Any, probe: Any) -> tuple[bool, str]:
    key = _key(kind, endpoint)
    with _PROBING:
        if key not in _SEEN:
            used = endpoint.usage
            try:
                _SEEN[key] = probe(endpoint)
            finally:
                endpoint.usage = used  # a probe belongs to no question: its tokens count in no row
    return _SEEN[key]


def image_probe(brain: Any) -> tuple[bool, str]:
    """Whether ``brain``'s model reads images, and what it did with the test image: one request with a small
    image of :data:`PROBE_TEXT`; the model reads images when its reply holds :data:`PROBE_ANSWER`. A server that
    refuses image input, or a model that reads something else, does not. The answer is kept per endpoint and
    model for the process and said in one line."""
    return _once("images", brain.endpoint, _image_probe)


def probe_page() -> Any:
    """The probe image: :data:`PROBE_TEXT` in black on white, 360 x 80 pixels."""
    import cv2
    import numpy as np

    from ..page import Page

    pixels = np.full((80, 360, 3), 255, dtype=np.uint8)
    cv2.putText(pixels, PROBE_TEXT, (14, 56), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (0, 0, 0), 3, cv2.LINE_AA)
    return Page.from_array(pixels, source="image-probe")


def _image_probe(endpoint: Any) -> tuple[bool, str]:
    page = probe_page()
    part = endpoint.image_part(page, 512)
    try:
        reply = endpoint.chat(
            [{"role": "user", "content": [{"type": "text", "text": PROBE_QUESTION}, part]}], max_tokens=16
        )
        sees, what = PROBE_ANSWER in reply.text, f"read {reply.text.strip()[:40]!r} from a test image"
    except ModelEndpointError as err:
        if getattr(err, "kind", None) not in ("vision", "image_limit") and getattr(err, "status", 0) not in (
            400,
            415,
            422,
            500,
        ):
            raise
        sees, what = False, f"refused a test image ({str(err)[:80]})"
    mode = "pages are sent as images" if sees else "pages are sent as OCR text lines with their boxes (context=text)"
    (log.info if sees else log.warning)("%s: the model %s; %s", endpoint.where, what, mode)
    return sees, what


def tool_probe(brain: Any) -> tuple[bool, str]:
    """Whether the server returns native tool calls for ``brain``'s model: one request offering one function
    that the question can only be met by calling. A native call: tools go in the API. A call written as text
    (a server without its tool-call parser) also keeps them there: the model sees them and docintent reads the
    text. No call at all: the server did not show the model the tools (llama-cpp-python without a forced
    ``tool_choice``), so they are described in the prompt and answered as JSON actions."""
    return _once("tools", brain.endpoint, _tool_probe)


def _tool_probe(endpoint: Any) -> tuple[bool, str]:
    try:
        reply = endpoint.chat([{"role": "user", "content": TOOL_PROBE_QUESTION}], [TOOL_PROBE_FUNCTION], max_tokens=64)
    except ModelEndpointError as err:
        if getattr(err, "kind", None) != "tools":
            raise
        native, what = False, f"refused the tools field ({str(err)[:80]})"
    else:
        call = reply.call_for(["record"])
        native = call is not None
        what = (
            "answered with a native tool call"
            if call is not None and call.native
            else "wrote the tool call as text"
            if call is not None
            else f"made no call ({reply.text.strip()[:40]!r})"
        )
    mode = "tools go in the API" if native else "tools are described in the prompt and answered as JSON actions"
    (log.info if native else log.warning)("%s: the server %s; %s", endpoint.where, what, mode)
    return native, what


def forget_probes() -> None:
    """Drop the kept probe answers (a test's fresh start)."""
    _SEEN.clear()


__all__ = [
    "PROBE_ANSWER",
    "PROBE_QUESTION",
    "PROBE_TEXT",
    "TOOL_PROBE_FUNCTION",
    "TOOL_PROBE_QUESTION",
    "forget_probes",
    "image_probe",
    "tool_probe",
]
