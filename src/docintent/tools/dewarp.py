"""Geometric page correction: perspective rectification from the page outline, curvature from text lines.

1. **Perspective.** When the page's edges show against a darker background, the page outline is found
   (Otsu threshold, largest bright region, its four extreme corners) and warped to an upright rectangle
   whose sides are the outline's longer opposite sides.
2. **Curvature.** Text-line centre curves are found by morphology on the binarised page (letters smeared
   horizontally into line blobs, then per-column centroids). A smooth vertical displacement field
   ``dy(x, y) = sum c_jk * x^j * y^k`` (cubic in x, quadratic in y) plus one offset per line is fitted to them
   by (robust) linear least squares, and the page is remapped so every line becomes straight and level. This
   also removes a small skew (the linear term in x).

Neither step runs unless its evidence is clear: no outline and no significantly curved, well-fitted text
lines leaves the page unchanged, recorded as ``dewarping:none``.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

import cv2
import numpy as np

from ..page import Box, Page
from .base import Tool
from .registry import register
from .warpmap import PageWarp

MIN_SIDE = 32
#: Working resolution (longest side, px) for outline and text-line detection.
OUTLINE_SIDE = 512
LINES_SIDE = 1024
#: The page outline must cover this fraction of the image (less is probably not a page; more means the
#: edges are not visible).
OUTLINE_AREA = (0.15, 0.93)
#: Correct curvature only when the fitted displacement varies along some line by this many text heights.
MIN_BEND = 0.25
#: Least-squares fits of the displacement field: the fit and one robust refit.
FITS = 2
#: At most this many text lines (the longest) enter the fit: its design matrix has a column per line, so a
#: page of many short lines (a form, a table of contents) would otherwise grow it without bound. A page at
#: the working resolution holds far fewer lines of readable text.
MAX_LINES = 160


@dataclass(frozen=True)
class LineSamples:
    """Centre points of text lines at working scale: ``x``, ``y`` and the line index of each point."""

    x: np.ndarray
    y: np.ndarray
    line: np.ndarray
    _: KW_ONLY
    text_height: float
    width: int
    height: int


def find_page_quad(pixels: np.ndarray) -> np.ndarray | None:
    """The page's four corners (TL, TR, BR, BL) in pixel coordinates, or None when no outline is clear."""
    h, w = pixels.shape[:2]
    scale = min(1.0, OUTLINE_SIDE / max(h, w))
    small = cv2.resize(pixels, (max(1, round(w * scale)), max(1, round(h * scale))), interpolation=cv2.INTER_AREA)
    gray = cv2.GaussianBlur(cv2.cvtColor(small, cv2.COLOR_RGB2GRAY), (5, 5), 0)
    _, bright = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    bright = cv2.morphologyEx(bright, cv2.MORPH_OPEN, np.ones((5, 5), np.uint8))
    contours, _ = cv2.findContours(bright, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    contour = max(contours, key=cv2.contourArea)
    area = cv2.contourArea(contour) / float(gray.size)
    if not OUTLINE_AREA[0] <= area <= OUTLINE_AREA[1]:
        return None
    hull = cv2.convexHull(contour).reshape(-1, 2).astype(np.float64)
    s, d = hull.sum(axis=1), hull[:, 0] - hull[:, 1]
    quad = np.array([hull[np.argmin(s)], hull[np.argmax(d)], hull[np.argmax(s)], hull[np.argmin(d)]])
    quad_area = cv2.contourArea(quad.astype(np.float32)) / float(gray.size)
    # A page is a quadrilateral: its outline must be (almost) all of the hull, and no side may hug the
    # image border (then the page continues outside the photo and its true corners are unknown).
    if quad_area < 0.9 * cv2.contourArea(hull.astype(np.float32)) / float(gray.size):
        return None
    sh, sw = gray.shape
    on_border = (quad[:, 0] <= 1) | (quad[:, 0] >= sw - 2) | (quad[:, 1] <= 1) | (quad[:, 1] >= sh - 2)
    if on_border.sum() >= 2:
        return None
    # The page must be clearly brighter than what surrounds it (medians: a large dark chart or photo on
    # the page must not count against it).
    inside = np.zeros_like(gray)
    cv2.fillConvexPoly(inside, quad.astype(np.int32), 255)
    if np.median(gray[inside > 0]) - np.median(gray[inside == 0]) < 30:
        return None
    return (quad / scale).astype(np.float32)


def rectify(pixels: np.ndarray, quad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Warp the quadrilateral ``quad`` (TL, TR, BR, BL) to an upright rectangle; returns the new pixels and the
    perspective matrix (capture pixels -> new pixels)."""
    tl, tr, br, bl = quad
    width = int(round(max(np.linalg.norm(tr - tl), np.linalg.norm(br - bl))))
    height = int(round(max(np.linalg.norm(bl - tl), np.linalg.norm(br - tr))))
    target = np.array([[0, 0], [width - 1, 0], [width - 1, height - 1], [0, height - 1]], dtype=np.float32)
    matrix = cv2.getPerspectiveTransform(quad.astype(np.float32), target)
    out = cv2.warpPerspective(pixels, matrix, (width, height), flags=cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE)
    return out, matrix


def text_line_samples(pixels: np.ndarray) -> LineSamples | None:
    """Centre points of the page's text lines at working scale, or None when too few lines show."""
    h, w = pixels.shape[:2]
    scale = min(1.0, LINES_SIDE / max(h, w))
    sw, sh = max(1, round(w * scale)), max(1, round(h * scale))
    gray = cv2.resize(cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY), (sw, sh), interpolation=cv2.INTER_AREA)
    ink = cv2.adaptiveThreshold(gray, 1, cv2.ADAPTIVE_THRESH_MEAN_C, cv2.THRESH_BINARY_INV, 31, 12)
    n, _, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    heights = stats[1:, cv2.CC_STAT_HEIGHT]
    letters = heights[(heights >= 4) & (heights <= sh / 10) & (stats[1:, cv2.CC_STAT_WIDTH] <= sh / 10)]
    if letters.size < 20:
        return None
    text_height = float(np.median(letters))
    # Smear letters into words and words into line blobs, without bridging the gap between lines.
    smear = cv2.morphologyEx(
        ink, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (int(2 * text_height) | 1, 1))
    )
    smear = cv2.morphologyEx(
        smear, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (int(text_height) | 1, 1))
    )
    n, labels, stats, _ = cv2.connectedComponentsWithStats(smear, connectivity=8)
    widths, heights = stats[:, cv2.CC_STAT_WIDTH], stats[:, cv2.CC_STAT_HEIGHT]
    areas = stats[:, cv2.CC_STAT_AREA]
    # A line blob is long, and on average about one text height thick (tables and bars are thicker).
    thickness = areas / np.maximum(widths, 1)
    keep = (widths >= 6 * text_height) & (thickness >= 0.4 * text_height) & (thickness <= 1.8 * text_height)
    keep &= heights <= np.maximum(3 * text_height, 0.15 * widths)
    keep[0] = False
    if keep.sum() < 4:
        return None
    ys, xs = np.nonzero(keep[labels])
    lab = labels[ys, xs]
    # Column bins about one text height wide average out the letter shapes.
    binw = max(2, int(round(text_height)))
    nbins = sw // binw + 1
    key = lab.astype(np.int64) * nbins + xs // binw
    count = np.bincount(key)
    nz = np.nonzero(count >= 0.25 * binw * text_height)[0]
    if nz.size < 20:
        return None
    sum_y = np.bincount(key, weights=ys)[nz]
    sum_x = np.bincount(key, weights=xs)[nz]
    line = nz // nbins
    labels_kept = np.unique(line)
    if labels_kept.size > MAX_LINES:
        longest = labels_kept[np.argsort(-widths[labels_kept], kind="stable")[:MAX_LINES]]
        chosen = np.isin(line, longest)
        nz, sum_x, sum_y, line = nz[chosen], sum_x[chosen], sum_y[chosen], line[chosen]
    _, line_index = np.unique(line, return_inverse=True)
    return LineSamples(sum_x / count[nz], sum_y / count[nz], line_index, text_height=text_height, width=sw, height=sh)


def _basis(u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Displacement basis x^j * y^k (j = 1..3, k = 0..2) on coordinates normalised to [-1, 1]."""
    return np.stack([u**j * v**k for j in (1, 2, 3) for k in (0, 1, 2)], axis=-1)


def fit_displacement(samples: LineSamples) -> tuple[np.ndarray, float] | None:
    """Least-squares coefficients of the displacement field (in working px) and the fit's RMS residual.

    The model is ``y = Y_line + dy(x, y)``; one robust refit drops points farther than 3 MADs (bad
    centroids from pictures or merged lines). A small ridge penalty on the field's coefficients keeps terms
    that the lines do not constrain (e.g. the curvature below the last line) near zero instead of letting
    them cancel each other with huge values. Returns None when the fit is not trustworthy.
    """
    u = samples.x / max(samples.width - 1, 1) * 2 - 1
    v = samples.y / max(samples.height - 1, 1) * 2 - 1
    n_lines = int(samples.line.max()) + 1
    keep = np.ones(u.size, bool)
    n_basis = _basis(u[:1], v[:1]).shape[1]
    for _ in range(FITS):
        design = np.concatenate([np.eye(n_lines)[samples.line[keep]], _basis(u[keep], v[keep])], axis=1)
        ridge = np.zeros((n_basis, n_lines + n_basis))
        ridge[:, n_lines:] = np.eye(n_basis) * 0.05 * np.sqrt(keep.sum())
        coef, *_ = np.linalg.lstsq(
            np.concatenate([design, ridge]), np.concatenate([samples.y[keep], np.zeros(n_basis)]), rcond=None
        )
        full = np.concatenate([np.eye(n_lines)[samples.line], _basis(u, v)], axis=1)
        resid = samples.y - full @ coef
        mad = np.median(np.abs(resid[keep])) * 1.4826
        keep = np.abs(resid) <= max(3 * mad, 1.0)
    rms = float(np.sqrt(np.mean(resid[keep] ** 2)))
    spread = np.ptp(samples.y[keep]) / samples.height if keep.any() else 0.0
    # The field has 9 coefficients: it needs several long lines (labels scattered over a chart only
    # give short ones, whose noise it would happily "explain").
    x_lo = np.full(n_lines, np.inf)
    x_hi = np.full(n_lines, -np.inf)
    np.minimum.at(x_lo, samples.line[keep], samples.x[keep])
    np.maximum.at(x_hi, samples.line[keep], samples.x[keep])
    used = x_hi >= x_lo
    long_lines = int(np.sum(x_hi[used] - x_lo[used] >= 0.3 * samples.width))
    # Many short lines (table cells, form fields) also pin the field down if together they span the page.
    columns = np.zeros(samples.width + 1, bool)
    for lo, hi in zip(x_lo[used].astype(int), x_hi[used].astype(int)):
        columns[lo : hi + 1] = True
    enough_lines = long_lines >= 4 or (used.sum() >= 8 and columns.mean() >= 0.6)
    if not enough_lines or keep.sum() < 4 * (n_basis + n_lines) or spread < 0.25 or rms > 0.5 * samples.text_height:
        return None
    return coef[n_lines:], rms


def displacement_grid(
    coef: np.ndarray, width: int, height: int, scale: float, bounds: tuple[float, float, float, float], grid: int = 64
) -> np.ndarray:
    """``dy`` in full-resolution pixels on a coarse grid (at most ``grid`` x ``grid``) spread over the page; the
    remap interpolates it linearly to every pixel.

    ``bounds`` = (u0, v0, u1, v1), the normalised region the text lines covered; outside it the field is
    held constant rather than extrapolating the polynomial.
    """
    gw, gh = min(grid, width), min(grid, height)
    u, v = np.meshgrid(np.linspace(-1, 1, gw), np.linspace(-1, 1, gh))
    u = np.clip(u, bounds[0], bounds[2])
    v = np.clip(v, bounds[1], bounds[3])
    return (_basis(u, v) @ coef / scale).astype(np.float32)


def straighten(pixels: np.ndarray, work: dict[str, int] | None = None) -> tuple[np.ndarray, str, np.ndarray | None]:
    """Remove text-line curvature; returns the new pixels, what was done (``curve`` or ``none``) and the
    displacement grid it applied (:func:`displacement_grid`; None when it did nothing). ``work``: filled with the
    lines and points fitted."""
    samples = text_line_samples(pixels)
    if samples is None:
        return pixels, "none", None
    if work is not None:
        work["lines"] = int(samples.line.max()) + 1
        work["points"] = int(samples.x.size)
    fit = fit_displacement(samples)
    if fit is None:
        return pixels, "none", None
    coef, _ = fit
    h, w = pixels.shape[:2]
    scale = samples.width / w
    bounds = (
        samples.x.min() / max(samples.width - 1, 1) * 2 - 1,
        samples.y.min() / max(samples.height - 1, 1) * 2 - 1,
        samples.x.max() / max(samples.width - 1, 1) * 2 - 1,
        samples.y.max() / max(samples.height - 1, 1) * 2 - 1,
    )
    grid = displacement_grid(coef, w, h, scale, bounds)
    dy = cv2.resize(grid, (w, h), interpolation=cv2.INTER_LINEAR)
    # Bend along a line: the spread of dy across each row, in text heights (an offset or skew of the whole
    # page is harmless; a curve that varies within a line is what hurts reading).
    bend = float(np.max(np.ptp(dy, axis=1))) * scale / samples.text_height
    if bend < MIN_BEND:
        return pixels, "none", None
    map_x = np.broadcast_to(np.arange(w, dtype=np.float32)[None, :], (h, w))
    map_y = np.arange(h, dtype=np.float32)[:, None] + dy
    out = cv2.remap(pixels, np.ascontiguousarray(map_x), map_y, cv2.INTER_CUBIC, borderMode=cv2.BORDER_REPLICATE)
    return out, "curve", grid


@register
class Dewarp(Tool):
    """Perspective rectification and text-line curvature correction."""

    name = "dewarping"
    degradation = "warp"
    geometric = True
    budget_s = 1.5
    #: The sides it analyses the page at, and the text lines in the fit (two least-squares fits); the remap
    #: itself writes each output pixel once.
    work_bounds = {"outline_side": OUTLINE_SIDE, "lines_side": LINES_SIDE, "lines": MAX_LINES}
    description = (
        "Flatten a page that was photographed at an angle or is bent: a trapezoid-shaped page on a table, "
        "text lines that curve (a book page near the spine, a curled or folded sheet), or a slightly "
        "skewed page. Call it when lines of text are not straight and parallel. It crops the page from its "
        "background and squares it up when its edges are visible, and straightens curved text lines."
    )

    def apply(self, page: Page) -> Page:
        if min(page.height, page.width) < MIN_SIDE:
            return page.derive(page.pixels.copy(), f"{self.name}:too_small", work={})
        steps = []
        pixels = page.pixels
        work = {"outline_side": min(OUTLINE_SIDE, max(page.size)), "lines_side": 0, "lines": 0, "points": 0}
        matrix = grid = None
        quad = find_page_quad(pixels)
        if quad is not None:
            pixels, matrix = rectify(pixels, quad)
            steps.append("perspective")
        if min(pixels.shape[:2]) >= MIN_SIDE:
            work["lines_side"] = min(LINES_SIDE, max(pixels.shape[:2]))
            pixels, done, grid = straighten(pixels, work)
            if done != "none":
                steps.append(done)
        if not steps:
            return page.derive(page.pixels.copy(), f"{self.name}:none", work=work)
        work["pixels"] = int(pixels.shape[0] * pixels.shape[1])
        # The transform travels with the page it made (never inherited), so regions can be mapped both ways.
        warp = PageWarp(matrix, grid, page.size, (int(pixels.shape[1]), int(pixels.shape[0])))
        return page.derive(np.ascontiguousarray(pixels), f"{self.name}:{'+'.join(steps)}", work=work, warp=warp)

    def map_region(self, region: Box, before: Page, after: Page) -> Box | None:
        """Where ``region`` of the page before lies on the flattened page, through the recorded transform (None
        when ``after`` carries none: a page this tool did not make)."""
        warp = _warp_of(before, after)
        return None if warp is None else warp.map_box(region, forward=True)

    def unmap_region(self, region: Box, before: Page, after: Page) -> Box | None:
        """Where ``region`` of the flattened page lies on the page before."""
        warp = _warp_of(before, after)
        return None if warp is None else warp.map_box(region, forward=False)


def _warp_of(before: Page, after: Page) -> PageWarp | None:
    """The transform that made ``after`` from ``before``; None when ``after`` is no flattening of a page that size."""
    warp = after.meta.get("warp")
    if isinstance(warp, PageWarp) and warp.size_before == before.size and warp.size_after == after.size:
        return warp
    return None
