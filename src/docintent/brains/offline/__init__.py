"""The offline reader: a brain built on OCR and measured image signals. No model, no network.

The reading itself (question analysis, spans, tables, charts, answers) is the :mod:`docintent.reader` package;
this package is the policy that decides with it (:mod:`.brain`), its Phase B measurements and rules
(:mod:`.review`) and its MACT roles (:mod:`.roles`).
"""

from .brain import (
    ANSWER_THRESHOLD,
    DEFAULT_CALIBRATION,
    TEXT_KEPT,
    UNMOVED,
    Calibration,
    OfflineReader,
    OfflineReaderOptions,
)
from .review import DEFAULT_FLOORS, REVIEW_RULES, NoiseFloors, ReviewEvidence

__all__ = [
    "ANSWER_THRESHOLD",
    "DEFAULT_CALIBRATION",
    "DEFAULT_FLOORS",
    "REVIEW_RULES",
    "NoiseFloors",
    "TEXT_KEPT",
    "UNMOVED",
    "Calibration",
    "OfflineReader",
    "OfflineReaderOptions",
    "ReviewEvidence",
]
