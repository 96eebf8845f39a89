"""Regions never cross a change of geometry: after a rotation or a dewarping the evidence is re-located on the
new page instead of reusing a box measured on the old one."""

from __future__ import annotations

import cv2
import numpy as np

from docintent.brains import State, get_brain
from docintent.page import Page
from docintent.strategies import get_strategy
from docintent.synth import degrade

LINES = ["Invoice number: INV-2041", "Date: 12 March 2024", "Total amount due: $1,250.00", "Thank you for your order"]


def test_a_turned_page_is_answered_after_the_turn_without_a_box_from_before(text_page):
    page, _ = text_page
    sideways = Page.from_array(np.ascontiguousarray(np.rot90(page.pixels, 1)))
    result = get_strategy("docintent").run(sideways, "What is the invoice number?", "doc", get_brain("offline"))
    assert result.error is None
    assert result.answer == "INV-2041"
    assert any(t.startswith("rotate_") for t in result.tools_kept)


def test_dewarping_is_judged_on_the_whole_new_page(text_page):
    page, _ = text_page
    curled = Page.from_array(degrade.curl(page.pixels, np.random.default_rng(3), 0.8))
    flattened = curled.derive(cv2.resize(curled.pixels, None, fx=0.9, fy=0.95), "dewarping:test")
    reader = get_brain("offline")
    state = State("What is the total amount due?", "doc", curled, curled, ["dewarping"])
    reader.read(state, curled)  # an evidence region now exists for the curled page
    evidence = reader.review_evidence(state, curled, flattened, "dewarping")
    assert evidence.scope == "page"
    assert evidence.answer_after == "$1,250.00"
