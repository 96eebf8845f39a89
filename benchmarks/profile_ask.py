"""Where the seconds of one ``ask`` go: model load, detection, recognition, orientation, signals, each tool,
each review, on real-like captures at 2048 px with every cache off.

    python benchmarks/profile_ask.py --dataset synth:benchmarks/out/synth-s1-n12 --samples 24 --label before

Each sample is one capture resized to a 2048-px longest side and answered by ``--strategy`` (default
``docintent``) with the offline reader, as ``docintent ask`` would. The script wraps the functions that do the
work (the detection and recognition networks, the orientation classifier, signal measurement, every
restoration tool, the brain's decide / review / answer) with timers; the times of the inner steps are included
in the outer ones (a review's OCR counts in "recognition" and in "Phase B review"). Model loading is timed once,
before the first sample, since a process pays it once.

Prints the table and writes ``benchmarks/results/profile_ask_<label>.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

os.environ["DOCINTENT_CACHE"] = "0"  # before docintent reads its settings

RESULTS = Path(__file__).resolve().parent / "results"
sys.path.insert(0, str(Path(__file__).resolve().parent))


class Profiler:
    """Inclusive seconds and call counts per label, for the sample being run."""

    def __init__(self) -> None:
        self.seconds: dict[str, float] = defaultdict(float)
        self.calls: dict[str, int] = defaultdict(int)
        self.counts: dict[str, int] = defaultdict(int)  # things counted inside a call (lines recognised)

    def reset(self) -> None:
        self.seconds.clear()
        self.calls.clear()
        self.counts.clear()

    def timed(self, label: str | Callable[..., str], fn: Callable[..., Any]) -> Callable[..., Any]:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            name = label(*args, **kwargs) if callable(label) else label
            t0 = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                self.seconds[name] += time.perf_counter() - t0
                self.calls[name] += 1

        wrapper.__wrapped__ = fn  # type: ignore[attr-defined]
        return wrapper

    def patch_method(self, cls: type, attr: str, label: str | Callable[..., str]) -> None:
        setattr(cls, attr, self.timed(label, getattr(cls, attr)))

    def patch_function(self, module_name: str, attr: str, label: str) -> None:
        """Replace a function everywhere it was imported by name (``from x import f`` makes copies)."""
        module = sys.modules.get(module_name) or __import__(module_name, fromlist=[attr])
        original = getattr(module, attr)
        wrapped = self.timed(label, original)
        for mod in list(sys.modules.values()):
            if mod is None or not getattr(mod, "__name__", "").startswith(("docintent", module_name)):
                continue
            for name, value in list(vars(mod).items()):
                if value is original:
                    setattr(mod, name, wrapped)


def instrument(prof: Profiler) -> None:
    """Wrap the steps of ``ask`` with timers."""
    from rapidocr.ch_ppocr_det import TextDetector
    from rapidocr.ch_ppocr_rec import TextRecognizer

    import docintent.brains.offline as offline
    import docintent.ocr as ocr
    from docintent.tools import list_tools

    prof.patch_method(TextDetector, "__call__", "detection")
    original_rec = TextRecognizer.__call__

    def rec_call(self: Any, args: Any) -> Any:
        imgs = args.img if isinstance(args.img, list) else [args.img]
        prof.counts["lines recognised"] += len(imgs)
        return original_rec(self, args)

    TextRecognizer.__call__ = prof.timed("recognition", rec_call)  # type: ignore[method-assign]
    # The engine recognises each line crop alone through the network's session, not TextRecognizer.__call__.
    original_lines = ocr.RapidOcrEngine.recognize_lines

    def lines_call(self: Any, crops: Any, quads: Any) -> Any:
        prof.counts["lines recognised"] += len(crops)
        return original_lines(self, crops, quads)

    ocr.RapidOcrEngine.recognize_lines = prof.timed("recognition", lines_call)  # type: ignore[method-assign]
    try:
        from rapidocr import RapidOCR

        prof.patch_method(RapidOCR, "calc_word_boxes", "word boxes")
    except (ImportError, AttributeError):
        pass

    def read_label(self: Any, page: Any, region: Any = None, **kw: Any) -> str:
        return "OCR read: full page" if region is None else "OCR read: region"

    base_cls = ocr.OcrEngine
    prof.patch_method(base_cls, "read", read_label)
    prof.patch_function(ocr.detect_orientation.__module__, "detect_orientation", "orientation")
    prof.patch_function("docintent.perception.signals", "measure", "signals")
    for tool in list_tools():
        if tool.degradation == "inspection":
            continue
        cls = type(tool)
        if "apply" in vars(cls) and not hasattr(vars(cls)["apply"], "__wrapped__"):
            prof.patch_method(cls, "apply", lambda self, *a, **k: f"tool: {self.name}")
    reader = offline.OfflineReader
    prof.patch_method(reader, "decide", "Phase A decide")
    prof.patch_method(reader, "answer", "answer")

    def review_label(self: Any, state: Any, change: Any) -> str:
        return f"Phase B review: {change.tool}"

    prof.patch_method(reader, "review", review_label)


def model_load_seconds() -> dict[str, float]:
    """Seconds to load each model once (what the first ``ask`` of a process pays on top)."""
    import numpy as np

    from docintent.ocr import detect_orientation, get_engine
    from docintent.page import Page

    out = {}
    engine = get_engine()
    t0 = time.perf_counter()
    rapid = engine.load()
    rapid._load_det_model()
    out["model load: detection"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    rapid._load_rec_model()
    out["model load: recognition"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    detect_orientation(Page.from_array(np.full((300, 300, 3), 255, np.uint8)))
    out["model load: orientation"] = time.perf_counter() - t0
    return out


ORDER = [
    "detection",
    "recognition",
    "word boxes",
    "OCR read: full page",
    "OCR read: region",
    "orientation",
    "signals",
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="synth:benchmarks/out/synth-s1-n12")
    parser.add_argument("--samples", type=int, default=24)
    parser.add_argument("--strategy", default="docintent")
    parser.add_argument("--label", default="current", help="results go to profile_ask_<label>.{md,json}")
    args = parser.parse_args()

    from docintent.brains import get_brain
    from docintent.io import load_page, resize_longest
    from docintent.perception import signals
    from docintent.strategies import get_strategy
    from strategy_time import pick_samples  # benchmarks/ is on sys.path

    samples = pick_samples(args.dataset, args.samples)
    prof = Profiler()
    loads = model_load_seconds()
    instrument(prof)
    brain = get_brain("offline")
    strategy = get_strategy(args.strategy)
    per_sample: list[dict[str, Any]] = []
    for i, sample in enumerate(samples):
        page = resize_longest(load_page(sample.image), 2048, upscale=True)
        if hasattr(signals, "clear_cache"):
            signals.clear_cache()
        prof.reset()
        t0, c0 = time.perf_counter(), time.process_time()
        result = strategy.run(page, sample.question, sample.task, brain)
        wall = time.perf_counter() - t0
        per_sample.append(
            {
                "sample": sample.id,
                "wall": wall,
                "cpu": time.process_time() - c0,
                "seconds": dict(prof.seconds),
                "calls": dict(prof.calls),
                "counts": dict(prof.counts),
                "tools": [str(s.tool) for s in result.trace if str(getattr(s.phase, "value", s.phase)) == "tool"],
            }
        )
        print(
            f"{i + 1}/{len(samples)} {wall:.2f}s " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(prof.seconds.items())),
            flush=True,
        )

    n = len(per_sample)
    labels = sorted(
        {k for s in per_sample for k in s["seconds"]}, key=lambda k: (ORDER.index(k) if k in ORDER else len(ORDER), k)
    )
    total_wall = sum(s["wall"] for s in per_sample)
    rows = []
    for label in labels:
        secs = [s["seconds"].get(label, 0.0) for s in per_sample]
        calls = [s["calls"].get(label, 0) for s in per_sample]
        per_call = [s["seconds"][label] / s["calls"][label] for s in per_sample if s["calls"].get(label)]
        rows.append(
            {
                "step": label,
                "samples_with_it": sum(1 for c in calls if c),
                "calls_per_sample": round(sum(calls) / n, 2),
                "mean_s_per_sample": round(sum(secs) / n, 3),
                "median_s_per_call": round(statistics.median(per_call), 3) if per_call else 0.0,
                "share_of_wall": round(sum(secs) / total_wall, 3),
            }
        )
    walls = [s["wall"] for s in per_sample]
    lines_rec = [s["counts"].get("lines recognised", 0) for s in per_sample]
    load = os.getloadavg()
    md = [
        f"`{args.strategy}` with the offline reader on {n} captures from `{args.dataset}` at 2048 px, caches off; "
        f"label `{args.label}`; load average at the end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}; "
        f"DOCINTENT_THREADS={os.environ.get('DOCINTENT_THREADS', 'unset')}.",
        "",
        f"Wall per sample: median {statistics.median(walls):.2f} s, mean {statistics.mean(walls):.2f} s; CPU seconds "
        f"(all threads) per sample: median {statistics.median(s['cpu'] for s in per_sample):.2f}; "
        f"lines recognised per sample: median {statistics.median(lines_rec):.0f}, mean {statistics.mean(lines_rec):.0f}.",
        "",
        "| step | samples with it | calls / sample | mean s / sample | median s / call | share of wall |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for label, secs in loads.items():
        md.append(f"| {label} (once per process) | - | - | - | {secs:.3f} | - |")
    for r in rows:
        md.append(
            f"| {r['step']} | {r['samples_with_it']} | {r['calls_per_sample']} | {r['mean_s_per_sample']} | "
            f"{r['median_s_per_call']} | {100 * r['share_of_wall']:.1f} % |"
        )
    table = "\n".join(md)
    print(table)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"profile_ask_{args.label}.md").write_text(table + "\n")
    (RESULTS / f"profile_ask_{args.label}.json").write_text(
        json.dumps(
            {
                "dataset": args.dataset,
                "strategy": args.strategy,
                "load": load,
                "model_load": loads,
                "rows": rows,
                "samples": per_sample,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
