"""Reading one question's pages: detect text lines once per page state, recognise each line crop once.

A question's pages are the capture and the states restorations make of it. Most restorations are
photometric (deshadowing, deblurring, appearance, demoire): they change how text looks, not where it is, so the
line boxes found on the page before carry over to the page after, and only the lines the question needs (those
in its evidence region) are recognised again. Geometric tools (rotations, dewarping) move text, so their output
is detected afresh, once.

>>> from docintent.ocr import get_engine
>>> from docintent.ocr.session import ReadingSession
>>> session = ReadingSession(get_engine())
>>> full = session.read(page)                                  # doctest: +SKIP
>>> after = session.read(restored, region, geometry_of=page)   # doctest: +SKIP
>>> session.stats                                              # doctest: +SKIP
{'detections': 1, 'lines_recognised': 42, 'lines_reused': 7, 'boxes_carried': 1, 'region_reads': 1, ...}

Within a session a line crop is recognised at most once: a line whose pixels a tool did not change (the same
crop at the same place) is looked up, not read again. A session lives as long as one question, so nothing in it
outlasts the question (the engine's disk cache is what persists across runs).

:attr:`ReadingSession.stats` counts the work the question's reading took (see :data:`WORK`). A reading the disk
cache serves counts as the detection and recognitions it stands for, and brings back each line's recognition, so
the counts and every later read are the same whether the cache was cold, warm or off; only
:attr:`ReadingSession.cache_hits` tells them apart.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

import numpy as np

from ..page import Box, Page
from .base import OcrEngine, OcrLine, OcrResult, OcrWord, reading_order
from .orientation import Orientation, detect_orientation

#: One recognised line crop: text, confidence, words as (text, page quad, confidence).
Recognised = tuple[str, float, tuple[tuple[str, list[list[float]], float], ...]]

#: The work counters of a session, each a count that depends only on the pages and the reads asked for:
#: ``detections`` (text-line detections, one per page state read whole), ``lines_recognised`` (line crops
#: recognised), ``lines_reused`` (line crops looked up instead: a tool left their pixels as they were),
#: ``boxes_carried`` (page states that took the line boxes of the page a photometric tool changed),
#: ``region_reads`` (reads of part of a page), ``crop_reads`` (regions read anew by an engine on an enlarged
#: crop), ``page_reads`` (whole pages read by an engine without line-level reading) and ``orientation_checks``
#: (runs of the orientation classifier).
WORK = (
    "detections",
    "lines_recognised",
    "lines_reused",
    "boxes_carried",
    "region_reads",
    "crop_reads",
    "page_reads",
    "orientation_checks",
)


class ReadingSession:
    """Line-level reads of one question's pages (see the module docstring).

    Engines without line-level detection and recognition (Tesseract) are read page by page or region by
    region through :meth:`OcrEngine.read`, as before.
    """

    def __init__(self, engine: OcrEngine) -> None:
        self.engine = engine
        self._quads: dict[str, np.ndarray] = {}  # page hash -> detected line quads (N x 4 x 2, page pixels)
        self._lines: dict[bytes, Recognised] = {}  # crop digest -> recognition
        self._pages: dict[str, OcrResult] = {}  # page hash -> whole-page reading (engines without line level)
        self._orientation: dict[str, Orientation] = {}  # page hash -> the classifier's verdict
        #: The work this session's reads took (:data:`WORK`), the same with the disk cache cold, warm or off.
        self.stats: dict[str, int] = dict.fromkeys(WORK, 0)
        #: Whole-page readings the engine's disk cache served (speed only: the counts in ``stats`` and every
        #: reading are the same without it).
        self.cache_hits = 0

    @property
    def line_level(self) -> bool:
        """Whether the engine can detect and recognise lines separately."""
        return getattr(self.engine, "line_level", False)

    def quads(self, page: Page, geometry_of: Page | None = None) -> np.ndarray:
        """Line quads of ``page``: detected once, or carried over from ``geometry_of`` (a page the same size
        whose text a photometric tool did not move)."""
        known = self._quads.get(page.hash)
        if known is not None:
            return known
        if geometry_of is not None and geometry_of.size == page.size:
            source = self._quads.get(geometry_of.hash)
            if source is None:
                source = self.quads(geometry_of)
            self._quads[page.hash] = source
            self.stats["boxes_carried"] += 1
            return source
        found = self.engine.detect_lines(page.pixels)  # type: ignore[attr-defined]
        self.stats["detections"] += 1
        self._quads[page.hash] = found
        return found

    def read(self, page: Page, region: Box | None = None, *, geometry_of: Page | None = None) -> OcrResult:
        """The lines of ``page`` whose centre lies in ``region`` (all lines when None), boxes on the full page.

        ``geometry_of``: an earlier page state with the same text positions (the input of a photometric tool);
        its line boxes are used instead of detecting again.
        """
        if not self.line_level:
            return self._region_of_page(page, region)
        cache = self.engine.cache
        cache_key = None
        if region is None and geometry_of is None and page.hash not in self._quads and cache is not None:
            # A first full read of a page: other strategies and later runs may have read it already.
            cache_key = cache.key(self.engine.cache_key() + "|lines", page.hash, None, 0)
            hit = cache.get(cache_key)
            if hit is not None and self._restore(page, hit):
                return hit
        start = time.perf_counter()
        quads = self.quads(page, geometry_of)
        h, w = page.height, page.width
        chosen = [q for q in quads if region is None or _centre_in_px(q, w, h, region)]
        if region is not None:
            self.stats["region_reads"] += 1
        keys, recognised = self._recognise(page, chosen)
        score_floor = getattr(self.engine, "text_score", 0.0)
        raw = [
            (text, quad.tolist(), conf, list(words))
            for quad, (text, conf, words) in zip(chosen, recognised)
            if text.strip() and conf >= score_floor
        ]
        lines = tuple(
            OcrLine(
                text,
                Box.from_points(q, w, h),
                float(conf),
                tuple(OcrWord(wt, Box.from_points(wq, w, h), float(wc)) for wt, wq, wc in words),
            )
            for text, q, conf, words in reading_order(raw)
        )
        meta: dict[str, Any] = {"lines_read": len(chosen)}
        if cache_key is not None:
            # Exactly as detected (float32 values are exact in JSON): a session that starts from this entry cuts
            # the same line crops as the session that wrote it. Each crop's digest and recognition come along,
            # so that session looks its lines up where this one did, and counts the same work.
            meta["quads"] = np.asarray(quads, dtype=np.float32).tolist()
            meta["lines"] = [
                [key.hex(), text, conf, [list(word) for word in words]]
                for key, (text, conf, words) in zip(keys, recognised)
            ]
        result = OcrResult(
            lines, self.engine.name, page.hash, region=region, seconds=time.perf_counter() - start, meta=meta
        )
        if cache_key is not None:
            cache.put(cache_key, result)
        return result

    def _restore(self, page: Page, hit: OcrResult) -> bool:
        """Take a cached whole-page reading of ``page`` as if it had been read here: its line boxes, each line
        crop's recognition, and the counts the read would have added. False for an entry that lacks them."""
        quads, lines = hit.meta.get("quads"), hit.meta.get("lines")
        if quads is None or lines is None or len(lines) != len(quads):
            return False
        self._quads[page.hash] = np.asarray(quads, dtype=np.float32).reshape(-1, 4, 2)
        self.stats["detections"] += 1
        for digest, text, conf, words in lines:
            key = bytes.fromhex(digest)
            if key in self._lines:
                self.stats["lines_reused"] += 1
            else:
                self.stats["lines_recognised"] += 1
                self._lines[key] = (text, conf, tuple((wt, wq, wc) for wt, wq, wc in words))
        self.cache_hits += 1
        return True

    def recognise(self, page: Page, quads: list[np.ndarray], *, turned: bool = False) -> list[Recognised]:
        """Recognise the line crops of ``page`` cut at ``quads`` (``turned``: each crop turned by 180 degrees),
        each looked up when this session recognised the same crop before."""
        if turned:
            engine: Any = self.engine
            crops = [np.ascontiguousarray(engine.crop_line(page.pixels, q)[::-1, ::-1]) for q in quads]
            return self._recognise_crops(crops, quads)[1]
        return self._recognise(page, quads)[1]

    def read_with(self, engine: OcrEngine, page: Page, region: Box | None, *, min_side: int = 0) -> OcrResult:
        """``engine``'s own read of ``region`` of ``page`` (the whole page when None), the crop enlarged so its
        shorter side is at least ``min_side`` px: a zoomed look, or a second engine's reading, counted as a crop
        read (a page read when ``region`` is None)."""
        self.stats["crop_reads" if region is not None else "page_reads"] += 1
        return engine.read(page, region, min_side=min_side)

    def orientation(self, page: Page) -> Orientation:
        """The orientation classifier's verdict on ``page``, once per page state."""
        known = self._orientation.get(page.hash)
        if known is None:
            known = self._orientation[page.hash] = detect_orientation(page)
            self.stats["orientation_checks"] += 1
        return known

    def _region_of_page(self, page: Page, region: Box | None) -> OcrResult:
        """For engines that read whole images (Tesseract): the page is read once, and a region is the lines of
        that reading whose centre lies in it. Reading the crop instead would let the engine lay the text out
        anew, so a line read as part of a region and as part of the page could differ."""
        full = self._pages.get(page.hash)
        if full is None:
            full = self._pages[page.hash] = self.engine.read(page)
            self.stats["page_reads"] += 1
        if region is None or region == Box.FULL:
            return full
        self.stats["region_reads"] += 1
        inside = tuple(line for line in full.lines if _centre_in(line.box, region))
        return OcrResult(inside, full.engine, full.page_hash, region=region, seconds=0.0, meta={"lines_read": 0})

    def _recognise(self, page: Page, quads: list[np.ndarray]) -> tuple[list[bytes], list[Recognised]]:
        engine: Any = self.engine
        return self._recognise_crops([engine.crop_line(page.pixels, q) for q in quads], quads)

    def _recognise_crops(
        self, crops: list[np.ndarray], quads: list[np.ndarray]
    ) -> tuple[list[bytes], list[Recognised]]:
        """Each crop's digest and recognition; only crops this session has not recognised before are read."""
        engine: Any = self.engine
        keys = []
        for quad, crop in zip(quads, crops):
            h = hashlib.blake2b(digest_size=12)
            h.update(np.round(quad, 1).tobytes())
            h.update(repr(crop.shape).encode())
            h.update(crop.tobytes())
            keys.append(h.digest())
        missing = [i for i, k in enumerate(keys) if k not in self._lines]
        if missing:
            results = engine.recognize_lines([crops[i] for i in missing], [quads[i] for i in missing])
            for i, res in zip(missing, results):
                self._lines[keys[i]] = res
        self.stats["lines_recognised"] += len(missing)
        self.stats["lines_reused"] += len(quads) - len(missing)
        return keys, [self._lines[k] for k in keys]


def _centre_in_px(quad: np.ndarray, width: int, height: int, region: Box) -> bool:
    """Whether the centre of a line quad (page pixels) lies in ``region``: the one rule that assigns a line to
    a region."""
    cx = float(quad[:, 0].mean()) / width
    cy = float(quad[:, 1].mean()) / height
    return region.x0 <= cx <= region.x1 and region.y0 <= cy <= region.y1


def _centre_in(box: Box, region: Box) -> bool:
    cx, cy = box.center
    return region.x0 <= cx <= region.x1 and region.y0 <= cy <= region.y1
