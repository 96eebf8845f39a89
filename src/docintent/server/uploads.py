"""Uploaded files: the type is read from the bytes, the file is decoded by docintent's loader under a name
the service chose, and the loader's message is returned with the client's file name (never a server path)."""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from ..document import Document
from ..errors import ConfigError, InputError
from ..io import load_page
from ..page import Page

#: (signature test, kind, suffix) for every format the loader reads.
_SIGNATURES: tuple[tuple[str, str], ...] = (
    ("jpeg", ".jpg"),
    ("png", ".png"),
    ("gif", ".gif"),
    ("tiff", ".tif"),
    ("webp", ".webp"),
    ("bmp", ".bmp"),
    ("pdf", ".pdf"),
)


class UploadError(Exception):
    """An upload that cannot be used; ``status`` is the HTTP status to answer with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


def sniff(data: bytes) -> str | None:
    """The format of ``data`` from its first bytes ("jpeg", "png", "gif", "tiff", "webp", "bmp", "pdf") or None."""
    head = data[:16]
    if head.startswith(b"\xff\xd8\xff"):
        return "jpeg"
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "png"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "gif"
    if head.startswith((b"II*\x00", b"MM\x00*")):
        return "tiff"
    if head.startswith(b"RIFF") and data[8:12] == b"WEBP":
        return "webp"
    if head.startswith(b"BM") and len(data) >= 26:
        return "bmp"
    if b"%PDF-" in data[:1024]:  # the same test as the loader: PDFs may carry a few bytes before the header
        return "pdf"
    return None


def display_name(name: str | None) -> str:
    """The client's file name reduced to a harmless label for messages (base name, printable, short)."""
    base = re.split(r"[\\/]", name or "")[-1]
    base = "".join(ch for ch in base if ch.isprintable() and ch not in "<>\"'`")[:80]
    return base or "upload"


def load_upload(data: bytes, name: str | None, *, page: int, max_pixels: int, scratch: Path) -> Page:
    """Decode an uploaded image or PDF page with the loader's checks.

    Raises :class:`UploadError` (415 for an unknown type, 400 for an empty, corrupt, oversized-in-pixels or
    out-of-range input) with a message naming the client's file, not the temporary file.
    """
    label = display_name(name)
    if not data:
        raise UploadError(400, f"{label}: the upload is empty (0 bytes)")
    kind = sniff(data)
    if kind is None:
        raise UploadError(
            415,
            f"{label}: not an image or PDF; the first bytes match no JPEG, PNG, TIFF, WEBP, BMP, GIF or PDF signature",
        )
    if page < 0:
        raise UploadError(400, f"{label}: page must be 0 or more, got {page}")
    if kind != "pdf" and page != 0:
        raise UploadError(400, f"{label}: page {page} requested, but an image has only page 0")
    suffix = dict(_SIGNATURES)[kind]
    scratch.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(suffix=suffix, dir=scratch)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        loaded = load_page(tmp, page=page, max_pixels=max_pixels)
    except InputError as err:
        raise UploadError(400, f"{label}: {err.problem}") from None
    finally:
        Path(tmp).unlink(missing_ok=True)
    return Page(loaded.pixels, loaded.ops, label, loaded.meta)


def load_upload_document(
    data: bytes, name: str | None, *, pages: str | None, max_pixels: int, scratch: Path
) -> Document:
    """The uploaded document to answer from: a PDF (``pages``: a spec counted from 1 such as ``"2"`` or
    ``"1-3"``; default every page) kept as bytes and rendered page by page when read, or an image (its one
    page, decoded now). Raises :class:`UploadError` with the loader's message, naming the client's file."""
    label = display_name(name)
    if data and sniff(data) == "pdf":
        try:
            document = Document(data, pages=pages or None, max_pixels=max_pixels, name=label)
            document.page(document.numbers[0])  # a page too large to render is refused now, not in the run
            return document
        except InputError as err:
            raise UploadError(400, f"{label}: {err.problem}") from None
        except ConfigError as err:  # the pages chosen are not in the document (the message names the file)
            raise UploadError(400, str(err)) from None
    if pages not in (None, "", "1"):
        raise UploadError(400, f"{label}: pages {pages!r} requested, but an image has one page (page 1)")
    return Document.of_page(load_upload(data, name, page=0, max_pixels=max_pixels, scratch=scratch))
