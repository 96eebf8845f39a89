"""DocIntent's Algorithm 1 and its ablations: Phase A decides (answer, or one tool for the worst
question-relevant degradation); Phase B reviews the change and keeps it or rolls it back and disables the tool;
at most T rounds. ``agres`` keeps every change unreviewed; ``prompt-only`` offers no tools."""

from __future__ import annotations

import time

from ..brains.base import Answer, UseTool
from ..errors import DocIntentError
from ..perception.degradations import DEGRADATIONS
from ..tools import InspectionTool, get_tool
from ..trace import Action, DecideStep, InspectStep, Phase, ToolStep
from .configs import LoopConfig
from .run import Run


def run_loop(run: Run, config: LoopConfig) -> Answer:
    """Phase A / Phase B rounds, then the answer when the rounds run out without one."""
    decided = restore_rounds(run, config.max_rounds, review=config.review, offer_tools=config.offer_tools)
    return decided if decided is not None else run.answer()


def restore_rounds(run: Run, max_rounds: int, *, review: bool = True, offer_tools: bool = True) -> Answer | None:
    """Phase A / Phase B rounds: Phase A's answer, or None when the rounds run out."""
    state = run.state
    if not offer_tools:
        state.available_tools = []
    for t in range(max_rounds):
        state.round = t
        t0 = time.perf_counter()
        decision = run.brain.decide(state)
        if isinstance(decision, Answer):
            run.record(
                DecideStep(
                    Phase.DECIDE,
                    Action.ANSWER,
                    None,
                    reason=decision.reasoning,
                    before=state.page.hash,
                    seconds=time.perf_counter() - t0,
                    round=t,
                    answer=decision.text,
                    confidence=decision.confidence,
                    region=decision.region,
                ),
                decision.usage,
            )
            return decision
        if not isinstance(decision, UseTool):
            raise TypeError(f"{type(run.brain).__name__}.decide returned {decision!r}, expected Answer or UseTool")
        run.record(
            DecideStep(
                Phase.DECIDE,
                Action.USE_TOOL,
                decision.name,
                reason=decision.why,
                before=state.page.hash,
                seconds=time.perf_counter() - t0,
                round=t,
                args=dict(decision.args),
                region=decision.region,
                need=_need(decision.name),
            ),
            decision.usage,
        )
        if decision.name not in state.available_tools:
            # The brain asked for a tool that is not offered (disabled or unknown): nothing runs this round.
            run.record(
                ToolStep(
                    Phase.TOOL,
                    Action.SKIPPED,
                    decision.name,
                    reason="tool not available",
                    before=state.page.hash,
                    round=t,
                )
            )
            continue
        tool = get_tool(decision.name)
        if isinstance(tool, InspectionTool):
            _inspect(run, tool, decision)
            continue
        applied = run.apply(decision.name, decision.args, decision.why, decision.region)
        change = applied.change
        if change is None:
            # A failed tool counts as rolled back; one that changed nothing, or was already run on this page
            # state, is neither kept nor rolled back. Either way it is not offered again.
            if applied.action == Action.FAILED:
                run.rolled_back.append(decision.name)
            run.disable(decision.name)
            continue
        if not review:
            run.keep(change)
            continue
        run.review(change)
    return None


def _need(tool_name: str) -> str | None:
    """What a page that tool ``tool_name`` is asked for needs, in plain words (its degradation's), or None."""
    try:
        degradation = get_tool(tool_name).degradation
    except DocIntentError:  # a tool that is not registered: the trace says so at the tool step
        return None
    if degradation not in DEGRADATIONS:
        return None
    return DEGRADATIONS.get(degradation).plain or None


def _inspect(run: Run, tool: InspectionTool, decision: UseTool) -> None:
    """Inspection tools (zoom/OCR) gather evidence and change no page, so no Phase B follows."""
    state = run.state
    t0 = time.perf_counter()
    try:
        evidence = tool.inspect(state.page, **tool.check_args(decision.args))
    except Exception as err:
        run.record(
            InspectStep(
                Phase.INSPECT,
                Action.FAILED,
                tool.name,
                reason=f"{type(err).__name__}: {err}",
                before=state.page.hash,
                seconds=time.perf_counter() - t0,
                round=state.round,
                args=dict(decision.args),
            )
        )
        return
    state.evidence.append(evidence)
    run.record(
        InspectStep(
            Phase.INSPECT,
            Action.INSPECTED,
            tool.name,
            reason=decision.why,
            before=state.page.hash,
            seconds=time.perf_counter() - t0,
            round=state.round,
            args=dict(decision.args),
            evidence=evidence.summary(),
        )
    )


__all__ = ["restore_rounds", "run_loop"]
