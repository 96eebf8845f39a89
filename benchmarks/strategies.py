"""Every strategy with the offline reader on the synthetic wild-document benchmark (DocIntent's Table 2).

Generates the set if it is missing (seed 1, 60 questions per family x 4 captures), runs each strategy with
``docintent bench`` (resumable: re-running continues where it stopped), writes the report with
``docintent report`` and adds an analysis of where docintent loses points:

- per family and per recorded degradation (from the report);
- decision errors vs reading errors: a docintent failure is a *decision* error when another strategy
  answered the same sample correctly (a different restoration choice would have worked), a *reading* error
  when none did; and the reader's ceiling: the same questions asked on the clean renders.

    python benchmarks/strategies.py                       # all strategies, 2 workers
    python benchmarks/strategies.py --strategies none,docintent --workers 1

Writes benchmarks/results/strategies.md and .json, and the HTML report under benchmarks/results/strategies_report/.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
ALL = "none,docintent,judge-fixed,pipeline-fixed,agres,prompt-only,judge-random,pipeline-random"


def sh(*args: str) -> None:
    print("+", " ".join(args), flush=True)
    subprocess.run(args, check=True)


def clean_ceiling(dataset_dir: Path) -> dict[str, float]:
    """Score of the offline reader on the clean render of every question (capture 1 rows, clean image)."""
    from docintent.brains import State, get_brain
    from docintent.evaluation.datasets import load_dataset
    from docintent.evaluation.metrics import score_row
    from docintent.io import load_page

    reader = get_brain("offline")
    scores: dict[str, list[float]] = defaultdict(list)
    for s in load_dataset(f"synth:{dataset_dir}"):
        if s.capture != 1:
            continue
        page = load_page(dataset_dir / s.meta["clean_image"])
        answer = reader.answer(State(s.question, s.task, page, page, []))
        scores[s.task].append(score_row(s.task, s.subset, answer.text, list(s.answers)))
    return {task: 100.0 * sum(v) / len(v) for task, v in scores.items()}


def _last_rows(run_dir: Path) -> dict[tuple[str, str], dict]:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]
    return {(r["sample"]["id"], r["strategy"]): r for r in rows}


def merge_runs(run_dirs: list[Path], common: bool) -> Path:
    """One run directory holding the rows of ``run_dirs`` (the last row per sample and strategy); with ``common``
    only the samples every strategy finished, so the strategies are compared on the same samples."""
    rows: dict[tuple[str, str], dict] = {}
    for d in run_dirs:
        if (d / "results.jsonl").exists():
            rows.update(_last_rows(d))
    strategies = {s for _, s in rows}
    if common:
        done: dict[str, set[str]] = defaultdict(set)
        for sid, strategy in rows:
            done[sid].add(strategy)
        rows = {k: v for k, v in rows.items() if done[k[0]] == strategies}
    merged = run_dirs[0].parent / (run_dirs[0].name + ("-common" if common else "-merged"))
    merged.mkdir(parents=True, exist_ok=True)
    manifest = next((d / "manifest.json" for d in run_dirs if (d / "manifest.json").exists()), None)
    if manifest is not None:
        (merged / "manifest.json").write_text(manifest.read_text())
    with open(merged / "results.jsonl", "w") as f:
        for row in rows.values():
            f.write(json.dumps(row) + "\n")
    print(f"merged {len(rows)} rows of {len(strategies)} strategies into {merged}", flush=True)
    return merged


def by_condition(run_dir: Path) -> dict[str, dict[str, dict[str, float]]]:
    """Mean score (percent) per capture condition (``Sample.meta['condition']``) and strategy; empty when the
    samples record no condition (the synthetic sets draw a mix per capture)."""
    acc: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for (_sid, strategy), r in _last_rows(run_dir).items():
        cond = r["sample"].get("meta", {}).get("condition")
        if cond:
            acc[cond][strategy].append(float(r.get("score") or 0.0))
    return {c: {s: {"score": 100.0 * sum(v) / len(v), "n": len(v)} for s, v in per.items()} for c, per in acc.items()}


def error_analysis(run_dir: Path) -> dict:
    rows = [json.loads(l) for l in (run_dir / "results.jsonl").read_text().splitlines() if l.strip()]
    last = {(r["sample"]["id"], r["strategy"]): r for r in rows}
    by_sample: dict[str, dict[str, dict]] = defaultdict(dict)
    for (sid, strategy), r in last.items():
        by_sample[sid][strategy] = r
    kinds: Counter = Counter()
    per_family: dict[str, Counter] = defaultdict(Counter)
    for strategies in by_sample.values():
        mine = strategies.get("docintent")
        if mine is None or mine["correct"]:
            continue
        family = mine["sample"]["task"]
        others = [s for s, r in strategies.items() if s != "docintent" and r["correct"]]
        kind = "decision" if others else "reading"
        kinds[kind] += 1
        per_family[family][kind] += 1
    tools: Counter = Counter()
    kept: Counter = Counter()
    rolled: Counter = Counter()
    for (_sid, strategy), r in last.items():
        if strategy != "docintent" or not r.get("result"):
            continue
        for step in r["result"]["trace"]:
            if step["phase"] == "tool" and step["action"] == "applied":
                tools[step["tool"]] += 1
            if step["phase"] == "B":
                (kept if step["action"] == "keep" else rolled)[step["tool"]] += 1
    return {"errors": dict(kinds), "errors_by_family": {k: dict(v) for k, v in per_family.items()},
            "tools_applied": dict(tools), "kept": dict(kept), "rolled_back": dict(rolled)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(ROOT / "out" / "synth-s1-n60"))
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--strategies", default=ALL)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--out", default=str(ROOT / "out" / "runs" / "strategies-s1-n60"))
    ap.add_argument("--skip-runs", action="store_true", help="only report on what the run directory holds")
    ap.add_argument("--merge", default="", help="comma-separated run directories made in parallel (one per strategy) "
                    "to report together with --out; implies --skip-runs")
    ap.add_argument("--common", action="store_true", help="report only samples every strategy has finished")
    ap.add_argument("--name", default="strategies", help="base name of the result files (default: strategies)")
    args = ap.parse_args()
    dataset, out = Path(args.dataset), Path(args.out)
    if args.merge or args.common:
        out = merge_runs([out] + [Path(p) for p in args.merge.split(",") if p], args.common)
        args.skip_runs = True
    exe = [sys.executable, "-m", "docintent"]
    if not (dataset / "samples.jsonl").exists():
        sh(*exe, "synth", "--out", str(dataset), "--n", str(args.n), "--seed", str(args.seed))
    if not args.skip_runs:
        for strategy in args.strategies.split(","):
            sh(*exe, "bench", "--dataset", f"synth:{dataset}", "--strategies", strategy, "--brain", "offline",
               "--workers", str(args.workers), "--no-progress", "--out", str(out))
    report_dir = RESULTS / f"{args.name}_report"
    sh(*exe, "report", str(out), "--out", str(report_dir))
    analysis = error_analysis(out)
    analysis["clean_ceiling"] = clean_ceiling(dataset)
    analysis["by_condition"] = by_condition(out)
    report = (report_dir / "report.md").read_text()
    table = report.split("## Failures")[0]
    lines = [table.strip(), "", "## Where docintent loses points", "",
             f"- docintent failures: {sum(analysis['errors'].values())} samples; decision errors (another strategy "
             f"got it right) {analysis['errors'].get('decision', 0)}, reading errors (no strategy did) "
             f"{analysis['errors'].get('reading', 0)}.",
             "- by family: " + "; ".join(f"{f}: {dict(v)}" for f, v in sorted(analysis["errors_by_family"].items())),
             "- tools docintent ran: " + ", ".join(f"{k} {v}" for k, v in sorted(analysis["tools_applied"].items())),
             "- kept: " + ", ".join(f"{k} {v}" for k, v in sorted(analysis["kept"].items()))
             + "; rolled back: " + ", ".join(f"{k} {v}" for k, v in sorted(analysis["rolled_back"].items())),
             "- reader ceiling (same questions on the clean renders, score %): "
             + ", ".join(f"{k} {v:.1f}" for k, v in sorted(analysis["clean_ceiling"].items())), ""]
    if analysis["by_condition"]:
        names = sorted({s for v in analysis["by_condition"].values() for s in v})
        lines += ["## Score by capture condition", "", "| condition | n | " + " | ".join(names) + " |",
                  "|---|---:|" + "---:|" * len(names)]
        for cond, scores in sorted(analysis["by_condition"].items()):
            n = max(v["n"] for v in scores.values())
            lines.append(f"| {cond} | {n} | " + " | ".join(f"{scores[s]['score']:.2f}" if s in scores else "—" for s in names) + " |")
        lines.append("")
    text = "\n".join(lines)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(text + "\n")
    (RESULTS / f"{args.name}.json").write_text(json.dumps(analysis, indent=2))


if __name__ == "__main__":
    main()
