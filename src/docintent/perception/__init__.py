"""Measured degradation signals: which restoration a page needs, from its pixels alone.

>>> from docintent.perception import diagnose, measure, rotation_fix   # doctest: +SKIP
>>> measure(page).blur, diagnose(page), rotation_fix(page)             # doctest: +SKIP
(0.72, ['blur', 'shadow'], None)
"""

from .degradations import Thresholds
from .signals import (
    FAMILIES,
    RANGES,
    Signals,
    clear_cache,
    diagnose,
    measure,
    rotation_fix,
    severities,
    severity,
)

__all__ = [
    "FAMILIES",
    "RANGES",
    "Signals",
    "Thresholds",
    "clear_cache",
    "diagnose",
    "measure",
    "rotation_fix",
    "severities",
    "severity",
]
