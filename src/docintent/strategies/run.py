"""The run context every strategy mode works through: one question's state, trace, accounting and hooks.

A mode never builds steps into a list of its own: it calls :meth:`Run.record` (the one place a step enters the
trace, where ``on_step`` observers hear of it and ``should_stop`` is asked whether to go on), :meth:`Run.apply`
(the one place a tool runs on the page, which returns the :class:`~docintent.brains.Change` a review judges) and
:meth:`Run.review` (the one place a change is reviewed, recorded, and kept or rolled back). So the CLI, the service
and the viewer observe every mode the same way, without wrapping the brain, and no mode reaches into another's
private parts.

>>> from docintent.page import Page
>>> import numpy as np
>>> from docintent.brains import ScriptedBrain
>>> seen = []
>>> run = Run("none", Page.from_array(np.zeros((8, 8), np.uint8)), "q?", "doc", ScriptedBrain(final="42"), [],
...           on_step=lambda step, run: seen.append(str(step.phase)))
>>> run.answer().text, seen
('42', ['answer'])
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..brains.base import Answer, Change, Keep, Restorer, Review, Rollback, State, Usage
from ..errors import DocIntentError
from ..page import Page
from ..tools import get_tool
from ..trace import RAN, Action, AnswerStep, InspectStep, Phase, Provenance, Result, ReviewStep, Step, ToolStep

#: Called with every step as it is recorded, and the run it belongs to.
OnStep = Callable[[Step, "Run"], None]
#: Asked after every step whether the run must stop now (a deadline, a cancelled request); a string is the
#: reason the run reports.
ShouldStop = Callable[[], "bool | str"]


class RunStopped(DocIntentError):
    """A run was stopped from outside (``should_stop`` said so): it ends with no answer and this reason."""


@dataclass(frozen=True)
class Applied:
    """What :meth:`Run.apply` did: ``action`` (APPLIED, NO_CHANGE, FAILED or SKIPPED) and, when APPLIED, the
    :class:`Change` to review."""

    action: Action
    change: Change | None = None


class Run:
    """One strategy run on one question (see the module docstring).

    ``tools``: the toolbox offered to the brain (``state.available_tools``); ``seed``: seeds random orders
    together with the question and the page, so a random order is the same whenever the same question is asked.
    """

    def __init__(
        self,
        strategy: str,
        page: Page,
        question: str,
        task: str,
        brain: Restorer,
        tools: list[str],
        *,
        max_rounds: int = 10,
        seed: int = 0,
        on_step: OnStep | None = None,
        should_stop: ShouldStop | None = None,
    ) -> None:
        self.strategy = strategy
        self.brain = brain
        self.seed = seed
        self.on_step = on_step
        self.should_stop = should_stop
        self.start = time.perf_counter()
        self.usage = Usage()
        self.kept: list[str] = []
        self.kept_changes: list[Change] = []
        self.rolled_back: list[str] = []
        self.tried: set[tuple[str, str]] = set()  # (page hash, tool call) pairs already run
        self.pages: dict[str, Page] = {page.hash: page}
        #: Output pixels of the tool runs that changed the page (kept or rolled back).
        self.pixels_restored = 0
        self.state = State(
            question=question, task=task, page=page, original=page, available_tools=list(tools), max_rounds=max_rounds
        )

    # -- the trace --------------------------------------------------------------------------------

    def record(self, step: Step, usage: Usage = Usage()) -> Step:
        """Add ``step`` (with the tokens ``usage`` it cost) to the trace, tell the observers, and stop the run
        when ``should_stop`` says so."""
        step.prompt_tokens += usage.prompt_tokens
        step.completion_tokens += usage.completion_tokens
        self.usage = self.usage + usage
        self.state.history.append(step)
        if self.on_step is not None:
            self.on_step(step, self)
        if self.should_stop is not None:
            stop = self.should_stop()
            if stop:
                reason = stop if isinstance(stop, str) else "the run was stopped before it finished"
                raise RunStopped(reason)
        return step

    def rng(self) -> random.Random:
        """A random generator seeded by the strategy's seed, the question and the original page."""
        text = f"{self.seed}|{self.state.question}|{self.state.original.hash}"
        digest = hashlib.blake2b(text.encode(), digest_size=8).digest()
        return random.Random(int.from_bytes(digest, "big"))

    # -- tools and page states --------------------------------------------------------------------

    def apply(self, name: str, args: dict[str, Any] | None = None, why: str = "", region=None) -> Applied:
        """Run tool ``name`` on the current page and record it.

        Returns APPLIED with the :class:`Change` (the page is *not* switched: the mode keeps or rolls back),
        NO_CHANGE (the tool returned the same pixels: nothing to review), FAILED (it raised; the error is in the
        trace) or SKIPPED (this call already ran on this page state). ``region``: the part of the page the
        decision was about, mapped onto the new page for the review.
        """
        args = dict(args or {})
        before = self.state.page
        call = f"{name}{sorted(args.items())}"
        if (before.hash, call) in self.tried:
            self.record(
                ToolStep(
                    Phase.TOOL,
                    Action.SKIPPED,
                    name,
                    reason="already run on this page state",
                    before=before.hash,
                    round=self.state.round,
                )
            )
            return Applied(Action.SKIPPED)
        self.tried.add((before.hash, call))
        tool = get_tool(name)
        t0 = time.perf_counter()
        try:
            after = tool.run(before, **args)
        except Exception as err:  # a failing tool never ends the run: it is recorded and treated as a rollback
            self.record(
                ToolStep(
                    Phase.TOOL,
                    Action.FAILED,
                    name,
                    reason=f"{type(err).__name__}: {err}",
                    before=before.hash,
                    after=None,
                    seconds=time.perf_counter() - t0,
                    round=self.state.round,
                    args=args,
                )
            )
            return Applied(Action.FAILED)
        seconds = time.perf_counter() - t0
        work = dict(after.meta.get("work") or {})  # what this run of the tool did (a page never inherits it)
        budget = float(getattr(tool, "budget_s", 0.0) or 0.0)
        if after.hash == before.hash:
            # Nothing to review: the page state is the same one, so a review could only compare it with itself.
            self.record(
                ToolStep(
                    Phase.TOOL,
                    Action.NO_CHANGE,
                    name,
                    reason=f"{why}; the tool changed no pixel",
                    before=before.hash,
                    after=before.hash,
                    seconds=seconds,
                    round=self.state.round,
                    args=args,
                    work=work,
                    budget_s=budget,
                )
            )
            return Applied(Action.NO_CHANGE)
        self.pages[after.hash] = after
        self.pixels_restored += after.width * after.height
        self.record(
            ToolStep(
                Phase.TOOL,
                Action.APPLIED,
                name,
                reason=why,
                before=before.hash,
                after=after.hash,
                seconds=seconds,
                round=self.state.round,
                args=args,
                work=work,
                budget_s=budget,
            )
        )
        mapped = None
        if region is not None:
            try:
                mapped = tool.map_region(region, before, after)
            except Exception:  # a plug-in's mapping that fails: the region is found again by reading
                mapped = None
        change = Change(
            name,
            before,
            after,
            args=args,
            degradation=tool.degradation,
            geometric=bool(tool.geometric or before.size != after.size),
            region=region,
            region_after=mapped,
        )
        return Applied(Action.APPLIED, change)

    def review(self, change: Change) -> Review:
        """Phase B: ask the brain to review ``change``, record the :class:`ReviewStep` (with the round, the
        verdict's reason, measurements and tokens), then keep the change (:meth:`keep`) or roll it back and stop
        offering its tool (:meth:`rollback`). Returns the brain's :class:`Keep` or :class:`Rollback`; anything
        else is a TypeError, before anything is recorded."""
        t0 = time.perf_counter()
        verdict = self.brain.review(self.state, change)
        if isinstance(verdict, Keep):
            action = Action.KEEP
        elif isinstance(verdict, Rollback):
            action = Action.ROLLBACK
        else:
            raise TypeError(f"{type(self.brain).__name__}.review returned {verdict!r}, expected Keep or Rollback")
        self.record(
            ReviewStep(
                Phase.REVIEW,
                action,
                change.tool,
                reason=verdict.why,
                before=change.before.hash,
                after=change.after.hash,
                seconds=time.perf_counter() - t0,
                round=self.state.round,
                measurements=dict(verdict.measurements),
            ),
            verdict.usage,
        )
        if action == Action.KEEP:
            self.keep(change)
        else:
            self.rollback(change)
        return verdict

    def keep(self, change: Change) -> None:
        """Continue from the page ``change`` made."""
        self.state.page = change.after
        self.kept.append(change.tool)
        self.kept_changes.append(change)

    def rollback(self, change: Change) -> None:
        """Return to the page before ``change`` (exactly that Page object) and stop offering its tool."""
        self.state.page = change.before
        self.rolled_back.append(change.tool)
        self.disable(change.tool)

    def disable(self, name: str) -> None:
        """Stop offering tool ``name``."""
        if name in self.state.available_tools:
            self.state.available_tools.remove(name)

    # -- answers ------------------------------------------------------------------------------------

    def answer(self, phase: Phase = Phase.ANSWER) -> Answer:
        """Ask the brain for the answer from the current page, and record it."""
        t0 = time.perf_counter()
        answer = self.brain.answer(self.state)
        self.record_answer(answer, time.perf_counter() - t0)
        return answer

    def record_answer(self, answer: Answer, seconds: float, corrections: list[dict[str, Any]] | None = None) -> Step:
        """Record ``answer`` as the answer step (``corrections``: MACT's, when there were any)."""
        evidence = [[t, round(c, 5), list(b.as_tuple())] for t, c, b in answer.evidence]
        return self.record(
            AnswerStep(
                Phase.ANSWER,
                Action.ANSWER,
                None,
                reason=answer.reasoning,
                before=self.state.page.hash,
                seconds=seconds,
                answer=answer.text,
                confidence=answer.confidence,
                region=answer.region,
                evidence=evidence,
                corrections=list(corrections or []),
            ),
            answer.usage,
        )

    def provenance(self, answer: Answer, page_number: int = 1) -> Provenance:
        """Where ``answer`` came from: its box on the page it was read on (the current page) and, mapped back
        through every kept restoration, on the page as it was given."""
        box = answer.box or answer.region
        read_box = box
        # Undo the kept restorations that lead from the given page to the current one, last first.
        for change in reversed(self.kept_changes):
            if box is None:
                break
            try:
                box = get_tool(change.tool).unmap_region(box, change.before, change.after)
            except Exception:  # a plug-in's mapping that fails: the answer is placed on the read page only
                box = None
        return Provenance(
            page_number,
            box,
            read_box,
            read_page=self.state.page.hash,
            lines=tuple(answer.evidence),
            read_on=tuple(c.tool for c in self.kept_changes),
            given_page=self.state.original.hash,
        )

    def work(self) -> dict[str, int]:
        """What this run cost, in counts that do not depend on the machine or a cache: ``tool_runs`` (tools that
        ran, changing the page or not), ``reviews`` (Phase B verdicts), ``inspections`` (zoom / OCR look-ups),
        ``pixels_restored`` (output pixels of the tool runs that changed the page), then the brain's own counters
        (:meth:`~docintent.brains.Restorer.work`: the offline reader's detections, recognised lines, ...)."""
        history = self.state.history
        counts = {
            "tool_runs": sum(1 for s in history if isinstance(s, ToolStep) and s.action in RAN),
            "reviews": sum(1 for s in history if isinstance(s, ReviewStep)),
            "inspections": sum(1 for s in history if isinstance(s, InspectStep)),
            "pixels_restored": self.pixels_restored,
        }
        for key, value in self.brain.work(self.state).items():
            counts[key] = counts.get(key, 0) + int(value)
        return counts

    def result(self, answer: Answer, error: str | None = None) -> Result:
        """The Result of this run, ending with ``answer``."""
        return Result(
            answer=answer.text,
            strategy=self.strategy,
            confidence=answer.confidence,
            trace=list(self.state.history),
            tools_kept=list(self.kept),
            tools_rolled_back=list(self.rolled_back),
            seconds=time.perf_counter() - self.start,
            prompt_tokens=self.usage.prompt_tokens,
            completion_tokens=self.usage.completion_tokens,
            error=error,
            final_page=self.state.page,
            pages=self.pages,
            provenance=self.provenance(answer),
            work=self.work(),
        )


__all__ = ["Applied", "OnStep", "Run", "RunStopped", "ShouldStop"]
