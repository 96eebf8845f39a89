"""Regions never cross a change of geometry: after a rotation or a dewarping the evidence is re-located on the
new page instead of reusing a box measured on the old one."""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from docintent.brains import Change, State, get_brain
from docintent.page import Page
from docintent.strategies import get_strategy
from docintent.synth import degrade
from docintent.tools import get_tool

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
    state = State("What is the total amount due?", "doc", curled, original=curled, available_tools=["dewarping"])
    reader.read(state, curled)  # an evidence region now exists for the curled page
    evidence = reader.review_evidence(state, Change("dewarping", curled, flattened, degradation="warp", geometric=True))
    assert evidence.scope == "page"
    assert evidence.answer_after == "$1,250.00"


@pytest.mark.parametrize("turns,fix", [(1, "rotate_90"), (2, "rotate_180"), (3, "rotate_270")])
def test_each_turn_is_undone_and_a_photometric_review_after_it_uses_the_upright_page(text_page, turns, fix):
    """Every rotation tool: the page turned counter-clockwise by ``turns`` quarter turns is turned back by ``fix``;
    a photometric step reviewed after the turn measures its evidence region on the upright page, although the
    sideways page was read first in the same question (its boxes would lie elsewhere or outside the page)."""
    page, _ = text_page
    turned = Page.from_array(np.ascontiguousarray(np.rot90(page.pixels, turns)))
    question = "What is the total amount due?"
    result = get_strategy("docintent").run(turned, question, "doc", get_brain("offline"))
    assert result.error is None and not any(s.action == "failed" for s in result.trace)
    assert result.answer == "$1,250.00" and result.tools_kept[0] == fix

    reader = get_brain("offline")
    state = State(question, "doc", turned, original=turned, available_tools=["appearance"])
    reader.read(state, turned)  # the sideways page's reading (and its regions) is in the question's memo
    upright = get_tool(fix).run(turned)
    assert upright.size == page.size
    state.page = upright
    faded = upright.derive((upright.pixels.astype(np.float32) * 0.5 + 110).astype(np.uint8), "fade")
    restored = get_tool("appearance").run(faded)
    evidence = reader.review_evidence(state, Change("appearance", faded, restored, degradation="appearance"))
    assert evidence.scope == "evidence region"
    assert evidence.answer_before == evidence.answer_after == "$1,250.00"


def test_the_answer_is_placed_on_the_page_as_given_through_the_turns_that_were_kept(text_page):
    """Provenance: the answer's box on the page read (upright) and, turned back, on the sideways page the user
    gave; the evidence lines and the restorations it was read on come with it."""
    page, lines = text_page
    question = "What is the total amount due?"
    upright = get_strategy("docintent").run(page, question, "doc", get_brain("offline"))
    assert upright.answer == "$1,250.00" and upright.box is not None
    row = lines.index("Total amount due: $1,250.00") / len(lines)
    assert upright.box.y0 <= row + 0.2 and upright.box.y1 >= row  # the total's line, not another one
    assert any("1,250.00" in text for text, _, _ in upright.provenance.lines)
    assert upright.provenance.read_on == () and upright.box == upright.provenance.read_box

    sideways = Page.from_array(np.ascontiguousarray(np.rot90(page.pixels, 1)))  # turned counter-clockwise
    turned = get_strategy("docintent").run(sideways, question, "doc", get_brain("offline"))
    assert turned.answer == "$1,250.00" and turned.provenance.read_on[0] == "rotate_90"
    read, given = turned.provenance.read_box, turned.box
    assert read is not None and given is not None
    # turned counter-clockwise, a point (x, y) of the upright page lies at (y, 1 - x): the total's line runs
    # from bottom to top at the x its row had as y
    assert abs(given.y0 - (1 - read.x1)) < 1e-6 and abs(given.x0 - read.y0) < 1e-6
    assert given.x0 <= row + 0.1 <= given.x1
    assert turned.to_dict()["provenance"]["page"] == 1 and turned.to_dict()["box"] == [
        round(v, 6) for v in given.as_tuple()
    ]


def test_an_answer_read_on_a_flattened_page_is_placed_on_the_page_as_photographed(text_page):
    """A flattening records its transform, so the box of an answer read on the flattened page is mapped back
    onto the photographed page: where a plain read of that photo finds the same line."""
    page, _ = text_page
    question = "What is the total amount due?"
    tilted = Page.from_array(degrade.perspective(page.pixels, np.random.default_rng(3), 0.9))
    # the answer is sure on the photo already, so the answer rule would roll the flattening back ("no change
    # needed"); the question-free page rule keeps a flattening that straightens the page
    brain = get_brain("offline", answer_threshold=1.0, review_rule="page")
    restored = get_strategy("docintent").run(tilted, question, "doc", brain)
    assert restored.answer == "$1,250.00" and restored.provenance.read_on == ("dewarping",)
    read, given = restored.provenance.read_box, restored.box
    assert read is not None and given is not None and given != read
    direct = get_strategy("none").run(tilted, question, "doc", get_brain("offline"))
    assert direct.answer == "$1,250.00" and direct.box.iou(given) > 0.85 > direct.box.iou(read)
