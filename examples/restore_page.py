"""Restore a page without a question, as an OCR pipeline would before reading it.

A page is drawn here, then turned upside down and blurred. ``restore_auto`` measures the damage, runs the tool
for the worst of it, keeps each step only when the page reads better (or the damage measurably fell while the
text read as well), and repeats. The text is read before and after with RapidOCR, and the pages are saved.
Run: python examples/restore_page.py [--out DIR]   (default: a new temporary folder)
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import numpy as np

from docintent.io import save_page
from docintent.ocr import get_engine
from docintent.page import Page
from docintent.strategies.auto import restore_auto
from docintent.synth.degrade import defocus
from docintent.synth.render import render_text_lines

LINES = ["Quarterly report", "Revenue grew 12 % to 4.2 million", "Costs fell in every region", "Outlook: stable"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for the pages (default: a temporary one)")
    out = parser.parse_args().out or Path(tempfile.mkdtemp(prefix="docintent-restore-"))
    out.mkdir(parents=True, exist_ok=True)

    clean = render_text_lines(LINES, width=1000, font_px=32)
    upside_down = np.ascontiguousarray(np.rot90(clean, 2))
    page = Page.from_array(defocus(upside_down, np.random.default_rng(0), severity=0.4), source="damaged report")
    restored, steps = restore_auto(page)

    for step in steps:
        print(f"{step.tool:<12} {step.verdict:<9} {step.why}; {step.reason}  ({step.seconds:.2f} s)")
    engine = get_engine()
    print("read before:", " | ".join(line.text for line in engine.read(page).lines) or "(nothing)")
    print("read after: ", " | ".join(line.text for line in engine.read(restored).lines))
    save_page(page, out / "damaged.png")
    save_page(restored, out / "restored.png")
    print(f"wrote {out / 'damaged.png'} and {out / 'restored.png'}")
    assert "rotate_180" in [s.tool for s in steps if s.verdict == "keep"]


if __name__ == "__main__":
    main()
