"""What answering from a whole document costs: ``docintent.ask`` on a two-page PDF whose answer is on page 2.

Three inputs, each asked ``--repeats`` times with the OCR cache off (``DOCINTENT_CACHE=0``, set here), offline
reader, strategy ``docintent``:

- ``text layer``: a PDF with a text layer (the locator ranks the pages from it in milliseconds; only page 2 is
  rendered, read and, had it needed it, restored);
- ``scanned``: the same two pages as images in a PDF (no text layer: the locator OCRs both pages, then page 2 is
  read);
- ``page 2 alone``: ``--pages 2`` on the scanned PDF (no locating), the cost of reading the one page.

Prints medians (and the machine load before and after, since the machine is shared) and writes
benchmarks/results/document_ask.{json,md}.

    DOCINTENT_THREADS=1 python benchmarks/document_ask.py
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path

os.environ["DOCINTENT_CACHE"] = "0"  # every ask reads its pages afresh

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the page renderer and PDF maker the tests use

QUESTION = "What is the total amount due?"
PAGES = [
    "Dear customer\nThank you for your order of garden chairs.\nOur shop opens at nine.",
    "Invoice INV-2041\nDate: 12 March 2024\nTotal amount due: $1,250.00",
]


def _scanned(path: Path, text_pdf: Path) -> Path:
    """The text PDF's pages rendered and stored as images in a PDF without a text layer."""
    from PIL import Image

    from docintent.io import load_pdf

    pages = [Image.fromarray(p.pixels) for p in load_pdf(text_pdf)]
    pages[0].save(path, save_all=True, append_images=pages[1:], resolution=150)
    return path


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--out", default=str(RESULTS / "document_ask"), help="results path without suffix")
    args = parser.parse_args()

    import docintent
    from docintent.brains import get_brain
    from retrieval_helpers import make_pdf

    load_before = os.getloadavg()
    brain = get_brain("offline")
    with tempfile.TemporaryDirectory() as tmp:
        text_pdf = make_pdf(Path(tmp) / "text.pdf", PAGES)
        scanned = _scanned(Path(tmp) / "scanned.pdf", text_pdf)
        cases = {"text layer": (text_pdf, None), "scanned": (scanned, None), "page 2 alone": (scanned, "2")}
        docintent.ask(text_pdf, QUESTION, brain=brain)  # loads the OCR models once, outside the timings
        figures = {}
        for name, (path, pages) in cases.items():
            seconds, answers = [], set()
            for _ in range(args.repeats):
                start = time.perf_counter()
                result = docintent.ask(path, QUESTION, brain=brain, pages=pages)
                seconds.append(time.perf_counter() - start)
                answers.add((result.answer, result.page))
            figures[name] = {
                "median_s": round(statistics.median(seconds), 3),
                "min_s": round(min(seconds), 3),
                "max_s": round(max(seconds), 3),
                "answers": sorted(answers),
            }
            print(
                f"{name:<14} median {figures[name]['median_s']:.2f} s (min {min(seconds):.2f}, max "
                f"{max(seconds):.2f}) -> {sorted(answers)}"
            )
    brain.close()
    load_after = os.getloadavg()
    facts = {
        "repeats": args.repeats,
        "threads": os.environ.get("DOCINTENT_THREADS"),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "load_before": [round(v, 2) for v in load_before],
        "load_after": [round(v, 2) for v in load_after],
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps({"facts": facts, "figures": figures}, indent=2) + "\n")
    lines = [
        "# Asking a two-page PDF whose answer is on page 2",
        "",
        f"Offline reader, strategy docintent, OCR cache off, medians of {args.repeats}; "
        f"DOCINTENT_THREADS={facts['threads']}, {facts['cpus']} CPUs, load average "
        f"{load_before[0]:.1f} before and {load_after[0]:.1f} after (a shared machine).",
        "",
        "| input | median s | min s | max s | answer, page |",
        "|---|---:|---:|---:|---|",
    ]
    for name, f in figures.items():
        answers = "; ".join(f"{a!r} p{p}" for a, p in f["answers"])
        lines.append(f"| {name} | {f['median_s']:.2f} | {f['min_s']:.2f} | {f['max_s']:.2f} | {answers} |")
    out.with_suffix(".md").write_text("\n".join(lines) + "\n")
    print(f"wrote {out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
