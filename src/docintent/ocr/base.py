"""The OCR interface: ``engine.read(page, region=None) -> OcrResult`` with canonical boxes.

Every box in an :class:`OcrResult` is relative to the *full* page given to :meth:`OcrEngine.read`, also when
only a region was read, so evidence found in a crop can be shown on the page it came from.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import KW_ONLY, asdict, dataclass, field
from typing import Any

import numpy as np

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
    _: KW_ONLY
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
        return cls(
            lines,
            d["engine"],
            d["page_hash"],
            region=box(d.get("region")),
            seconds=float(d.get("seconds", 0.0)),
            meta=d.get("meta") or {},
        )


class OcrEngine(ABC):
    """Base class of OCR engines. Set-up (model loading) is lazy: nothing loads until the first read."""

    #: Registry name of the engine, also part of the cache key.
    name: str = "base"
    #: Result cache (set by :func:`docintent.ocr.get_engine`; None = no caching).
    cache: Any = None
    #: Longest side the engine's text detector works at (None: it reads any shape whole). An image much longer
    #: than this and thin (a strip, a receipt) would shrink until its text vanishes, so it is read in
    #: overlapping tiles of this length along its long side.
    tile_side: int | None = None

    @abstractmethod
    def _read_array(
        self, rgb
    ) -> list[tuple[str, list[list[float]], float, list[tuple[str, list[list[float]], float]]]]:
        """Read an RGB uint8 array: ``[(line_text, line_quad_px, conf, [(word, word_quad_px, conf), ...]), ...]``."""

    def cache_key(self) -> str:
        """Identifies engine and settings in cache keys; override when options change the output."""
        return self.name

    def read(self, page: Page, region: Box | None = None, *, min_side: int = 0) -> OcrResult:
        """Read ``page`` (or only ``region`` of it). Boxes in the result refer to the full page.

        ``min_side``: upscale the crop so its shorter side is at least this many pixels (small text reads better).
        """
        key = None
        tiled = self._needs_tiles(*_read_size(page, region, min_side))
        if self.cache is not None:
            # Tiled reads are keyed apart: results cached before tiling existed held nothing for such strips.
            key = self.cache.key(self.cache_key() + ("-tiled" if tiled else ""), page.hash, region, min_side)
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
        raw = self._read_tiles(rgb) if tiled else self._read_array(rgb)
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
        result = OcrResult(
            lines, self.name, page.hash, region=region, seconds=time.perf_counter() - start, meta={"scale": scale}
        )
        if key is not None:
            self.cache.put(key, result)
        return result

    def _needs_tiles(self, width: int, height: int) -> bool:
        long, short = max(width, height), min(width, height)
        return self.tile_side is not None and long > 1.5 * self.tile_side and long >= 4 * short

    def _read_tiles(self, rgb):
        """Read a long thin image in tiles along its long side, cut where a column (row) holds no ink so words
        stay whole; where no gap is found the tiles overlap, and a line read twice is kept once (its longer
        reading). Lines are shifted back into the image's coordinates."""
        import numpy as np

        h, w = rgb.shape[:2]
        horizontal = w >= h
        found: list[tuple[str, list[list[float]], float, list]] = []
        for start, end in _tile_spans(rgb, horizontal, self.tile_side or 1280):
            crop = rgb[:, start:end] if horizontal else rgb[start:end, :]
            dx, dy = (start, 0) if horizontal else (0, start)

            def shift(quad, dx=dx, dy=dy):
                return [[float(x) + dx, float(y) + dy] for x, y in quad]

            for text, quad, conf, words in self._read_array(np.ascontiguousarray(crop)):
                found.append((text, shift(quad), conf, [(wt, shift(wq), wc) for wt, wq, wc in words]))
        return _merge_tiled_lines(found, horizontal)


#: Tiles at most this many times longer than the strip is thin: RapidOCR pads longer ones with blank space
#: (its width/height ratio 8), and that padding, not the text, then dominates the detection time.
TILE_ASPECT = 8


def _tile_spans(rgb, horizontal: bool, tile_side: int) -> list[tuple[int, int]]:
    """(start, end) of the tiles along the long side: about ``TILE_ASPECT`` x the short side each, ending in a
    blank gap near that length when there is one, else overlapping the next tile by a quarter."""
    import numpy as np

    gray = rgb.mean(axis=2) if rgb.ndim == 3 else rgb.astype(float)
    profile = gray.min(axis=0 if horizontal else 1)  # darkest pixel of each column (row) across the strip
    long, short = len(profile), gray.shape[0 if horizontal else 1]
    tile = int(min(max(TILE_ASPECT * short, 256), tile_side))
    blank = profile > (float(profile.min()) + float(np.median(profile))) / 2
    spans: list[tuple[int, int]] = []
    start = 0
    while start < long:
        end = start + tile
        if end >= long:
            spans.append((start, long))
            break
        cut = _widest_gap(blank, start + tile // 2, end)
        if cut is not None:
            spans.append((start, cut))
            start = cut
        else:
            spans.append((start, end))
            start = end - tile // 4
    return spans


def _widest_gap(blank, lo: int, hi: int, min_width: int = 3) -> int | None:
    """The middle of the widest run of blank columns in ``blank[lo:hi]`` (the gap between words rather than
    between letters), or None when no run is ``min_width`` wide."""
    best: tuple[int, int] | None = None
    run_start = None
    for i in range(lo, hi + 1):
        is_blank = i < hi and bool(blank[i])
        if is_blank and run_start is None:
            run_start = i
        elif not is_blank and run_start is not None:
            if i - run_start >= min_width and (best is None or i - run_start >= best[1] - best[0]):
                best = (run_start, i)
            run_start = None
    return None if best is None else (best[0] + best[1]) // 2


def _span(quad, axis: int) -> tuple[float, float]:
    values = [p[axis] for p in quad]
    return min(values), max(values)


def _merge_tiled_lines(lines: list, horizontal: bool) -> list:
    """Drop a line that mostly lies within a longer one from a neighbouring tile (the same text read twice)."""
    along, across = (0, 1) if horizontal else (1, 0)
    by_length = sorted(lines, key=lambda line: -(_span(line[1], along)[1] - _span(line[1], along)[0]))
    kept: list = []
    for line in by_length:
        a0, a1 = _span(line[1], along)
        c0, c1 = _span(line[1], across)
        duplicate = False
        for other in kept:
            b0, b1 = _span(other[1], along)
            d0, d1 = _span(other[1], across)
            shared_along = min(a1, b1) - max(a0, b0)
            shared_across = min(c1, d1) - max(c0, d0)
            if shared_along > 0.5 * max(a1 - a0, 1e-6) and shared_across > 0.5 * max(c1 - c0, 1e-6):
                duplicate = True
                break
        if not duplicate:
            kept.append(line)
    return sorted(
        kept,
        key=lambda line: (
            (_span(line[1], 1)[0], _span(line[1], 0)[0])
            if not horizontal
            else (_span(line[1], 0)[0], _span(line[1], 1)[0])
        ),
    )


def _read_size(page: Page, region: Box | None, min_side: int) -> tuple[int, int]:
    """Width and height of the image :meth:`OcrEngine.read` hands to the engine."""
    if region is None:
        width, height = page.width, page.height
    else:
        x0, y0, x1, y1 = region.to_pixels(page.width, page.height)
        width, height = x1 - x0, y1 - y0
    if min_side and min(width, height) < min_side:
        scale = min(min_side / min(width, height), 4.0)
        width, height = round(width * scale), round(height * scale)
    return width, height


def reading_order(lines: list) -> list:
    """Sort lines top-to-bottom, then left-to-right within a visual row (by vertical overlap)."""
    if not lines:
        return lines
    keyed = []
    for item in lines:
        quad = np.asarray(item[1], dtype=float)
        keyed.append((quad[:, 1].min(), quad[:, 1].max(), quad[:, 0].min(), item))
    keyed.sort(key=lambda k: (k[0] + k[1]) / 2)
    rows: list[list] = []
    for entry in keyed:
        if rows:
            last = rows[-1]
            top = min(e[0] for e in last)
            bottom = max(e[1] for e in last)
            overlap = min(bottom, entry[1]) - max(top, entry[0])
            if overlap > 0.5 * min(entry[1] - entry[0], bottom - top):
                last.append(entry)
                continue
        rows.append([entry])
    return [e[3] for row in rows for e in sorted(row, key=lambda e: e[2])]
