"""The one shared analysis of a page behind every built-in degradation signal: its raw measurements, in one pass.

One reduction of the page feeds the paper map, the ink and text lines, the edge widths, the spectrum and (when
asked) the orientation classifier; :func:`analyse` keeps what they measured in :attr:`Analysis.raw` and caches
it by page hash and region. A built-in family's severity is a formula over these raw values (its record's
:class:`Shared` measure, :mod:`docintent.perception.degradations`), so every built-in family is measured from
the same pass, whichever of them is asked first.

>>> import numpy as np
>>> from docintent.page import Page
>>> analyse(Page.from_array(np.full((1, 1, 3), 255, np.uint8))).raw["blur_relative"]
0.0
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType

import cv2
import numpy as np

from ..ocr.orientation import detect_orientation
from ..page import Box, Page
from .background import LUMA, estimate_paper, odd, page_margins, shrink
from .spectrum import periodic_peaks
from .text import edge_width, find_ink, text_lines

#: How each raw measurement maps to a severity: ``(value at severity 0, value at severity 1)``, linear in
#: between and clipped (a pair with lo > hi means "lower is worse"). Units are in the key names' docs.
RANGES: Mapping[str, tuple[float, float]] = MappingProxyType(
    {
        "blur_relative": (0.06, 0.30),  # blur width / text height
        "blur_px": (1.5, 3.5),  # blur width in pixels of the page
        "shadow_falloff": (0.06, 0.45),  # 1 - darkest / brightest paper
        "tone_range": (0.80, 0.40),  # (paper - darkest ink) / 255
        "paper_cast": (0.05, 0.25),  # saturation of the reference paper colour
        "stain_tint": (0.012, 0.05),  # warm tint (r - b) / (r + g + b) of the paper after white balance
        "moire_peak": (1.3, 2.5),  # decades above the ring median
        "line_bend": (0.12, 0.6),  # text heights
        "line_fan": (1.5, 6.0),  # degrees between the 10th and 90th percentile line directions
        "background_visible": (0.06, 0.30),  # fraction of the image outside the page
        "corner_skew": (4.0, 15.0),  # degrees a page corner differs from a right angle
    }
)


class ReadOnlyDict(dict):
    """A dict that refuses changes but still pickles (a mappingproxy does not), for :attr:`Analysis.raw` and
    the severities of :class:`~docintent.perception.signals.Signals`."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("measured signals are read-only")

    __setitem__ = __delitem__ = __ior__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):
        return (ReadOnlyDict, (dict(self),))


def severity(name: str, value: float) -> float:
    """Map the raw measurement ``name`` to [0, 1] through :data:`RANGES`."""
    lo, hi = RANGES[name]
    if not math.isfinite(value):
        return 0.0
    return float(np.clip((value - lo) / (hi - lo), 0.0, 1.0))


# --- measurement ----------------------------------------------------------------------------------

_CACHE: OrderedDict[tuple, Analysis] = OrderedDict()
_CACHE_SIZE = 128

#: Pages are analysed at no more than this many pixels on the long side for text and line structure.
MID_SIDE = 1024
#: Edge widths are measured where text is about this high (px); larger text is downscaled to it.
BLUR_TEXT_HEIGHT = 32.0
#: Side of the square window (working px) in which edge widths are measured.
BLUR_WINDOW = 768
#: A sharp, anti-aliased edge measures this wide (px) with :func:`docintent.perception.text.edge_width`.
SHARP_EDGE = 2.0


@dataclass(frozen=True)
class Analysis:
    """What one pass over a page measured: the raw measurements (read-only; units in :data:`RANGES` and in the
    comments of :func:`analyse`) and the rotation tool that makes the page upright (None: upright, or not
    asked)."""

    raw: Mapping[str, float]
    rotation: str | None = None


#: A built-in family's severity as a formula over the raw measurements of :func:`analyse`.
Formula = Callable[[Mapping[str, float]], float]


@dataclass(frozen=True)
class Shared:
    """A family's measure that is a formula over the shared analysis (the built-in families' measures): called
    on a page, it analyses the page once (cached, so every family measured this way shares the pass) and
    applies ``formula`` to the raw measurements. ``orientation``: the formula needs the orientation classifier
    (its family is judged by the classifier, not restored by its severity)."""

    formula: Formula
    orientation: bool = False

    def __call__(self, page: Page, region: Box | None = None) -> float:
        return float(self.formula(analyse(page, region, orientation=self.orientation).raw))


def analyse(page: Page, region: Box | None = None, *, orientation: bool = True) -> Analysis:
    """The raw measurements of ``page`` (or of ``region`` of it, with a margin), in one pass.

    ``orientation=False`` skips the orientation classifier (about 30 ms). Results are cached by page hash and
    region."""
    key = (page.hash, region.as_tuple() if region is not None else None, orientation)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    target = page if region is None else page.crop(_with_margin(page, region))
    found = _analyse(target, orientation)
    _CACHE[key] = found
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return found


def _with_margin(page: Page, region: Box) -> Box:
    # A margin gives the paper map and the edge-width windows some context around a small region.
    dx = max(0.1 * region.width, 16.0 / page.width)
    dy = max(0.1 * region.height, 16.0 / page.height)
    return region.expand(dx, dy)


def _analyse(page: Page, with_orientation: bool) -> Analysis:
    pixels = page.pixels
    h, w = pixels.shape[:2]
    raw: dict[str, float] = {"width": float(w), "height": float(h)}

    # --- one reduction of the page serves the paper map and the text structure ---
    mid = min(1.0, MID_SIDE / max(h, w))
    mw, mh = max(1, round(w * mid)), max(1, round(h * mid))
    rgb_mid = shrink(pixels, (mw, mh)) if mid < 1.0 else pixels
    paper = estimate_paper(rgb_mid)
    ref_lum = paper.paper_luminance
    gray_mid = cv2.cvtColor(np.ascontiguousarray(rgb_mid), cv2.COLOR_RGB2GRAY).reshape(mh, mw)
    paper_mid = cv2.resize(paper.luminance, (mw, mh), interpolation=cv2.INTER_LINEAR).reshape(mh, mw)
    # Print sits on paper that is lit at least moderately (a dark desk's texture is not ink), and the paper
    # map bleeds about one kernel over the page edge, so that region is trimmed by as much (the image
    # border itself is not trimmed: erosion treats outside as inside).
    on_paper = (paper.page & (paper.luminance >= 0.3 * ref_lum)).astype(np.uint8)
    on_paper = cv2.erode(on_paper, cv2.getStructuringElement(cv2.MORPH_RECT, (paper.kernel, paper.kernel)))
    inside = cv2.resize(on_paper, (mw, mh), interpolation=cv2.INTER_NEAREST).reshape(mh, mw).astype(bool)
    ink = find_ink(gray_mid, paper_mid, inside)
    text_height = ink.text_height / mid
    raw["text_height"] = text_height
    raw["line_pitch"] = ink.line_pitch / mid
    raw["mark_height"] = ink.mark_height / mid
    raw["ink_contrast"] = ink.contrast
    raw["text_horizontal"] = float(ink.horizontal)

    # --- blur ---
    blur_relative = 0.0
    if text_height > 0:
        width_px, edges = _edge_width_at_text(pixels, ink, mid, text_height, ink.contrast * ref_lum)
        raw["edge_width"] = width_px
        raw["edges"] = float(edges)
        if edges >= 20:
            scale = min(1.0, BLUR_TEXT_HEIGHT / text_height)
            blur_px = math.sqrt(max(width_px**2 - SHARP_EDGE**2, 0.0))
            blur_relative = blur_px / (text_height * scale)
            raw["blur_px"] = blur_px / scale
    raw["blur_relative"] = blur_relative

    # --- shadow: light fall-off over open paper (not over a desk that shows around the page) ---
    # Print under a deep shadow is left out of ``ink`` (too dark a paper to trust faint marks), yet it
    # still shows that the dark area is paper, not desk: any mark at less than 45 % of its surroundings
    # counts here. A desk's texture is never that deep.
    deep_print = gray_mid < 0.45 * paper_mid
    top, right, bottom, left = page_margins(paper, ink.mask | deep_print)
    open_paper = paper.paper.copy()
    sh, sw = open_paper.shape
    k = paper.kernel
    if top > 0:
        open_paper[: int(top * sh) + k] = False
    if bottom > 0:
        open_paper[max(sh - int(bottom * sh) - k, 0) :] = False
    if left > 0:
        open_paper[:, : int(left * sw) + k] = False
    if right > 0:
        open_paper[:, max(sw - int(right * sw) - k, 0) :] = False
    lit = paper.luminance[open_paper]
    falloff = 0.0
    if lit.size >= 16:
        falloff = float(1.0 - np.percentile(lit, 2) / max(np.percentile(lit, 98), 1.0))
    raw["shadow_falloff"] = falloff

    # --- appearance ---
    raw["paper_brightness"] = ref_lum / 255.0
    rgb = paper.paper_rgb
    raw["paper_cast"] = float((rgb.max() - rgb.min()) / max(float(rgb.max()), 1.0))
    raw["stain_tint"] = _stain_tint(paper)

    # --- moire ---
    lum_peak, colour_peak = periodic_peaks(pixels)
    raw["moire_luminance_peak"] = lum_peak
    raw["moire_colour_peak"] = colour_peak
    raw["moire_peak"] = max(lum_peak, colour_peak)

    # --- warp ---
    lines = text_lines(ink)
    raw["line_bend"] = lines.bend
    raw["line_fan"] = lines.angle_spread
    raw["lines"] = float(lines.count)
    raw["background_visible"] = float(1.0 - max(0.0, 1.0 - top - bottom) * max(0.0, 1.0 - left - right))
    # The page outline's corners only mean something when the desk around the page shows.
    visible = raw["background_visible"] >= RANGES["background_visible"][0]
    raw["corner_skew"] = _corner_skew(paper.page) if visible else 0.0

    # --- orientation ---
    rotation: str | None = None
    # A page without text has no up: the classifier's guess on blank paper is noise, not a rotation to fix.
    if with_orientation and text_height > 0 and min(h, w) >= 32 and max(h, w) <= 12 * min(h, w):
        found = detect_orientation(page)
        upright = found.probabilities.get("0", 0.0)
        raw["p_upright"] = upright
        raw["orientation_angle"] = float(found.angle)
        if found.angle != 0:
            rotation = found.fix

    # The usable tone range between paper and ink; a blank page has no ink to judge it by.
    raw["tone_range"] = raw["paper_brightness"] * ink.contrast if text_height > 0 else raw["paper_brightness"]
    return Analysis(ReadOnlyDict(raw), rotation)


def _edge_width_at_text(
    pixels: np.ndarray, ink, mid: float, text_height: float, ink_levels: float
) -> tuple[float, int]:
    """Edge width (px at the blur working scale) in the window of the page with the most ink."""
    h, w = pixels.shape[:2]
    scale = min(1.0, BLUR_TEXT_HEIGHT / text_height)
    side = min(BLUR_WINDOW / scale, h, w) if min(h, w) > BLUR_WINDOW / scale else None
    if side is None:
        window = pixels
    else:
        # Densest ink: a box filter over the mid-resolution ink mask, window-sized.
        k = max(1, int(side * mid))
        density = cv2.blur(ink.mask.astype(np.float32), (k, k))
        iy, ix = np.unravel_index(int(np.argmax(density)), density.shape)
        cy, cx = iy / mid, ix / mid
        side = int(side)
        y0 = int(np.clip(cy - side / 2, 0, h - side))
        x0 = int(np.clip(cx - side / 2, 0, w - side))
        window = pixels[y0 : y0 + side, x0 : x0 + side]
    window = cv2.cvtColor(np.ascontiguousarray(window), cv2.COLOR_RGB2GRAY).reshape(window.shape[:2])
    if scale < 1.0:
        size = (max(1, round(window.shape[1] * scale)), max(1, round(window.shape[0] * scale)))
        window = shrink(window, size)
    return edge_width(window, text_height * scale, 0.4 * ink_levels, ink.contrast)


def _stain_tint(paper) -> float:
    """Warm tint of the paper after white balance (99th percentile over the page, figures left out)."""
    balance = 255.0 / np.maximum(paper.paper_rgb, 1.0)
    bg = paper.background * balance
    small = paper.small * balance
    if small.ndim == 2:
        small = small.reshape(bg.shape)
    # Saturation after stretching black to 0 and paper to white, so a washed-out chart still counts.
    black = float(np.percentile(small @ LUMA, 1))
    small = np.clip((small - black) * (255.0 / max(255.0 - black, 1.0)), 0.0, None)
    sat = (small.max(axis=-1) - small.min(axis=-1)) / np.maximum(small.max(axis=-1), 1.0)
    # Strongly coloured figures (bar charts, logos) are not stains; the paper map smears them by about
    # two kernel widths.
    figure = (sat > 0.55).astype(np.uint8)
    if figure.any():
        figure = cv2.dilate(figure, cv2.getStructuringElement(cv2.MORPH_RECT, (odd(2 * paper.kernel),) * 2))
    region = paper.page & ~figure.astype(bool)
    if region.sum() < 16:
        return 0.0
    tint = (bg[..., 0] - bg[..., 2]) / np.maximum(bg.sum(axis=-1), 1.0)
    return float(max(np.percentile(tint[region], 99), 0.0))


def _corner_skew(page_mask: np.ndarray) -> float:
    """Largest difference from 90 degrees among the corners of the page outline, when it is a quadrilateral
    that does not fill the image (0 otherwise)."""
    if page_mask.mean() > 0.97 or page_mask.sum() < 16:
        return 0.0
    contours, _ = cv2.findContours(page_mask.astype(np.uint8), cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return 0.0
    outline = max(contours, key=cv2.contourArea)
    quad = cv2.approxPolyDP(outline, 0.02 * cv2.arcLength(outline, True), True).reshape(-1, 2).astype(np.float64)
    if len(quad) != 4:
        return 0.0
    worst = 0.0
    for i in range(4):
        a, b, c = quad[i - 1], quad[i], quad[(i + 1) % 4]
        u, v = a - b, c - b
        cos = float(u @ v / max(np.linalg.norm(u) * np.linalg.norm(v), 1e-9))
        worst = max(worst, abs(math.degrees(math.acos(np.clip(cos, -1.0, 1.0))) - 90.0))
    return worst


def clear_cache() -> None:
    """Forget cached analyses (they are keyed by page hash, so this is only needed to save memory)."""
    _CACHE.clear()


__all__ = [
    "BLUR_TEXT_HEIGHT",
    "BLUR_WINDOW",
    "MID_SIDE",
    "RANGES",
    "SHARP_EDGE",
    "Analysis",
    "Formula",
    "ReadOnlyDict",
    "Shared",
    "analyse",
    "clear_cache",
    "severity",
]
