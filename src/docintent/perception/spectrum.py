"""Periodic patterns (moiré, screen gratings, halftone) as isolated peaks in the image spectrum.

Printed text spreads its energy smoothly over frequencies; a grating concentrates it in a few points. Each
frequency's power is compared with the mean (log) power of its neighbourhood, so smooth structure (the
fall-off of text, the anisotropic spectrum of motion blur, noise) cancels and only isolated peaks stand out. Frequencies on the two
axes are left out: text-line pitch, table rules and JPEG's 8-px block grid all put peaks there.
"""

from __future__ import annotations

import cv2
import numpy as np
import scipy.fft

from .background import LUMA


def _log_power(power: np.ndarray) -> np.ndarray:
    # A 3x3 average tames the periodogram's exponential scatter; a grating's peak spans about 3 bins anyway.
    # The box filter's running sums can leave a bin beside a huge one (the DC term) a few units of rounding below
    # zero where the power is exactly zero (a flat patch); clamped, or its log is NaN and so is every peak.
    power = np.maximum(cv2.blur(power.astype(np.float32), (3, 3)), 0.0)
    return np.log10(power + 1e-20)


def _surroundings(log_p: np.ndarray) -> np.ndarray:
    """Mean log power of the 9x9 neighbourhood of each frequency, the central 3x3 left out."""
    outer = cv2.blur(log_p, (9, 9)) * 81.0
    inner = cv2.blur(log_p, (3, 3)) * 9.0
    return (outer - inner) / 72.0


def _peak_prominence(
    log_p: np.ndarray, surroundings: np.ndarray, n: int, min_period: float, max_period: float
) -> float:
    """Largest ``log_p - surroundings`` over off-axis frequencies with periods in [min_period, max_period]."""
    ky = np.fft.fftfreq(n)[:, None] * n
    kx = np.arange(log_p.shape[1])[None, :].astype(np.float64)
    radius = np.sqrt(ky**2 + kx**2)
    sel = (radius >= n / max_period) & (radius <= n / min_period) & (np.abs(ky) > 3) & (kx > 3)
    return float((log_p - surroundings)[sel].max()) if sel.any() else 0.0


def periodic_peaks(
    pixels: np.ndarray, window: int = 512, min_period: float = 2.2, max_period: float = 16.0
) -> tuple[float, float]:
    """(luminance, colour) peak prominences, in decades, of a centred square window of an RGB image.

    Colour is the larger of the red-green and blue-green opponent channels: screen moiré fringes in colour
    because the sub-pixels of each colour sit at different phases, while black print on paper has no colour
    detail at all. Returns (0, 0) for images under 32 px.
    """
    h, w = pixels.shape[:2]
    n = min(window, h, w)
    n -= n % 2
    if n < 32:
        return 0.0, 0.0
    y0, x0 = (h - n) // 2, (w - n) // 2
    crop = pixels[y0 : y0 + n, x0 : x0 + n].astype(np.float32)
    hann = np.hanning(n).astype(np.float32)
    taper = hann[:, None] * hann[None, :]
    lum = crop @ LUMA
    channels = {
        "lum": lum,
        "rg": crop[:, :, 0] - crop[:, :, 1],
        "bg": crop[:, :, 2] - crop[:, :, 1],
    }
    spectra = {}
    for name, chan in channels.items():
        spec = scipy.fft.rfft2((chan - chan.mean()) * taper, workers=1)
        spectra[name] = (spec.real**2 + spec.imag**2).astype(np.float32)
    lum_log = _log_power(spectra["lum"])
    lum_around = _surroundings(lum_log)
    lum_peak = _peak_prominence(lum_log, lum_around, n, min_period, max_period)
    colour_peak = 0.0
    for name in ("rg", "bg"):
        log_p = _log_power(spectra[name])
        # A grey page's opponent channels hold only rounding noise: judge colour peaks against at least
        # 1 % of the luminance power around them, so that noise cannot pass for a strong pattern.
        around = np.maximum(_surroundings(log_p), lum_around - 2.0)
        colour_peak = max(colour_peak, _peak_prominence(log_p, around, n, min_period, max_period))
    return lum_peak, colour_peak
