"""MACT inside the one orchestration: planning, execution, judgment and answer as four roles of one brain.

``mact`` reasons over the page as given; ``docintent+mact`` first restores the page with DocIntent's Phase A /
Phase B loop and then reasons over the kept page. Knobs (strategy options): ``np`` plans, ``ne`` candidate
executions per step (the most confident is kept), ``nc`` corrections at most; ``roles`` switches roles off
for ablations (``plan,execute`` / ``plan,execute,judge`` / all four).

The loop, per question::

    plans = brain.plan(state, np)                        # steps with goals and expected outputs, no tools
    for each plan: execute every step ne times, keep the most confident; verdict = brain.judge(...)
    while no plan is accepted and corrections < nc:      # route the first flagged plan's mistake back
        plan mistake      -> brain.plan(state, 1, feedback=verdict, previous=plans) replaces that plan
        execution mistake -> the flagged step (and the steps after it) run again with the next candidates
        verdict = brain.judge(...)
    answer = brain.conclude(state, runs, corrections)    # or, without the answer role, the first accepted
                                                         # plan's last output
Every role call is a :class:`~docintent.trace.Step` with its role as ``phase``, the plan and step
ids, the candidate, the verdict and the mistake, and its seconds and tokens.
"""

from __future__ import annotations

import time
from typing import Any

from ..brains.base import Answer, MactRoles, Usage, require_mact
from ..brains.roles import Correction, Execution, Plan, Verdict
from ..trace import Action, ExecutionStep, JudgmentStep, Phase, PlanningStep, Step
from .configs import MACT_ROLES, MactConfig
from .loop import restore_rounds
from .run import Run

#: Every role, in the order they act.
ROLES = MACT_ROLES

_STEP_KINDS: dict[Phase, type[Step]] = {
    Phase.PLAN: PlanningStep,
    Phase.EXECUTE: ExecutionStep,
    Phase.JUDGE: JudgmentStep,
}


class MactLoop:
    """One MACT run over ``run.state`` (the strategy's shared state, trace and accounting)."""

    def __init__(self, run: Run, config: MactConfig) -> None:
        require_mact(run.brain, run.strategy)
        self.run = run
        self.config = config
        self.brain: MactRoles = run.brain  # type: ignore[assignment]  # checked just above
        self.state = run.state
        self.roles = tuple(self.config.roles)
        self.corrections: list[Correction] = []
        self.next_candidate: dict[tuple[str, str], int] = {}
        self.plans_made: list[Plan] = []

    # -- recording ---------------------------------------------------------------------------------

    def _step(
        self,
        role: Phase,
        action: Action,
        seconds: float,
        usage: Usage,
        reason: str = "",
        tool: str | None = None,
        **data: Any,
    ) -> None:
        kind = _STEP_KINDS[role]
        names = set(kind.__dataclass_fields__)
        typed = {k: v for k, v in data.items() if k in names and v is not None}
        rest = {k: v for k, v in data.items() if k not in names and v is not None}
        self.run.record(
            kind(role, action, tool, reason=reason, before=self.state.page.hash, seconds=seconds, data=rest, **typed),
            usage,
        )

    # -- roles -------------------------------------------------------------------------------------

    def _plan(self, count: int, feedback: Verdict | None = None) -> list[Plan]:
        t0 = time.perf_counter()
        plans = list(self.brain.plan(self.state, count, feedback=feedback, previous=tuple(self.plans_made)))[
            : max(count, 1)
        ]
        seconds = time.perf_counter() - t0
        usage = sum((p.usage for p in plans), Usage())
        for i, plan in enumerate(plans):
            self._step(
                Phase.PLAN,
                Action.REPLANNED if feedback is not None else Action.PLANNED,
                seconds if i == 0 else 0.0,
                usage if i == 0 else Usage(),
                plan.rationale,
                plan_id=plan.id,
                plan=plan.to_dict(),
                mistake=feedback.mistake if feedback is not None else None,
            )
        self.plans_made += plans
        return plans

    def _execute_step(
        self, plan: Plan, index: int, results: dict[str, Execution], feedback: Verdict | None = None
    ) -> Execution:
        step = plan.steps[index]
        key = (plan.id, step.id)
        first = self.next_candidate.get(key, 0)
        candidates = []
        for k in range(first, first + max(self.config.ne, 1)):
            t0 = time.perf_counter()
            ex = self.brain.execute(self.state, plan, step, dict(results), candidate=k, feedback=feedback)
            seconds = time.perf_counter() - t0
            candidates.append(ex)
            self._step(
                Phase.EXECUTE,
                Action.REEXECUTED if feedback is not None else Action.EXECUTED,
                seconds,
                ex.usage,
                ex.evidence,
                ex.tool,
                plan_id=plan.id,
                step_id=step.id,
                candidate=k,
                output=ex.output,
                confidence=round(ex.confidence, 4),
                args=ex.args or None,
            )
        self.next_candidate[key] = first + max(self.config.ne, 1)
        best = max(candidates, key=lambda e: e.confidence)  # the scorer: the executor's own confidence
        if len(candidates) > 1:
            self._step(
                Phase.EXECUTE,
                Action.SELECTED,
                0.0,
                Usage(),
                f"kept candidate {best.candidate} of {len(candidates)}",
                best.tool,
                plan_id=plan.id,
                step_id=step.id,
                candidate=best.candidate,
                output=best.output,
            )
        return best

    def _execute_plan(
        self, plan: Plan, results: dict[str, Execution] | None = None, start: int = 0, feedback: Verdict | None = None
    ) -> dict[str, Execution]:
        results = dict(results or {})
        for i in range(start, len(plan.steps)):
            results[plan.steps[i].id] = self._execute_step(plan, i, results, feedback if i == start else None)
        return results

    def _judge(self, plan: Plan, results: dict[str, Execution], correction: int | None = None) -> Verdict:
        """Judgment of one plan's process (``correction``: the number of the correction it follows)."""
        if "judge" not in self.roles:
            return Verdict.ok()
        t0 = time.perf_counter()
        verdict = self.brain.judge(self.state, plan, dict(results))
        seconds = time.perf_counter() - t0
        final = results.get(plan.steps[-1].id) if plan.steps else None
        self._step(
            Phase.JUDGE,
            Action.ACCEPTED if verdict.accept else Action.FLAGGED,
            seconds,
            verdict.usage,
            verdict.mistake,
            plan_id=plan.id,
            step_id=verdict.step_id,
            verdict="accept" if verdict.accept else verdict.target,
            mistake=verdict.mistake or None,
            candidate=final.output if final is not None else None,
            checks=list(verdict.checks) or None,
            correction=correction,
        )
        return verdict

    # -- the loop ----------------------------------------------------------------------------------

    def execute(self) -> Answer:
        """Plan, execute, judge and correct, then answer (see the module docstring)."""
        runs: list[list[Any]] = []
        for plan in self._plan(max(self.config.np, 1)):
            results = self._execute_plan(plan)
            runs.append([plan, results, self._judge(plan, results)])
        budget = self.config.nc if "judge" in self.roles else 0
        while budget > 0 and not any(v.accept for _, _, v in runs):
            budget -= 1
            index = 0  # the primary (first) plan is the one corrected
            plan, results, verdict = runs[index]
            final = results.get(plan.steps[-1].id) if plan.steps else None
            before = final.output if final is not None else ""
            number = len(self.corrections) + 1
            if verdict.target == "execution" and verdict.step_id and plan.step(verdict.step_id) is not None:
                start = next(i for i, s in enumerate(plan.steps) if s.id == verdict.step_id)
                results = self._execute_plan(plan, results, start, verdict)
            else:
                new = self._plan(1, verdict)
                plan = new[0] if new else plan
                results = self._execute_plan(plan)
            final = results.get(plan.steps[-1].id) if plan.steps else None
            after = final.output if final is not None else ""
            self.corrections.append(Correction(verdict, plan.id, before, after))
            runs[index] = [plan, results, self._judge(plan, results, number)]
        return self._answer([(p, r, v) for p, r, v in runs])

    def _answer(self, runs: list[tuple[Plan, dict[str, Execution], Verdict]]) -> Answer:
        t0 = time.perf_counter()
        fixes = [c.to_dict() for c in self.corrections]
        if "answer" in self.roles:
            answer = self.brain.conclude(self.state, runs, list(self.corrections))
        else:
            # without the answer role: the last output of the first accepted plan (else the first plan)
            plan, results, _ = next((r for r in runs if r[2].accept), runs[0])
            final = results.get(plan.steps[-1].id) if plan.steps else None
            answer = Answer(
                final.output if final is not None else "",
                final.confidence if final is not None else 0.0,
                f"last output of plan {plan.id}",
            )
        self.run.record_answer(answer, time.perf_counter() - t0, corrections=fixes)
        return answer


def run_mact(run: Run, config: MactConfig) -> Answer:
    """MACT on the run's current page (after the docintent loop when ``restore_first``); the trace is recorded on
    ``run``. The brain must play the MACT roles (checked before any work)."""
    require_mact(run.brain, run.strategy)
    if config.restore_first:
        restore_rounds(run, config.max_rounds)  # restore; the reasoning below replaces Phase A's answer
    return MactLoop(run, config).execute()


__all__ = ["MactLoop", "ROLES", "run_mact"]
