"""Pages for models that read no images: the OCR lines of a page as text (:mod:`docintent.brains.probes` finds
out whether a model reads images at all).

A text-only model (a small local model on llama.cpp, say) is shown each image as the lines an OCR engine read
from it, one per line as ``[x0,y0,x1,y1] text (c=0.93)``: the box in thousandths of the image's width and height
(the coordinates every tool's ``region`` argument takes) and the recognition confidence. The lines that hold the
question's words come first, each with the lines that follow it (where an answer usually stands after its
label), then every line in reading order until the token budget is spent.

>>> from docintent.ocr.base import OcrLine, OcrResult
>>> from docintent.page import Box
>>> ocr = OcrResult((OcrLine("INVOICE 2231", Box(0.1, 0.05, 0.5, 0.09), 0.98),
...                  OcrLine("Total due: $ 41.20", Box(0.1, 0.8, 0.6, 0.84), 0.61)), "test", "p")
>>> print(ocr_transcript(ocr, "What is the total due?", 200))
Lines holding the question's words:
[100,800,600,840] Total due: $ 41.20 (c=0.61)
All lines, in reading order:
[100,50,500,90] INVOICE 2231 (c=0.98)
[100,800,600,840] Total due: $ 41.20 (c=0.61)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from ..ocr.base import OcrResult
from ..reader import content_words
from .prompts import render

#: Characters per token of the budget: OCR lines with their boxes are digits and brackets, which tokenize densely
#: (Gemma 3: 2,058 prompt tokens reported for a request estimated at 964 by the 4-characters-per-token rule).
CHARS_PER_TOKEN = 2.5
#: How many lines after a line holding the question's words are shown with it.
FOLLOWING = 2


def _line(box: Any, text: str, confidence: float) -> str:
    x0, y0, x1, y1 = (round(v * 1000) for v in box.as_tuple())
    return f"[{x0},{y0},{x1},{y1}] {text} (c={confidence:.2f})"


def ocr_transcript(ocr: OcrResult, question: str, budget: int) -> str:
    """The OCR lines of a page as a text-only model is shown them, within ``budget`` tokens (module docstring)."""
    lines = [line for line in ocr.lines if line.text.strip()]
    if not lines:
        return "No text was read on this image (it may be blank, a picture, or too damaged to read)."
    rendered = [_line(line.box, line.text.strip(), line.confidence) for line in lines]
    wanted = set(content_words(question))
    scores = [len(wanted & set(content_words(line.text))) for line in lines]
    near: list[int] = []
    for i in sorted((i for i, s in enumerate(scores) if s), key=lambda i: (-scores[i], i)):
        for j in range(i, min(len(lines), i + FOLLOWING + 1)):
            if j not in near:
                near.append(j)
    out: list[str] = []
    left = int(budget * CHARS_PER_TOKEN)
    shown = 0

    def take(text: str) -> bool:
        nonlocal left
        if len(text) + 1 > left:
            return False
        out.append(text)
        left -= len(text) + 1
        return True

    if near and take("Lines holding the question's words:"):
        for j in near[: 3 * (FOLLOWING + 1)]:
            if not take(rendered[j]):
                break
    if take("All lines, in reading order:"):
        for text in rendered:
            if not take(text):
                break
            shown += 1
    if shown < len(rendered):
        out.append(f"({len(rendered) - shown} more lines not shown)")
    return "\n".join(out)


def damage_note(
    upright: str | None,
    found: Sequence[tuple[str, float]],
    threshold: Callable[[str], float],
    plain: Callable[[str], str],
    tools: Callable[[str], Sequence[str]],
) -> str:
    """What the pixels of an image say about its damage, for a model that cannot see them: ``upright`` is the
    rotation tool that makes the page upright (None: it is upright), ``found`` the ``(family, severity)`` pairs
    past their thresholds, most severe first; each is named in plain words with its severity, its threshold and
    the tools that restore it.

    >>> print(damage_note("rotate_180", [("blur", 0.62)], lambda f: 0.35, lambda f: "the text is blurred",
    ...                   lambda f: ["deblurring"]))
    Measured on this image: the page is not upright (rotate_180 makes it upright); the text is blurred (blur 0.62, \
above its threshold 0.35; restored by deblurring).
    >>> print(damage_note(None, [], lambda f: 0.5, str, lambda f: []))
    Measured on this image: upright, no damage past its threshold.
    """
    parts = []
    if upright:
        parts.append(f"the page is not upright ({upright} makes it upright)")
    for family, severity in found:
        names = ", ".join(tools(family))
        fix = f"; restored by {names}" if names else "; no tool restores it"
        parts.append(f"{plain(family)} ({family} {severity:.2f}, above its threshold {threshold(family):.2f}{fix})")
    if not parts:
        return "Measured on this image: upright, no damage past its threshold."
    return "Measured on this image: " + "; ".join(parts) + "."


def text_messages(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``messages`` as a text-only model's server takes them: every content a string (content parts joined; some
    chat formats drop list contents), the system text, with the note that images come as OCR text
    (``text_context`` prompt), at the head of the first user message (some formats drop system messages; none
    drops a user turn). A new list: the stored conversation is left as it is."""
    note = render("text_context").strip()
    system = "\n\n".join(content_text(m.get("content")) for m in messages if m.get("role") == "system")
    head = f"{system}\n\n{note}".strip()
    out: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") == "system":
            continue
        flat = {**message, "content": content_text(message.get("content"))}
        if head and flat.get("role") == "user":
            flat["content"] = f"{head}\n\n{flat['content']}".strip()
            head = ""
        out.append(flat)
    if head:
        out.insert(0, {"role": "user", "content": head})
    return out


def content_text(content: Any) -> str:
    """A message's content as text: a string as it is, the text parts of a list joined (images have no text)."""
    if isinstance(content, list):
        return "\n".join(str(p.get("text", "")) for p in content if isinstance(p, dict) and p.get("type") == "text")
    return "" if content is None else str(content)


__all__ = ["CHARS_PER_TOKEN", "content_text", "damage_note", "ocr_transcript", "text_messages"]
