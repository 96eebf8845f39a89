"""The paper's illumination and extent, estimated from a small copy of the page with the ink removed.

Ink is thin and dark; paper is bright and fills most of a document. A maximum filter a few percent of the
page wide replaces every glyph by the paper around it, which leaves a low-resolution map of how much light
(and which colour of light) the paper receives. From that map:

* the reference paper colour is the colour of the brightest paper (it carries the white balance);
* *paper-like* pixels share the reference's chromaticity and keep at least a fraction of its brightness,
  which separates a shaded part of the page (same colour, darker) from a desk or table around it (another
  colour) and from coloured figures;
* the page region is the largest connected paper-like area with its holes (figures, photos) filled;
* the page's own edges, where a desk shows around it, are brightness rises with no print outside them
  (:func:`page_margins`).
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

import cv2
import numpy as np

#: ITU-R BT.601 luminance weights, as in :meth:`docintent.page.Page.gray`.
LUMA = np.array([0.299, 0.587, 0.114], np.float32)


def odd(n: float, minimum: int = 3) -> int:
    """The odd integer kernel size nearest above ``n`` (at least ``minimum``)."""
    return max(minimum, int(n) | 1)


def shrink(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """Area-average ``image`` down to ``size`` = (width, height).

    OpenCV's area resize is fast only for an exact factor of two (a few ms on a 2048-px page, against
    50-160 ms for other factors), so the image is halved while it is at least twice the target; the last
    step (a factor under two) is bilinear on large images, which at such factors averages nearly the same
    pixels, and area-averaged on small ones.
    """
    tw, th = size
    out = image
    while out.shape[1] >= 2 * tw and out.shape[0] >= 2 * th and min(out.shape[:2]) >= 2:
        h2, w2 = out.shape[0] // 2, out.shape[1] // 2
        out = cv2.resize(out[: 2 * h2, : 2 * w2], (w2, h2), interpolation=cv2.INTER_AREA)
    if out.shape[1] != tw or out.shape[0] != th:
        method = cv2.INTER_LINEAR if out.shape[0] * out.shape[1] > 250_000 else cv2.INTER_AREA
        out = cv2.resize(out, (tw, th), interpolation=method)
    return out.reshape((th, tw) + image.shape[2:])


@dataclass(frozen=True, eq=False)
class PaperLight:
    """The paper background of a page at a small working size (``scale`` = small side / original side).

    ``background``: HxWx3 float32 paper colour; ``luminance``: its luminance; ``paper``: pixels that are
    open paper (not figures, not the surface the page lies on, not next to a sharp light change);
    ``page``: the filled page region; ``paper_rgb``: the reference (brightest) paper colour;
    ``chroma_distance``: per pixel, how far the background's chromaticity is from the reference's.
    """

    background: np.ndarray
    luminance: np.ndarray
    paper: np.ndarray
    _: KW_ONLY
    page: np.ndarray
    paper_rgb: np.ndarray
    chroma_distance: np.ndarray
    small: np.ndarray
    scale: float
    kernel: int

    @property
    def paper_luminance(self) -> float:
        """Luminance (0-255) of the reference paper colour."""
        return float(self.paper_rgb @ LUMA)


def chromaticity(rgb: np.ndarray) -> np.ndarray:
    """``rgb / (r + g + b)``: colour without brightness, so a shadow keeps the chromaticity of its paper."""
    rgb = np.asarray(rgb, np.float32)
    return rgb / np.maximum(rgb.sum(axis=-1, keepdims=True), 1e-3)


def estimate_paper(
    pixels: np.ndarray,
    work_side: int = 256,
    ink_kernel: float = 0.04,
    chroma_tolerance: float = 0.045,
    darkest_paper: float = 0.15,
) -> PaperLight:
    """Estimate the paper background of an RGB uint8 image (see the module docstring).

    ``ink_kernel`` is the maximum filter's width as a fraction of the working side; ``chroma_tolerance``
    the largest chromaticity difference (max over r, g, b fractions) still counted as the same paper;
    ``darkest_paper`` the least fraction of the reference brightness a shaded paper pixel may keep.
    """
    h, w = pixels.shape[:2]
    scale = min(1.0, work_side / max(h, w))
    sw, sh = max(1, round(w * scale)), max(1, round(h * scale))
    small = shrink(pixels, (sw, sh)) if scale < 1.0 else pixels.copy()
    small = small.astype(np.float32)
    k = odd(ink_kernel * max(sw, sh))
    background = cv2.dilate(small, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    background = cv2.GaussianBlur(background, (0, 0), max(0.5, k / 3.0))
    if background.ndim == 2:  # cv2 drops a trailing axis of 1-pixel images
        background = background.reshape(sh, sw, 3)
    luminance = background @ LUMA

    bright = luminance >= np.percentile(luminance, 90)
    paper_rgb = np.median(background[bright], axis=0).astype(np.float32)
    ref_lum = max(float(paper_rgb @ LUMA), 1.0)
    distance = np.abs(chromaticity(background) - chromaticity(paper_rgb)).max(axis=-1)
    paper_like = (distance < chroma_tolerance) & (luminance >= darkest_paper * ref_lum)

    # Open paper is also the brightest thing in its neighbourhood; dark grey figures fail this test while
    # the inside of a broad shadow passes it (its neighbourhood is shaded too).
    local_max = cv2.dilate(luminance, cv2.getStructuringElement(cv2.MORPH_RECT, (3 * k, 3 * k)))
    paper = paper_like & (luminance >= 0.6 * local_max.reshape(luminance.shape))
    # The paper map blends across ~k px, so the rim of anything that is not paper reads as a mixture.
    if min(sh, sw) > k:
        paper = cv2.erode(paper.astype(np.uint8), cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))).astype(bool)

    page = _largest_filled(paper_like, k)
    return PaperLight(
        background,
        luminance,
        paper,
        page=page,
        paper_rgb=paper_rgb,
        chroma_distance=distance,
        small=small,
        scale=scale,
        kernel=k,
    )


def page_margins(
    paper: PaperLight, ink: np.ndarray, band: float = 0.3, min_rise: float = 0.12, min_support: float = 0.6
) -> tuple[float, float, float, float]:
    """How far in from each image side (top, right, bottom, left; fractions of the side) the sheet's edge
    lies, or 0 where no edge shows.

    Walking in from a side, a page edge is a rise in paper brightness (desk to paper) with no print on the
    outside of it, at about the same depth along most of that side. A shadow falling from the side fails
    the test: print lies under it, or its edge crosses the page instead of following the side.
    ``ink`` is a boolean ink mask of any size (resized here to the paper map).
    """
    sh, sw = paper.luminance.shape
    if min(sh, sw) < 16:
        return (0.0, 0.0, 0.0, 0.0)
    # The plain small image, not the paper map: the map's maximum filter spreads paper over the desk.
    small = paper.small.reshape(sh, sw, 3)
    lum = cv2.medianBlur(np.ascontiguousarray(small @ LUMA).astype(np.uint8), 3).astype(np.float32)
    lum /= max(paper.paper_luminance, 1.0)
    ink_small = cv2.resize(ink.astype(np.uint8) * 255, (sw, sh), interpolation=cv2.INTER_AREA).reshape(sh, sw) > 20
    step = max(2, paper.kernel)
    depths = []
    for turns in range(4):  # top, right, bottom, left: rotate each side to the top
        L = np.rot90(lum, turns)
        marks = np.rot90(ink_small, turns)
        n = max(step + 2, int(band * L.shape[0]))
        part = L[:n]
        rise = part[step:] - part[:-step]  # brightening over ``step`` px going inward
        # only rises that start before the first print seen from the image side count: text on paper
        # rises too, but from dark ink, never from the open paper outside it
        first_ink = np.where(marks[:n].any(axis=0), np.argmax(marks[:n], axis=0), n)
        rows = np.arange(rise.shape[0])[:, None]
        rise = np.where(rows < first_ink[None, :], rise, -1.0)
        where = np.argmax(rise, axis=0)
        best = rise[where, np.arange(L.shape[1])]
        edge = where + step // 2
        cols = slice(int(0.1 * L.shape[1]), max(int(0.9 * L.shape[1]), int(0.1 * L.shape[1]) + 1))
        ok = best > min_rise
        if ok[cols].mean() >= min_support:
            depths.append(float(np.median(edge[cols][ok[cols]])) / L.shape[0])
        else:
            depths.append(0.0)
    return tuple(depths)


def _largest_filled(mask: np.ndarray, k: int) -> np.ndarray:
    """The largest connected region of ``mask`` (after closing gaps of ``k`` px) with its holes filled."""
    m = mask.astype(np.uint8)
    if m.shape[0] >= 3 and m.shape[1] >= 3:
        m = cv2.morphologyEx(m, cv2.MORPH_CLOSE, cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
    contours, _ = cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    filled = np.zeros_like(m)
    if contours:
        biggest = max(contours, key=cv2.contourArea)
        cv2.drawContours(filled, [biggest], -1, 1, thickness=-1)
    return filled.astype(bool) | (mask & (filled.sum() == 0))
