"""The offline reader: a brain built on OCR and measured image signals. No model, no network.

>>> from docintent.brains import get_brain
>>> reader = get_brain("offline")                 # RapidOCR from the wheel
>>> reader.answer(state).text                     # doctest: +SKIP
'$1,250.00'

How it answers each of the Brain's questions:

- ``answer``: reads the page, analyses the question (locating words, expected answer type), and reads the
  answer by layout: the value right of / after / below a field label, the cell where a row label meets a
  column header, an aggregate over a column, or the value of a chart category.
- ``decide``: answerable = the calibrated confidence (:class:`Calibration`: the reading's raw confidence and
  the damage measured where it was read, mapped to the probability of being right) reaches the threshold.
  Otherwise the degradations are measured in the evidence region (then, if none passes its threshold there, on
  the whole page) and the tool for the most severe one still available is chosen (page orientation first:
  nothing reads on a sideways page; an upside-down verdict is checked against the text lines).
- ``review``: re-reads the relevant region before and after the tool and keeps the change when the evidence
  became more legible (OCR confidence, characters recognised, strength of the label match), the answer more
  certain, or the targeted damage fell while the text read as well (:class:`ReviewEvidence`); rotations are
  judged by the orientation classifier.
- ``diagnose``: every degradation whose measured severity passes its threshold.
- MACT's ``plan`` / ``execute`` / ``judge`` / ``conclude``: see :mod:`docintent.brains.offline.mact` (plans
  from the question's intent, execution through these primitives, judgment by independent checks).
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ...layout.lines import Layout
from ...ocr import detect_orientation, get_engine
from ...ocr.base import OcrResult
from ...ocr.session import ReadingSession
from ...page import Box, Page
from ...perception import signals
from ...perception.signals import Thresholds
from ...tools import get_tool, tools_for
from ...trace import Action, Phase
from ...vocabulary import DEGRADATIONS, ROTATION_TOOLS
from ..base import Answer, Brain, Diagnosis, Keep, Rollback, State, UseTool
from ..roles import Correction, Execution, Plan, PlanStep, Verdict
from . import mact
from .answer import solve
from .extract import Matcher
from .question import GENERIC_WORDS, QuestionInfo, analyse, content_words

log = logging.getLogger(__name__)

#: Degradations a restoration tool can fix from the measured signals (orientation is the classifier's).
RESTORABLE = tuple(d for d in DEGRADATIONS if d != "orientation")


@dataclass
class Reading:
    """What the reader got from one page: the OCR, the layout and the best answer with its evidence."""

    ocr: OcrResult
    layout: Layout
    answer: str
    confidence: float
    region: Box
    source: str


@dataclass
class _ReaderMemo:
    """The reader's memo for one question: its analysis, readings and orientation verdicts by page hash, and
    the region re-reads ("patches") that let a photometric restoration reuse the earlier reading elsewhere."""

    info: QuestionInfo | None = None
    readings: dict[str, Reading] = field(default_factory=dict)
    patches: dict[str, tuple[OcrResult, OcrResult]] = field(default_factory=dict)
    orientation: dict[str, str | None] = field(default_factory=dict)
    session: ReadingSession | None = None
    severities: dict[tuple[str, Box], dict[str, float]] = field(default_factory=dict)


#: Phase B rules: "legibility" keeps a restoration only when the evidence region reads better (OCR confidence,
#: characters, label match); "evidence" also keeps it when the answer became more certain, or when the targeted
#: damage measurably fell while the text stayed as legible (a tie is not a loss when the damage is gone), and
#: rolls it back when the answer became clearly less certain.
#: "page" is the question-free rule of ``docintent restore --auto``: legibility of the whole page or the damage fell.
REVIEW_RULES = ("evidence", "legibility", "page")

#: Classifier confidence above which an upside-down verdict is taken without reading text lines both ways
#: (the classifier's false upside-down verdicts on sparse pages came with 0.6-0.65; true ones with 0.92).
UPSIDE_DOWN_SURE = 0.85


@dataclass(frozen=True)
class Calibration:
    """The probability that a reading is right, from its raw confidence and the damage measured where it was
    read: ``sigmoid(bias + confidence x raw + damage x excess)``, a logistic fit on development data
    (``benchmarks/calibration.py fit``; excess in [0, 1] is how far the worst measured degradation passes its
    threshold). The raw confidence is how OCR confidence, label match and answer type agree; it is not a
    probability, and the same raw value means something else on a clean and on a damaged page.

    >>> round(Calibration(bias=-3.0, confidence=6.0, damage=-1.0)(0.5, 0.0), 2)
    0.5
    """

    bias: float
    confidence: float
    damage: float

    def __call__(self, raw: float, excess: float) -> float:
        z = self.bias + self.confidence * raw + self.damage * excess
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


#: The default calibration: fitted on development data only (synthetic seed 101, 180 readings, and every third
#: sample of the real-page dev split, 175 readings; upright pages only) by ``benchmarks/calibration.py fit``.
DEFAULT_CALIBRATION: Calibration | None = Calibration(bias=-1.225, confidence=5.235, damage=-1.469)
#: Phase A answers directly at this calibrated confidence (chosen on the same development data: restoring
#: below it, with Phase B's check, scored best in simulation; 0.9 scored the same with more tools).
ANSWER_THRESHOLD = 0.85


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


class OfflineReader(Brain):
    """Brain that reads with OCR and decides with measured signals (see the module docstring).

    ``engine``: OCR engine kind; ``answer_threshold``: confidence at which a question counts as answerable;
    ``severity_threshold``: minimum measured severity for a degradation to justify a tool (None: the
    per-family thresholds calibrated in :class:`docintent.perception.signals.Thresholds`);
    ``orientation_confidence``: classifier confidence needed to rotate the page;
    ``calibration``: maps the reading's raw confidence and the damage measured where it read (see
    :meth:`OfflineReader.damage`) to the probability that the answer is right (:class:`Calibration`); the
    answers' confidences and ``answer_threshold`` are on that scale. None keeps the raw confidence.
    """

    name = "offline"

    def __init__(
        self,
        engine: str | None = None,
        answer_threshold: float = ANSWER_THRESHOLD,
        severity_threshold: float | None = None,
        orientation_confidence: float = 0.6,
        keep_margin: float = 0.0,
        review_rule: str = "evidence",
        calibration: Calibration | dict | None = DEFAULT_CALIBRATION,
    ) -> None:
        if review_rule not in REVIEW_RULES:
            raise ValueError(f"review_rule {review_rule!r}: expected one of {', '.join(REVIEW_RULES)}")
        self.review_rule = review_rule
        self.engine_kind = engine
        self.answer_threshold = float(answer_threshold)
        self.severity_threshold = severity_threshold
        self.orientation_confidence = float(orientation_confidence)
        self.keep_margin = float(keep_margin)
        if isinstance(calibration, dict):  # from the command line: --brain-opt calibration='{"bias": ...}'
            calibration = Calibration(**calibration)
        if calibration is not None and not isinstance(calibration, Calibration):
            raise ValueError(f"calibration {calibration!r}: expected a Calibration, its fields as a mapping, or None")
        self.calibration = calibration

    # -- reading --------------------------------------------------------------------------------

    @property
    def engine(self):
        return get_engine(self.engine_kind)

    def session(self, state: State) -> ReadingSession:
        """This question's OCR session: each page state detected once, each line crop recognised once."""
        memo = self.memo(state, _ReaderMemo)
        if memo.session is None:
            memo.session = ReadingSession(self.engine)
        return memo.session

    def _info(self, state: State) -> QuestionInfo:
        memo = self.memo(state, _ReaderMemo)
        if memo.info is None:
            memo.info = analyse(state.question, state.task)
        return memo.info

    def read(self, state: State, page: Page) -> Reading:
        """OCR ``page`` (cached by hash) and read the answer from its layout."""
        memo = self.memo(state, _ReaderMemo)
        cache = memo.readings
        hit = cache.get(page.hash)
        if hit is not None:
            return hit
        patch = memo.patches.get(page.hash)
        if patch is not None:
            # A photometric tool changed only how the page looks, not where things are: keep the earlier
            # reading outside the evidence region and take the re-read region from the restored page.
            base, region_result = patch
            ocr = _merge(base, region_result, page.hash)
        else:
            ocr = self.session(state).read(page)
        layout = Layout.from_ocr(ocr)
        info = self._info(state)
        result = solve(info, state.task, layout, page)
        reading = Reading(ocr, layout, result.text, result.confidence, result.region, result.source)
        cache[page.hash] = reading
        return reading

    def _orientation_fix(self, state: State, page: Page) -> str | None:
        fixes = self.memo(state, _ReaderMemo).orientation
        if page.hash not in fixes:
            orient = detect_orientation(page)
            fix = orient.fix if orient.confidence >= self.orientation_confidence else None
            if fix == "rotate_180" and orient.confidence < UPSIDE_DOWN_SURE and not self._reads_upside_down(state, page):
                fix = None
            fixes[page.hash] = fix
        return fixes[page.hash]

    def _reads_upside_down(self, state: State, page: Page, lines: int = 8) -> bool:
        """Whether the page's text reads better turned by 180 degrees than as it is.

        The orientation classifier looks at three small windows and confuses upright with upside down on
        sparse pages (charts, title pages); text lines settle it: lines are horizontal either way, so the same
        detected lines are recognised as cut and turned, and the turn is confirmed when it reads with clearly
        higher confidence. The detection is the one the upright page's reading needs anyway. Engines without
        line-level recognition keep the classifier's verdict."""
        session = self.session(state)
        if not session.line_level:
            return True
        quads = session.quads(page)
        if len(quads) == 0:
            return True
        engine: Any = session.engine  # a line-level engine (checked above): it crops and recognises lines
        widths = [float(np.linalg.norm(q[1] - q[0])) for q in quads]
        heights = [float(np.linalg.norm(q[3] - q[0])) for q in quads]
        chosen = [q for q, w, h in sorted(zip(quads, widths, heights), key=lambda t: -t[1]) if w > 2.5 * h][:lines]
        if not chosen:
            return True
        crops = [engine.crop_line(page.pixels, q) for q in chosen]
        as_is = engine.recognize_lines(crops, chosen)
        turned = engine.recognize_lines([np.ascontiguousarray(c[::-1, ::-1]) for c in crops], chosen)
        upright = sum(conf * len(text.strip()) for text, conf, _ in as_is)
        flipped = sum(conf * len(text.strip()) for text, conf, _ in turned)
        return flipped > 1.1 * upright

    # -- the four questions ---------------------------------------------------------------------

    def answer(self, state: State) -> Answer:
        reading = self.read(state, state.page)
        answer = self._better_with_zoom(state, Answer(reading.answer, reading.confidence, f"read by {reading.source}"))
        return self._calibrated(state, state.page, reading.region, answer)

    # -- confidence that knows the page's damage ----------------------------------------------------

    def damage(self, state: State, page: Page, region: Box) -> tuple[float, str | None]:
        """How far the worst restorable degradation measured in ``region`` of ``page`` passes its threshold:
        ``(excess, degradation)``, excess in [0, 1] (0: nothing passes its threshold)."""
        worst: tuple[float, str | None] = (0.0, None)
        for degradation, severity in self._measured(state, page, region).items():
            threshold = self._threshold(degradation)
            if severity > threshold:
                excess = min(1.0, (severity - threshold) / max(1e-6, 1.0 - threshold))
                if excess > worst[0]:
                    worst = (excess, degradation)
        return worst

    def _measured(self, state: State, page: Page, region: Box) -> dict[str, float]:
        """:meth:`_severities` of ``region`` of ``page``, measured once per question (calibration and Phase A's
        choice of tool both need them)."""
        cache = self.memo(state, _ReaderMemo).severities
        key = (page.hash, region)
        if key not in cache:
            cache[key] = self._severities(page, region)
        return cache[key]

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

    def decide(self, state: State):
        decision = self._decide(state)
        if isinstance(decision, Answer) and "zoom" in state.available_tools:
            return self._zoom_or(state, decision)
        return decision

    # -- zoom (only when the strategy offers the inspection tool) -----------------------------------

    def _zoom_evidence(self, state: State):
        return next((e for e in reversed(state.evidence) if getattr(e, "page_hash", None) == state.page.hash), None)

    def _zoom_or(self, state: State, base: Answer):
        """About to answer without full confidence: read the evidence region closer first (once per page)."""
        # Zooming compares raw reading confidences (the crop has no damage measure of its own); the answer it
        # keeps is calibrated like any other.
        reading = self.read(state, state.page)
        if self._zoom_evidence(state) is not None:
            raw = Answer(reading.answer, reading.confidence, f"read by {reading.source}")
            return self._calibrated(state, state.page, reading.region, self._better_with_zoom(state, raw))
        region = reading.region
        if reading.confidence < 0.95 and region != Box.FULL and region.area < 0.5:
            box = region.expand(0.04, 0.03)
            kind = "table" if state.task == "table" else "text"
            return UseTool(
                "zoom",
                f"answer confidence {reading.confidence:.2f}: read the evidence region closer",
                {"label": "evidence region", "bbox": [round(v, 4) for v in box.as_tuple()], "type": kind},
            )
        return base

    def _better_with_zoom(self, state: State, base: Answer) -> Answer:
        """Read the zoomed crop enlarged to ~1000 px and keep whichever answer is more confident."""
        evidence = self._zoom_evidence(state)
        if evidence is None:
            return base
        import cv2

        crop = evidence.crop
        scale = min(3.0, 1000.0 / max(crop.width, crop.height))
        if scale > 1.0:
            crop = crop.derive(cv2.resize(crop.pixels, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC), f"upscale{scale:.2f}")
        reading = self.read(state, crop)
        if reading.answer and reading.confidence > base.confidence:
            return Answer(reading.answer, reading.confidence, f"read on the zoomed crop by {reading.source}")
        return base

    def _decide(self, state: State):
        page = state.page
        fix = self._orientation_fix(state, page)
        if fix and fix in state.available_tools:
            return UseTool(fix, "the page is not upright, so no text can be read")
        reading = self.read(state, page)
        found = self._calibrated(state, page, reading.region, Answer(reading.answer, reading.confidence, reading.source))
        if found.confidence >= self.answer_threshold or not state.available_tools:
            return Answer(reading.answer, found.confidence, f"answerable: {found.reasoning} (confidence {found.confidence:.2f})")
        # A kept restoration already did what it can; running it again on its own output rarely reads better.
        kept = {s.tool for s in state.history if s.phase == Phase.REVIEW and s.action == Action.KEEP}
        # The damage where the answer was read first; when nothing there passes its threshold, the damage
        # elsewhere on the page (an uncertain reading's region may be the wrong one).
        for region in dict.fromkeys((reading.region, Box.FULL)):
            ranked = sorted(self._measured(state, page, region).items(), key=lambda kv: -kv[1])
            for degradation, severity in ranked:
                tool = next((t for t in tools_for(degradation) if t in state.available_tools and t not in kept), None)
                if severity > self._threshold(degradation) and tool is not None:
                    where = "the evidence region" if region != Box.FULL else "the page"
                    return UseTool(tool, f"{degradation} severity {severity:.2f} in {where}; answer confidence {found.confidence:.2f}")
        return Answer(reading.answer, found.confidence, f"no restorable degradation found; {found.reasoning}")

    def review(self, state: State, before: Page, after: Page):
        last_tool = next((s.tool for s in reversed(state.history) if s.phase == Phase.TOOL), None)
        if last_tool in ROTATION_TOOLS:
            # Text cannot be read on a sideways page, so the orientation classifier is the judge here.
            b_fix, a_fix = self._orientation_fix(state, before), self._orientation_fix(state, after)
            verdict = f"orientation before: {'upright' if b_fix is None else 'needs ' + b_fix}; after: {'upright' if a_fix is None else 'needs ' + a_fix}"
            # Kept when the page was not upright and the turn did not have to be undone: upright now, or needing
            # a further turn (the classifier can take a page turned 270 degrees for one turned 180; the next
            # round's turn completes it and is reviewed the same way).
            undo = a_fix is not None and last_tool is not None and _turn(last_tool) + _turn(a_fix) == 360
            return Keep(verdict) if b_fix is not None and not undo else Rollback(verdict)
        evidence = self.review_evidence(state, before, after, last_tool)
        keep = evidence.keep(self.review_rule, self.keep_margin)
        return Keep(evidence.describe()) if keep else Rollback(evidence.describe())

    def review_evidence(
        self, state: State, before: Page, after: Page, tool: str | None, whole_page: bool = False
    ) -> ReviewEvidence:
        """What Phase B measures on the page before and after ``tool``: the evidence's legibility, the measured
        severity of the degradation the tool targets, and how certain the answer read from each page is.
        ``whole_page``: judge the whole page (question-free restoration) instead of the evidence region."""
        geometric = whole_page or (tool is not None and get_tool(tool).geometric) or before.size != after.size
        degradation = get_tool(tool).degradation if tool is not None else None
        if geometric:
            region = None
            b = self._legibility(state, before, None)
            a = self._legibility(state, after, None)
        else:
            # A photometric tool moved no text: the lines found on the page before are read again on the page
            # after, and only inside the evidence region (elsewhere the page keeps its earlier reading). With no
            # evidence located the restored page is read afresh: its text may be found where it was not before.
            reading = self.read(state, before)
            region = reading.region
            session = self.session(state)
            if region != Box.FULL:
                session.quads(after, geometry_of=before)
            b = self._legibility(state, before, region)
            a = self._legibility(state, after, region)
            if region != Box.FULL:
                self.memo(state, _ReaderMemo).patches[after.hash] = (reading.ocr, session.read(after, region))
        severity_before = severity_after = None
        if degradation in RESTORABLE:
            where = None if region in (None, Box.FULL) else region
            severity_before = self._severities(before, where).get(degradation)
            severity_after = self._severities(after, where).get(degradation)
        rb, ra = self.read(state, before), self.read(state, after)
        return ReviewEvidence(
            tool or "", "page" if geometric else "evidence region", b, a, severity_before, severity_after,
            rb.confidence, ra.confidence, rb.answer, ra.answer, degradation or "",
        )

    # -- MACT roles ------------------------------------------------------------------------------

    def plan(self, state: State, count: int = 1, feedback: Verdict | None = None,
             previous: tuple[Plan, ...] = ()) -> list[Plan]:
        """Plans from the question's intent; after a plan mistake, the next alternative."""
        return mact.make_plans(state.question, state.task, count, feedback, tried=len(previous))

    def execute(self, state: State, plan: Plan, step: PlanStep, results: dict[str, Execution],
                candidate: int = 0, feedback: Verdict | None = None) -> Execution:
        """One step through the reader's primitives; candidates 0-2 read the evidence three ways."""
        return mact.execute_step(self, state, plan, step, results, candidate % mact.CANDIDATES, feedback)

    def judge(self, state: State, plan: Plan, results: dict[str, Execution]) -> Verdict:
        """Independent checks: label exists, zoomed re-read by the second engine, arithmetic, answer type."""
        return mact.judge_plan(self, state, plan, results)

    def conclude(self, state: State, runs: list[tuple[Plan, dict[str, Execution], Verdict]],
                 corrections: list[Correction]) -> Answer:
        """The accepted plan's result, formatted for the task."""
        return mact.conclude(state, runs, corrections)

    def diagnose(self, state: State) -> Diagnosis:
        page = state.page
        found = [d for d, s in sorted(self._severities(page, None).items(), key=lambda kv: -kv[1]) if s > self._threshold(d)]
        rotation = self._orientation_fix(state, page)
        if rotation:
            found.insert(0, "orientation")
        return Diagnosis(tuple(found), rotation)

    # -- measurements ---------------------------------------------------------------------------

    def _threshold(self, degradation: str) -> float:
        if self.severity_threshold is not None:
            return float(self.severity_threshold)

        return Thresholds().of(degradation)

    @staticmethod
    def _severities(page: Page, region: Box | None) -> dict[str, float]:
        # Orientation is judged by the classifier on the whole page (in decide), not per region.
        measured = signals.measure(page, None if region in (None, Box.FULL) else region, orientation=False)
        return {d: float(s) for d, s in measured.severities.items() if d in RESTORABLE}

    def _legibility(self, state: State, page: Page, region: Box | None) -> float:
        """How well the evidence reads: confidence-weighted characters plus the strength of the label match."""
        info = self._info(state)
        if region is None or region == Box.FULL:
            reading = self.read(state, page)
            result, layout = reading.ocr, reading.layout
        else:
            result = self.session(state).read(page, region)
            layout = Layout.from_ocr(result)
        if not result.lines:
            return 0.0
        chars = sum(sum(ch.isalnum() for ch in line.text) * line.confidence**2 for line in result.lines)

        matcher = Matcher(info, layout)
        best = max((matcher.match(it)[0] for it in layout.items), default=0.0)
        plain = sum(sum(ch.isalnum() for ch in line.text) for line in result.lines) or 1
        quality = chars / plain  # mean squared confidence per character
        return quality * (0.5 + 0.5 * best) * (1.0 - 1.0 / (1.0 + plain / 20.0))


def _turn(tool: str) -> int:
    """Clockwise degrees of a rotation tool (``rotate_90`` -> 90)."""
    return int(tool.rsplit("_", 1)[1])


def _merge(base: OcrResult, region_result: OcrResult, page_hash: str) -> OcrResult:
    """``base`` lines outside ``region_result.region`` plus the lines read inside it."""
    region = region_result.region
    assert region is not None
    keep = []
    for line in base.lines:
        cx, cy = line.box.center
        if not (region.x0 <= cx <= region.x1 and region.y0 <= cy <= region.y1):
            keep.append(line)
    lines = sorted(keep + list(region_result.lines), key=lambda l: (round(l.box.center[1], 3), l.box.x0))
    return OcrResult(tuple(lines), base.engine, page_hash, None, base.seconds + region_result.seconds, {"merged": True})


__all__ = ["GENERIC_WORDS", "REVIEW_RULES", "Calibration", "OfflineReader", "Reading", "ReviewEvidence", "content_words"]
