"""Evidence for questions over many pages: which pages matter, which lines on them, and what that saves.

For each page, :func:`page_evidence` returns AgenticOCR's evidence list ``[{evidence, bbox}]`` (``bbox`` in
0-1000 page coordinates), or ``[]`` when the page is irrelevant. The page text comes from the PDF text layer
when the page has one (:func:`text_layer`, ~1000 times faster than OCR) and from OCR otherwise.

Lexical relevance: the question's content words are fuzzy-matched (rapidfuzz) to the page's lines, each word
weighted by how rare it is across the document's pages; "month", "year" and "date" also match a month name or
a year, so "In which month and year ...?" finds "Issue 30, October 2019". A line is evidence when its matched
weight reaches ``threshold``, and the evidence is that line plus its neighbourhood (the lines on the same
visual row and the line just above and below).

Fused relevance (``dense=`` a sentence model, as :func:`docintent.retrieval.passages.load_sentence_model`
gives): each page is cut into the passages dense retrieval uses and embedded with the question; a page
without lexical evidence is still relevant when its best passage is close to the question
(cosine >= :data:`DENSE_MIN`) and within :data:`DENSE_MARGIN` of the document's best page, and its
evidence is the line of that passage that matches the question best. This catches paraphrases that share
no word with the page.

:func:`answer` then asks a brain with one of three contexts, as compared in the AgenticOCR paper:

=============== ===============================================================================================
``page``        every page image
``page+ocr``    every page image and the full OCR text of every page
``evidence+ocr`` only the evidence regions (image crops) and their OCR text
=============== ===============================================================================================

Input tokens are estimated, not tokenised: an image is resized so its longest side is at most 2048 px and costs
one token per 28x28 pixels (the Qwen-VL rule); text costs one token per ~4 characters.

>>> from docintent.brains import ScriptedBrain
>>> docs = collect_evidence(pages, "What is the total due?")      # doctest: +SKIP
>>> [len(d.items) for d in docs]                                   # doctest: +SKIP
[0, 2, 0]
>>> answer(docs, "What is the total due?", ScriptedBrain(final="42"), mode="evidence+ocr").tokens  # doctest: +SKIP
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..brains.base import Answer, Brain, State
from ..brains.tokens import image_tokens, text_tokens
from ..errors import ConfigError
from ..io import PDFIUM_LOCK, open_pdf
from ..ocr import get_engine
from ..ocr.base import OcrLine, OcrResult
from ..page import Box, Page
from ..reader import GENERIC_WORDS, content_words
from ..trace import Action, InspectStep, Phase

MODES = ("page", "page+ocr", "evidence+ocr")
#: Fraction of the question's keyword weight a line must match to count as evidence.
DEFAULT_THRESHOLD = 0.5
#: rapidfuzz ratio at which an OCR word counts as the question word (tolerates one or two OCR errors).
WORD_MATCH = 80.0
#: A text layer with fewer non-space characters than this counts as missing (the page is OCR'd).
MIN_TEXT_CHARS = 20
#: Fused relevance: the least cosine of a page's best passage, and how far below the document's best it may be.
DENSE_MIN = 0.45
DENSE_MARGIN = 0.05
#: What the answer step says when no page has evidence.
NO_RELEVANT_PAGE = "no relevant page"
#: Longest image side before token counting (Qwen-VL's cap as used in the AgenticOCR comparison).
MAX_SIDE = 2048


@dataclass(frozen=True)
class EvidenceItem:
    """One piece of evidence: the text of a group of lines and their box on the page."""

    evidence: str
    box: Box
    score: float

    def to_dict(self) -> dict[str, Any]:
        """AgenticOCR's form: ``{"evidence": text, "bbox": [x0, y0, x1, y1]}`` in 0-1000 page coordinates."""
        return {"evidence": self.evidence, "bbox": list(self.box.to_1000())}

    def summary(self) -> str:
        return f"{self.evidence} @ {list(self.box.to_1000())}"


@dataclass
class PageEvidence:
    """A page, its OCR and its evidence for the question (empty ``items``: the page is irrelevant)."""

    number: int  # 1-based page number in the document
    page: Page
    ocr: OcrResult
    items: list[EvidenceItem] = field(default_factory=list)
    relevance: float = 0.0  # best line score on the page, in [0, 1]

    @property
    def relevant(self) -> bool:
        return bool(self.items)

    def to_list(self) -> list[dict[str, Any]]:
        return [item.to_dict() for item in self.items]


@dataclass(frozen=True)
class ContextCost:
    """Estimated input tokens of one context: images (Qwen-VL rule) and text (~4 chars per token)."""

    mode: str
    images: int
    image_tokens: int
    text_tokens: int

    @property
    def total(self) -> int:
        return self.image_tokens + self.text_tokens


@dataclass(frozen=True)
class EvidenceAnswer:
    """The brain's answer with the context it saw and what that context cost."""

    answer: Answer
    mode: str
    cost: ContextCost
    pages_used: tuple[int, ...]
    seconds: float


def _keywords(question: str) -> list[str]:
    seen: list[str] = []
    for word in content_words(question):
        w = word.strip("?,;:!()\"'").lower()
        if w and w not in seen:
            seen.append(w)
    return seen


def _line_words(line: OcrLine) -> list[str]:
    return [w.strip(".,;:()\"'").lower() for w in line.text.split() if w.strip(".,;:()\"'")]


_MONTHS = frozenset(
    "january february march april may june july august september october november december "
    "jan feb mar apr jun jul aug sep sept oct nov dec".split()
)
_YEAR = re.compile(r"^(1[5-9]|20)\d\d$")


def _concept(keyword: str, words: Sequence[str]) -> bool:
    """Question words that name a kind of value match any value of that kind ("month" ~ "October")."""
    if keyword in ("month", "months"):
        return any(w in _MONTHS for w in words)
    if keyword in ("year", "years"):
        return any(_YEAR.match(w) for w in words)
    if keyword in ("date", "dated", "when"):
        return any(w in _MONTHS for w in words) and any(_YEAR.match(w) for w in words)
    return False


def _matches(keyword: str, words: Sequence[str]) -> bool:
    from rapidfuzz import fuzz, process

    if not words:
        return False
    if _concept(keyword, words):
        return True
    if len(keyword) <= 3 or any(ch.isdigit() for ch in keyword):
        # short words, numbers and codes must match exactly: INV-00377 is not INV-00037, nor keyword1 keyword1777
        return keyword in words
    best = process.extractOne(keyword, words, scorer=fuzz.ratio)
    return best is not None and best[1] >= WORD_MATCH


def _weights(keywords: list[str], ocrs: Sequence[OcrResult]) -> dict[str, float]:
    """Inverse document frequency over the pages (a word on every page, like a running header, counts little).

    Words found on no page weigh as little as the commonest word found (see below).
    """
    n = len(ocrs)
    page_words = [[w for line in ocr.lines for w in _line_words(line)] for ocr in ocrs]
    weights = {}
    absent = []
    for k in keywords:
        df = sum(1 for words in page_words if _matches(k, words))
        if df == 0 and n > 1 and not any(ch.isdigit() for ch in k):
            absent.append(k)
            continue
        idf = math.log(1.0 + (n + 1) / (df + 0.5)) if n > 1 else 1.0
        weights[k] = idf * (0.5 if k in GENERIC_WORDS else 1.0)
    # A word on no page ("published") cannot tell the pages apart; at full (highest) idf it kept the page that
    # does answer below the threshold. It counts as much as the commonest word found, and numbers and codes
    # keep their full weight (they are required, see page_evidence).
    floor = min(weights.values()) if weights else 1.0
    weights.update({k: floor for k in absent})
    return weights


def _neighbourhood(lines: Sequence[OcrLine], index: int) -> set[int]:
    """The line itself, the lines sharing its visual row, and the nearest line above and below."""
    me = lines[index].box
    out = {index}
    above = below = None
    for j, other in enumerate(lines):
        b = other.box
        overlap = min(me.y1, b.y1) - max(me.y0, b.y0)
        if overlap > 0.5 * min(me.height, b.height):
            out.add(j)
        elif b.center[1] < me.center[1] and (above is None or b.center[1] > lines[above].box.center[1]):
            if min(me.x1, b.x1) - max(me.x0, b.x0) > 0:
                above = j
        elif b.center[1] > me.center[1] and (below is None or b.center[1] < lines[below].box.center[1]):
            if min(me.x1, b.x1) - max(me.x0, b.x0) > 0:
                below = j
    out.update(j for j in (above, below) if j is not None)
    return out


def page_evidence(
    ocr: OcrResult, question: str, weights: dict[str, float] | None = None, *, threshold: float = DEFAULT_THRESHOLD
) -> tuple[list[EvidenceItem], float]:
    """Evidence items on one page's OCR and the page's relevance (best line score in [0, 1]).

    A line's score is the weight of the question words it contains (fuzzy) over the total weight; lines are
    matched together with their row neighbours, so a label and its value on the same row share one score.
    When the question holds numbers or codes, a page that shows none of them has no evidence.
    """
    keywords = list(weights) if weights is not None else _keywords(question)
    weights = weights if weights is not None else {k: 1.0 for k in keywords}
    total = sum(weights.values())
    lines = list(ocr.lines)
    if not total or not lines:
        return [], 0.0
    words = [_line_words(l) for l in lines]
    # A question that names something specific by number or code ("contract 5521", "AC-55213", "2023") is
    # about pages that show it: a page with the same field for another contract is not evidence.
    required = [k for k in weights if any(ch.isdigit() for ch in k)]
    if required:
        page_words = [w for ws in words for w in ws]
        if not any(_matches(k, page_words) for k in required):
            return [], 0.0
    hoods = [_neighbourhood(lines, i) for i in range(len(lines))]
    scores = []
    for i in range(len(lines)):
        row = [w for j in hoods[i] if _same_row(lines[i], lines[j]) for w in words[j]]
        scores.append(sum(wt for k, wt in weights.items() if _matches(k, row)) / total)
    best = max(scores)
    hits = [i for i, s in enumerate(scores) if s >= threshold and s >= 0.75 * best]
    if not hits:
        return [], best
    chosen: set[int] = set()
    for i in hits:
        chosen |= hoods[i]
    # Group the chosen lines into runs of consecutive reading order; each run is one evidence item.
    items = []
    run: list[int] = []
    ordered: list[int | None] = [*sorted(chosen), None]
    for nxt in ordered:
        if nxt is not None and (not run or nxt == run[-1] + 1):
            run.append(nxt)
            continue
        if run:
            box = lines[run[0]].box
            for j in run[1:]:
                box = box.union(lines[j].box)
            items.append(EvidenceItem("\n".join(lines[j].text for j in run), box, max(scores[j] for j in run)))
        run = [nxt] if nxt is not None else []
    return items, best


def _same_row(a: OcrLine, b: OcrLine) -> bool:
    overlap = min(a.box.y1, b.box.y1) - max(a.box.y0, b.box.y0)
    return overlap > 0.5 * min(a.box.height, b.box.height)


def text_layer(path: str | os.PathLike | bytes, pages: Sequence[Page] | None, numbers: Sequence[int], *,
               password: str | None = None) -> list[OcrResult | None]:
    """The PDF text layer of pages ``numbers`` (1-based) as OCR-shaped results, one line per text run.

    ``None`` for a page whose layer holds fewer than :data:`MIN_TEXT_CHARS` characters (a scan): OCR it.
    ``path``: the PDF, or its bytes. ``pages``: the rendered pages, whose hashes the results carry (None: no
    page is rendered and the results name no page; locating pages needs their text, not their pixels).
    """
    with PDFIUM_LOCK:
        return _text_layer(path, pages, numbers, password)


def _text_layer(path: str | os.PathLike | bytes, pages: Sequence[Page] | None, numbers: Sequence[int],
                password: str | None) -> list[OcrResult | None]:
    pdf = open_pdf(path, password=password)
    out: list[OcrResult | None] = []
    try:
        for i, number in enumerate(numbers):
            t0 = time.perf_counter()
            pdf_page = pdf[number - 1]
            textpage = pdf_page.get_textpage()
            try:
                width, height = pdf_page.get_size()
                lines = _layer_lines(textpage, width, height)
            finally:
                textpage.close()
                pdf_page.close()
            chars = sum(len("".join(line.text.split())) for line in lines)
            seconds = time.perf_counter() - t0
            page_hash = pages[i].hash if pages is not None else ""
            out.append(OcrResult(tuple(lines), "pdf-text", page_hash, seconds=seconds) if chars >= MIN_TEXT_CHARS else None)
    finally:
        pdf.close()
    return out


def _layer_lines(textpage: Any, width: float, height: float) -> list[OcrLine]:
    """Lines of a pdfium text page (split at its line breaks), each boxed by the union of its characters."""
    text = textpage.get_text_range()
    lines = []
    start = 0
    for part in re.split(r"(\r\n|\n|\r)", text) + [""]:
        if part in ("\r\n", "\n", "\r", ""):
            start += len(part)
            continue
        end = start + len(part)
        boxes = [textpage.get_charbox(i) for i in range(start, min(end, textpage.count_chars()))]
        boxes = [b for b in boxes if b[2] > b[0] and b[3] > b[1]]
        words = " ".join(part.split())
        if words and boxes:
            left, right = min(b[0] for b in boxes), max(b[2] for b in boxes)
            bottom, top = min(b[1] for b in boxes), max(b[3] for b in boxes)
            # PDF space has its origin at the bottom left.
            lines.append(OcrLine(words, Box.clamped(left / width, 1 - top / height, right / width, 1 - bottom / height), 1.0))
        start = end
    return lines


def _dense_evidence(
    model: Any, question: str, ocrs: Sequence[OcrResult], weights: dict[str, float]
) -> list[tuple[EvidenceItem, float] | None]:
    """Per page: the best line of the passage closest to the question, when that passage is close enough."""
    from .passages import encode, split_passages

    passages: list[str] = []
    owner: list[int] = []
    for i, ocr in enumerate(ocrs):
        parts = split_passages(ocr.text)
        passages += parts
        owner += [i] * len(parts)
    if not passages:
        return [None] * len(ocrs)
    vectors = encode(model, [question] + passages)
    sims = vectors[1:] @ vectors[0]
    best = np.full(len(ocrs), -1.0)
    best_passage: dict[int, str] = {}
    for j, (i, sim) in enumerate(zip(owner, sims)):
        if sim > best[i]:
            best[i], best_passage[i] = float(sim), passages[j]
    top = float(best.max())
    total = sum(weights.values()) or 1.0
    out: list[tuple[EvidenceItem, float] | None] = []
    for i, ocr in enumerate(ocrs):
        if best[i] < DENSE_MIN or best[i] < top - DENSE_MARGIN or not ocr.lines:
            out.append(None)
            continue
        words = set(best_passage[i].split())
        inside = [line for line in ocr.lines if set(line.text.split()) <= words] or list(ocr.lines)
        line = max(inside, key=lambda ln: sum(wt for k, wt in weights.items() if _matches(k, _line_words(ln))) / total)
        out.append((EvidenceItem(line.text, line.box, float(best[i])), float(best[i])))
    return out


def score_pages(
    ocrs: Sequence[OcrResult], question: str, *, threshold: float = DEFAULT_THRESHOLD, dense: Any = None
) -> list[tuple[list[EvidenceItem], float]]:
    """Per page of a document (its text, as OCR-shaped results): the evidence items for ``question`` and the
    page's relevance in [0, 1], with the words weighted across these pages (see the module docstring)."""
    weights = _weights(_keywords(question), ocrs)
    dense_items = _dense_evidence(dense, question, ocrs, weights) if dense is not None else [None] * len(ocrs)
    out = []
    for ocr, extra in zip(ocrs, dense_items):
        items, relevance = page_evidence(ocr, question, weights, threshold=threshold)
        if not items and extra is not None:
            items, relevance = [extra[0]], max(relevance, extra[1])
        out.append((items, relevance))
    return out


def collect_evidence(
    pages: Sequence[Page],
    question: str,
    *,
    engine: Any = None,
    threshold: float = DEFAULT_THRESHOLD,
    numbers: Sequence[int] | None = None,
    texts: Sequence[OcrResult | None] | None = None,
    dense: Any = None,
    on_page: Callable[[int], None] | None = None,
) -> list[PageEvidence]:
    """Find the evidence for ``question`` on every page.

    ``texts``: the pages' text layers from :func:`text_layer`; a page with ``None`` (or all pages, without
    ``texts``) is OCR'd (cached by page hash), the engine loaded only then. ``numbers``: the 1-based page
    numbers to report (default 1..len(pages)). ``dense``: a sentence model for fused relevance (see the
    module docstring); lexical only without it. ``on_page(number)``: called as each page's text is ready (a
    progress display).
    """
    numbers = list(numbers) if numbers is not None else list(range(1, len(pages) + 1))
    given = list(texts) if texts is not None else [None] * len(pages)
    ocrs: list[OcrResult] = []
    for number, page, known in zip(numbers, pages, given):
        if known is None:
            engine = engine or get_engine()
            known = engine.read(page)
        ocrs.append(known)
        if on_page is not None:
            on_page(number)
    scored = score_pages(ocrs, question, threshold=threshold, dense=dense)
    return [PageEvidence(number, page, ocr, items, relevance)
            for number, page, ocr, (items, relevance) in zip(numbers, pages, ocrs, scored)]


def _crop(page: Page, box: Box, pad: float = 0.01) -> Page:
    return page.crop(box.expand(pad, pad * page.width / page.height))


def context(evidence: Sequence[PageEvidence], mode: str) -> tuple[list[Page], str, ContextCost]:
    """The images and text a brain sees in ``mode``, and their estimated input tokens."""
    if mode not in MODES:
        raise ConfigError(f"context mode {mode!r} is not one of {', '.join(MODES)}")
    if mode == "evidence+ocr":
        images = [_crop(d.page, item.box) for d in evidence for item in d.items]
        text = "\n\n".join(
            f"[page {d.number}, bbox {list(item.box.to_1000())}]\n{item.evidence}" for d in evidence for item in d.items
        )
    else:
        images = [d.page for d in evidence]
        text = "\n\n".join(f"[page {d.number}]\n{d.ocr.text}" for d in evidence) if mode == "page+ocr" else ""
    cost = ContextCost(mode, len(images), sum(image_tokens(p.width, p.height, MAX_SIDE) for p in images), text_tokens(text))
    return images, text, cost


def stack(images: Sequence[Page], gap: int = 16) -> Page:
    """Images one below the other on white (left-aligned), as one page for brains that read a single image."""
    if not images:
        raise ConfigError("no images to stack: the context is empty (no page had evidence)")
    width = max(p.width for p in images)
    height = sum(p.height for p in images) + gap * (len(images) - 1)
    canvas = np.full((height, width, 3), 255, np.uint8)
    y = 0
    for p in images:
        canvas[y : y + p.height, : p.width] = p.pixels
        y += p.height + gap
    return Page.from_array(canvas, source="context:" + ",".join(p.hash[:8] for p in images))


@dataclass(frozen=True)
class TextEvidence:
    """OCR text handed to a brain as evidence (the text part of a context), read on the page ``page_hash``."""

    text: str
    page_hash: str = ""
    box: Box = Box.FULL

    def summary(self) -> str:
        return self.text


def answer(evidence: Sequence[PageEvidence], question: str, brain: Brain, *, mode: str = "evidence+ocr", task: str = "doc") -> EvidenceAnswer:
    """Ask ``brain`` with the context of ``mode``. Brains read one image, so the context images are stacked
    vertically into one page; the text part goes into ``state.evidence`` and, as an "ocr" inspection step,
    into ``state.history`` (where model brains read earlier findings). When no page has evidence, the
    ``evidence+ocr`` answer is :data:`NO_RELEVANT_PAGE` with confidence 0 and no brain is asked: answering
    from whatever page scored best gave confident wrong answers (a year read off page 1 for a question about
    a month and a year)."""
    start = time.perf_counter()
    used = [d for d in evidence if d.relevant] if mode == "evidence+ocr" else list(evidence)
    if mode == "evidence+ocr" and not used:
        cost = ContextCost(mode, 0, 0, 0)
        none = Answer(NO_RELEVANT_PAGE, 0.0, f"no page of {len(evidence)} had evidence for the question")
        return EvidenceAnswer(none, mode, cost, (), time.perf_counter() - start)
    images, text, cost = context(used, mode)
    page = stack(images)
    state = State(question=question, task=task, page=page, original=page, available_tools=[],
                  evidence=[TextEvidence(text, page.hash)] if text else [])
    if text:
        # Model brains read earlier inspection steps from the history: that is how the OCR text reaches them.
        state.history.append(InspectStep(Phase.INSPECT, Action.INSPECTED, "ocr", f"{mode} context", page.hash, evidence=text))
    result = brain.answer(state)
    return EvidenceAnswer(result, mode, cost, tuple(d.number for d in used), time.perf_counter() - start)


def parse_pages(spec: str | None, count: int) -> list[int]:
    """1-based page numbers from ``"1-20"``, ``"3"``, ``"1,4,7-9"`` (None: all). A page outside the document,
    even in part of a range, is refused naming the pages it has."""
    if not spec:
        return list(range(1, count + 1))
    numbers: list[int] = []
    chosen: set[int] = set()
    valid = f"pages 1-{count}" if count > 1 else "page 1" if count == 1 else "no page"
    for part in spec.split(","):
        part = part.strip()
        try:
            if "-" in part:
                a, b = (int(x) for x in part.split("-", 1))
            else:
                a = b = int(part)
        except ValueError:
            raise ConfigError(f"--pages {spec!r}: {part!r} is not a page number or range like 1-20") from None
        if a < 1 or b < a:
            raise ConfigError(f"--pages {spec!r}: {part!r} must be 1-based and ascending")
        if b > count:  # checked before the range is walked: "1-999999999999" is refused at once
            low = max(a, count + 1)
            outside = f"page {b} is" if low == b else f"pages {low}-{b} are"
            raise ConfigError(f"--pages {spec!r}: {outside} outside this {count}-page document "
                              f"({valid}; pages count from 1)")
        for n in range(a, b + 1):
            if n not in chosen:
                chosen.add(n)
                numbers.append(n)
    if not numbers:
        raise ConfigError(f"--pages {spec!r} selects no page of a {count}-page document")
    return numbers
