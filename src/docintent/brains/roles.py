"""What the four MACT roles hand each other: plans of steps, executions of a step, verdicts, corrections.

Planning writes :class:`Plan` objects (steps with a goal and an expected output, no tool bound); execution turns
one :class:`PlanStep` into an :class:`Execution` (the tool it chose and what came out); judgment returns a
:class:`Verdict` (accept, or a plan mistake / an execution mistake of one step, with a description); the answer
role reads the corrected process and the :class:`Correction` pairs. All are frozen dataclasses, so a scripted
brain can script them and a trace can store them as plain data (:meth:`to_dict`).

>>> step = PlanStep("s1", "read the value of Catalogue", "number", op="lookup", args={"target": "Catalogue"})
>>> plan = Plan("p1", "diff", (step, PlanStep("s2", "subtract", "number", inputs=("s1",), op="compute")))
>>> plan.step("s2").inputs
('s1',)
>>> Verdict.flag_execution("s1", "a zoomed re-read gives 27, not 24").target
'execution'
"""

from __future__ import annotations

from dataclasses import KW_ONLY, asdict, dataclass, field
from typing import Any, Literal

from .decisions import Usage

#: What a verdict routes back to: the plan (re-plan) or the execution of one step (re-execute it).
MistakeTarget = Literal["plan", "execution"]


@dataclass(frozen=True)
class PlanStep:
    """One step of a plan: a ``goal`` in words, the ``expected`` output (number, category, count, series,
    truefalse, text), the ids of earlier steps it takes as ``inputs``. ``op`` and ``args`` say the same in a
    form a program reads (``lookup`` {target}, ``series``, ``compute`` {operation}, ``count`` {condition},
    ``rank`` {order, rank}, ``verify`` {claim}, ``read``); they name an operation, never a tool."""

    id: str
    goal: str
    expected: str = "text"
    _: KW_ONLY
    inputs: tuple[str, ...] = ()
    op: str = "read"
    args: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Plan:
    """A high-level plan for the question: ``intent`` (lookup, compare, diff, sum, avg, count, extreme,
    verify) and its ordered ``steps``."""

    id: str
    intent: str
    steps: tuple[PlanStep, ...]
    _: KW_ONLY
    rationale: str = ""
    usage: Usage = Usage()

    def step(self, step_id: str) -> PlanStep | None:
        """The step called ``step_id``, or None."""
        return next((s for s in self.steps if s.id == step_id), None)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "intent": self.intent,
            "rationale": self.rationale,
            "steps": [s.to_dict() for s in self.steps],
        }


@dataclass(frozen=True)
class Execution:
    """What executing one step produced: the ``tool`` it chose (with ``args``), the ``output`` as text, the
    ``value`` a later step can compute with (a number, a label, or a list of ``[label, number]`` pairs),
    and the executor's ``confidence`` (the scorer that keeps the best of ``Ne`` candidates)."""

    step_id: str
    tool: str
    output: str
    _: KW_ONLY
    value: Any = None
    confidence: float = 0.5
    args: dict[str, Any] = field(default_factory=dict)
    evidence: str = ""
    candidate: int = 0
    usage: Usage = Usage()

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("usage")
        return data


@dataclass(frozen=True)
class Verdict:
    """Judgment of a plan and its executions: ``accept``, or a mistake in the ``plan`` or in the execution of
    step ``step_id``, described by ``mistake`` (what is wrong and, when known, what the check found)."""

    accept: bool
    target: MistakeTarget | None = None
    step_id: str | None = None
    _: KW_ONLY
    mistake: str = ""
    checks: tuple[str, ...] = ()
    usage: Usage = Usage()

    @classmethod
    def ok(cls, checks: tuple[str, ...] = (), usage: Usage = Usage()) -> Verdict:
        """Every check passed."""
        return cls(True, None, None, mistake="", checks=checks, usage=usage)

    @classmethod
    def flag_plan(cls, mistake: str, checks: tuple[str, ...] = (), usage: Usage = Usage()) -> Verdict:
        """The plan itself is wrong (a step missing, the wrong operation, a target that does not exist)."""
        return cls(False, "plan", None, mistake=mistake, checks=checks, usage=usage)

    @classmethod
    def flag_execution(
        cls, step_id: str, mistake: str, checks: tuple[str, ...] = (), usage: Usage = Usage()
    ) -> Verdict:
        """Step ``step_id`` was executed wrongly (a misread value, wrong arithmetic)."""
        return cls(False, "execution", step_id, mistake=mistake, checks=checks, usage=usage)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data.pop("usage")
        return data


@dataclass(frozen=True)
class Correction:
    """One mistake and what the orchestration did about it: the flagged ``verdict`` and the output of the
    flagged step (or the plan's final output) ``before`` and ``after`` the correction."""

    verdict: Verdict
    plan_id: str
    before: str
    after: str

    def to_dict(self) -> dict[str, Any]:
        return {"plan_id": self.plan_id, "before": self.before, "after": self.after, **self.verdict.to_dict()}


__all__ = ["Correction", "Execution", "MistakeTarget", "Plan", "PlanStep", "Verdict"]
