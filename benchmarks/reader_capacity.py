"""How much the reader's scorer gains from capacity and from a ranking objective, chosen without the test families.

Trees are trained on the corpus's **train** families and scored on its **calibration** families (development
data: the test families are never read here), clean and through simulated OCR noise, for each configuration in
:data:`CONFIGS`. ``benchmarks/train_reader.py`` takes the configuration this table favours.

    python benchmarks/train_reader.py --corpus benchmarks/out/readerset/docs.jsonl --seed 0   # builds the features
    python benchmarks/reader_capacity.py                           # every configuration (about 7 min on 2 idle cores)
    python benchmarks/reader_capacity.py binary-300 lambdarank-300 # some of them

Reads the candidates and features ``train_reader.py`` cached for the corpus and the reader code as they are now;
writes ``benchmarks/results/reader_capacity.{md,json}``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

import train_reader as tr  # noqa: E402  (benchmarks/ is on sys.path)

#: name -> (LightGBM parameters over train_reader.PARAMS, rounds, whether the objective ranks within a question)
CONFIGS: dict[str, tuple[dict, int, bool]] = {
    "binary-300-l31": ({"num_leaves": 31, "max_depth": 6}, 300, False),
    "lambdarank-300-l31": ({"num_leaves": 31, "max_depth": 6, "objective": "lambdarank"}, 300, True),
    "binary-600-l63": ({"num_leaves": 63, "max_depth": 8}, 600, False),
    "binary-1000-l127": ({"num_leaves": 127, "max_depth": 10}, 1000, False),
}


def features(corpus: Path, cache: Path, seed: int) -> dict[str, list[dict]]:
    """The cached candidates and features of ``corpus`` (built by train_reader.py for the current reader code)."""
    data = corpus.read_bytes()
    docs = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
    digest = hashlib.sha256(data).hexdigest()
    return tr.cached_build([(digest, docs)], tr.split_families(docs, seed), min(2, os.cpu_count() or 1), cache)


def development_score(booster, recs: list[dict]) -> dict[str, float]:
    """ANLS of the chosen candidates on ``recs``' answerable questions, clean and noisy, in points."""
    chosen = tr.choose(recs, [booster.predict(r["rows"]) if len(r["rows"]) else np.zeros(0) for r in recs])
    out = {}
    for part, noisy in (("clean", False), ("noisy", True)):
        scores = [c["score"] for c, r in zip(chosen, recs) if r["answers"] and r["noisy"] == noisy]
        out[part] = round(100 * float(np.mean(scores)), 2)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("configs", nargs="*", default=list(CONFIGS), help=f"of {', '.join(CONFIGS)}")
    ap.add_argument("--corpus", type=Path, default=tr.ROOT / "out" / "readerset" / "docs.jsonl")
    ap.add_argument("--cache", type=Path, default=tr.ROOT / "out" / "reader_features")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    unknown = [c for c in args.configs if c not in CONFIGS]
    if unknown:
        raise SystemExit(f"reader_capacity: unknown configuration {unknown[0]!r}; valid: {', '.join(CONFIGS)}")
    import lightgbm as lgb

    recs = features(args.corpus, args.cache, args.seed)
    x, y, groups = [], [], []
    for r in recs["train"]:
        keep = tr.thin(r, args.seed)
        x.append(r["rows"][keep])
        y.append(r["labels"][keep])
        groups.append(len(keep))
    data = lgb.Dataset(np.concatenate(x), label=np.concatenate(y), free_raw_data=False)
    ranked = lgb.Dataset(np.concatenate(x), label=np.concatenate(y), group=groups, free_raw_data=False)
    rows = {}
    for name in args.configs:
        extra, rounds, rank = CONFIGS[name]
        start = time.time()
        params = dict(tr.PARAMS, **extra, seed=args.seed)
        booster = lgb.train(params, ranked if rank else data, num_boost_round=rounds)
        rows[name] = dict(development_score(booster, recs["calibration"]), seconds=round(time.time() - start))
        print(name, rows[name], flush=True)
    load = os.getloadavg()[0]
    lines = [
        "# Reader scorer capacity (trained on the train families, scored on the calibration families)",
        "",
        f"Corpus {args.corpus.name}, seed {args.seed}; {len(recs['train'])} train and {len(recs['calibration'])} "
        f"calibration questions; load {load:.1f}. The test families are not read.",
        "",
        "| configuration | clean ANLS | noisy ANLS | training s |",
        "|---|---:|---:|---:|",
    ] + [f"| {n} | {r['clean']} | {r['noisy']} | {r['seconds']} |" for n, r in rows.items()]
    tr.RESULTS.mkdir(exist_ok=True)
    (tr.RESULTS / "reader_capacity.md").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tr.RESULTS / "reader_capacity.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
