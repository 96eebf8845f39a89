"""Shadow and uneven-light removal by dividing each colour channel by its estimated paper illumination."""

from __future__ import annotations

import cv2
import numpy as np

from ..page import Page
from .base import Tool
from .registry import register

#: Pages smaller than this (either side, in pixels) carry too little paper to estimate light from.
MIN_SIDE = 16
#: Longest side (px) the paper's light is estimated at; the division itself is one pass over the page.
WORK_SIDE = 384


def _odd(n: float) -> int:
    return max(3, int(n) | 1)


def paper_background(
    pixels: np.ndarray,
    work_side: int = WORK_SIDE,
    text_kernel: float = 0.035,
    chroma_ratio: float = 0.3,
    dark_ratio: float | None = None,
) -> np.ndarray:
    """Estimate the paper's illumination, per channel, as a uint8 HxWx3 image in [1, 255].

    At ``work_side`` px (longest side) each channel is morphologically closed with a kernel of
    ``text_kernel`` times that side, which replaces dark ink by the surrounding paper yet keeps the edges of
    large light changes in place, then median-filtered to drop specks. Large coloured areas (bars of a
    chart, photos, a wooden table) survive the closing and would be divided away, so they are masked out and
    the background there is filled in from nearby paper by normalised convolution. An area counts as
    coloured when its chroma, after white-balancing by the page's typical paper colour, exceeds
    ``chroma_ratio`` of its brightness; with ``dark_ratio`` set, areas darker than that fraction of the
    brightest paper nearby are masked too (right for stains and casts, wrong for shadows, whose paper is
    legitimately dark).
    """
    h, w = pixels.shape[:2]
    scale = min(1.0, work_side / max(h, w))
    sw, sh = max(1, round(w * scale)), max(1, round(h * scale))
    small = cv2.resize(pixels, (sw, sh), interpolation=cv2.INTER_AREA).astype(np.float32)
    k = _odd(text_kernel * max(sw, sh))
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))
    # A closing (not a plain dilation) removes ink yet keeps a shadow's edge where it is.
    bg = cv2.morphologyEx(small, cv2.MORPH_CLOSE, kernel)
    bg = cv2.medianBlur(bg.astype(np.uint8), min(_odd(k / 2), 5)).astype(np.float32)
    # Typical paper colour: the median colour of the brighter half of the background. Chroma is judged
    # relative to it, so a page under yellow light is still recognised as paper.
    lum = bg.max(axis=2)
    bright = lum >= np.median(lum)
    paper_colour = np.maximum(np.median(bg[bright], axis=0), 1.0)
    balanced = bg * (paper_colour.max() / paper_colour)
    blum = balanced.max(axis=2)
    chroma = blum - balanced.min(axis=2)
    # Brightness alone cannot tell paper from a grey bar (paper deep in a shadow is as dark), so by
    # default only clearly coloured areas are treated as non-paper.
    coloured = chroma > chroma_ratio * blum + 8
    if dark_ratio is not None:
        local_max = cv2.dilate(blum, cv2.getStructuringElement(cv2.MORPH_RECT, (4 * k + 1, 4 * k + 1)))
        coloured |= blum < dark_ratio * local_max
    coloured = cv2.dilate(
        coloured.astype(np.uint8), cv2.getStructuringElement(cv2.MORPH_RECT, (k // 2 | 1, k // 2 | 1))
    )
    paper = 1.0 - coloured.astype(np.float32)
    if 0.02 < paper.mean() < 0.999:
        sigma = 1.5 * k
        weight = cv2.GaussianBlur(paper, (0, 0), sigma)
        fill = cv2.GaussianBlur(bg * paper[:, :, None], (0, 0), sigma) / np.maximum(weight, 1e-4)[:, :, None]
        # Where no paper is within reach at all, keep the closed estimate rather than an undefined fill.
        fill = np.where(weight[:, :, None] > 1e-3, fill, bg)
        bg = np.where(paper[:, :, None] > 0, bg, fill)
    bg = cv2.GaussianBlur(bg, (0, 0), max(0.5, k / 6))
    # Upscaled as uint8: a quarter of the memory traffic of float32, and the background is smooth, so
    # whole grey levels lose nothing visible.
    small8 = np.clip(bg + 0.5, 1, 255).astype(np.uint8)
    full = cv2.resize(small8, (w, h), interpolation=cv2.INTER_LINEAR)
    return full.reshape(h, w, -1)


def divide_background(pixels: np.ndarray, background: np.ndarray) -> np.ndarray:
    """``pixels / background * 255`` as uint8 (saturated), so that paper becomes white."""
    return cv2.divide(pixels, np.maximum(background, 1), scale=255.0)


@register
class Deshadow(Tool):
    """Flatten shadows and uneven lighting; see :func:`paper_background`."""

    name = "deshadowing"
    degradation = "shadow"
    budget_s = 0.3
    work_bounds = {"work_side": WORK_SIDE}
    description = (
        "Remove shadows and uneven lighting from a photographed page. Call it when part of the page is "
        "darker than the rest (a cast shadow of a hand or phone, a dim corner, a light gradient), so text "
        "in the dark part is hard to read. It estimates the paper's brightness and colour everywhere and "
        "divides it out, making the paper evenly white while keeping ink and chart colours."
    )

    def apply(self, page: Page) -> Page:
        if min(page.height, page.width) < MIN_SIDE:
            return page.derive(page.pixels.copy(), f"{self.name}:too_small", work={})
        background = paper_background(page.pixels)
        return page.derive(divide_background(page.pixels, background), self.name, work=background_work(page))


def background_work(page: Page) -> dict[str, int]:
    """The work of a background division of ``page``: the side the light was estimated at, the pixels divided."""
    return {"work_side": min(WORK_SIDE, max(page.size)), "pixels": page.width * page.height}
