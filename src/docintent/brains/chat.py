"""What the model brain needs of a chat model: the small protocol another API implements in one class.

The model brain (:class:`~docintent.brains.mllm.ModelBrain`) writes its requests as OpenAI-style chat messages
(``{"role", "content"}`` with ``text`` and ``image_url`` parts) and function specs, and reads a :class:`Reply`,
docintent's own type (this module imports no provider's client). :class:`~docintent.brains.endpoint.Endpoint` speaks that to any
OpenAI-compatible server; a model behind another API is a class with the members below that translates the
messages to that API and its answer back to a Reply, passed as ``ModelBrain(chat_model=...)``. Such a class
sends one request per call and raises docintent's errors (:class:`~docintent.errors.TransientError`,
:class:`~docintent.errors.RateLimited`, :class:`~docintent.errors.ModelTimeout`) for what may pass;
:class:`~docintent.brains.retrying.Retrying` around it retries them by the rules the OpenAI endpoint follows.

>>> from docintent.brains.endpoint import Endpoint
>>> isinstance(Endpoint("http://127.0.0.1:9/v1", "m", "key"), ChatModel)
True
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any, Protocol, runtime_checkable

from ..page import Page
from .decisions import Usage
from .toolcalls import ParsedCall


@dataclass
class Reply:
    """One chat-completion reply.

    ``content``: the message text as sent; ``text``: the same without reasoning (everything up to the last
    ``</think>``, and ``<think>`` blocks); ``reasoning``: the reasoning text (from ``reasoning_content`` or the
    think block); ``calls``: function calls, native first, else those written in ``text``; ``finish_reason``:
    "stop", "tool_calls", "length" (cut by ``max_tokens``), ...; ``usage``: tokens of this call.
    """

    content: str
    text: str
    calls: list[ParsedCall]
    _: KW_ONLY
    finish_reason: str | None
    usage: Usage
    reasoning: str = ""
    message: Any = field(default=None, repr=False)

    @property
    def truncated(self) -> bool:
        """True when the server stopped the reply at the output-token limit."""
        return self.finish_reason == "length"

    def call_for(self, offered: list[str] | tuple[str, ...] | set[str]) -> ParsedCall | None:
        """The first call naming an ``offered`` function, else the first call, else None."""
        for call in self.calls:
            if call.name in offered:
                return call
        return self.calls[0] if self.calls else None


@runtime_checkable
class ChatModel(Protocol):
    """One chat model: send messages (offering function specs) and get a Reply; encode a page as an image part."""

    @property
    def model(self) -> str:
        """The model's name (recorded in run manifests)."""
        ...

    @property
    def configured_model(self) -> str | None:
        """The name as configured (None when the model was found by asking the server)."""
        ...

    @property
    def where(self) -> str:
        """Where the model is, for messages (never with credentials)."""
        ...

    @property
    def usage(self) -> Usage:
        """Tokens of every call so far."""
        ...

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        max_tokens: int | None = None,
    ) -> Reply:
        """Send ``messages`` (offering ``tools``, OpenAI function specs) and return the reply."""
        ...

    def image_part(
        self,
        page: Page,
        max_side: int | None = None,
        *,
        max_pixels: int | None = None,
        fmt: str = "auto",
        quality: int = 90,
    ) -> dict[str, Any]:
        """``page`` as a content part of a message (an ``image_url`` part for OpenAI-style APIs)."""
        ...

    def served_models(self) -> list[str]:
        """The models the server offers (a one-model API answers with its own)."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


__all__ = ["ChatModel", "Reply"]
