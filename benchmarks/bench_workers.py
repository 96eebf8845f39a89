"""Throughput of ``docintent bench`` with 1 and 2 worker processes on the same small, CPU-bound run.

Each measurement is a fresh ``docintent bench`` process (as a user would start it) over the same samples,
with the OCR cache off so every sample really runs OCR and the offline reader. Samples are picked one per
capture image, so no two rows share a page. Repeats alternate the order (1 then 2, 2 then 1) so a change
in the machine's load does not favour one side; the median ratio is the headline figure.

    python benchmarks/bench_workers.py                  # 8 samples, 3 repeats, brain offline, strategy none
    python benchmarks/bench_workers.py --samples 4 --repeats 1

Prints the table and writes benchmarks/results/bench_workers.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def _load() -> tuple[float, float, float]:
    return os.getloadavg()


def _pick_samples(dataset: str, n: int, out: Path) -> Path:
    """Write the first ``n`` samples with distinct images (spread over the task families) as a JSONL."""
    from docintent.evaluation.datasets import load_dataset

    samples = load_dataset(dataset)
    by_family: dict[str, list] = {}
    seen: set[str] = set()
    for s in samples:
        if s.image not in seen:
            seen.add(s.image)
            by_family.setdefault(s.task, []).append(s)
    picked = []
    while len(picked) < n and any(by_family.values()):
        for family in list(by_family):
            if by_family[family] and len(picked) < n:
                picked.append(by_family[family].pop(0))
    path = out / "samples.jsonl"
    # absolute image paths: the JSONL lives in a scratch folder, so relative paths would point nowhere
    rows = [{**s.to_dict(), "image": str(Path(s.image).resolve())} for s in picked]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _run(samples: Path, workers: int, strategy: str, brain: str, scratch: Path, threads: int | None) -> dict:
    out = Path(tempfile.mkdtemp(prefix=f"w{workers}-", dir=scratch))
    env = {**os.environ, "DOCINTENT_CACHE": "0"}
    if threads:
        for name in ("DOCINTENT_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
            env[name] = str(threads)
    load_before = _load()[0]
    cpu0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "docintent",
            "bench",
            "--dataset",
            f"jsonl:{samples}",
            "--allow-outside-paths",
            "--strategies",
            strategy,
            "--brain",
            brain,
            "--workers",
            str(workers),
            "--no-progress",
            "--out",
            str(out),
        ],
        env=env,
        capture_output=True,
        text=True,
    )
    wall = time.perf_counter() - t0
    cpu1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (cpu1.ru_utime - cpu0.ru_utime) + (cpu1.ru_stime - cpu0.ru_stime)
    if proc.returncode != 0:
        raise SystemExit(f"docintent bench failed ({proc.returncode}):\n{proc.stderr}")
    failed = [
        json.loads(l)["error"]
        for l in (out / "results.jsonl").read_text().splitlines()
        if l.strip() and json.loads(l).get("error")
    ]
    if failed:
        raise SystemExit(f"{len(failed)} rows failed, so the timing means nothing; first error: {failed[0]}")
    manifest = json.loads((out / "manifest.json").read_text())
    session = manifest["sessions"][-1]
    rows = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if line.strip()]
    errors = sum(1 for r in rows if r.get("error"))
    return {
        "workers": workers,
        "rows": len(rows),
        "errors": errors,
        "run_seconds": session["seconds"],
        "process_seconds": round(wall, 3),
        "samples_per_second": len(rows) / session["seconds"],
        "load_before": load_before,
        "cpu_seconds_per_sample": cpu / max(1, len(rows)),
        "mean_score": statistics.fmean(float(r["score"]) for r in rows),
    }


def main() -> None:
    from docintent.evaluation.executors import usable_cores

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", help="dataset spec (default: a generated synthetic set, seed 0)")
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--strategy", default="none")
    parser.add_argument("--brain", default="offline")
    parser.add_argument(
        "--threads",
        type=int,
        default=None,
        help="inference threads per process for both sides (default: the runner's own share, "
        "i.e. all cores for 1 worker and cores/2 each for 2 workers)",
    )
    parser.add_argument("--tag", default="", help="suffix of the results file names")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="bench-workers-") as tmp:
        scratch = Path(tmp)
        dataset = args.dataset
        if dataset is None:
            from docintent.synth.generator import generate

            generate(scratch / "synth", n=max(1, args.samples // 3 + 1), seed=0, workers=1, contact_sheet=False)
            dataset = f"synth:{scratch / 'synth'}"
        samples = _pick_samples(dataset, args.samples, scratch)
        runs = []
        for repeat in range(args.repeats):
            order = (1, 2) if repeat % 2 == 0 else (2, 1)
            measured = {w: _run(samples, w, args.strategy, args.brain, scratch, args.threads) for w in order}
            ratio = measured[2]["samples_per_second"] / measured[1]["samples_per_second"]
            runs.append({"repeat": repeat + 1, "one": measured[1], "two": measured[2], "ratio": ratio})
            print(
                f"repeat {repeat + 1}: 1 worker {measured[1]['samples_per_second']:.3f}/s, "
                f"2 workers {measured[2]['samples_per_second']:.3f}/s, ratio {ratio:.2f}",
                file=sys.stderr,
            )

    median_ratio = statistics.median(r["ratio"] for r in runs)
    header = (
        "| repeat | 1 worker (samples/s) | 2 workers (samples/s) | ratio | CPU s / sample (1 / 2) "
        "| load before (1 / 2) |"
    )
    lines = [
        "# docintent bench: 1 vs 2 worker processes",
        "",
        f"Strategy `{args.strategy}`, brain `{args.brain}` (RapidOCR + offline reader on every sample, OCR cache "
        f"off), {args.samples} samples with distinct images, {usable_cores()} CPU cores, "
        f"Python {platform.python_version()}. Inference threads per process: "
        f"{args.threads or 'runner default (1 worker: library default; 2 workers: cores/2 each)'}. "
        "Samples/s = rows / run seconds (worker start-up included).",
        "",
        header,
        "|---:|---:|---:|---:|---|---|",
    ]
    for r in runs:
        lines.append(
            f"| {r['repeat']} | {r['one']['samples_per_second']:.3f} | {r['two']['samples_per_second']:.3f} "
            f"| {r['ratio']:.2f} | {r['one']['cpu_seconds_per_sample']:.1f} / {r['two']['cpu_seconds_per_sample']:.1f} "
            f"| {r['one']['load_before']:.2f} / {r['two']['load_before']:.2f} |"
        )
    lines += ["", f"**Median ratio (2 workers / 1 worker): {median_ratio:.2f}x** (target >= 1.7x)", ""]
    text = "\n".join(lines)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    name = "bench_workers" + (f"_{args.tag}" if args.tag else "")
    (RESULTS / f"{name}.md").write_text(text, encoding="utf-8")
    (RESULTS / f"{name}.json").write_text(
        json.dumps(
            {
                "strategy": args.strategy,
                "brain": args.brain,
                "samples": args.samples,
                "cpu_count": usable_cores(),
                "threads": args.threads,
                "runs": runs,
                "median_ratio": median_ratio,
            },
            indent=2,
        )
        + "\n",
        encoding="utf-8",
    )


if __name__ == "__main__":
    main()
