"""Same question, same answer: every strategy's rows compared across the conditions that must not change them.

Runs ``docintent bench`` (the offline reader, every strategy) on a held-out sample of a dataset under each
condition, then compares the rows keyed by (sample, strategy): the answer, the score, the answer's box (on the page as
given and on the page read), the work counters, and every trace decision (phase, action, tool, reason and the page
states before and after - everything but timings).

======================= ===============================================================================
``off``                 the reference: no OCR cache, strategies in the listed order, one worker
``cold``                a new, empty cache folder
``warm``                the same folder again (every page state's reading now comes from the cache)
``reversed``            the strategies in the reverse order, a new cache folder shared by them
``workers2``            two worker processes (each with half the threads)
``ray``                 the Ray executor (local cluster)
``shards``              two ``--shard i/2`` runs into one folder
======================= ===============================================================================

    python benchmarks/determinism.py --dataset benchmarks/out/realpages/test --questions 4 --name realpages_test
    python benchmarks/determinism.py --dataset benchmarks/out/synth-s6161 --questions 4 --name synth_s6161

Writes benchmarks/results/determinism_NAME.{md,json}. Each condition's run folder is kept under
benchmarks/out/runs/determinism/NAME/ and resumes when the script is run again.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
STRATEGIES = (
    "none",
    "pipeline-fixed",
    "pipeline-random",
    "judge-fixed",
    "judge-random",
    "prompt-only",
    "agres",
    "docintent",
    "mact",
    "docintent+mact",
)
CONDITIONS = ("off", "cold", "warm", "reversed", "workers2", "ray", "shards")
#: Step fields that measure time, not decisions.
TIMING = ("seconds",)


def pick(dataset: Path, questions: int, out: Path) -> Path:
    """A held-out sample: the first ``questions`` questions of every document kind's groups, all 4 captures."""
    rows = [json.loads(line) for line in (dataset / "samples.jsonl").read_text().splitlines() if line.strip()]
    groups: list[str] = []
    for row in rows:
        if row["group"] not in groups:
            groups.append(row["group"])
    step = max(1, len(groups) // questions)
    chosen = set(groups[::step][:questions])
    out.mkdir(parents=True, exist_ok=True)
    picked = out / "samples.jsonl"
    lines = []
    for row in rows:
        if row["group"] in chosen:
            row = dict(row)
            row["image"] = str((dataset / row["image"]).resolve())
            if "clean_image" in row.get("meta", {}):
                row["meta"] = {k: v for k, v in row["meta"].items() if k != "clean_image"}
            lines.append(json.dumps(row))
    picked.write_text("\n".join(lines) + "\n")
    return picked


def bench(
    samples: Path, out: Path, strategies: list[str], cache: Path | None, extra: list[str], tree: Path | None = None
) -> float:
    """Seconds ``docintent bench`` took on ``samples`` (``cache``: a cache folder, None: caching off); ``tree``: the
    source tree to run (default: the installed docintent)."""
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    if tree is not None:
        env["PYTHONPATH"] = str(tree / "src")
    if cache is None:
        env["DOCINTENT_CACHE"] = "0"
    else:
        env["DOCINTENT_CACHE"] = "1"
        env["DOCINTENT_CACHE_DIR"] = str(cache)
    cmd = [
        sys.executable,
        "-m",
        "docintent",
        "bench",
        "--dataset",
        f"jsonl:{samples}",
        "--allow-outside-paths",
        "--strategies",
        ",".join(strategies),
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tree)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} ({tree or 'installed'}) failed:\n{done.stderr[-3000:]}")
    return time.perf_counter() - t0


def rows_of(run: Path) -> dict[tuple[str, str], dict]:
    out = {}
    for line in (run / "results.jsonl").read_text().splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        out[(row["sample"]["id"], row["strategy"])] = row
    return out


def decisions(row: dict) -> dict:
    """What must be identical: the answer, score, error, the answer's box on the page as given and on the page
    read, work counters and every step without its timings."""
    trace = ((row.get("result") or {}).get("trace")) or []
    steps = []
    for step in trace:
        steps.append({k: v for k, v in step.items() if k not in TIMING})
    work = (row.get("result") or {}).get("work")
    return {
        "answer": row.get("answer"),
        "score": row.get("score"),
        "error": row.get("error"),
        "box": (row.get("result") or {}).get("box"),
        "read_box": ((row.get("result") or {}).get("provenance") or {}).get("read_box"),
        "work": work,
        "trace": steps,
    }


def first_difference(a: dict, b: dict) -> str:
    for key in ("answer", "score", "error", "box", "read_box", "work"):
        if a[key] != b[key]:
            return f"{key}: {a[key]!r} vs {b[key]!r}"
    for i, (x, y) in enumerate(zip(a["trace"], b["trace"])):
        if x != y:
            keys = [k for k in x if x.get(k) != y.get(k)]
            return f"step {i + 1} ({x.get('phase')} {x.get('action')} {x.get('tool')}): {keys[0]} {x.get(keys[0])!r} vs {y.get(keys[0])!r}"
    if len(a["trace"]) != len(b["trace"]):
        return f"{len(a['trace'])} vs {len(b['trace'])} steps"
    return ""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", required=True, help="a dataset folder with samples.jsonl (synth format)")
    ap.add_argument("--questions", type=int, default=4, help="questions picked (each with its 4 captures)")
    ap.add_argument("--name", required=True)
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--conditions", default=",".join(CONDITIONS))
    args = ap.parse_args()
    strategies = [s for s in args.strategies.split(",") if s]
    conditions = [c for c in args.conditions.split(",") if c]
    work = ROOT / "out" / "runs" / "determinism" / args.name
    samples = pick(Path(args.dataset), args.questions, work)
    # The caches live beside the runs so that a resumed run finds the cache its rows were read with.
    caches = work / "caches"
    seconds: dict[str, float] = {}
    for condition in conditions:
        out = work / condition
        if condition in ("cold", "warm"):
            cache: Path | None = caches / "shared"
        elif condition == "off":
            cache = None
        else:
            cache = caches / condition
        order = strategies[::-1] if condition == "reversed" else strategies
        extra = {"workers2": ["--workers", "2"], "ray": ["--executor", "ray", "--workers", "2"]}.get(condition, [])
        if condition == "warm" and not (caches / "shared").exists():
            raise SystemExit("the warm condition needs the cold one first (they share a cache folder)")
        if condition == "shards":
            seconds[condition] = sum(bench(samples, out, order, cache, ["--shard", f"{i}/2"]) for i in range(2))
        else:
            seconds[condition] = bench(samples, out, order, cache, extra)
        print(f"{condition}: {seconds[condition]:.0f} s", flush=True)
    reference = rows_of(work / conditions[0])
    table = []
    differences = []
    for condition in conditions:
        rows = rows_of(work / condition)
        same = sum(1 for key, row in reference.items() if key in rows and decisions(rows[key]) == decisions(row))
        missing = [k for k in reference if k not in rows]
        errors = sum(1 for row in rows.values() if row.get("error"))
        table.append(
            {
                "condition": condition,
                "rows": len(rows),
                "identical": same,
                "missing": len(missing),
                "error_rows": errors,
                "seconds": round(seconds.get(condition, 0.0), 1),
            }
        )
        for key, row in reference.items():
            if key in rows and decisions(rows[key]) != decisions(row):
                differences.append(
                    {
                        "condition": condition,
                        "sample": key[0],
                        "strategy": key[1],
                        "difference": first_difference(decisions(row), decisions(rows[key])),
                    }
                )
    by_strategy = {}
    for strategy in strategies:
        keys = [k for k in reference if k[1] == strategy]
        ok = all(
            decisions(rows_of(work / c)[k]) == decisions(reference[k])
            for c in conditions
            for k in keys
            if k in rows_of(work / c)
        )
        by_strategy[strategy] = {"rows": len(keys), "identical_everywhere": ok}
    load = os.getloadavg()[0]
    lines = [
        f"# Determinism: {args.name}",
        "",
        f"{len({k[0] for k in reference})} samples ({args.questions} questions x their captures) of "
        f"`{args.dataset}`, {len(strategies)} strategies, offline reader; reference: `{conditions[0]}`. "
        f"Load {load:.1f}.",
        "",
        "| condition | rows | identical to the reference | missing | error rows | seconds |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for t in table:
        share = 100 * t["identical"] / max(len(reference), 1)
        lines.append(
            f"| {t['condition']} | {t['rows']} | {t['identical']} ({share:.1f} %) | {t['missing']} | "
            f"{t['error_rows']} | {t['seconds']} |"
        )
    lines += ["", "| strategy | rows | identical under every condition |", "|---|---:|---|"]
    lines += [f"| {s} | {v['rows']} | {'yes' if v['identical_everywhere'] else 'no'} |" for s, v in by_strategy.items()]
    if differences:
        lines += ["", "## Differences", "", "| condition | sample | strategy | first difference |", "|---|---|---|---|"]
        lines += [f"| {d['condition']} | {d['sample']} | {d['strategy']} | {d['difference']} |" for d in differences]
    else:
        lines += ["", "No difference: every row is identical under every condition."]
    text = "\n".join(lines)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"determinism_{args.name}.md").write_text(text + "\n")
    (RESULTS / f"determinism_{args.name}.json").write_text(
        json.dumps({"conditions": table, "strategies": by_strategy, "differences": differences, "load": load}, indent=2)
    )


if __name__ == "__main__":
    main()
