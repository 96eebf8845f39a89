"""The OCR interface: ``engine.read(page, region=None) -> OcrResult`` with canonical boxes.

Every box in an :class:`OcrResult` is relative to the *full* page given to :meth:`OcrEngine.read`, also when
only a region was read, so evidence found in a crop can be shown on the page it came from.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass, field
from typing import Any

from ..page import Box, Page


@dataclass(frozen=True)
class OcrWord:
    """One recognised word."""

    text: str
    box: Box
    confidence: float


@dataclass(frozen=True)
class OcrLine:
    """One recognised text line with its words (words may be empty if the engine gives none)."""

    text: str
    box: Box
    confidence: float
    words: tuple[OcrWord, ...] = ()


@dataclass(frozen=True)
class OcrResult:
    """The lines an engine read on a page (or a region of it), in reading order."""

    lines: tuple[OcrLine, ...]
    engine: str
    page_hash: str
    region: Box | None = None
    seconds: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def text(self) -> str:
        """All lines joined by newlines."""
        return "\n".join(line.text for line in self.lines)

    @property
    def words(self) -> list[OcrWord]:
        return [w for line in self.lines for w in line.words]

    @property
    def mean_confidence(self) -> float:
        """Character-weighted mean confidence over lines (0 when nothing was read)."""
        total = sum(len(l.text) for l in self.lines)
        return sum(l.confidence * len(l.text) for l in self.lines) / total if total else 0.0

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["text"] = self.text
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> OcrResult:
        def box(b: dict | None) -> Box:
            return Box(**b) if b else Box.FULL

        lines = tuple(
            OcrLine(
                l["text"],
                box(l["box"]),
                float(l["confidence"]),
                tuple(OcrWord(w["text"], box(w["box"]), float(w["confidence"])) for w in l.get("words", ())),
            )
            for l in d["lines"]
        )
        return cls(lines, d["engine"], d["page_hash"], box(d.get("region")), float(d.get("seconds", 0.0)), d.get("meta") or {})


class OcrEngine(ABC):
    """Base class of OCR engines. Set-up (model loading) is lazy: nothing loads until the first read."""

    #: Registry name of the engine, also part of the cache key.
    name: str = "base"
    #: Result cache (set by :func:`docintent.ocr.get_engine`; None = no caching).
    cache: Any = None

    @abstractmethod
    def _read_array(self, rgb) -> list[tuple[str, list[list[float]], float, list[tuple[str, list[list[float]], float]]]]:
        """Read an RGB uint8 array: ``[(line_text, line_quad_px, conf, [(word, word_quad_px, conf), ...]), ...]``."""

    def cache_key(self) -> str:
        """Identifies engine and settings in cache keys; override when options change the output."""
        return self.name

    def read(self, page: Page, region: Box | None = None, *, min_side: int = 0) -> OcrResult:
        """Read ``page`` (or only ``region`` of it). Boxes in the result refer to the full page.

        ``min_side``: upscale the crop so its shorter side is at least this many pixels (small text reads better).
        """
        key = None
        if self.cache is not None:
            key = self.cache.key(self.cache_key(), page.hash, region, min_side)
            hit = self.cache.get(key)
            if hit is not None:
                return hit
        start = time.perf_counter()
        target = page if region is None else page.crop(region)
        scale = 1.0
        rgb = target.pixels
        if min_side and min(target.width, target.height) < min_side:
            import cv2

            scale = min(min_side / min(target.width, target.height), 4.0)
            rgb = cv2.resize(rgb, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC)
        raw = self._read_array(rgb)
        h, w = rgb.shape[:2]
        frame = region or Box.FULL

        def to_box(quad: list[list[float]]) -> Box:
            return Box.from_points(quad, w, h).within(frame)

        lines = tuple(
            OcrLine(
                text,
                to_box(quad),
                float(conf),
                tuple(OcrWord(wt, to_box(wq), float(wc)) for wt, wq, wc in words),
            )
            for text, quad, conf, words in raw
            if text.strip()
        )
        result = OcrResult(lines, self.name, page.hash, region, time.perf_counter() - start, {"scale": scale})
        if key is not None:
            self.cache.put(key, result)
        return result
