"""Whole documents: the pages of a PDF or image to answer from, and which of them to read for a question.

A question about a PDF is answered from the page that holds the answer. :meth:`Document.locate` ranks the pages
with the page locator (:mod:`docintent.locator`) by how well their text matches the question -
the PDF's text layer where a page has one (milliseconds), OCR of the page where it has none - and
:func:`docintent.ask` reads the best pages in that order, restoring only the pages it reads, until one answers.
Pages are rendered when they are read, so a long document never sits in memory whole.

Page numbers count from 1, as a PDF viewer shows them.

>>> doc = Document("report.pdf", pages="2-5")                      # doctest: +SKIP
>>> [(c.number, round(c.relevance, 2)) for c in doc.locate("What was the net income in 2023?")]  # doctest: +SKIP
[(4, 0.83), (2, 0.31), (3, 0.0), (5, 0.0)]
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .errors import ConfigError, DocIntentError, FileMissingError
from .io import is_pdf_bytes, load_page, load_pdf, pdf_page_count
from .io.load import office_as_pdf
from .io.office import is_office_file
from .locator import DEFAULT_THRESHOLD, parse_pages, rank_pages, text_layer
from .ocr import get_engine
from .ocr.base import OcrResult
from .page import Page

#: What ``pages=`` takes: a spec such as "1-3,7", 1-based page numbers, or None for every page.
PageSelection = str | Sequence[int] | None


@dataclass(frozen=True)
class PageChoice:
    """One page as the locator ranked it: its 1-based ``number``, ``relevance`` in [0, 1] (how much of the
    question's keyword weight its best line matches) and the ``evidence`` text found there (None: none)."""

    number: int
    relevance: float
    evidence: str | None = None

    def to_dict(self) -> dict[str, object]:
        return {"page": self.number, "relevance": round(self.relevance, 4), "evidence": self.evidence}


class Document:
    """The pages of one PDF (a path or its bytes), office document (converted to PDF by LibreOffice, see
    :mod:`docintent.io.office`), image file or :class:`Page` to answer from.

    ``pages``: the pages to consider (a spec such as ``"1-3,7"`` or 1-based numbers; default: all); ``dpi``:
    PDF rendering resolution (default ``DOCINTENT_PDF_DPI``); ``max_pixels``: the decompression-bomb guard;
    ``name``: how messages name PDF bytes.
    """

    def __init__(
        self,
        source: str | os.PathLike | bytes | Page,
        *,
        pages: PageSelection = None,
        dpi: int | None = None,
        max_pixels: int | None = None,
        password: str | None = None,
        name: str | None = None,
    ) -> None:
        self.dpi = dpi
        self.max_pixels = max_pixels
        self.password = password
        self._page: Page | None = None
        if isinstance(source, Page):
            self.source: str | os.PathLike | bytes | None = None
            self._page = source
            self.is_pdf = False
            self.count = 1
            self.name = name or str(source.source)
        elif isinstance(source, (bytes, bytearray)):
            if not is_pdf_bytes(bytes(source)):
                raise ConfigError(f"{name or '<bytes>'}: a document given as bytes must be a PDF")
            self.source = bytes(source)
            self.is_pdf = True
            self.name = name or "<bytes>"
            self.count = pdf_page_count(self.source, password=password, name=self.name)
        elif isinstance(source, (str, os.PathLike)):
            if "\x00" in os.fspath(source):  # no file system takes it (and the path functions raise on it)
                raise FileMissingError(source, "the path holds a NUL character")
            path = Path(source)
            self.name = name or str(path)
            converted = office_as_pdf(path) if is_office_file(path) and path.is_file() else None
            if converted is not None:  # an office document: the pages of the PDF LibreOffice made of it
                path = converted
            self.source = path
            self.is_pdf = converted is not None or _is_pdf_file(path)
            self.count = pdf_page_count(path, password=password, name=self.name) if self.is_pdf else 1
        else:
            raise ConfigError(
                f"the image must be a Page, a Document, a numpy array, a file path or a PDF's bytes, "
                f"got {type(source).__name__} (for encoded image bytes use docintent.io.load_bytes)"
            )
        #: Pages :meth:`texts` could not read or did not read, with the reason (1-based numbers).
        self.unread: dict[int, str] = {}
        #: Pages without a text layer past the OCR budget of :meth:`texts` (``ocr_budget``): not read, ranked last.
        self.past_budget: list[int] = []
        self.ocr_budget = LOCATE_OCR_PAGES
        try:
            self.numbers = _select(pages, self.count)
        except ConfigError as err:
            raise ConfigError(f"{self.name}: {err}") from None

    @classmethod
    def of_page(cls, page: Page) -> Document:
        """A one-page document of ``page``."""
        return cls(page)

    def __len__(self) -> int:
        return len(self.numbers)

    def page(self, number: int) -> Page:
        """Page ``number`` (1-based), rendered now (a PDF) or loaded once (an image)."""
        if number not in self.numbers:
            raise ConfigError(f"{self.name}: page {number} is not one of the pages chosen ({page_spans(self.numbers)})")
        if self._page is not None:
            return self._page
        if self.is_pdf:
            assert self.source is not None
            return load_pdf(
                self.source,
                pages=[number - 1],
                dpi=self.dpi,
                max_pixels=self.max_pixels,
                password=self.password,
                name=self.name,
            )[0]
        assert isinstance(self.source, Path)
        self._page = load_page(self.source, max_pixels=self.max_pixels)
        return self._page

    def texts(
        self, *, engine: object = None, on_page: Callable[[int], None] | None = None, ocr_budget: int | None = None
    ) -> list[OcrResult]:
        """The text of every chosen page, in order: the PDF's text layer where the page has one, else the OCR
        of the rendered page (cached by page hash, so reading that page later finds it). Only OCR results are
        kept: the rendered pixels are dropped at once. ``on_page(number)``: called as each page read is done
        (its text layer or its OCR); the pages past the budget are not read and not reported. How many pages are
        read is known before the first call: :attr:`ranking_reads`.

        ``ocr_budget``: at most this many pages are OCR'd (default :data:`LOCATE_OCR_PAGES`); the pages past it
        get no text and are listed in :attr:`unread` with the reason (and in :attr:`past_budget`), as is a page
        that cannot be rendered (a damaged page), so one bad or one too many page never stops the others being
        read."""
        budget = LOCATE_OCR_PAGES if ocr_budget is None else ocr_budget
        layers: list[OcrResult | None] = [None] * len(self.numbers)
        if self.is_pdf and self.source is not None:
            layers = text_layer(self.source, None, self.numbers, password=self.password)
        out: list[OcrResult] = []
        self.unread = {}
        self.ocr_budget = budget
        self.past_budget = [n for n, known in zip(self.numbers, layers) if known is None][max(0, budget) :]
        read = 0
        for number, known in zip(self.numbers, layers):
            if known is None:
                if read >= budget:
                    self.unread[number] = (
                        f"not ranked: past the {budget} pages without a text layer that are "
                        "read to rank pages (choose pages with pages=...)"
                    )
                    out.append(OcrResult((), "none", ""))
                    continue  # not read: no progress to report
                else:
                    read += 1
                    engine = engine or get_engine()
                    try:
                        known = engine.read(self.page(number))  # type: ignore[attr-defined]
                    except DocIntentError as err:
                        self.unread[number] = f"cannot be read: {err}"
                        known = OcrResult((), "none", "")
            out.append(known)
            if on_page is not None:
                on_page(number)
        return out

    @property
    def ranking_reads(self) -> int:
        """How many pages :meth:`texts` reads to rank them: every chosen page but those past the OCR budget."""
        return len(self.numbers) - len(self.past_budget)

    def locate(
        self,
        question: str,
        *,
        threshold: float = DEFAULT_THRESHOLD,
        engine: object = None,
        on_page: Callable[[int], None] | None = None,
    ) -> list[PageChoice]:
        """Every chosen page ranked for ``question``: pages with evidence first (most relevant first), then the
        rest by their best line's score; ties in page order."""
        scored = rank_pages(self.texts(engine=engine, on_page=on_page), question, threshold=threshold)
        choices = [
            PageChoice(n, float(relevance), items[0].evidence if items else None)
            for n, (items, relevance) in zip(self.numbers, scored)
        ]
        return sorted(choices, key=lambda c: (c.evidence is None, -round(c.relevance, 9), c.number))

    def __repr__(self) -> str:
        return f"<Document {self.name} pages {page_spans(self.numbers)} of {self.count}>"


#: Pages without a text layer OCR'd to rank a document's pages for a question (a 2,000-page scan would otherwise
#: be read whole before any page is answered from); the rest are ranked last, in page order.
LOCATE_OCR_PAGES = 60


def _is_pdf_file(path: Path) -> bool:
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return False  # never opened: a pipe would wait for a writer; the loader names the problem
        with open(path, "rb") as fh:
            return is_pdf_bytes(fh.read(1024))
    except OSError:
        return False  # the loader names the problem (missing, a folder) when the page is read


def _select(pages: PageSelection, count: int) -> list[int]:
    """1-based page numbers of a selection, checked against a document of ``count`` pages."""
    if pages is None or isinstance(pages, str):
        return parse_pages(pages, count)
    numbers = []
    for value in pages:
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise ConfigError(f"pages {list(pages)!r}: page numbers must be whole numbers counted from 1")
        if not 1 <= int(value) <= count:
            raise ConfigError(f"page {int(value)} is not in this {count}-page document (pages count from 1)")
        if int(value) not in numbers:
            numbers.append(int(value))
    if not numbers:
        raise ConfigError("no page chosen (pages count from 1)")
    return numbers


def page_spans(numbers: Sequence[int]) -> str:
    """``[1, 2, 3, 7]`` -> ``"1-3,7"``."""
    parts: list[str] = []
    run: list[int] = []
    for n in [*numbers, None]:
        if n is not None and run and n == run[-1] + 1:
            run.append(n)
            continue
        if run:
            parts.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [n] if n is not None else []
    return ",".join(parts)


def as_document(
    image: Document | Page | np.ndarray | str | os.PathLike | bytes, *, pages: PageSelection = None
) -> Document:
    """The Document of anything :func:`docintent.ask` takes (a Document is used as it is)."""
    if isinstance(image, Document):
        if pages is not None:
            raise ConfigError("choose the pages when making the Document, not again with pages=")
        return image
    if isinstance(image, np.ndarray):
        image = Page.from_array(image, source="<array>")
    return Document(image, pages=pages)


__all__ = ["Document", "PageChoice", "PageSelection", "as_document"]
