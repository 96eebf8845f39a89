"""Evidence for questions over many pages: which pages matter, which lines on them, and what that saves.

For each page, :func:`page_evidence` returns AgenticOCR's evidence list ``[{evidence, bbox}]`` (``bbox`` in
0-1000 page coordinates), or ``[]`` when the page is irrelevant. Offline, relevance is lexical: the question's
content words are fuzzy-matched (rapidfuzz) to the page's OCR lines, each word weighted by how rare it is
across the document's pages; a line is evidence when its matched weight reaches ``threshold``, and the evidence
is that line plus its neighbourhood (the lines on the same visual row and the line just above and below).

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
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..brains.base import Answer, Brain, State
from ..brains.offline import GENERIC_WORDS, content_words
from ..brains.tokens import image_tokens, text_tokens
from ..errors import ConfigError
from ..ocr import get_engine
from ..ocr.base import OcrLine, OcrResult
from ..page import Box, Page
from ..trace import Action, Phase, Step

MODES = ("page", "page+ocr", "evidence+ocr")
#: Fraction of the question's keyword weight a line must match to count as evidence.
DEFAULT_THRESHOLD = 0.5
#: rapidfuzz ratio at which an OCR word counts as the question word (tolerates one or two OCR errors).
WORD_MATCH = 80.0
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


def _matches(keyword: str, words: Sequence[str]) -> bool:
    from rapidfuzz import fuzz, process

    if not words:
        return False
    if keyword.isdigit() or len(keyword) <= 3:  # short words and numbers must match exactly
        return keyword in words
    best = process.extractOne(keyword, words, scorer=fuzz.ratio)
    return best is not None and best[1] >= WORD_MATCH


def _weights(keywords: list[str], ocrs: Sequence[OcrResult]) -> dict[str, float]:
    """Inverse document frequency over the pages (a word on every page, like a running header, counts little)."""
    n = len(ocrs)
    page_words = [[w for line in ocr.lines for w in _line_words(line)] for ocr in ocrs]
    weights = {}
    for k in keywords:
        df = sum(1 for words in page_words if _matches(k, words))
        idf = math.log(1.0 + (n + 1) / (df + 0.5)) if n > 1 else 1.0
        weights[k] = idf * (0.5 if k in GENERIC_WORDS else 1.0)
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


def collect_evidence(
    pages: Sequence[Page],
    question: str,
    *,
    engine: Any = None,
    threshold: float = DEFAULT_THRESHOLD,
    numbers: Sequence[int] | None = None,
) -> list[PageEvidence]:
    """OCR every page (cached by page hash) and find its evidence for ``question``.

    ``numbers``: the 1-based page numbers to report (default 1..len(pages)).
    """
    if engine is None:
        engine = get_engine()
    numbers = list(numbers) if numbers is not None else list(range(1, len(pages) + 1))
    ocrs = [engine.read(p) for p in pages]
    weights = _weights(_keywords(question), ocrs)
    out = []
    for number, page, ocr in zip(numbers, pages, ocrs):
        items, relevance = page_evidence(ocr, question, weights, threshold=threshold)
        out.append(PageEvidence(number, page, ocr, items, relevance))
    return out


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
    """OCR text handed to a brain as evidence (the text part of a context)."""

    text: str

    def summary(self) -> str:
        return self.text


def answer(evidence: Sequence[PageEvidence], question: str, brain: Brain, *, mode: str = "evidence+ocr", task: str = "doc") -> EvidenceAnswer:
    """Ask ``brain`` with the context of ``mode``. Brains read one image, so the context images are stacked
    vertically into one page; the text part goes into ``state.evidence`` and, as an "ocr" inspection step,
    into ``state.history`` (where model brains read earlier findings). When no page has evidence, the
    ``evidence+ocr`` context falls back to the page with the best relevance (a brain still gets to look)."""
    start = time.perf_counter()
    used = [d for d in evidence if d.relevant] if mode == "evidence+ocr" else list(evidence)
    if mode == "evidence+ocr" and not used and evidence:
        best = max(evidence, key=lambda d: d.relevance)
        used = [PageEvidence(best.number, best.page, best.ocr, [EvidenceItem(best.ocr.text, Box.FULL, best.relevance)], best.relevance)]
    images, text, cost = context(used, mode)
    page = stack(images)
    state = State(question=question, task=task, page=page, original=page, available_tools=[],
                  evidence=[TextEvidence(text)] if text else [])
    if text:
        # Model brains read earlier inspection steps from the history: that is how the OCR text reaches them.
        state.history.append(Step(Phase.INSPECT, Action.INSPECTED, "ocr", f"{mode} context", page.hash, data={"evidence": text}))
    result = brain.answer(state)
    return EvidenceAnswer(result, mode, cost, tuple(d.number for d in used), time.perf_counter() - start)


def parse_pages(spec: str | None, count: int) -> list[int]:
    """1-based page numbers from ``"1-20"``, ``"3"``, ``"1,4,7-9"`` (None: all), clipped to the document."""
    if not spec:
        return list(range(1, count + 1))
    numbers: list[int] = []
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
        # Clipped to the document first: "1-999999999999" must not walk a trillion numbers.
        numbers += [n for n in range(a, min(b, count) + 1) if n not in numbers]
    if not numbers:
        raise ConfigError(f"--pages {spec!r} selects no page of a {count}-page document")
    return numbers
