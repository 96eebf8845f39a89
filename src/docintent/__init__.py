"""docintent: answer questions about damaged real-world document images.

Restore only what stands between the reader and the answer, check every restoration, and roll back what
made the evidence harder to read.
"""

from __future__ import annotations

from ._version import __version__
from .errors import DocIntentError
from .page import Box, Page


def ask(*args, **kwargs):
    """Answer a question about a document image; see :func:`docintent.api.ask`."""
    from .api import ask as _ask

    return _ask(*args, **kwargs)


__all__ = ["Box", "DocIntentError", "Page", "__version__", "ask"]
