"""A closed-corpus page index: opaque page handles, page text, provenance and a BM25 full-text index.

Layout of an index directory::

    index.sqlite        documents, pages (handle, provenance, text, text source), build settings
    bm25.npz, bm25_vocab.json   the BM25 weight matrix (rows in handle order) and its vocabulary
    images/<handle>.jpg only with ``images="jpeg"``
    dense_<model>.npy   dense embeddings, written on first dense search

Page images are re-rendered from the PDF on demand by default (``images="lazy"``): pypdfium2 renders a page
in ~15 ms, while JPEG copies at 144 DPI cost ~100-200 kB a page, i.e. more than the rest of the index ten times
over. ``images="jpeg"`` stores them, for an index that must outlive its PDFs. Raster inputs are always read
back from their file.

Handles (``page_000123``) are a seeded shuffle of the page order, so neither the handle nor its number tells
which document or page it is. They are fixed before any page is processed, which makes a resumed build
give exactly the handles an uninterrupted one would.

Crashes and changes: one process builds an index folder at a time (it holds the folder's lock, see
:mod:`docintent.io.lock`; a second build is refused with the holder's name). Every page is committed as soon
as it is read, so a kill loses at most the page being read. The BM25 files and stored images are written to
temporary files and renamed into place; the database says when the BM25 files are being replaced, and an
index caught in the middle is reported as unfinished rather than half-loaded. A file or page that cannot be
read is left out with its reason (:attr:`BuildReport.skipped_files`). When the inputs change (files added,
removed or changed in size), the next build re-plans the handles over the new inputs, keeps the text of
every page it had read from an unchanged file, and reads only the rest: the result is the index a clean
build of the new inputs gives.

>>> report = build_index(["manual.pdf"], "manual.idx")          # doctest: +SKIP
>>> index = PageIndex.open("manual.idx")                        # doctest: +SKIP
>>> index.record(index.handles[0]).page_no                      # doctest: +SKIP
"""

from __future__ import annotations

import functools
import json
import logging
import os
import shutil
import sqlite3
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np

from ..errors import ConfigError, DatasetError, DocIntentError, FileMissingError, InputError
from ..io import PDFIUM_LOCK, load_page, open_pdf, pdf_page_text, readable_page_count, render_pdf_page
from ..io.lock import FolderLock
from ..ocr import get_engine
from ..page import Box, Page
from .bm25 import BM25
from .text import INDEX_STEMMING, INDEX_TOKENIZER, index_terms

#: BM25 k1 and b of the page body, chosen on the development queries (``benchmarks/retrieval_tune.py``).
INDEX_K1 = 1.5
INDEX_B = 0.75

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1
DEFAULT_DPI = 144
PDF_SUFFIXES = {".pdf"}
IMAGE_SUFFIXES = {".png", ".jpg", ".jpeg", ".tif", ".tiff", ".webp", ".bmp"}
TEXT_MODES = ("auto", "pdf", "ocr")
IMAGE_MODES = ("lazy", "jpeg")
#: A text layer with fewer non-space characters than this counts as missing in ``text="auto"``.
MIN_TEXT_CHARS = 20
#: The BM25 files, written together (see :func:`write_bm25`).
BM25_FILES = ("bm25.npz", "bm25_vocab.json")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS documents (
    doc_id INTEGER PRIMARY KEY, path TEXT NOT NULL, kind TEXT NOT NULL, n_pages INTEGER NOT NULL,
    size INTEGER NOT NULL, title TEXT
);
CREATE TABLE IF NOT EXISTS pages (
    handle TEXT PRIMARY KEY, doc_id INTEGER NOT NULL REFERENCES documents(doc_id), page_no INTEGER NOT NULL,
    width INTEGER, height INTEGER, text TEXT, text_source TEXT, seconds REAL
);
CREATE INDEX IF NOT EXISTS pages_todo ON pages(doc_id, page_no);
"""
#: Pages whose record cannot be used: no document, a page number outside it, or fields of the wrong type.
#: Every column the index reads, named once at open: a damaged schema fails there rather than at a search.
_COLUMNS = (
    "SELECT p.handle, p.page_no, p.width, p.height, p.text, p.text_source, p.seconds, d.path, d.title, "
    "d.kind, d.n_pages, d.size FROM pages p JOIN documents d USING (doc_id) LIMIT 0"
)
_BROKEN_PAGES = """
SELECT COUNT(*) FROM pages p LEFT JOIN documents d USING (doc_id)
WHERE d.doc_id IS NULL OR typeof(p.page_no) != 'integer' OR p.page_no < 0 OR p.page_no >= d.n_pages
   OR typeof(d.path) != 'text' OR typeof(p.handle) != 'text'
   OR (p.text IS NOT NULL AND (typeof(p.text) != 'text' OR typeof(p.width) != 'integer'
                               OR typeof(p.height) != 'integer'))
"""


@dataclass(frozen=True)
class PageRecord:
    """One indexed page: its handle, where it came from, and its text.

    ``page_no`` is 0-based. ``text_source``: "pdf" (text layer) or "ocr:<engine>".
    """

    handle: str
    doc_path: str
    doc_title: str
    _: KW_ONLY
    page_no: int
    width: int
    height: int
    text: str
    text_source: str

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> PageRecord:
        """The record of a ``pages`` row selected as handle, path, title, page_no, width, height, text,
        text_source."""
        handle, doc_path, doc_title, page_no, width, height, text, text_source = row
        return cls(
            handle, doc_path, doc_title, page_no=page_no, width=width, height=height, text=text, text_source=text_source
        )


@dataclass
class BuildReport:
    """What one call of :func:`build_index` did."""

    pages_total: int
    pages_done_before: int
    pages_processed: int
    _: KW_ONLY
    pages_by_source: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0
    complete: bool = False
    skipped_files: list[str] = field(default_factory=list)

    @property
    def pages_per_minute(self) -> float:
        return 60.0 * self.pages_processed / self.seconds if self.seconds > 0 else 0.0


def collect_inputs(inputs: Iterable[str | Path]) -> list[Path]:
    """PDFs and images named by ``inputs``; directories are searched recursively (:func:`docintent.io.walk.walk_folder`:
    links into loops cut, pipes and devices never opened). Sorted, no duplicates."""
    from ..io.walk import MAX_WALK_DEPTH, walk_folder

    found: list[Path] = []
    for item in inputs:
        p = Path(item)
        if p.is_dir():
            walk = walk_folder(p, MAX_WALK_DEPTH, None, suffixes=tuple(PDF_SUFFIXES | IMAGE_SUFFIXES))
            found.extend(Path(q) for q in walk.documents)
        elif p.is_file():
            found.append(p)
        else:
            raise FileMissingError(p, "no such file or directory")
    unique = sorted({q.resolve() for q in found})
    if not unique:
        raise InputError(", ".join(map(str, inputs)), "no PDF or image files found")
    return unique


def _text(data: bytes) -> str:
    """A text value of the database; bytes a damaged file turned into something that is not UTF-8 are read as
    replacement characters instead of failing every query that touches them."""
    return data.decode("utf-8", "replace")


def _connect(path: Path) -> sqlite3.Connection:
    con = sqlite3.connect(str(path))
    con.text_factory = _text
    con.execute("PRAGMA journal_mode=WAL")
    con.execute("PRAGMA synchronous=NORMAL")
    return con


def _pdf_title(pdf, fallback: str) -> str:
    try:
        title = (pdf.get_metadata_dict().get("Title") or "").strip()
    except Exception:  # noqa: BLE001 - broken metadata must not stop an index build
        title = ""
    return title or fallback


def _fingerprint(files: Sequence[Path]) -> list[list[Any]]:
    return [[str(f), f.stat().st_size] for f in files]


_Build = TypeVar("_Build", bound=Callable[..., Any])


def _one_writer(build: _Build) -> _Build:
    """Hold the index folder's lock (creating the folder) while ``build`` works in it."""

    @functools.wraps(build)
    def locked(inputs: Any, out: str | Path, *args: Any, **kwargs: Any) -> Any:
        folder = Path(out)
        if folder.exists() and not folder.is_dir():
            raise InputError(folder, "exists and is not a folder; an index needs a folder of its own")
        folder.mkdir(parents=True, exist_ok=True)
        with FolderLock(folder, purpose="page index"):
            return build(inputs, folder, *args, **kwargs)

    return cast(_Build, locked)


@_one_writer
def build_index(
    inputs: Iterable[str | Path],
    out: str | Path,
    *,
    dpi: int = DEFAULT_DPI,
    text: str = "auto",
    ocr: Any = None,
    images: str = "lazy",
    seed: int = 0,
    overwrite: bool = False,
    limit: int | None = None,
    progress: bool | None = None,
    commit_every: int = 1,
    executor: Any = None,
) -> BuildReport:
    """Index the pages of ``inputs`` (PDFs, images or directories of them) into directory ``out``.

    ``text``: "auto" (PDF text layer, OCR when a page has none), "pdf" (text layer only) or "ocr" (always OCR).
    ``ocr``: an OCR engine (anything with ``.read(page).text``) or an engine name for
    :func:`docintent.ocr.get_engine`; loaded only when a page needs it. ``images``: "lazy" or "jpeg" (see the
    module docstring). ``limit``: process at most this many pages in this call (the rest on a later call).

    Re-running on an unfinished index resumes it: finished pages are kept and not processed again; after the
    inputs changed it re-plans and reads only the pages it has not read (module docstring). Pages are
    committed every ``commit_every`` pages (default: each one) and when the build is interrupted. Raises
    :class:`~docintent.errors.FolderBusyError` while another process builds ``out``.

    ``executor``: where pages are read — None reads them here, one after another; an executor of
    :mod:`docintent.evaluation.executors` (local worker processes, Ray) reads them elsewhere while this process
    alone writes the index, so handles, texts and resuming are the same. ``ocr`` must then be an engine name.
    """
    if text not in TEXT_MODES:
        raise ConfigError(f"text mode {text!r} is unknown; valid: {', '.join(TEXT_MODES)}")
    if images not in IMAGE_MODES:
        raise ConfigError(f"image mode {images!r} is unknown; valid: {', '.join(IMAGE_MODES)}")
    files = collect_inputs(inputs)
    out = Path(out)
    db_path = out / "index.sqlite"
    settings = {"schema": SCHEMA_VERSION, "dpi": dpi, "text": text, "images": images, "seed": seed}
    if overwrite and out.exists():
        for name in ("index.sqlite", "index.sqlite-wal", "index.sqlite-shm", "bm25.npz", "bm25_vocab.json"):
            (out / name).unlink(missing_ok=True)
        for p in out.glob("dense_*.npy"):
            p.unlink()
    out.mkdir(parents=True, exist_ok=True)
    try:
        con = _connect(db_path)
        con.executescript(_SCHEMA)
        stored = dict(con.execute("SELECT key, value FROM meta"))
    except sqlite3.DatabaseError as err:
        raise DatasetError(
            f"{db_path}: not a docintent index database ({err}); rebuild it with --overwrite or choose another "
            "output folder"
        ) from None
    try:
        if stored and json.loads(stored["settings"]) != settings:
            raise ConfigError(
                f"{out} holds an index built with other settings ({stored['settings']}); choose another output "
                "directory or rebuild it with --overwrite"
            )
        if not stored:
            skipped = _plan(con, files, settings, seed)
        elif json.loads(stored["inputs"]) != _fingerprint(files):
            skipped = _replan(con, out, files, settings, seed)
        else:
            skipped = json.loads(stored.get("skipped", "[]"))
        con.commit()
        return _process(con, out, settings, ocr, limit, progress, commit_every, skipped, executor)
    finally:
        con.close()


def _replan(con: sqlite3.Connection, out: Path, files: list[Path], settings: dict, seed: int) -> list[str]:
    """Plan the handles of changed inputs afresh, keeping the text of every page already read from a file whose
    path and size are unchanged (not with stored images: those are named by the old handles). One transaction:
    a kill in the middle leaves the previous plan."""
    carried: dict[tuple[str, int, int], tuple[Any, ...]] = {}
    if settings["images"] != "jpeg":
        for path, size, page_no, *values in con.execute(
            "SELECT d.path, d.size, p.page_no, p.width, p.height, p.text, p.text_source, p.seconds "
            "FROM pages p JOIN documents d USING (doc_id) WHERE p.text IS NOT NULL"
        ):
            carried[(path, size, page_no)] = tuple(values)
    for table in ("pages", "documents", "meta"):
        con.execute(f"DELETE FROM {table}")  # noqa: S608 - fixed table names
    skipped = _plan(con, files, settings, seed)
    plan = con.execute(
        "SELECT p.handle, d.path, d.size, p.page_no FROM pages p JOIN documents d USING (doc_id)"
    ).fetchall()
    con.executemany(
        "UPDATE pages SET width=?, height=?, text=?, text_source=?, seconds=? WHERE handle=?",
        [(*carried[(path, size, no)], handle) for handle, path, size, no in plan if (path, size, no) in carried],
    )
    for stale in out.glob("dense_*.npy"):  # embeddings follow the handle order of the old plan
        stale.unlink()
    log.info("%s: inputs changed; re-planned %d pages, kept the text of %d", out, len(plan), len(carried))
    return skipped


def _plan(con: sqlite3.Connection, files: list[Path], settings: dict, seed: int) -> list[str]:
    """Register documents and assign every page its shuffled handle before any page is processed."""
    slots: list[tuple[int, int]] = []
    skipped: list[str] = []
    for doc_id, path in enumerate(files):
        if path.suffix.lower() in PDF_SUFFIXES:
            with PDFIUM_LOCK:
                try:
                    pdf = open_pdf(path)
                except InputError as err:
                    log.warning("skipping %s", err)
                    skipped.append(str(err))
                    continue
                # The pages that exist, not the count the page tree claims (a lie of 1,000,000 would be planned).
                n_pages, title, kind = readable_page_count(pdf), _pdf_title(pdf, path.stem), "pdf"
                pdf.close()
        else:
            n_pages, title, kind = 1, path.stem, "image"
        con.execute(
            "INSERT INTO documents VALUES (?, ?, ?, ?, ?, ?)",
            (doc_id, str(path), kind, n_pages, path.stat().st_size, title),
        )
        slots.extend((doc_id, p) for p in range(n_pages))
    if not slots:
        raise InputError(", ".join(map(str, files)), "none of the inputs could be opened")
    order = np.random.default_rng(seed).permutation(len(slots))
    width = max(6, len(str(len(slots) - 1)))
    con.executemany(
        "INSERT INTO pages (handle, doc_id, page_no) VALUES (?, ?, ?)",
        ((f"page_{int(order[i]):0{width}d}", d, p) for i, (d, p) in enumerate(slots)),
    )
    meta = {"settings": json.dumps(settings), "inputs": json.dumps(_fingerprint(files)), "skipped": json.dumps(skipped)}
    con.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
    return skipped


class _OcrReader:
    """Resolves the OCR engine on first use, so text-layer builds never load a model."""

    def __init__(self, ocr: Any) -> None:
        self._spec = ocr
        self._engine = None if ocr is None or isinstance(ocr, str) else ocr

    def __call__(self, page: Page) -> tuple[str, str]:
        if self._engine is None:
            self._engine = get_engine(self._spec)
        result = self._engine.read(page)
        return result.text, f"ocr:{getattr(self._engine, 'name', type(self._engine).__name__)}"


@dataclass(frozen=True)
class PageJob:
    """Reads one page (text layer or OCR, optional JPEG copy) for :func:`build_index`; an executor job.

    Items are ``(handle, doc_id, page_no, path, kind)`` rows of the pages table; results are
    ``(handle, width, height, text, text_source, seconds, skip_reason)`` — a page that cannot be read has only
    its handle and the reason. Each worker slot keeps one PDF open and loads the OCR engine on first need.
    """

    out: Path
    settings: dict
    ocr: Any = None
    batch: int = 1

    def setup(self) -> _PageReader:
        return _PageReader(_OcrReader(self.ocr))

    def run(self, reader: _PageReader, item: tuple) -> tuple:
        from pypdfium2 import PdfiumError

        handle, doc_id, page_no, path, kind = item
        dpi, mode, images = self.settings["dpi"], self.settings["text"], self.settings["images"]
        t0 = time.perf_counter()
        try:
            if kind == "pdf":
                pdf_page = reader.pdf(doc_id, path)[page_no]
                w_pt, h_pt = pdf_page.get_size()
                width, height = round(w_pt * dpi / 72.0), round(h_pt * dpi / 72.0)
                page_text, source = ("", "")
                if mode in ("auto", "pdf"):
                    page_text, source = pdf_page_text(pdf_page), "pdf"
                rgb = None
                if mode == "ocr" or (mode == "auto" and len("".join(page_text.split())) < MIN_TEXT_CHARS):
                    rgb = render_pdf_page(pdf_page, dpi)
                    page_text, source = reader.ocr(Page.from_array(rgb, source=f"{path}#page={page_no}"))
                if images == "jpeg":
                    rgb = render_pdf_page(pdf_page, dpi) if rgb is None else rgb
                    _save_jpeg(rgb, self.out / "images" / f"{handle}.jpg")
                pdf_page.close()
            else:
                page = load_page(path)
                width, height = page.size
                page_text, source = ("", "none") if mode == "pdf" else reader.ocr(page)
                if images == "jpeg":
                    _save_jpeg(page.pixels, self.out / "images" / f"{handle}.jpg")
        except (InputError, PdfiumError, OSError) as err:
            if not isinstance(err, (InputError, PdfiumError)) and (
                err.filename is None or Path(err.filename) != Path(path)
            ):
                raise  # not the input's fault (a full disk, say): stop, the pages read so far are kept
            # A damaged or unreadable file or page is left out with its reason; the rest of the build goes on.
            if isinstance(err, InputError):
                reason = str(err)
            elif isinstance(err, PdfiumError):
                reason = f"{path}: the page cannot be read (its page object is damaged or missing)"
            else:
                reason = f"{path}: cannot read the page ({err.strerror or err})"
            reason = f"{reason} (page {page_no + 1})" if kind == "pdf" else reason
            log.warning("skipping %s", reason)
            return handle, 0, 0, "", "", 0.0, reason
        return handle, width, height, page_text, source, time.perf_counter() - t0, None

    def lost(self, item: tuple, reason: str) -> tuple:
        raise DocIntentError(
            f"{item[3]} page {item[2] + 1}: {reason}; the pages read so far are saved, run "
            "the same command again to resume"
        )

    def close(self, reader: _PageReader) -> None:
        reader.close()


class _PageReader:
    """A worker's open PDF (pages come in document order, so one is enough) and its OCR reader."""

    def __init__(self, ocr: _OcrReader) -> None:
        self.ocr = ocr
        self._open: tuple[int, Any] | None = None

    def pdf(self, doc_id: int, path: str) -> Any:
        if self._open is None or self._open[0] != doc_id:
            self.close()
            self._open = (doc_id, open_pdf(path))
        return self._open[1]

    def close(self) -> None:
        if self._open is not None:
            self._open[1].close()
            self._open = None


def _process(
    con: sqlite3.Connection,
    out: Path,
    settings: dict,
    ocr: Any,
    limit: int | None,
    progress: bool | None,
    commit_every: int,
    skipped: list[str],
    executor: Any = None,
) -> BuildReport:
    from tqdm import tqdm

    total = con.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
    done_before = con.execute("SELECT COUNT(*) FROM pages WHERE text IS NOT NULL").fetchone()[0]
    todo = con.execute(
        "SELECT p.handle, p.doc_id, p.page_no, d.path, d.kind FROM pages p JOIN documents d USING (doc_id) "
        "WHERE p.text IS NULL ORDER BY p.doc_id, p.page_no"
    ).fetchall()
    if limit is not None:
        todo = todo[: max(limit, 0)]
    report = BuildReport(total, done_before, 0, skipped_files=list(skipped))
    # Text-layer pages take milliseconds: other processes get them in batches.
    job = PageJob(out, settings, ocr, batch=1 if settings["text"] == "ocr" else 16)
    if settings["images"] == "jpeg":
        (out / "images").mkdir(exist_ok=True)
    show = sys.stderr.isatty() if progress is None else progress
    bar = tqdm(total=total, initial=done_before, disable=not show, unit="page", desc="index")
    start = time.perf_counter()
    pending = 0

    def emit(result: tuple) -> None:
        nonlocal pending
        handle, width, height, page_text, source, seconds, skip_reason = result
        if skip_reason is not None:
            _skip_page(con, handle, skip_reason)
            report.skipped_files.append(skip_reason)
            con.commit()
            bar.update(1)
            return
        con.execute(
            "UPDATE pages SET width=?, height=?, text=?, text_source=?, seconds=? WHERE handle=?",
            (width, height, page_text, source, seconds, handle),
        )
        report.pages_processed += 1
        report.pages_by_source[source] = report.pages_by_source.get(source, 0) + 1
        pending += 1
        if pending >= commit_every:
            con.commit()
            pending = 0
        bar.update(1)

    try:
        if executor is None:
            reader = job.setup()
            try:
                for item in todo:
                    emit(job.run(reader, item))
            finally:
                job.close(reader)
        else:
            executor.map(todo, job, emit)
    finally:
        con.commit()
        bar.close()
        report.seconds = time.perf_counter() - start
    report.pages_total = con.execute("SELECT COUNT(*) FROM pages").fetchone()[0]
    remaining = con.execute("SELECT COUNT(*) FROM pages WHERE text IS NULL").fetchone()[0]
    if remaining == 0:
        if report.pages_total == 0:
            raise InputError(out, "no page of the inputs could be read: " + "; ".join(report.skipped_files))
        write_bm25(con, out)
        report.complete = True
    return report


def _skip_page(con: sqlite3.Connection, handle: str, reason: str) -> None:
    """Leave a page that cannot be read out of the index, recording why (a clean build does the same)."""
    con.execute("DELETE FROM pages WHERE handle = ?", (handle,))
    stored = con.execute("SELECT value FROM meta WHERE key = 'skipped'").fetchone()
    skipped = json.loads(stored[0]) if stored else []
    con.execute("INSERT OR REPLACE INTO meta VALUES ('skipped', ?)", (json.dumps([*skipped, reason]),))


def _save_jpeg(rgb: np.ndarray, path: Path) -> None:
    from PIL import Image

    partial = path.with_name(f".{path.stem}.{os.getpid()}.partial.jpg")
    try:
        Image.fromarray(rgb).save(partial, quality=85, optimize=True)
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def write_bm25(con: sqlite3.Connection, out: Path) -> None:
    """Fit BM25 on the page texts and replace the BM25 files. Both are written into a temporary folder and
    renamed into place; the ``bm25`` meta entry says "writing" meanwhile, so an index whose files may be a
    mix of two builds is refused by :meth:`PageIndex.open` until a build finishes them."""
    rows = con.execute("SELECT text FROM pages ORDER BY handle").fetchall()
    model = BM25.fit(
        (index_terms(t, INDEX_TOKENIZER, stemming=INDEX_STEMMING) for (t,) in rows),
        k1=INDEX_K1,
        b=INDEX_B,
        stemming=INDEX_STEMMING,
        tokenizer=INDEX_TOKENIZER,
    )
    con.execute("INSERT OR REPLACE INTO meta VALUES ('bm25', 'writing')")
    con.commit()
    staging = Path(tempfile.mkdtemp(prefix=".bm25-", dir=out))
    try:
        model.save(staging)
        for name in BM25_FILES:
            with open(staging / name, "rb") as fh:
                os.fsync(fh.fileno())
            os.replace(staging / name, out / name)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    con.execute("INSERT OR REPLACE INTO meta VALUES ('bm25', 'ok')")
    con.commit()


class PageIndex:
    """A finished page index opened for search and page access.

    >>> index = PageIndex.open("manual.idx")                 # doctest: +SKIP
    >>> index.text(index.handles[0])[:40]                    # doctest: +SKIP
    """

    def __init__(self, directory: Path, con: sqlite3.Connection) -> None:
        self.directory = directory
        self._con = con
        meta = dict(con.execute("SELECT key, value FROM meta"))
        settings = json.loads(meta["settings"]) if isinstance(meta.get("settings"), str) else None
        if not isinstance(settings, dict) or not isinstance(settings.get("dpi"), int):
            raise ValueError("its build settings are missing or not a JSON object")
        self.settings: dict = settings
        self.handles: list[str] = [h for (h,) in con.execute("SELECT handle FROM pages ORDER BY handle")]
        self.row_of: dict[str, int] = {h: i for i, h in enumerate(self.handles)}
        self._pdfs: dict[str, Any] = {}

    @classmethod
    def open(cls, directory: str | Path) -> PageIndex:
        """Open an index built by :func:`build_index`; refuses an unfinished one (re-run the build to finish it)."""
        directory = Path(directory)
        db = directory / "index.sqlite"
        if not db.is_file():
            raise DatasetError(
                f"{directory}: not a docintent index (no index.sqlite); build one with `docintent index`"
            )
        con = sqlite3.connect(str(db), check_same_thread=False)
        con.text_factory = _text
        try:
            todo = con.execute("SELECT COUNT(*) FROM pages WHERE text IS NULL").fetchone()[0]
            bm25_state = con.execute("SELECT value FROM meta WHERE key = 'bm25'").fetchone()
            # Every page must belong to a document and lie inside it: an edited or damaged database is refused
            # here, in one message, instead of failing at the first page it names.
            con.execute(_COLUMNS).fetchall()
            broken = con.execute(_BROKEN_PAGES).fetchone()[0]
        except (sqlite3.DatabaseError, UnicodeDecodeError) as err:  # the latter: a schema whose text is damaged
            con.close()
            raise DatasetError(
                f"{db}: not a docintent index database ({err}); rebuild it with `docintent index ... --overwrite`"
            ) from None
        if broken:
            con.close()
            raise DatasetError(
                f"{db}: damaged index database ({broken} page record(s) point outside their "
                "documents); rebuild it with `docintent index ... --overwrite`"
            )
        missing = [name for name in BM25_FILES if not (directory / name).is_file()]
        if todo or missing or (bm25_state is not None and bm25_state[0] != "ok"):
            con.close()
            what = f"{todo} pages left" if todo else "its BM25 files are " + ("missing" if missing else "being written")
            raise DatasetError(
                f"{directory}: the index build is unfinished ({what}); run `docintent index` again to finish it"
            )
        try:
            return cls(directory, con)
        except (sqlite3.DatabaseError, KeyError, ValueError) as err:  # ValueError covers UnicodeDecodeError
            con.close()
            raise DatasetError(f"{db}: damaged index database ({err}); rebuild it with --overwrite") from None

    def __len__(self) -> int:
        return len(self.handles)

    def __contains__(self, handle: object) -> bool:
        return handle in self.row_of

    @cached_property
    def bm25(self):
        """The BM25 model (rows in :attr:`handles` order), loaded on first use."""
        try:
            model = BM25.load(self.directory)
            if model.n_docs != len(self.handles):
                raise ValueError(f"{model.n_docs} rows for {len(self.handles)} pages")
            return model
        # Reading a damaged .npz reaches zipfile, zlib, NumPy and SciPy, whose errors have no common base below
        # Exception (a flipped byte can make zipfile speak of encryption or an unknown compression method).
        except Exception as err:  # noqa: BLE001 - re-raised as the named error below, never swallowed
            raise DatasetError(
                f"{self.directory}: the BM25 files ({', '.join(BM25_FILES)}) are damaged ({type(err).__name__}: {err}); run "
                "`docintent index` again with the same inputs to rewrite them"
            ) from None

    def _check(self, handle: str) -> None:
        if handle not in self.row_of:
            raise InputError(handle, f"unknown page handle in index {self.directory}")

    def record(self, handle: str) -> PageRecord:
        """Provenance and text of one page."""
        self._check(handle)
        row = self._con.execute(
            "SELECT p.handle, d.path, d.title, p.page_no, p.width, p.height, p.text, p.text_source "
            "FROM pages p JOIN documents d USING (doc_id) WHERE p.handle = ?",
            (handle,),
        ).fetchone()
        return PageRecord.from_row(row)

    def records(self) -> list[PageRecord]:
        """Every page, in handle order."""
        rows = self._con.execute(
            "SELECT p.handle, d.path, d.title, p.page_no, p.width, p.height, p.text, p.text_source "
            "FROM pages p JOIN documents d USING (doc_id) ORDER BY p.handle"
        ).fetchall()
        return [PageRecord.from_row(r) for r in rows]

    def text(self, handle: str) -> str:
        """The page text (text layer or OCR)."""
        self._check(handle)
        return self._con.execute("SELECT text FROM pages WHERE handle = ?", (handle,)).fetchone()[0]

    @cached_property
    def texts(self) -> list[str]:
        """Every page text in :attr:`handles` order (for dense embedding and batch work)."""
        return [t for (t,) in self._con.execute("SELECT text FROM pages ORDER BY handle")]

    def image(self, handle: str) -> Page:
        """The page image: the stored JPEG, the raster input, or the PDF page re-rendered at the index DPI."""
        rec = self.record(handle)
        jpeg = self.directory / "images" / f"{handle}.jpg"
        if jpeg.is_file():
            return load_page(jpeg)
        if rec.doc_path.lower().endswith(".pdf"):
            with PDFIUM_LOCK:
                pdf_page = self._pdf_page(rec.doc_path, rec.page_no)
                try:
                    return Page.from_array(render_pdf_page(pdf_page, self.settings["dpi"]), source=handle)
                finally:
                    pdf_page.close()

        page = load_page(rec.doc_path)
        return Page(page.pixels, source=handle)

    def _pdf_page(self, path: str, page_no: int) -> Any:
        """Page ``page_no`` (0-based) of the PDF at ``path``, the document kept open for the next page (call with
        :data:`~docintent.io.PDFIUM_LOCK` held; close the page when done)."""
        pdf = self._pdfs.get(path)
        if pdf is None:
            pdf = self._pdfs[path] = open_pdf(path)
        return pdf[page_no]

    def region_text(self, handle: str, box: Box) -> str:
        """Text inside ``box`` of a page: from the PDF text layer when the page has one, else by OCR of the crop."""
        rec = self.record(handle)
        if rec.text_source == "pdf":
            with PDFIUM_LOCK:
                pdf_page = self._pdf_page(rec.doc_path, rec.page_no)
                try:
                    w_pt, h_pt = pdf_page.get_size()
                    textpage = pdf_page.get_textpage()
                    try:
                        # PDF space has its origin at the bottom left.
                        return textpage.get_text_bounded(
                            left=box.x0 * w_pt, bottom=(1 - box.y1) * h_pt, right=box.x1 * w_pt, top=(1 - box.y0) * h_pt
                        )
                    finally:
                        textpage.close()
                finally:
                    pdf_page.close()

        return get_engine().read(self.image(handle), box).text

    def size_bytes(self) -> int:
        """Bytes on disk of the index files (SQLite, BM25, stored images, dense embeddings)."""
        return sum(p.stat().st_size for p in self.directory.rglob("*") if p.is_file())

    def close(self) -> None:
        with PDFIUM_LOCK:
            for pdf in self._pdfs.values():
                pdf.close()
            self._pdfs.clear()
        self._con.close()
