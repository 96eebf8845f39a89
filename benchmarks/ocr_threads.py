"""ONNX Runtime intra-op threads for OCR: wall and CPU seconds per page for each thread count, in one run.

Each trial is a fresh process (ONNX Runtime fixes its thread pool when a session is created) that loads the
engine, then detects and recognises every line of the same captures at 2048 px with caches off. Thread counts
alternate trial by trial so that load from other work falls on all of them alike; the load average is recorded
beside every trial.

    python benchmarks/ocr_threads.py --threads 1,2 --trials 4 --pages 6

Prints the table and writes ``benchmarks/results/ocr_threads.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"

CHILD = r"""
import json, os, sys, time
sys.path.insert(0, {here!r})
from strategy_time import pick_samples
from docintent.io import load_page, resize_longest
from docintent.ocr import get_engine
seen, pages = set(), []
for s in pick_samples({dataset!r}, 10 * {pages}):
    if s.image not in seen and len(pages) < {pages}:
        seen.add(s.image); pages.append(resize_longest(load_page(s.image), 2048, upscale=True))
engine = get_engine(cache=False)
engine.read(pages[0])  # load the models; not timed
wall, cpu = [], []
for p in pages:
    t0, c0 = time.perf_counter(), time.process_time()
    engine.read(p)
    wall.append(time.perf_counter() - t0); cpu.append(time.process_time() - c0)
print(json.dumps({{"wall": wall, "cpu": cpu}}))
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="synth:benchmarks/out/synth-s1-n12")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--pages", type=int, default=6)
    args = parser.parse_args()
    options = [int(t) for t in args.threads.split(",")]
    code = CHILD.format(here=str(HERE), dataset=args.dataset, pages=args.pages)
    per: dict[int, dict[str, list[float]]] = {t: {"wall": [], "cpu": [], "load": []} for t in options}
    for trial in range(args.trials):
        for t in options if trial % 2 == 0 else options[::-1]:
            env = dict(os.environ, DOCINTENT_THREADS=str(t), DOCINTENT_CACHE="0")
            out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
            got = json.loads(out.stdout.strip().splitlines()[-1])
            per[t]["wall"] += got["wall"]
            per[t]["cpu"] += got["cpu"]
            per[t]["load"].append(os.getloadavg()[0])
            print(
                f"trial {trial} threads {t}: wall {statistics.median(got['wall']):.2f} s/page, "
                f"cpu {statistics.median(got['cpu']):.2f} s/page, load {per[t]['load'][-1]:.1f}",
                flush=True,
            )
        write(per, options, args, trial + 1)  # after every trial, so a cut-short run still leaves its figures


def write(per: dict[int, dict[str, list[float]]], options: list[int], args: argparse.Namespace, trials: int) -> None:
    base = statistics.median(per[options[0]]["wall"])
    md = [
        f"OCR (detection + recognition of every line) per 2048-px capture, {args.pages} captures x {trials} "
        f"trials per thread count, fresh process per trial, caches off; `{args.dataset}`.",
        "",
        f"| intra-op threads | median wall s / page | median CPU s / page | wall / {options[0]} thread(s) | load average during its trials |",
        "|---:|---:|---:|---:|---|",
    ]
    for t in options:
        w = statistics.median(per[t]["wall"])
        c = statistics.median(per[t]["cpu"])
        loads = per[t]["load"]
        md.append(f"| {t} | {w:.2f} | {c:.2f} | {w / base:.2f} | {min(loads):.1f}-{max(loads):.1f} |")
    table = "\n".join(md)
    print(table)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ocr_threads.md").write_text(table + "\n")
    (RESULTS / "ocr_threads.json").write_text(json.dumps({"runs": per, "time": time.time()}, indent=1))


if __name__ == "__main__":
    main()
