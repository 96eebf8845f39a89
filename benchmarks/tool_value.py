"""What each restoration tool was worth to the answers of a run, from its rows' traces.

For every restoration Phase B reviewed in the ``docintent`` rows of one or more run directories (``results.jsonl``
written by ``docintent bench``), the benchmark (not the brain) scores the answer read on the page before the tool and
the answer read on the page after it against the gold answers. Per tool it reports the reviews, the keeps, the score
the kept ones added (after minus before), the score the rolled-back ones would have added had they been kept, and
the seconds the reviews took. It also splits the reviews of photometric tools (those that move no text), and of
each geometric tool, by the answer's calibrated confidence when Phase A chose the tool, which is how
``PHOTOMETRIC_THRESHOLD`` of the offline brain was chosen (on development runs only).

    python benchmarks/tool_value.py benchmarks/out/runs/dev-q3-flat-page benchmarks/out/runs/dev-arith-new4 \
        benchmarks/out/runs/s101-final2 --name tool_value_dev

Writes benchmarks/results/<name>.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
#: Bounds of the confidence bins of the by-confidence tables.
BINS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.85, 1.01)
_CONFIDENCE = re.compile(r"answer confidence ([0-9.]+)")


def reviews_of(row: dict) -> list[dict]:
    """Every reviewed restoration of one result row: tool, verdict, confidence when chosen, scores before / after."""
    from docintent.evaluation.metrics import score_row

    sample, trace = row["sample"], (row.get("result") or {}).get("trace") or []
    answers, metric = list(sample["answers"]), (sample.get("meta") or {}).get("metric")

    def score(text: str | None) -> float:
        return float(score_row(sample["task"], sample.get("subset"), text or "", answers, metric=metric))

    out = []
    for i, step in enumerate(trace):
        if step.get("phase") != "B" or not step.get("tool"):
            continue
        measured = (step.get("data") or {}).get("measurements") or {}
        if "answer_before" not in measured:  # a turn, judged by the orientation classifier
            continue
        chosen = [s for s in trace[:i] if s.get("phase") == "A" and s.get("tool") == step["tool"]]
        found = _CONFIDENCE.search(chosen[-1]["reason"]) if chosen else None

        out.append(
            {
                "sample": sample["id"],
                "tool": step["tool"],
                "kept": step["action"] == "keep",
                "confidence": float(found.group(1)) if found else None,
                "before": score(measured.get("answer_before")),
                "after": score(measured.get("answer_after")),
                "seconds": float(step.get("seconds") or 0.0),
            }
        )
    return out


def summarise(reviews: list[dict]) -> dict:
    from docintent.tools.registry import get_tool

    tools: dict[str, dict] = {}
    for tool in sorted({r["tool"] for r in reviews}):
        mine = [r for r in reviews if r["tool"] == tool]
        tools[tool] = {
            "geometric": bool(get_tool(tool).geometric),
            "reviews": len(mine),
            "kept": sum(r["kept"] for r in mine),
            "gain_kept": sum(r["after"] - r["before"] for r in mine if r["kept"]),
            "gain_if_rolled_back_were_kept": sum(r["after"] - r["before"] for r in mine if not r["kept"]),
            "review_seconds": sum(r["seconds"] for r in mine),
        }
    groups = {"photometric": [r for r in reviews if not tools[r["tool"]]["geometric"]]}
    groups.update({t: [r for r in reviews if r["tool"] == t] for t, v in tools.items() if v["geometric"]})
    by_confidence = {}
    for group, members in groups.items():
        bins = []
        for lo, hi in zip(BINS, BINS[1:], strict=False):
            mine = [r for r in members if r["confidence"] is not None and lo <= r["confidence"] < hi]
            bins.append(
                {
                    "from": lo,
                    "to": min(hi, 1.0),
                    "reviews": len(mine),
                    "kept": sum(r["kept"] for r in mine),
                    "gain_kept": sum(r["after"] - r["before"] for r in mine if r["kept"]),
                    "rolled_back_would_help": sum(r["after"] > r["before"] for r in mine if not r["kept"]),
                    "review_seconds": sum(r["seconds"] for r in mine),
                }
            )
        by_confidence[group] = bins
    return {"tools": tools, "by_confidence": by_confidence}


def markdown(summary: dict, runs: list[str], samples: int) -> str:
    lines = [
        f"Restorations reviewed in {samples} `docintent` rows of {', '.join(f'`{r}`' for r in runs)}; scores are "
        "the answer read on the page before and after each tool, against the gold answers (ANLS or the task's own "
        "metric); a gain is in questions (1.0 = one question turned from wrong to right).",
        "",
        "| tool | geometric | reviews | kept | gain of the kept | gain the rolled-back would have had | review s |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for tool, t in summary["tools"].items():
        lines.append(
            f"| {tool} | {'yes' if t['geometric'] else 'no'} | {t['reviews']} | {t['kept']} | {t['gain_kept']:+.2f} | "
            f"{t['gain_if_rolled_back_were_kept']:+.2f} | {t['review_seconds']:.1f} |"
        )
    for group, bins in summary["by_confidence"].items():
        what = "Photometric tools" if group == "photometric" else f"`{group}`"
        lines += [
            "",
            f"{what} by the answer's calibrated confidence when Phase A chose them:",
            "",
            "| confidence | reviews | kept | gain of the kept | rolled back, would have raised the score | review s |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for b in bins:
            lines.append(
                f"| {b['from']:.2f}-{b['to']:.2f} | {b['reviews']} | {b['kept']} | {b['gain_kept']:+.2f} | "
                f"{b['rolled_back_would_help']} | {b['review_seconds']:.1f} |"
            )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path, help="run directories holding results.jsonl")
    parser.add_argument("--name", default="tool_value", help="results go to benchmarks/results/<name>.{md,json}")
    args = parser.parse_args(argv)
    reviews, samples = [], 0
    for run in args.runs:
        for line in (run / "results.jsonl").read_text().splitlines():
            row = json.loads(line) if line.strip() else None
            if row and row.get("strategy") == "docintent":
                samples += 1
                reviews += reviews_of(row)
    summary = summarise(reviews)
    text = markdown(summary, [r.name for r in args.runs], samples)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(f"# Tool value: {args.name}\n\n{text}")
    (RESULTS / f"{args.name}.json").write_text(
        json.dumps({"runs": [str(r) for r in args.runs], "samples": samples, **summary, "reviews": reviews}, indent=1)
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
