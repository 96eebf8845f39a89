"""Shadow and uneven-light removal by dividing each colour channel by its estimated paper illumination."""

from __future__ import annotations

import cv2
import numpy as np

from ..page import Page
from .base import Tool
from .registry import register

#: Pages smaller than this (either side, in pixels) carry too little paper to estimate light from.
MIN_SIDE = 16


def _odd(n: float) -> int:
    return max(3, int(n) | 1)


def paper_background(pixels: np.ndarray, work_side: int = 384, text_kernel: float = 0.035) -> np.ndarray:
    """Estimate the paper's illumination, per channel, as a float32 HxWx3 image in (0, 255].

    At ``work_side`` px (longest side) each channel is morphologically closed with a kernel of ``text_kernel`` times that
    side, which replaces dark ink by the surrounding paper, then median-filtered to drop isolated specks.
    Large coloured areas (bars of a chart, photos, a wooden table) survive the closing and would be divided
    away, so they are masked out and the background there is filled in from nearby paper by normalised
    convolution.
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
    # Paper is colourless however dimly lit; clearly coloured areas (chart bars, a wooden table) are not
    # paper, and their background is filled in from the nearest paper by normalised convolution. Brightness
    # is deliberately not a criterion: paper deep in a shadow is as dark as a grey bar.
    lum = bg.max(axis=2)
    chroma = lum - bg.min(axis=2)
    coloured = (chroma > 0.3 * lum + 10).astype(np.uint8)
    coloured = cv2.dilate(coloured, cv2.getStructuringElement(cv2.MORPH_RECT, (k // 2 | 1, k // 2 | 1)))
    paper = 1.0 - coloured.astype(np.float32)
    if 0.02 < paper.mean() < 0.999:
        sigma = 1.5 * k
        weight = cv2.GaussianBlur(paper, (0, 0), sigma)
        fill = cv2.GaussianBlur(bg * paper[:, :, None], (0, 0), sigma) / np.maximum(weight, 1e-4)[:, :, None]
        # Where no paper is within reach at all, keep the closed estimate rather than an undefined fill.
        fill = np.where(weight[:, :, None] > 1e-3, fill, bg)
        bg = np.where(paper[:, :, None] > 0, bg, fill)
    bg = cv2.GaussianBlur(bg, (0, 0), max(0.5, k / 6))
    full = cv2.resize(bg, (w, h), interpolation=cv2.INTER_LINEAR)
    if full.ndim == 2:
        full = full[:, :, None]
    return np.maximum(full, 1.0)


def divide_background(pixels: np.ndarray, background: np.ndarray) -> np.ndarray:
    """``pixels / background`` rescaled so that paper becomes white (uint8)."""
    out = pixels.astype(np.float32) * (255.0 / background)
    return np.clip(out + 0.5, 0, 255).astype(np.uint8)


@register
class Deshadow(Tool):
    """Flatten shadows and uneven lighting; see :func:`paper_background`."""

    name = "deshadowing"
    degradation = "shadow"
    description = (
        "Remove shadows and uneven lighting from a photographed page. Call it when part of the page is "
        "darker than the rest (a cast shadow of a hand or phone, a dim corner, a light gradient), so text "
        "in the dark part is hard to read. It estimates the paper's brightness and colour everywhere and "
        "divides it out, making the paper evenly white while keeping ink and chart colours."
    )

    def apply(self, page: Page) -> Page:
        if min(page.height, page.width) < MIN_SIDE:
            return page.derive(page.pixels.copy(), f"{self.name}:too_small")
        background = paper_background(page.pixels)
        return page.derive(divide_background(page.pixels, background), self.name)
