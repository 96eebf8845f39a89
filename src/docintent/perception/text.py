"""Ink, text scale, text lines and edge widths: the measurements that blur and warp severities rest on.

Everything here is relative to the text itself. A 2-px edge is sharp for 40-px headings and mush for 8-px
footnotes, and a 5-px bend is nothing on a 3000-px page but a lot for one line of 10-px text, so blur and
curvature are expressed in units of the measured text height.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass

import cv2
import numpy as np

from .background import odd


@dataclass(frozen=True)
class Ink:
    """Dark marks on the paper at one working size.

    ``mask``: ink pixels; ``contrast``: 1 - (darkest ink / local paper), the ink's depth in [0, 1];
    ``horizontal``: whether text lines run along the image rows; ``line_pitch``: distance between text
    lines (working px), which blur leaves unchanged, or 0 when the text shows no regular lines;
    ``mark_height``: median height of ink marks across the line direction (working px, 0 without text).
    """

    mask: np.ndarray
    contrast: float
    horizontal: bool
    _: KW_ONLY
    line_pitch: float
    mark_height: float

    @property
    def text_height(self) -> float:
        """The text scale in working px.

        Two thirds of the line pitch for text set with ordinary leading; tables and forms space their rows
        wider, so the median mark height caps it (but never below a quarter of the pitch, since blur can
        break marks into fragments). The mark height alone where no line pitch could be measured.
        """
        if self.line_pitch <= 0:
            return self.mark_height
        if self.mark_height <= 0:
            return self.line_pitch / 1.5
        return float(np.clip(self.mark_height, self.line_pitch / 4.0, self.line_pitch / 1.5))

    @property
    def line_height(self) -> float:
        """Two thirds of the line pitch (the mark height without one): the scale at which whole lines are
        traced, so that neighbouring lines stay apart."""
        return self.line_pitch / 1.5 if self.line_pitch > 0 else self.mark_height


def find_ink(
    gray: np.ndarray, paper_luminance: np.ndarray, inside: np.ndarray | None = None, min_contrast: float = 0.12
) -> Ink:
    """Ink where a pixel is darker than its local paper by more than half the ink depth.

    The depth is read from the darkest ink: the cores of the thickest strokes, which keep their darkness
    under blur, so that blur and low contrast stay apart.

    ``gray`` and ``paper_luminance`` have the same shape (the paper map upsampled to ``gray``). Dividing by
    the local paper makes the threshold indifferent to shadows and exposure.
    """
    ratio = gray.astype(np.float32) / np.maximum(paper_luminance, 1.0)
    if inside is not None and inside.any():
        ratio[~inside] = 1.0  # the surface around the page is not ink, whatever its texture
    # Ink depth: the darkest ink, read two ways (every 2nd pixel each way is plenty for a percentile).
    # The darkest 0.2 % of all pixels are the cores of the thickest strokes, fills and bars, which keep
    # their darkness under blur (so blur and low contrast stay apart); on a crop with little ink that
    # percentile lands on paper, and the darkest 5 % of clearly dark pixels answers instead.
    sample = ratio[::2, ::2]
    depth = float(1.0 - np.percentile(sample, 0.2)) if sample.size else 0.0
    dark = sample[sample < 0.9]
    if dark.size >= 30:
        depth = max(depth, float(1.0 - np.percentile(dark, 5)))
    if depth < min_contrast:
        return Ink(np.zeros(gray.shape, bool), max(depth, 0.0), True, line_pitch=0.0, mark_height=0.0)
    mask = ratio < 1.0 - 0.5 * depth
    # Judge the line direction in the central half of the picture, which lies on the page even when a
    # desk shows around it (the page's own outline would otherwise dominate the profiles).
    h, w = mask.shape
    centre = mask[h // 4 : max(3 * h // 4, h // 4 + 1), w // 4 : max(3 * w // 4, w // 4 + 1)]
    # Text lines make the row profile alternate between ink and gaps; across the lines it stays even.
    # Profiles are taken in four strips, within which even bent lines are nearly straight.
    horizontal = bool(_profile_contrast(centre) >= _profile_contrast(centre.T))
    darkness = np.clip(1.0 - ratio, 0.0, 1.0)
    pitch = line_pitch(darkness if horizontal else darkness.T)
    return Ink(mask, depth, horizontal, line_pitch=pitch, mark_height=_text_height(mask, horizontal))


def line_pitch(darkness: np.ndarray, strips: int = 16, min_rise: float = 0.1) -> float:
    """Distance (px) between text lines that run along the rows of ``darkness``, or 0 if not periodic.

    The page is cut into vertical strips so that tilted or bent lines still line up within each strip;
    the autocorrelations of the strips' row profiles are averaged and the first clear peak is the pitch.
    """
    h, w = darkness.shape
    n = int(np.clip(w // 32, 1, strips))
    if h < 12:
        return 0.0
    width = w // n
    profiles = darkness[:, : n * width].reshape(h, n, width).mean(axis=2)
    # Remove what varies slower than text lines (paragraph gaps, figures, margins) before correlating.
    trend = cv2.blur(profiles.astype(np.float32), (1, max(15, h // 10) | 1), borderType=cv2.BORDER_REFLECT)
    profiles = profiles - trend.reshape(profiles.shape)
    spec = np.fft.rfft(profiles, n=2 * h, axis=0)
    acf = np.fft.irfft(spec.real**2 + spec.imag**2, axis=0)[:h]
    energy = acf[0].sum()
    if energy <= 1e-9:
        return 0.0
    acf = acf.sum(axis=1) / energy
    # The first peak that rises clearly above the dip before it (mixed type sizes keep it well below 1;
    # a later, larger bump is paragraph structure, not line pitch).
    a = acf[: h // 2]
    if a.size < 5:
        return 0.0
    peaks = np.nonzero((a[1:-1] >= a[:-2]) & (a[1:-1] > a[2:]))[0] + 1
    dips = np.minimum.accumulate(a)
    good = peaks[(peaks > 2) & (a[peaks] > 0.0) & (a[peaks] - dips[peaks] >= min_rise)]
    if good.size == 0:
        return 0.0
    lag = int(good[0])
    # Parabolic refinement to sub-pixel lag.
    a, b, c = acf[lag - 1], acf[lag], acf[min(lag + 1, h - 1)]
    denom = a - 2 * b + c
    return float(lag + (0.5 * (a - c) / denom if abs(denom) > 1e-12 else 0.0))


def _profile_contrast(mask: np.ndarray, strips: int = 4) -> float:
    """Mean coefficient of variation of the row profiles of ``strips`` vertical strips of ``mask``."""
    h, w = mask.shape
    n = max(1, min(strips, w // 8))
    width = w // n
    if width == 0 or h == 0:
        return 0.0
    profiles = mask[:, : n * width].reshape(h, n, width).mean(axis=2)
    return float(np.mean(profiles.std(axis=0) / np.maximum(profiles.mean(axis=0), 1e-6)))


def _text_height(mask: np.ndarray, horizontal: bool) -> float:
    if mask.shape[0] < 3 or mask.shape[1] < 3:
        return 0.0
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    if n <= 1:
        return 0.0
    stats = stats[1:]
    across = stats[:, cv2.CC_STAT_HEIGHT] if horizontal else stats[:, cv2.CC_STAT_WIDTH]
    along = stats[:, cv2.CC_STAT_WIDTH] if horizontal else stats[:, cv2.CC_STAT_HEIGHT]
    limit = 0.25 * (mask.shape[0] if horizontal else mask.shape[1])
    area = stats[:, cv2.CC_STAT_AREA]
    # Glyphs and words: at least 3 px of ink, not a rule or a frame (long and thin, page-sized, or a
    # sparse outline such as a table grid, whose ink covers little of its bounding box).
    keep = (area >= 3) & (across >= 2) & (across <= limit) & (along <= 40 * across) & (area >= 0.12 * across * along)
    if keep.sum() < 3:
        return 0.0
    # Marks of at least 6 px: specks and i-dots do not pull the median down.
    keep &= area >= 6
    if keep.sum() < 3:
        return 0.0
    return float(np.median(across[keep]))


@dataclass(frozen=True)
class TextLines:
    """Centre lines of text lines at a scale where text is about 8 px high.

    ``bend``: median over lines of how far a line departs from a straight line (twice the RMS residual of a
    straight fit), in text heights; ``angle_spread``: spread (10th to 90th percentile) of the lines'
    directions in degrees, which a skewed but flat page does not have; ``count``: lines measured.
    """

    bend: float
    angle_spread: float
    count: int


def text_lines(ink: Ink, target_height: float = 8.0) -> TextLines:
    """Trace text lines by smearing ink along the line direction and fit each one.

    Lines are traced at the scale the line pitch gives; when that finds too few lines (tilted lines can
    make paragraph structure pass for the pitch), once more at the scale of the marks.
    """
    found = _trace_lines(ink, ink.line_height, target_height)
    alternative = 2.5 * ink.mark_height
    if found.count < 5 and ink.mark_height > 0 and abs(alternative - ink.line_height) > 0.2 * ink.line_height:
        retry = _trace_lines(ink, alternative, target_height)
        if retry.count > found.count:
            return retry
    return found


def _trace_lines(ink: Ink, line_height: float, target_height: float) -> TextLines:
    if line_height <= 0:
        return TextLines(0.0, 0.0, 0)
    mask = ink.mask if ink.horizontal else ink.mask.T
    f = float(np.clip(target_height / line_height, 0.1, 1.0))
    if f < 1.0:
        size = (max(1, round(mask.shape[1] * f)), max(1, round(mask.shape[0] * f)))
        mask = cv2.resize(mask.astype(np.uint8) * 255, size, interpolation=cv2.INTER_AREA) > 80
    th = max(line_height * f, 2.0)
    h, w = mask.shape
    if h < 8 or w < 16:
        return TextLines(0.0, 0.0, 0)
    smear = cv2.dilate(mask.astype(np.uint8), cv2.getStructuringElement(cv2.MORPH_RECT, (odd(1.5 * th), 1)))
    n, labels, stats, _ = cv2.connectedComponentsWithStats(smear, connectivity=8)
    width = stats[:, cv2.CC_STAT_WIDTH]
    height = stats[:, cv2.CC_STAT_HEIGHT]
    good = (width >= max(10 * th, 0.15 * w)) & (height >= 0.5 * th) & (width >= 3 * height)
    good[0] = False
    if not good.any():
        return TextLines(0.0, 0.0, 0)
    # Per (line, column): the mean row of the ink, gathered in one pass with bincount.
    rank = np.full(n, -1, np.int64)
    rank[good] = np.arange(int(good.sum()))
    lab = rank[labels]
    ys, xs = np.nonzero((lab >= 0) & mask)
    key = lab[ys, xs] * w + xs
    count = np.bincount(key, minlength=int(good.sum()) * w).reshape(-1, w)
    ysum = np.bincount(key, weights=ys, minlength=int(good.sum()) * w).reshape(-1, w)
    chunk = max(2, int(round(2 * th)))  # average over about two text heights: ascenders and gaps even out
    nchunks = w // chunk
    if nchunks < 3:
        return TextLines(0.0, 0.0, 0)
    cc = count[:, : nchunks * chunk].reshape(len(count), nchunks, chunk).sum(axis=2)
    cy = ysum[:, : nchunks * chunk].reshape(len(count), nchunks, chunk).sum(axis=2)
    centres = (np.arange(nchunks) + 0.5) * chunk
    bends, angles, lengths = [], [], []
    for line_counts, line_sums in zip(cc, cy):
        ok = line_counts >= 0.5 * th
        if ok.sum() < 4:
            continue
        x = centres[ok]
        y = line_sums[ok] / line_counts[ok]
        slope, intercept = np.polyfit(x, y, 1)
        residual = y - (slope * x + intercept)
        bends.append(2.0 * float(np.sqrt(np.mean(residual**2))) / th)
        angles.append(float(np.degrees(np.arctan(slope))))
        lengths.append(float(x[-1] - x[0]))
    if len(bends) < 5:  # a few long marks (rules, axes, a plotted curve) are no evidence of a bent page
        return TextLines(0.0, 0.0, len(bends))
    bends_a, lengths_a = np.asarray(bends), np.asarray(lengths)
    order = np.argsort(bends_a)
    cum = np.cumsum(lengths_a[order])
    bend = float(bends_a[order][np.searchsorted(cum, 0.5 * cum[-1])])
    spread = float(np.percentile(angles, 90) - np.percentile(angles, 10)) if len(angles) >= 4 else 0.0
    return TextLines(bend, spread, len(bends))


def gradient_magnitude(gx: np.ndarray, gy: np.ndarray) -> np.ndarray:
    """``sqrt(gx**2 + gy**2)`` per pixel, the same whatever the arrays' place in memory.

    OpenCV's ``magnitude`` takes a vectorised square root that is one bit off on exact values (an edge of 1.75
    reads 1.7500001) and a scalar one that is not, and which pixels take which path follows the arrays' alignment
    in memory. That alignment changes from process to process, so the same page measured an edge's peak, its edge
    count and its blur differently in another process. NumPy rounds each float32 product, sum and square root by
    IEEE rules, in its vector and scalar paths alike.

    >>> float(gradient_magnitude(np.float32([[1.75]]), np.float32([[0.0]]))[0, 0])
    1.75
    """
    return np.sqrt(gx * gx + gy * gy)


def edge_width(gray: np.ndarray, text_height: float, min_contrast: float, ink_depth: float = 1.0) -> tuple[float, int]:
    """Median width (px) of ink edges, taken in the worst of four gradient directions, and edges used.

    At an edge whose luminance changes by C over w pixels the steepest gradient is about C / w, so
    ``local contrast / peak gradient`` measures each edge's width without knowing the ink's darkness. The
    worst direction catches motion blur, which smears edges across the motion only. A perfectly sharp
    edge reads about 2 px (the central difference spans two pixels).
    """
    g = gray.astype(np.float32)
    if min(g.shape) < 5:
        return 0.0, 0
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3, scale=0.125)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3, scale=0.125)
    mag = gradient_magnitude(gx, gy)
    k = odd(min(max(1.2 * text_height, 7), 41))
    box = cv2.getStructuringElement(cv2.MORPH_RECT, (k, k))
    local_paper = cv2.dilate(g, box)
    contrast = local_paper - cv2.erode(g, box)
    peak = mag >= cv2.dilate(mag, np.ones((3, 3), np.uint8))
    # Only edges of ink: pixels near marks darker than halfway between the local paper (the local maximum)
    # and the ink (``ink_depth`` below paper), so a texture on the paper (moiré, noise) cannot pass for
    # blurred edges.
    ink = (g < (1.0 - 0.5 * ink_depth) * local_paper).astype(np.uint8)
    # Strokes, not fills: an opening wider than any stroke keeps only filled areas (bars, solid headers,
    # photos), whose inside carries no edge and whose texture (noise, moiré) would read as blur.
    fills = cv2.morphologyEx(
        ink, cv2.MORPH_OPEN, cv2.getStructuringElement(cv2.MORPH_RECT, (odd(0.5 * text_height),) * 2)
    )
    ink &= 1 - fills
    near_ink = cv2.dilate(ink, np.ones((5, 5), np.uint8)).astype(bool)
    sel = peak & near_ink & (contrast >= min_contrast) & (mag >= 0.05 * contrast)
    if sel.sum() < 20:
        return 0.0, int(sel.sum())
    widths = contrast[sel] / np.maximum(mag[sel], 1e-3)
    direction = (np.arctan2(gy[sel], gx[sel]) % np.pi) / np.pi * 4.0
    bins = np.minimum(direction.astype(np.int64), 3)
    medians = [float(np.median(widths[bins == b])) for b in range(4) if (bins == b).sum() >= 10]
    return (max(medians) if medians else float(np.median(widths))), int(sel.sum())
