"""DocIntent with and without the zoom tool, on a synthetic benchmark, with the offline reader.

The offline reader on its own never asks for ``zoom``, so this script gives it a zoom policy (``ZoomingReader``,
defined here): when it is about to answer with less than full confidence and has located the evidence region,
it calls ``zoom`` on that region (``type="table"`` for table questions, else ``"text"``), then reads the
returned crop enlarged to at least 1000 px on its longer side and keeps whichever answer (page or crop) it is
more confident in. Both runs use ``get_strategy("docintent", inspection=...)`` with the same reader settings,
and the OCR cache is off so both pay for their own reading.

Score: the WildDoc rules per family (``docintent.bench.metrics.summarize``: ANLS for doc, relaxed accuracy for
chart, the TableVQA sub-split rule for table); consistency = questions whose every capture is correct.

    docintent synth --out /tmp/synth --n 3 --questions-per-document 3 --no-contact-sheet
    python benchmarks/zoom_strategy.py --dataset synth:/tmp/synth

Prints the table and writes benchmarks/results/zoom_strategy.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from collections import defaultdict
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def zooming_reader(**options):
    """The offline reader with one zoom per page state (see the module docstring)."""
    import cv2

    from docintent.brains.base import Answer, UseTool
    from docintent.brains.offline import OfflineReader
    from docintent.page import Box

    class ZoomingReader(OfflineReader):
        name = "offline+zoom"

        def _crop_answer(self, state):
            ev = next((e for e in reversed(state.evidence) if getattr(e, "page_hash", None) == state.page.hash), None)
            if ev is None:
                return None
            crop = ev.crop
            scale = min(3.0, 1000.0 / max(crop.width, crop.height))
            if scale > 1.0:
                crop = crop.derive(cv2.resize(crop.pixels, None, fx=scale, fy=scale, interpolation=cv2.INTER_CUBIC), f"upscale{scale:.2f}")
            reading = self.read(state, crop)
            return Answer(reading.answer, reading.confidence, f"read on the zoomed crop by {reading.source}")

        def _better(self, state, base):
            crop = self._crop_answer(state)
            if crop is not None and crop.text and crop.confidence > base.confidence:
                return crop
            return base

        def decide(self, state):
            base = super().decide(state)
            if not isinstance(base, Answer):
                return base  # restoration first; zoom when about to answer
            if any(getattr(e, "page_hash", None) == state.page.hash for e in state.evidence):
                return self._better(state, base)
            region = self.read(state, state.page).region
            if "zoom" in state.available_tools and base.confidence < 0.95 and region != Box.FULL and region.area < 0.5:
                box = region.expand(0.04, 0.03)
                kind = "table" if state.task == "table" else "text"
                return UseTool("zoom", f"answer confidence {base.confidence:.2f}: read the evidence region closer",
                               {"label": "evidence region", "bbox": [round(v, 4) for v in box.as_tuple()], "type": kind})
            return base

        def answer(self, state):
            return self._better(state, super().answer(state))

    return ZoomingReader(**options)


def run(samples, zoom: bool) -> list[dict]:
    from docintent.io import load_page
    from docintent.strategies.core import get_strategy

    strategy = get_strategy("docintent", inspection=zoom)
    brain = zooming_reader()
    rows = []
    for s in samples:
        page = load_page(s.image)
        t0 = time.perf_counter()
        try:
            result = strategy.run(page, s.question, s.task, brain)
            prediction, error = result.answer, None
            zooms = sum(1 for step in result.trace if step.tool == "zoom" and step.phase == "inspect")
        except Exception as err:  # a failed sample is a row with its error
            prediction, error, zooms = "", f"{type(err).__name__}: {err}", 0
        rows.append({"id": s.id, "task": s.task, "subset": s.subset, "group": s.group, "answers": list(s.answers),
                     "prediction": prediction, "error": error, "zooms": zooms, "seconds": time.perf_counter() - t0})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", required=True, help="synth:DIR (from `docintent synth`)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N samples")
    args = ap.parse_args()
    # Both runs read the same pages: with the OCR cache on, the second would skip the OCR the first paid for.
    os.environ["DOCINTENT_CACHE"] = "0"
    from docintent.bench.datasets import load_dataset
    from docintent.bench.metrics import score_row, summarize

    samples = load_dataset(args.dataset)[: args.limit]
    out = {"dataset": args.dataset, "samples": len(samples),
           "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}",
           "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "runs": {}}
    for zoom in (False, True):
        rows = run(samples, zoom)
        for r in rows:
            r["score"] = score_row(r["task"], r["subset"], r["prediction"], r["answers"])
        summary = summarize(rows)
        by_task = defaultdict(list)
        for r in rows:
            by_task[r["task"]].append(r)
        name = "docintent + zoom" if zoom else "docintent"
        out["runs"][name] = {
            "summary": summary.to_dict(),
            "seconds_per_sample": {t: statistics.mean(r["seconds"] for r in rs) for t, rs in by_task.items()},
            "zoom_calls": {t: sum(r["zooms"] for r in rs) for t, rs in by_task.items()},
            "errors": sum(1 for r in rows if r["error"]),
            "rows": rows,
        }
    lines = ["# DocIntent with and without zoom (offline reader)", "",
             f"{out['samples']} samples from `{args.dataset}`; machine {out['machine']}; {out['date']}.", "",
             "| strategy | family | score | consistency | s / sample | zoom calls | rows |", "|---|---|---|---|---|---|---|"]
    for name, r in out["runs"].items():
        for task, split in r["summary"]["tasks"].items():
            lines.append(f"| {name} | {task} | {split['score']:.2f} | {split['consistency']:.2f} | "
                         f"{r['seconds_per_sample'][task]:.1f} | {r['zoom_calls'][task]} | {split['rows']} |")
        avg = r["summary"]["average"]
        lines.append(f"| {name} | average | {avg['score']:.2f} | {avg['consistency']:.2f} | | | |")
    lines += ["", "Runs go one after the other in one process: the first pays for loading the OCR and layout models, "
              "and the machine's load changes between them, so compare seconds with care."]
    md = "\n".join(lines) + "\n"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "zoom_strategy.md").write_text(md)
    (RESULTS / "zoom_strategy.json").write_text(json.dumps(out, indent=2))
    print(md)


if __name__ == "__main__":
    main()
