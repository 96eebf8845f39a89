"""Appearance correction: white balance from the paper, local background normalisation, ink contrast stretch."""

from __future__ import annotations

import numpy as np

from ..page import Page
from .base import Tool
from .deshadow import MIN_SIDE, paper_background
from .registry import register

#: Where the darkest ink should land after the stretch (pure black looks harsh and clips detail).
INK_TARGET = 16.0
#: The stretch never multiplies contrast by more than this, so a page with no ink is not blown up into noise.
MAX_GAIN = 4.0


def stretch_ink(pixels: np.ndarray, dark_percentile: float = 0.5) -> np.ndarray:
    """Stretch contrast anchored at white: paper stays white, the darkest ink moves to :data:`INK_TARGET`.

    ``out = 255 - (255 - x) * gain`` with one gain for all channels (hue is kept), where the gain maps the
    ``dark_percentile`` of luminance to the target, limited to ``[1, MAX_GAIN]``.
    """
    x = pixels.astype(np.float32)
    lum = x @ np.array([0.299, 0.587, 0.114], np.float32)
    dark = float(np.percentile(lum, dark_percentile))
    gain = float(np.clip((255.0 - INK_TARGET) / max(255.0 - dark, 1.0), 1.0, MAX_GAIN))
    return np.clip(255.0 - (255.0 - x) * gain + 0.5, 0, 255).astype(np.uint8)


@register
class Appearance(Tool):
    """Normalise paper colour and brightness, then restore ink contrast."""

    name = "appearance"
    degradation = "appearance"
    description = (
        "Fix the overall look of a page: a colour cast (yellow, blue or green paper from indoor light), "
        "low contrast (grey, washed-out or dim text), stains and blotchy paper. Call it when the text is "
        "faint or the paper is not white. It white-balances every region by the paper colour around it, "
        "then stretches contrast so ink is dark again; chart colours keep their hue."
    )

    def apply(self, page: Page) -> Page:
        if min(page.height, page.width) < MIN_SIDE:
            return page.derive(page.pixels.copy(), f"{self.name}:too_small")
        # A wider kernel than deshadowing: stains and casts vary slowly, and it spares large bold text.
        background = paper_background(page.pixels, text_kernel=0.05, chroma_ratio=0.25, dark_ratio=0.8)
        flat = np.clip(page.pixels.astype(np.float32) * (255.0 / background), 0, 255)
        return page.derive(stretch_ink(flat), self.name)
