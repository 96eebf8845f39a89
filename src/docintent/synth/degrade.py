"""Synthetic capture degradations for benchmarks and tests.

Every function has the same shape: ``fn(img, rng, severity=0.5) -> new image``, where ``img`` is an RGB
uint8 array, ``rng`` a :class:`numpy.random.Generator` (all randomness comes from it, so a seed reproduces
the image) and ``severity`` a float in [0, 1] (0: barely visible, 1: the worst a phone capture plausibly
gives). The input is never modified; the result is a new uint8 RGB array of the same shape (``rotate``
swaps height and width for quarter turns).

>>> import numpy as np
>>> page = np.full((64, 48, 3), 255, np.uint8)
>>> shadow(page, np.random.default_rng(0), 0.8).shape
(64, 48, 3)
"""

from __future__ import annotations

import cv2
import numpy as np

__all__ = [
    "perspective",
    "curl",
    "shadow",
    "defocus",
    "motion_blur",
    "low_contrast",
    "color_cast",
    "stain",
    "uneven_light",
    "moire",
    "glare",
    "crumple",
    "distance",
    "noise",
    "jpeg",
    "rotate",
    "DEGRADATIONS",
]


def _check(img: np.ndarray, severity: float) -> tuple[np.ndarray, float]:
    a = np.asarray(img)
    if a.ndim != 3 or a.shape[2] != 3 or a.dtype != np.uint8:
        raise ValueError(f"expected an HxWx3 uint8 RGB array, got shape {a.shape} dtype {a.dtype}")
    return a, float(np.clip(severity, 0.0, 1.0))


def _to_uint8(a: np.ndarray) -> np.ndarray:
    return np.clip(a + 0.5, 0, 255).astype(np.uint8)


def _background(shape: tuple[int, int], rng: np.random.Generator) -> np.ndarray:
    """A dark, slightly textured table surface (wood / desk colours) to lay the page on."""
    h, w = shape
    red = rng.uniform(50.0, 140.0)
    base = np.array([red, red * rng.uniform(0.65, 0.85), red * rng.uniform(0.4, 0.6)], np.float32)
    small = rng.normal(0.0, 12.0, (max(h // 16, 2), max(w // 16, 2), 1)).astype(np.float32)
    texture = cv2.resize(small, (w, h), interpolation=cv2.INTER_CUBIC)
    if texture.ndim == 2:
        texture = texture[:, :, None]
    return _to_uint8(base[None, None, :] + texture)


def perspective(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """The page photographed at an angle: shrunk onto a dark table, corners moved independently.

    The output has the input's size; the page occupies roughly 70-85 % of it and its corners move by up to
    ``12 % * severity`` of the side length, so the page edges stay visible against the background.
    """
    a, s = _check(img, severity)
    h, w = a.shape[:2]
    margin = 0.08 + 0.04 * s
    jitter = 0.12 * s
    base = np.array([[margin, margin], [1 - margin, margin], [1 - margin, 1 - margin], [margin, 1 - margin]])
    moved = base + rng.uniform(-jitter, jitter, size=(4, 2))
    moved = np.clip(moved, 0.01, 0.99)
    src = np.float32([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]])
    dst = np.float32(moved * [w - 1, h - 1])
    matrix = cv2.getPerspectiveTransform(src, dst)
    out = _background((h, w), rng)
    warped = cv2.warpPerspective(a, matrix, (w, h), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT)
    mask = cv2.warpPerspective(np.full((h, w), 255, np.uint8), matrix, (w, h), flags=cv2.INTER_LINEAR)
    alpha = (mask.astype(np.float32) / 255.0)[:, :, None]
    return _to_uint8(warped * alpha + out * (1 - alpha))


def curl(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """A curled / book-bound page: text lines bend along a smooth cylinder-like vertical displacement.

    The displacement is ``A(y) * profile(x)`` with a quadratic-plus-cubic profile across the width, so lines
    near the top and bottom bend differently (as they do when a page lifts off a book spine), and the
    horizontal foreshortening of a cylinder squeezes the side that bends most. ``A`` reaches
    ``4 % * severity`` of the page height. Uncovered areas are filled with paper white.
    """
    a, s = _check(img, severity)
    h, w = a.shape[:2]
    amp = 0.04 * s * h
    xs = np.linspace(-1.0, 1.0, w, dtype=np.float32)
    ys = np.linspace(-1.0, 1.0, h, dtype=np.float32)
    c2 = rng.uniform(0.6, 1.0)
    c3 = rng.uniform(-0.5, 0.5)
    profile = c2 * xs**2 + c3 * xs**3
    profile -= profile.mean()
    tilt = rng.uniform(0.6, 1.0)
    vary = tilt + (1.0 - tilt) * ys  # the bend grows toward the bottom (or top) of the page
    if rng.random() < 0.5:
        vary = vary[::-1].copy()
    dy = amp * vary[:, None] * profile[None, :]
    # cylinder foreshortening: where the page slopes, horizontal distances look shorter
    if w < 3 or h < 3:
        return a.copy()
    slope = amp * np.gradient(profile)  # d(dy)/dx in pixels per pixel
    squeeze = np.cumsum(1.0 / np.sqrt(1.0 + slope**2)).astype(np.float32)
    squeeze = (squeeze - squeeze[0]) / max(squeeze[-1] - squeeze[0], 1e-6) * (w - 1)
    inv_x = np.interp(np.arange(w, dtype=np.float32), squeeze, np.arange(w, dtype=np.float32)).astype(np.float32)
    map_x = np.broadcast_to(inv_x[None, :], (h, w)).astype(np.float32)
    map_y = (np.arange(h, dtype=np.float32)[:, None] - dy).astype(np.float32)
    return cv2.remap(a, map_x, map_y, cv2.INTER_LINEAR, borderMode=cv2.BORDER_CONSTANT, borderValue=(255, 255, 255))


def shadow(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """A cast shadow (a soft-edged dark polygon, e.g. a hand or phone) plus an uneven light gradient.

    The shadow darkens by up to ``80 % * severity``; the gradient by up to ``45 % * severity`` across the page.
    The shadow is slightly blue-tinted, as shade under daylight is.
    """
    a, s = _check(img, severity)
    h, w = a.shape[:2]
    light = np.ones((h, w), np.float32)
    # linear falloff in a random direction
    angle = rng.uniform(0, 2 * np.pi)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    ramp = np.cos(angle) * xx / max(w, 1) + np.sin(angle) * yy / max(h, 1)
    ramp = (ramp - ramp.min()) / max(float(ramp.max() - ramp.min()), 1e-6)
    light *= 1.0 - 0.45 * s * ramp
    # a polygon entering from one side
    mask = np.zeros((h, w), np.uint8)
    side = int(rng.integers(4))
    depth = rng.uniform(0.3, 0.6)
    if side == 0:
        pts = [[0, 0], [w * depth, 0], [w * depth * rng.uniform(0.5, 1.2), h], [0, h]]
    elif side == 1:
        pts = [[w, 0], [w * (1 - depth), 0], [w * (1 - depth * rng.uniform(0.5, 1.2)), h], [w, h]]
    elif side == 2:
        pts = [[0, 0], [w, 0], [w, h * depth], [0, h * depth * rng.uniform(0.5, 1.2)]]
    else:
        pts = [[0, h], [w, h], [w, h * (1 - depth)], [0, h * (1 - depth * rng.uniform(0.5, 1.2))]]
    cv2.fillPoly(mask, [np.int32(pts)], 255)
    soft = max(3, int(0.03 * max(h, w))) | 1
    shade = cv2.GaussianBlur(mask.astype(np.float32) / 255.0, (soft, soft), 0)
    darken = 0.8 * s * rng.uniform(0.8, 1.0)
    light *= 1.0 - darken * shade
    tint = np.array([1.0 - 0.08 * s, 1.0 - 0.04 * s, 1.0], np.float32)
    field = light[:, :, None] * (1.0 - shade[:, :, None] * (1.0 - tint[None, None, :]))
    return _to_uint8(a.astype(np.float32) * field)


def uneven_light(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """Uneven lighting without a hard shadow edge: a smooth random light field (gradient + off-centre falloff)
    that darkens parts of the page by up to ``65 % * severity``."""
    a, s = _check(img, severity)
    h, w = a.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    xx /= max(w, 1)
    yy /= max(h, 1)
    angle = rng.uniform(0, 2 * np.pi)
    ramp = np.cos(angle) * xx + np.sin(angle) * yy
    ramp = (ramp - ramp.min()) / max(float(np.ptp(ramp)), 1e-6)
    cx, cy = rng.uniform(0.0, 1.0, 2)
    falloff = np.sqrt((xx - cx) ** 2 + (yy - cy) ** 2) / np.sqrt(2.0)
    field = 0.55 * ramp + 0.45 * falloff
    field = (field - field.min()) / max(float(np.ptp(field)), 1e-6)
    light = 1.0 - 0.65 * s * field
    return _to_uint8(a.astype(np.float32) * light[:, :, None])


def _disk(radius: float) -> np.ndarray:
    r = max(radius, 0.5)
    n = int(np.ceil(r)) * 2 + 1
    yy, xx = np.mgrid[0:n, 0:n].astype(np.float32) - n // 2
    # anti-aliased disk: coverage falls linearly over one pixel at the rim
    k = np.clip(r + 0.5 - np.sqrt(xx**2 + yy**2), 0.0, 1.0)
    return (k / k.sum()).astype(np.float32)


def defocus(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """Out-of-focus blur: convolution with a uniform disk of radius ``0.8 + 4.2 * severity`` px (+-10 %)."""
    a, s = _check(img, severity)
    radius = (0.8 + 4.2 * s) * rng.uniform(0.9, 1.1)
    return cv2.filter2D(a, -1, _disk(radius), borderType=cv2.BORDER_REPLICATE)


def motion_kernel(length: float, angle_deg: float) -> np.ndarray:
    """A normalised linear motion-blur kernel of ``length`` px at ``angle_deg`` (0 = horizontal)."""
    length = max(float(length), 1.0)
    n = int(np.ceil(length)) | 1
    n = max(n, 3)
    k = np.zeros((n * 4, n * 4), np.float32)  # drawn at 4x and downsampled for sub-pixel accuracy
    c = (n * 4 - 1) / 2.0
    dx = np.cos(np.deg2rad(angle_deg)) * (length * 4 - 4) / 2.0
    dy = -np.sin(np.deg2rad(angle_deg)) * (length * 4 - 4) / 2.0
    p0 = (int(round((c - dx) * 16)), int(round((c - dy) * 16)))
    p1 = (int(round((c + dx) * 16)), int(round((c + dy) * 16)))
    cv2.line(k, p0, p1, 1.0, thickness=4, lineType=cv2.LINE_AA, shift=4)
    k = cv2.resize(k, (n, n), interpolation=cv2.INTER_AREA)
    return (k / k.sum()).astype(np.float32)


def motion_blur(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """Camera shake: a straight motion kernel of ``3 + 13 * severity`` px at a random angle."""
    a, s = _check(img, severity)
    length = (3.0 + 13.0 * s) * rng.uniform(0.9, 1.1)
    angle = rng.uniform(0.0, 180.0)
    return cv2.filter2D(a, -1, motion_kernel(length, angle), borderType=cv2.BORDER_REPLICATE)


def low_contrast(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """A dim, washed-out capture: the range is squeezed by up to ``75 % * severity`` and shifted darker."""
    a, s = _check(img, severity)
    keep = 1.0 - 0.75 * s * rng.uniform(0.85, 1.0)
    centre = 128.0 + rng.uniform(-30.0, 10.0) * s
    out = centre + (a.astype(np.float32) - 128.0) * keep
    return _to_uint8(out)


def color_cast(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """Wrong white balance: per-channel gains (warm tungsten or cool shade light) up to ``40 % * severity``."""
    a, s = _check(img, severity)
    warm = rng.random() < 0.5
    direction = np.array([1.0, 0.15, -1.0] if warm else [-1.0, -0.1, 1.0], np.float32)
    gains = 1.0 + 0.2 * s * direction * rng.uniform(0.8, 1.2, 3)
    gains = gains / gains.max()
    return _to_uint8(a.astype(np.float32) * gains[None, None, :])


def stain(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """Coffee / water stains: a few soft brownish blotches with darker rims, multiplied onto the page."""
    a, s = _check(img, severity)
    h, w = a.shape[:2]
    body = np.zeros((h, w), np.float32)
    rim = np.zeros((h, w), np.float32)
    for _ in range(int(rng.integers(1, 4))):
        centre = (int(rng.uniform(0, w)), int(rng.uniform(0, h)))
        axes = (max(1, int(rng.uniform(0.08, 0.25) * w)), max(1, int(rng.uniform(0.08, 0.25) * h)))
        ang = float(rng.uniform(0, 180))
        cv2.ellipse(body, centre, axes, ang, 0, 360, 1.0, -1)
        cv2.ellipse(rim, centre, axes, ang, 0, 360, 1.0, max(1, int(0.01 * max(h, w))))
    soft = max(3, int(0.02 * max(h, w))) | 1
    body = cv2.GaussianBlur(body, (soft, soft), 0)
    rim = cv2.GaussianBlur(rim, (soft, soft), 0)
    colour = np.array([0.2, 0.4, 0.7], np.float32)  # brown absorbs blue most, red least
    absorb = np.clip(0.35 * s * body + 0.3 * s * rim, 0.0, 0.9)
    field = 1.0 - absorb[:, :, None] * colour[None, None, :]
    return _to_uint8(a.astype(np.float32) * field)


def moire(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """Screen moiré: interference gratings with colour fringes, as when photographing a monitor.

    Two or three sinusoidal gratings with periods of 3-8 px at random orientations are added with a
    different phase per colour channel (the sub-pixel layout), each with an amplitude of up to ``60 * severity``
    grey levels, modulated by a slow beat so the bands are stronger in some places than others.
    """
    a, s = _check(img, severity)
    h, w = a.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    pattern = np.zeros((h, w, 3), np.float32)
    for _ in range(int(rng.integers(2, 4))):
        period = rng.uniform(3.0, 8.0)
        theta = rng.uniform(0, np.pi)
        f = 2 * np.pi / period
        phase = f * (np.cos(theta) * xx + np.sin(theta) * yy)
        offsets = rng.uniform(0, 2 * np.pi) + np.array([0.0, 2.1, 4.2]) * rng.uniform(0.6, 1.0)
        for c in range(3):
            pattern[:, :, c] += np.cos(phase + offsets[c])
    beat_period = rng.uniform(0.3, 0.8) * max(h, w)
    beat = 0.6 + 0.4 * np.cos(2 * np.pi * (xx + 0.7 * yy) / beat_period)
    pattern *= (150.0 * s / 2.5) * beat[:, :, None]
    return _to_uint8(a.astype(np.float32) + pattern)


def glare(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """Specular glare from a lamp or window on glossy paper: one bright elliptical hot spot that washes the
    page out towards white (its core reaches near saturation, text inside it fades), a softer halo around it,
    and a gentle light falloff across the rest of the page.

    The hot spot's radius is ``6-14 %`` of the longer side, its core blends ``55 + 43 * severity`` % of the
    way to white; outside the halo the page is only dimmed by at most ``20 % * severity`` towards one side.
    """
    a, s = _check(img, severity)
    h, w = a.shape[:2]
    if h < 2 or w < 2:
        return a.copy()
    # the fields are smooth, so they are computed at 1/4 scale and enlarged
    q = 4
    sh, sw = (h + q - 1) // q, (w + q - 1) // q
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    cy, cx = rng.uniform(0.2, 0.8) * sh, rng.uniform(0.2, 0.8) * sw
    radius = rng.uniform(0.06, 0.14) * max(sh, sw)
    angle = rng.uniform(0, np.pi)
    ratio = rng.uniform(1.3, 2.2)
    dx, dy = xx - cx, yy - cy
    u = (np.cos(angle) * dx + np.sin(angle) * dy) / ratio
    v = -np.sin(angle) * dx + np.cos(angle) * dy
    d2 = (u * u + v * v) / (radius * radius)
    core = np.exp(-(d2**2))  # flat-topped: a plateau of full strength, then a fast fall
    halo = np.exp(-d2 / 6.0)
    strength = np.clip((0.55 + 0.43 * s) * core + 0.25 * s * halo, 0.0, 0.99)
    ramp_angle = rng.uniform(0, 2 * np.pi)
    ramp = np.cos(ramp_angle) * xx / sw + np.sin(ramp_angle) * yy / sh
    ramp = (ramp - ramp.min()) / max(float(np.ptp(ramp)), 1e-6)
    dim = 1.0 - 0.2 * s * ramp * (1.0 - halo)
    strength = cv2.resize(strength, (w, h), interpolation=cv2.INTER_LINEAR)[:, :, None]
    dim = cv2.resize(dim.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)[:, :, None]
    lit = a.astype(np.float32) * dim
    # a warm-white light source: the red and green channels saturate first
    white = np.array([255.0, 252.0, 244.0], np.float32)
    return _to_uint8(lit + (white - lit) * strength)


def crumple(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """Paper that was crumpled and smoothed out again: a random height field of facets and ridges that
    shifts the content locally (lines wobble by up to ``0.6 % * severity`` of the page size), shades each
    facet by its slope towards a light, and draws sharp crease lines where facets meet.

    Built from a few random creases (straight lines across the page with a ridge profile) plus smooth
    noise, all at 1/4 scale, so it costs a few array operations whatever the page size.
    """
    a, s = _check(img, severity)
    h, w = a.shape[:2]
    if h < 4 or w < 4:
        return a.copy()
    q = 4
    sh, sw = (h + q - 1) // q, (w + q - 1) // q
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    height = np.zeros((sh, sw), np.float32)
    creases = np.zeros((sh, sw), np.float32)
    for _ in range(int(rng.integers(6, 12))):
        theta = rng.uniform(0, np.pi)
        px, py = rng.uniform(0, sw), rng.uniform(0, sh)
        dist = np.cos(theta) * (xx - px) + np.sin(theta) * (yy - py)
        depth = rng.uniform(0.4, 1.0) * (1 if rng.random() < 0.5 else -1)
        height += depth * np.abs(dist) / max(sh, sw) * 8.0  # a ridge (or valley) along the crease
        creases += np.exp(-((dist / 0.9) ** 2)) * rng.uniform(0.5, 1.0)
    smooth = cv2.GaussianBlur(rng.normal(0, 1, (sh, sw)).astype(np.float32), (0, 0), max(sh, sw) / 30)
    height = height - cv2.GaussianBlur(height, (0, 0), max(sh, sw) / 6) + smooth * 0.8
    gy, gx = np.gradient(height)
    light = np.array([rng.uniform(-1, 1), rng.uniform(-1, 1)], np.float32)
    light /= max(float(np.hypot(*light)), 1e-6)
    shade = 1.0 - np.clip((gx * light[0] + gy * light[1]) * 6.0 * s, -0.25, 0.35)
    shade *= 1.0 - 0.3 * s * np.clip(creases, 0, 1)
    amp = 0.006 * s * max(h, w)
    scale = amp / max(float(np.abs(height).max()), 1e-6)
    dx = cv2.resize((height * scale).astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    dy = cv2.resize(
        (np.roll(height, sh // 3, axis=0) * scale).astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR
    )
    gyy, gxx = np.indices((h, w), dtype=np.float32)
    moved = cv2.remap(a, gxx + dx, gyy + dy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    shade = cv2.resize(shade.astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    return cv2.multiply(moved, cv2.merge([shade] * 3), dtype=cv2.CV_8U)


def distance(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """The page photographed from further away with a small sensor: the page fills only ``85 - 35 * severity``
    % of the frame (a table around it), and detail is lost as if it had been taken at
    ``1 / (1 + 1.5 * severity)`` of the resolution (downsampled, then enlarged again), with a slight blur.
    """
    a, s = _check(img, severity)
    h, w = a.shape[:2]
    if h < 8 or w < 8:
        return a.copy()
    fill = (0.85 - 0.35 * s) * rng.uniform(0.95, 1.05)
    ph, pw = max(1, int(round(h * fill))), max(1, int(round(w * fill)))
    out = _background((h, w), rng)
    y0 = int(rng.uniform(0.25, 0.75) * (h - ph))
    x0 = int(rng.uniform(0.25, 0.75) * (w - pw))
    out[y0 : y0 + ph, x0 : x0 + pw] = cv2.resize(a, (pw, ph), interpolation=cv2.INTER_AREA)
    factor = 1.0 + 1.5 * s
    small = cv2.resize(out, (max(1, int(w / factor)), max(1, int(h / factor))), interpolation=cv2.INTER_AREA)
    out = cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR)
    return cv2.GaussianBlur(out, (0, 0), 0.5 + 0.5 * s)


def noise(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """Sensor noise: additive Gaussian noise with sigma ``2 + 18 * severity`` grey levels."""
    a, s = _check(img, severity)
    sigma = 2.0 + 18.0 * s
    return _to_uint8(a.astype(np.float32) + rng.normal(0.0, sigma, a.shape).astype(np.float32))


def jpeg(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """JPEG compression at quality ``90 - 80 * severity`` (+-3), decoded back to RGB."""
    a, s = _check(img, severity)
    quality = int(np.clip(round(90 - 80 * s + rng.uniform(-3, 3)), 5, 95))
    ok, buf = cv2.imencode(".jpg", cv2.cvtColor(a, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, quality])
    if not ok:  # pragma: no cover - cv2 only fails on impossible input shapes
        raise ValueError("JPEG encoding failed")
    return cv2.cvtColor(cv2.imdecode(buf, cv2.IMREAD_COLOR), cv2.COLOR_BGR2RGB)


def rotate(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """A page captured sideways or upside down: a random turn of 90, 180 or 270 degrees clockwise.

    ``severity`` is ignored (a turn is all or nothing); use ``np.rot90`` directly for a chosen angle.
    """
    a, _ = _check(img, severity)
    turns = int(rng.integers(1, 4))
    return np.ascontiguousarray(np.rot90(a, -turns))


#: Degradation family (as in :data:`docintent.tools.DEGRADATIONS`) -> the functions that simulate it.
DEGRADATIONS = {
    "warp": (perspective, curl, crumple),
    "shadow": (shadow,),
    "blur": (defocus, motion_blur, distance),
    "appearance": (low_contrast, color_cast, stain, uneven_light, glare),
    "moire": (moire,),
    "orientation": (rotate,),
    "noise": (noise, jpeg),
}
