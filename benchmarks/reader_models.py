"""Readers side by side on a dataset's clean renders: the rule cascade, the shipped scorer and any other model file.

A reader is judged here without capture damage or restoration: every question of the dataset (its capture 1 row)
is asked of the clean render (``meta.clean_image``) through the offline brain's reading path, once per reader,
and scored with the WildDoc rules. The table breaks the scores down by document kind and question family, so a
model that reads its own corpus well but another kind of page badly shows where.

A model file other than the shipped one is named ``NAME=PATH`` (a ``scorer.json``, its trees beside it or inline):
an earlier model can be taken from the history, e.g. ``git show ddc5047:src/docintent/data/reader/scorer.json >
/tmp/first/scorer.json``.

    python benchmarks/reader_models.py --dataset benchmarks/out/broad/dev --model first=/tmp/first/scorer.json
    python benchmarks/reader_models.py --dataset benchmarks/out/broad/test --model first=/tmp/first/scorer.json \\
        --name reader_models_broad_test

``--corpus DOCS.jsonl`` reads a corpus in the scorer's training format instead (``reader_corpus.py``,
``broad_corpus.py``): each page's text-layer lines are the layout, no OCR; the table adds, per reader, how many
answers were given at confidence >= 0.9 and how many of those are wrong, and the expected calibration error.

Writes ``benchmarks/results/<name>.{md,json}``. The OCR of each page is read once and shared by the readers.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"


def readers(models: list[str]) -> dict:
    """``{name: reader}``: the rule cascade, the shipped scorer, then every ``NAME=PATH`` model."""
    from docintent.reader.readers import RulesReader, ScoredReader

    out = {"rules": RulesReader(), "shipped": ScoredReader()}
    for spec in models:
        name, _, path = spec.partition("=")
        if not path:
            raise SystemExit(f"--model {spec!r}: expected NAME=PATH")
        out[name] = ScoredReader(model=path)
    return out


def run(dataset: Path, models: list[str], per_question: bool) -> list[dict]:
    """One row per (question, reader): its score on the clean render."""
    from docintent.evaluation.datasets import load_dataset
    from docintent.evaluation.metrics import score_row
    from docintent.io import load_page
    from docintent.ocr import get_engine
    from docintent.page import Page
    from docintent.reader.reading import QuestionReader

    chosen, seen = [], set()
    for s in load_dataset(f"synth:{dataset}"):
        key = s.group or s.id
        if per_question and key in seen:
            continue
        seen.add(key)
        chosen.append(s)
    engine = get_engine()
    named = readers(models)
    pages: dict[str, Page] = {}
    rows = []
    for s in chosen:
        path = str(dataset / s.meta["clean_image"])
        if path not in pages:
            pages[path] = load_page(path)
        for name, reader in named.items():
            reading = QuestionReader(s.question, s.task, engine, reader).read(pages[path])
            rows.append(
                {
                    "question": s.group or s.id,
                    "reader": name,
                    "subset": s.subset,
                    "family": s.meta.get("family") or s.task,
                    "score": score_row(s.task, s.subset, reading.answer, list(s.answers)),
                    "answer": reading.answer,
                    "confidence": reading.confidence,
                    "source": reading.source,
                }
            )
    return rows


def run_corpus(corpus: Path, models: list[str]) -> list[dict]:
    """One row per (question, reader) of a text-layer corpus: its score on the page's lines."""
    from docintent.evaluation.metrics import score_row
    from docintent.reader.query import understand
    from train_reader import layout_of  # the benchmark beside this one: a corpus page's lines as a layout

    named = readers(models)
    rows = []
    for line in corpus.read_text(encoding="utf-8").splitlines():
        doc = json.loads(line)
        layout = layout_of(doc, noisy=False)
        for qd in doc["questions"]:
            question = understand(qd["question"], "doc")
            for name, reader in named.items():
                choice = reader.read(question, layout)
                rows.append(
                    {
                        "question": qd["id"],
                        "reader": name,
                        "subset": doc["kind"],
                        "family": qd["family"],
                        "score": score_row("doc", doc["kind"], choice.answer, list(qd["answers"])),
                        "answer": choice.answer,
                        "confidence": choice.confidence,
                    }
                )
    return rows


def confidence_lines(rows: list[dict], names: list[str]) -> list[str]:
    """Per reader: answers at confidence >= 0.9, how many of them are wrong (score <= 0.5), the ECE and the area
    under the risk-coverage curve (AURC, in points: the mean error over every coverage, answers taken surest
    first; lower is better)."""
    import numpy as np

    from train_reader import aurc, ece  # the benchmark beside this one

    lines = ["| reader | answers at >= 0.9 | wrong among them | ECE | AURC |", "|---|---:|---:|---:|---:|"]
    for name in names:
        mine = [r for r in rows if r["reader"] == name]
        conf = np.array([r["confidence"] for r in mine], dtype=float)
        right = np.array([r["score"] > 0.5 for r in mine], dtype=float)
        high = conf >= 0.9
        wrong = int((high & (right == 0)).sum())
        share = 100.0 * wrong / max(int(high.sum()), 1)
        lines.append(
            f"| {name} | {int(high.sum())} | {wrong} ({share:.1f} %) | {ece(conf, right):.1f} | {aurc(conf, right):.2f} |"
        )
    return lines


def table(rows: list[dict], key: str, names: list[str], overall: bool = False) -> list[str]:
    """Mean score per value of ``key`` and reader (``overall``: an "all" row first)."""
    from strategies import mean_of  # the benchmark beside this one

    groups: dict[str, dict[str, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in rows:
        groups[r[key]][r["reader"]].append(r["score"])
    ordered = [(g, groups[g]) for g in sorted(groups)]
    if overall:
        everything: dict[str, list[float]] = defaultdict(list)
        for r in rows:
            everything[r["reader"]].append(r["score"])
        ordered.insert(0, ("all", everything))
    lines = [f"| {key} | questions | " + " | ".join(names) + " |", "|---|---:|" + "---:|" * len(names)]
    for group, scores in ordered:
        cells = " | ".join(f"{mean_of(scores[m]):.1f}" for m in names)
        lines.append(f"| {group} | {len(scores[names[0]])} | {cells} |")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", type=Path, default=ROOT / "out" / "broad" / "dev")
    ap.add_argument("--corpus", type=Path, default=None, help="a text-layer corpus (docs.jsonl) instead of a dataset")
    ap.add_argument("--model", action="append", default=[], help="another model file, NAME=PATH (repeatable)")
    ap.add_argument("--all-captures", action="store_true", help="every row, not one per question (clean pages repeat)")
    ap.add_argument("--name", default="reader_models_broad_dev", help="base name of the result files")
    args = ap.parse_args()
    t0 = time.time()
    if args.corpus:
        rows = run_corpus(args.corpus, args.model)
    else:
        rows = run(args.dataset, args.model, per_question=not args.all_captures)
    names = list(dict.fromkeys(r["reader"] for r in rows))
    load = os.getloadavg()[0]
    dataset = (args.corpus or args.dataset).resolve()
    shown = dataset.relative_to(ROOT.parent) if dataset.is_relative_to(ROOT.parent) else dataset
    where = "their pages' text layers" if args.corpus else "their clean renders"
    text = "\n".join(
        [
            "# Readers on text layers" if args.corpus else "# Readers on clean renders",
            "",
            f"{shown}: {len({r['question'] for r in rows})} questions on {where}, WildDoc scores in "
            f"percent; readers: {', '.join(names)} (other models: {', '.join(args.model) or 'none'}); "
            f"{time.time() - t0:.0f} s at load {load:.1f}.",
            "",
            *table(rows, "subset", names, overall=True),
            "",
            *table(rows, "family", names),
            "",
            *confidence_lines(rows, names),
        ]
    )
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(text + "\n")
    (RESULTS / f"{args.name}.json").write_text(json.dumps({"rows": rows, "models": args.model}, indent=1))


if __name__ == "__main__":
    main()
