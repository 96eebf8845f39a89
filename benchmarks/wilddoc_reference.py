"""Score the WildDoc reference predictions (Qwen2.5-VL-72B) with docintent's metrics and time it.

    python benchmarks/wilddoc_reference.py [PATH]

PATH defaults to ../shared/data/wilddoc/qwen25vl72b_predictions.jsonl.gz (relative to the repository).
Prints the table next to the published figures and saves it to benchmarks/results/wilddoc_reference.{md,json}.
"""

from __future__ import annotations

import json
import platform
import sys
import time
from pathlib import Path

from docintent.evaluation.datasets import read_wilddoc_predictions
from docintent.evaluation.metrics import summarize

REPO = Path(__file__).resolve().parents[1]
DEFAULT = REPO.parent / "shared" / "data" / "wilddoc" / "qwen25vl72b_predictions.jsonl.gz"
RESULTS = REPO / "benchmarks" / "results"

# From the README beside the predictions file: (score, consistency) in percent.
PUBLISHED = {
    "DocVQA": (81.42, 64.09),
    "ChartQA": (66.47, 50.00),
    "TableVQA": (64.87, 41.53),
    "fintabnetqa": (72.90, 46.80),
    "vtabfact": (77.30, 57.60),
    "vwtq": (52.17, 28.53),
    "vwtq_syn": (57.10, 33.20),
    "Average": (70.92, 51.87),
}


def main() -> int:
    path = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT
    start = time.perf_counter()
    rows = read_wilddoc_predictions(path)
    read_s = time.perf_counter() - start
    start = time.perf_counter()
    summary = summarize(rows)
    score_s = time.perf_counter() - start

    ours = {
        "DocVQA": summary.tasks["doc"],
        "ChartQA": summary.tasks["chart"],
        "TableVQA": summary.tasks["table"],
        **summary.tasks["table"].subsets,
    }
    figures = {name: (r.score, r.consistency) for name, r in ours.items()}
    figures["Average"] = (summary.average_score, summary.average_consistency)

    lines = [
        f"WildDoc reference predictions: {path.name}, {len(rows)} rows",
        "",
        "| subtask | score | published | consistency | published | max abs diff |",
        "|---|---|---|---|---|---|",
    ]
    worst = 0.0
    for name, (pub_score, pub_cons) in PUBLISHED.items():
        score, cons = figures[name]
        diff = max(abs(score - pub_score), abs(cons - pub_cons))
        worst = max(worst, diff)
        lines.append(f"| {name} | {score:.2f} | {pub_score:.2f} | {cons:.2f} | {pub_cons:.2f} | {diff:.4f} |")
    lines += [
        "",
        f"read {read_s:.2f} s, scored {score_s:.2f} s ({len(rows) / score_s:,.0f} rows/s) "
        f"on {platform.processor() or platform.machine()}, Python {platform.python_version()}; "
        f"worst difference {worst:.4f} points",
    ]
    table = "\n".join(lines)
    print(table)

    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "wilddoc_reference.md").write_text(table + "\n", encoding="utf-8")
    payload = {
        "file": path.name,
        "rows": len(rows),
        "read_seconds": round(read_s, 3),
        "score_seconds": round(score_s, 3),
        "worst_abs_diff": worst,
        "figures": {name: {"score": s, "consistency": c} for name, (s, c) in figures.items()},
        "published": {name: {"score": s, "consistency": c} for name, (s, c) in PUBLISHED.items()},
    }
    (RESULTS / "wilddoc_reference.json").write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")
    return 0 if worst <= 0.01 else 1


if __name__ == "__main__":
    sys.exit(main())
