"""The offline DocIntent loop end to end on damaged renders: where answering directly fails, ``docintent``
restores the page with the right tool, keeps it, and answers right.

Each case was chosen so that the damage defeats the reader on the raw capture (``none`` is wrong), which is the
situation the loop exists for; a change that stops the loop from choosing, running, keeping or reading after the
restoration makes these fail.
"""

from __future__ import annotations

import numpy as np
import pytest

import docintent
from docintent.page import Page
from docintent.synth import degrade
from docintent.tools import get_tool
from test_offline_reader import _invoice

QUESTION, GOLD = "What is the total due?", "$277.60"


def _sideways() -> Page:
    return get_tool("rotate_90").run(_invoice())


def _motion_blurred() -> Page:
    base = _invoice()
    return Page.from_array(degrade.motion_blur(base.pixels, np.random.default_rng(0), 0.8), source="motion-blur")


@pytest.mark.parametrize(
    "capture,tool",
    [(_sideways, "rotate_270"), (_motion_blurred, "deblurring")],
    ids=["rotation", "blur"],
)
def test_docintent_restores_keeps_the_tool_and_answers_where_none_fails(capture, tool):
    page = capture()
    direct = docintent.ask(page, QUESTION, strategy="none")
    assert direct.answer != GOLD  # the damage defeats direct reading
    result = docintent.ask(page, QUESTION, strategy="docintent")
    assert result.answer == GOLD
    assert tool in result.tools_kept and result.error is None
    kept = [s for s in result.trace if s.phase == "B" and s.action == "keep"]
    assert [s.tool for s in kept] == result.tools_kept  # every kept tool passed a review
    assert result.final_page is not None and result.final_page.hash != page.hash
