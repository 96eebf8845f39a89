"""Work counters: what answering a question took, counted rather than timed (text-line detections, lines
recognised and reused, tool runs, reviews, orientation checks, pixels restored, region reads), the same on every
run and whatever the OCR cache holds, so a regression in the amount of work fails here without a timed test; and
every tool's work within the bounds it declares."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest
from PIL import Image, ImageDraw, ImageFont

from conftest import font_path
from docintent.brains import ScriptedBrain, get_brain
from docintent.brains.base import State
from docintent.brains.offline import OfflineReader
from docintent.ocr.cache import OcrCache
from docintent.ocr.engines import RapidOcrEngine
from docintent.page import Page
from docintent.strategies import get_strategy, pipeline_tools
from docintent.synth import degrade
from docintent.tools import get_tool, restoration_tools
from docintent.trace import Phase, ToolStep

QUESTION = "What is the total due?"


def _invoice() -> Page:
    img = Image.new("RGB", (1400, 1000), "white")
    d = ImageDraw.Draw(img)
    f = ImageFont.truetype(font_path("DejaVuSerif.ttf"), 30)
    b = ImageFont.truetype(font_path("DejaVuSerif-Bold.ttf"), 44)
    d.text((60, 50), "Northwind Supplies Ltd.", font=b, fill="black")
    for i, (k, v) in enumerate(
        [("Invoice No.", "NW-58213"), ("Issue date", "4 June 2023"), ("Customer", "Alder & Finch LLP")]
    ):
        d.text((60, 160 + 50 * i), k, font=f, fill="black")
        d.text((420, 160 + 50 * i), v, font=f, fill="black")
    d.text((820, 640), "Total due", font=f, fill="black")
    d.text((1100, 640), "$277.60", font=f, fill="black")
    return Page.from_array(np.asarray(img), source="rendered-invoice")


@pytest.fixture(scope="module")
def clean() -> Page:
    return _invoice()


@pytest.fixture(scope="module")
def blurred(clean) -> Page:
    """The invoice shaken hard while photographed: Phase A deblurs it and Phase B keeps the sharper page (a
    milder shake the reader reads through, answering directly)."""
    return Page.from_array(degrade.motion_blur(clean.pixels, np.random.default_rng(7), 0.9), source="shaken-invoice")


class _CachedReader(OfflineReader):
    """The offline reader with an OCR engine whose disk cache lives in a folder of the test's own."""

    def __init__(self, folder) -> None:
        super().__init__(**EVERY_TOOL)  # the carried-boxes review path below is exercised too
        self._engine = RapidOcrEngine()
        self._engine.cache = OcrCache(folder)

    @property
    def engine(self):
        return self._engine


#: What answering QUESTION takes on the clean invoice: the page read once (one detection, its nine lines),
#: its orientation checked once, nothing restored.
CLEAN = {
    "tool_runs": 0,
    "reviews": 0,
    "inspections": 0,
    "pixels_restored": 0,
    "detections": 1,
    "lines_recognised": 9,
    "lines_reused": 0,
    "boxes_carried": 0,
    "region_reads": 0,
    "crop_reads": 0,
    "page_reads": 0,
    "orientation_checks": 1,
}
#: ... and on the shaken one: deblurring ran (1400 x 1000 pixels written) and its review read the sharpened page
#: whole (the reader was too unsure of the shaken page to know where its evidence is: a second detection), and kept
#: it; the answer (0.71) was still short of Phase A's threshold but probable enough that no other photometric tool
#: is tried; both page states' orientation checked.
BLURRED = {
    "tool_runs": 1,
    "reviews": 1,
    "inspections": 0,
    "pixels_restored": 1_400_000,
    "detections": 2,
    "lines_recognised": 18,
    "lines_reused": 0,
    "boxes_carried": 0,
    "region_reads": 0,
    "crop_reads": 0,
    "page_reads": 0,
    "orientation_checks": 2,
}
#: Photometric tools at any confidence, and answering only at 0.99 (the deblurred page's answer reads at about 0.88):
#: appearance runs too, and its review re-reads only the evidence region with the boxes of the page before it (no
#: third detection), looking up the lines the tool left as they were, and rolls it back.
EVERY_TOOL = {"photometric_threshold": 1.0, "answer_threshold": 0.99}
#: ... the counters of that run
BLURRED_EVERY_TOOL = {
    "tool_runs": 2,
    "reviews": 2,
    "inspections": 0,
    "pixels_restored": 2_800_000,
    "detections": 2,
    "lines_recognised": 20,
    "lines_reused": 4,
    "boxes_carried": 1,
    "region_reads": 3,
    "crop_reads": 0,
    "page_reads": 0,
    "orientation_checks": 2,
}


def test_the_counters_of_a_clean_page_answered_at_once(clean):
    result = get_strategy("docintent").run(clean, QUESTION, "doc", get_brain("offline"))
    assert result.answer == "$277.60" and result.tools_used == 0
    assert result.work == CLEAN
    assert result.to_dict()["work"] == CLEAN  # what `ask --json`, bench rows and the service return


def test_the_counters_of_a_damaged_page_restored_and_reviewed(blurred):
    result = get_strategy("docintent").run(blurred, QUESTION, "doc", get_brain("offline"))
    assert result.answer == "$277.60" and result.tools_kept == ["deblurring"]
    assert result.tools_rolled_back == []
    assert result.work == BLURRED
    every = get_strategy("docintent").run(blurred, QUESTION, "doc", get_brain("offline", **EVERY_TOOL))
    assert every.answer == "$277.60" and every.tools_kept == ["deblurring"]
    assert every.tools_rolled_back == ["appearance"]
    assert every.work == BLURRED_EVERY_TOOL
    step = next(s for s in result.trace if isinstance(s, ToolStep) and s.tool == "deblurring")
    bounds = get_tool("deblurring").work_bounds
    assert step.budget_s == get_tool("deblurring").budget_s == 0.3
    assert 0 < step.work["candidates"] <= bounds["candidates"] == 137
    assert step.work["pixels"] == 1_400_000 and step.seconds > 0
    assert "budget 0.3 s" in step.describe(verbose=True)


def test_counters_and_decisions_are_the_same_with_the_cache_off_cold_and_warm(blurred, tmp_path):
    def run(brain):
        result = get_strategy("docintent").run(blurred, QUESTION, "doc", brain)
        steps = [{k: v for k, v in s.to_dict().items() if k != "seconds"} for s in result.trace]
        return result.answer, result.work, steps

    off = run(get_brain("offline", **EVERY_TOOL))
    cold_reader = _CachedReader(tmp_path / "ocr")
    cold = run(cold_reader)
    warm_reader = _CachedReader(tmp_path / "ocr")
    warm = run(warm_reader)
    assert off == cold == warm
    assert off[1] == BLURRED_EVERY_TOOL


def test_a_warm_session_counts_what_the_cache_stood_in_for(clean, tmp_path):
    from docintent.ocr import ReadingSession

    sessions = []
    for _ in range(2):
        engine = RapidOcrEngine()
        engine.cache = OcrCache(tmp_path / "ocr")
        session = ReadingSession(engine)
        session.read(clean)
        session.read(clean.derive(cv2.GaussianBlur(clean.pixels, (0, 0), 1.0), "soft"), None, geometry_of=clean)
        sessions.append(session)
    cold, warm = sessions
    assert (cold.cache_hits, warm.cache_hits) == (0, 1)
    assert warm.stats == cold.stats and cold.stats["detections"] == 1 and cold.stats["boxes_carried"] == 1


def test_agres_runs_a_tool_once_when_the_damage_it_targets_does_not_move(clean):
    """A damage signal no tool lowers (print that measures as shadow) used to send agres, which keeps every change
    unreviewed, back to the same tool round after round, each time a new page state read whole."""

    class Stubborn(OfflineReader):
        def severities(self, state, page, region):
            return {"shadow": 0.95}

    shadowed = Page.from_array(degrade.shadow(clean.pixels, np.random.default_rng(3), 0.6), source="shadowed")
    result = get_strategy("agres").run(
        shadowed, QUESTION, "doc", Stubborn(answer_threshold=1.0, photometric_threshold=1.0)
    )
    runs = [s.tool for s in result.trace if s.phase == Phase.TOOL]
    assert runs == ["deshadowing"]
    assert result.work["detections"] == 2 and result.work["tool_runs"] == 1


def test_brains_that_count_nothing_report_nothing_and_the_run_still_counts(clean):
    result = get_strategy("pipeline-fixed").run(clean, QUESTION, "doc", ScriptedBrain(final="42"))
    changed = [s for s in result.trace if s.phase == Phase.TOOL and s.action == "applied"]
    assert result.work == {
        "tool_runs": len(pipeline_tools(restoration_tools())),
        "reviews": 0,
        "inspections": 0,
        "pixels_restored": sum(1_400_000 for _ in changed),
    }


def test_ask_json_and_the_service_carry_the_counters(clean, tmp_path, capsys):
    from docintent.cli import main
    from docintent.io import save_page

    path = tmp_path / "invoice.png"
    save_page(clean, path)
    assert main(["ask", str(path), "q?", "--brain", "scripted", "--strategy", "pipeline-fixed", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["work"]["tool_runs"] == len(pipeline_tools(restoration_tools())) and data["work"]["reviews"] == 0


def _periodic_colour_grid(size: int = 512) -> np.ndarray:
    """Many coloured periodic patterns at once (more spectral peaks than any screen's moiré)."""
    yy, xx = np.mgrid[0:size, 0:size].astype(np.float32)
    img = np.full((size, size, 3), 200.0, np.float32)
    for k in range(40):
        fx, fy = 0.07 + 0.009 * k, 0.05 + 0.0071 * ((k * 7) % 40)
        wave = 12.0 * np.sin(2 * np.pi * (fx * xx + fy * yy))
        img[:, :, k % 3] += wave
        img[:, :, (k + 1) % 3] -= wave
    return np.clip(img, 0, 255).astype(np.uint8)


@pytest.mark.parametrize("name", ["dewarping", "deshadowing", "deblurring", "appearance", "demoire", "rotate_90"])
def test_every_tool_reports_its_work_within_its_bounds(name, blurred):
    tool = get_tool(name)
    pages = [blurred, Page.from_array(_periodic_colour_grid())]
    for page in pages:
        after = tool(page)
        work = after.meta["work"]
        assert work, f"{name} recorded no work"
        for key, bound in tool.work_bounds.items():
            assert work.get(key, 0) <= bound, (name, key, work)
        assert tool.budget_s is not None and tool.budget_s > 0
        # the work describes the run that made the page: a later tool never inherits it
        assert "work" not in after.derive(after.pixels.copy(), "copy").meta


def test_demoire_notches_at_most_its_bound_on_a_page_of_periodic_print():
    from docintent.tools.demoire import MAX_PEAKS

    after = get_tool("demoire")(Page.from_array(_periodic_colour_grid()))
    assert MAX_PEAKS < 100 and 0 < after.meta["work"]["peaks"] <= 2 * MAX_PEAKS


def test_the_orientation_check_is_counted_once_per_page_state(clean):
    reader = get_brain("offline")
    state = State(QUESTION, "doc", clean, original=clean, available_tools=[])
    reader.orientation_fix(state, clean)
    reader.orientation_fix(state, clean)
    reader.orientation_fix(state, get_tool("rotate_180")(clean))
    assert reader.work(state)["orientation_checks"] == 2
