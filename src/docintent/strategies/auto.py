"""Question-free restoration for OCR pipelines: diagnose, restore, keep only what the review accepts.

Without a question there is no evidence region and no answer to become more certain of, so each step is judged
on the whole page by the brain's review (the offline reader's ``page`` rule: the orientation classifier for
rotations; for every other tool, whether the page's text became more legible or the damage the tool targets
measurably fell while the text read as well, and never when the damage did not move or text was lost). The order
and the extra checks were chosen on the development split of the real-page captures
(``benchmarks/restore_auto_cer.py --split dev``):

- geometry first: a page still on the desk, bent or at an angle, is flattened before photometric tools run;
- a step of one kind (geometric / photometric) rolled back earlier is tried once more after a step of the
  other kind is kept (deshadowed, a page's outline is found whole; flattened, the desk is gone).

It is the ``page`` mode of the one orchestration (:class:`~docintent.strategies.PageRestoreConfig`): every step
is recorded through the run context like any strategy's.

>>> from docintent.io import load_page
>>> restored, steps = restore_auto(load_page("photo.jpg"))           # doctest: +SKIP
>>> [(s.tool, s.verdict) for s in steps]                              # doctest: +SKIP
[('rotate_90', 'keep'), ('deshadowing', 'keep'), ('deblurring', 'rollback')]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass

from ..brains import get_brain
from ..brains.base import Restorer
from ..errors import DocIntentError
from ..page import Page
from ..trace import Action, ReviewStep, Step, ToolStep
from .configs import PageRestoreConfig
from .core import Strategy
from .run import Run


@dataclass(frozen=True)
class AutoStep:
    """One step of :func:`restore_auto`: the tool, why it ran, the verdict (keep / rollback / no change) and why."""

    tool: str
    why: str
    verdict: str
    _: KW_ONLY
    reason: str
    seconds: float


def auto_steps(trace: list[Step]) -> list[AutoStep]:
    """The :class:`AutoStep` list a page-restore trace describes (tool, why, verdict, reason, seconds)."""
    steps: list[AutoStep] = []
    why: dict[str, tuple[str, float]] = {}
    for step in trace:
        if isinstance(step, ToolStep) and step.tool:
            if step.action == Action.NO_CHANGE:
                steps.append(
                    AutoStep(
                        step.tool,
                        step.reason.split("; the tool")[0],
                        "no change",
                        reason="the tool found nothing to change",
                        seconds=step.seconds,
                    )
                )
            elif step.action == Action.APPLIED:
                why[step.tool] = (step.reason, step.seconds)
        elif isinstance(step, ReviewStep) and step.tool:
            reason, seconds = why.pop(step.tool, ("", 0.0))
            steps.append(
                AutoStep(
                    step.tool,
                    reason,
                    "keep" if step.action == Action.KEEP else "rollback",
                    reason=step.reason,
                    seconds=seconds + step.seconds,
                )
            )
    return steps


def restore_auto(
    page: Page,
    reader: Restorer | None = None,
    max_rounds: int = 8,
    engine: str | None = None,
    observe: Callable[[Page, Page, AutoStep], None] | None = None,
) -> tuple[Page, list[AutoStep]]:
    """Restore ``page`` without a question; returns the restored page and the steps taken.

    ``reader``: the brain whose review judges each step (default: the offline reader with its ``page`` review
    rule, reading with ``engine``, "rapidocr" by default). Judging with "tesseract" for a Tesseract pipeline
    measured worse on the development split, for Tesseract too (its confidences are coarser than RapidOCR's), so
    the default judge serves both. ``observe``: called with the page before and after every reviewed step, and the
    step (benchmarks use it to measure what keeping or rolling back each step would have cost). Each tool runs at
    most once; a rolled-back tool is not tried again (unless a step of the other kind is kept after it).
    """
    if reader is None:
        reader = get_brain("offline", engine=engine, review_rule="page")
    pending: dict[str, tuple[Page, str, float]] = {}

    def on_step(step: Step, run: Run) -> None:
        if observe is None:
            return
        if isinstance(step, ToolStep) and step.action == Action.APPLIED and step.tool:
            pending[step.tool] = (run.pages[step.before or ""], step.reason, step.seconds)
        elif isinstance(step, ReviewStep) and step.tool and step.tool in pending:
            before, why, seconds = pending.pop(step.tool)
            verdict = "keep" if step.action == Action.KEEP else "rollback"
            observe(
                before,
                run.pages[step.after or ""],
                AutoStep(step.tool, why, verdict, reason=step.reason, seconds=seconds + step.seconds),
            )

    strategy = Strategy(PageRestoreConfig(name="restore-auto", max_rounds=max_rounds))
    result = strategy.run(page, "", "doc", reader, on_step=on_step)
    if result.error:
        raise DocIntentError(result.error)
    return result.final_page or page, auto_steps(result.trace)


__all__ = ["AutoStep", "auto_steps", "restore_auto"]
