"""The reader's confident mistakes on the broad set's development kinds, answered by trees that never saw the kind.

``train_reader.py`` puts every broad development layout in its train part, so the trees it trains on the
calibration part alone (20 families of the generated corpus) never saw a broad kind: their answers there are
answers to new kinds of page, as the outside checks ask. This script takes those trees (from ``train_reader.py``'s
cache, or trains them), calibrates with the model file beside the code, and lists the wrong answers at confidence
>= 0.9 by layout with the questions they answered. Development data only: no test family is read.

    python benchmarks/experiments/dev_mistakes.py                 # after train_reader.py; ~2 min with its cache
    python benchmarks/experiments/dev_mistakes.py --corpus benchmarks/out/readerset-lists/docs.jsonl \\
        benchmarks/out/broadcorpus/docs.jsonl --model /tmp/typing-lists/scorer.json --name typing_lists

Writes ``benchmarks/results/dev_mistakes_<name>.md``.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np

BENCH = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(BENCH))

import train_reader as tr  # noqa: E402  (the benchmark one folder up)
from docintent.reader.features import FEATURE_NAMES  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", nargs="+", default=tr.DEFAULT_CORPORA, help="corpora in the training format")
    ap.add_argument("--model", default="", help="the model file whose calibration is used (default: the shipped one)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default=tr.DEFAULT_CACHE, help="train_reader.py's cache of features and trees")
    ap.add_argument("--name", default="shipped", help="suffix of the result file")
    args = ap.parse_args()
    docs, corpora, _ = tr.load_corpora(args.corpus)
    parts = tr.split_families(docs, args.seed)
    cache = Path(args.cache)
    recs = tr.cached_build(corpora, parts, 2, cache)
    columns = list(range(len(FEATURE_NAMES)))
    keys = [d for d, _ in corpora]
    booster = tr.cached_train(recs["calibration"], columns, args.seed, tr.ROUNDS, keys, cache / "boosters")
    model = Path(args.model) if args.model else tr.REPO / "src" / "docintent" / "data" / "reader" / "scorer.json"
    cal = json.loads(model.read_text(encoding="utf-8"))["calibration"]
    broad = [r for r in recs["train"] if r["family"].startswith("broad-")]
    chosen = tr.choose(broad, [booster.predict(r["rows"]) if len(r["rows"]) else np.zeros(0) for r in broad])
    asked = {qd["id"]: qd["question"] for d in docs if d["family"].startswith("broad-") for qd in d["questions"]}
    sure, wrong = 0, defaultdict(list)
    for c, r in zip(chosen, broad):
        if tr.calibrated(cal, c["p1"], c["p2"]) >= 0.9:
            sure += 1
            if not tr.chosen_is_right(c, r):
                gold = r["answers"][0] if r["answers"] else "(unanswerable)"
                wrong[r["family"]].append(f"{asked.get(r['qid'], r['qid'])} -> {c['text']!r} (right: {gold!r})")
    n_wrong = sum(len(v) for v in wrong.values())
    lines = [
        f"# Confident mistakes on the broad development kinds ({args.name})",
        "",
        f"{len(broad)} questions of the broad set's development layouts, answered by trees trained on the "
        f"calibration families only (they never saw these kinds), calibrated by `{model.name}`; corpora "
        f"{', '.join(k[:12] for k in keys)}, seed {args.seed}. At >= 0.9: {sure} answers, {n_wrong} wrong "
        f"({100.0 * n_wrong / max(sure, 1):.1f} %).",
        "",
        "| layout | wrong at >= 0.9 | examples |",
        "|---|---:|---|",
    ]
    for fam, items in sorted(wrong.items(), key=lambda kv: -len(kv[1])):
        lines.append(f"| {fam} | {len(items)} | {'; '.join(items[:3]).replace('|', '/')} |")
    text = "\n".join(lines) + "\n"
    out = BENCH / "results" / f"dev_mistakes_{args.name}.md"
    out.write_text(text, encoding="utf-8")
    print(text)


if __name__ == "__main__":
    main()
