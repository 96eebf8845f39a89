"""A synthetic wild-document benchmark shaped like WildDoc: documents, charts and tables, 4 captures each.

Documents (forms, letters, invoices, receipts, reports, memos) are typeset with PIL, charts drawn with
matplotlib and tables typeset with financial and general content; each comes with varied questions and
accepted answers. Every document is then "photographed" under 4 capture conditions built from the
degradations in :mod:`docintent.synth.degrade` (plus folds and desk backgrounds), and every question becomes 4
:class:`~docintent.sample.Sample` rows sharing one ``group`` (for the consistency metric).

>>> from docintent.synth import generate
>>> summary = generate("/tmp/synth", n=30, seed=0)  # doctest: +SKIP
>>> summary.samples  # 30 questions x 3 families x 4 captures  # doctest: +SKIP
360
"""

from __future__ import annotations

from .capture import ALL_NAMES, CapturePlan, Planner, apply
from .generator import FAMILIES, SynthSummary, generate

__all__ = ["ALL_NAMES", "FAMILIES", "CapturePlan", "Planner", "SynthSummary", "apply", "generate"]
