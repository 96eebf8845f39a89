"""DocIntent with and without the zoom tool, on a synthetic benchmark, with the offline reader.

When the strategy offers ``zoom`` (``inspection=True``), the offline reader uses it in Phase A: about to
answer with less than full confidence and with the evidence region located, it calls ``zoom`` on that region
(``type="table"`` for table questions, else ``"text"``), reads the returned crop enlarged to about 1000 px on
its longer side and keeps whichever answer (page or crop) it is more confident in. Both runs use ``get_strategy("docintent", inspection=...)`` with the same reader settings,
and the OCR cache is off so both pay for their own reading.

Score: the WildDoc rules per family (``docintent.evaluation.metrics.summarize``: ANLS for doc, relaxed accuracy for
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


def run(samples, zoom: bool) -> list[dict]:
    from docintent.io import load_page
    from docintent.strategies.core import get_strategy

    strategy = get_strategy("docintent", inspection=zoom)
    from docintent.brains import get_brain

    brain = get_brain("offline")
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
        rows.append(
            {
                "id": s.id,
                "task": s.task,
                "subset": s.subset,
                "group": s.group,
                "answers": list(s.answers),
                "prediction": prediction,
                "error": error,
                "zooms": zooms,
                "seconds": time.perf_counter() - t0,
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", required=True, help="synth:DIR (from `docintent synth`)")
    ap.add_argument("--limit", type=int, default=None, help="only the first N samples")
    args = ap.parse_args()
    # Both runs read the same pages: with the OCR cache on, the second would skip the OCR the first paid for.
    os.environ["DOCINTENT_CACHE"] = "0"
    from docintent.evaluation.datasets import load_dataset
    from docintent.evaluation.metrics import score_row, summarize

    samples = load_dataset(args.dataset)[: args.limit]
    out = {
        "dataset": args.dataset,
        "samples": len(samples),
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "runs": {},
    }
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
    lines = [
        "# DocIntent with and without zoom (offline reader)",
        "",
        f"{out['samples']} samples from `{args.dataset}`; machine {out['machine']}; {out['date']}.",
        "",
        "| strategy | family | score | consistency | s / sample | zoom calls | rows |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, r in out["runs"].items():
        for task, split in r["summary"]["tasks"].items():
            lines.append(
                f"| {name} | {task} | {split['score']:.2f} | {split['consistency']:.2f} | "
                f"{r['seconds_per_sample'][task]:.1f} | {r['zoom_calls'][task]} | {split['rows']} |"
            )
        avg = r["summary"]["average"]
        lines.append(f"| {name} | average | {avg['score']:.2f} | {avg['consistency']:.2f} | | | |")
    lines += [
        "",
        "Runs go one after the other in one process: the first pays for loading the OCR and layout models, "
        "and the machine's load changes between them, so compare seconds with care.",
    ]
    md = "\n".join(lines) + "\n"
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "zoom_strategy.md").write_text(md)
    (RESULTS / "zoom_strategy.json").write_text(json.dumps(out, indent=2))
    print(md)


if __name__ == "__main__":
    main()
