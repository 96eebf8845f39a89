"""Deblurring: pick the blur kernel that best explains a text-rich patch, then Wiener-deconvolve the page.

The kernel is chosen from a small bank (Gaussian, defocus disks, straight motion at 12 angles), the best
three refined by a few degrees and fractions of a pixel. For each
candidate the patch is deconvolved and scored by how *two-toned* it became: sharp print is paper and ink,
with few pixels in between, while both leftover blur and the ringing of a wrong (too large) kernel add
in-between values and overshoot. The page is only changed when the best kernel beats "no deconvolution"
clearly, so an already sharp page is left alone.
"""

from __future__ import annotations

from functools import lru_cache

import cv2
import numpy as np
from scipy import fft as sfft

from ..page import Page
from .base import Tool
from .registry import register

MIN_SIDE = 32
#: Side of the square analysis patch (px) and the reflected border around it.
PATCH = 192
PATCH_PAD = 24
#: Noise-to-signal ratio of the Wiener filter: larger is smoother and rings less.
NSR = 0.01
#: The best kernel must lower the patch's score by this fraction versus no deconvolution.
MIN_GAIN = 0.08
#: Weight of overshoot (values beyond the ink/paper levels, i.e. ringing) in the score.
OVERSHOOT_WEIGHT = 2.0
#: Coarse candidates whose neighbourhoods are refined.
REFINED = 3


def disk_kernel(radius: float) -> np.ndarray:
    """A normalised, anti-aliased uniform disk (defocus) of ``radius`` px."""
    n = int(np.ceil(radius)) * 2 + 1
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) - n // 2
    k = np.clip(radius + 0.5 - np.sqrt(xx**2 + yy**2), 0.0, 1.0)
    return (k / k.sum()).astype(np.float32)


def motion_kernel(length: float, angle_deg: float) -> np.ndarray:
    """A normalised straight motion kernel of ``length`` px at ``angle_deg`` (0 = horizontal)."""
    n = max(int(np.ceil(length)) | 1, 3)
    big = np.zeros((n * 4, n * 4), np.float32)  # drawn 4x larger, then area-averaged, for sub-pixel length
    c = (n * 4 - 1) / 2.0
    dx = np.cos(np.deg2rad(angle_deg)) * (length * 4 - 4) / 2.0
    dy = -np.sin(np.deg2rad(angle_deg)) * (length * 4 - 4) / 2.0
    p0 = (int(round((c - dx) * 16)), int(round((c - dy) * 16)))
    p1 = (int(round((c + dx) * 16)), int(round((c + dy) * 16)))
    cv2.line(big, p0, p1, 1.0, thickness=4, lineType=cv2.LINE_AA, shift=4)
    k = cv2.resize(big, (n, n), interpolation=cv2.INTER_AREA)
    return (k / k.sum()).astype(np.float32)


def gaussian_kernel(sigma: float) -> np.ndarray:
    """A normalised 2-D Gaussian kernel (out-of-focus blur of a good lens) with standard deviation ``sigma``."""
    g = cv2.getGaussianKernel(int(6 * sigma) | 1, sigma).astype(np.float32)
    return g @ g.T


def make_kernel(kind: str, size: float, angle: float = 0.0) -> np.ndarray:
    """A kernel by family: ``gauss`` (sigma), ``disk`` (radius) or ``motion`` (length, angle)."""
    if kind == "gauss":
        return gaussian_kernel(size)
    if kind == "disk":
        return disk_kernel(size)
    return motion_kernel(size, angle)


def kernel_name(kind: str, size: float, angle: float = 0.0) -> str:
    """The name recorded in the op, e.g. ``disk3.5`` or ``motion10@45`` (length 10 px at 45 degrees)."""
    return f"{kind}{size:g}@{angle:g}" if kind == "motion" else f"{kind}{size:g}"


@lru_cache(maxsize=1)
def kernel_bank() -> tuple[tuple[str, float, float], ...]:
    """The coarse candidates as ``(kind, size, angle)``: 4 Gaussians, 7 disks, 7 motion lengths x 12 angles."""
    bank: list[tuple[str, float, float]] = []
    bank += [("gauss", s, 0.0) for s in (0.8, 1.2, 1.7, 2.4)]
    bank += [("disk", r, 0.0) for r in (1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0)]
    bank += [("motion", float(n), float(a)) for n in (4, 6, 8, 10, 13, 16, 20) for a in range(0, 180, 15)]
    return tuple(bank)


def refinements(kind: str, size: float, angle: float) -> list[tuple[str, float, float]]:
    """Finer candidates around a coarse one (a few degrees and a fraction of a pixel matter for long kernels)."""
    if kind == "motion":
        return [
            ("motion", max(2.0, size + dl), (angle + da) % 180.0)
            for dl in (-1.5, 0.0, 1.5)
            for da in (-10.0, -5.0, 0.0, 5.0, 10.0)
            if dl or da
        ]
    step = 0.2 if kind == "gauss" else 0.25
    return [(kind, max(0.5, size + d * step), 0.0) for d in (-2, -1, 1, 2)]


def kernel_spectrum(kernel: np.ndarray, shape: tuple[int, int]) -> np.ndarray:
    """rfft2 of ``kernel`` centred at the origin of an array of ``shape`` (circular convolution)."""
    kh, kw = kernel.shape
    padded = np.zeros(shape, np.float32)
    padded[:kh, :kw] = kernel
    padded = np.roll(padded, (-(kh // 2), -(kw // 2)), axis=(0, 1))
    return sfft.rfft2(padded, workers=2)


def _wiener_filters(candidates, shape: tuple[int, int]) -> np.ndarray:
    spectra = np.stack([kernel_spectrum(make_kernel(*c), shape) for c in candidates])
    return (np.conj(spectra) / (np.abs(spectra) ** 2 + NSR)).astype(np.complex64)


@lru_cache(maxsize=2)
def _bank_filters(shape: tuple[int, int]) -> np.ndarray:
    return _wiener_filters(kernel_bank(), shape)


def two_tone_score(x: np.ndarray, ink: float, paper: float) -> np.ndarray | float:
    """Fraction of in-between pixels plus weighted overshoot beyond [ink, paper]; lower is sharper.

    ``x`` is one image (returns a float) or a stack of images (returns one score per image).
    """
    span = max(paper - ink, 1.0)
    axes = tuple(range(x.ndim - 2, x.ndim))
    between = ((x > ink + 0.15 * span) & (x < paper - 0.15 * span)).mean(axis=axes)
    overshoot = (np.maximum(ink - x, 0) + np.maximum(x - paper, 0)).mean(axis=axes) / span
    score = between + OVERSHOOT_WEIGHT * overshoot
    return float(score) if np.ndim(score) == 0 else score


def text_patch(gray: np.ndarray, size: int) -> np.ndarray:
    """The ``size`` x ``size`` window with the most edge energy (where the text is)."""
    h, w = gray.shape
    size = min(size, h, w)
    small = cv2.resize(gray, (max(1, w // 4), max(1, h // 4)), interpolation=cv2.INTER_AREA)
    edges = np.abs(cv2.Sobel(small, cv2.CV_32F, 1, 0)) + np.abs(cv2.Sobel(small, cv2.CV_32F, 0, 1))
    s = max(1, size // 4)
    energy = cv2.boxFilter(edges, -1, (s, s), normalize=False, borderType=cv2.BORDER_CONSTANT)
    y, x = np.unravel_index(int(np.argmax(energy)), energy.shape)
    y0 = int(np.clip(y * 4 - size // 2, 0, h - size))
    x0 = int(np.clip(x * 4 - size // 2, 0, w - size))
    return gray[y0 : y0 + size, x0 : x0 + size]


def most_candidates() -> int:
    """The most kernels :func:`estimate_kernel` tries: the coarse bank and the refinements of the best
    :data:`REFINED` (a motion kernel has the most), whatever the page."""
    per_coarse = max(len(refinements(*c)) for c in kernel_bank())
    return len(kernel_bank()) + REFINED * per_coarse


def estimate_kernel(gray: np.ndarray) -> tuple[str, np.ndarray | None, float, int]:
    """Choose the blur kernel for a grayscale page: ``(name, kernel or None, relative score gain, kernels
    tried)``.

    Every coarse candidate is tried on the text patch; the :data:`REFINED` best are refined (length, angle,
    radius) and the best of all wins. ``None`` means no candidate beat leaving the page as it is by
    :data:`MIN_GAIN`.
    """
    patch = text_patch(gray.astype(np.float32), PATCH)
    ink, paper = np.percentile(patch, [1, 99])
    if paper - ink < 20:  # a blank or flat patch says nothing about blur
        return "flat", None, 0.0, 0
    padded = cv2.copyMakeBorder(patch, PATCH_PAD, PATCH_PAD, PATCH_PAD, PATCH_PAD, cv2.BORDER_REFLECT)
    spectrum = sfft.rfft2(padded)

    def score(filters: np.ndarray) -> np.ndarray:
        restored = sfft.irfft2(spectrum[None] * filters, s=padded.shape, axes=(1, 2), workers=2)
        return np.asarray(two_tone_score(restored[:, PATCH_PAD:-PATCH_PAD, PATCH_PAD:-PATCH_PAD], ink, paper))

    candidates = list(kernel_bank())
    scores = list(score(_bank_filters(padded.shape)))
    finer = [r for i in np.argsort(scores)[:REFINED] for r in refinements(*candidates[i])]
    candidates += finer
    scores += list(score(_wiener_filters(finer, padded.shape)))
    best = int(np.argmin(scores))
    baseline = two_tone_score(patch, ink, paper)
    gain = (baseline - scores[best]) / max(baseline, 1e-6)
    name = kernel_name(*candidates[best])
    if gain < MIN_GAIN:
        return name, None, float(gain), len(candidates)
    return name, make_kernel(*candidates[best]), float(gain), len(candidates)


def wiener_deconvolve(gray: np.ndarray, kernel: np.ndarray, nsr: float = NSR) -> np.ndarray:
    """Wiener deconvolution of a float image, reflect-padded so the borders do not ring."""
    h, w = gray.shape
    pad = 2 * max(kernel.shape)
    fh = sfft.next_fast_len(h + 2 * pad, real=True)
    fw = sfft.next_fast_len(w + 2 * pad, real=True)
    padded = cv2.copyMakeBorder(gray, pad, fh - h - pad, pad, fw - w - pad, cv2.BORDER_REFLECT)
    spectrum = kernel_spectrum(kernel, padded.shape)
    power = spectrum.real**2 + spectrum.imag**2
    spectrum.imag *= -1  # conjugate in place
    spectrum /= power + nsr
    out = sfft.irfft2(sfft.rfft2(padded, workers=2) * spectrum, s=padded.shape, workers=2)
    return out[pad : pad + h, pad : pad + w].astype(np.float32)


@register
class Deblur(Tool):
    """Blind Wiener deconvolution with a kernel chosen from a small bank."""

    name = "deblurring"
    degradation = "blur"
    budget_s = 0.3
    #: Kernels tried and the side of the analysed patch; the deconvolution itself is two FFTs of the page.
    work_bounds = {"candidates": most_candidates(), "patch_side": PATCH}
    description = (
        "Sharpen a blurred page: out-of-focus capture (soft, fuzzy letters) or camera shake (letters "
        "smeared or doubled in one direction). Call it when text is readable in outline but too soft to "
        "read reliably. It estimates the blur (focus or motion length and direction) and reverses it by "
        "deconvolution; a page that is already sharp is left unchanged."
    )

    def apply(self, page: Page) -> Page:
        if min(page.height, page.width) < MIN_SIDE:
            return page.derive(page.pixels.copy(), f"{self.name}:too_small", work={})
        ycc = cv2.cvtColor(page.pixels, cv2.COLOR_RGB2YCrCb)
        gray = ycc[:, :, 0].astype(np.float32)
        name, kernel, gain, tried = estimate_kernel(gray)
        work = {"candidates": tried, "patch_side": min(PATCH, page.height, page.width), "pixels": 0}
        if kernel is None:
            return page.derive(page.pixels.copy(), f"{self.name}:sharp", blur_kernel=None, work=work)
        sharp = wiener_deconvolve(gray, kernel)
        work["pixels"] = page.width * page.height
        # Deconvolve luminance only and keep the chroma: 3x cheaper, and colour (which blur barely changes
        # on documents) is kept. Replacing Y adds the same correction to R, G and B.
        ycc[:, :, 0] = np.clip(sharp + 0.5, 0, 255).astype(np.uint8)
        out = cv2.cvtColor(ycc, cv2.COLOR_YCrCb2RGB)
        return page.derive(out, f"{self.name}:{name}", blur_kernel=name, blur_gain=round(gain, 3), work=work)
