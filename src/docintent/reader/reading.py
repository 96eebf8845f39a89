"""Reading one question's pages: OCR once per page state, the layout, the answer with its evidence, and how
legible the evidence is.

A :class:`QuestionReader` analyses the question once and reads each page state (the capture and what
restorations make of it) once, through one :class:`~docintent.ocr.ReadingSession`. After a photometric
restoration only the evidence region is read again (:meth:`QuestionReader.patch`); the rest of the page keeps its
earlier reading.

>>> from docintent.ocr import get_engine
>>> reader = QuestionReader("What is the total?", "doc", get_engine())
>>> reader.read(page).answer                                   # doctest: +SKIP
'$1,250.00'
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

from ..layout.lines import Layout
from ..ocr import ReadingSession
from ..ocr.base import OcrEngine, OcrLine, OcrResult
from ..page import Box, Page
from .extract import Matcher
from .query import Question, understand
from .question import QuestionInfo
from .readers import READERS, Choice, Reader, RunnerUp


@dataclass
class Reading:
    """What the reader got from one page: the OCR, the layout and the best answer with its evidence region and
    the lines it was read from."""

    ocr: OcrResult
    layout: Layout
    answer: str
    _: KW_ONLY
    confidence: float
    region: Box
    source: str
    #: The answer's own box (its line; the whole page when nothing was read), the runners-up the reader
    #: rejected, and whether the reader abstained (its confidence under the reader's threshold).
    box: Box = Box.FULL
    runners_up: tuple[RunnerUp, ...] = ()
    abstained: bool = False
    looked_for: str = ""
    evidence_region: Box | None = None

    @property
    def review_region(self) -> Box:
        """Where a restoration of this page is judged: the evidence region, or the whole page when the reader
        was too unsure of its answer to know where the evidence is."""
        return self.evidence_region if self.evidence_region is not None else self.region

    @property
    def evidence(self) -> tuple[OcrLine, ...]:
        """The OCR lines whose centre lies in the evidence region (all lines when it is the whole page)."""
        if self.region == Box.FULL:
            return self.ocr.lines
        return tuple(line for line in self.ocr.lines if _inside(line.box, self.region))


class QuestionReader:
    """One question's readings (see the module docstring). Lives as long as the question."""

    def __init__(self, question: str, task: str, engine: OcrEngine, reader: Reader | None = None) -> None:
        self.question = question
        self.task = task
        #: The one analysis of the question (:func:`~docintent.reader.query.understand`).
        self.query: Question = understand(question, task)
        self.info: QuestionInfo = self.query.info
        self.reader: Reader = reader if reader is not None else READERS.get("scored")
        self.session = ReadingSession(engine)
        self._readings: dict[str, Reading] = {}
        self._patches: dict[str, tuple[OcrResult, OcrResult]] = {}
        #: Readings derived from a page for this question (a chart's or table's series per candidate reading).
        self.derived: dict[tuple, object] = {}

    @property
    def engine(self) -> OcrEngine:
        return self.session.engine

    def read(self, page: Page) -> Reading:
        """OCR ``page`` (once per page state) and read the answer from its layout."""
        hit = self._readings.get(page.hash)
        if hit is not None:
            return hit
        patch = self._patches.get(page.hash)
        if patch is not None:
            # A photometric tool changed only how the page looks, not where things are: keep the earlier
            # reading outside the evidence region and take the re-read region from the restored page.
            base, region_result = patch
            ocr = merge_region(base, region_result, page.hash)
        else:
            ocr = self.session.read(page)
        layout = Layout.from_ocr(ocr)
        choice: Choice = self.reader.read(self.query, layout, page)
        reading = Reading(
            ocr,
            layout,
            choice.answer,
            confidence=choice.confidence,
            region=choice.region,
            source=choice.source,
            box=choice.box,
            runners_up=tuple(choice.runners_up),
            abstained=choice.abstained,
            looked_for=choice.looked_for,
            evidence_region=choice.evidence_region,
        )
        self._readings[page.hash] = reading
        return reading

    def read_region(self, page: Page, region: Box | None, geometry_of: Page | None = None) -> OcrResult:
        """The lines of ``page`` in ``region`` (the whole page when None); ``geometry_of``: an earlier page state
        whose line boxes a photometric tool did not move."""
        if region is None or region == Box.FULL:
            return self.read(page).ocr
        if geometry_of is not None:
            self.session.quads(page, geometry_of=geometry_of)
        return self.session.read(page, region)

    def patch(self, after: Page, before: Page, region: Box) -> None:
        """Record that ``after`` (a photometric restoration of ``before``) is read anew only in ``region``."""
        self._patches[after.hash] = (self.read(before).ocr, self.session.read(after, region))

    def legibility(self, page: Page, region: Box | None) -> float:
        """How well the evidence reads: confidence-weighted characters plus the strength of the label match.

        ``quality x (0.5 + 0.5 x best label match) x (1 - 1 / (1 + characters / 20))`` where quality is the mean
        squared line confidence per character, so more text, more certain text and text that names what the
        question asks all count."""
        if region is None or region == Box.FULL:
            reading = self.read(page)
            result, layout = reading.ocr, reading.layout
        else:
            result = self.session.read(page, region)
            layout = Layout.from_ocr(result)
        if not result.lines:
            return 0.0
        chars = sum(sum(ch.isalnum() for ch in line.text) * line.confidence**2 for line in result.lines)
        matcher = Matcher(self.info, layout)
        best = max((matcher.match(it)[0] for it in layout.items), default=0.0)
        plain = sum(sum(ch.isalnum() for ch in line.text) for line in result.lines) or 1
        quality = chars / plain  # mean squared confidence per character
        return quality * (0.5 + 0.5 * best) * (1.0 - 1.0 / (1.0 + plain / 20.0))

    def characters(self, page: Page) -> int:
        """Letters and digits read on ``page``."""
        return sum(sum(ch.isalnum() for ch in line.text) for line in self.read(page).ocr.lines)


def _inside(box: Box, region: Box) -> bool:
    cx, cy = box.center
    return region.x0 <= cx <= region.x1 and region.y0 <= cy <= region.y1


def merge_region(base: OcrResult, region_result: OcrResult, page_hash: str) -> OcrResult:
    """``base`` lines outside ``region_result.region`` plus the lines read inside it."""
    region = region_result.region
    if region is None:
        return region_result
    keep = [line for line in base.lines if not _inside(line.box, region)]
    lines = sorted(keep + list(region_result.lines), key=lambda l: (round(l.box.center[1], 3), l.box.x0))
    return OcrResult(
        tuple(lines),
        base.engine,
        page_hash,
        region=None,
        seconds=base.seconds + region_result.seconds,
        meta={"merged": True},
    )


__all__ = ["QuestionReader", "Reading", "merge_region"]
