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
    python benchmarks/strategies.py --dataset benchmarks/out/broad/dev --out benchmarks/out/runs/broad-dev \
        --strategies none,docintent --breakdown subset,family,condition,source --name broad_dev

``--breakdown`` adds score and consistency (WildDoc rules) per document type (``subset``) and per any
``Sample.meta`` field (the broad set records ``family``, ``condition`` and ``source``), with the clean-page
ceiling per type and family; ``--ceiling-on-run`` limits the ceiling to the questions a partial run holds.

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


def bench(dataset: Path, strategy: str, workers: int, out: Path, brain_opts: list[str] = ()) -> None:
    """``docintent bench`` of one strategy with the offline reader on a synthetic-format folder (resumable);
    ``brain_opts``: the reader's options, ``KEY=VALUE`` each."""
    sh(
        sys.executable,
        "-m",
        "docintent",
        "bench",
        "--dataset",
        f"synth:{dataset}",
        "--strategies",
        strategy,
        "--brain",
        "offline",
        "--workers",
        str(workers),
        "--no-progress",
        "--out",
        str(out),
        *[arg for opt in brain_opts for arg in ("--brain-opt", opt)],
    )


def clean_rows(dataset_dir: Path, groups: set[str] | None = None) -> list[dict]:
    """The offline reader on the clean render of every question (its capture 1 row, ``meta.clean_image``),
    restricted to ``groups`` when given: one row per question with its task, subset, family, document kind,
    question, gold answers and score."""
    from docintent.brains import State, get_brain
    from docintent.evaluation.datasets import load_dataset
    from docintent.evaluation.metrics import row_correct, score_row
    from docintent.io import load_page

    reader = get_brain("offline")
    rows = []
    for s in load_dataset(f"synth:{dataset_dir}"):
        if s.capture != 1 or (groups is not None and (s.group or s.id) not in groups):
            continue
        page = load_page(dataset_dir / s.meta["clean_image"])
        answer = reader.answer(State(s.question, s.task, page, original=page, available_tools=[]))
        score = score_row(s.task, s.subset, answer.text, list(s.answers))
        rows.append(
            {
                "group": s.group or s.id,
                "task": s.task,
                "subset": s.subset,
                "family": s.meta.get("family"),
                "kind": s.meta.get("doc_type"),
                "question": s.question,
                "answers": list(s.answers),
                "score": score,
                "correct": row_correct(s.task, score),
                "prediction": answer.text,
                "confidence": answer.confidence,
            }
        )
    return rows


def clean_ceiling(
    dataset_dir: Path, groups: set[str] | None = None, rows: list[dict] | None = None
) -> dict[str, float]:
    """Score of the offline reader on the clean render of every question (capture 1 rows, clean image)."""
    scores: dict[str, list[float]] = defaultdict(list)
    for r in rows if rows is not None else clean_rows(dataset_dir, groups):
        scores[r["task"]].append(r["score"])
    return {task: 100.0 * sum(v) / len(v) for task, v in scores.items()}


def mean_of(values: list[float]) -> float:
    return 100.0 * sum(values) / len(values) if values else 0.0


def breakdown(run_dir: Path, key: str, clean: list[dict] | None = None) -> dict[str, dict[str, dict]]:
    """Score and consistency (WildDoc rules: every row scored by its own task's metric; a question is
    consistent when all its captures are correct) per value of ``key`` and strategy. ``key`` is ``subset``
    or a ``Sample.meta`` field (``family``, ``condition``, ``source`` ...). For ``condition``, which differs
    between the captures of one question, consistency is left out and the share of correct rows given instead.
    With ``clean`` (rows of :func:`clean_rows`), the clean-page ceiling is added per value as ``clean``."""
    acc: dict[str, dict[str, list[dict]]] = defaultdict(lambda: defaultdict(list))
    for (_sid, strategy), r in last_rows(run_dir).items():
        sample = r["sample"]
        value = sample.get("subset") if key == "subset" else sample.get("meta", {}).get(key)
        if value is not None:
            acc[str(value)][strategy].append(r)
    out: dict[str, dict[str, dict]] = {}
    for value, per in acc.items():
        out[value] = {}
        for strategy, rows in per.items():
            entry = {"score": mean_of([float(r.get("score") or 0.0) for r in rows]), "rows": len(rows)}
            if key == "condition":
                entry["correct"] = mean_of([float(bool(r.get("correct"))) for r in rows])
            else:
                groups: dict[str, list[bool]] = defaultdict(list)
                for r in rows:
                    groups[r["sample"].get("group") or r["sample"]["id"]].append(bool(r.get("correct")))
                entry["consistency"] = mean_of([float(all(v)) for v in groups.values()])
                entry["questions"] = len(groups)
            out[value][strategy] = entry
        if clean is not None and key in ("subset", "family"):
            mine = [c["score"] for c in clean if str(c[key]) == value]
            if mine:
                out[value]["clean"] = {"score": mean_of(mine), "rows": len(mine)}
    return out


def breakdown_table(title: str, table: dict[str, dict[str, dict]]) -> list[str]:
    """A markdown table of :func:`breakdown` (score / consistency or score / correct per strategy)."""
    names = sorted({s for v in table.values() for s in v if s != "clean"})
    has_clean = any("clean" in v for v in table.values())
    second = "correct %" if any("correct" in e for v in table.values() for e in v.values()) else "cons."
    head = (
        "| "
        + title
        + (" | rows | " if second == "correct %" else " | questions | ")
        + " | ".join(f"{n} score | {n} {second}" for n in names)
    )
    head += " | clean score |" if has_clean else " |"
    lines = [head, "|---|---:|" + "---:|---:|" * len(names) + ("---:|" if has_clean else "")]
    for value, per in sorted(table.items()):
        n = max((e.get("questions") or e["rows"]) for s, e in per.items() if s != "clean")
        cells = []
        for name in names:
            e = per.get(name)
            cells += [f"{e['score']:.1f}", f"{e.get('consistency', e.get('correct', 0.0)):.1f}"] if e else ["—", "—"]
        clean = [f"{per['clean']['score']:.1f}" if "clean" in per else "—"] if has_clean else []
        lines.append(f"| {value} | {n} | " + " | ".join(cells + clean) + " |")
    return lines + [""]


def last_rows(run_dir: Path) -> dict[tuple[str, str], dict]:
    rows = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines() if line.strip()]
    return {(r["sample"]["id"], r["strategy"]): r for r in rows}


def merge_runs(run_dirs: list[Path], common: bool) -> Path:
    """One run directory holding the rows of ``run_dirs`` (the last row per sample and strategy); with ``common``
    only the samples every strategy finished, so the strategies are compared on the same samples."""
    rows: dict[tuple[str, str], dict] = {}
    for d in run_dirs:
        if (d / "results.jsonl").exists():
            rows.update(last_rows(d))
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
    for (_sid, strategy), r in last_rows(run_dir).items():
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
    return {
        "errors": dict(kinds),
        "errors_by_family": {k: dict(v) for k, v in per_family.items()},
        "tools_applied": dict(tools),
        "kept": dict(kept),
        "rolled_back": dict(rolled),
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(ROOT / "out" / "synth-s1-n60"))
    ap.add_argument("--n", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--strategies", default=ALL)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument(
        "--brain-opt",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="an option of the offline reader for the strategies' runs (repeatable; the clean-page ceiling keeps "
        "the defaults)",
    )
    ap.add_argument("--out", default=str(ROOT / "out" / "runs" / "strategies-s1-n60"))
    ap.add_argument("--skip-runs", action="store_true", help="only report on what the run directory holds")
    ap.add_argument(
        "--merge",
        default="",
        help="comma-separated run directories made in parallel (one per strategy) "
        "to report together with --out; implies --skip-runs",
    )
    ap.add_argument("--common", action="store_true", help="report only samples every strategy has finished")
    ap.add_argument("--name", default="strategies", help="base name of the result files (default: strategies)")
    ap.add_argument(
        "--breakdown",
        default="",
        help="comma-separated keys to break score and consistency down by: "
        "subset (the document type of the broad set) or a Sample.meta field (family, condition, source)",
    )
    ap.add_argument(
        "--ceiling-on-run",
        action="store_true",
        help="compute the clean-page ceiling only for the "
        "questions the run directory holds (for a run over part of a set)",
    )
    ap.add_argument("--clean-rows", action="store_true", help="keep the clean-page answers in the JSON result")
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
            bench(dataset, strategy, args.workers, out, args.brain_opt)
    report_dir = RESULTS / f"{args.name}_report"
    sh(*exe, "report", str(out), "--out", str(report_dir))
    analysis = error_analysis(out)
    run_groups = {r["sample"].get("group") or r["sample"]["id"] for r in last_rows(out).values()}
    clean = clean_rows(dataset, run_groups if args.ceiling_on_run else None)
    analysis["clean_ceiling"] = clean_ceiling(dataset, rows=clean)
    analysis["clean_questions"] = len(clean)
    # a defect the calibration must remove: a wrong answer on a clean page given with confidence >= 0.9
    analysis["clean_wrong_confident_pct"] = mean_of(
        [float(not c["correct"] and (c["confidence"] or 0.0) >= 0.9) for c in clean]
    )
    analysis["by_condition"] = by_condition(out)
    keys = [k for k in args.breakdown.split(",") if k]
    analysis["breakdowns"] = {k: breakdown(out, k, clean) for k in keys}
    if args.clean_rows:
        analysis["clean_rows"] = clean
    report = (report_dir / "report.md").read_text()
    table = report.split("## Failures")[0]
    lines = [
        table.strip(),
        "",
        "## Where docintent loses points",
        "",
        f"- docintent failures: {sum(analysis['errors'].values())} samples; decision errors (another strategy "
        f"got it right) {analysis['errors'].get('decision', 0)}, reading errors (no strategy did) "
        f"{analysis['errors'].get('reading', 0)}.",
        "- by family: " + "; ".join(f"{f}: {dict(v)}" for f, v in sorted(analysis["errors_by_family"].items())),
        "- tools docintent ran: " + ", ".join(f"{k} {v}" for k, v in sorted(analysis["tools_applied"].items())),
        "- kept: "
        + ", ".join(f"{k} {v}" for k, v in sorted(analysis["kept"].items()))
        + "; rolled back: "
        + ", ".join(f"{k} {v}" for k, v in sorted(analysis["rolled_back"].items())),
        f"- reader ceiling (the same {analysis['clean_questions']} questions on the clean renders, score %): "
        + ", ".join(f"{k} {v:.1f}" for k, v in sorted(analysis["clean_ceiling"].items()))
        + f"; wrong at confidence >= 0.9 on clean pages: {analysis['clean_wrong_confident_pct']:.1f} %",
        "",
    ]
    if analysis["by_condition"]:
        names = sorted({s for v in analysis["by_condition"].values() for s in v})
        lines += [
            "## Score by capture condition",
            "",
            "| condition | n | " + " | ".join(names) + " |",
            "|---|---:|" + "---:|" * len(names),
        ]
        for cond, scores in sorted(analysis["by_condition"].items()):
            n = max(v["n"] for v in scores.values())
            lines.append(
                f"| {cond} | {n} | "
                + " | ".join(f"{scores[s]['score']:.2f}" if s in scores else "—" for s in names)
                + " |"
            )
        lines.append("")
    titles = {
        "subset": "document type",
        "family": "question family",
        "condition": "capture condition",
        "source": "source",
    }
    for key, table in analysis["breakdowns"].items():
        lines += [f"## By {titles.get(key, key)}", ""] + breakdown_table(titles.get(key, key), table)
    text = "\n".join(lines)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(text + "\n")
    (RESULTS / f"{args.name}.json").write_text(json.dumps(analysis, indent=2))


if __name__ == "__main__":
    main()
