"""The offline reader on the clean renders of a dataset: its reading ceiling, by task, document kind and question
family, with the answers it is sure of that are wrong.

Asks every question once, on the clean render of its page (``meta.clean_image`` of its capture-1 row), with no
tool, as ``benchmarks/strategies.py`` does for its ceiling column. Run it on a development split to see where
reading fails on kinds of page, and on two commits to see what a reader change did::

    python benchmarks/clean_reading.py --dataset benchmarks/out/broad/dev --name clean_reading_broad_dev

Writes benchmarks/results/<name>.{md,json} (every question's answer, confidence and score in the json).
"""

from __future__ import annotations

import argparse
import json
from collections import defaultdict
from pathlib import Path

from docintent.evaluation.runner import git_commit
from strategies import clean_rows

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"


def table(rows: list[dict], key: str) -> list[str]:
    groups: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        groups[str(r.get(key))].append(r)
    out = [f"| {key} | questions | score | answers at >= 0.9 | of them wrong |", "|---|---:|---:|---:|---:|"]
    for value, mine in sorted(groups.items()):
        sure = [r for r in mine if r["confidence"] >= 0.9]
        score = 100.0 * sum(r["score"] for r in mine) / len(mine)
        wrong = sum(not r["correct"] for r in sure)
        out.append(f"| {value} | {len(mine)} | {score:.2f} | {len(sure)} | {wrong} |")
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dataset", type=Path, required=True, help="a dataset folder with clean renders")
    parser.add_argument("--name", required=True, help="results go to benchmarks/results/<name>.{md,json}")
    args = parser.parse_args(argv)
    rows = clean_rows(args.dataset)
    source = git_commit()
    commit = "unknown" if source is None else source["commit"][:7] + (" (dirty)" if source["dirty"] else "")
    lines = [
        f"# The reader on the clean renders of `{args.dataset}`",
        "",
        f"{len(rows)} questions, one clean render each, offline reader, no tool; commit `{commit}`.",
        "",
        *table(rows, "task"),
        "",
        *table([r for r in rows if r["task"] == "doc"], "kind"),
        "",
        *table([r for r in rows if r["task"] == "doc"], "family"),
    ]
    text = "\n".join(lines) + "\n"
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(text)
    (RESULTS / f"{args.name}.json").write_text(json.dumps({"dataset": str(args.dataset), "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
