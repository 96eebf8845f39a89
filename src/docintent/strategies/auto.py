"""Question-free restoration for OCR pipelines: diagnose, restore, keep only what the review accepts.

Without a question there is no evidence region and no answer to become more certain of, so each step is
judged on the whole page: the orientation classifier for rotations; for every other tool, whether the page's
text became more legible, or the damage the tool targets measurably fell while the text read as well. The
order and the extra checks were chosen on the development split of the real-page captures
(``benchmarks/restore_auto_cer.py --split dev``):

- geometry first: a page still on the desk, bent or at an angle, is flattened before photometric tools run;
- a step of one kind (geometric / photometric) rolled back earlier is tried once more after a step of the
  other kind is kept (deshadowed, a page's outline is found whole; flattened, the desk is gone);
- a photometric step that leaves the damage it targets where it was is rolled back without reading the page;
- a step after which fewer than 90 % of the characters are read is rolled back, however legible the rest.

>>> from docintent.io import load_page
>>> restored, steps = restore_auto(load_page("photo.jpg"))           # doctest: +SKIP
>>> [(s.tool, s.verdict) for s in steps]                              # doctest: +SKIP
[('rotate_90', 'keep'), ('deshadowing', 'keep'), ('deblurring', 'rollback')]
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from ..brains.base import State
from ..page import Page
from ..tools import get_tool, list_tools, tools_for
from ..vocabulary import ROTATION_TOOLS


@dataclass(frozen=True)
class AutoStep:
    """One step of :func:`restore_auto`: the tool, why it ran, the verdict (keep / rollback / no change) and why."""

    tool: str
    why: str
    verdict: str
    reason: str
    seconds: float


#: A photometric step whose targeted severity fell by less than this is rolled back unread.
UNMOVED = 0.02
#: A step is rolled back when the page after it reads fewer than this fraction of the characters read before.
TEXT_KEPT = 0.9


def _characters(reader, state: State, page: Page) -> int:
    """Letters and digits the reader's OCR finds on ``page`` (its reading is cached, so this costs nothing)."""
    return sum(sum(ch.isalnum() for ch in line.text) for line in reader.read(state, page).ocr.lines)


def _geometric(degradation: str) -> bool:
    return any(get_tool(t).geometric for t in tools_for(degradation))


def restore_auto(
    page: Page,
    reader=None,
    max_rounds: int = 8,
    engine: str | None = None,
    observe: Callable[[Page, Page, AutoStep], None] | None = None,
) -> tuple[Page, list[AutoStep]]:
    """Restore ``page`` without a question; returns the restored page and the steps taken.

    ``reader``: the offline reader whose measurements diagnose and judge (default: a new one reading with
    ``engine``, "rapidocr" by default). Judging with "tesseract" for a Tesseract pipeline measured worse on
    the development split, for Tesseract too (its confidences are coarser than RapidOCR's), so the default
    judge serves both.
    ``observe``: called with the page before and after every step that changed it, and the step (benchmarks
    use it to measure what keeping or rolling back each step would have cost). Each tool runs at most once; a
    rolled-back tool is not tried again.
    """
    from ..brains.offline import OfflineReader

    reader = reader or OfflineReader(engine=engine, review_rule="page")
    restorations = [t.name for t in list_tools() if t.degradation not in ("inspection",)]
    state = State("", "doc", page, page, list(restorations))
    steps: list[AutoStep] = []
    tried: set[str] = set()
    retried: set[str] = set()
    for _ in range(max_rounds):
        current = state.page
        severities: dict[str, float] = {}
        fix = reader._orientation_fix(state, current)
        if fix and fix in state.available_tools and fix not in tried:
            tool, why = fix, "the page is not upright"
        else:
            severities = reader._severities(current, None)
            tool, why = "", ""
            # Geometry first: on a page still lying on the desk, bent or at an angle, the photometric tools
            # measure the desk and the distortion along with the paper (deshadowing a curled page on a desk
            # reads worse; on the flattened page it reads better).
            order = sorted(severities.items(), key=lambda kv: (not _geometric(kv[0]), -kv[1]))
            for degradation, severity in order:
                if severity <= reader._threshold(degradation):
                    continue
                name = next((t for t in tools_for(degradation) if t in state.available_tools and t not in tried), None)
                if name:
                    tool, why = name, f"{degradation} severity {severity:.2f}"
                    break
            if not tool:
                break
        tried.add(tool)
        t0 = time.perf_counter()
        after = get_tool(tool).run(current)
        if after.hash == current.hash:
            steps.append(AutoStep(tool, why, "no change", "the tool found nothing to change", time.perf_counter() - t0))
            continue
        target = get_tool(tool).degradation
        if tool in ROTATION_TOOLS:
            keep = reader._orientation_fix(state, after) is None
            reason = "upright after the turn" if keep else "still not upright"
        elif not get_tool(tool).geometric and target in severities and (
            left := reader._severities(after, None).get(target, 0.0)
        ) >= severities[target] - UNMOVED:
            # The damage the tool is for is still there (demoire cannot remove a pattern that is print, such
            # as a table of contents' dot leaders; a deblurring that sharpens noise): rolled back without
            # reading the page again, which is most of a step's time.
            keep = False
            reason = f"{target} severity {severities[target]:.2f} -> {left:.2f}: the damage it targets is still there"
        else:
            evidence = reader.review_evidence(state, current, after, tool, whole_page=True)
            chars_before, chars_after = _characters(reader, state, current), _characters(reader, state, after)
            # Legibility saturates with the amount of text, so text a tool lost (a page outline found
            # around only part of the page, a page turned blank) is counted on its own.
            kept_text = chars_after >= TEXT_KEPT * chars_before
            keep = evidence.keep("page") and kept_text
            # no question, so no answer confidence to report
            reason = f"{evidence.describe(answer=False)}; characters read {chars_before} -> {chars_after}"
        if keep:
            state.page = after
            # Geometric and photometric steps change what the other kind sees: flattened, the page no longer
            # shows the desk to deshadowing; deshadowed, its outline is found whole by dewarping. So a step
            # of one kind rolled back earlier gets one more try after a step of the other kind is kept.
            geometric = get_tool(tool).geometric
            for name in [t for t in tried if t not in state.available_tools and t not in retried]:
                if name not in ROTATION_TOOLS and get_tool(name).geometric != geometric:
                    state.available_tools.append(name)
                    tried.discard(name)
                    retried.add(name)
        else:
            state.available_tools.remove(tool)
        steps.append(AutoStep(tool, why, "keep" if keep else "rollback", reason, time.perf_counter() - t0))
        if observe is not None:
            observe(current, after, steps[-1])
    return state.page, steps


__all__ = ["AutoStep", "restore_auto"]
