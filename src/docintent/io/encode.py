"""Resizing and encoding pages for model input."""

from __future__ import annotations

import base64

import cv2
import numpy as np

from ..page import Box, Page
from ..settings import get_settings


def resize_longest(page: Page, longest: int | None = None, *, upscale: bool = False) -> Page:
    """Resize so the longest side is ``longest`` pixels (default ``DOCINTENT_MAX_SIDE``, 2048).

    Pages already small enough are returned as they are unless ``upscale``. Downscaling uses area
    interpolation (no aliasing on text); upscaling uses cubic.
    """
    longest = longest or get_settings().max_side
    side = max(page.width, page.height)
    if side == longest or (side < longest and not upscale):
        return page
    scale = longest / side
    size = (max(1, round(page.width * scale)), max(1, round(page.height * scale)))
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
    return page.derive(cv2.resize(page.pixels, size, interpolation=interp), f"resize_longest({longest})")


def cap_pixels(page: Page, max_pixels: int) -> Page:
    """Downscale so width x height <= ``max_pixels`` (for servers with small contexts)."""
    if page.width * page.height <= max_pixels:
        return page
    scale = (max_pixels / (page.width * page.height)) ** 0.5
    size = (max(1, int(page.width * scale)), max(1, int(page.height * scale)))
    return page.derive(cv2.resize(page.pixels, size, interpolation=cv2.INTER_AREA), f"cap_pixels({max_pixels})")


def mark_box(page: Page, box: Box, color: tuple[int, int, int] = (220, 20, 60)) -> Page:
    """``page`` with ``box`` (fractions of the page) drawn as a rectangle, for people to see where an answer
    stands; line width about 0.4 % of the page's longer side.

    >>> p = mark_box(Page.from_array(np.full((100, 200, 3), 255, np.uint8)), Box(0.25, 0.2, 0.75, 0.8))
    >>> tuple(int(v) for v in p.pixels[50, 50]), tuple(int(v) for v in p.pixels[50, 100])
    ((220, 20, 60), (255, 255, 255))
    """
    pixels = page.pixels.copy()
    x0, y0, x1, y1 = box.to_pixels(page.width, page.height)
    width = max(2, round(0.004 * max(page.width, page.height)))
    cv2.rectangle(pixels, (x0, y0), (x1 - 1, y1 - 1), color, width)
    return page.derive(pixels, "mark_box")


def is_line_art(page: Page) -> bool:
    """True for rendered documents/charts (few distinct colours, flat areas): PNG keeps them crisp."""
    small = (
        cv2.resize(page.pixels, (128, 128), interpolation=cv2.INTER_NEAREST)
        if page.width * page.height > 16384
        else page.pixels
    )
    quantised = (small >> 3).reshape(-1, 3).astype(np.int32)  # 32 levels per channel
    # Distinct colours counted in a 32^3 histogram: a fifth of the CPU of sorting them (np.unique), and this
    # runs for every image a model is sent.
    codes = quantised[:, 0] * 1024 + quantised[:, 1] * 32 + quantised[:, 2]
    return int(np.count_nonzero(np.bincount(codes, minlength=32768))) < 64


def encode(page: Page, fmt: str = "auto", *, quality: int = 90) -> tuple[bytes, str]:
    """Encode as PNG or JPEG (``fmt`` "png", "jpeg" or "auto": PNG for line art, JPEG for photos).

    Returns (bytes, mime type).
    """
    fmt = fmt.lower()
    if fmt == "auto":
        fmt = "png" if is_line_art(page) else "jpeg"
    bgr = cv2.cvtColor(page.pixels, cv2.COLOR_RGB2BGR)
    if fmt == "png":
        ok, buf = cv2.imencode(".png", bgr, [cv2.IMWRITE_PNG_COMPRESSION, 6])
        mime = "image/png"
    elif fmt in ("jpeg", "jpg"):
        ok, buf = cv2.imencode(".jpg", bgr, [cv2.IMWRITE_JPEG_QUALITY, int(quality)])
        mime = "image/jpeg"
    else:
        raise ValueError(f"unknown image format {fmt!r}; use 'png', 'jpeg' or 'auto'")
    if not ok:
        raise ValueError(f"could not encode {page!r} as {fmt}")
    return buf.tobytes(), mime


def to_data_url(page: Page, fmt: str = "auto", *, quality: int = 90, longest: int | None = None) -> str:
    """A ``data:image/...;base64,`` URL of the page, resized to ``longest`` first when given."""
    if longest:
        page = resize_longest(page, longest)
    data, mime = encode(page, fmt, quality=quality)
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


#: Image formats :func:`save_page` writes, by suffix, as Pillow names them.
IMAGE_OUTPUT_FORMATS = {
    ".png": "PNG",
    ".jpg": "JPEG",
    ".jpeg": "JPEG",
    ".tif": "TIFF",
    ".tiff": "TIFF",
    ".webp": "WEBP",
    ".bmp": "BMP",
}
IMAGE_OUTPUT_SUFFIXES = tuple(IMAGE_OUTPUT_FORMATS)


def save_page(page: Page, path, *, quality: int = 92) -> None:
    """Write a page to ``path`` (format from the suffix, one of :data:`IMAGE_OUTPUT_SUFFIXES`), whole or not
    at all: through :func:`docintent.io.lock.atomic_write_bytes`, so a link is written through and a device
    is never replaced. Another suffix is a :class:`~docintent.errors.ConfigError`."""
    import io
    from pathlib import Path

    from PIL import Image

    from ..errors import ConfigError
    from .lock import atomic_write_bytes

    suffix = Path(path).suffix.lower()
    fmt = IMAGE_OUTPUT_FORMATS.get(suffix)
    if fmt is None:
        raise ConfigError(
            f"{path}: cannot write a {suffix or 'suffix-less'} image; use one of {', '.join(IMAGE_OUTPUT_SUFFIXES)}"
        )
    buffer = io.BytesIO()
    options = {"quality": quality} if fmt == "JPEG" else {}
    Image.fromarray(page.pixels).save(buffer, fmt, **options)
    atomic_write_bytes(path, buffer.getvalue())
