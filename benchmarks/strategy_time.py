"""Seconds per sample of every strategy with the offline reader at 2048 px, the answer quality of the same runs,
and where the time of the slowest samples went.

Samples are whole questions: one question per document with every capture of it, so consistency (all
captures of a question correct) is measured on the same rows as the times. Each capture is resized to a
2048-px longest side. OCR and signal caches are off, so each strategy pays for every read it makes (within one
sample the reader still reuses its own readings, as it does in real use). The strategies' order rotates from
sample to sample so machine-load drift favours none of them; the load average is sampled after every sample.

Every (sample, strategy) run is profiled as ``benchmarks/profile_ask.py`` does (detection, recognition,
orientation, signals, each tool, each review), and its work counters (``Result.work``) are kept, so the tail
table names the cause of each slow sample.

    python benchmarks/strategy_time.py --dataset synth:benchmarks/out/realpages/test --samples 68 --label realpages
    python benchmarks/strategy_time.py --dataset synth:benchmarks/out/synth-s6161-n12 --samples 48 --label s6161
    python benchmarks/strategy_time.py --strategies "none,docintent,docintent[review_rule=evidence]"

A strategy name may carry options of the offline brain in brackets (``;`` between them), to time one strategy
under two settings in the same run.

Prints the table and writes benchmarks/results/strategy_time[_<label>].{md,json}.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

os.environ["DOCINTENT_CACHE"] = "0"  # before docintent reads its settings

RESULTS = Path(__file__).resolve().parent / "results"
sys.path.insert(0, str(Path(__file__).resolve().parent))

#: Every strategy a user can pick that differs in the work it does (the random-order twins do the same work).
STRATEGIES = "none,pipeline-fixed,judge-fixed,agres,docintent,docintent+mact,mact"
#: Profile labels that contain others (a decision or a review holds its OCR): a cause is named by the innermost
#: steps, and the reviews that held them are named after.
OUTER = ("Phase A decide", "answer", "OCR read: full page", "OCR read: region")
REVIEW = "Phase B review: "


def brain_of(name: str, get_brain: Any) -> Any:
    """The offline brain for a strategy name, with the options its brackets give:
    ``docintent[review_rule=evidence]`` runs ``docintent`` with that brain option."""
    _, _, opts = name.partition("[")
    options = dict(kv.split("=", 1) for kv in opts.rstrip("]").split(";") if kv)
    return get_brain("offline", **options)


def pick_samples(dataset: str, n: int) -> list[Any]:
    """About ``n`` samples: one question per page (``meta.page``, else ``meta.document``), all its captures,
    pages taken round-robin over task families (so a small ``n`` still covers doc, chart and table)."""
    from docintent.evaluation import datasets

    samples = list(datasets.load_dataset(dataset))
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


def percentile(values: list[float], q: float) -> float:
    """The nearest-rank ``q`` quantile (the smallest value with at least ``q`` of the values at or below it)."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def causes(profile: dict[str, float], wall: float, top: int = 3) -> str:
    """Where ``wall`` seconds went: the ``top`` innermost profile steps (detection, recognition, orientation,
    signals, each tool) and what none of them covers (recognition when it was not timed, layout and answer
    reading), then the reviews that held part of it."""
    inner = {k: v for k, v in profile.items() if k not in OUTER and not k.startswith(REVIEW)}
    inner["other (reading, layout, answer)" if "recognition" in inner else "other (recognition, layout, answer)"] = max(
        0.0, wall - sum(inner.values())
    )
    parts = [f"{k} {v:.1f} s" for k, v in sorted(inner.items(), key=lambda kv: -kv[1])[:top] if v >= 0.05]
    reviews = [
        f"{k[len(REVIEW) :]} {v:.1f} s"
        for k, v in sorted(profile.items(), key=lambda kv: -kv[1])
        if k.startswith(REVIEW) and v >= 0.5
    ]
    return ", ".join(parts) + (f"; reviews: {', '.join(reviews)}" if reviews else "") or "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="synth:benchmarks/out/realpages/test")
    parser.add_argument("--samples", type=int, default=68)
    parser.add_argument("--strategies", default=STRATEGIES)
    parser.add_argument("--label", default="", help="results go to strategy_time_<label>.{md,json}")
    parser.add_argument("--no-profile", action="store_true", help="do not time the steps inside each run")
    parser.add_argument("--from-json", help="write the tables again from a saved run, its first --samples captures")
    args = parser.parse_args()
    if args.from_json:
        print(rewrite(args))
        return

    from docintent.brains import get_brain
    from docintent.errors import DocIntentError
    from docintent.evaluation import metrics
    from docintent.io import load_page, resize_longest
    from docintent.perception import signals
    from docintent.strategies import get_strategy
    from profile_ask import Profiler, instrument  # benchmarks/ is on sys.path

    try:
        samples = pick_samples(args.dataset, args.samples)
    except DocIntentError as err:
        raise SystemExit(f"strategy_time.py: {err}") from None
    names = args.strategies.split(",")
    brains = {name: brain_of(name, get_brain) for name in names}
    brain = get_brain("offline")
    prof = Profiler()
    # warm-up: model loading is a one-off start-up cost, not per-sample time
    warm = resize_longest(load_page(samples[0].image), 2048, upscale=True)
    get_strategy("none").run(warm, samples[0].question, samples[0].task, brain)
    if not args.no_profile:
        instrument(prof)
    runs: dict[str, list[dict[str, Any]]] = {n: [] for n in names}
    loads: list[float] = []
    started = time.time()
    for i, sample in enumerate(samples):
        page = resize_longest(load_page(sample.image), 2048, upscale=True)
        k = i % len(names)
        for name in names[k:] + names[:k]:
            signals.clear_cache()
            prof.reset()
            t0, c0 = time.perf_counter(), time.process_time()
            result = get_strategy(name.partition("[")[0]).run(page, sample.question, sample.task, brains[name])
            wall, cpu = time.perf_counter() - t0, time.process_time() - c0
            score = metrics.score_row(sample.task, sample.subset, result.answer, sample.answers)
            runs[name].append(
                {
                    "id": sample.id,
                    "task": sample.task,
                    "subset": sample.subset,
                    "group": sample.group,
                    "answer": result.answer,
                    "score": score,
                    "seconds": wall,
                    "cpu": cpu,
                    "tools": result.tools_used,
                    "error": result.error,
                    "load": os.getloadavg()[0],
                    "work": dict(getattr(result, "work", {}) or {}),
                    "profile": {k: round(v, 3) for k, v in prof.seconds.items()},
                    "steps": [f"{s.phase}:{s.action}:{s.tool or ''}:{s.seconds:.2f}" for s in result.trace],
                }
            )
        loads.append(os.getloadavg()[0])
        print(
            f"{i + 1}/{len(samples)} load {loads[-1]:.1f} "
            + "  ".join(f"{n} {runs[n][-1]['seconds']:.1f}s" for n in names),
            flush=True,
        )
        # after every sample, so a run cut short still leaves its figures (the header says how many)
        table = write(args, samples[: i + 1], names, runs, loads, started, final=i + 1 == len(samples))
    print(table)


def rewrite(args: argparse.Namespace) -> str:
    """The tables of a saved run (``--from-json``), cut to its first ``--samples`` captures: a run stopped part of
    the way, or a longer run compared on the subset of a shorter one."""
    from types import SimpleNamespace

    data = json.loads(Path(args.from_json).read_text())
    runs = {name: rows[: args.samples] for name, rows in data["runs"].items()}
    first = next(iter(runs.values()))
    samples = [SimpleNamespace(group=r["group"]) for r in first]
    args.dataset = data["dataset"]
    if data.get("threads"):
        os.environ["DOCINTENT_THREADS"] = data["threads"]
    return write(args, samples, list(runs), runs, data["loads"][: len(samples)], None, final=True)


def write(
    args: argparse.Namespace,
    samples: list[Any],
    names: list[str],
    runs: dict[str, list[dict[str, Any]]],
    loads: list[float],
    started: float | None,
    final: bool,
) -> str:
    """Write the tables and the raw figures for the samples run so far; returns the tables."""
    from docintent.evaluation import metrics

    table_rows = []
    base = statistics.median(r["seconds"] for r in runs[names[0]])
    for name in names:
        secs = [r["seconds"] for r in runs[name]]
        summary = metrics.summarize(runs[name])
        table_rows.append(
            {
                "strategy": name,
                "median_s": round(statistics.median(secs), 3),
                "p95_s": round(percentile(secs, 0.95), 3),
                "max_s": round(max(secs), 3),
                "median_cpu_s": round(statistics.median(r["cpu"] for r in runs[name]), 3),
                "p95_cpu_s": round(percentile([r["cpu"] for r in runs[name]], 0.95), 3),
                "max_cpu_s": round(max(r["cpu"] for r in runs[name]), 3),
                "mean_tools": round(sum(r["tools"] for r in runs[name]) / len(secs), 2),
                "ratio_to_first": round(statistics.median(secs) / base, 2),
                "score": round(summary.average_score, 2),
                "consistency": round(summary.average_consistency, 2),
                "errors": sum(1 for r in runs[name] if r["error"]),
            }
        )
    questions = len({s.group for s in samples})
    lines = [
        ("" if final else "(partial run) ")
        + f"Seconds per sample at 2048 px, offline reader, caches off, {len(samples)} captures ({questions} questions x "
        f"their captures) from `{args.dataset}`; DOCINTENT_THREADS={os.environ.get('DOCINTENT_THREADS', 'unset')}; "
        f"1-minute load average during the run: median {statistics.median(loads):.1f} "
        f"(min {min(loads):.1f}, max {max(loads):.1f})"
        + (f"; {time.time() - started:.0f} s in all." if started else "."),
        "",
        f"| strategy | median s | p95 s | max s | median CPU s | p95 CPU s | max CPU s | mean tools | median / {names[0]} "
        "| score | consistency | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ] + [
        f"| {r['strategy']} | {r['median_s']} | {r['p95_s']} | {r['max_s']} | {r['median_cpu_s']} | {r['p95_cpu_s']} | "
        f"{r['max_cpu_s']} | {r['mean_tools']} | {r['ratio_to_first']} | {r['score']} | {r['consistency']} | "
        f"{r['errors']} |"
        for r in table_rows
    ]
    if "none" in names and "docintent" in names:
        pairs = list(zip(runs["none"], runs["docintent"]))
        wall = statistics.median(d["seconds"] / n["seconds"] for n, d in pairs)
        cpu = statistics.median(d["cpu"] / max(n["cpu"], 1e-9) for n, d in pairs)
        lines += [
            "",
            f"Median of the per-sample ratio docintent / none (same capture, same load): wall {wall:.2f}, "
            f"CPU {cpu:.2f}.",
        ]
    every = sorted(((name, r) for name in names for r in runs[name]), key=lambda nr: -nr[1]["seconds"])
    lines += [
        "",
        "The 10 slowest samples (any strategy), with where their time went:",
        "",
        "| strategy | sample | s | CPU s | load | tools | where the time went |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    lines += [
        f"| {name} | {r['id']} | {r['seconds']:.1f} | {r['cpu']:.1f} | {r['load']:.1f} | {r['tools']} | "
        f"{causes(r['profile'], r['seconds'])} |"
        for name, r in every[:10]
    ]
    lines += [
        "",
        "The slowest 5 % per strategy:",
        "",
        "| strategy | sample | s | CPU s | where the time went |",
        "|---|---|---:|---:|---|",
    ]
    for name in names:
        slow = sorted(runs[name], key=lambda r: -r["seconds"])[: max(1, math.ceil(0.05 * len(runs[name])))]
        lines += [
            f"| {name} | {r['id']} | {r['seconds']:.1f} | {r['cpu']:.1f} | {causes(r['profile'], r['seconds'])} |"
            for r in slow
        ]
    table = "\n".join(lines)
    RESULTS.mkdir(exist_ok=True)
    stem = "strategy_time" + (f"_{args.label}" if args.label else "")
    (RESULTS / f"{stem}.md").write_text(table + "\n")
    (RESULTS / f"{stem}.json").write_text(
        json.dumps(
            {
                "samples": len(samples),
                "dataset": args.dataset,
                "threads": os.environ.get("DOCINTENT_THREADS", ""),
                "loads": loads,
                "rows": table_rows,
                "runs": runs,
            },
            indent=1,
        )
    )
    return table


if __name__ == "__main__":
    main()
