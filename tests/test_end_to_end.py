"""The offline DocIntent loop end to end on damaged renders: where answering directly fails, ``docintent``
restores the page with the right tool, keeps it, and answers right.

Each case was chosen so that the damage defeats the reader on the raw capture (``none`` is wrong), which is the
situation the loop exists for; a change that stops the loop from choosing, running, keeping or reading after the
restoration makes these fail.
"""

from __future__ import annotations

import cv2
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


def _photographed_at_an_angle() -> Page:
    """The invoice on a desk, shot from above one corner and turned 12 degrees: rows no longer line up."""
    pad, desk = 200, (90, 80, 70)
    big = cv2.copyMakeBorder(_invoice().pixels, pad, pad, pad, pad, cv2.BORDER_CONSTANT, value=desk)
    h, w = big.shape[:2]
    src = np.float32([[pad, pad], [w - pad, pad], [w - pad, h - pad], [pad, h - pad]])
    dx = (w - 2 * pad) * 0.25
    dst = np.float32([[pad + dx, pad], [w - pad - dx, pad + 60], [w - pad, h - pad], [pad, h - pad - 40]])
    tilted = cv2.warpPerspective(big, cv2.getPerspectiveTransform(src, dst), (w, h), borderValue=desk)
    turned = cv2.warpAffine(tilted, cv2.getRotationMatrix2D((w / 2, h / 2), 12, 1.0), (w, h), borderValue=desk)
    return Page.from_array(turned, source="perspective")


@pytest.mark.parametrize(
    "capture,question,gold,tool",
    [
        (_sideways, QUESTION, GOLD, "rotate_270"),
        (_motion_blurred, QUESTION, GOLD, "deblurring"),
        (_photographed_at_an_angle, "What is the amount for Toner cartridge?", "$183.60", "dewarping"),
    ],
    ids=["rotation", "blur", "warp"],
)
def test_docintent_restores_keeps_the_tool_and_answers_where_none_fails(capture, question, gold, tool):
    page = capture()
    direct = docintent.ask(page, question, strategy="none")
    assert direct.answer != gold  # the damage defeats direct reading
    result = docintent.ask(page, question, strategy="docintent")
    assert result.answer == gold
    assert tool in result.tools_kept and result.error is None
    kept = [s for s in result.trace if s.phase == "B" and s.action == "keep"]
    assert [s.tool for s in kept] == result.tools_kept  # every kept tool passed a review
    assert result.final_page is not None and result.final_page.hash != page.hash
