"""Measured degradation signals: one severity in [0, 1] per restoration family, from the pixels alone.

The offline reader uses these to choose a restoration tool without a model. Every severity rests on a
physical measurement that is kept in :attr:`Signals.raw` (so thresholds can be checked and recalibrated):

==============  ===========================================================================================
orientation     1 - P(upright) from the orientation classifier, when it says the page is turned
blur            edge width beyond a sharp edge's, in text heights (the worst of four edge directions),
                and at least a pixel and a half of it
shadow          light fall-off across open paper: 1 - (darkest paper / brightest paper) of the paper map
appearance      worst of: narrow tone range (paper brightness x ink depth), colour cast of the paper,
                warm stains
moire           isolated off-axis spectral peaks (decades above their ring's median), luminance or colour
warp            bent text lines (text heights), fanned line directions (degrees), page edge or background
                visible around the page
==============  ===========================================================================================

>>> from docintent.synth.render import render_page
>>> from docintent.page import Page
>>> page = Page.from_array(render_page(width=600, seed=1)[0])
>>> diagnose(page)
[]
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

import cv2
import numpy as np

from ..ocr.orientation import detect_orientation
from ..page import Box, Page
from .background import LUMA, estimate_paper, odd, page_margins, shrink
from .spectrum import periodic_peaks
from .text import edge_width, find_ink, text_lines

#: The built-in degradation families these signals measure, in the order they are reported (ties between equal
#: severities keep this order). Plug-in families measure themselves (:mod:`docintent.perception.degradations`).
FAMILIES: tuple[str, ...] = ("orientation", "warp", "shadow", "blur", "appearance", "moire")

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


#: Severity above which each built-in family is reported (calibrated on synthetic captures,
#: ``benchmarks/diagnosis.py``, and checked on a real photographed page); the degradation records read these.
DEFAULT_THRESHOLDS: Mapping[str, float] = MappingProxyType(
    {"orientation": 0.7, "warp": 0.3, "shadow": 0.5, "blur": 0.35, "appearance": 0.2, "moire": 0.45}
)


@dataclass(frozen=True)
class Signals:
    """Severities in [0, 1] per degradation family, the rotation that makes the page upright, and the raw
    measurements behind them (``raw``, read-only)."""

    orientation: float
    warp: float
    shadow: float
    blur: float
    appearance: float
    moire: float
    rotation: str | None
    raw: Mapping[str, float]
    region: Box | None = None

    @property
    def severities(self) -> dict[str, float]:
        """``{family: severity}`` for every measured family."""
        return {f: float(getattr(self, f)) for f in FAMILIES}

    def above(self, thresholds: Any = None) -> list[str]:
        """Families whose severity exceeds its threshold (``thresholds.of(family)``; default
        :data:`DEFAULT_THRESHOLDS`), most severe first."""
        of = thresholds.of if thresholds is not None else DEFAULT_THRESHOLDS.__getitem__
        hits = [(s, f) for f, s in self.severities.items() if s > of(f)]
        return [f for s, f in sorted(hits, key=lambda sf: (-sf[0], FAMILIES.index(sf[1])))]


class _ReadOnlyDict(dict):
    """A dict that refuses changes but still pickles (a mappingproxy does not), for :attr:`Signals.raw`."""

    def _refuse(self, *args, **kwargs):
        raise TypeError("Signals.raw is read-only")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):
        return (_ReadOnlyDict, (dict(self),))


def severity(name: str, value: float) -> float:
    """Map the raw measurement ``name`` to [0, 1] through :data:`RANGES`."""
    lo, hi = RANGES[name]
    if not math.isfinite(value):
        return 0.0
    return float(np.clip((value - lo) / (hi - lo), 0.0, 1.0))


# --- measurement ----------------------------------------------------------------------------------

_CACHE: OrderedDict[tuple, Signals] = OrderedDict()
_CACHE_SIZE = 128

#: Pages are analysed at no more than this many pixels on the long side for text and line structure.
MID_SIDE = 1024
#: Edge widths are measured where text is about this high (px); larger text is downscaled to it.
BLUR_TEXT_HEIGHT = 32.0
#: Side of the square window (working px) in which edge widths are measured.
BLUR_WINDOW = 768
#: A sharp, anti-aliased edge measures this wide (px) with :func:`docintent.perception.text.edge_width`.
SHARP_EDGE = 2.0


def measure(page: Page, region: Box | None = None, *, orientation: bool = True) -> Signals:
    """Measure every degradation signal on ``page`` (or on ``region`` of it, with a margin).

    ``orientation=False`` skips the orientation classifier (about 30 ms) and reports orientation 0.
    Results are cached by page hash and region.

    >>> import numpy as np
    >>> measure(Page.from_array(np.full((1, 1, 3), 255, np.uint8))).blur
    0.0
    """
    key = (page.hash, region.as_tuple() if region is not None else None, orientation)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    target = page if region is None else page.crop(_with_margin(page, region))
    signals = _measure(target, region, orientation)
    _CACHE[key] = signals
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return signals


def diagnose(page: Page, region: Box | None = None, thresholds: Any = None) -> list[str]:
    """The degradation families above their thresholds on ``page`` (or ``region``), most severe first."""
    return measure(page, region).above(thresholds)


def rotation_fix(page: Page) -> str | None:
    """The rotation tool that makes ``page`` upright ("rotate_90" / "rotate_180" / "rotate_270"), or None."""
    return measure(page).rotation


def _with_margin(page: Page, region: Box) -> Box:
    # A margin gives the paper map and the edge-width windows some context around a small region.
    dx = max(0.1 * region.width, 16.0 / page.width)
    dy = max(0.1 * region.height, 16.0 / page.height)
    return region.expand(dx, dy)


def _measure(page: Page, region: Box | None, with_orientation: bool) -> Signals:
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
    orientation_severity, rotation = 0.0, None
    # A page without text has no up: the classifier's guess on blank paper is noise, not a rotation to fix.
    if with_orientation and text_height > 0 and min(h, w) >= 32 and max(h, w) <= 12 * min(h, w):
        found = detect_orientation(page)
        upright = found.probabilities.get("0", 0.0)
        raw["p_upright"] = upright
        raw["orientation_angle"] = float(found.angle)
        if found.angle != 0:
            orientation_severity, rotation = float(np.clip(1.0 - upright, 0.0, 1.0)), found.fix

    # The usable tone range between paper and ink; a blank page has no ink to judge it by.
    raw["tone_range"] = raw["paper_brightness"] * ink.contrast if text_height > 0 else raw["paper_brightness"]
    return Signals(
        orientation=orientation_severity,
        warp=max(
            severity("line_bend", raw["line_bend"]),
            severity("line_fan", raw["line_fan"]),
            severity("background_visible", raw["background_visible"]),
            severity("corner_skew", raw["corner_skew"]),
        ),
        shadow=severity("shadow_falloff", falloff),
        # Blur matters relative to the text, but under about a pixel and a half no text is unreadable
        # and no deblurring helps: small sharp text must not pass for blurred.
        blur=min(severity("blur_relative", blur_relative), severity("blur_px", raw.get("blur_px", 0.0))),
        appearance=max(
            severity("tone_range", raw["tone_range"]),
            severity("paper_cast", raw["paper_cast"]),
            severity("stain_tint", raw["stain_tint"]),
        ),
        moire=severity("moire_peak", raw["moire_peak"]),
        rotation=rotation,
        raw=_ReadOnlyDict(raw),
        region=region,
    )


def _edge_width_at_text(pixels: np.ndarray, ink, mid: float, text_height: float, ink_levels: float) -> tuple[float, int]:
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


#: The share of pixels at one exact grey level above which a page is a render (born digital): a camera or a
#: scanner never leaves so much of the paper at one value (sensor noise, light fall-off, JPEG of a photo).
RENDER_FLAT_SHARE = 0.45
_RENDERS: dict[str, bool] = {}


def is_render(page: Page) -> bool:
    """Whether ``page`` is a born-digital render (a PDF page, a screenshot of a document) rather than a capture:
    most of its paper is one exact grey level. Nothing on such a page was photographed, so a moire pattern or a
    bend of its lines is print, not damage (a table of contents' dot leaders, a title set in a curve)."""
    known = _RENDERS.get(page.hash)
    if known is None:
        px = page.pixels[::2, ::2]
        gray = px.max(axis=2) if px.ndim == 3 else px
        counts = np.bincount(gray.reshape(-1), minlength=256)
        known = bool(counts.max() >= RENDER_FLAT_SHARE * gray.size)
        if len(_RENDERS) > 4096:
            _RENDERS.clear()
        _RENDERS[page.hash] = known
    return known


def clear_cache() -> None:
    """Forget cached measurements (they are keyed by page hash, so this is only needed to save memory)."""
    _CACHE.clear()
    _RENDERS.clear()


__all__ = ["DEFAULT_THRESHOLDS", "FAMILIES", "RANGES", "Signals", "measure", "diagnose", "rotation_fix", "severity",
           "clear_cache", "is_render"]
