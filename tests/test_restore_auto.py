"""``docintent restore --auto``: question-free restoration that keeps only what the review accepts."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from conftest import render_text_page
from docintent.cli import main
from docintent.ocr import detect_orientation
from docintent.page import Page
from docintent.strategies.auto import restore_auto

LINES = [
    "The physics package",
    "Sergio C. de la Barrera",
    "December 12, 2012",
    "Contents",
    "1 Before you start",
    "1.1 The purpose of this package",
    "2 List of commands",
    "2.1 Automatic bracing",
]


def test_a_sideways_page_is_turned_upright_and_the_turn_is_kept():
    upright = render_text_page(LINES, size=30, width=900)
    sideways = Page.from_array(np.ascontiguousarray(np.rot90(upright, 1)))
    restored, steps = restore_auto(sideways)
    kept = [s.tool for s in steps if s.verdict == "keep"]
    assert any(t.startswith("rotate_") for t in kept)
    assert restored.size == (upright.shape[1], upright.shape[0])
    assert detect_orientation(restored).fix is None


def test_restore_auto_prints_its_steps_and_saves(tmp_path: Path, capsys):
    upright = render_text_page(LINES, size=30, width=900)
    source = tmp_path / "upside-down.png"
    cv2.imwrite(str(source), np.ascontiguousarray(np.rot90(upright, 2))[:, :, ::-1])
    output = tmp_path / "fixed.png"
    assert main(["restore", "--auto", str(source), "-o", str(output)]) == 0
    out = capsys.readouterr().out
    assert "rotate_180" in out and "keep" in out
    assert cv2.imread(str(output)).shape[:2] == upright.shape[:2]


def test_restore_needs_auto_or_a_tool(tmp_path: Path, capsys):
    source = tmp_path / "page.png"
    cv2.imwrite(str(source), render_text_page(["a line"]))
    assert main(["restore", str(source)]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--auto" in err[0] and "page.png" in err[0]


def _curled_capture(seed: int) -> tuple[Page, str]:
    """A page of text photographed curled on a desk under a soft shadow, and its text."""
    from docintent.synth.capture import CapturePlan, Step, apply

    lines = [
        "Octave C++ Classes",
        "Edition 1.0 for Octave version 7.3.0",
        "The Octave Project Developers",
        "Permission is granted to make and distribute",
        "verbatim copies of this manual provided the",
        "copyright notice and this permission notice",
        "are preserved on all copies of the manual.",
        "Boston, MA 02110-1301 USA, November 2022",
    ] * 2
    clean = render_text_page(lines, size=22, width=800)
    captured, _ = apply(clean, CapturePlan((Step("curl", 0.95, seed), Step("shadow", 0.3, seed + 10)), 0, 1200, seed))
    return Page.from_array(captured), " ".join(lines)


def _cer(page: Page, reference: str, engine: str) -> float:
    from rapidfuzz.distance import Levenshtein

    from docintent.ocr import get_engine

    text = " ".join(line.text for line in get_engine(engine).read(page).lines)
    return Levenshtein.distance(text.lower(), reference.lower()) / len(reference)


@pytest.mark.slow(reason="restores and reads a 1200 px capture with two OCR engines (~30 s)")
def test_a_curled_capture_is_flattened_and_tesseract_reads_it_better():
    curled, reference = _curled_capture(seed=3)
    restored, steps = restore_auto(curled, engine="tesseract")
    assert ("dewarping", "keep") in [(s.tool, s.verdict) for s in steps]
    assert _cer(restored, reference, "tesseract") < _cer(curled, reference, "tesseract")
    assert _cer(restored, reference, "rapidocr") <= _cer(curled, reference, "rapidocr")


@pytest.mark.slow(reason="restores and reads a 1200 px capture (~30 s)")
def test_a_step_that_loses_text_is_rolled_back():
    # Under this shadow the page outline is found around the lit part only: flattening it would crop off the
    # lines in the shade, which the whole-page legibility alone barely notices.
    curled, reference = _curled_capture(seed=1)
    restored, steps = restore_auto(curled)
    first = next(s for s in steps if s.tool == "dewarping")
    assert first.verdict == "rollback" and "characters read" in first.reason
    assert _cer(restored, reference, "rapidocr") < 0.05  # every line is still there


def test_bad_input_exits_1_with_one_line(tmp_path: Path, capsys):
    missing = tmp_path / "no-such-photo.jpg"
    assert main(["restore", "--auto", str(missing), "-o", str(tmp_path / "out.png")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no-such-photo.jpg" in err[0]
    broken = tmp_path / "broken.jpg"
    broken.write_bytes(b"not an image")
    assert main(["restore", "--auto", str(broken), "-o", str(tmp_path / "out.png")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "broken.jpg" in err[0]
    assert not (tmp_path / "out.png").exists()
