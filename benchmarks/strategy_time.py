"""Seconds per sample of the ``none`` and ``docintent`` strategies with the offline reader, at 2048 px.

Every sample is a distinct capture image resized to a 2048-px longest side. OCR and signal caches are off, so
each strategy pays for every read it makes (within one sample the reader still reuses its own readings, as it
does in real use). Strategies alternate order per sample so machine-load drift does not favour either.

    python benchmarks/strategy_time.py --dataset synth:benchmarks/out/synth-s1-n60 --samples 30

Prints the table and writes benchmarks/results/strategy_time.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from pathlib import Path

os.environ["DOCINTENT_CACHE"] = "0"  # before docintent reads its settings

RESULTS = Path(__file__).resolve().parent / "results"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="synth:benchmarks/out/synth-s1-n60")
    parser.add_argument("--samples", type=int, default=30)
    parser.add_argument("--strategies", default="none,docintent")
    args = parser.parse_args()

    from docintent.brains import get_brain
    from docintent.evaluation.datasets import load_dataset
    from docintent.io import load_page, resize_longest
    from docintent.perception import signals
    from docintent.strategies import get_strategy

    samples, seen = [], set()
    for s in load_dataset(args.dataset):
        if s.image not in seen:
            seen.add(s.image)
            samples.append(s)
    # spread over families and capture conditions
    samples = samples[:: max(1, len(samples) // args.samples)][: args.samples]
    names = args.strategies.split(",")
    brain = get_brain("offline")
    brain.answer  # noqa: B018 - the brain is built once, as a run would
    times: dict[str, list[float]] = {n: [] for n in names}
    tools: dict[str, list[int]] = {n: [] for n in names}
    # warm-up: model loading is a one-off start-up cost, not per-sample time
    warm = resize_longest(load_page(samples[0].image), 2048, upscale=True)
    get_strategy("none").run(warm, samples[0].question, samples[0].task, brain)
    for i, sample in enumerate(samples):
        page = resize_longest(load_page(sample.image), 2048, upscale=True)
        order = names if i % 2 == 0 else names[::-1]
        for name in order:
            signals.clear_cache()
            t0 = time.perf_counter()
            result = get_strategy(name).run(page, sample.question, sample.task, brain)
            times[name].append(time.perf_counter() - t0)
            tools[name].append(result.tools_used)
        print(f"{i + 1}/{len(samples)} " + "  ".join(f"{n} {times[n][-1]:.2f}s" for n in names), flush=True)

    rows = []
    base = statistics.median(times[names[0]])
    for name in names:
        med = statistics.median(times[name])
        rows.append({
            "strategy": name,
            "median_s": round(med, 3),
            "p90_s": round(sorted(times[name])[int(0.9 * (len(times[name]) - 1))], 3),
            "mean_tools": round(sum(tools[name]) / len(tools[name]), 2),
            "ratio_to_first": round(med / base, 2),
        })
    load = os.getloadavg()
    lines = [
        f"Seconds per sample at 2048 px, offline reader, caches off, {len(samples)} distinct capture images "
        f"from `{args.dataset}`; load average at the end {load[0]:.1f}.",
        "",
        f"| strategy | median s | p90 s | mean tools | median / {names[0]} |",
        "|---|---:|---:|---:|---:|",
    ] + [f"| {r['strategy']} | {r['median_s']} | {r['p90_s']} | {r['mean_tools']} | {r['ratio_to_first']} |" for r in rows]
    table = "\n".join(lines)
    print(table)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "strategy_time.md").write_text(table + "\n")
    (RESULTS / "strategy_time.json").write_text(json.dumps({"samples": len(samples), "dataset": args.dataset, "load": load, "rows": rows, "raw": times}, indent=2))


if __name__ == "__main__":
    main()
