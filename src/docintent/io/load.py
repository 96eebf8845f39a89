"""Load images and PDF pages as :class:`~docintent.page.Page`, with one clear error per kind of bad input.

>>> from docintent.io import load_page
>>> page = load_page("scan.jpg")                     # doctest: +SKIP
>>> pages = load_pdf("report.pdf", pages=[0, 2])    # doctest: +SKIP
"""

from __future__ import annotations

import contextlib
import os
import stat
import struct
import threading
import warnings
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

import numpy as np

from ..errors import (
    ConfigError,
    CorruptImageError,
    DecompressionBombError,
    EmptyFileError,
    EncryptedPdfError,
    FileMissingError,
    PdfPageOutOfRangeError,
    UnsupportedFormatError,
)
from ..page import Page
from ..settings import get_settings

#: Raster formats docintent reads (Pillow format names).
IMAGE_FORMATS = ("JPEG", "PNG", "TIFF", "WEBP", "BMP", "GIF", "MPO")
_IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".tif", ".tiff", ".webp", ".bmp", ".gif"}

PathLike = str | os.PathLike
#: Highest PDF rendering resolution (above it one letter page is over 500 M pixels).
MAX_DPI = 2400


def not_regular_reason(mode: int) -> str:
    """Why a file of this ``st_mode`` is not read (it is never opened: a pipe would wait for a writer)."""
    if stat.S_ISDIR(mode):
        return "a folder, not a regular file"
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO), not a regular file; it is never opened (reading it would wait for a writer)"
    if stat.S_ISSOCK(mode):
        return "a socket, not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device, not a regular file"
    return "not a regular file"


def _check_file(path: PathLike) -> Path:
    p = Path(path)
    if "\x00" in str(p):  # no file system takes it (and the path functions raise on it)
        raise FileMissingError(p, "the path holds a NUL character")
    try:
        info = p.stat()
    except FileNotFoundError:
        raise FileMissingError(p, "no such file") from None
    except NotADirectoryError:
        raise FileMissingError(p, "no such file (a folder on its path is a file)") from None
    if not stat.S_ISREG(info.st_mode):
        raise FileMissingError(p, not_regular_reason(info.st_mode))
    if info.st_size == 0:
        raise EmptyFileError(p, "the file is empty (0 bytes)")
    return p


#: First bytes of the raster formats docintent reads: a file that starts like an image is one, even when a
#: text chunk of it holds "%PDF-" within its first kilobyte.
_IMAGE_MAGIC = (b"\x89PNG\r\n\x1a\n", b"\xff\xd8\xff", b"GIF87a", b"GIF89a", b"II*\x00", b"MM\x00*", b"BM")


def is_pdf_bytes(data: bytes) -> bool:
    """Whether ``data`` (a file's first bytes) is a PDF: "%PDF-" within the first kilobyte (the format allows
    bytes before it), unless it starts with an image signature."""
    head = bytes(data[:1024])
    if head.startswith(_IMAGE_MAGIC) or (head[:4] == b"RIFF" and head[8:12] == b"WEBP"):
        return False
    return b"%PDF-" in head


def office_as_pdf(path: Path) -> Path | None:
    """The PDF of an office document, converted by LibreOffice (:func:`docintent.io.office.office_pdf`); None
    for any other file."""
    from .office import is_office_file, office_pdf

    return office_pdf(path) if is_office_file(path) else None


def _is_pdf(path: Path) -> bool:
    with open(path, "rb") as fh:
        return is_pdf_bytes(fh.read(1024))


def load_page(
    path: PathLike, *, page: int = 0, dpi: int | None = None, max_pixels: int | None = None, password: str | None = None
) -> Page:
    """Load one image, or page ``page`` (0-based) of a PDF, as an RGB :class:`Page`.

    EXIF orientation is applied; grayscale, palette, alpha and 16-bit images become RGB uint8; for GIFs the
    first frame is used. ``max_pixels`` (default ``DOCINTENT_MAX_PIXELS``) guards against decompression bombs.
    An office document (DOCX, XLSX, ODT, ...) is read as the PDF LibreOffice makes of it (:mod:`.office`).
    """
    p = _check_file(path)
    converted = office_as_pdf(p)
    if converted is not None:
        return load_pdf(converted, pages=[page], dpi=dpi, max_pixels=max_pixels, name=str(p))[0]
    if _is_pdf(p):
        return load_pdf(p, pages=[page], dpi=dpi, max_pixels=max_pixels, password=password)[0]
    if page != 0:
        raise PdfPageOutOfRangeError(p, f"page {page + 1} requested, but an image has one page (pages count from 1)")
    return _load_image(p, max_pixels)


#: What Pillow raises on hostile or damaged data besides OSError (found by tests/test_properties.py).
_DECODE_ERRORS = (
    OSError,
    SyntaxError,
    ValueError,
    EOFError,
    IndexError,
    KeyError,
    TypeError,
    ZeroDivisionError,
    struct.error,
)


def _load_image(path: Path, max_pixels: int | None) -> Page:
    limit = max_pixels or get_settings().max_pixels
    with _pillow_limit(limit):
        return _decode_image(path, limit)


@contextlib.contextmanager
def _pillow_limit(limit: int) -> Iterator[None]:
    """Pillow's own decompression-bomb limit set from ours for one load (its default, 89 M pixels, would
    otherwise refuse first and make DOCINTENT_MAX_PIXELS useless above it); restored afterwards."""
    from PIL import Image

    previous = Image.MAX_IMAGE_PIXELS
    Image.MAX_IMAGE_PIXELS = limit
    try:
        with warnings.catch_warnings():
            # Between our limit and twice it Pillow only warns; our size check refuses those images itself.
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)
            yield
    finally:
        Image.MAX_IMAGE_PIXELS = previous


def _decode_image(path: Path, limit: int) -> Page:
    from PIL import Image, ImageOps, UnidentifiedImageError

    limit_during_decode = Image.MAX_IMAGE_PIXELS
    try:
        # Only the header is read here; our own size check just below refuses with the exact numbers.
        Image.MAX_IMAGE_PIXELS = None
        img = Image.open(path)
    except UnidentifiedImageError:
        if path.suffix.lower() in _IMAGE_SUFFIXES:
            raise CorruptImageError(
                path, f"not a readable {path.suffix.lower().lstrip('.')} image (corrupt or truncated)"
            ) from None
        raise UnsupportedFormatError(
            path, f"unsupported format; docintent reads {', '.join(sorted(IMAGE_FORMATS))} images and PDF"
        ) from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning) as err:
        raise DecompressionBombError(
            path, f"image is over the limit of {limit:,} pixels (set DOCINTENT_MAX_PIXELS to raise it): {err}"
        ) from None
    except _DECODE_ERRORS as err:  # a valid signature followed by a damaged header
        raise CorruptImageError(path, f"cannot decode image: {err}") from None
    finally:
        Image.MAX_IMAGE_PIXELS = limit_during_decode
    with img:
        if img.format not in IMAGE_FORMATS:
            raise UnsupportedFormatError(
                path, f"{img.format} images are not supported; use {', '.join(IMAGE_FORMATS)} or PDF"
            )
        w, h = img.size
        if w * h > limit:
            raise DecompressionBombError(
                path,
                f"{w}x{h} = {w * h:,} pixels exceeds the limit of {limit:,} (set DOCINTENT_MAX_PIXELS to raise it)",
            )
        try:
            img.seek(0)  # first frame of animations / multi-page TIFF
            img.load()
            upright = ImageOps.exif_transpose(img) or img
            array = _to_array(upright)
        except (*_DECODE_ERRORS, Image.DecompressionBombError, Image.DecompressionBombWarning) as err:
            raise CorruptImageError(path, f"cannot decode image: {err}") from None
    return Page.from_array(array, source=str(path))


def _to_array(img) -> np.ndarray:
    """Pillow image → numpy array keeping bit depth, for :func:`~docintent.page.to_rgb_uint8`."""
    mode = img.mode
    if mode in ("RGB", "L", "RGBA", "LA"):
        return np.asarray(img)
    if mode in ("I;16", "I;16B", "I;16L", "I;16N"):
        return np.asarray(img).astype(np.uint16)
    if mode == "I":  # 32-bit ints: 16-bit PNG/TIFF data often arrives here
        a = np.asarray(img)
        return (
            a.astype(np.uint16)
            if a.min() >= 0 and a.max() <= 65535
            else (a - a.min()).astype(np.float64) / max(np.ptp(a), 1)
        )
    if mode == "F":
        a = np.asarray(img, dtype=np.float64)
        rng = np.ptp(a)
        return (a - a.min()) / rng if rng > 0 else np.zeros_like(a)
    if mode == "1":
        return np.asarray(img.convert("L"))
    if "A" in mode or (mode == "P" and "transparency" in img.info):
        return np.asarray(img.convert("RGBA"))
    return np.asarray(img.convert("RGB"))


#: PDFium is not safe to call from several threads at once: every use of it in docintent (opening, counting,
#: rendering, reading a text layer) holds this lock, so a service answering several PDF uploads at once, or a
#: run with worker threads, never calls it concurrently. Re-entrant: a holder may call the helpers below.
PDFIUM_LOCK = threading.RLock()


def pdf_page_count(path: PathLike | bytes, *, password: str | None = None, name: str | None = None) -> int:
    """Number of pages of a PDF (a path or its bytes) that exist (:func:`readable_page_count`)."""
    with PDFIUM_LOCK:
        pdf = open_pdf(path, password=password, name=name)
        try:
            return readable_page_count(pdf)
        finally:
            pdf.close()


def _page_loads(pdf, index: int) -> bool:
    import pypdfium2 as pdfium

    try:
        pdf[index].close()
    except pdfium.PdfiumError:
        return False
    return True


#: Pages past a page that does not load that are tried before the count is cut there (a damaged page in
#: the middle must not hide the pages after it).
_LOOK_PAST = 16


def readable_page_count(pdf) -> int:
    """The pages of an open pypdfium2 document that exist, checked against the file rather than taken from
    its page tree: a header that claims 1,000,000 pages over one real page counts 1. The count is the
    document's own when its last page loads (one extra page load); otherwise the last page that loads is
    found by bisection, looking a few pages past every page that does not load."""
    claimed = len(pdf)
    if claimed == 0 or _page_loads(pdf, claimed - 1):
        return claimed
    good, bad = -1, claimed - 1  # invariant: page ``bad`` does not load; pages up to ``good`` do (as far as seen)
    while True:
        while bad - good > 1:
            middle = (good + bad) // 2
            if _page_loads(pdf, middle):
                good = middle
            else:
                bad = middle
        beyond = next((i for i in range(bad + 1, min(claimed, bad + 1 + _LOOK_PAST)) if _page_loads(pdf, i)), None)
        if beyond is None:
            return good + 1
        good, bad = beyond, claimed - 1


def open_pdf(source: PathLike | bytes, *, password: str | None = None, name: str | None = None):
    """An open pypdfium2 document (close it when done), or the loader's error: missing, corrupt, encrypted.

    ``source``: a path, or the PDF's bytes (an upload; ``name`` labels it in messages). Every PDF docintent reads
    (``ask``, ``evidence``, the page index, the service) is opened here, so they refuse the same files with the
    same messages.
    """
    import pypdfium2 as pdfium

    label, data = _pdf_source(source, name)
    try:
        return pdfium.PdfDocument(data, password=password)
    except pdfium.PdfiumError as err:
        code = getattr(err, "err_code", None)
        # PDFium's error code is the last one it set, in any document: a file that fails without setting one
        # would inherit "encrypted" from an earlier encrypted file. An encrypted PDF names its handler.
        encrypted = _names_encryption(data)
        if code == pdfium.raw.FPDF_ERR_PASSWORD and encrypted:
            problem = "wrong password" if password else "no password was given"
            raise EncryptedPdfError(label, f"the PDF is encrypted and {problem}; pass the right password") from None
        if code == pdfium.raw.FPDF_ERR_SECURITY and encrypted:
            raise EncryptedPdfError(label, "the PDF uses an unsupported security handler") from None
        if code == pdfium.raw.FPDF_ERR_FORMAT:
            raise CorruptImageError(
                label, "cannot open PDF: it is damaged or not a PDF (its structure cannot be parsed)"
            ) from None
        if code == pdfium.raw.FPDF_ERR_FILE:
            raise CorruptImageError(label, "cannot open PDF: the file could not be read") from None
        raise CorruptImageError(
            label, "cannot open PDF: it holds no readable page tree (no pages, or a damaged catalogue)"
        ) from None


def _names_encryption(data: str | bytes) -> bool:
    """Whether the PDF's bytes (or the file at the path ``data``) name an encryption dictionary (``/Encrypt`` in
    a trailer or xref stream)."""
    import mmap

    if isinstance(data, bytes):
        return data.find(b"/Encrypt") >= 0
    with open(data, "rb") as fh, contextlib.suppress(ValueError):  # ValueError: an empty file cannot be mapped
        with mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            return mapped.find(b"/Encrypt") >= 0
    return False


def _pdf_source(source: PathLike | bytes, name: str | None) -> tuple[object, str | bytes]:
    """(the label messages name, what pypdfium2 opens) for a path (checked) or PDF bytes."""
    if isinstance(source, (bytes, bytearray)):
        label = name or "<bytes>"
        if not source:
            raise EmptyFileError(label, "no PDF data (0 bytes)")
        return label, bytes(source)
    path = _check_file(source)
    return name or path, str(path)


def load_pdf(
    path: PathLike | bytes,
    *,
    pages: Iterable[int] | None = None,
    dpi: int | None = None,
    max_pixels: int | None = None,
    password: str | None = None,
    name: str | None = None,
) -> list[Page]:
    """Render PDF pages (0-based indices; all when ``pages`` is None) at ``dpi`` (default ``DOCINTENT_PDF_DPI``).

    ``path`` may also be the PDF's bytes (``name`` labels them in messages and page sources)."""
    label, _ = _pdf_source(path, name)
    dpi = get_settings().pdf_dpi if dpi is None else dpi
    if isinstance(dpi, bool) or not isinstance(dpi, int) or not 1 <= dpi <= MAX_DPI:
        raise ConfigError(f"dpi must be a whole number between 1 and {MAX_DPI}, got {dpi!r}")
    limit = max_pixels or get_settings().max_pixels
    with PDFIUM_LOCK:
        return _load_pdf(path, pages, dpi, limit, password, name, label)


def _load_pdf(
    path: PathLike | bytes,
    pages: Iterable[int] | None,
    dpi: int,
    limit: int,
    password: str | None,
    name: str | None,
    label: object,
) -> list[Page]:
    pdf = open_pdf(path, password=password, name=name)
    try:
        count = readable_page_count(pdf)
        wanted: Sequence[int] = list(range(count)) if pages is None else list(pages)
        out = []
        for index in wanted:
            if not 0 <= index < count:
                claimed = f"; its page tree claims {len(pdf):,}" if len(pdf) != count else ""
                raise PdfPageOutOfRangeError(
                    label, f"page {index + 1} requested, but the PDF has {count} page(s) (pages count from 1){claimed}"
                )
            array = _render_page_of(pdf, index, dpi, limit, label)
            page = Page.from_array(array, source=f"{label}#page={index}")
            page.meta["pdf_page"] = index
            page.meta["dpi"] = dpi
            out.append(page)
        return out
    finally:
        pdf.close()


def _render_page_of(pdf, index: int, dpi: int, limit: int, path: object) -> np.ndarray:
    """Render page ``index`` of an open PDF; a page pdfium cannot load or draw is a CorruptImageError."""
    import pypdfium2 as pdfium

    try:
        pdf_page = pdf[index]
    except pdfium.PdfiumError:
        raise CorruptImageError(
            path, f"page {index + 1} cannot be read: its page object is damaged or missing"
        ) from None
    try:
        return render_pdf_page(pdf_page, dpi, max_pixels=limit, source=path, index=index)
    except pdfium.PdfiumError as err:
        raise CorruptImageError(path, f"page {index + 1} cannot be rendered: {_pdfium_reason(err)}") from None
    finally:
        pdf_page.close()


def _pdfium_reason(err: Exception) -> str:
    """PDFium's message without the "(PDFium: Success)" it adds when it set no error code of its own."""
    text = str(err).replace("(PDFium: Success)", "").strip().rstrip(".")
    return text or "the PDF reader gave no reason"


def render_pdf_page(
    pdf_page, dpi: int, *, max_pixels: int | None = None, source: object = "<pdf>", index: int | None = None
) -> np.ndarray:
    """RGB uint8 rendering of an open pypdfium2 page at ``dpi``; a page that would decode to more than
    ``max_pixels`` (default ``DOCINTENT_MAX_PIXELS``) raises :class:`DecompressionBombError` before rendering."""
    limit = max_pixels or get_settings().max_pixels
    w_pt, h_pt = pdf_page.get_size()
    scale = dpi / 72.0
    if not (w_pt * scale >= 1 and h_pt * scale >= 1):  # NaN sizes fall here too
        where = f"page {index + 1}" if index is not None else "the page"
        raise CorruptImageError(source, f"{where} has no area at {dpi} dpi ({w_pt:g}x{h_pt:g} points)")
    if w_pt * scale * h_pt * scale > limit:
        where = f"page {index + 1}" if index is not None else "the page"
        raise DecompressionBombError(
            source,
            f"{where} at {dpi} dpi would be {int(w_pt * scale)}x{int(h_pt * scale)} pixels, over the limit of {limit:,}",
        )
    bitmap = pdf_page.render(scale=scale)
    array = bitmap.to_numpy()
    if bitmap.mode in ("BGRA", "BGRX"):
        array = array[:, :, [2, 1, 0]]
    elif bitmap.mode == "BGR":
        array = array[:, :, ::-1]
    return np.ascontiguousarray(array[:, :, :3]) if array.ndim == 3 else array


def pdf_page_text(pdf_page) -> str:
    """The text layer of an open pypdfium2 page ("" when it has none), with ``\n`` line ends."""
    textpage = pdf_page.get_textpage()
    try:
        return textpage.get_text_range().replace("\r\n", "\n").replace("\r", "\n")
    finally:
        textpage.close()


def page_count(path: PathLike, *, password: str | None = None) -> int:
    """Pages in a document: a PDF's page count (an office document's once converted), 1 for an image."""
    p = _check_file(path)
    converted = office_as_pdf(p)
    if converted is not None:
        return pdf_page_count(converted, name=str(p))
    return pdf_page_count(p, password=password) if _is_pdf(p) else 1


def load_document(
    path: PathLike, *, pages: Iterable[int] | None = None, dpi: int | None = None, password: str | None = None
) -> list[Page]:
    """Pages (0-based indices; all when None) of a PDF (or an office document, converted), or the one page of
    an image, with :func:`load_page`'s checks."""
    p = _check_file(path)
    converted = office_as_pdf(p)
    if converted is not None:
        return load_pdf(converted, pages=pages, dpi=dpi, name=str(p))
    if _is_pdf(p):
        return load_pdf(p, pages=pages, dpi=dpi, password=password)
    wanted = [0] if pages is None else list(pages)
    for index in wanted:
        if index != 0:
            raise PdfPageOutOfRangeError(
                p, f"page {index + 1} requested, but an image has one page (pages count from 1)"
            )
    return [_load_image(p, None) for _ in wanted]


def load_bytes(data: bytes, *, name: str = "<bytes>", max_pixels: int | None = None) -> Page:
    """Load an image (not PDF) from bytes, with the same checks as :func:`load_page`."""
    import tempfile

    if not data:
        raise EmptyFileError(name, "no image data (0 bytes)")
    suffix = Path(name).suffix if name != "<bytes>" else ""
    with tempfile.NamedTemporaryFile(suffix=suffix) as fh:
        fh.write(data)
        fh.flush()
        page = load_page(fh.name, max_pixels=max_pixels)
    return Page(page.pixels, page.ops, name, page.meta)
