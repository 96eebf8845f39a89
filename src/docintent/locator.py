"""The page locator: which pages of a document hold the evidence for a question, read from their text.

:meth:`docintent.document.Document.locate` ranks a document's pages with :func:`rank_pages`; the retrieval
package's evidence step (:mod:`docintent.retrieval.evidence`) builds on the same pieces and adds fused
(dense) relevance, contexts and answers. This module knows no retriever, index or model.

The page text comes from the PDF text layer when the page has one (:func:`text_layer`, ~1000 times faster than
OCR) and from OCR otherwise. Lexical relevance: the question's content words are fuzzy-matched (rapidfuzz) to
the page's lines, each word weighted by how rare it is across the document's pages; "month", "year" and "date"
also match a month name or a year, so "In which month and year ...?" finds "Issue 30, October 2019". A line is
evidence when its matched weight reaches ``threshold``, and the evidence is that line plus its neighbourhood
(the lines on the same visual row and the line just above and below).

>>> parse_pages("1-3,7", 10)
[1, 2, 3, 7]
"""

from __future__ import annotations

import math
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from .errors import ConfigError
from .io import PDFIUM_LOCK, open_pdf
from .ocr.base import OcrLine, OcrResult
from .page import Box, Page
from .reader import GENERIC_WORDS, content_words

#: Fraction of the question's keyword weight a line must match to count as evidence.
DEFAULT_THRESHOLD = 0.5
#: rapidfuzz ratio at which an OCR word counts as the question word (tolerates one or two OCR errors).
WORD_MATCH = 80.0
#: A text layer with fewer non-space characters than this counts as missing (the page is OCR'd).
MIN_TEXT_CHARS = 20


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


def question_keywords(question: str) -> list[str]:
    """The question's content words, lower-cased, each once, in order."""
    seen: list[str] = []
    for word in content_words(question):
        w = word.strip("?,;:!()\"'").lower()
        if w and w not in seen:
            seen.append(w)
    return seen


def line_words(line: OcrLine) -> list[str]:
    """The words of an OCR line, lower-cased, without surrounding punctuation."""
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


def matches(keyword: str, words: Sequence[str]) -> bool:
    """Whether question word ``keyword`` is among ``words``: a kind of value it names, exactly (short words,
    numbers, codes) or fuzzily (at least :data:`WORD_MATCH`)."""
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


def word_weights(keywords: list[str], ocrs: Sequence[OcrResult]) -> dict[str, float]:
    """Inverse document frequency over the pages (a word on every page, like a running header, counts little).

    Words found on no page weigh as little as the commonest word found (see below).
    """
    n = len(ocrs)
    page_words = [[w for line in ocr.lines for w in line_words(line)] for ocr in ocrs]
    weights = {}
    absent = []
    for k in keywords:
        df = sum(1 for words in page_words if matches(k, words))
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
    keywords = list(weights) if weights is not None else question_keywords(question)
    weights = weights if weights is not None else {k: 1.0 for k in keywords}
    total = sum(weights.values())
    lines = list(ocr.lines)
    if not total or not lines:
        return [], 0.0
    words = [line_words(l) for l in lines]
    # A question that names something specific by number or code ("contract 5521", "AC-55213", "2023") is
    # about pages that show it: a page with the same field for another contract is not evidence.
    required = [k for k in weights if any(ch.isdigit() for ch in k)]
    if required:
        page_words = [w for ws in words for w in ws]
        if not any(matches(k, page_words) for k in required):
            return [], 0.0
    hoods = [_neighbourhood(lines, i) for i in range(len(lines))]
    scores = []
    for i in range(len(lines)):
        row = [w for j in hoods[i] if _same_row(lines[i], lines[j]) for w in words[j]]
        scores.append(sum(wt for k, wt in weights.items() if matches(k, row)) / total)
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


def text_layer(
    path: str | os.PathLike | bytes,
    pages: Sequence[Page] | None,
    numbers: Sequence[int],
    *,
    password: str | None = None,
) -> list[OcrResult | None]:
    """The PDF text layer of pages ``numbers`` (1-based) as OCR-shaped results, one line per text run.

    ``None`` for a page whose layer holds fewer than :data:`MIN_TEXT_CHARS` characters (a scan): OCR it.
    ``path``: the PDF, or its bytes. ``pages``: the rendered pages, whose hashes the results carry (None: no
    page is rendered and the results name no page; locating pages needs their text, not their pixels).
    """
    with PDFIUM_LOCK:
        return _text_layer(path, pages, numbers, password)


def _text_layer(
    path: str | os.PathLike | bytes, pages: Sequence[Page] | None, numbers: Sequence[int], password: str | None
) -> list[OcrResult | None]:
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
            out.append(
                OcrResult(tuple(lines), "pdf-text", page_hash, seconds=seconds) if chars >= MIN_TEXT_CHARS else None
            )
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
            lines.append(
                OcrLine(words, Box.clamped(left / width, 1 - top / height, right / width, 1 - bottom / height), 1.0)
            )
        start = end
    return lines


def rank_pages(
    ocrs: Sequence[OcrResult],
    question: str,
    *,
    threshold: float = DEFAULT_THRESHOLD,
    weights: dict[str, float] | None = None,
) -> list[tuple[list[EvidenceItem], float]]:
    """Per page of a document (its text, as OCR-shaped results): the evidence items for ``question`` and the
    page's relevance in [0, 1], with the words weighted across these pages (lexical relevance, see above;
    ``weights``: those weights when already computed)."""
    if weights is None:
        weights = word_weights(question_keywords(question), ocrs)
    return [page_evidence(ocr, question, weights, threshold=threshold) for ocr in ocrs]


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
            raise ConfigError(
                f"--pages {spec!r}: {outside} outside this {count}-page document ({valid}; pages count from 1)"
            )
        for n in range(a, b + 1):
            if n not in chosen:
                chosen.add(n)
                numbers.append(n)
    if not numbers:
        raise ConfigError(f"--pages {spec!r} selects no page of a {count}-page document")
    return numbers


__all__ = [
    "DEFAULT_THRESHOLD",
    "MIN_TEXT_CHARS",
    "WORD_MATCH",
    "EvidenceItem",
    "line_words",
    "matches",
    "page_evidence",
    "parse_pages",
    "question_keywords",
    "rank_pages",
    "text_layer",
    "word_weights",
]
