"""Phase B of the offline reader: what it measures on a restoration and the rules that turn the measurements into
keep or roll back.

:class:`ReviewEvidence` holds the measurements of one change (legibility of the evidence before and after, the
severity of the targeted damage, how certain the answer read from each page is); :meth:`ReviewEvidence.verdict`
applies one of :data:`REVIEW_RULES` and says why, with the margins.

A difference is only evidence when it is larger than what re-measuring the same content gives
(:class:`NoiseFloors`, measured by ``benchmarks/noise_floor.py``): below its floor it is a tie, and a restoration
whose every difference is a tie is decided by one rule (:attr:`NoiseFloors.tie`), chosen from the review-oracle
figures, never by which side of the noise a measurement fell.

>>> floors = NoiseFloors(legibility=0.01, confidence=0.02, severity=0.03, tie="rollback")
>>> e = ReviewEvidence("deshadowing", "evidence region", 0.628, legibility_after=0.629, severity_before=1.0,
...                    severity_after=1.0, confidence_before=0.80, confidence_after=0.80, answer_before="$28.78",
...                    answer_after="$28.78")
>>> e.verdict("evidence", floors=floors)
(False, 'no change needed: no difference beyond measurement noise, so the page stays as it was (legibility +0.2 %, floor 1.0 %)')
"""

from __future__ import annotations

from dataclasses import KW_ONLY, asdict, dataclass
from typing import Any, Literal, get_args

from ...reader.scorer import logit

#: Phase B rules: "evidence" keeps a restoration when the answer became more certain, or the evidence
#: more legible, or the targeted damage fell while the text read as well - each beyond its noise floor - and rolls
#: it back when the answer became clearly less certain or the evidence less legible; ties follow
#: :attr:`NoiseFloors.tie`. "evidence-fixed" is that rule with the fixed margins it had before the noise floors
#: were measured (any legibility gain kept). "legibility" keeps a restoration only when the evidence reads better.
#: "page" is the question-free rule of ``docintent restore --auto``: legibility of the whole page or the damage fell.
#: "answer" judges a restoration by the answer alone: kept when the reader's calibrated probability of its answer
#: rose beyond its noise floor (in log-odds), or the answer changed to one it is surer of by
#: :data:`ANSWER_CHANGE_MARGIN`, or to one as probable read from text that became more legible beyond its noise
#: floor; an unchanged answer whose probability did not move is no change needed (rolled back), whatever
#: legibility did. "answer" is the default: a tool is kept only when the answer says it helped.
ReviewRule = Literal["evidence", "evidence-fixed", "legibility", "page", "answer"]
#: The rules' names, from :data:`ReviewRule` (one list: the option's type and its check read the same names).
REVIEW_RULES: tuple[str, ...] = get_args(ReviewRule)


@dataclass(frozen=True)
class NoiseFloors:
    """How much each quantity Phase B compares moves when the content does not change: the 95th percentile of
    the differences when 21 development page states (real-page dev captures, synthetic seed 101, and their
    restorations) are re-measured shifted by 1-3 pixels or re-encoded as JPEG at quality 95, in the evidence
    region found before (``benchmarks/noise_floor.py``, ``benchmarks/results/noise_floor.md``).

    ``legibility``: relative (measured 0.0116 in the evidence region, 0.0114 on the page); ``confidence``: the
    reading's raw confidence (0.0050); ``severity``: a degradation severity (0.115 over 18 re-measurements; the
    warp severity of one dewarped page moved by 0.51 under a shift). ``tie``: what a restoration whose every
    difference is within its floor gets - rolled back: the page as it was given is the default, and a restoration
    that changed nothing measurable is no change needed. (With the rule reader, on the review oracle of the
    real-page dev split (133 restorations), keeping ties had given keep precision / recall 75 / 86 % and rollback
    precision / recall 91 / 83 %, rolling them back 71 / 71 % and 83 / 83 %,
    ``benchmarks/results/review_oracle_noise.md``; but a kept tie is a tool that changed the page for no measured
    reason, shown as "read on: the page after ..." for every later answer.)
    """

    legibility: float = 0.012
    confidence: float = 0.005
    severity: float = 0.115
    _: KW_ONLY
    tie: Literal["rollback", "keep"] = "rollback"
    #: The "answer" rule's floor: how far the log-odds of the reader's calibrated probability of its answer move
    #: under re-measurement, 0.47 (the 95th percentile over 110 re-measurements of 55 development page states,
    #: ``benchmarks/noise_floor.py --name noise_floor_scored``; a 1-3 pixel shift moves them by 1.03 at the 95th
    #: percentile, JPEG at quality 95 by 0.15). Log-odds, because a probability's noise depends on where it
    #: stands: 0.42 moved to 0.63 under a shift, 0.988 to 0.997 (the same probability floor would call the second
    #: a tie and the first evidence).
    log_odds: float = 0.47
    #: The "answer" rule's legibility floors, measured in the same run as ``log_odds``: the whole page's legibility
    #: (what a geometric tool is judged on) moves by 0.0125 at the 95th percentile, the evidence region's by 0.0685
    #: (a shift moves text across the region's edge). A changed answer read from text that became more legible
    #: beyond these, with a probability that did not fall beyond ``log_odds``, is kept.
    page_legibility: float = 0.0125
    region_legibility: float = 0.0685


#: The floors measured on development data (``benchmarks/results/noise_floor.md``).
DEFAULT_FLOORS = NoiseFloors()
#: Margins of the rule before the floors (still the least a change must move to count, when above the floor).
CONFIDENCE_GAIN = 0.05
CONFIDENCE_LOSS = 0.1
SEVERITY_FALL = 0.1
#: How much surer (in log-odds) of a different answer the reader must be for the "answer" rule to keep the
#: change: above the largest rise measured when re-measuring the same content changed the answer (0.83, on the
#: development states of ``noise_floor_scored``; the answer changed in 12 of 104 re-measurements).
ANSWER_CHANGE_MARGIN = 1.0


#: Below this share of its legibility before, a restoration's changed answer is rolled back whatever its probability
#: (the "answer" rule): far outside the measured noise (the evidence region's legibility moves by 0.07 at the 95th
#: percentile), and below every helpful change's on the development review oracle (the lowest kept 0.61 of it).
LEGIBILITY_COLLAPSE = 0.5


#: Where the "answer" rule bounds a probability before taking its log-odds (the bound its floor was measured with).
LOG_ODDS_BOUND = 1e-4


def log_odds(probability: float) -> float:
    """The log-odds the "answer" rule compares (:func:`docintent.reader.scorer.logit` within
    :data:`LOG_ODDS_BOUND`)."""
    return logit(probability, LOG_ODDS_BOUND)


def _norm(text: str) -> str:
    return " ".join(text.lower().split())


@dataclass(frozen=True)
class ReviewEvidence:
    """Phase B's measurements of one restoration (before -> after)."""

    tool: str
    scope: str
    legibility_before: float
    _: KW_ONLY
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
        return self.severity_after < self.severity_before - SEVERITY_FALL

    @property
    def legibility_change(self) -> float:
        """Relative change of the evidence's legibility."""
        return (self.legibility_after - self.legibility_before) / max(self.legibility_before, 1e-6)

    def keep(self, rule: str = "answer", margin: float = 0.0, floors: NoiseFloors = DEFAULT_FLOORS) -> bool:
        """The verdict under ``rule`` (see REVIEW_RULES)."""
        return self.verdict(rule, margin, floors)[0]

    def verdict(
        self, rule: str = "answer", margin: float = 0.0, floors: NoiseFloors = DEFAULT_FLOORS
    ) -> tuple[bool, str]:
        """``(keep, why)`` under ``rule``; ``why`` names the difference that decided and its margin."""
        keep, because, figures, _ = self.explain(rule, margin, floors)
        return keep, f"{because} ({figures})" if figures else because

    def explain(
        self, rule: str = "answer", margin: float = 0.0, floors: NoiseFloors = DEFAULT_FLOORS
    ) -> tuple[bool, str, str, str | None]:
        """``(keep, because, figures, decided_by)``: the verdict under ``rule``, why in plain words, the margins
        behind it, and the quantity that decided ("confidence", "legibility", "severity"; None for a tie or a
        rule without one)."""
        more_legible = self.legibility_after > self.legibility_before * (1.0 + margin)
        if rule == "legibility":
            return (
                more_legible,
                "the text around the answer reads better"
                if more_legible
                else "the text around the answer reads no better",
                "",
                "legibility",
            )
        if rule == "page":  # question-free: no answer to be certain of
            keep = more_legible or self.severity_fell and self.legibility_after >= 0.97 * self.legibility_before
            return (
                keep,
                "the page reads better or its damage fell" if keep else "the page reads no better",
                "",
                "legibility",
            )
        if rule == "evidence-fixed":
            return self._fixed(more_legible)
        if rule == "answer":
            return self._by_answer(floors)
        return self._noise_aware(floors, margin)

    def _by_answer(self, floors: NoiseFloors) -> tuple[bool, str, str, str | None]:
        rise = log_odds(self.confidence_after) - log_odds(self.confidence_before)
        floor = floors.log_odds
        text = (
            f"probability of the answer {self.confidence_before:.3f} -> {self.confidence_after:.3f}, "
            f"log-odds {rise:+.2f}, floor {floor:.2f}"
        )
        if _norm(self.answer_after) != _norm(self.answer_before):
            if self.legibility_after < LEGIBILITY_COLLAPSE * self.legibility_before:
                # The same blindness the other way: a restoration that smeared the text can leave a fragment the
                # reader is sure of ("Key Andings" for a heading), but a changed answer read from text that reads
                # less than half as well is not evidence of anything the tool fixed.
                text += f"; legibility {100 * self.legibility_change:+.1f} %"
                return False, "the answer changed, read from text that reads far worse", text, "legibility"
            if self.answer_after and rise > max(floor, ANSWER_CHANGE_MARGIN):
                return True, "the answer changed to one the reader is surer of", text, "probability"
            # The reader's probability weighs where a value sits and what it looks like, not how cleanly its
            # characters read: a version misread "V6.28" and read "v6.2a" after the tool score alike. Between two
            # equally probable answers, the one read from clearly more legible text is preferred.
            leg_floor = floors.page_legibility if self.scope == "page" else floors.region_legibility
            clearer = self.legibility_change > leg_floor
            if self.answer_after and clearer and rise >= -floor:
                text += f"; legibility {100 * self.legibility_change:+.1f} %, floor {100 * leg_floor:.1f} %"
                return True, "the answer changed to one read from more legible text", text, "legibility"
            return False, "the answer changed to one the reader is not surer of", text, "probability"
        if rise > floor:
            return True, "the answer became more probable", text, "probability"
        if rise < -floor:
            return False, "the answer became less probable", text, "probability"
        return False, "no change needed: the answer is as probable as on the page before", text, None

    def _fixed(self, more_legible: bool) -> tuple[bool, str, str, str | None]:
        if self.answer_after and self.confidence_after > self.confidence_before + CONFIDENCE_GAIN:
            return True, "the answer reads more surely", "", "confidence"
        if self.confidence_after < self.confidence_before - CONFIDENCE_LOSS:
            return False, "the answer reads less surely", "", "confidence"
        if more_legible:
            return True, "the text around the answer reads better", "", "legibility"
        keep = self.severity_fell and self.legibility_after >= 0.97 * self.legibility_before
        if keep:
            return True, "the damage fell while the text read as well", "", "severity"
        return False, "nothing improved", "", None

    def _noise_aware(self, floors: NoiseFloors, margin: float) -> tuple[bool, str, str, str | None]:
        dc = self.confidence_after - self.confidence_before
        dl = self.legibility_change
        leg_floor = max(floors.legibility, margin)
        conf_text = f"raw reading confidence {dc:+.3f}, floor {floors.confidence:.3f}"
        leg_text = f"legibility {100 * dl:+.1f} %, floor {100 * leg_floor:.1f} %"
        if self.answer_after and dc > max(CONFIDENCE_GAIN, floors.confidence):
            return True, "the answer reads more surely", conf_text, "confidence"
        if dc < -max(CONFIDENCE_LOSS, floors.confidence):
            return False, "the answer reads less surely", conf_text, "confidence"
        if dl > leg_floor:
            return True, "the text around the answer reads better", leg_text, "legibility"
        fell = None
        if self.severity_before is not None and self.severity_after is not None:
            fell = self.severity_before - self.severity_after
        if fell is not None and fell > max(SEVERITY_FALL, floors.severity):
            if dl >= -leg_floor:
                return (
                    True,
                    f"the {self.degradation or 'targeted'} damage fell while the text read as well",
                    f"{fell:.2f}, floor {floors.severity:.2f}; {leg_text}",
                    "severity",
                )
            return False, "the damage fell but the text reads worse", leg_text, "legibility"
        if dl < -leg_floor:
            return False, "the text around the answer reads worse", leg_text, "legibility"
        keep = floors.tie == "keep"
        tie = (
            "no difference beyond measurement noise; a tie is kept, nothing having measurably got worse"
            if keep
            else "no change needed: no difference beyond measurement noise, so the page stays as it was"
        )
        return keep, tie, leg_text, None

    def describe(self, answer: bool = True) -> str:
        """The measurements as one line; ``answer=False`` leaves out the reading confidence (question-free use)."""
        text = f"{self.scope} legibility {self.legibility_before:.3f} -> {self.legibility_after:.3f}"
        if self.severity_before is not None and self.severity_after is not None:
            text += f"; {self.degradation} severity {self.severity_before:.2f} -> {self.severity_after:.2f}"
        if answer:
            text += f"; raw reading confidence {self.confidence_before:.2f} -> {self.confidence_after:.2f}"
        return text

    def measurements(self) -> dict[str, Any]:
        """The figures as a mapping (recorded in the trace's review step)."""
        return {k: (round(v, 6) if isinstance(v, float) else v) for k, v in asdict(self).items()}


__all__ = ["DEFAULT_FLOORS", "REVIEW_RULES", "NoiseFloors", "ReviewEvidence", "ReviewRule"]
