"""Behaviour unchanged where nothing was meant to change: the same rows from two versions of the code.

Runs ``docintent bench`` on one held-out sample with two source trees - ``--before`` (a checkout of an earlier
commit) and this one - and compares every (sample, strategy) row: the answer, the score and every trace decision
(phase, action, tool, the page states before and after). Reasons are compared too unless ``--decisions-only``
(a change that rewords the trace, not the decisions, then still counts as unchanged). Options given with
``--after-brain-opt`` select, in this tree, the behaviour the earlier tree had (e.g. ``review_rule=evidence-fixed``
for the review rule before the noise floors).

    git worktree add --detach /tmp/before d39055d
    python benchmarks/equivalence.py --before /tmp/before --dataset benchmarks/out/realpages/test --questions 4 \\
        --name realpages_test --after-brain-opt review_rule=evidence-fixed --decisions-only

Writes benchmarks/results/equivalence_NAME.{md,json}. Resumable: each side is a ``docintent bench`` run folder under
benchmarks/out/runs/equivalence/NAME/, so a second call reuses the rows already there (``--fresh-after`` drops the
after side's rows first, for a tree that changed since); ``--side before`` runs only the earlier tree.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))
from determinism import STRATEGIES, bench, first_difference, pick, rows_of  # noqa: E402  (the benchmark beside this one)

RESULTS = ROOT / "results"


def run(tree: Path, samples: Path, out: Path, strategies: list[str], brain_opts: list[str]) -> float:
    """One side: ``docintent bench`` from ``tree``'s sources, caching off."""
    return bench(samples, out, strategies, None, [arg for opt in brain_opts for arg in ("--brain-opt", opt)], tree)


def decisions(row: dict, with_reasons: bool) -> dict:
    keys = ("phase", "action", "tool", "before", "after") + (("reason",) if with_reasons else ())
    trace = ((row.get("result") or {}).get("trace")) or []
    return {
        "answer": row.get("answer"),
        "score": row.get("score"),
        "error": row.get("error"),
        "trace": [{k: step.get(k) for k in keys} for step in trace],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", required=True, help="a checkout of the earlier code")
    ap.add_argument("--dataset", required=True)
    ap.add_argument("--questions", type=int, default=4)
    ap.add_argument("--name", required=True)
    ap.add_argument("--strategies", default=",".join(STRATEGIES))
    ap.add_argument("--after-brain-opt", action="append", default=[])
    ap.add_argument("--decisions-only", action="store_true", help="compare decisions, not the reasons' wording")
    ap.add_argument("--side", choices=("before", "both"), default="both", help="before: run only the earlier tree")
    ap.add_argument("--fresh-after", action="store_true", help="drop the after side's rows before running it")
    args = ap.parse_args()
    strategies = [s for s in args.strategies.split(",") if s]
    work = ROOT / "out" / "runs" / "equivalence" / args.name
    samples = pick(Path(args.dataset), args.questions, work)
    seconds = {"before": run(Path(args.before).resolve(), samples, work / "before", strategies, [])}
    if args.side == "before":
        print(f"before: {seconds['before']:.0f} s, rows in {work / 'before'}")
        return
    if args.fresh_after:
        shutil.rmtree(work / "after", ignore_errors=True)
    seconds["after"] = run(ROOT.parent, samples, work / "after", strategies, args.after_brain_opt)
    before, after = rows_of(work / "before"), rows_of(work / "after")
    reasons = not args.decisions_only
    same = [k for k in before if k in after and decisions(before[k], reasons) == decisions(after[k], reasons)]
    differences = [
        {
            "sample": k[0],
            "strategy": k[1],
            "difference": first_difference(decisions(before[k], reasons), decisions(after[k], reasons)),
        }
        for k in before
        if k in after and k not in same
    ]
    load = os.getloadavg()[0]
    lines = [
        f"# Behaviour before and after: {args.name}",
        "",
        f"{len({k[0] for k in before})} samples of `{args.dataset}`, {len(strategies)} strategies; before: "
        f"`{args.before}`, after: this tree with {args.after_brain_opt or 'no options'}; compared: answers, "
        f"scores and every step's {'decisions' if args.decisions_only else 'decisions and reasons'}. "
        f"Load {load:.1f}.",
        "",
        f"Identical rows: {len(same)} of {len(before)} ({100 * len(same) / max(len(before), 1):.1f} %); "
        f"missing after: {sum(1 for k in before if k not in after)}.",
        "",
    ]
    if differences:
        lines += ["| sample | strategy | first difference |", "|---|---|---|"]
        lines += [f"| {d['sample']} | {d['strategy']} | {d['difference']} |" for d in differences]
    text = "\n".join(lines)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"equivalence_{args.name}.md").write_text(text + "\n")
    (RESULTS / f"equivalence_{args.name}.json").write_text(
        json.dumps(
            {
                "identical": len(same),
                "rows": len(before),
                "differences": differences,
                "seconds": seconds,
                "after_brain_opts": args.after_brain_opt,
                "load": load,
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
