"""Question-free restoration for OCR pipelines: diagnose, restore, keep only what the review accepts.

Without a question there is no evidence region and no answer to become more certain of, so each step is
judged on the whole page: the orientation classifier for rotations; for every other tool, whether the page's
text became more legible, or the damage the tool targets measurably fell while the text read as well.

>>> from docintent.io import load_page
>>> restored, steps = restore_auto(load_page("photo.jpg"))           # doctest: +SKIP
>>> [(s.tool, s.verdict) for s in steps]                              # doctest: +SKIP
[('rotate_90', 'keep'), ('deshadowing', 'keep'), ('deblurring', 'rollback')]
"""

from __future__ import annotations

import time
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


def restore_auto(page: Page, reader=None, max_rounds: int = 6) -> tuple[Page, list[AutoStep]]:
    """Restore ``page`` without a question; returns the restored page and the steps taken.

    ``reader``: the offline reader whose measurements diagnose and judge (default: a new one). Each tool runs at
    most once; a rolled-back tool is not tried again.
    """
    from ..brains.offline import OfflineReader

    reader = reader or OfflineReader(review_rule="page")
    restorations = [t.name for t in list_tools() if t.degradation not in ("inspection",)]
    state = State("", "doc", page, page, list(restorations))
    steps: list[AutoStep] = []
    tried: set[str] = set()
    for _ in range(max_rounds):
        current = state.page
        fix = reader._orientation_fix(state, current)
        if fix and fix in state.available_tools and fix not in tried:
            tool, why = fix, "the page is not upright"
        else:
            severities = reader._severities(current, None)
            tool, why = "", ""
            for degradation, severity in sorted(severities.items(), key=lambda kv: -kv[1]):
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
        if tool in ROTATION_TOOLS:
            keep = reader._orientation_fix(state, after) is None
            reason = "upright after the turn" if keep else "still not upright"
        else:
            evidence = reader.review_evidence(state, current, after, tool, whole_page=True)
            keep = evidence.keep("page")
            reason = evidence.describe()
        if keep:
            state.page = after
        else:
            state.available_tools.remove(tool)
        steps.append(AutoStep(tool, why, "keep" if keep else "rollback", reason, time.perf_counter() - t0))
    return state.page, steps


__all__ = ["AutoStep", "restore_auto"]
