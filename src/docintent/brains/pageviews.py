"""What the model brain shows a model of a page: the page as an image (longest side and pixel count capped, within
the sample's image budget), or, for a model that reads no images, its OCR lines with their boxes and the damage
measured on its pixels (:mod:`docintent.brains.textcontext`); and the crops and thumbnail a region review shows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import cv2
import numpy as np

from ..io.encode import resize_longest
from ..page import Box, Page
from ..perception.degradations import get_degradation
from ..perception.service import Perception
from ..tools import tools_for
from .chat import ChatModel
from .modeloptions import ModelBrainOptions
from .textcontext import damage_note, ocr_transcript
from .tokens import image_tokens

#: Smallest image a budget may shrink an image to, in tokens (8x8 blocks of 28 px).
MIN_IMAGE_TOKENS = 64


class PageViews:
    """Pages as ``endpoint``'s model is shown them under ``options``, no side longer than ``max_side``: images
    while ``sees_images()`` says it reads them (asked on the first page shown), else OCR transcripts, kept per
    page, question and setting so every phase that shows a page shows the same text."""

    def __init__(
        self, endpoint: ChatModel, options: ModelBrainOptions, max_side: int, sees_images: Callable[[], bool]
    ) -> None:
        self.endpoint = endpoint
        self.options = options
        self.max_side = max_side
        self.sees_images = sees_images
        self._transcripts: dict[tuple[str, str, int, bool], str] = {}

    def image_part(self, page: Page, max_side: int | None = None, question: str | None = None) -> dict[str, Any]:
        """The page as an ``image_url`` content part (longest side and pixel count capped; cached by hash), or,
        for a model that reads no images, as a text part: its OCR lines with their boxes (:meth:`transcript`),
        the lines holding ``question``'s words first."""
        if not self.sees_images():
            return {"type": "text", "text": self.transcript(page, question)}
        opts = self.options
        side = min(max_side or self.max_side, self.max_side)
        return self.endpoint.image_part(
            page, side, max_pixels=opts.max_pixels, fmt=opts.image_format, quality=opts.jpeg_quality
        )

    def transcript(self, page: Page, question: str | None = None) -> str:
        """What a text-only model is shown of ``page``: :func:`ocr_transcript` within ``text_tokens`` (kept for the
        page state and question, so every phase that shows the page shows the same text)."""
        opts = self.options
        key = (page.hash, question or "", opts.text_tokens, opts.text_damage)
        known = self._transcripts.get(key)
        if known is None:
            from ..ocr import get_engine

            known = ocr_transcript(get_engine().read(page), question or "", opts.text_tokens)
            if opts.text_damage:
                known = f"{known}\n{measured_damage(page)}"
            if len(self._transcripts) >= 64:
                self._transcripts.pop(next(iter(self._transcripts)))
            self._transcripts[key] = known
        return known

    def image_tokens(self, page: Page, max_side: int | None = None) -> int:
        """Tokens the page costs as sent (after ``max_side`` and ``max_pixels``), by the Qwen-VL rule."""
        w, h = sent_size(page, min(max_side or self.max_side, self.max_side), self.options.max_pixels)
        return image_tokens(w, h, max_side=max(w, h))

    def within_budget(self, page: Page, side: int, spent: int) -> int:
        """The longest side ``page`` may be sent at when ``spent`` of the sample's ``image_budget`` is used: at
        most half of what is left (never below :data:`MIN_IMAGE_TOKENS`), so later images shrink first and the
        sample never exceeds the budget."""
        allowance = max(MIN_IMAGE_TOKENS, (self.options.image_budget - spent) // 2)
        side = min(side, max(page.width, page.height))
        while side > 28 and self.image_tokens(page, side) > allowance:
            side = max(28, int(side * min(0.95, (allowance / self.image_tokens(page, side)) ** 0.5)))
        return side


def measured_damage(page: Page) -> str:
    """The damage measured on ``page``'s pixels, as a text-only model is told it (:func:`damage_note`): the
    rotation that makes it upright, then every family past its threshold with the tools that restore it."""
    perception = Perception()
    return damage_note(
        perception.upright_fix(page),
        perception.above(page),
        perception.threshold,
        lambda family: get_degradation(family).plain or family,
        tools_for,
    )


def crop_region(page: Page, region: Box, margin: float = 0.02) -> Page:
    """The region with a margin (``margin`` of the page, at least a tenth of the region's size each side)."""
    dx = max(margin, 0.1 * region.width)
    dy = max(margin, 0.1 * region.height)
    box = Box.clamped(region.x0 - dx, region.y0 - dy, region.x1 + dx, region.y1 + dy)
    x0, y0, x1, y1 = box.to_pixels(page.width, page.height)
    return page.derive(np.ascontiguousarray(page.pixels[y0:y1, x0:x1]), f"crop({x0},{y0},{x1},{y1})")


def thumbnail(page: Page, region: Box, side: int) -> Page:
    """The page scaled to ``side`` with ``region`` outlined in red (what the crops show, in context)."""
    small = resize_longest(page, side)
    pixels = small.pixels.copy()
    x0, y0, x1, y1 = region.to_pixels(small.width, small.height)
    cv2.rectangle(pixels, (x0, y0), (max(x0, x1 - 1), max(y0, y1 - 1)), (220, 0, 0), max(1, side // 192))
    return small.derive(pixels, "outline(region)")


def sent_size(page: Page, side: int, max_pixels: int | None) -> tuple[int, int]:
    """(width, height) of ``page`` as :meth:`PageViews.image_part` sends it."""
    scale = min(1.0, side / max(page.width, page.height))
    w, h = max(1, round(page.width * scale)), max(1, round(page.height * scale))
    if max_pixels and w * h > max_pixels:
        shrink = (max_pixels / (w * h)) ** 0.5
        w, h = max(1, int(w * shrink)), max(1, int(h * shrink))
    return w, h


__all__ = ["MIN_IMAGE_TOKENS", "PageViews", "crop_region", "measured_damage", "sent_size", "thumbnail"]
