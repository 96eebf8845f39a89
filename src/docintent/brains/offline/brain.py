"""The offline reader: a brain built on the document reader (:mod:`docintent.reader`) and the measured image
signals (:class:`~docintent.perception.service.Perception`). No model, no network.

>>> from docintent.brains import get_brain
>>> reader = get_brain("offline")                 # RapidOCR from the wheel
>>> reader.answer(state).text                     # doctest: +SKIP
'$1,250.00'

How it answers each question of the :class:`~docintent.brains.base.Restorer` protocol:

- ``answer``: reads the page, analyses the question, and reads the answer by layout (:mod:`docintent.reader`).
- ``decide``: answerable = the calibrated confidence (:class:`Calibration`: the reading's raw confidence and the
  damage measured where it was read, mapped to the probability of being right) reaches the threshold. Otherwise
  the degradations are measured in the evidence region (then, if none passes its threshold there, on the whole
  page) and the tool for the most severe one still available is chosen (page orientation first: nothing reads
  on a sideways page; an upside-down verdict is checked against the text lines). Once a photometric tool was
  rolled back as "no change needed", only geometric tools are tried.
- ``review``: re-reads the relevant region before and after the tool and keeps the change when the answer's
  calibrated probability rose beyond its noise floor, or the answer changed to one the reader is surer of, or
  to one as probable read from clearly more legible text, but never to one read from text that reads less than
  half as well (the default ``answer`` rule of :class:`~docintent.brains.offline.review.ReviewEvidence`); rotations
  are judged by the orientation classifier.
- ``diagnose``: every degradation whose measured severity passes its threshold.
- MACT's ``plan`` / ``execute`` / ``judge`` / ``conclude``: :mod:`docintent.brains.offline.roles`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, fields, replace
from typing import Annotated, Any, Literal

import cv2
from pydantic import BaseModel, ConfigDict, Field

from ...errors import ConfigError
from ...ocr import ENGINES, ReadingSession, get_engine
from ...page import Box, Page
from ...perception.degradations import DEGRADATIONS
from ...perception.service import Perception
from ...reader.readers import READERS, RULES_BIAS, RULES_WEIGHT
from ...reader.reading import QuestionReader, Reading
from ...tools import get_tool, tools_for
from ...trace import Action, Phase, ReviewStep
from ...vocabulary import ROTATION_TOOLS
from ..base import MactRoles, Restorer, State
from ..decisions import Answer, Change, Diagnosis, Keep, Rollback, UseTool
from ..roles import Correction, Execution, Plan, PlanStep, Verdict
from . import roles
from .review import DEFAULT_FLOORS, REVIEW_RULES, NoiseFloors, ReviewEvidence, ReviewRule


@dataclass(frozen=True)
class Calibration:
    """The probability that a reading is right, from its confidence and the damage measured where it was read:
    ``sigmoid(bias + confidence x c + damage x excess)``, a logistic fit on development data
    (``benchmarks/calibration.py fit``; excess in [0, 1] is how far the worst measured degradation passes its
    threshold). ``scale``: ``"raw"`` when ``c`` is the rule cascade's raw confidence (how OCR confidence, label
    match and answer type agree, not a probability), ``"probability"`` when ``c`` is the logit of the scored
    reader's calibrated probability (which knows the layout but not the damage).

    >>> round(Calibration(bias=-3.0, confidence=6.0, damage=-1.0)(0.5, 0.0), 2)
    0.5
    >>> round(Calibration(bias=0.0, confidence=1.0, damage=-1.0, scale="probability")(0.8, 0.0), 2)
    0.8
    """

    bias: float
    confidence: float
    damage: float
    scale: Literal["raw", "probability"] = "raw"

    def __call__(self, raw: float, excess: float) -> float:
        c = raw
        if self.scale == "probability":
            p = min(max(raw, 1e-6), 1 - 1e-6)
            c = math.log(p / (1 - p))
        z = self.bias + self.confidence * c + self.damage * excess
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


#: The rule cascade's calibration: fitted on development data only (the broad dev split's clean renders and every third
#: capture, every third sample of the real-page dev split, synthetic seed 101: 680 upright readings) by
#: ``benchmarks/calibration.py fit`` (``benchmarks/results/calibration_broad_dev_fit.md``).
RULES_CALIBRATION: Calibration | None = Calibration(bias=RULES_BIAS, confidence=RULES_WEIGHT, damage=-1.084)
#: The scored reader's confidence is already a probability calibrated on clean and OCR-noised layouts of families
#: the scorer never saw; what it cannot know is the damage measured on the page. Its weight was fitted on
#: development captures (the first 78 readings of every third sample of the real-page dev split, all damaged, so
#: the probability's own weight is held at 1 and no bias is fitted: ``benchmarks/calibration.py fit-damage``).
SCORED_CALIBRATION: Calibration = Calibration(bias=0.0, confidence=1.0, damage=-1.747, scale="probability")
#: The calibration of the default reader.
DEFAULT_CALIBRATION: Calibration | None = SCORED_CALIBRATION
#: Phase A answers directly at this calibrated confidence (chosen on the same development data: restoring
#: below it, with Phase B's check, scored best in simulation; 0.9 scored the same with more tools).
ANSWER_THRESHOLD = 0.85
#: Calibrated confidence at and above which Phase A tries no photometric restoration (under the answer review rule;
#: the evidence and page rules try them as before): a tool that moves no text (light, shadow, blur, moire) was kept
#: in none of the 183 development reviews where the answer was already read at this probability or more, and those
#: reviews were most of Phase B's time (``benchmarks/tool_value.py``); geometric tools are still tried up to
#: ``answer_threshold``.
PHOTOMETRIC_THRESHOLD = 0.2
#: Question-free review: a photometric step whose targeted severity fell by less than this is rolled back unread.
UNMOVED = 0.02
#: Question-free review: a step is rolled back when fewer than this share of the characters read before are read.
TEXT_KEPT = 0.9


class OfflineReaderOptions(BaseModel):
    """Options of :class:`OfflineReader` (``--brain-opt key=value``)."""

    model_config = ConfigDict(extra="forbid", arbitrary_types_allowed=True)

    engine: Annotated[
        str | None,
        Field(
            description="OCR engine: a kind of docintent.ocr.ENGINES, plug-ins included (default: DOCINTENT_OCR_ENGINE, "
            "else rapidocr)"
        ),
    ] = None
    reader: Annotated[
        str,
        Field(
            description=(
                "how answers are read off the layout: a kind of docintent.reader.READERS (scored: candidates from every "
                "source chosen by the trained scorer; rules: the rule cascade alone)"
            )
        ),
    ] = "scored"
    answer_threshold: Annotated[
        float, Field(ge=0.0, le=1.0, description="calibrated confidence at which Phase A answers")
    ] = ANSWER_THRESHOLD
    photometric_threshold: Annotated[
        float,
        Field(
            ge=0.0,
            le=1.0,
            description="under the answer review rule, the answer's confidence (calibrated, as answer_threshold) "
            "below which Phase A tries a photometric tool (light, shadow, blur, moire); 1 tries them up to "
            "answer_threshold",
        ),
    ] = PHOTOMETRIC_THRESHOLD
    severity_threshold: Annotated[
        float | None,
        Field(
            ge=0.0, le=1.0, description=("one severity threshold for every degradation (default: each family's own)")
        ),
    ] = None
    orientation_confidence: Annotated[
        float, Field(ge=0.0, le=1.0, description="classifier confidence needed to turn the page")
    ] = 0.6
    keep_margin: Annotated[float, Field(ge=0.0, le=1.0, description="legibility gain a kept restoration needs")] = 0.0
    review_rule: Annotated[ReviewRule, Field(description="Phase B rule")] = "answer"
    noise_floors: Annotated[
        NoiseFloors | dict[str, Any] | None,
        Field(
            description="the noise floors of Phase B's quantities as {legibility, confidence, severity, tie} "
            "(default: the measured ones)"
        ),
    ] = None
    calibration: Annotated[
        Calibration | dict[str, float] | Literal["default"] | None,
        Field(
            description="the confidence calibration as {bias, confidence, damage, scale}, null for the reader's own "
            "confidence, or default: the one fitted for the reader"
        ),
    ] = "default"


@dataclass
class _Memo:
    """The reader's memo for one question: its readings, and the orientation verdicts and severities it measured
    per page state (and region)."""

    reader: QuestionReader | None = None
    orientation: dict[str, str | None] = field(default_factory=dict)
    severities: dict[tuple[str, Box | None], dict[str, float]] = field(default_factory=dict)


class OfflineReader(Restorer, MactRoles):
    """Brain that reads with OCR and decides with measured signals (see the module docstring).

    ``engine``: OCR engine kind; ``answer_threshold``: calibrated confidence at which a question counts as
    answerable; ``severity_threshold``: one threshold for every degradation (None: each family's own);
    ``orientation_confidence``: classifier confidence needed to rotate the page; ``calibration``: maps the
    reading's raw confidence and the damage measured where it read to the probability that the answer is right
    (:class:`Calibration`); the answers' confidences and ``answer_threshold`` are on that scale. None keeps the
    raw confidence.
    """

    name = "offline"
    Options = OfflineReaderOptions

    def __init__(
        self,
        engine: str | None = None,
        answer_threshold: float = ANSWER_THRESHOLD,
        photometric_threshold: float = PHOTOMETRIC_THRESHOLD,
        severity_threshold: float | None = None,
        orientation_confidence: float = 0.6,
        keep_margin: float = 0.0,
        review_rule: str = "answer",
        calibration: Calibration | dict | None | Literal["default"] = "default",
        noise_floors: NoiseFloors | dict | None = None,
        reader: str = "scored",
    ) -> None:
        if review_rule not in REVIEW_RULES:
            raise ValueError(f"review_rule {review_rule!r}: expected one of {', '.join(REVIEW_RULES)}")
        self.review_rule = review_rule
        if engine is not None:
            ENGINES.entry(engine)  # an unknown kind: one line naming every registered engine
        self.engine_kind = engine
        self.answer_threshold = float(answer_threshold)
        self.photometric_threshold = float(photometric_threshold)
        self.keep_margin = float(keep_margin)
        self.perception = Perception(
            severity_threshold=severity_threshold, orientation_confidence=orientation_confidence
        )
        self.reader_kind = reader
        self._reader = READERS.get(reader)  # an unknown kind: one line naming every valid reader
        if isinstance(calibration, str) and calibration == "default":
            # a plug-in reader's confidence is taken as a probability, like the scored reader's
            calibration = RULES_CALIBRATION if reader == "rules" else SCORED_CALIBRATION
        if isinstance(calibration, dict):  # from the command line: --brain-opt calibration='{"bias": ...}'
            calibration = Calibration(**calibration)
        if calibration is not None and not isinstance(calibration, Calibration):
            raise ValueError(f"calibration {calibration!r}: expected a Calibration, its fields as a mapping, or None")
        self.calibration = calibration
        if isinstance(noise_floors, dict):
            known = [f.name for f in fields(NoiseFloors)]
            unknown = [k for k in noise_floors if k not in known]
            if unknown:
                raise ConfigError(
                    f"brain 'offline': noise_floors has an unknown floor {unknown[0]!r}; valid floors: {', '.join(known)}"
                )
            noise_floors = NoiseFloors(**noise_floors)
        self.floors = noise_floors or DEFAULT_FLOORS

    # -- reading ------------------------------------------------------------------------------------

    @property
    def engine(self):
        return get_engine(self.engine_kind)

    def question_reader(self, state: State) -> QuestionReader:
        """This question's reader: the question analysed once, each page state read once."""
        memo = self.memo(state, _Memo)
        if memo.reader is None or memo.reader.question != state.question:
            memo.reader = QuestionReader(state.question, state.task, self.engine, self._reader)
        return memo.reader

    def reading_session(self, state: State) -> ReadingSession:
        """This question's OCR session: each page state detected once, each line crop recognised once."""
        return self.question_reader(state).session

    def work(self, state: State) -> dict[str, int]:
        """The question's reading work: the counters of its :class:`~docintent.ocr.ReadingSession` (text-line
        detections, lines recognised and reused, boxes carried over, region, crop and page reads, orientation
        checks), each the same whether the OCR cache was cold, warm or off."""
        reader = self.memo(state, _Memo).reader
        return dict(reader.session.stats) if reader is not None else {}

    def read(self, state: State, page: Page) -> Reading:
        """OCR ``page`` (once per page state) and read the answer from its layout."""
        return self.question_reader(state).read(page)

    def orientation_fix(self, state: State, page: Page) -> str | None:
        """The rotation tool that makes ``page`` upright (None: upright), measured once per page state."""
        fixes = self.memo(state, _Memo).orientation
        if page.hash not in fixes:
            fixes[page.hash] = self.perception.upright_fix(page, self.reading_session(state))
        return fixes[page.hash]

    def severities(self, state: State, page: Page, region: Box | None) -> dict[str, float]:
        """Severities of every measured family in ``region`` of ``page``, measured once per question."""
        cache = self.memo(state, _Memo).severities
        key = (page.hash, None if region in (None, Box.FULL) else region)
        if key not in cache:
            cache[key] = self.perception.severities(page, key[1])
        return cache[key]

    # -- the four questions ---------------------------------------------------------------------------

    def answer(self, state: State) -> Answer:
        reading = self.read(state, state.page)
        answer = self._better_with_zoom(state, self._answer_of(reading, f"read by {reading.source}"))
        return self._calibrated(state, state.page, reading.region, answer)

    def decide(self, state: State):
        decision = self._decide(state)
        if isinstance(decision, Answer) and "zoom" in state.available_tools:
            return self._zoom_or(state, decision)
        return decision

    def _decide(self, state: State):
        page = state.page
        fix = self.orientation_fix(state, page)
        if fix and fix in state.available_tools:
            return UseTool(fix, "the page is not upright, so no text can be read")
        reading = self.read(state, page)
        found = self._calibrated(state, page, reading.region, self._answer_of(reading, reading.source))
        if found.confidence >= self.answer_threshold or not state.available_tools:
            return replace(found, reasoning=f"answerable: {found.reasoning} (confidence {found.confidence:.2f})")
        # A kept restoration already did what it can; running it again on its own output rarely reads better.
        # Kept is every change that was not rolled back: without a review (agres) each one is, and asking for
        # the same tool again would repeat it on its own output round after round, each time a new page state
        # to read.
        kept = kept_tools(state.history)
        # Under the answer rule, a photometric restoration that changed nothing the answer depends on ("no change
        # needed") says the page's light, contrast and sharpness are not what holds the answer back: the other
        # photometric tools are not tried, only geometric ones (on the real-page dev split, 75 of 175 questions
        # reached that point; none of the 80 photometric restorations run after it changed an answer's score).
        settled = self.review_rule == "answer" and settled_photometry(state.history)
        # An answer read at a fair probability is not held back by the page's light or sharpness: a photometric
        # tool moves no text, so it is tried only on an improbable answer (see PHOTOMETRIC_THRESHOLD).
        probable = self.review_rule == "answer" and found.confidence >= self.photometric_threshold
        geometric_only = settled or probable
        # The damage where the answer was read first; when nothing there passes its threshold, the damage
        # elsewhere on the page (an uncertain reading's region may be the wrong one).
        passed: list[str] = []  # damage past its threshold whose photometric tools are not tried now
        for region in dict.fromkeys((reading.region, Box.FULL)):
            ranked = sorted(self.severities(state, page, region).items(), key=lambda kv: -kv[1])
            for degradation, severity in ranked:
                if severity <= self.perception.threshold(degradation):
                    continue
                untried = [t for t in tools_for(degradation) if t in state.available_tools and t not in kept]
                tool = next((t for t in untried if not geometric_only or get_tool(t).geometric), None)
                if tool is not None:
                    where = "the evidence region" if region != Box.FULL else "the page"
                    return UseTool(
                        tool,
                        f"{degradation} severity {severity:.2f} in {where}; answer confidence {found.confidence:.3f}",
                        region=None if region == Box.FULL else region,
                    )
                if untried:
                    passed.append(degradation)
        if settled:
            why = "a restoration of the page's light or sharpness changed nothing the answer depends on"
            return replace(found, reasoning=f"{why}; {found.reasoning}")
        if probable and passed:
            why = (
                f"{passed[0]} damage left: at answer confidence {found.confidence:.2f} (>= "
                f"{self.photometric_threshold:.2f}) the page's light and sharpness are not what holds the answer back"
            )
            return replace(found, reasoning=f"{why}; {found.reasoning}")
        return replace(found, reasoning=f"no restorable degradation found; {found.reasoning}")

    def review(self, state: State, change: Change):
        if change.tool in ROTATION_TOOLS:
            return self._review_turn(state, change)
        if self.review_rule == "page":
            return self._review_page(state, change)
        evidence = self.review_evidence(state, change)
        keep, because, figures, decided_by = evidence.explain(self.review_rule, self.keep_margin, self.floors)
        why = f"{because} ({figures})" if figures else because
        # ``because`` and ``decided_by`` let the trace say the verdict in plain words with the figure behind it
        measured = {**evidence.measurements(), "because": because, "decided_by": decided_by}
        return (Keep if keep else Rollback)(f"{evidence.describe()}: {why}", measurements=measured)

    def diagnose(self, state: State) -> Diagnosis:
        page = state.page
        found = [name for name, _ in self.perception.above(page)]
        rotation = self.orientation_fix(state, page)
        if rotation:
            found.insert(0, "orientation")
        return Diagnosis(tuple(found), rotation)

    # -- Phase B --------------------------------------------------------------------------------------

    def _review_turn(self, state: State, change: Change):
        """Text cannot be read on a sideways page, so the orientation classifier is the judge of a turn."""
        b_fix, a_fix = self.orientation_fix(state, change.before), self.orientation_fix(state, change.after)
        verdict = (
            f"orientation before: {'upright' if b_fix is None else 'needs ' + b_fix}; "
            f"after: {'upright' if a_fix is None else 'needs ' + a_fix}"
        )
        measured: dict[str, Any] = {"before": b_fix, "after": a_fix, "decided_by": "orientation"}
        if self.review_rule == "page":  # question-free: kept only when the page is upright after the turn
            keep = a_fix is None
            because = "the page is upright after the turn" if keep else "the page is still not upright"
            return (Keep if keep else Rollback)(because, measurements={**measured, "because": because})
        # Kept when the page was not upright and the turn did not have to be undone: upright now, or needing a
        # further turn (the classifier can take a page turned 270 degrees for one turned 180; the next round's
        # turn completes it and is reviewed the same way).
        undo = a_fix is not None and _turn(change.tool) + _turn(a_fix) == 360
        keep = b_fix is not None and not undo
        if keep:
            because = (
                "the page is upright now" if a_fix is None else f"the page turned the right way (still needs {a_fix})"
            )
        else:
            because = "the page was upright already" if b_fix is None else "the turn went the wrong way"
        return (Keep if keep else Rollback)(verdict, measurements={**measured, "because": because})

    def _review_page(self, state: State, change: Change):
        """The question-free rule (``restore --auto``): the whole page judged, never a step whose targeted damage
        did not move or after which text was lost."""
        target = change.degradation
        if not change.geometric and target in DEGRADATIONS and get_degradation_measured(target):
            before = self.severities(state, change.before, None).get(target)
            after = self.severities(state, change.after, None).get(target, 0.0)
            if before is not None and after >= before - UNMOVED:
                # The damage the tool is for is still there (demoire cannot remove a pattern that is print, such as
                # a table of contents' dot leaders; a deblurring that sharpens noise): rolled back without reading
                # the page again, which is most of a step's time.
                return Rollback(
                    f"{target} severity {before:.2f} -> {after:.2f}: the damage it targets is still there",
                    measurements={
                        "severity_before": before,
                        "severity_after": after,
                        "degradation": target,
                        "because": f"the {target} damage is still there",
                        "decided_by": "severity",
                    },
                )
        evidence = self.review_evidence(state, change, whole_page=True)
        reader = self.question_reader(state)
        chars_before, chars_after = reader.characters(change.before), reader.characters(change.after)
        # Legibility saturates with the amount of text, so text a tool lost (a page outline found around only part
        # of the page, a page turned blank) is counted on its own.
        page_keep, because, _, decided_by = evidence.explain("page")
        keep = page_keep and chars_after >= TEXT_KEPT * chars_before
        if page_keep and not keep:
            because, decided_by = "text was lost", "characters"
        reason = f"{evidence.describe(answer=False)}; characters read {chars_before} -> {chars_after}"
        measured = {
            **evidence.measurements(),
            "characters_before": chars_before,
            "characters_after": chars_after,
            "because": because,
            "decided_by": decided_by,
        }
        return (Keep if keep else Rollback)(reason, measurements=measured)

    def review_evidence(self, state: State, change: Change, whole_page: bool = False) -> ReviewEvidence:
        """What Phase B measures on ``change``: the evidence's legibility before and after, the measured severity
        of the degradation the tool targets, and how certain the answer read from each page is.
        ``whole_page``: judge the whole page (question-free restoration) instead of the evidence region."""
        before, after = change.before, change.after
        reader = self.question_reader(state)
        geometric = whole_page or change.geometric
        if geometric:
            region = None
            b, a = reader.legibility(before, None), reader.legibility(after, None)
        else:
            # A photometric tool moved no text: the lines found on the page before are read again on the page
            # after, and only inside the evidence region (elsewhere the page keeps its earlier reading). With no
            # evidence located the restored page is read afresh: its text may be found where it was not before.
            region = reader.read(before).review_region
            if region != Box.FULL:
                reader.session.quads(after, geometry_of=before)
            b, a = reader.legibility(before, region), reader.legibility(after, region)
            if region != Box.FULL:
                reader.patch(after, before, region)
        severity_before = severity_after = None
        if change.degradation in DEGRADATIONS and get_degradation_measured(change.degradation):
            where = None if region in (None, Box.FULL) else region
            severity_before = self.perception.severities(before, where).get(change.degradation)
            severity_after = self.perception.severities(after, where).get(change.degradation)
        rb, ra = reader.read(before), reader.read(after)
        return ReviewEvidence(
            change.tool,
            "page" if geometric else "evidence region",
            b,
            legibility_after=a,
            severity_before=severity_before,
            severity_after=severity_after,
            confidence_before=rb.confidence,
            confidence_after=ra.confidence,
            answer_before=rb.answer,
            answer_after=ra.answer,
            degradation=change.degradation,
        )

    # -- confidence that knows the page's damage ------------------------------------------------------

    def damage(self, state: State, page: Page, region: Box) -> tuple[float, str | None]:
        """How far the worst restorable degradation measured in ``region`` of ``page`` passes its threshold:
        ``(excess, degradation)``, excess in [0, 1] (0: nothing passes its threshold)."""
        return self.perception.excess(self.severities(state, page, region))

    def worst_damage(self, state: State, page: Page, region: Box) -> tuple[float, str | None]:
        """:meth:`damage` in ``region`` or on the whole page, whichever is worse: a wrong reading's region can be
        clean while the damage that misled it lies elsewhere on the page."""
        return max(self.damage(state, page, region), self.damage(state, page, Box.FULL), key=lambda d: d[0])

    def _calibrated(self, state: State, page: Page, region: Box, answer: Answer) -> Answer:
        """``answer`` with its confidence mapped through the calibration (raw confidence and measured damage)."""
        if self.calibration is None or not answer.text:
            return answer
        excess, degradation = self.worst_damage(state, page, region)
        confidence = self.calibration(answer.confidence, excess)
        damage = f", {degradation} {excess:.2f} past its threshold" if degradation else ", no damage measured"
        why = f"{answer.reasoning}; raw confidence {answer.confidence:.2f}{damage}"
        return replace(answer, confidence=confidence, reasoning=why)

    @staticmethod
    def _answer_of(reading: Reading, why: str) -> Answer:
        """The reading's answer with its reader's confidence, its region, the lines it was read from and the
        runners-up the reader rejected (named in the reasoning)."""
        lines = tuple((line.text, line.confidence, line.box) for line in reading.evidence) if reading.answer else ()
        region = reading.region if reading.answer and reading.region != Box.FULL else None
        if reading.abstained:
            why = f"abstained: looked for {reading.looked_for or 'the asked field'!r}"
        if reading.runners_up:
            rejected = "; ".join(f"{r.text[:40]!r} {r.probability:.2f} ({r.source})" for r in reading.runners_up)
            why = f"{why}; runners-up: {rejected}"
        box = reading.box if reading.answer and reading.box != Box.FULL else None
        return Answer(reading.answer, reading.confidence, why, region=region, evidence=lines, box=box)

    # -- zoom (only when the strategy offers the inspection tool) -------------------------------------

    def _zoom_evidence(self, state: State):
        return next((e for e in reversed(state.evidence) if getattr(e, "page_hash", None) == state.page.hash), None)

    def _zoom_or(self, state: State, base: Answer):
        """About to answer without full confidence: read the evidence region closer first (once per page)."""
        # Zooming compares raw reading confidences (the crop has no damage measure of its own); the answer it
        # keeps is calibrated like any other.
        reading = self.read(state, state.page)
        if self._zoom_evidence(state) is not None:
            raw = self._answer_of(reading, f"read by {reading.source}")
            return self._calibrated(state, state.page, reading.region, self._better_with_zoom(state, raw))
        region = reading.region
        if reading.confidence < 0.95 and region != Box.FULL and region.area < 0.5:
            box = region.expand(0.04, 0.03)
            kind = "table" if state.task == "table" else "text"
            return UseTool(
                "zoom",
                f"raw reading confidence {reading.confidence:.2f}: read the evidence region closer",
                {"label": "evidence region", "bbox": [round(v, 4) for v in box.as_tuple()], "type": kind},
            )
        return base

    def _better_with_zoom(self, state: State, base: Answer) -> Answer:
        """Read the zoomed crop enlarged to ~1000 px and keep whichever answer is more confident."""
        evidence = self._zoom_evidence(state)
        if evidence is None:
            return base
        crop = evidence.crop
        scale = min(3.0, 1000.0 / max(crop.width, crop.height))
        if scale > 1.0:
            crop = crop.derive(
                cv2.resize(crop.pixels, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC), f"upscale{scale:.2f}"
            )
        reading = self.read(state, crop)
        if reading.answer and reading.confidence > base.confidence:
            # the crop's boxes are mapped back onto the page that was zoomed
            frame = evidence.box
            region = reading.region.within(frame) if reading.region != Box.FULL else frame
            lines = tuple((l.text, l.confidence, l.box.within(frame)) for l in reading.evidence)
            box = reading.box.within(frame) if reading.box != Box.FULL else None
            return Answer(
                reading.answer,
                reading.confidence,
                f"read on the zoomed crop by {reading.source}",
                region=region,
                evidence=lines,
                box=box,
            )
        return base

    # -- MACT roles -----------------------------------------------------------------------------------

    def plan(
        self, state: State, count: int = 1, feedback: Verdict | None = None, previous: tuple[Plan, ...] = ()
    ) -> list[Plan]:
        """Plans from the question's intent; after a plan mistake, the next alternative."""
        return roles.make_plans(self.question_reader(state).query, state.task, count, feedback, tried=len(previous))

    def execute(
        self,
        state: State,
        plan: Plan,
        step: PlanStep,
        results: dict[str, Execution],
        candidate: int = 0,
        feedback: Verdict | None = None,
    ) -> Execution:
        """One step through the reader's primitives; candidates 0-2 read the evidence three ways."""
        return roles.execute_step(
            self.question_reader(state), state, plan, step, results, candidate % roles.CANDIDATES, feedback
        )

    def judge(self, state: State, plan: Plan, results: dict[str, Execution]) -> Verdict:
        """Independent checks: label exists, zoomed re-read by the second engine, arithmetic, answer type."""
        return roles.judge_plan(self.question_reader(state), state, plan, results)

    def conclude(
        self, state: State, runs: list[tuple[Plan, dict[str, Execution], Verdict]], corrections: list[Correction]
    ) -> Answer:
        """The accepted plan's result, formatted for the task."""
        return roles.conclude(state, runs, corrections, self.question_reader(state).query)


def kept_tools(history: list) -> set[str]:
    """The restoration tools whose change stands in ``history``: applied (a new page state) and not rolled back
    by a review since."""
    kept: set[str] = set()
    for step in history:
        if step.phase == Phase.TOOL and step.action == Action.APPLIED and step.tool:
            kept.add(step.tool)
        elif step.phase == Phase.REVIEW and step.action == Action.ROLLBACK and step.tool:
            kept.discard(step.tool)
    return kept


def settled_photometry(history: list) -> bool:
    """Whether a photometric restoration in ``history`` was reviewed as "no change needed" (rolled back: the
    answer and its probability were the same on the page after it)."""
    return any(
        isinstance(step, ReviewStep) and step.no_change_needed and step.tool and not get_tool(step.tool).geometric
        for step in history
    )


def get_degradation_measured(name: str) -> bool:
    """Whether the family ``name`` has a measured severity (every registered family but orientation)."""
    return DEGRADATIONS.get(name).measured


def _turn(tool: str) -> int:
    """Clockwise degrees of a rotation tool (``rotate_90`` -> 90)."""
    return int(tool.rsplit("_", 1)[1])


__all__ = [
    "ANSWER_THRESHOLD",
    "DEFAULT_CALIBRATION",
    "PHOTOMETRIC_THRESHOLD",
    "Calibration",
    "OfflineReader",
    "OfflineReaderOptions",
]
