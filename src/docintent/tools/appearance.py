"""Appearance correction: white balance from the paper, local background normalisation, ink contrast stretch."""

from __future__ import annotations

import cv2
import numpy as np

from ..page import Page
from .base import Tool
from .deshadow import MIN_SIDE, WORK_SIDE, background_work, divide_background, paper_background
from .registry import register

#: Where the darkest ink should land after the stretch (pure black looks harsh and clips detail).
INK_TARGET = 16.0
#: The stretch never multiplies contrast by more than this, so a page with no ink is not blown up into noise.
MAX_GAIN = 4.0


def stretch_ink(pixels: np.ndarray, dark_percentile: float = 0.5) -> np.ndarray:
    """Stretch contrast anchored at white: paper stays white, the darkest ink moves to :data:`INK_TARGET`.

    With ``t = (x - dark) / (255 - dark)`` (``dark``: the ``dark_percentile`` of luminance), the tone curve is
    ``INK_TARGET + (255 - INK_TARGET) * ((1 - a) * t + a * smoothstep(t / 0.8))``, one curve for all channels
    so hues are kept. ``a`` grows with the needed gain ``(255 - INK_TARGET) / (255 - dark)`` (0 at gain 1, 1 at
    gain 3 or more): a page that already has black ink is only stretched linearly, while a washed-out one
    also gets its light tones (paper texture, faint stain rims) pushed to white, which would otherwise be
    stretched into visible marks along with the ink. ``pixels`` is uint8.
    """
    lum = cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY)
    cumulative = np.cumsum(np.bincount(lum.ravel(), minlength=256))
    dark = min(float(np.searchsorted(cumulative, dark_percentile / 100.0 * lum.size)), 254.0)
    gain = float(np.clip((255.0 - INK_TARGET) / (255.0 - dark), 1.0, MAX_GAIN))
    a = float(np.clip((gain - 1.0) / 2.0, 0.0, 1.0))
    t = np.clip((np.arange(256, dtype=np.float32) - dark) / (255.0 - dark), 0.0, 1.0)
    u = np.clip(t / 0.8, 0.0, 1.0)
    curve = (1.0 - a) * t + a * u * u * (3.0 - 2.0 * u)
    table = np.clip(INK_TARGET + (255.0 - INK_TARGET) * curve + 0.5, 0, 255).astype(np.uint8)
    if gain <= 1.0 + 1e-6:
        # Nothing to stretch: the identity, so a good page is not shifted by a few grey levels.
        table = np.arange(256, dtype=np.uint8)
    return cv2.LUT(pixels, table)


@register
class Appearance(Tool):
    """Normalise paper colour and brightness, then restore ink contrast."""

    name = "appearance"
    degradation = "appearance"
    budget_s = 0.3
    work_bounds = {"work_side": WORK_SIDE}
    description = (
        "Fix the overall look of a page: a colour cast (yellow, blue or green paper from indoor light), "
        "low contrast (grey, washed-out or dim text), stains and blotchy paper. Call it when the text is "
        "faint or the paper is not white. It white-balances every region by the paper colour around it, "
        "then stretches contrast so ink is dark again; chart colours keep their hue."
    )

    def apply(self, page: Page) -> Page:
        if min(page.height, page.width) < MIN_SIDE:
            return page.derive(page.pixels.copy(), f"{self.name}:too_small", work={})
        # A wider kernel than deshadowing: stains and casts vary slowly, and it spares large bold text.
        background = paper_background(page.pixels, text_kernel=0.05, chroma_ratio=0.25, dark_ratio=0.6)
        return page.derive(
            stretch_ink(divide_background(page.pixels, background)), self.name, work=background_work(page)
        )
