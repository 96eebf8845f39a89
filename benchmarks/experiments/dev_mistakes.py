"""The reader's confident mistakes on the broad set's development kinds, answered by trees that never saw the kind.

``train_reader.py`` puts every broad development layout in its train part, so the trees it trains on the
calibration part alone (20 families of the generated corpus) never saw a broad kind: their answers there are
answers to new kinds of page, as the outside checks ask. This script takes those trees (from ``train_reader.py``'s
cache, or trains them), calibrates with the model file beside the code, and lists the wrong answers at confidence
>= 0.9 by layout with the questions they answered. Development data only: no test family is read.

    python benchmarks/experiments/dev_mistakes.py                 # after train_reader.py; ~2 min with its cache
    python benchmarks/experiments/dev_mistakes.py --corpus benchmarks/out/readerset-lists/docs.jsonl \\
        benchmarks/out/broadcorpus/docs.jsonl --model /tmp/typing-lists/scorer.json --name typing_lists

``--rule-out`` (with the typing experiment applied) drops every candidate of a type its question rules out before
the answer is chosen.

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
from calibration_shift import pooled_families  # noqa: E402
from docintent.reader.features import FEATURE_NAMES  # noqa: E402


def rule_out(recs: list[dict], probs: list[np.ndarray], asked: dict[str, str]) -> None:
    """Set to 0 the probability of every candidate of a type its question rules out (``expected_types`` of the
    typing experiment). An estimate: the other candidates keep the features computed beside the dropped ones."""
    from docintent.reader import features

    expected = getattr(features, "expected_types", None)
    if expected is None:
        raise SystemExit(
            "--rule-out needs the typing experiment: git apply benchmarks/experiments/reader_typing_lists.patch"
        )
    from docintent.reader.query import understand

    for r, p in zip(recs, probs):
        _, unwanted = expected(understand(asked.get(r["qid"], ""), "doc"))
        for i, text in enumerate(r["texts"]):
            if features.text_types(text) & unwanted:
                p[i] = 0.0


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", nargs="+", default=tr.DEFAULT_CORPORA, help="corpora in the training format")
    ap.add_argument("--model", default="", help="the model file whose calibration is used (default: the shipped one)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--cache", default=tr.DEFAULT_CACHE, help="train_reader.py's cache of features and trees")
    ap.add_argument("--name", default="shipped", help="suffix of the result file")
    ap.add_argument(
        "--rule-out",
        action="store_true",
        help="drop the candidates of a type the question rules out (the experiment's)",
    )
    args = ap.parse_args()
    from docintent.reader import features

    if args.rule_out and not hasattr(features, "expected_types"):
        raise SystemExit(
            "--rule-out needs the typing experiment: git apply benchmarks/experiments/reader_typing_lists.patch"
        )
    docs, corpora, _ = tr.load_corpora(args.corpus)
    parts = tr.split_families(docs, args.seed)
    cache = Path(args.cache)
    recs = tr.cached_build(corpora, parts, 2, cache)
    columns = list(range(len(FEATURE_NAMES)))
    keys = [d for d, _ in corpora]
    booster = tr.cached_train(recs["calibration"], columns, args.seed, tr.ROUNDS, keys, cache / "boosters")
    model = Path(args.model) if args.model else tr.MODEL_DIR / tr.MODEL_FILE
    shipped = json.loads(model.read_text(encoding="utf-8"))
    cal = shipped["calibration"]
    kinds_of_few_layouts = set(pooled_families(docs))  # the broad set's: train_reader.py puts them all in train
    broad = [r for r in recs["train"] if r["family"] in kinds_of_few_layouts]
    asked = {qd["id"]: qd["question"] for d in docs if d["family"] in kinds_of_few_layouts for qd in d["questions"]}
    probs = tr.predict(booster, broad, columns)
    if args.rule_out:
        rule_out(broad, probs, asked)
    chosen = tr.choose(broad, probs)
    if shipped.get("bags"):  # the bags of the same families floor the answer's probability, as the reader's do
        bags = tr.train_bags(recs["calibration"], columns, args.seed, keys, cache / "boosters", len(shipped["bags"]))
        chosen = tr.floored(chosen, broad, bags, columns)
    sure, wrong = 0, defaultdict(list)
    for c, r in zip(chosen, broad):
        if tr.calibrated(cal, c["p1"], c["p2"], c.get("floor")) >= 0.9:
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
