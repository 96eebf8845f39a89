"""Time the synthetic wild-document generator and each capture degradation.

    python benchmarks/synth_speed.py [N] [WORKERS...]

Generates N questions per family (default 30) for seed 0 with each worker count (default: 2 then 1), into a
temporary folder, and times every degradation step on one rendered letter page. Prints the tables and saves
them to benchmarks/results/synth_speed.{md,json}. The machine's load average is recorded beside the times,
because the figures only mean something next to how busy the CPUs were.
"""

from __future__ import annotations

import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from docintent.synth import generate
from docintent.synth.capture import ORDER, CapturePlan, Step, apply
from docintent.synth.documents import render

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"


def time_steps(repeats: int = 3) -> dict[str, float]:
    """Mean seconds of one capture with a single degradation (severity 0.6), letter page, 1800 px."""
    page = render(np.random.default_rng(0), "letter").image
    times: dict[str, float] = {}
    for name in ("none",) + ORDER:
        steps = () if name == "none" else (Step(name, 0.6, 1),)
        start = time.perf_counter()
        for k in range(repeats):
            apply(page, CapturePlan(steps, 0, 1800, seed=k))
        times[name] = (time.perf_counter() - start) / repeats
    return times


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 30
    worker_counts = [int(w) for w in sys.argv[2:]] or [2, 1]
    runs = []
    for workers in worker_counts:
        with tempfile.TemporaryDirectory() as tmp:
            load_before = os.getloadavg()[0]
            summary = generate(tmp, n=n, seed=0, workers=workers)
            runs.append(
                {
                    "workers": workers,
                    "n_per_family": n,
                    "documents": summary.documents,
                    "images": summary.images,
                    "samples": summary.samples,
                    "seconds": round(summary.seconds, 1),
                    "load_avg_1min_before": round(load_before, 2),
                    "load_avg_1min_after": round(os.getloadavg()[0], 2),
                }
            )
        print(f"workers={workers}: {summary.samples} samples, {summary.images} images in {summary.seconds:.1f} s")
    steps = time_steps()
    lines = [
        "## Generation time (seed 0, all three families)",
        "",
        "| workers | questions/family | documents | images | samples | seconds | load avg before / after |",
        "|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r['workers']} | {r['n_per_family']} | {r['documents']} | {r['images']} | {r['samples']} "
            f"| {r['seconds']} | {r['load_avg_1min_before']} / {r['load_avg_1min_after']} |"
        )
    lines += [
        "",
        "## One capture with a single degradation (letter page, 1800 px, severity 0.6)",
        "",
        "| degradation | ms |",
        "|---|---:|",
    ]
    lines += [f"| {name} | {secs * 1000:.0f} |" for name, secs in steps.items()]
    lines += ["", f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}."]
    table = "\n".join(lines)
    print(table)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "synth_speed.md").write_text(table + "\n", encoding="utf-8")
    (RESULTS / "synth_speed.json").write_text(
        json.dumps(
            {
                "runs": runs,
                "step_seconds": {k: round(v, 4) for k, v in steps.items()},
                "cpus": os.cpu_count(),
                "python": platform.python_version(),
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
