"""``docintent restore --auto``: question-free restoration that keeps only what the review accepts."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np

from conftest import render_text_page
from docintent.cli import main
from docintent.ocr import detect_orientation
from docintent.page import Page
from docintent.strategies.auto import restore_auto

LINES = [
    "The physics package", "Sergio C. de la Barrera", "December 12, 2012", "Contents",
    "1 Before you start", "1.1 The purpose of this package", "2 List of commands", "2.1 Automatic bracing",
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
