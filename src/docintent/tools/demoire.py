"""Moiré removal: notch out isolated periodic peaks in the luminance spectrum, smooth the chroma."""

from __future__ import annotations

import cv2
import numpy as np
from scipy import fft as sfft

from ..page import Page
from .base import Tool
from .registry import register

MIN_SIDE = 16
#: A spectral bin is a moiré peak when its log-magnitude exceeds the local spectral floor by this much
#: (natural log; 2.0 = 7.4 times the mean of its surroundings) ...
PEAK_LOG_RATIO = 2.0
#: ... and it is the peak of a sinusoid at least this strong (grey levels), which text alone never gives.
MIN_AMPLITUDE = 2.0
#: ... and it shows in the colour channels with at least this amplitude (grey levels).
MIN_CHROMA_AMPLITUDE = 0.4
#: Frequencies below this (cycles per pixel) carry text lines and letter shapes; they are never notched.
PROTECT_FREQ = 0.06
#: At most this many coloured peaks (the strongest), and as many colourless ones checked as their sums and
#: differences, are notched: a screen's moiré shows as a handful (1-5 on our captures), and the check compares
#: every colourless peak with every pair of coloured ones, so without a bound a page full of fine periodic print
#: would cost the cube of its peak count.
MAX_PEAKS = 64


def moire_peaks(gray: np.ndarray, chroma: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Find moiré peaks: returns ``(spectrum, mask)`` where ``mask`` is True on the rfft2 bins to notch.

    A peak is a bin that is a 3x3 local maximum of the magnitude, stands :data:`PEAK_LOG_RATIO` above the
    mean log-magnitude around it, is as strong as a sinusoid of :data:`MIN_AMPLITUDE` grey levels
    (``|F| >= A * h * w / 2``), lies beyond
    :data:`PROTECT_FREQ` from DC, and off the two frequency axes (which hold the regular line spacing and
    straight table rules of documents). With ``chroma`` (an HxWx2 array of the colour-difference
    channels), a peak must also carry colour: at least :data:`MIN_CHROMA_AMPLITUDE` grey levels at the same
    frequency. Screen moiré comes from the display's red/green/blue sub-pixel grid and is coloured, while
    the regular structure of black-on-white text (identical rows, aligned table columns) is not. Colourless
    peaks at the sum or difference of two coloured ones (intermodulation) are kept as moiré. Of each kind only
    the :data:`MAX_PEAKS` strongest are kept, so the work has a bound whatever the page shows.
    """
    h, w = gray.shape
    # The DC term is left in: it lies inside the protected low frequencies and is never notched.
    spec = sfft.rfft2(gray.astype(np.float32, copy=False), workers=2)  # callers pass fast FFT sizes
    mag = np.abs(spec)
    strong = mag >= MIN_AMPLITUDE * h * w / 2.0
    if not strong.any():  # a clean page ends here, cheaply
        return spec, np.zeros(mag.shape, bool)
    logmag = np.log1p(mag)
    floor = cv2.blur(logmag, (15, 15))
    rows, cols = np.nonzero(strong & (mag >= cv2.dilate(mag, np.ones((3, 3), np.uint8))))
    fy = sfft.fftfreq(h)[rows]
    fx = cols / float(w)
    keep = (logmag[rows, cols] - floor[rows, cols] > PEAK_LOG_RATIO) & (np.hypot(fx, fy) > PROTECT_FREQ)
    keep &= (cols > 2) & (np.abs(fy) * h > 2)  # off the axes
    rows, cols = rows[keep], cols[keep]
    mask = np.zeros(mag.shape, bool)
    if chroma is None:
        rows, cols = _strongest(mag, rows, cols)
        mask[rows, cols] = True
        return spec, mask
    if rows.size == 0:
        return spec, mask
    c = chroma.astype(np.float32, copy=False)
    cmag = np.hypot(np.abs(sfft.rfft2(c[:, :, 0], workers=2)), np.abs(sfft.rfft2(c[:, :, 1], workers=2)))
    cmag = cv2.dilate(cmag.astype(np.float32), np.ones((3, 3), np.uint8))
    coloured = cmag[rows, cols] >= MIN_CHROMA_AMPLITUDE * h * w / 2.0
    # The strongest coloured peaks are the moiré; colourless ones are kept only as their sums and differences.
    rows_c, cols_c = _strongest(mag, rows[coloured], cols[coloured])
    rows_o, cols_o = _strongest(mag, rows[~coloured], cols[~coloured])
    mask[rows_c, cols_c] = True
    # Sums and differences of two coloured peaks are moiré too (the camera's tone curve mixes them), even though
    # they carry little colour of their own.
    base = np.stack([sfft.fftfreq(h)[rows_c] * h, cols_c.astype(np.float64)], axis=1)  # in bins
    if len(base) >= 2 and len(rows_o):
        other = np.stack([sfft.fftfreq(h)[rows_o] * h, cols_o.astype(np.float64)], axis=1)
        combos = np.concatenate([base[:, None] + base[None], base[:, None] - base[None]]).reshape(-1, 2)
        for i in range(len(other)):
            near = np.minimum(np.abs(combos - other[i]).max(axis=1), np.abs(combos + other[i]).max(axis=1))
            if near.min() <= 2.0:
                mask[rows_o[i], cols_o[i]] = True
    return spec, mask


def _strongest(mag: np.ndarray, rows: np.ndarray, cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The :data:`MAX_PEAKS` strongest of the bins ``(rows, cols)`` (all of them when there are fewer)."""
    if rows.size <= MAX_PEAKS:
        return rows, cols
    order = np.argsort(-mag[rows, cols], kind="stable")[:MAX_PEAKS]
    return rows[order], cols[order]


def notch(spec: np.ndarray, mask: np.ndarray, floor_radius: int = 3) -> np.ndarray:
    """Attenuate the spectrum around every masked bin with a smooth (Gaussian-edged) notch."""
    k = 2 * floor_radius + 1
    grown = cv2.dilate(mask.astype(np.uint8), cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)))
    soft = cv2.GaussianBlur(grown.astype(np.float32), (0, 0), floor_radius / 2)
    return spec * (1.0 - np.clip(soft * 1.5, 0.0, 1.0))


@register
class Demoire(Tool):
    """Spectral notch filtering of luminance plus chroma smoothing."""

    name = "demoire"
    degradation = "moire"
    budget_s = 0.3
    #: Peaks notched (coloured ones and their sums and differences); the work is otherwise four FFTs of the
    #: page (luminance, two chroma channels, inverse).
    work_bounds = {"peaks": 2 * MAX_PEAKS}
    description = (
        "Remove moiré from a photo of a screen or monitor: wavy or rippled bands, fine stripes or rainbow-"
        "coloured fringes over the content. Call it when such regular patterns overlay the text. It removes "
        "the periodic pattern from the image's frequency spectrum (keeping the frequencies text is made "
        "of) and smooths the colour fringes while keeping brightness edges sharp."
    )

    def apply(self, page: Page) -> Page:
        if min(page.height, page.width) < MIN_SIDE:
            return page.derive(page.pixels.copy(), f"{self.name}:too_small", work={})
        ycc = cv2.cvtColor(page.pixels, cv2.COLOR_RGB2YCrCb)
        h, w = page.height, page.width
        # Pad (by reflection, which adds no edge spike to the spectrum) to sizes the FFT handles fast:
        # a prime factor like 181 in 1448 makes it several times slower.
        fh, fw = sfft.next_fast_len(h, real=True), sfft.next_fast_len(w, real=True)
        padded = cv2.copyMakeBorder(ycc, 0, fh - h, 0, fw - w, cv2.BORDER_REFLECT)
        spec, mask = moire_peaks(padded[:, :, 0], padded[:, :, 1:])
        peaks = int(mask.sum())
        luma = ycc[:, :, 0]
        if peaks:
            cleaned = sfft.irfft2(notch(spec, mask), s=padded.shape[:2], workers=2)[:h, :w]
            luma = np.clip(cleaned + 0.5, 0, 255).astype(np.uint8)
        # Moiré is mostly colour fringes of a few pixels' period; text is (nearly) colourless, so chroma
        # can be smoothed hard without softening letters. Smoothing at quarter size is fast and enough.
        small = cv2.resize(ycc[:, :, 1:], (max(1, w // 4), max(1, h // 4)), interpolation=cv2.INTER_AREA)
        small = cv2.GaussianBlur(small, (0, 0), 1.0)
        chroma = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR).reshape(h, w, 2)
        out = cv2.cvtColor(cv2.merge([luma, chroma[:, :, 0], chroma[:, :, 1]]), cv2.COLOR_YCrCb2RGB)
        return page.derive(out, self.name, moire_peaks=peaks, work={"peaks": peaks, "fft_pixels": fh * fw})
