"""The baselines DocIntent is compared with: answer directly, run every tool (pipeline), or run what the brain
diagnoses (judge). None of them reviews a restoration."""

from __future__ import annotations

import time
from collections.abc import Sequence

from ..brains.base import Answer
from ..perception.degradations import families
from ..tools import tools_for
from ..trace import Action, DiagnoseStep, Phase
from .configs import DirectConfig, JudgeConfig, PipelineConfig
from .run import Run


def pipeline_tools(available: Sequence[str]) -> list[str]:
    """The pipeline's tools among ``available``: for each measured family (every one but orientation, whose
    classifier names a rotation instead), in the families' order, the family's preferred tool (a plug-in before
    the built-in, as the judge picks).

    >>> pipeline_tools(["appearance", "deblurring", "rotate_90"])
    ['deblurring', 'appearance']
    """
    names: list[str] = []
    for family in families():
        if not family.measured:
            continue
        tool = next((t for t in tools_for(family.name) if t in available and t not in names), None)
        if tool is not None:
            names.append(tool)
    return names


def _run_sequence(run: Run, names: Sequence[str], why: str) -> None:
    for name in names:
        applied = run.apply(name, {}, why)
        if applied.change is not None:
            run.keep(applied.change)


def run_direct(run: Run, config: DirectConfig) -> Answer:
    """``none``: the answer from the page as given."""
    return run.answer()


def run_pipeline(run: Run, config: PipelineConfig) -> Answer:
    """Every restoration tool, in order, then the answer."""
    names = pipeline_tools(run.state.available_tools)
    if config.random_order:
        run.rng().shuffle(names)
    _run_sequence(run, names, "pipeline: every restoration tool, no assessment")
    return run.answer()


def run_judge(run: Run, config: JudgeConfig) -> Answer:
    """The brain's diagnosis decides which tools run (orientation first), then the answer."""
    t0 = time.perf_counter()
    diagnosis = run.brain.diagnose(run.state)
    found = ", ".join(diagnosis.degradations) or "no degradation"
    run.record(
        DiagnoseStep(
            Phase.DIAGNOSE,
            Action.DIAGNOSED,
            None,
            reason=found,
            before=run.state.page.hash,
            seconds=time.perf_counter() - t0,
            degradations=list(diagnosis.degradations),
            rotation=diagnosis.rotation,
        ),
        diagnosis.usage,
    )
    order = [f.name for f in families()]
    ranked = [d for d in order if d in diagnosis.degradations]
    if config.random_order:
        run.rng().shuffle(ranked)
    names: list[str] = []
    for degradation in ranked:
        if degradation == "orientation":
            candidates = [diagnosis.rotation] if diagnosis.rotation else []
        else:
            candidates = tools_for(degradation)
        tool = next((t for t in candidates if t in run.state.available_tools and t not in names), None)
        if tool:
            names.append(tool)
    _run_sequence(run, names, "judge: diagnosed degradation")
    return run.answer()


__all__ = ["pipeline_tools", "run_direct", "run_judge", "run_pipeline"]
