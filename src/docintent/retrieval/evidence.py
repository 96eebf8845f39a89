"""Evidence for questions over many pages: which pages matter, which lines on them, and what that saves.

For each page, :func:`page_evidence` returns AgenticOCR's evidence list ``[{evidence, bbox}]`` (``bbox`` in
0-1000 page coordinates), or ``[]`` when the page is irrelevant. The page text, its lexical relevance and the
page selections are the page locator's (:mod:`docintent.locator`, which :class:`~docintent.document.Document`
also ranks its pages with; its names are re-exported here): the PDF text layer when the page has one
(:func:`text_layer`), OCR otherwise; the question's words fuzzy-matched to the page's lines, weighted by how
rare each is across the document's pages.

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

import time
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import numpy as np

from ..brains.base import Answer, Brain, State
from ..brains.tokens import image_tokens, text_tokens
from ..errors import ConfigError
from ..locator import (
    DEFAULT_THRESHOLD,
    MIN_TEXT_CHARS,
    WORD_MATCH,
    EvidenceItem,
    line_words,
    matches,
    page_evidence,
    parse_pages,
    question_keywords,
    rank_pages,
    text_layer,
    word_weights,
)
from ..ocr import get_engine
from ..ocr.base import OcrResult
from ..page import Box, Page
from ..trace import Action, InspectStep, Phase

MODES = ("page", "page+ocr", "evidence+ocr")
#: Fused relevance: the least cosine of a page's best passage, and how far below the document's best it may be.
DENSE_MIN = 0.45
DENSE_MARGIN = 0.05
#: What the answer step says when no page has evidence.
NO_RELEVANT_PAGE = "no relevant page"
#: Longest image side before token counting (Qwen-VL's cap as used in the AgenticOCR comparison).
MAX_SIDE = 2048


@dataclass
class PageEvidence:
    """A page, its OCR and its evidence for the question (empty ``items``: the page is irrelevant)."""

    number: int  # 1-based page number in the document
    page: Page
    ocr: OcrResult
    _: KW_ONLY
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
    _: KW_ONLY
    pages_used: tuple[int, ...]
    seconds: float


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
        line = max(inside, key=lambda ln: sum(wt for k, wt in weights.items() if matches(k, line_words(ln))) / total)
        out.append((EvidenceItem(line.text, line.box, float(best[i])), float(best[i])))
    return out


def score_pages(
    ocrs: Sequence[OcrResult], question: str, *, threshold: float = DEFAULT_THRESHOLD, dense: Any = None
) -> list[tuple[list[EvidenceItem], float]]:
    """Per page of a document (its text, as OCR-shaped results): the evidence items for ``question`` and the
    page's relevance in [0, 1]: the page locator's lexical ranking (:func:`docintent.locator.rank_pages`),
    fused with dense relevance when ``dense`` is a sentence model (see the module docstring)."""
    weights = word_weights(question_keywords(question), ocrs)
    lexical = rank_pages(ocrs, question, threshold=threshold, weights=weights)
    if dense is None:
        return lexical
    out = []
    for (items, relevance), extra in zip(lexical, _dense_evidence(dense, question, ocrs, weights)):
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
    return [
        PageEvidence(number, page, ocr, items=items, relevance=relevance)
        for number, page, ocr, (items, relevance) in zip(numbers, pages, ocrs, scored)
    ]


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
    cost = ContextCost(
        mode, len(images), sum(image_tokens(p.width, p.height, MAX_SIDE) for p in images), text_tokens(text)
    )
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


def answer(
    evidence: Sequence[PageEvidence], question: str, brain: Brain, *, mode: str = "evidence+ocr", task: str = "doc"
) -> EvidenceAnswer:
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
        return EvidenceAnswer(none, mode, cost, pages_used=(), seconds=time.perf_counter() - start)
    images, text, cost = context(used, mode)
    page = stack(images)
    state = State(
        question=question,
        task=task,
        page=page,
        original=page,
        available_tools=[],
        evidence=[TextEvidence(text, page.hash)] if text else [],
    )
    if text:
        # Model brains read earlier inspection steps from the history: that is how the OCR text reaches them.
        state.history.append(
            InspectStep(
                Phase.INSPECT, Action.INSPECTED, "ocr", reason=f"{mode} context", before=page.hash, evidence=text
            )
        )
    result = brain.answer(state)
    return EvidenceAnswer(
        result, mode, cost, pages_used=tuple(d.number for d in used), seconds=time.perf_counter() - start
    )


__all__ = [
    "DEFAULT_THRESHOLD",
    "DENSE_MARGIN",
    "DENSE_MIN",
    "MAX_SIDE",
    "MIN_TEXT_CHARS",
    "MODES",
    "NO_RELEVANT_PAGE",
    "WORD_MATCH",
    "ContextCost",
    "EvidenceAnswer",
    "EvidenceItem",
    "PageEvidence",
    "answer",
    "collect_evidence",
    "context",
    "page_evidence",
    "parse_pages",
    "score_pages",
    "stack",
    "text_layer",
]
