"""The question-free page restoration mode (``restore --auto``): each step judged on the whole page.

See :func:`docintent.strategies.auto.restore_auto` for the rules; this module is the mode the orchestration runs.
"""

from __future__ import annotations

from ..brains.base import Answer, Keep
from ..perception.service import Perception
from ..tools import get_tool, tools_for
from ..vocabulary import ROTATION_TOOLS
from .configs import PageRestoreConfig
from .run import Run


def run_page_restore(run: Run, config: PageRestoreConfig, perception: Perception | None = None) -> Answer:
    """Restore ``run.state.page`` without a question (see the module docstring); the answer is empty."""
    perception = perception or getattr(run.brain, "perception", None) or Perception()
    state = run.state
    tried: set[str] = set()
    retried: set[str] = set()
    session = getattr(run.brain, "reading_session", None)
    for t in range(config.max_rounds):
        state.round = t
        current = state.page
        fix = perception.upright_fix(current, session(state) if callable(session) else None)
        if fix and fix in state.available_tools and fix not in tried:
            tool, why = fix, "the page is not upright"
        else:
            # Geometry first: on a page still lying on the desk, bent or at an angle, the photometric tools
            # measure the desk and the distortion along with the paper (deshadowing a curled page on a desk
            # reads worse; on the flattened page it reads better).
            ranked = sorted(perception.above(current), key=lambda kv: (not perception.geometric(kv[0]), -kv[1]))
            tool, why = "", ""
            for degradation, severity in ranked:
                name = next((n for n in tools_for(degradation) if n in state.available_tools and n not in tried), None)
                if name:
                    tool, why = name, f"{degradation} severity {severity:.2f}"
                    break
            if not tool:
                break
        tried.add(tool)
        applied = run.apply(tool, {}, why)
        change = applied.change
        if change is None:
            continue
        if isinstance(run.review(change), Keep):
            # Geometric and photometric steps change what the other kind sees: flattened, the page no longer
            # shows the desk to deshadowing; deshadowed, its outline is found whole by dewarping. So a step
            # of one kind rolled back earlier gets one more try after a step of the other kind is kept.
            geometric = get_tool(tool).geometric
            for name in [n for n in tried if n not in state.available_tools and n not in retried]:
                if name not in ROTATION_TOOLS and get_tool(name).geometric != geometric:
                    state.available_tools.append(name)
                    tried.discard(name)
                    retried.add(name)
    return Answer("", 0.0, "question-free restoration")


__all__ = ["run_page_restore"]
