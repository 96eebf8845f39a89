"""Measured degradation signals: one severity in [0, 1] per built-in degradation family, from the pixels alone.

The offline reader uses these to choose a restoration tool without a model. Every severity rests on a
physical measurement that is kept in :attr:`Signals.raw` (so thresholds can be checked and recalibrated): the
measurements come from one shared pass over the page (:func:`docintent.perception.analysis.analyse`), and each
built-in family's severity is the formula of its record's measure over them (what each rests on is written
beside its formula, :data:`docintent.perception.degradations.BUILTIN`).

>>> from docintent.synth.render import render_page
>>> from docintent.page import Page
>>> page = Page.from_array(render_page(width=600, seed=1)[0])
>>> diagnose(page)
[]
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..page import Box, Page
from . import analysis
from .analysis import RANGES, ReadOnlyDict, Shared, analyse, severity
from .degradations import BUILTIN, Thresholds, families

#: The built-in degradation families these signals measure, in the order they are reported (ties between equal
#: severities keep this order): read from their records (:data:`docintent.perception.degradations.BUILTIN`).
#: Plug-in families measure themselves (:mod:`docintent.perception.degradations`).
FAMILIES: tuple[str, ...] = tuple(d.name for d in BUILTIN if isinstance(d.measure, Shared))


@dataclass(frozen=True)
class Signals:
    """Severities in [0, 1] per built-in degradation family (``severities``, read-only, in :data:`FAMILIES`
    order; ``signals.blur`` reads one), the rotation that makes the page upright, and the raw measurements
    behind them (``raw``, read-only)."""

    severities: dict[str, float]
    rotation: str | None
    raw: Mapping[str, float]
    region: Box | None = None

    def __getattr__(self, family: str) -> float:
        # ``signals.blur``: a family's severity by attribute, as the fields were once read
        severities = self.__dict__.get("severities")
        if family.startswith("_") or severities is None:
            raise AttributeError(family)
        try:
            return severities[family]
        except KeyError:
            raise AttributeError(
                f"Signals has no attribute or family {family!r}; families: {', '.join(severities)}"
            ) from None

    def above(self, thresholds: Any = None) -> list[str]:
        """Families whose severity exceeds its threshold (``thresholds.of(family)``; default: each family's
        record), most severe first (equal severities in :data:`FAMILIES` order)."""
        return past_thresholds(self.severities, thresholds)


def past_thresholds(severities: Mapping[str, float], thresholds: Any = None) -> list[str]:
    """The families of ``severities`` whose severity exceeds its threshold (``thresholds.of(family)``; default:
    each family's record), most severe first (equal severities keep the mapping's order)."""
    of = (thresholds if thresholds is not None else Thresholds()).of
    hits = [(f, s) for f, s in severities.items() if s > of(f)]
    return [f for f, s in sorted(hits, key=lambda fs: -fs[1])]


_ReadOnlyDict = ReadOnlyDict  # where pickles made before the shared analysis had its own module find it

_CACHE: OrderedDict[tuple, Signals] = OrderedDict()
_CACHE_SIZE = 128


def measure(page: Page, region: Box | None = None, *, orientation: bool = True) -> Signals:
    """Measure every built-in degradation signal on ``page`` (or on ``region`` of it, with a margin), all from
    one analysis of the page.

    ``orientation=False`` skips the orientation classifier (about 30 ms) and reports orientation 0.
    Results are cached by page hash and region.

    >>> import numpy as np
    >>> measure(Page.from_array(np.full((1, 1, 3), 255, np.uint8))).blur
    0.0
    """
    key = (page.hash, region.as_tuple() if region is not None else None, orientation)
    hit = _CACHE.get(key)
    if hit is not None:
        _CACHE.move_to_end(key)
        return hit
    found = analyse(page, region, orientation=orientation)
    severities = {d.name: float(d.measure.formula(found.raw)) for d in BUILTIN if isinstance(d.measure, Shared)}
    signals = Signals(ReadOnlyDict(severities), found.rotation, found.raw, region)
    _CACHE[key] = signals
    if len(_CACHE) > _CACHE_SIZE:
        _CACHE.popitem(last=False)
    return signals


def severities(page: Page, region: Box | None = None, *, orientation: bool = True) -> dict[str, float]:
    """Severity in [0, 1] of every registered family on ``page`` (or ``region``): the built-in ones as
    :func:`measure` reports them (one analysis; ``orientation=False`` skips the classifier), then each plug-in
    family by its own measure, in record order, so a family installed beside docintent is diagnosed like the six."""
    out = dict(measure(page, region, orientation=orientation).severities)
    for family in families():
        if family.name not in out and family.measure is not None:
            out[family.name] = float(np.clip(family.measure(page, region), 0.0, 1.0))
    return out


def diagnose(page: Page, region: Box | None = None, thresholds: Any = None) -> list[str]:
    """The degradation families, plug-ins included, above their thresholds on ``page`` (or ``region``), most
    severe first (equal severities in record order)."""
    return past_thresholds(severities(page, region), thresholds)


def rotation_fix(page: Page) -> str | None:
    """The rotation tool that makes ``page`` upright ("rotate_90" / "rotate_180" / "rotate_270"), or None."""
    return measure(page).rotation


#: The share of pixels at one exact grey level above which a page is a render (born digital): a camera or a
#: scanner never leaves so much of the paper at one value (sensor noise, light fall-off, JPEG of a photo).
RENDER_FLAT_SHARE = 0.45
_RENDERS: dict[str, bool] = {}


def is_render(page: Page) -> bool:
    """Whether ``page`` is a born-digital render (a PDF page, a screenshot of a document) rather than a capture:
    most of its paper is one exact grey level. Nothing on such a page was photographed, so a moire pattern or a
    bend of its lines is print, not damage (a table of contents' dot leaders, a title set in a curve)."""
    known = _RENDERS.get(page.hash)
    if known is None:
        px = page.pixels[::2, ::2]
        gray = px.max(axis=2) if px.ndim == 3 else px
        counts = np.bincount(gray.reshape(-1), minlength=256)
        known = bool(counts.max() >= RENDER_FLAT_SHARE * gray.size)
        if len(_RENDERS) > 4096:
            _RENDERS.clear()
        _RENDERS[page.hash] = known
    return known


def clear_cache() -> None:
    """Forget cached measurements (they are keyed by page hash, so this is only needed to save memory)."""
    _CACHE.clear()
    analysis.clear_cache()
    _RENDERS.clear()


__all__ = [
    "FAMILIES",
    "RANGES",
    "past_thresholds",
    "Signals",
    "measure",
    "diagnose",
    "rotation_fix",
    "severities",
    "severity",
    "clear_cache",
    "is_render",
]
