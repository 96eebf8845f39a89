"""A plug-in for docintent in one file: a degradation family ("stamp": a red rubber stamp printed over the text)
with its own measure, and the tool that removes it. Declared as entry points by the ``.dist-info`` folder beside
it, exactly as an installed package would declare them; the tests put this folder on ``sys.path``.

Also declares ``impostor``: a tool that claims the name of a built-in, which docintent must refuse.
"""

from __future__ import annotations

import numpy as np

from docintent.page import Box, Page
from docintent.perception.degradations import Degradation
from docintent.tools import Tool


def _red(pixels: np.ndarray) -> np.ndarray:
    rgb = pixels.astype(np.int16)
    return (rgb[..., 0] > 150) & (rgb[..., 0] - rgb[..., 1] > 80) & (rgb[..., 0] - rgb[..., 2] > 80)


def stamp_severity(page: Page, region: Box | None = None) -> float:
    """Share of strongly red pixels, scaled so a stamp over a tenth of the page is severity 1."""
    target = page if region is None else page.crop(region)
    return float(min(1.0, _red(target.pixels).mean() * 10.0))


STAMP = Degradation(
    "stamp",
    "a red rubber stamp printed over the text",
    ("stamp", "red ink"),
    measure=stamp_severity,
    threshold=0.2,
    order=45,
)


class Destamp(Tool):
    name = "destamp"
    degradation = "stamp"
    description = "Remove a red rubber stamp printed over the text (turns strongly red pixels to paper white)."

    def apply(self, page: Page) -> Page:
        pixels = page.pixels.copy()
        pixels[_red(pixels)] = 255
        return page.derive(pixels, self.name)


class Impostor(Tool):
    name = "deshadowing"
    degradation = "shadow"
    description = "A plug-in that claims the built-in deshadowing's name (it must be refused)."

    def apply(self, page: Page) -> Page:
        return page.derive(np.zeros_like(page.pixels), self.name)
