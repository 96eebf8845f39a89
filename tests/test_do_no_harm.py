"""Do no harm: a restoration that does not help the answer is rolled back, and a clean render runs no tool."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from conftest import font_path
from docintent.brains.offline.review import NoiseFloors, ReviewEvidence
from docintent.page import Page
from docintent.trace import Action, ReviewStep


def _evidence(leg: tuple[float, float], conf: tuple[float, float], answers=("$28.78", "$28.78")) -> ReviewEvidence:
    return ReviewEvidence(
        "deshadowing",
        "evidence region",
        leg[0],
        legibility_after=leg[1],
        severity_before=0.6,
        severity_after=0.6,
        confidence_before=conf[0],
        confidence_after=conf[1],
        answer_before=answers[0],
        answer_after=answers[1],
    )


@pytest.mark.parametrize("rule", ["evidence", "answer"])
def test_more_legible_text_with_a_less_probable_answer_is_rolled_back(rule):
    keep, why = _evidence((0.60, 0.66), (0.90, 0.62)).verdict(rule)
    assert not keep and "less" in why


@pytest.mark.parametrize("rule", ["evidence", "answer"])
def test_a_tie_is_rolled_back_and_says_no_change_was_needed(rule):
    keep, why = _evidence((0.628, 0.629), (0.80, 0.801)).verdict(rule)
    assert not keep and why.startswith("no change needed")
    step = ReviewStep("B", Action.ROLLBACK, "deshadowing", reason=why, measurements={"because": why})
    assert step.describe().startswith("no change needed from deshadowing (rolled back)")


def test_keeping_ties_is_still_a_choice():
    keep, _ = _evidence((0.628, 0.629), (0.80, 0.801)).verdict("evidence", floors=NoiseFloors(tie="keep"))
    assert keep


def test_the_answer_rule_keeps_a_surer_answer_and_refuses_a_changed_one_it_is_not_surer_of():
    assert _evidence((0.6, 0.6), (0.40, 0.75)).verdict("answer")[0]
    # a different answer, as probable, from text no more legible than the noise moves it (region floor 6.85 %)
    changed = _evidence((0.6, 0.62), (0.70, 0.72), answers=("$28.78", "$23.78"))
    keep, why = changed.verdict("answer")
    assert not keep and "not surer" in why
    better = _evidence((0.6, 0.6), (0.30, 0.80), answers=("$2B.78", "$28.78"))
    assert better.verdict("answer") == (True, better.verdict("answer")[1]) and "surer" in better.verdict("answer")[1]


def test_the_answer_rule_keeps_a_changed_answer_read_from_clearly_more_legible_text():
    # "V6.28" misread in dim light, "v6.2a" after the correction: the reader's probability hardly moves (+0.04 in
    # log-odds), the evidence reads 12 % better; a development capture where the oracle prefers the change
    clearer = _evidence((0.60, 0.672), (0.61, 0.62), answers=("V6.28", "v6.2a"))
    keep, why = clearer.verdict("answer")
    assert keep and "more legible" in why and "legibility +12.0 %, floor 6.9 %" in why
    # the same legibility gain does not carry an answer the reader became clearly less sure of
    less_probable = _evidence((0.60, 0.672), (0.75, 0.49), answers=("v1.59", "2.1"))
    keep, why = less_probable.verdict("answer")
    assert not keep and "not surer" in why
    # a geometric tool is judged on the whole page, whose legibility floor is 1.25 %
    page = replace(clearer, scope="page", legibility_before=0.60, legibility_after=0.61)
    assert page.verdict("answer")[0]
    assert not replace(page, legibility_after=0.605).verdict("answer")[0]


def test_a_changed_answer_read_from_text_that_reads_far_worse_is_rolled_back_however_sure():
    # A deblurring smeared a slide's heading: the evidence reads 0.40 -> 0.12 and the reader grows sure of a
    # fragment ("Key Andings", 0.33 -> 0.79: +2.0 in log-odds, past the margin for a surer answer).
    smeared = _evidence((0.40, 0.12), (0.33, 0.79), answers=("Key Findings", "Key Andings"))
    keep, why = smeared.verdict("answer")
    assert not keep and "reads far worse" in why and "legibility -70.0 %" in why
    # a fall the helpful changes of the development oracle stayed above (to 0.61 of it) still lets it through
    assert replace(smeared, legibility_after=0.25).verdict("answer")[0]
    # and an unchanged answer is judged by its probability alone, as before
    assert replace(smeared, answer_after="Key Findings").verdict("answer")[0]


def _contents_page() -> np.ndarray:
    """A born-digital table of contents: dot leaders are a periodic pattern a moire measure sees as damage."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(font_path(), 22)
    img = Image.new("RGB", (1000, 1300), "white")
    draw = ImageDraw.Draw(img)
    draw.text((80, 70), "Contents", fill="black", font=ImageFont.truetype(font_path("DejaVuSans-Bold.ttf"), 40))
    entries = [
        "Introduction",
        "Installation",
        "Getting started",
        "Configuration",
        "Tables",
        "Charts",
        "Batches",
        "The service",
        "Troubleshooting",
        "Index",
    ]
    for i, entry in enumerate(entries):
        y = 170 + 95 * i
        draw.text((80, y), entry, fill="black", font=font)
        draw.text((240, y), " ." * 40, fill="black", font=font)
        draw.text((880, y), str(3 + 7 * i), fill="black", font=font)
    return np.asarray(img)


def test_a_clean_render_runs_no_tool_and_would_without_the_render_prior(monkeypatch):
    import docintent
    from docintent.perception import signals

    page = Page.from_array(_contents_page(), source="contents")
    assert signals.is_render(page)
    result = docintent.ask(page, "On which page does the chapter Tables start?", strategy="docintent")
    assert result.tools_used == 0, [s.describe() for s in result.trace]
    # the same page measured as if it were a photograph: its dot leaders pass for moire
    monkeypatch.setattr(signals, "is_render", lambda p: False)
    from docintent.perception.service import Perception

    assert Perception().severities(page)["moire"] > Perception().threshold("moire")


def test_a_photographed_page_is_no_render():
    from docintent.perception import signals

    rng = np.random.default_rng(0)
    photo = np.clip(_contents_page().astype(np.float32) * 0.9 + rng.normal(0, 3, (1300, 1000, 3)), 0, 255)
    assert not signals.is_render(Page.from_array(photo.astype(np.uint8)))


def test_a_tool_that_reads_clearer_but_erases_the_column_header_the_answer_stands_under_is_rolled_back():
    """Whole-evidence review: the value's own line is untouched and the region reads more legibly (an erased
    header is one less hard line), but the column header the answer is read under is part of its evidence, so
    the answer's probability falls and the default rule rolls the tool back."""
    from docintent.brains import Change, Rollback, State, get_brain
    from test_offline_reader import _invoice

    page = _invoice()
    pixels = page.pixels.copy()
    pixels[375:425, 815:1060] = 255  # "Unit price", the column header, erased; the row and its cell stay
    after = page.derive(pixels, "header-erased")
    question = "What is the unit price of the toner cartridge?"
    reader = get_brain("offline")
    state = State(question, "doc", page, original=page, available_tools=["deshadowing"])
    change = Change("deshadowing", page, after, degradation="shadow")
    evidence = reader.review_evidence(state, change)
    assert evidence.answer_before == "$61.20"
    assert evidence.legibility_after > evidence.legibility_before * 1.05  # the region "reads better"
    verdict = reader.review(state, change)
    assert isinstance(verdict, Rollback), verdict
    assert verdict.measurements["because"] == "the answer became less probable"


def test_an_unknown_noise_floor_is_refused_naming_the_valid_ones():
    from docintent.brains import get_brain
    from docintent.errors import ConfigError

    with pytest.raises(ConfigError, match="unknown floor 'probability'; valid floors: .*log_odds"):
        get_brain("offline", noise_floors={"probability": 0.1})
    assert get_brain("offline", noise_floors={"log_odds": 0.3}).floors.log_odds == 0.3


def test_after_a_photometric_restoration_changed_nothing_only_geometric_tools_are_tried(monkeypatch):
    """A deshadowing rolled back as "no change needed" says light is not what holds the answer back: the next
    round skips the (more severe) blur and straightens the page instead; with nothing geometric left, it answers
    and says why. The evidence rule keeps trying every tool."""
    from docintent.brains import State, UseTool, get_brain
    from docintent.brains.decisions import Answer
    from docintent.trace import Phase
    from test_offline_reader import _invoice

    page = _invoice()
    measured = {"blur": 0.95, "warp": 0.9, "shadow": 0.0, "appearance": 0.0, "moire": 0.0}
    no_change = ReviewStep(
        Phase.REVIEW,
        Action.ROLLBACK,
        "deshadowing",
        measurements={"because": "no change needed: the answer is as probable as on the page before"},
    )

    def decide(rule: str, history: list, tools: list[str]):
        # never answerable: always restore; photometric tools tried at any confidence
        reader = get_brain("offline", answer_threshold=1.0, photometric_threshold=1.0, review_rule=rule)
        monkeypatch.setattr(reader, "severities", lambda state, page, region: measured)
        state = State(
            "What is the unit price of the toner cartridge?",
            "doc",
            page,
            original=page,
            available_tools=tools,
            history=history,
        )
        return reader.decide(state)

    tools = ["deblurring", "dewarping"]
    first = decide("answer", [], tools)
    assert isinstance(first, UseTool) and first.name == "deblurring"
    after = decide("answer", [no_change], tools)
    assert isinstance(after, UseTool) and after.name == "dewarping"
    stop = decide("answer", [no_change], ["deblurring"])
    assert isinstance(stop, Answer) and stop.text == "$61.20"
    assert "changed nothing the answer depends on" in stop.reasoning
    evidence_rule = decide("evidence", [no_change], tools)
    assert isinstance(evidence_rule, UseTool) and evidence_rule.name == "deblurring"


def test_a_photometric_tool_is_tried_only_on_an_improbable_answer(monkeypatch):
    """A blurred page whose answer is read at a probability above the gate runs no deblurring (a photometric tool
    moves no text; on development captures none was kept above 0.2): Phase A answers and names the damage it left;
    just below the gate the same answer gets the tool. An
    improbable answer still gets the tool, a geometric tool is still tried whatever the answer's probability, and
    ``photometric_threshold=1`` restores the old behaviour."""
    from docintent.brains import State, UseTool, get_brain
    from docintent.brains.decisions import Answer
    from test_offline_reader import _invoice

    page = _invoice()

    def decide(question: str, measured: dict, **options):
        reader = get_brain("offline", **options)
        monkeypatch.setattr(reader, "severities", lambda state, page, region: measured)
        tools = ["deblurring", "dewarping"]
        return reader.decide(State(question, "doc", page, original=page, available_tools=tools))

    blur = {"blur": 0.95, "warp": 0.0, "shadow": 0.0, "appearance": 0.0, "moire": 0.0}
    # the answer's probability on this page, with photometric tools gated off
    probe = decide("What is the name of the ship?", blur, photometric_threshold=0.0)
    assert isinstance(probe, Answer) and 0.05 < probe.confidence < 0.85
    fair = decide("What is the name of the ship?", blur, photometric_threshold=probe.confidence - 0.04)
    assert isinstance(fair, Answer) and fair.confidence == probe.confidence
    assert fair.reasoning.startswith("blur damage left: at answer confidence")
    unsure = decide("What is the name of the ship?", blur, photometric_threshold=probe.confidence + 0.04)
    assert isinstance(unsure, UseTool) and unsure.name == "deblurring"
    improbable = decide("Which ship carried the goods?", blur)
    assert isinstance(improbable, UseTool) and improbable.name == "deblurring"
    always = decide("What is the name of the ship?", blur, photometric_threshold=1.0)
    assert isinstance(always, UseTool) and always.name == "deblurring"
    gate = probe.confidence - 0.04  # above it no photometric tool; a flattening is tried all the same
    warped = decide("What is the name of the ship?", {**blur, "warp": 0.9}, photometric_threshold=gate)
    assert isinstance(warped, UseTool) and warped.name == "dewarping"
