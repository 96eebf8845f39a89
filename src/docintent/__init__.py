"""docintent: answer questions about damaged real-world document images.

Restore only what stands between the reader and the answer, check every restoration, and roll back what
made the evidence harder to read.

>>> import docintent
>>> result = docintent.ask("invoice.jpg", "What is the total amount due?")   # doctest: +SKIP
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._version import __version__
from .errors import DocIntentError
from .page import Box, Page

if TYPE_CHECKING:
    from .api import ask

#: Names served from submodules on first use: ``docintent.ask`` is :func:`docintent.api.ask` itself (its
#: signature and docstring show in ``help``), yet ``import docintent`` does not load the strategies, brains and
#: OCR engines behind it until it is used, so the command line starts quickly.
_LAZY = {"ask": "api"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value  # later look-ups find it directly
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = ["Box", "DocIntentError", "Page", "__version__", "ask"]
