"""Core value types: :class:`Page` (an immutable image with provenance) and :class:`Box`.

A Page never changes. Every restoration returns a new Page whose ``ops`` record how it was made, so a
rollback is simply "keep the previous Page", and ``page.hash`` keys every cache.

>>> import numpy as np
>>> page = Page.from_array(np.zeros((4, 6), dtype=np.uint8), source="blank")
>>> page.size, page.ops
((6, 4), ())
>>> page.derive(page.pixels[:, ::-1], "mirror").ops
('mirror',)
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from typing import ClassVar

import numpy as np

from .errors import InvalidArrayError, InvalidBoxError


def to_rgb_uint8(array: np.ndarray) -> np.ndarray:
    """Convert grayscale, gray+alpha, RGBA, 16-bit, float or bool arrays to contiguous RGB uint8.

    Alpha is composited over white (documents are white paper). Floats are taken as [0, 1]; 16-bit and
    other integer types are scaled from their full range.
    """
    try:
        a = np.asarray(array)
    except (TypeError, ValueError) as err:  # ragged nested lists, objects that are no array
        raise InvalidArrayError("image array", f"not an image array ({err})") from None
    if a.ndim not in (2, 3) or a.size == 0:
        raise InvalidArrayError("image array", f"expected a 2-D or 3-D image array, got shape {a.shape}")
    if a.dtype.kind not in "biuf":
        raise InvalidArrayError("image array", f"expected numbers (bool, integer or float), got dtype {a.dtype}")
    if a.dtype == np.bool_:
        a = a.astype(np.uint8) * 255
    elif a.dtype.kind == "f":
        a = (np.clip(np.nan_to_num(a), 0.0, 1.0) * 255.0 + 0.5).astype(np.uint8)
    elif a.dtype != np.uint8:
        info = np.iinfo(a.dtype)
        lo, hi = info.min, info.max
        a = ((a.astype(np.float64) - lo) * (255.0 / (hi - lo)) + 0.5).astype(np.uint8)
    if a.ndim == 2:
        a = np.repeat(a[:, :, None], 3, axis=2)
    channels = a.shape[2]
    if channels == 1:
        a = np.repeat(a, 3, axis=2)
    elif channels == 2:  # gray + alpha
        alpha = a[:, :, 1:2].astype(np.float32) / 255.0
        gray = a[:, :, 0:1].astype(np.float32) * alpha + 255.0 * (1.0 - alpha)
        a = np.repeat((gray + 0.5).astype(np.uint8), 3, axis=2)
    elif channels == 4:
        alpha = a[:, :, 3:4].astype(np.float32) / 255.0
        a = (a[:, :, :3].astype(np.float32) * alpha + 255.0 * (1.0 - alpha) + 0.5).astype(np.uint8)
    elif channels != 3:
        raise InvalidArrayError("image array", f"expected 1 to 4 channels, got {channels}")
    return np.ascontiguousarray(a)


#: Page meta that belongs to the operation that made the page, never to the pages derived from it.
_OWN_META = frozenset({"work", "warp"})


def _frozen(a: np.ndarray) -> np.ndarray:
    a = np.ascontiguousarray(a)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class Page:
    """An immutable RGB uint8 page image, its provenance and a content hash.

    Build one with :meth:`from_array` or :func:`docintent.io.load_page`; never construct ``pixels`` by hand
    unless it already is a contiguous HxWx3 uint8 array.
    """

    pixels: np.ndarray
    ops: tuple[str, ...] = ()
    source: str | None = None
    meta: dict = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        p = self.pixels
        if not (isinstance(p, np.ndarray) and p.dtype == np.uint8 and p.ndim == 3 and p.shape[2] == 3):
            raise TypeError("Page.pixels must be an HxWx3 uint8 array; use Page.from_array to convert")
        if p.shape[0] < 1 or p.shape[1] < 1:
            raise ValueError(f"Page must have at least 1x1 pixels, got {p.shape[1]}x{p.shape[0]}")
        if p.flags.writeable or not p.flags.c_contiguous:
            # A caller-owned array: copy so later changes to it cannot reach this Page.
            object.__setattr__(self, "pixels", _frozen(p.copy()))

    @classmethod
    def from_array(cls, array: np.ndarray, *, source: str | None = None, ops: Sequence[str] = ()) -> Page:
        """A Page from any 2-D/3-D image array (converted to RGB uint8; the input is copied)."""
        converted = to_rgb_uint8(array)
        if converted is array or (isinstance(array, np.ndarray) and np.shares_memory(converted, array)):
            converted = converted.copy()
        return cls(_frozen(converted), tuple(ops), source)

    def derive(self, pixels: np.ndarray, op: str, **meta) -> Page:
        """A new Page made from this one by operation ``op`` (appended to the provenance).

        ``meta`` joins this page's; its ``work`` (what the operation that made a page did) and ``warp`` (how it
        moved the page's content) are never inherited."""
        # Tools hand over freshly computed arrays, so the new Page takes ownership without a copy.
        inherited = {k: v for k, v in self.meta.items() if k not in _OWN_META}
        return Page(_frozen(to_rgb_uint8(pixels)), self.ops + (op,), self.source, {**inherited, **meta})

    @cached_property
    def hash(self) -> str:
        """Content hash (BLAKE2b of shape and pixels, 20 hex digits); equal pixels give equal hashes."""
        h = hashlib.blake2b(digest_size=10)
        h.update(repr(self.pixels.shape).encode())
        h.update(self.pixels.tobytes())
        return h.hexdigest()

    @property
    def width(self) -> int:
        return int(self.pixels.shape[1])

    @property
    def height(self) -> int:
        return int(self.pixels.shape[0])

    @property
    def size(self) -> tuple[int, int]:
        """(width, height) in pixels."""
        return self.width, self.height

    def gray(self) -> np.ndarray:
        """Luminance as a uint8 HxW array (ITU-R BT.601 weights)."""
        import cv2

        return cv2.cvtColor(self.pixels, cv2.COLOR_RGB2GRAY)

    def crop(self, box: Box, op: str | None = None) -> Page:
        """The region ``box`` as a new Page (at least 1x1 pixel); provenance records the box."""
        x0, y0, x1, y1 = box.to_pixels(self.width, self.height)
        return self.derive(self.pixels[y0:y1, x0:x1], op or f"crop{box.as_tuple(4)}", crop_box=box.as_tuple())

    def __repr__(self) -> str:
        return f"Page({self.width}x{self.height}, hash={self.hash}, ops={list(self.ops)}, source={self.source!r})"


@dataclass(frozen=True, order=True)
class Box:
    """A region as fractions of the page it refers to: ``(x0, y0, x1, y1)`` in [0, 1], x0 < x1, y0 < y1.

    >>> Box.from_1000([100, 200, 500, 400]).as_tuple()
    (0.1, 0.2, 0.5, 0.4)
    >>> Box.from_pixels((10, 20, 30, 40), width=100, height=200).to_pixels(100, 200)
    (10, 20, 30, 40)
    """

    x0: float
    y0: float
    x1: float
    y1: float

    def __post_init__(self) -> None:
        vals = (self.x0, self.y0, self.x1, self.y1)
        if not all(np.isfinite(v) for v in vals):
            raise InvalidBoxError(vals, "box coordinates must be finite numbers")
        if not (self.x0 < self.x1 and self.y0 < self.y1):
            raise InvalidBoxError(vals, "box is degenerate: need x0 < x1 and y0 < y1")

    FULL: ClassVar[Box]  # the whole page, set below

    @classmethod
    def clamped(cls, x0: float, y0: float, x1: float, y1: float) -> Box:
        """A box clipped to the page; refuses one that lies entirely outside or has no area."""
        cx0, cy0 = min(max(x0, 0.0), 1.0), min(max(y0, 0.0), 1.0)
        cx1, cy1 = min(max(x1, 0.0), 1.0), min(max(y1, 0.0), 1.0)
        if not (cx0 < cx1 and cy0 < cy1):
            raise InvalidBoxError((x0, y0, x1, y1), "box lies outside the page or has no area")
        return cls(float(cx0), float(cy0), float(cx1), float(cy1))

    @classmethod
    def from_pixels(cls, xyxy: Sequence[float], width: int, height: int) -> Box:
        x0, y0, x1, y1 = (float(v) for v in xyxy)
        return cls.clamped(x0 / width, y0 / height, x1 / width, y1 / height)

    @classmethod
    def from_points(cls, points: Sequence[Sequence[float]], width: int, height: int) -> Box:
        """The axis-aligned box around pixel points (e.g. an OCR quadrilateral)."""
        pts = np.asarray(points, dtype=np.float64).reshape(-1, 2)
        x0, y0 = pts.min(axis=0)
        x1, y1 = pts.max(axis=0)
        x1, y1 = max(x1, x0 + 1), max(y1, y0 + 1)
        return cls.from_pixels((x0, y0, x1, y1), width, height)

    @classmethod
    def from_1000(cls, xyxy: Sequence[float]) -> Box:
        """From the 0-1000 integer convention of AgenticOCR-style prompts."""
        x0, y0, x1, y1 = (float(v) / 1000.0 for v in xyxy)
        return cls.clamped(x0, y0, x1, y1)

    #: What :meth:`parse` accepts, for messages.
    PARSE_RULE: ClassVar[str] = (
        "expected x0,y0,x1,y1 as fractions in [0, 1] or integers in 0-1000, with x0 < x1 and y0 < y1"
    )

    @classmethod
    def parse(cls, value: Sequence[float]) -> Box:
        """A region given as four fractions in [0, 1] or four whole numbers in 0-1000, with x0 < x1 and
        y0 < y1; the one rule of every interface (command line, MCP, tools). Nothing is clamped: a box that
        leaves the page, mixes the two conventions (``[0, 0, 0.5, 1000]``) or has no area is an
        :class:`~docintent.errors.InvalidBoxError`.

        >>> Box.parse([100, 250, 600, 900]).as_tuple()
        (0.1, 0.25, 0.6, 0.9)
        >>> Box.parse([0, 0, 0.5, 1000])
        Traceback (most recent call last):
        ...
        docintent.errors.InvalidBoxError: [0, 0, 0.5, 1000]: mixes fractions with 0-1000 integers: expected ...
        """
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise InvalidBoxError(value, f"a box is a list of 4 numbers: {cls.PARSE_RULE}")
        if len(value) != 4:
            raise InvalidBoxError(value, f"a box needs exactly 4 numbers (x0, y0, x1, y1): {cls.PARSE_RULE}")
        try:
            if any(isinstance(v, (bool, str, bytes)) for v in value):
                raise TypeError
            vals = [float(v) for v in value]
        except (TypeError, ValueError):
            raise InvalidBoxError(value, f"box coordinates must be numbers: {cls.PARSE_RULE}") from None
        if not all(np.isfinite(vals)):
            raise InvalidBoxError(value, f"box coordinates must be finite numbers: {cls.PARSE_RULE}")
        if all(0.0 <= v <= 1.0 for v in vals):
            box_values = vals
        elif all(0.0 <= v <= 1000.0 for v in vals):
            if not all(v == int(v) for v in vals):
                raise InvalidBoxError(value, f"mixes fractions with 0-1000 integers: {cls.PARSE_RULE}")
            box_values = [v / 1000.0 for v in vals]
        else:
            raise InvalidBoxError(value, f"lies outside the page: {cls.PARSE_RULE}")
        x0, y0, x1, y1 = box_values
        if not (x0 < x1 and y0 < y1):
            raise InvalidBoxError(value, f"has no area: {cls.PARSE_RULE}")
        return cls(x0, y0, x1, y1)

    @classmethod
    def from_model(cls, value: Sequence[float]) -> Box:
        """A box a model wrote, read by :meth:`parse`'s rule after two repairs models need: swapped corners
        are put back in order, and a box partly off the page is cut to it (within its own convention, so a box
        that mixes fractions with 0-1000 integers is still refused).

        >>> Box.from_model([800, 900, -50, 1100]).to_1000()
        (0, 900, 800, 1000)
        """
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence) or len(value) != 4:
            return cls.parse(value)  # the same message as for any malformed box
        try:
            x0, y0, x1, y1 = (float(v) for v in value)
        except (TypeError, ValueError):
            return cls.parse(value)
        if not all(np.isfinite((x0, y0, x1, y1))):
            return cls.parse(value)
        x0, x1, y0, y1 = min(x0, x1), max(x0, x1), min(y0, y1), max(y0, y1)
        top = 1.0 if max(abs(x0), abs(y0), abs(x1), abs(y1)) <= 1.0 else 1000.0
        if x0 >= top or y0 >= top or x1 <= 0 or y1 <= 0:
            raise InvalidBoxError(value, f"lies outside the page: {cls.PARSE_RULE}")
        return cls.parse([min(max(v, 0.0), top) for v in (x0, y0, x1, y1)])

    def to_pixels(self, width: int, height: int) -> tuple[int, int, int, int]:
        """Integer pixel bounds (x0, y0, x1, y1), at least one pixel wide and high."""
        x0 = min(int(round(self.x0 * width)), width - 1)
        y0 = min(int(round(self.y0 * height)), height - 1)
        x1 = max(int(round(self.x1 * width)), x0 + 1)
        y1 = max(int(round(self.y1 * height)), y0 + 1)
        return x0, y0, min(x1, width), min(y1, height)

    def to_1000(self) -> tuple[int, int, int, int]:
        return tuple(int(round(v * 1000)) for v in self.as_tuple())  # type: ignore[return-value]

    def as_tuple(self, ndigits: int | None = None) -> tuple[float, float, float, float]:
        t = (self.x0, self.y0, self.x1, self.y1)
        return tuple(round(v, ndigits) for v in t) if ndigits is not None else t  # type: ignore[return-value]

    @property
    def width(self) -> float:
        return self.x1 - self.x0

    @property
    def height(self) -> float:
        return self.y1 - self.y0

    @property
    def area(self) -> float:
        return self.width * self.height

    @property
    def center(self) -> tuple[float, float]:
        return (self.x0 + self.x1) / 2, (self.y0 + self.y1) / 2

    def union(self, other: Box) -> Box:
        return Box(min(self.x0, other.x0), min(self.y0, other.y0), max(self.x1, other.x1), max(self.y1, other.y1))

    @staticmethod
    def enclosing(boxes: Iterable[Box]) -> Box:
        """The smallest box holding every one of ``boxes`` (at least one).

        >>> Box.enclosing([Box(0.1, 0.2, 0.3, 0.4), Box(0.2, 0.1, 0.5, 0.3)]).as_tuple()
        (0.1, 0.1, 0.5, 0.4)
        """
        given = list(boxes)
        if not given:
            raise ValueError("Box.enclosing needs at least one box")
        box = given[0]
        for other in given[1:]:
            box = box.union(other)
        return box

    def intersection_area(self, other: Box) -> float:
        w = min(self.x1, other.x1) - max(self.x0, other.x0)
        h = min(self.y1, other.y1) - max(self.y0, other.y0)
        return max(w, 0.0) * max(h, 0.0)

    def iou(self, other: Box) -> float:
        inter = self.intersection_area(other)
        return inter / (self.area + other.area - inter) if inter > 0 else 0.0

    def expand(self, dx: float, dy: float | None = None) -> Box:
        """Grow by ``dx``/``dy`` (fractions of the page) on each side, clipped to the page."""
        dy = dx if dy is None else dy
        return Box.clamped(self.x0 - dx, self.y0 - dy, self.x1 + dx, self.y1 + dy)

    def within(self, outer: Box) -> Box:
        """Map this box, given relative to ``outer``, to the coordinates ``outer`` is relative to."""
        return Box(
            outer.x0 + self.x0 * outer.width,
            outer.y0 + self.y0 * outer.height,
            outer.x0 + self.x1 * outer.width,
            outer.y0 + self.y1 * outer.height,
        )

    def relative_to(self, outer: Box) -> Box:
        """Map this box into the coordinates of ``outer`` (inverse of :meth:`within`), clipped."""
        return Box.clamped(
            (self.x0 - outer.x0) / outer.width,
            (self.y0 - outer.y0) / outer.height,
            (self.x1 - outer.x0) / outer.width,
            (self.y1 - outer.y0) / outer.height,
        )


Box.FULL = Box(0.0, 0.0, 1.0, 1.0)
