"""Seconds per sample of the ``none`` and ``docintent`` strategies with the offline reader at 2048 px, and the
answer quality of the same runs, in one table.

Samples are whole questions: one question per document with every capture of it, so consistency (all
captures of a question correct) is measured on the same rows as the times. Each capture is resized to a
2048-px longest side. OCR and signal caches are off, so each strategy pays for every read it makes (within one
sample the reader still reuses its own readings, as it does in real use). Strategies alternate order per
sample so machine-load drift does not favour either; the load average is sampled after every sample.

    python benchmarks/strategy_time.py --dataset synth:benchmarks/out/synth-s1-n12 --samples 36
    python benchmarks/strategy_time.py --dataset jsonl:PATH/samples.jsonl --samples 48 --label real

Prints the table and writes benchmarks/results/strategy_time[_<label>].{md,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ["DOCINTENT_CACHE"] = "0"  # before docintent reads its settings

RESULTS = Path(__file__).resolve().parent / "results"


def _datasets():
    try:
        from docintent.evaluation import datasets
    except ImportError:  # the layout before evaluation/ existed
        from docintent.bench import datasets  # type: ignore[no-redef]
    return datasets


def _metrics():
    try:
        from docintent.evaluation import metrics
    except ImportError:
        from docintent.bench import metrics  # type: ignore[no-redef]
    return metrics


def pick_samples(dataset: str, n: int) -> list[Any]:
    """About ``n`` samples: one question per page (``meta.page``, else ``meta.document``), all its captures,
    pages taken round-robin over task families (so a small ``n`` still covers doc, chart and table)."""
    samples = list(_datasets().load_dataset(dataset))
    groups: dict[str, list[Any]] = defaultdict(list)
    for s in samples:
        groups[s.group].append(s)
    by_document: dict[str, str] = {}
    for group, rows in groups.items():
        meta = rows[0].meta
        doc = str(meta.get("page") or meta.get("document") or rows[0].image.rsplit("-c", 1)[0])
        by_document.setdefault(doc, group)  # the first question of each page
    per_task: dict[str, list[str]] = defaultdict(list)
    for group in by_document.values():
        per_task[groups[group][0].task].append(group)
    chosen: list[Any] = []
    queues = [list(v) for _, v in sorted(per_task.items())]
    while len(chosen) < n and any(queues):
        for q in queues:
            if q and len(chosen) < n:
                chosen.extend(sorted(groups[q.pop(0)], key=lambda s: s.capture))
    return chosen


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="synth:benchmarks/out/synth-s1-n12")
    parser.add_argument("--samples", type=int, default=36)
    parser.add_argument("--strategies", default="none,docintent")
    parser.add_argument("--label", default="", help="results go to strategy_time_<label>.{md,json}")
    args = parser.parse_args()

    from docintent.brains import get_brain
    from docintent.io import load_page, resize_longest
    from docintent.perception import signals
    from docintent.strategies import get_strategy

    metrics = _metrics()
    samples = pick_samples(args.dataset, args.samples)
    names = args.strategies.split(",")
    brain = get_brain("offline")
    times: dict[str, list[float]] = {n: [] for n in names}
    cpu: dict[str, list[float]] = {n: [] for n in names}  # CPU seconds of every thread: what load cannot inflate
    tools: dict[str, list[int]] = {n: [] for n in names}
    rows: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    loads: list[float] = []
    # warm-up: model loading is a one-off start-up cost, not per-sample time
    warm = resize_longest(load_page(samples[0].image), 2048, upscale=True)
    get_strategy("none").run(warm, samples[0].question, samples[0].task, brain)
    started = time.time()
    for i, sample in enumerate(samples):
        page = resize_longest(load_page(sample.image), 2048, upscale=True)
        order = names if i % 2 == 0 else names[::-1]
        for name in order:
            if hasattr(signals, "clear_cache"):
                signals.clear_cache()
            t0, c0 = time.perf_counter(), time.process_time()
            result = get_strategy(name).run(page, sample.question, sample.task, brain)
            times[name].append(time.perf_counter() - t0)
            cpu[name].append(time.process_time() - c0)
            tools[name].append(result.tools_used)
            score = metrics.score_row(sample.task, sample.subset, result.answer, sample.answers)
            rows[name].append({"id": sample.id, "task": sample.task, "subset": sample.subset, "group": sample.group,
                               "answer": result.answer, "score": score, "seconds": times[name][-1],
                               "tools": result.tools_used, "error": result.error})
        loads.append(os.getloadavg()[0])
        print(f"{i + 1}/{len(samples)} load {loads[-1]:.1f} " + "  ".join(f"{n} {times[n][-1]:.2f}s" for n in names), flush=True)
        # after every sample, so a run cut short still leaves its figures (the header says how many)
        table = write(args, samples[: i + 1], names, times, cpu, tools, rows, loads, started, final=i + 1 == len(samples))
    print(table)


def write(args: argparse.Namespace, samples: list[Any], names: list[str], times: dict[str, list[float]],
          cpu: dict[str, list[float]], tools: dict[str, list[int]], rows: dict[str, list[dict[str, Any]]],
          loads: list[float], started: float, final: bool) -> str:
    """Write the table and the raw figures for the samples run so far; returns the table."""
    metrics = _metrics()
    table_rows = []
    base = statistics.median(times[names[0]])
    for name in names:
        med = statistics.median(times[name])
        summary = metrics.summarize(rows[name])
        table_rows.append({
            "strategy": name,
            "median_s": round(med, 3),
            "p90_s": round(sorted(times[name])[int(0.9 * (len(times[name]) - 1))], 3),
            "mean_tools": round(sum(tools[name]) / len(tools[name]), 2),
            "ratio_to_first": round(med / base, 2),
            "median_cpu_s": round(statistics.median(cpu[name]), 3),
            "score": round(summary.average_score, 2),
            "consistency": round(summary.average_consistency, 2),
            "errors": sum(1 for r in rows[name] if r["error"]),
        })
    ratios = [times[names[-1]][i] / times[names[0]][i] for i in range(len(samples))]
    questions = len({s.group for s in samples})
    lines = [
        ("" if final else "(partial run) ") +
        f"Seconds per sample at 2048 px, offline reader, caches off, {len(samples)} captures ({questions} questions x "
        f"their captures) from `{args.dataset}`; DOCINTENT_THREADS={os.environ.get('DOCINTENT_THREADS', 'unset')}; "
        f"1-minute load average during the run: median {statistics.median(loads):.1f} "
        f"(min {min(loads):.1f}, max {max(loads):.1f}); {time.time() - started:.0f} s in all.",
        "",
        f"| strategy | median s | p90 s | median CPU s | mean tools | median / {names[0]} | score | consistency | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ] + [
        f"| {r['strategy']} | {r['median_s']} | {r['p90_s']} | {r['median_cpu_s']} | {r['mean_tools']} | {r['ratio_to_first']} | "
        f"{r['score']} | {r['consistency']} | {r['errors']} |"
        for r in table_rows
    ]
    if len(names) > 1:
        cpu_ratios = [cpu[names[-1]][i] / max(cpu[names[0]][i], 1e-9) for i in range(len(samples))]
        lines += ["", f"Median of the per-sample ratio {names[-1]} / {names[0]} (same capture, same load): "
                      f"wall {statistics.median(ratios):.2f}, CPU {statistics.median(cpu_ratios):.2f}."]
    table = "\n".join(lines)
    RESULTS.mkdir(exist_ok=True)
    stem = "strategy_time" + (f"_{args.label}" if args.label else "")
    (RESULTS / f"{stem}.md").write_text(table + "\n")
    (RESULTS / f"{stem}.json").write_text(json.dumps(
        {"samples": len(samples), "dataset": args.dataset, "loads": loads, "rows": table_rows, "raw": times, "cpu": cpu,
         "answers": rows}, indent=1))
    return table


if __name__ == "__main__":
    main()
