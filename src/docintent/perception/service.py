"""The measurement service brains, MACT roles and question-free restoration share: how damaged a page (or a
region of it) is per degradation family, which families pass their thresholds, how far the worst one passes,
and which turn makes the page upright.

Every family in the registry is measured, plug-ins included (:mod:`docintent.perception.degradations`); the
built-in ones are measured together by :func:`docintent.perception.signals.measure` and cached by page hash.

>>> from docintent.page import Page
>>> import numpy as np
>>> blank = Page.from_array(np.full((64, 64), 255, np.uint8))
>>> Perception().above(blank)
[]
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..ocr import ReadingSession, detect_orientation
from ..page import Box, Page
from . import signals
from .degradations import Thresholds, get_degradation

#: Classifier confidence above which an upside-down verdict is taken without reading text lines both ways
#: (the classifier's false upside-down verdicts on sparse pages came with 0.6-0.65; true ones with 0.92).
UPSIDE_DOWN_SURE = 0.85


class Perception:
    """Degradation measurements with one set of thresholds.

    ``thresholds``: per-family overrides of the registered thresholds; ``severity_threshold``: one threshold for
    every family instead (None: per family); ``orientation_confidence``: classifier confidence needed to turn.
    """

    def __init__(
        self,
        thresholds: Thresholds | Mapping[str, float] | None = None,
        severity_threshold: float | None = None,
        orientation_confidence: float = 0.6,
    ) -> None:
        if isinstance(thresholds, Mapping):
            thresholds = Thresholds(**thresholds)
        self.thresholds = thresholds or Thresholds()
        self.severity_threshold = severity_threshold
        self.orientation_confidence = float(orientation_confidence)

    def threshold(self, family: str) -> float:
        """The severity above which ``family`` is reported and restored."""
        if self.severity_threshold is not None:
            return float(self.severity_threshold)
        return self.thresholds.of(family)

    def severities(self, page: Page, region: Box | None = None) -> dict[str, float]:
        """Severity in [0, 1] of every measured family on ``page`` (or ``region`` of it). The built-in families
        come in the order their signals are reported (equal severities keep it), plug-in families after them.
        On a born-digital render (:func:`~docintent.perception.signals.is_render`) moire is 0 and a region's warp
        is at most the whole page's."""
        where = None if region in (None, Box.FULL) else region
        measured = signals.severities(page, where, orientation=False)
        out = {name: float(value) for name, value in measured.items() if get_degradation(name).measured}
        if signals.is_render(page):
            # A born-digital page was never photographed: a periodic pattern is print (dot leaders, a halftone),
            # and a bend found in the few lines of one region must show on the whole page to be one.
            out["moire"] = 0.0
            if where is not None:
                out["warp"] = min(out["warp"], float(signals.measure(page, None, orientation=False).warp))
        return out

    def above(self, page: Page, region: Box | None = None) -> list[tuple[str, float]]:
        """``(family, severity)`` of the families past their thresholds, most severe first."""
        found = [(name, s) for name, s in self.severities(page, region).items() if s > self.threshold(name)]
        return sorted(found, key=lambda item: -item[1])

    def excess(self, severities: Mapping[str, float]) -> tuple[float, str | None]:
        """How far the worst family in ``severities`` passes its threshold: ``(excess, family)``, excess in
        [0, 1] (0: nothing passes)."""
        worst: tuple[float, str | None] = (0.0, None)
        for name, severity in severities.items():
            threshold = self.threshold(name)
            if severity > threshold:
                value = min(1.0, (severity - threshold) / max(1e-6, 1.0 - threshold))
                if value > worst[0]:
                    worst = (value, name)
        return worst

    def upright_fix(self, page: Page, session: ReadingSession | None = None) -> str | None:
        """The rotation tool that makes ``page`` upright, or None when it is upright (or the classifier is not
        sure enough). An upside-down verdict below :data:`UPSIDE_DOWN_SURE` is checked by reading text lines
        both ways when ``session`` can read lines."""
        orient = session.orientation(page) if session is not None else detect_orientation(page)
        fix = orient.fix if orient.confidence >= self.orientation_confidence else None
        if fix == "rotate_180" and orient.confidence < UPSIDE_DOWN_SURE and session is not None:
            if not reads_upside_down(page, session):
                fix = None
        return fix

    def geometric(self, family: str) -> bool:
        """Whether restoring ``family`` moves content."""
        return get_degradation(family).geometric


def reads_upside_down(page: Page, session: ReadingSession, lines: int = 8) -> bool:
    """Whether the page's text reads better turned by 180 degrees than as it is.

    The orientation classifier looks at three small windows and confuses upright with upside down on sparse
    pages (charts, title pages); text lines settle it: lines are horizontal either way, so the same detected
    lines are recognised as cut and turned, and the turn is confirmed when it reads with clearly higher
    confidence. The detection is the one the upright page's reading needs anyway. Engines without line-level
    recognition keep the classifier's verdict."""
    if not session.line_level:
        return True
    quads = session.quads(page)
    if len(quads) == 0:
        return True
    widths = [float(np.linalg.norm(q[1] - q[0])) for q in quads]
    heights = [float(np.linalg.norm(q[3] - q[0])) for q in quads]
    chosen = [q for q, w, h in sorted(zip(quads, widths, heights), key=lambda t: -t[1]) if w > 2.5 * h][:lines]
    if not chosen:
        return True
    as_is = session.recognise(page, chosen)  # the page's own reading looks these up later
    turned = session.recognise(page, chosen, turned=True)
    upright = sum(conf * len(text.strip()) for text, conf, _ in as_is)
    flipped = sum(conf * len(text.strip()) for text, conf, _ in turned)
    return flipped > 1.1 * upright


__all__ = ["UPSIDE_DOWN_SURE", "Perception", "reads_upside_down"]
