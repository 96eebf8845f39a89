"""Where an answer stands on a page: the OCR words or line that read as the answer, as a box to draw."""

from __future__ import annotations

import re
from typing import Any

from ..page import Box, Page

_KEEP = re.compile(r"[^0-9a-z]+")


def _norm(text: str) -> str:
    return _KEEP.sub("", text.lower())


def locate_answer(page: Page, answer: str, *, engine: Any | None = None) -> dict[str, Any] | None:
    """The box of the text that reads as ``answer`` on ``page`` (OCR of the page, cached by hash).

    Returns ``{"box": [x0, y0, x1, y1] (fractions of the page), "text": the OCR text, "score": 0..100}``, or
    None when the answer is empty or nothing on the page reads like it. Words are preferred to whole lines, so
    the box surrounds the value itself rather than its label.
    """
    from rapidfuzz import fuzz

    from ..ocr import get_engine

    target = _norm(answer or "")
    if not target:
        return None
    result = (engine or get_engine()).read(page)
    best: tuple[float, Box, str] | None = None
    for line in result.lines:
        line_norm = _norm(line.text)
        if not line_norm:
            continue
        words = list(line.words)
        # Consecutive word spans that together read as the answer (a value may be split into several words).
        for i in range(len(words)):
            for j in range(i, min(len(words), i + 6)):
                span = words[i : j + 1]
                text = " ".join(w.text for w in span)
                score = fuzz.ratio(target, _norm(text))
                if best is None or score > best[0]:
                    box = span[0].box
                    for w in span[1:]:
                        box = box.union(w.box)
                    best = (score, box, text)
        if target in line_norm or not words:
            score = fuzz.partial_ratio(target, line_norm) - (0 if words else 5)
            if best is None or score > best[0]:
                best = (score, line.box, line.text)
    if best is None or best[0] < 80:
        return None
    score, box, text = best
    return {"box": [round(v, 4) for v in box.as_tuple()], "text": text, "score": round(float(score), 1)}
