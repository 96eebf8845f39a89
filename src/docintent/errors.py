"""One error hierarchy for everything docintent raises on purpose.

Every error names the input it is about and the problem, so a batch run can store it as a row
(``str(err)``) and a user can act on it without reading a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class DocIntentError(Exception):
    """Base class of every error docintent raises deliberately."""


# --- input ---------------------------------------------------------------------------------------


class InputError(DocIntentError):
    """An input file or value cannot be used. ``source`` names it."""

    def __init__(self, source: object, problem: str) -> None:
        self.source = str(source)
        self.problem = problem
        super().__init__(f"{self.source}: {problem}")


class FileMissingError(InputError, FileNotFoundError):
    """The path does not exist or is not a file."""


class EmptyFileError(InputError):
    """The file exists but holds zero bytes."""


class CorruptImageError(InputError):
    """The file is damaged or truncated and cannot be decoded."""


class UnsupportedFormatError(InputError):
    """The file is not an image or PDF format docintent reads."""


class DecompressionBombError(InputError):
    """The image would decode to more pixels than the configured limit."""


class PdfPageOutOfRangeError(InputError, IndexError):
    """A PDF page number outside the document was requested."""


class EncryptedPdfError(InputError):
    """The PDF is encrypted and no (correct) password was given."""


class InvalidArrayError(InputError, ValueError):
    """An image array of a shape or element type docintent cannot read as a page."""


class InvalidBoxError(InputError, ValueError):
    """A region box is degenerate, malformed or outside the page."""


class OfficeConversionError(InputError):
    """An office document could not be converted to PDF: LibreOffice is not installed (the message names the
    package), could not convert it, or took longer than the limit."""


class FolderBusyError(InputError):
    """An output folder (a benchmark run, an index) is being written by another process; names the holder."""


# --- components ----------------------------------------------------------------------------------


def nearest(name: object, valid: Iterable[str]) -> str | None:
    """The valid name a mistyped ``name`` most likely meant (close in spelling), or None: for the "did you mean"
    of every message that lists valid names."""
    close = difflib.get_close_matches(str(name), sorted(set(valid)), n=1, cutoff=0.75)
    return close[0] if close else None


def did_you_mean(name: object, valid: Iterable[str]) -> str:
    """`` (did you mean 'x'?)`` for a mistyped ``name``, or "" when no valid name is close."""
    close = nearest(name, valid)
    return f" (did you mean {close!r}?)" if close else ""


class UnknownComponentError(DocIntentError, KeyError):
    """A tool / engine / strategy / brain name that is not registered. Lists the valid names."""

    def __init__(self, kind: str, name: str, valid: list[str]) -> None:
        self.kind = kind
        self.name = name
        self.valid = sorted(valid)
        plural = f"{kind[:-1]}ies" if kind.endswith("y") else f"{kind}s"
        super().__init__(
            f"unknown {kind} {name!r}{did_you_mean(name, self.valid)}; valid {plural}: {', '.join(self.valid)}"
        )

    def __str__(self) -> str:  # KeyError would otherwise repr() the message
        return self.args[0]


class ToolError(DocIntentError):
    """A tool failed on a page, or was called with invalid arguments."""

    def __init__(self, tool: str, problem: str) -> None:
        self.tool = tool
        self.problem = problem
        super().__init__(f"tool {tool!r}: {problem}")


class OcrError(DocIntentError):
    """An OCR engine failed on a page."""


class MissingDependencyError(DocIntentError, ImportError):
    """An optional dependency is not installed; the message names the pip command that adds it."""

    def __init__(self, package: str, extra: str, purpose: str) -> None:
        self.package = package
        self.extra = extra
        super().__init__(
            f"{purpose} needs the package {package!r}, which is not installed. "
            f"Install it with: pip install 'docintent[{extra}]'"
        )


# --- models and runs -----------------------------------------------------------------------------


class ModelEndpointError(DocIntentError):
    """A model's server is unreachable, rejected the request, names no such model, or kept failing.

    Raised as it is, the failure will not pass by asking again (a refused request, a wrong key, an unreachable
    server). A failure that may pass is a :class:`TransientError`, which a model transport raises for
    :class:`~docintent.brains.retrying.Retrying` to retry; none of these name a provider's client.
    """


class TransientError(ModelEndpointError):
    """One attempt at a model request failed in a way that may pass (an overloaded server, a reply that is not
    a reply): the same request may be sent again.

    ``retry_after``: the seconds the server asked to wait (its ``Retry-After``), None when it said nothing;
    ``hint``: the one fix to name if every attempt fails like this ("" for none). The message says what the
    attempt got, without the server's address (the retrying wrapper names it).
    """

    def __init__(self, message: str, *, retry_after: float | None = None, hint: str = "") -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.hint = hint


class RateLimited(TransientError):
    """The server said the caller is too fast (HTTP 429): every caller of the run slows down, not just this one."""


class ModelTimeout(TransientError):
    """No reply came within ``seconds``; the next attempt may be given longer."""

    def __init__(self, seconds: float, *, hint: str = "") -> None:
        super().__init__(
            f"no reply within {seconds:g} s",
            hint=hint
            or ("Raise timeout (reasoning models and long replies need more) or check that the server is not stuck."),
        )
        self.seconds = seconds


class DatasetError(DocIntentError):
    """A dataset file is missing, malformed, or has rows without required fields."""


class ConfigError(DocIntentError, ValueError):
    """An option or setting has an invalid value."""
