"""Trace and Result: every step of a strategy as typed data (printed by the CLI, stored in runs, shown in the
viewer, given to a model as context).

Each kind of step is its own class - :class:`DecideStep`, :class:`ToolStep`, :class:`ReviewStep`,
:class:`InspectStep`, :class:`DiagnoseStep`, :class:`AnswerStep`, :class:`PlanningStep`,
:class:`ExecutionStep`, :class:`JudgmentStep` - with the fields that kind has, and each describes itself in
plain words (:meth:`Step.describe`; ``verbose=True`` adds the figures). They are stored as the rows runs have
always stored: ``phase`` and ``action`` as strings, kind-specific fields inside ``data``, so an old
``results.jsonl`` loads unchanged (:meth:`Step.from_dict` picks the class by phase) and ``Step.phase == "B"``
still holds for code that reads rows as plain dicts.

>>> step = ReviewStep(Phase.REVIEW, Action.KEEP, "deshadowing", reason="the evidence reads better")
>>> step.to_dict()["phase"], step.phase == "B"
('B', True)
>>> type(Step.from_dict(step.to_dict())).__name__, Step.from_dict(step.to_dict()) == step
('ReviewStep', True)
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field, fields
from enum import StrEnum
from typing import Any, ClassVar

from .page import Box, Page


class Phase(StrEnum):
    """Which part of a strategy a step belongs to."""

    DECIDE = "A"  # Phase A: answer now, or pick a tool
    REVIEW = "B"  # Phase B: keep or roll back the last restoration
    TOOL = "tool"  # a restoration tool ran
    DIAGNOSE = "diagnose"  # the judge baseline listed degradations
    ANSWER = "answer"  # the final answer from the current page
    INSPECT = "inspect"  # zoom / OCR of a region gathered evidence
    LOCATE = "locate"  # a page of a document was chosen to read (the evidence locator ranked the pages)
    SEARCH = "search"  # a retrieval agent called one of its tools (its action names the tool)
    FINALIZE = "finalize"  # a retrieval agent's budget ran out and it was asked for its ranking
    # MACT's roles (the answer role records under ANSWER)
    PLAN = "plan"  # planning wrote plans (or re-planned after a plan mistake)
    EXECUTE = "execute"  # one candidate execution of one plan step
    JUDGE = "judge"  # judgment accepted a plan's process or flagged a mistake


class Action(StrEnum):
    """What a step did."""

    ANSWER = "answer"
    USE_TOOL = "use_tool"
    KEEP = "keep"
    ROLLBACK = "rollback"
    APPLIED = "applied"  # a tool produced a new page state
    NO_CHANGE = "no_change"  # a tool ran and returned the same pixels (nothing to fix): nothing to review
    FAILED = "failed"
    SKIPPED = "skipped"  # not run: the tool is not offered, or already ran on this page state
    STOPPED = "stopped"  # the run was stopped from outside (a deadline, a cancelled request)
    DIAGNOSED = "diagnosed"
    INSPECTED = "inspected"
    LOCATED = "located"  # the page to read next was chosen
    FORCED = "forced"  # a final ranking asked for after the step budget
    # MACT's roles
    PLANNED = "planned"
    REPLANNED = "replanned"  # planning again after a plan mistake (a correction)
    EXECUTED = "executed"
    REEXECUTED = "reexecuted"  # a flagged step run again (a correction)
    SELECTED = "selected"  # the best of Ne candidate executions kept
    ACCEPTED = "accepted"
    FLAGGED = "flagged"


def box_list(box: Box | None) -> list[float] | None:
    """A box as the four numbers stored in rows (None stays None)."""
    return None if box is None else [round(v, 6) for v in box.as_tuple()]


def box_from(value: Any) -> Box | None:
    """The Box a stored row describes (four numbers in [0, 1]), or None."""
    if value is None:
        return None
    try:
        return Box.clamped(*(float(v) for v in value))
    except (TypeError, ValueError):
        return None


#: Step classes by phase (filled by :meth:`Step.__init_subclass__`); phases without a class load as Step.
_KINDS: dict[str, type[Step]] = {}


@dataclass
class Step:
    """One step of a strategy. ``before`` / ``after``: page hashes; ``data``: details no field names.

    Subclasses declare their ``phase_kind`` and extra fields; :meth:`to_dict` stores those fields in ``data``
    so every row has the same top-level keys.
    """

    phase: Phase
    action: Action | str
    tool: str | None = None
    _: KW_ONLY
    reason: str = ""
    before: str | None = None
    after: str | None = None
    seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    round: int | None = None
    data: dict[str, Any] = field(default_factory=dict)

    #: The phase a subclass records (None: the generic step).
    phase_kind: ClassVar[Phase | None] = None
    #: The enum a subclass's actions come from (a retrieval agent's steps name its tools).
    actions: ClassVar[type[StrEnum]] = Action

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("phase_kind") is not None:
            _KINDS[str(cls.phase_kind)] = cls

    def __new__(cls, *args: Any, **kwargs: Any) -> Step:
        # ``Step(Phase.REVIEW, ...)`` builds the step class of its phase, so every step of a kind is typed
        # whoever made it (its kind's fields are taken out of ``data`` in __post_init__).
        if cls is Step:
            phase = args[0] if args else kwargs.get("phase")
            cls = _KINDS.get(str(phase), Step)
        return object.__new__(cls)

    def __post_init__(self) -> None:
        # Accept the stored strings too (old runs, hand-written traces); unknown values fail here, not later.
        self.phase = Phase(self.phase)
        self.action = self.actions(self.action)
        defaults = {f.name: f for f in fields(self) if f.name not in _BASE_FIELDS}
        for name in [k for k in self.data if k in defaults]:
            value = self.data.pop(name)
            if defaults[name].type in ("Box | None", Box):
                value = box_from(value)
            setattr(self, name, value)

    # -- storage --------------------------------------------------------------------------------------

    def _extra_names(self) -> list[str]:
        return [f.name for f in fields(self) if f.name not in _BASE_FIELDS]

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; enums become their string values, kind-specific fields go into ``data``."""
        out: dict[str, Any] = {name: getattr(self, name) for name in _BASE_FIELDS}
        data = dict(self.data)
        for name in self._extra_names():
            value = getattr(self, name)
            if isinstance(value, Box):
                value = box_list(value)
            if value is not None and value != {} and value != []:
                data[name] = value
        out["phase"], out["action"], out["data"] = str(self.phase), str(self.action), data
        return out

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> Step:
        """The Step a :meth:`to_dict` row describes, as the class of its phase (unknown keys are ignored)."""
        kind = _KINDS.get(str(row.get("phase")), Step) if cls is Step else cls
        base = {k: v for k, v in row.items() if k in _BASE_FIELDS}
        base["data"] = dict(base.get("data") or {})
        return kind(**base)

    # -- words ----------------------------------------------------------------------------------------

    def describe(self, verbose: bool = False) -> str:
        """This step in plain words (``verbose``: with the figures behind it)."""
        what = f"{self.action}" + (f" {self.tool}" if self.tool else "")
        return f"{what}: {self.reason}" if self.reason else what

    def for_model(self) -> str | None:
        """This step as a line of a model's text context (None: a step the model is not told about)."""
        return None

    def _short_reason(self) -> str:
        # long model reasoning would make the summary cost what the full context costs
        short = self.reason if len(self.reason) <= 200 else self.reason[:197] + "..."
        return f" ({short})" if short else ""


_BASE_FIELDS = tuple(f.name for f in fields(Step))


@dataclass
class DecideStep(Step):
    """Phase A: answer now (``answer``, ``confidence``), or use ``tool`` (with ``args``) on ``region``; ``need``:
    what the page needs, in words for people (from the degradation the tool restores)."""

    phase_kind: ClassVar[Phase | None] = Phase.DECIDE
    _: KW_ONLY
    answer: str | None = None
    confidence: float | None = None
    args: dict[str, Any] = field(default_factory=dict)
    region: Box | None = None
    need: str | None = None

    def describe(self, verbose: bool = False) -> str:
        if self.action == Action.ANSWER:
            text = (
                f"can answer now: {self.answer!r}"
                if self.answer
                else "no answer can be read, and nothing is left to try"
            )
            if verbose and self.confidence is not None:
                text += f" (confidence {self.confidence:.2f})"
            return text + (f" - {self.reason}" if verbose and self.reason else "")
        text = f"{self.need}: run {self.tool}" if self.need else f"run {self.tool}"
        return text + (f" - {self.reason}" if verbose and self.reason else "")

    def for_model(self) -> str | None:
        if self.action == Action.USE_TOOL:
            return f"the evidence was not readable enough{self._short_reason()}; you called {self.tool}."
        return None


@dataclass
class ToolStep(Step):
    """A restoration tool ran (``args``); ``work``: what it did, in amounts that do not depend on the machine or
    the load (candidates tried, peaks found, the size it worked at, pixels written), each within the tool's bound;
    ``seconds``: what it took, observed, beside ``budget_s``, the tool's budget for a 2048-px page on an idle
    machine. The budget is a figure to compare with, never a limit: nothing a tool decides depends on time."""

    phase_kind: ClassVar[Phase | None] = Phase.TOOL
    _: KW_ONLY
    args: dict[str, Any] = field(default_factory=dict)
    work: dict[str, Any] = field(default_factory=dict)
    budget_s: float | None = None

    def describe(self, verbose: bool = False) -> str:
        if self.action == Action.APPLIED:
            text = f"ran {self.tool}"
        elif self.action == Action.NO_CHANGE:
            text = f"ran {self.tool}: it found nothing to change"
        elif self.action == Action.FAILED:
            text = f"{self.tool} failed: {self.reason}"
        elif self.action == Action.SKIPPED:
            text = f"{self.tool} not run: {self.reason}"
        else:
            text = f"{self.tool} {self.action}"
        if verbose and self.work:
            text += " [" + ", ".join(f"{k} {v}" for k, v in self.work.items()) + "]"
        if verbose and self.budget_s:
            text += f" in {self.seconds:.2f} s (budget {self.budget_s:g} s)"
        return text

    def for_model(self) -> str | None:
        if self.action == Action.NO_CHANGE:
            return f"{self.tool} found nothing to change on the page; it is no longer offered."
        if self.action in (Action.FAILED, Action.SKIPPED):
            return f"{self.tool} did not run{self._short_reason()}; it is no longer offered."
        return None


def _decided_figure(m: dict[str, Any]) -> str | None:
    """The before -> after figure of the quantity a review's verdict rested on (None when there is none)."""
    decided = m.get("decided_by")
    label = {
        "confidence": "raw reading confidence",
        "legibility": "legibility",
        "severity": str(m.get("degradation") or "damage"),
        "characters": "characters read",
    }.get(str(decided))
    key = "confidence" if decided == "confidence" else str(decided)
    before, after = m.get(f"{key}_before"), m.get(f"{key}_after")
    if label is None or not isinstance(before, (int, float)) or not isinstance(after, (int, float)):
        return None
    if isinstance(before, int) and isinstance(after, int):
        return f"{label} {before} -> {after}"
    return f"{label} {before:.2f} -> {after:.2f}"


@dataclass
class ReviewStep(Step):
    """Phase B: ``tool``'s change kept or rolled back; ``measurements``: the figures the verdict rests on."""

    phase_kind: ClassVar[Phase | None] = Phase.REVIEW
    _: KW_ONLY
    measurements: dict[str, Any] = field(default_factory=dict)

    def describe(self, verbose: bool = False) -> str:
        if self.no_change_needed:
            return f"no change needed from {self.tool} (rolled back) - {self.because(verbose)}".rstrip(" -")
        return f"{self.verdict()} {self.tool} - {self.because(verbose)}".rstrip(" -")

    def verdict(self) -> str:
        """ "kept" or "rolled back"."""
        return "kept" if self.action == Action.KEEP else "rolled back"

    @property
    def no_change_needed(self) -> bool:
        """A rollback of a change that measurably altered nothing the review compares (a tie): the page as it
        was is kept, and nothing was wrong with the tool's output."""
        return self.action != Action.KEEP and str((self.measurements or {}).get("because", "")).startswith(
            "no change needed"
        )

    def because(self, verbose: bool = False) -> str:
        """Why, in plain words with the figure that decided (``verbose``: every measurement the brain gave)."""
        if verbose:
            return self.reason
        m = self.measurements or {}
        words = m.get("because")
        if not words:  # a brain that gives no plain words of its own (a model's reason is its own words)
            return self.reason
        figure = _decided_figure(m)
        return f"{words} ({figure})" if figure else str(words)

    def for_model(self) -> str | None:
        if self.action == Action.KEEP:
            return f"review kept the result of {self.tool}{self._short_reason()}."
        return f"review rolled back {self.tool}{self._short_reason()}; it is no longer offered."


@dataclass
class InspectStep(Step):
    """Zoom / OCR of a region gathered evidence (``args``; ``evidence``: what was read, in short)."""

    phase_kind: ClassVar[Phase | None] = Phase.INSPECT
    _: KW_ONLY
    args: dict[str, Any] = field(default_factory=dict)
    evidence: str | None = None

    def describe(self, verbose: bool = False) -> str:
        if self.action == Action.FAILED:
            return f"{self.tool} failed: {self.reason}"
        return f"{self.tool} read: {self.evidence or ''}".rstrip(": ")

    def for_model(self) -> str | None:
        if self.action == Action.INSPECTED:
            return f"{self.tool} found: {self.evidence or ''}"
        return None


@dataclass
class LocateStep(Step):
    """A page of a document chosen to read: ``page`` (1-based) of the ``considered`` pages; ``ranking``: the pages
    the evidence locator ranked, best first, as ``{"page", "relevance", "evidence"}``; ``previous``: the page read
    before that gave no answer (None for the first choice); ``unranked``: how many of the considered pages were not
    read to rank them (no text layer, past the OCR budget: ranked last)."""

    phase_kind: ClassVar[Phase | None] = Phase.LOCATE
    _: KW_ONLY
    page: int | None = None
    considered: int | None = None
    ranking: list[Any] = field(default_factory=list)
    previous: int | None = None
    unranked: int | None = None

    def describe(self, verbose: bool = False) -> str:
        if self.previous is not None:
            text = f"page {self.previous} gave no answer: reading page {self.page} next"
        else:
            best = next((r for r in self.ranking if r.get("page") == self.page), None)
            evidence = (best or {}).get("evidence")
            if evidence:
                why = f"its text matches the question best ({_quote(evidence)})"
            else:
                why = "no page's text matches the question, so the pages are read in order"
            considered = self.considered or len(self.ranking)
            if self.unranked:
                text = (
                    f"looked through {considered - self.unranked} of {considered} pages (the other "
                    f"{self.unranked} have no text layer and are past the OCR budget: ranked last): "
                    f"reading page {self.page}, {why}"
                )
            else:
                text = f"looked through {considered} pages: reading page {self.page}, {why}"
        if verbose and self.ranking:
            text += (
                " ["
                + ", ".join(f"page {r.get('page')} {float(r.get('relevance') or 0):.2f}" for r in self.ranking)
                + "]"
            )
        return text


def _quote(text: str, limit: int = 60) -> str:
    one = " ".join(str(text).split())
    return repr(one if len(one) <= limit else one[: limit - 3] + "...")


@dataclass
class DiagnoseStep(Step):
    """The judge baseline's diagnosis: ``degradations`` present, and the ``rotation`` that makes it upright."""

    phase_kind: ClassVar[Phase | None] = Phase.DIAGNOSE
    _: KW_ONLY
    degradations: list[str] = field(default_factory=list)
    rotation: str | None = None

    def describe(self, verbose: bool = False) -> str:
        found = ", ".join(self.degradations) or "no damage"
        return f"found {found}" + (f" (needs {self.rotation})" if self.rotation else "")


@dataclass
class AnswerStep(Step):
    """The answer (``answer``, ``confidence``); ``region``: where on the page it was read; ``evidence``: the
    lines it was read from as ``[text, confidence, box]``; ``corrections``: MACT's corrections."""

    phase_kind: ClassVar[Phase | None] = Phase.ANSWER
    _: KW_ONLY
    answer: str | None = None
    confidence: float | None = None
    region: Box | None = None
    evidence: list[Any] = field(default_factory=list)
    corrections: list[Any] = field(default_factory=list)

    def describe(self, verbose: bool = False) -> str:
        if self.action == Action.FAILED or self.action == Action.STOPPED:
            return f"no answer: {self.reason}"
        text = f"answer {self.answer!r}" if self.answer else "no answer found"
        if verbose and self.confidence is not None:
            text += f" (confidence {self.confidence:.2f})"
        return text + (f" - {self.reason}" if verbose and self.reason else "")


@dataclass
class PlanningStep(Step):
    """MACT planning wrote (or, after a plan mistake, rewrote) plan ``plan_id``."""

    phase_kind: ClassVar[Phase | None] = Phase.PLAN
    _: KW_ONLY
    plan_id: str | None = None
    plan: dict[str, Any] = field(default_factory=dict)
    mistake: str | None = None

    def describe(self, verbose: bool = False) -> str:
        steps = self.plan.get("steps", []) if isinstance(self.plan, dict) else []
        goals = "; ".join(str(s.get("goal", "")) for s in steps if isinstance(s, dict))
        verb = "re-planned" if self.action == Action.REPLANNED else "planned"
        text = f"{verb} {self.plan_id}: {goals}" if goals else f"{verb} {self.plan_id}"
        return text + (f" (after: {self.mistake})" if self.mistake else "")


@dataclass
class ExecutionStep(Step):
    """MACT execution of step ``step_id`` of plan ``plan_id`` (candidate ``candidate``): ``output``."""

    phase_kind: ClassVar[Phase | None] = Phase.EXECUTE
    _: KW_ONLY
    plan_id: str | None = None
    step_id: str | None = None
    candidate: int | None = None
    output: str | None = None
    confidence: float | None = None
    args: dict[str, Any] = field(default_factory=dict)

    def describe(self, verbose: bool = False) -> str:
        where = f"{self.plan_id} {self.step_id}" + (f" #{self.candidate}" if self.candidate is not None else "")
        if self.action == Action.SELECTED:
            return f"kept {where} -> {self.output!r}"
        text = f"executed {where} with {self.tool} -> {self.output!r}"
        return text + (f" ({self.reason})" if verbose and self.reason else "")


@dataclass
class JudgmentStep(Step):
    """MACT judgment of plan ``plan_id``: accepted, or a ``mistake`` flagged in the plan or a step."""

    phase_kind: ClassVar[Phase | None] = Phase.JUDGE
    _: KW_ONLY
    plan_id: str | None = None
    step_id: str | None = None
    verdict: str | None = None
    mistake: str | None = None
    candidate: str | None = None
    checks: list[str] = field(default_factory=list)
    correction: int | None = None

    def describe(self, verbose: bool = False) -> str:
        if self.action == Action.ACCEPTED:
            return f"accepted {self.plan_id}" + (f": {'; '.join(self.checks)}" if verbose and self.checks else "")
        where = f"step {self.step_id}" if self.step_id else "the plan"
        return f"flagged {where} of {self.plan_id}: {self.mistake}"


def describe_trace(trace: list[Step], verbose: bool = False) -> list[str]:
    """The trace in plain words, one line per restoration tried - what the page needed, the tool, the verdict,
    as in "needs more light: ran appearance; kept - the text around the answer reads better (legibility 0.61 ->
    0.74)" - and one per other step (``verbose``: with the figures the brain gave).

    >>> steps = [DecideStep(Phase.DECIDE, Action.USE_TOOL, "appearance", need="needs more light"),
    ...          ToolStep(Phase.TOOL, Action.APPLIED, "appearance"),
    ...          ReviewStep(Phase.REVIEW, Action.KEEP, "appearance", measurements={
    ...              "because": "the text around the answer reads better", "decided_by": "legibility",
    ...              "legibility_before": 0.61, "legibility_after": 0.74}),
    ...          AnswerStep(Phase.ANSWER, Action.ANSWER, answer="$1,250.00")]
    >>> describe_trace(steps)
    ['needs more light: ran appearance; kept - the text around the answer reads better (legibility 0.61 -> 0.74)', "answer '$1,250.00'"]
    """
    lines: list[str] = []
    i = 0
    while i < len(trace):
        step = trace[i]
        nxt = trace[i + 1] if i + 1 < len(trace) else None
        if (
            isinstance(step, DecideStep)
            and step.action == Action.USE_TOOL
            and isinstance(nxt, ToolStep)
            and nxt.tool == step.tool
        ):
            parts = [nxt.describe(verbose)]
            after = trace[i + 2] if i + 2 < len(trace) else None
            i += 2
            if isinstance(after, ReviewStep) and after.tool == step.tool:
                parts.append(f"{after.verdict()} - {after.because(verbose)}".rstrip(" -"))
                i += 1
            head = f"{step.need}: " if step.need else ""
            why = f" (asked for: {step.reason})" if verbose and step.reason else ""
            lines.append(head + "; ".join(parts) + why)
            continue
        lines.append(step.describe(verbose))
        i += 1
    return lines


#: Tool actions that count as a tool having run (the paper's "Avg. Tools").
RAN = (Action.APPLIED, Action.NO_CHANGE, Action.FAILED)


@dataclass
class Provenance:
    """Where an answer came from.

    ``page``: the 1-based page number in the document; ``box``: the answer's box on that page as it was given
    (mapped back through every kept restoration; None when the reader could not place the answer, or a kept
    restoration moved content in a way it cannot undo, such as dewarping); ``read_box``: the box on the page the
    answer was read on (``read_page``, a page hash: the given page after the ``read_on`` restorations);
    ``lines``: the evidence lines as ``(text, OCR confidence, box on the read page)``; ``given_page``: the hash of
    the page as it was given (the page ``box`` is on).
    """

    page: int = 1
    box: Box | None = None
    read_box: Box | None = None
    _: KW_ONLY
    read_page: str | None = None
    lines: tuple[tuple[str, float, Box], ...] = ()
    read_on: tuple[str, ...] = ()
    given_page: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "page": self.page,
            "box": box_list(self.box),
            "read_box": box_list(self.read_box),
            "read_page": self.read_page,
            "given_page": self.given_page,
            "lines": [{"text": t, "confidence": round(c, 5), "box": box_list(b)} for t, c, b in self.lines],
            "read_on": list(self.read_on),
        }


@dataclass
class Result:
    """The outcome of one strategy on one question."""

    answer: str
    strategy: str
    confidence: float = 0.0
    _: KW_ONLY
    trace: list[Step] = field(default_factory=list)
    tools_kept: list[str] = field(default_factory=list)
    tools_rolled_back: list[str] = field(default_factory=list)
    seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None
    final_page: Page | None = field(default=None, repr=False)
    pages: dict[str, Page] = field(default_factory=dict, repr=False)  # every page state by hash
    provenance: Provenance = field(default_factory=Provenance)
    #: The work this question took, in counts that do not depend on the machine, the load or a cache (tool
    #: runs, reviews, pixels restored, and the brain's: text-line detections, lines recognised, ...); see
    #: :meth:`docintent.strategies.run.Run.work`.
    work: dict[str, int] = field(default_factory=dict)

    @property
    def tools_used(self) -> int:
        """Tools that ran (kept, rolled back or changing nothing), as the paper's "Avg. Tools" counts them."""
        return sum(1 for s in self.trace if s.phase == Phase.TOOL and s.action in RAN)

    @property
    def page(self) -> int:
        """The 1-based page number the answer came from."""
        return self.provenance.page

    @property
    def box(self) -> Box | None:
        """The answer's box on the original page (None when it cannot be placed)."""
        return self.provenance.box

    @property
    def tokens_by_phase(self) -> dict[str, dict[str, int]]:
        """Prompt and completion tokens per phase ("A", "B", "answer", "diagnose"); phases without tokens are left out."""
        totals: dict[str, dict[str, int]] = {}
        for step in self.trace:
            if step.prompt_tokens or step.completion_tokens:
                phase = totals.setdefault(str(step.phase), {"prompt": 0, "completion": 0})
                phase["prompt"] += step.prompt_tokens
                phase["completion"] += step.completion_tokens
        return totals

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (no images; page hashes stay in the trace)."""
        return {
            "answer": self.answer,
            "strategy": self.strategy,
            "confidence": self.confidence,
            "page": self.provenance.page,
            "box": box_list(self.provenance.box),
            "provenance": self.provenance.to_dict(),
            "tools_used": self.tools_used,
            "tools_kept": list(self.tools_kept),
            "tools_rolled_back": list(self.tools_rolled_back),
            "seconds": self.seconds,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "tokens_by_phase": self.tokens_by_phase,
            "work": dict(self.work),
            "error": self.error,
            "trace": [s.to_dict() for s in self.trace],
        }
