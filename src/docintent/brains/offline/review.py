"""Phase B of the offline reader: what it measures on a restoration and the rules that turn the measurements into
keep or roll back.

:class:`ReviewEvidence` holds the measurements of one change (legibility of the evidence before and after, the
severity of the targeted damage, how certain the answer read from each page is); :meth:`ReviewEvidence.keep`
applies one of :data:`REVIEW_RULES`.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

#: Phase B rules: "legibility" keeps a restoration only when the evidence region reads better (OCR confidence,
#: characters, label match); "evidence" also keeps it when the answer became more certain, or when the targeted
#: damage measurably fell while the text stayed as legible (a tie is not a loss when the damage is gone), and
#: rolls it back when the answer became clearly less certain.
#: "page" is the question-free rule of ``docintent restore --auto``: legibility of the whole page or the damage fell.
REVIEW_RULES = ("evidence", "legibility", "page")


@dataclass(frozen=True)
class ReviewEvidence:
    """Phase B's measurements of one restoration (before -> after)."""

    tool: str
    scope: str
    legibility_before: float
    legibility_after: float
    severity_before: float | None
    severity_after: float | None
    confidence_before: float
    confidence_after: float
    answer_before: str
    answer_after: str
    degradation: str = ""

    @property
    def severity_fell(self) -> bool:
        if self.severity_before is None or self.severity_after is None:
            return False
        return self.severity_after < self.severity_before - 0.1

    def keep(self, rule: str = "evidence", margin: float = 0.0) -> bool:
        """The verdict under ``rule`` (see REVIEW_RULES)."""
        more_legible = self.legibility_after > self.legibility_before * (1.0 + margin)
        if rule == "legibility":
            return more_legible
        if rule == "page":  # question-free: no answer to be certain of
            return more_legible or self.severity_fell and self.legibility_after >= 0.97 * self.legibility_before
        if self.answer_after and self.confidence_after > self.confidence_before + 0.05:
            return True
        if self.confidence_after < self.confidence_before - 0.1:
            return False
        if more_legible:
            return True
        return self.severity_fell and self.legibility_after >= 0.97 * self.legibility_before

    def describe(self, answer: bool = True) -> str:
        """The measurements as one line; ``answer=False`` leaves out the answer confidence (question-free use)."""
        text = f"{self.scope} legibility {self.legibility_before:.3f} -> {self.legibility_after:.3f}"
        if self.severity_before is not None and self.severity_after is not None:
            text += f"; {self.degradation} severity {self.severity_before:.2f} -> {self.severity_after:.2f}"
        if answer:
            text += f"; answer confidence {self.confidence_before:.2f} -> {self.confidence_after:.2f}"
        return text

    def measurements(self) -> dict[str, Any]:
        """The figures as a mapping (recorded in the trace's review step)."""
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}


__all__ = ["REVIEW_RULES", "ReviewEvidence"]
