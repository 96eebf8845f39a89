"""Same input, same reading: OCR lines and tool outputs do not depend on history.

A line's text and confidence must be the same whether the page is read fresh, from the cache, as a region, or
with its lines recognised in any grouping; a tool given the same page returns the same bytes in any process.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys

import numpy as np
import pytest

from docintent.ocr import ReadingSession, get_engine
from docintent.ocr.cache import OcrCache
from docintent.page import Box, Page
from docintent.synth.render import render_page


@pytest.fixture(scope="module")
def busy_page() -> Page:
    """A rendered report page with over 30 text lines of different widths."""
    return Page.from_array(render_page(width=1400, seed=3)[0], source="rendered")


def _lines(result):
    return [(line.text, line.confidence, line.box, line.words) for line in result.lines]


def _fresh_engine(tmp_path, name: str):
    """A RapidOCR engine with a cache of its own under ``tmp_path/name`` (an empty cache the first time)."""
    from docintent.ocr.engines import RapidOcrEngine

    engine = RapidOcrEngine()
    engine.cache = OcrCache(tmp_path / name)
    return engine


def test_a_region_read_after_a_warm_cache_equals_the_one_after_a_cold_cache(busy_page, tmp_path):
    """The cache decides nothing: with a warm cache the page's lines come from disk and a region is read again
    later; its lines must equal the lines the cold run read (they once came back from a different grouping of
    lines and differed by up to 0.006 in confidence, enough to flip a review)."""
    region = Box(0.0, 0.3, 1.0, 0.6)
    engine = _fresh_engine(tmp_path, "shared")
    cold = ReadingSession(engine)
    cold.read(busy_page)
    cold_region = cold.read(busy_page, region)

    warm_engine = _fresh_engine(tmp_path, "shared")  # same folder: the full read is now a cache hit
    warm = ReadingSession(warm_engine)
    warm.read(busy_page)
    assert warm.cache_hits == 1, "the second session should have started from the cache"
    warm_region = warm.read(busy_page, region)
    assert _lines(warm_region) == _lines(cold_region)
    assert warm.stats == cold.stats  # the cache stood in for the same work, and the region was looked up
    assert len(warm_region.lines) >= 5


def test_lines_are_identical_fresh_cached_by_region_and_in_any_grouping(busy_page, tmp_path):
    engine = get_engine(cache=False)
    fresh = ReadingSession(engine).read(busy_page)
    assert len(fresh.lines) >= 30

    cached_engine = _fresh_engine(tmp_path, "c")
    ReadingSession(cached_engine).read(busy_page)
    from_cache = ReadingSession(_fresh_engine(tmp_path, "c")).read(busy_page)
    assert _lines(from_cache) == _lines(fresh)

    # by region: every line read as part of a band of the page equals the same line of the whole-page read
    by_box = {line.box: line for line in fresh.lines}
    session = ReadingSession(engine)
    seen = 0
    for y0 in (0.0, 0.25, 0.5, 0.75):
        for line in session.read(busy_page, Box(0.0, y0, 1.0, y0 + 0.25)).lines:
            assert line == by_box[line.box]
            seen += 1
    assert seen == len(fresh.lines)

    # the engine's own whole-page read (not through a session) reads the same lines
    assert _lines(engine.read(busy_page)) == _lines(fresh)

    # recognition in groups of 1, 6 and 32 lines, in shuffled orders
    quads = list(engine.detect_lines(busy_page.pixels))
    crops = [engine.crop_line(busy_page.pixels, q) for q in quads]
    alone = [engine.recognize_lines([c], [q])[0] for c, q in zip(crops, quads)]
    order = list(range(len(crops)))
    random.Random(7).shuffle(order)
    for size in (6, 32):
        for start in range(0, len(order), size):
            chosen = order[start : start + size]
            grouped = engine.recognize_lines([crops[i] for i in chosen], [quads[i] for i in chosen])
            assert grouped == [alone[i] for i in chosen]


def test_tesseract_reads_a_region_as_the_lines_of_its_page_whatever_it_read_before(busy_page):
    pytest.importorskip("tesserocr")
    engine = get_engine("tesseract", cache=False)
    other = Page.from_array(render_page(width=1000, seed=11)[0])
    first = engine.read(busy_page)
    engine.read(other)
    again = engine.read(busy_page)
    assert _lines(again) == _lines(first)

    region = Box(0.0, 0.4, 1.0, 0.7)
    session = ReadingSession(engine)
    in_region = session.read(busy_page, region)
    expected = [line for line in first.lines if region.y0 <= line.box.center[1] <= region.y1]
    assert _lines(in_region) == [(line.text, line.confidence, line.box, line.words) for line in expected]
    assert in_region.lines


_TOOL_HASHES = """
import json, sys
import numpy as np
from docintent.page import Page
from docintent.synth import degrade
from docintent.synth.render import render_page
from docintent.tools import list_tools
base = render_page(width=900, seed=5)[0]
rng = np.random.default_rng(2)
damaged = degrade.motion_blur(degrade.shadow(degrade.curl(base, rng, 0.6), rng, 0.7), rng, 0.5)
page = Page.from_array(damaged)
out = {}
for tool in list_tools():
    if tool.degradation != "inspection":
        out[tool.name] = [tool.run(page).hash, tool.run(page).hash]
print(json.dumps(out))
"""


def _tool_hashes(threads: str) -> dict[str, list[str]]:
    env = {**os.environ, "DOCINTENT_THREADS": threads, "OMP_NUM_THREADS": threads, "OPENCV_FOR_THREADS_NUM": threads}
    done = subprocess.run([sys.executable, "-c", _TOOL_HASHES], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_every_tool_returns_the_same_bytes_in_any_process_and_thread_count():
    one, two = _tool_hashes("1"), _tool_hashes("2")
    assert set(one) >= {"deshadowing", "deblurring", "dewarping", "appearance", "demoire", "rotate_90"}
    for name, (first, second) in one.items():
        assert first == second, f"{name} gave two outputs for one page in one process"
    assert one == two


def test_report_warns_when_compared_runs_differ_in_what_can_change_a_result(tmp_path, capsys):
    from docintent.brains import ScriptedBrain
    from docintent.cli import main
    from docintent.evaluation.runner import run_benchmark
    from docintent.io import save_page
    from docintent.sample import Sample

    image = tmp_path / "p.png"
    save_page(Page.from_array(render_page(width=400, seed=2)[0]), image)
    samples = [Sample("s1", str(image), "q?", answers=("42",), task="doc", subset="doc", group="s1")]
    for name in ("a", "b"):
        run_benchmark(samples, ["none", "docintent"], lambda: ScriptedBrain(final="42"), tmp_path / name)
    manifest = json.loads((tmp_path / "b" / "manifest.json").read_text())
    assert manifest["reproducibility"]["strategies"]["docintent"]["max_rounds"] == 10
    assert "rapidocr" in manifest["reproducibility"]["versions"]
    code = main(["report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "r")])
    assert code == 0 and "warning" not in capsys.readouterr().err  # the same settings: nothing to warn about

    manifest["reproducibility"]["versions"]["rapidocr"] = "0.0.1"
    manifest["reproducibility"]["strategies"]["docintent"]["max_rounds"] = 3
    (tmp_path / "b" / "manifest.json").write_text(json.dumps(manifest))
    code = main(["report", str(tmp_path / "a"), str(tmp_path / "b"), "--out", str(tmp_path / "r")])
    err = capsys.readouterr().err
    assert code == 0
    assert "warning: a vs b: versions.rapidocr:" in err and "'0.0.1'" in err
    assert "strategies.docintent:" in err and "'max_rounds': 3" in err
    assert "differ in settings that can change results" in (tmp_path / "r" / "report.md").read_text()


def test_an_answer_and_its_whole_trace_do_not_depend_on_the_cache(tmp_path, monkeypatch):
    """The same question about the same shadowed page, asked with the cache off, with an empty cache and with a
    warm one: the same answer, the same steps, the same figures in every review."""
    import docintent
    from conftest import render_text_page
    from docintent.brains import get_brain
    from docintent.ocr import forget_engines
    from docintent.settings import get_settings

    clean = render_text_page(["Invoice number: INV-2041", "Total amount due: $1,250.00", "Thank you"], width=700)
    shade = np.linspace(1.0, 0.35, clean.shape[1])[None, :, None]
    page = Page.from_array((clean.astype(np.float64) * shade).astype(np.uint8))

    def ask(cache: str | None):
        monkeypatch.setenv("DOCINTENT_CACHE", "0" if cache is None else "1")
        if cache is not None:
            monkeypatch.setenv("DOCINTENT_CACHE_DIR", str(tmp_path / cache))
        get_settings.cache_clear()
        forget_engines()  # a fresh engine, as a new process would have
        # never answerable at once, photometric tools at any confidence: the loop restores
        brain = get_brain("offline", answer_threshold=1.0, photometric_threshold=1.0)
        result = docintent.ask(page, "What is the total amount due?", brain=brain)
        return result.answer, [
            (s.phase, s.action, s.tool, s.reason, s.before, s.after, s.to_dict()["data"]) for s in result.trace
        ]

    try:
        off, cold, warm = ask(None), ask("c"), ask("c")
    finally:
        forget_engines()
    assert off == cold == warm
    assert any(step[0] == "B" for step in off[1])  # a restoration was reviewed
