"""Can the answer's calibration tell that a layout is new? Calibrations judged on document kinds they never saw.

The shipped scorer's calibration (``train_reader.py``) maps the trees' probability of the best candidate and its
margin over the runner-up to the probability of being right. On the corpus's held-out families (a new template of
a known kind) it holds; on the broad set's test layouts (kinds the corpus has one layout of) it is too sure. This
script asks whether any calibration could do better with what the reader knows when it answers.

Method (development families only; no test family is read):

- The families of kinds with one or two layouts (the broad set's development layouts) are dealt half to train,
  half to calibration by the seed; the corpus's kinds keep ``train_reader.py``'s split.
- As in ``train_reader.py``, trees trained on the train families predict the calibration families and trees
  trained on the calibration families predict the train families: every development question is answered by trees
  that never saw its layout, and for the broad kinds, never saw its kind.
- Each calibration is a logistic fit on those answers, fitted on every document kind but one and applied to that
  kind. Its inputs: the two probabilities alone; with the sources' agreement (the rule cascade chose the answer,
  chose another one, a single source proposed it); with the chosen candidate's own features (type fit, label
  match, votes, distance to its label, fuzzy label match, competitors of its type); each with every question
  weighing alike or every kind weighing alike.
- Figures are pooled apart for the kinds of many layouts and for the broad kinds, and the confident mistakes on the
  broad kinds are listed by the answer they gave.

    python benchmarks/calibration_shift.py      # after train_reader.py's corpora are built; ~15 min on 2 cores

Writes ``benchmarks/results/calibration_shift.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

import train_reader as tr
from docintent.reader.features import FEATURE_NAMES

ROOT = Path(__file__).resolve().parent
#: The chosen candidate's features a calibration may weigh (``FEATURE_NAMES``).
OWN = ("type_fit", "m_best", "max_vote", "label_dist", "fz_best", "same_type_n")
AGREEMENT = ("rules_chose", "rules_other", "single_source")
INPUTS: dict[str, tuple[str, ...]] = {
    "probabilities": (),
    "+ agreement": AGREEMENT,
    "+ type fit": ("type_fit",),
    "+ label match": ("m_best",),
    "+ votes": ("max_vote",),
    "+ the candidate's features": OWN,
    "+ agreement and the candidate's features": AGREEMENT + OWN,
}


def pooled_families(docs: list[dict]) -> list[str]:
    """The families of the kinds of one or two layouts (the broad set's), sorted."""
    fams: dict[str, set[str]] = defaultdict(set)
    for d in docs:
        fams[d["kind"]].add(d["family"])
    return sorted(f for fs in fams.values() if len(fs) < 3 for f in fs)


def pooled_split(docs: list[dict], seed: int) -> dict[str, str]:
    """``train_reader.split_families``, with the families of kinds of one or two layouts dealt half to train, half
    to calibration (there they all go to train)."""
    parts = tr.split_families(docs, seed)
    few = pooled_families(docs)
    random.Random(f"{seed}:pooled").shuffle(few)
    for i, fam in enumerate(few):
        parts[fam] = "calibration" if i < len(few) // 2 else "train"
    return parts


def answered(recs: list[dict], booster) -> list[dict]:
    """The chosen answer of every record with its calibration inputs: the two probabilities, whether it is right,
    the sources' agreement and the chosen candidate's own features."""
    out = []
    probs = tr.predict(booster, recs, list(range(len(FEATURE_NAMES))))
    for r, c in zip(recs, tr.choose(recs, probs)):
        terms = dict.fromkeys(AGREEMENT + OWN, 0.0)
        if c["order"]:
            first, *rest = c["order"]
            best = r["sources"][first]
            terms["rules_chose"] = float("rules" in best)
            terms["rules_other"] = float("rules" not in best and any("rules" in r["sources"][i] for i in rest))
            terms["single_source"] = float(len(best) == 1)
            for name in OWN:
                terms[name] = float(r["rows"][first, FEATURE_NAMES.index(name)])
        out.append(
            {
                "p1": c["p1"],
                "p2": c["p2"],
                "text": c["text"],
                "right": tr.chosen_is_right(c, r),
                "kind": r["kind"],
                "family": r["family"],
                "qfamily": r["qfamily"],
                "terms": terms,
            }
        )
    return out


def leave_kind_out(rows: list[dict], inputs: tuple[str, ...], balanced: bool) -> np.ndarray:
    """Each row's confidence from a calibration fitted on every other kind's rows."""
    from sklearn.linear_model import LogisticRegression

    p1 = tr.logits(np.array([r["p1"] for r in rows]))
    p2 = tr.logits(np.array([r["p2"] for r in rows]))
    x = np.stack([p1, p1 - p2] + [np.array([r["terms"][t] for r in rows]) for t in inputs], axis=1)
    y = np.array([r["right"] for r in rows], dtype=int)
    kinds = np.array([r["kind"] for r in rows])
    counts = Counter(kinds.tolist())
    w = np.array([1.0 / counts[k] for k in kinds]) if balanced else np.ones(len(rows))
    conf = np.zeros(len(rows))
    for kind in sorted(counts):
        held = kinds == kind
        lr = LogisticRegression(C=10.0, max_iter=2000).fit(x[~held], y[~held], sample_weight=w[~held])
        conf[held] = lr.predict_proba(x[held])[:, 1]
    return conf


def figures(conf: np.ndarray, right: np.ndarray) -> dict:
    hi = conf >= 0.9
    return {
        "n": int(len(conf)),
        "ece": round(tr.ece(conf, right), 2),
        "aurc": round(tr.aurc(conf, right), 2),
        "at_0.9": int(hi.sum()),
        "wrong_at_0.9": round(100 * float(1 - right[hi].mean()), 1) if hi.any() else None,
    }


def markdown(report: dict) -> str:
    lines = [
        "# Calibrations judged on document kinds they never saw",
        "",
        f"{report['questions']} development questions ({report['pooled_questions']} of them on the "
        f"{len(report['pooled_families'])} broad layouts), each answered by trees that never saw its layout; every "
        "calibration fitted on all kinds but one and applied to that one. `many`: the corpus's kinds (five layouts "
        "each); `broad`: the broad set's kinds (one layout each, their answers from trees that never saw the kind). "
        f"Seed {report['seed']}, corpora {', '.join(d[:12] for d in report['corpora'])}; {report['seconds']} s.",
        "",
        "| inputs | weighing | many: ECE | wrong at >= 0.9 (n) | AURC | broad: ECE | wrong at >= 0.9 (n) | AURC |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in report["table"]:
        cells = [
            f"{g['ece']} | {'-' if g['wrong_at_0.9'] is None else g['wrong_at_0.9']} % ({g['at_0.9']}) | {g['aurc']}"
            for g in (row["many"], row["broad"])
        ]
        weigh = "kinds alike" if row["balanced"] else "questions alike"
        lines.append(f"| {row['inputs']} | {weigh} | {' | '.join(cells)} |")
    lines += [
        "",
        "## The confident mistakes on the broad kinds (the two probabilities, every question weighing alike)",
        "",
        f"{report['mistakes']['wrong']} of {report['mistakes']['at_0.9']} answers at >= 0.9 are wrong. By layout, "
        "with the answers given most often:",
        "",
        "| layout | wrong at >= 0.9 | answers given most often |",
        "|---|---:|---|",
    ]
    for fam, row in report["mistakes"]["by_family"].items():
        top = "; ".join(f"{t!r} x{n}" for t, n in row["top"])
        lines.append(f"| {fam} | {row['wrong']} | {top} |")
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", nargs="+", default=tr.DEFAULT_CORPORA, help="corpora in the training format")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--cache", default=tr.DEFAULT_CACHE, help="train_reader.py's cache of features and trees")
    args = ap.parse_args()
    start = time.time()
    docs, corpora, _ = tr.load_corpora(args.corpus)
    parts = pooled_split(docs, args.seed)
    recs = tr.cached_build(corpora, parts, args.workers, Path(args.cache))
    columns = list(range(len(FEATURE_NAMES)))
    keys, boosters = [d for d, _ in corpora], Path(args.cache) / "boosters"
    on_train = tr.cached_train(recs["train"], columns, args.seed, tr.ROUNDS, keys, boosters)
    on_cal = tr.cached_train(recs["calibration"], columns, args.seed, tr.ROUNDS, keys, boosters)
    rows = answered(recs["calibration"], on_train) + answered(recs["train"], on_cal)
    print(f"answered {len(rows)} development questions, {time.time() - start:.0f} s", file=sys.stderr)
    right = np.array([r["right"] for r in rows], dtype=float)
    broad_families = pooled_families(docs)
    broad = np.array([r["family"] in broad_families for r in rows])
    table = []
    for name, inputs in INPUTS.items():
        for balanced in (False, True):
            conf = leave_kind_out(rows, inputs, balanced)
            row = {
                "inputs": name,
                "balanced": balanced,
                "many": figures(conf[~broad], right[~broad]),
                "broad": figures(conf[broad], right[broad]),
            }
            table.append(row)
            print(json.dumps(row), file=sys.stderr)
            if name == "probabilities" and not balanced:
                plain = conf
    wrong = [r for r, c, b in zip(rows, plain, broad) if b and c >= 0.9 and not r["right"]]
    by_family: dict[str, list[str]] = defaultdict(list)
    for r in wrong:
        by_family[r["family"]].append(r["text"])
    report = {
        "seed": args.seed,
        "corpora": keys,
        "questions": len(rows),
        "pooled_questions": int(broad.sum()),
        "pooled_families": broad_families,
        "split": {f: parts[f] for f in broad_families},
        "table": table,
        "mistakes": {
            "at_0.9": int((broad & (plain >= 0.9)).sum()),
            "wrong": len(wrong),
            "by_family": {
                f: {"wrong": len(t), "top": Counter(t).most_common(3)}
                for f, t in sorted(by_family.items(), key=lambda kv: -len(kv[1]))
            },
        },
        "seconds": round(time.time() - start),
    }
    out = ROOT / "results"
    (out / "calibration_shift.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    (out / "calibration_shift.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))


if __name__ == "__main__":
    main()
