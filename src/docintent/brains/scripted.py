"""Test doubles: brains whose decisions come from a script or from your own functions.

Shipped in the library (like pydantic-ai's ``TestModel``) so users can test their own strategies, tools and
pipelines deterministically, with no model and no OCR. :class:`ScriptedBrain` scripts both protocols;
:class:`FunctionBrain` is a :class:`~docintent.brains.base.Restorer` made of functions and
:class:`FunctionMactBrain` adds the four MACT roles, all required.

>>> from docintent.brains import ScriptedBrain, UseTool, Answer, Rollback
>>> brain = ScriptedBrain(decisions=[UseTool("deshadowing"), Answer("42")], reviews=[Rollback("worse")])
>>> brain.decide(None).name, brain.decide(None).text
('deshadowing', '42')
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace

from ..errors import ConfigError
from .base import MactRoles, Restorer, State
from .decisions import Answer, Change, Decision, Diagnosis, Keep, Review
from .roles import Correction, Execution, Plan, PlanStep, Verdict


class ScriptedBrain(Restorer, MactRoles):
    """Replays scripted decisions in order.

    ``decisions``: Phase A decisions (when exhausted, ``decide`` answers with ``final``);
    ``reviews``: Phase B verdicts (when exhausted, ``Keep``); ``diagnosis``: what ``diagnose`` returns;
    ``final``: the answer of ``answer()``. Every call is recorded in ``calls`` as (method, page hash) and every
    reviewed :class:`~docintent.brains.decisions.Change` in ``changes``.

    MACT roles: ``plans`` (each item a Plan or a list of Plans, one item per ``plan`` call), ``executions``
    (one Execution per ``execute`` call; its ``step_id`` and ``candidate`` are set to the call's),
    ``verdicts`` (one per ``judge`` call) and ``conclusion`` (what ``conclude`` returns). When a role's script
    is exhausted: one plan of one "read" step; the step executed as ``final``; every process accepted; the
    conclusion is the last output of the first accepted plan.

    >>> from docintent.brains.roles import Verdict
    >>> brain = ScriptedBrain(verdicts=[Verdict.flag_execution("s1", "misread")])
    >>> brain.judge(None, None, {}).target, brain.judge(None, None, {}).accept
    ('execution', True)
    """

    name = "scripted"

    def __init__(
        self,
        decisions: Iterable[Decision] = (),
        reviews: Iterable[Review] = (),
        diagnosis: Diagnosis | Iterable[str] = (),
        final: Answer | str = "",
        plans: Iterable[Plan | list[Plan]] = (),
        executions: Iterable[Execution] = (),
        verdicts: Iterable[Verdict] = (),
        conclusion: Answer | str | None = None,
    ) -> None:
        self.plans = deque(plans)
        self.executions = deque(executions)
        self.verdicts = deque(verdicts)
        self.conclusion = Answer(conclusion) if isinstance(conclusion, str) else conclusion
        self.decisions = deque(decisions)
        self.reviews = deque(reviews)
        self.diagnosis = diagnosis if isinstance(diagnosis, Diagnosis) else Diagnosis(tuple(diagnosis))
        self.final = final if isinstance(final, Answer) else Answer(final)
        self.calls: list[tuple[str, str | None]] = []
        self.changes: list[Change] = []

    @staticmethod
    def _hash(state: State | None) -> str | None:
        return state.page.hash if state is not None else None

    def decide(self, state: State) -> Decision:
        self.calls.append(("decide", self._hash(state)))
        return self.decisions.popleft() if self.decisions else self.final

    def review(self, state: State, change: Change) -> Review:
        self.calls.append(("review", self._hash(state)))
        self.changes.append(change)
        return self.reviews.popleft() if self.reviews else Keep()

    def diagnose(self, state: State) -> Diagnosis:
        self.calls.append(("diagnose", self._hash(state)))
        return self.diagnosis

    def answer(self, state: State) -> Answer:
        self.calls.append(("answer", self._hash(state)))
        return self.final

    def plan(
        self, state: State, count: int = 1, feedback: Verdict | None = None, previous: tuple[Plan, ...] = ()
    ) -> list[Plan]:
        self.calls.append(("plan", self._hash(state)))
        if not self.plans:
            step = PlanStep("s1", "answer the question from the page", "text", op="read")
            return [Plan(f"p{len(previous) + 1}", "lookup", (step,), rationale="one reading of the page")]
        item = self.plans.popleft()
        return list(item) if isinstance(item, list) else [item]

    def execute(
        self,
        state: State,
        plan: Plan,
        step: PlanStep,
        results: dict[str, Execution],
        candidate: int = 0,
        feedback: Verdict | None = None,
    ) -> Execution:
        self.calls.append(("execute", self._hash(state)))
        if not self.executions:
            answer = self.final
            return Execution(
                step.id,
                self.name,
                answer.text,
                value=answer.text,
                confidence=answer.confidence,
                args={},
                evidence=answer.reasoning,
                candidate=candidate,
                usage=answer.usage,
            )
        return replace(self.executions.popleft(), step_id=step.id, candidate=candidate)

    def judge(self, state: State, plan: Plan, results: dict[str, Execution]) -> Verdict:
        self.calls.append(("judge", self._hash(state)))
        return self.verdicts.popleft() if self.verdicts else Verdict.ok(("scripted: accepted",))

    def conclude(
        self, state: State, runs: list[tuple[Plan, dict[str, Execution], Verdict]], corrections: list[Correction]
    ) -> Answer:
        self.calls.append(("conclude", self._hash(state)))
        if self.conclusion is not None:
            return self.conclusion
        if not runs:
            return Answer("", 0.0, "no plan ran")
        plan, results, _ = next((r for r in runs if r[2].accept), runs[0])
        final = results.get(plan.steps[-1].id) if plan.steps else None
        if final is None:
            return Answer("", 0.0, f"plan {plan.id} produced nothing")
        return Answer(final.output, final.confidence, f"last output of plan {plan.id}")


class FunctionBrain(Restorer):
    """A brain built from plain functions; a question not given a function gets a neutral answer (decide:
    answer; review: keep; diagnose: nothing; answer: empty)."""

    name = "function"

    def __init__(
        self,
        decide: Callable[[State], Decision] | None = None,
        review: Callable[[State, Change], Review] | None = None,
        diagnose: Callable[[State], Diagnosis] | None = None,
        answer: Callable[[State], Answer] | None = None,
    ) -> None:
        self._decide, self._review, self._diagnose, self._answer = decide, review, diagnose, answer

    def decide(self, state: State) -> Decision:
        return self._decide(state) if self._decide else self.answer(state)

    def review(self, state: State, change: Change) -> Review:
        return self._review(state, change) if self._review else Keep()

    def diagnose(self, state: State) -> Diagnosis:
        return self._diagnose(state) if self._diagnose else Diagnosis(())

    def answer(self, state: State) -> Answer:
        return self._answer(state) if self._answer else Answer("")


class FunctionMactBrain(FunctionBrain, MactRoles):
    """:class:`FunctionBrain` that also plays the MACT roles: ``plan``, ``execute``, ``judge`` and ``conclude``
    are all required (a MACT run with a role left out would be a different algorithm)."""

    name = "function-mact"

    def __init__(
        self,
        plan: Callable[..., list[Plan]],
        execute: Callable[..., Execution],
        judge: Callable[..., Verdict],
        conclude: Callable[..., Answer],
        **questions: Callable | None,
    ) -> None:
        missing = [
            n
            for n, f in (("plan", plan), ("execute", execute), ("judge", judge), ("conclude", conclude))
            if not callable(f)
        ]
        if missing:
            raise ConfigError(f"FunctionMactBrain needs every MACT role as a function; missing: {', '.join(missing)}")
        super().__init__(**questions)
        self._plan, self._execute, self._judge, self._conclude = plan, execute, judge, conclude

    def plan(
        self, state: State, count: int = 1, feedback: Verdict | None = None, previous: tuple[Plan, ...] = ()
    ) -> list[Plan]:
        return self._plan(state, count, feedback, previous)

    def execute(
        self,
        state: State,
        plan: Plan,
        step: PlanStep,
        results: dict[str, Execution],
        candidate: int = 0,
        feedback: Verdict | None = None,
    ) -> Execution:
        return self._execute(state, plan, step, results, candidate, feedback)

    def judge(self, state: State, plan: Plan, results: dict[str, Execution]) -> Verdict:
        return self._judge(state, plan, results)

    def conclude(
        self, state: State, runs: list[tuple[Plan, dict[str, Execution], Verdict]], corrections: list[Correction]
    ) -> Answer:
        return self._conclude(state, runs, corrections)


__all__ = ["FunctionBrain", "FunctionMactBrain", "ScriptedBrain"]
