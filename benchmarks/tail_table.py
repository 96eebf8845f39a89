"""The tail table: the slowest samples of two ``strategy_time.py`` runs (before and after a change), each with
where its time went and what it did, and the per-strategy figures of both runs side by side.

    python benchmarks/tail_table.py --before benchmarks/results/strategy_time_realpages_before.json \\
        --after benchmarks/results/strategy_time_realpages_after.json --label realpages

Slowness is ranked by CPU seconds (what the work costs; on a shared machine wall seconds are mostly the wait for
a core) and wall seconds are shown beside them. Both runs must hold the same samples: the after run's figures
are given for the before run's slowest samples too, so a fix shows on the sample it was for.

Writes benchmarks/results/tail_<label>.md.
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any

from strategy_time import causes, percentile

RESULTS = Path(__file__).resolve().parent / "results"


def load(path: str) -> dict[str, Any]:
    data = json.loads(Path(path).read_text())
    return {"data": data, "runs": {name: {r["id"]: r for r in rows} for name, rows in data["runs"].items()}}


def what_it_did(run: dict[str, Any]) -> str:
    """The tools a run used (in order) and its reading work, in short."""
    tools = [s.split(":")[2] for s in run.get("steps", []) if s.startswith("tool:") and s.split(":")[1] != "skipped"]
    reviews = sum(1 for s in run.get("steps", []) if s.startswith("B:"))
    work = run.get("work") or {}
    text = (" > ".join(tools) or "no tool") + (f"; {reviews} reviews" if reviews else "")
    if "detections" in work:
        text += f"; {work['detections']} detections, {work['lines_recognised']} lines recognised"
    return text


def slowest(runs: dict[str, dict[str, dict[str, Any]]], n: int) -> list[tuple[str, str]]:
    every = [(name, sid) for name, rows in runs.items() for sid in rows]
    return sorted(every, key=lambda key: -runs[key[0]][key[1]]["cpu"])[:n]


def figures(runs: dict[str, dict[str, dict[str, Any]]]) -> dict[str, dict[str, float]]:
    out = {}
    for name, rows in runs.items():
        cpu = [r["cpu"] for r in rows.values()]
        wall = [r["seconds"] for r in rows.values()]
        out[name] = {
            "cpu_p50": statistics.median(cpu),
            "cpu_p95": percentile(cpu, 0.95),
            "cpu_max": max(cpu),
            "wall_p50": statistics.median(wall),
            "wall_p95": percentile(wall, 0.95),
            "wall_max": max(wall),
            "score": 100 * statistics.mean(r["score"] for r in rows.values()),
        }
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True)
    ap.add_argument("--after", required=True)
    ap.add_argument("--label", required=True)
    ap.add_argument("--n", type=int, default=10)
    args = ap.parse_args()
    before, after = load(args.before), load(args.after)
    ids = {sid for rows in before["runs"].values() for sid in rows}
    if ids != {sid for rows in after["runs"].values() for sid in rows}:
        raise SystemExit("tail_table.py: the two runs hold different samples; compare runs of the same subset")
    loads = [f"{min(x['data']['loads']):.1f}-{max(x['data']['loads']):.1f}" for x in (before, after)]
    lines = [
        f"Tail of `{before['data']['dataset']}` ({before['data']['samples']} captures x "
        f"{len(before['runs'])} strategies), caches off, one ONNX thread; load average {loads[0]} before, "
        f"{loads[1]} after.",
        "",
    ]
    fb, fa = figures(before["runs"]), figures(after["runs"])
    lines += [
        "| strategy | CPU s p50 / p95 / max before | after | wall s p50 / p95 / max before | after | "
        "mean score before | after |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name in before["runs"]:
        b, a = fb[name], fa.get(name)
        if a is None:
            continue
        lines.append(
            f"| {name} | {b['cpu_p50']:.2f} / {b['cpu_p95']:.2f} / {b['cpu_max']:.2f} | "
            f"{a['cpu_p50']:.2f} / {a['cpu_p95']:.2f} / {a['cpu_max']:.2f} | "
            f"{b['wall_p50']:.1f} / {b['wall_p95']:.1f} / {b['wall_max']:.1f} | "
            f"{a['wall_p50']:.1f} / {a['wall_p95']:.1f} / {a['wall_max']:.1f} | {b['score']:.2f} | "
            f"{a['score']:.2f} |"
        )
    for title, source, other in (("before", before, after), ("after", after, before)):
        then = "after" if title == "before" else "before"
        lines += [
            "",
            f"The {args.n} slowest samples {title} (by CPU seconds), and the same sample {then}:",
            "",
            f"| strategy | sample | CPU s | wall s | load | where the time went | what it did | CPU s {then} | "
            f"what it did {then} |",
            "|---|---|---:|---:|---:|---|---|---:|---|",
        ]
        for name, sid in slowest(source["runs"], args.n):
            r, o = source["runs"][name][sid], other["runs"].get(name, {}).get(sid)
            then = f"{o['cpu']:.1f} | {what_it_did(o)}" if o else "- | -"
            lines.append(
                f"| {name} | {sid} | {r['cpu']:.1f} | {r['seconds']:.1f} | {r['load']:.1f} | "
                f"{causes(r['profile'], r['seconds'])} | {what_it_did(r)} | {then} |"
            )
    table = "\n".join(lines)
    print(table)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"tail_{args.label}.md").write_text(table + "\n")


if __name__ == "__main__":
    main()
