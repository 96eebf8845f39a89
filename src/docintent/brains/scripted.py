"""Test doubles: brains whose decisions come from a script or from your own functions.

Shipped in the library (like pydantic-ai's ``TestModel``) so users can test their own strategies, tools and
pipelines deterministically, with no model and no OCR.

>>> from docintent.brains import ScriptedBrain, UseTool, Answer, Rollback
>>> brain = ScriptedBrain(decisions=[UseTool("deshadowing"), Answer("42")], reviews=[Rollback("worse")])
>>> brain.decide(None), brain.decide(None)
(UseTool(name='deshadowing', why='', args={}, usage=Usage(prompt_tokens=0, completion_tokens=0, calls=0)), Answer(text='42', confidence=0.5, reasoning='', usage=Usage(prompt_tokens=0, completion_tokens=0, calls=0)))
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import replace

from ..page import Page
from .base import Answer, Brain, Decision, Diagnosis, Keep, Review, State
from .roles import Correction, Execution, Plan, PlanStep, Verdict


class ScriptedBrain(Brain):
    """Replays scripted decisions in order.

    ``decisions``: Phase A decisions (when exhausted, ``decide`` answers with ``final``);
    ``reviews``: Phase B verdicts (when exhausted, ``Keep``); ``diagnosis``: what ``diagnose`` returns;
    ``final``: the answer of ``answer()``. Every call is recorded in ``calls`` as (method, page hash).

    MACT roles: ``plans`` (each item a Plan or a list of Plans, one item per ``plan`` call), ``executions``
    (one Execution per ``execute`` call; its ``step_id`` and ``candidate`` are set to the call's),
    ``verdicts`` (one per ``judge`` call) and ``conclusion`` (what ``conclude`` returns); a role whose script is
    exhausted (or was never given) plays :class:`Brain`'s default.

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

    @staticmethod
    def _hash(state: State | None) -> str | None:
        return state.page.hash if state is not None else None

    def decide(self, state: State) -> Decision:
        self.calls.append(("decide", self._hash(state)))
        return self.decisions.popleft() if self.decisions else self.final

    def review(self, state: State, before: Page, after: Page) -> Review:
        self.calls.append(("review", self._hash(state)))
        return self.reviews.popleft() if self.reviews else Keep()

    def diagnose(self, state: State) -> Diagnosis:
        self.calls.append(("diagnose", self._hash(state)))
        return self.diagnosis

    def answer(self, state: State) -> Answer:
        self.calls.append(("answer", self._hash(state)))
        return self.final

    def plan(self, state: State, count: int = 1, feedback: Verdict | None = None,
             previous: tuple[Plan, ...] = ()) -> list[Plan]:
        self.calls.append(("plan", self._hash(state)))
        if not self.plans:
            return super().plan(state, count, feedback, previous)
        item = self.plans.popleft()
        return list(item) if isinstance(item, list) else [item]

    def execute(self, state: State, plan: Plan, step: PlanStep, results: dict[str, Execution],
                candidate: int = 0, feedback: Verdict | None = None) -> Execution:
        self.calls.append(("execute", self._hash(state)))
        if not self.executions:
            return super().execute(state, plan, step, results, candidate, feedback)
        return replace(self.executions.popleft(), step_id=step.id, candidate=candidate)

    def judge(self, state: State, plan: Plan, results: dict[str, Execution]) -> Verdict:
        self.calls.append(("judge", self._hash(state)))
        return self.verdicts.popleft() if self.verdicts else super().judge(state, plan, results)

    def conclude(self, state: State, runs: list[tuple[Plan, dict[str, Execution], Verdict]],
                 corrections: list[Correction]) -> Answer:
        self.calls.append(("conclude", self._hash(state)))
        return self.conclusion if self.conclusion is not None else super().conclude(state, runs, corrections)


class FunctionBrain(Brain):
    """A brain built from plain functions; any method not given falls back to a neutral default."""

    name = "function"

    def __init__(
        self,
        decide: Callable[[State], Decision] | None = None,
        review: Callable[[State, Page, Page], Review] | None = None,
        diagnose: Callable[[State], Diagnosis] | None = None,
        answer: Callable[[State], Answer] | None = None,
    ) -> None:
        self._decide, self._review, self._diagnose, self._answer = decide, review, diagnose, answer

    def decide(self, state: State) -> Decision:
        return self._decide(state) if self._decide else self.answer(state)

    def review(self, state: State, before: Page, after: Page) -> Review:
        return self._review(state, before, after) if self._review else Keep()

    def diagnose(self, state: State) -> Diagnosis:
        return self._diagnose(state) if self._diagnose else Diagnosis(())

    def answer(self, state: State) -> Answer:
        return self._answer(state) if self._answer else Answer("")
