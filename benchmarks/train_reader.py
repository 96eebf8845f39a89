"""Train the reader's candidate scorer, calibrate it on held-apart layout families, and report on others.

One seeded command::

    pip install -e '.[train]'                      # lightgbm: training only; reading needs none of it
    python benchmarks/reader_corpus.py --out benchmarks/out/readerset --docs 8000 --seed 0
    python benchmarks/broad_corpus.py --out benchmarks/out/broadcorpus --per-layout 60
    python benchmarks/train_reader.py --seed 0       # both corpora by default

Every document of the corpus belongs to a **layout family** (a document kind and one of its templates). The
families of each kind are dealt, by the seed, to three parts that never share one: ``train`` and ``calibration``
(development) and ``test`` (only reported). The confidence is calibrated by cross-fitting: trees trained on the
train families predict the calibration families and trees trained on the calibration families predict the train
families, so every prediction the calibration is fitted on is for a family its trees never saw; the shipped trees
then learn on both development parts. The report also gives the stricter scheme (trees on the train families
alone, calibrated on the calibration families). Half the
documents of every part are read through simulated OCR noise (confusable characters, dropped characters, a
label and its value merged into one line, lower line confidences), so the scorer sees both clean and
noisy layouts; the report gives both.

Writes ``src/docintent/data/reader/scorer.json`` (the features, the calibration, the sources that proposed) and
``scorer.trees.npz`` (the trees as flat arrays) with
``scorer.manifest.json`` (the corpus digest, the seed, the split, library versions), and
``benchmarks/results/reader_scorer.{json,md}``: the leave-family-out table, rules-only against the scorer, by
document kind and question family, clean and noisy, with ECE, the share wrong at confidence >= 0.9 and the
area under the risk-coverage curve; ``--ablations`` adds every source and every feature group removed in turn.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import platform
import random
import sys
import time
from collections import defaultdict
from multiprocessing import get_context
from pathlib import Path

import numpy as np

from docintent.brains.offline.brain import RULES_CALIBRATION
from docintent.evaluation.metrics import anls
from docintent.layout.lines import Item, Layout
from docintent.page import Box
from docintent.reader.answer import format_answer
from docintent.reader.candidates import SOURCE_NAMES, propose
from docintent.reader.extract import Matcher
from docintent.reader.features import FEATURE_NAMES, GROUPS, featurise
from docintent.reader.query import understand
from docintent.reader.scorer import MODEL_FILE
from docintent.reader.spans import trim_span

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
MODEL_DIR = REPO / "src" / "docintent" / "data" / "reader"
RESULTS = ROOT / "results"
#: Negatives kept per training question (all positives are kept; the negatives closest to winning first).
NEGATIVES = 40
#: Share of each part read through simulated OCR noise.
NOISY_SHARE = 0.5
CONFUSIONS = {
    "0": "O",
    "O": "0",
    "1": "l",
    "l": "1",
    "I": "l",
    "5": "S",
    "S": "5",
    "8": "B",
    "B": "8",
    ",": ".",
    ".": ",",
    "e": "c",
    "c": "e",
    "rn": "m",
    "m": "rn",
    "€": "E",
    "£": "E",
}
PARAMS = {
    "objective": "binary",
    "learning_rate": 0.05,
    "num_leaves": 127,
    "max_depth": 10,
    "min_data_in_leaf": 40,
    "feature_fraction": 0.8,
    "bagging_fraction": 0.8,
    "bagging_freq": 1,
    "lambda_l2": 1.0,
    "deterministic": True,
    "force_row_wise": True,
    "num_threads": 2,
    "verbose": -1,
}
#: Chosen on the calibration families (trees trained on the train families; test families never looked at):
#: clean ANLS 81.2 with 300 rounds of 31 leaves, 85.8 with 600 of 63, 87.4 with 1,000 of 127
#: (``benchmarks/results/reader_capacity.md``).
ROUNDS = 1000
#: Bags: forests each trained with a third of the layout families left out, fewer trees. Where they disagree with
#: the main forest on the chosen candidate, the layout is one the training did not pin down; the calibration weighs
#: how far the lowest of their probabilities falls below the main forest's (see :func:`floored`).
#: (``--bags``; the committed model has none: with the brain's calibration as it is, they made a warped page's
#: wrong answer sure enough to skip the flattening, see benchmarks/experiments/README.md).
BAGS = 0
BAG_ROUNDS = 200
#: Ablations retrain on the train families alone, with fewer trees (they compare, they are not shipped).
ABLATION_ROUNDS = 200


# -- the corpus ----------------------------------------------------------------------------------------


def split_families(docs: list[dict], seed: int) -> dict[str, str]:
    """Family -> part: each kind's families shuffled by the seed and dealt 60 / 20 / 20 % (at least one family
    of every kind with three or more in calibration and in test)."""
    by_kind: dict[str, set[str]] = defaultdict(set)
    for d in docs:
        by_kind[d["kind"]].add(d["family"])
    parts: dict[str, str] = {}
    for kind in sorted(by_kind):
        fams = sorted(by_kind[kind])
        random.Random(f"{seed}:{kind}").shuffle(fams)
        n = len(fams)
        n_test = max(1, round(0.2 * n)) if n >= 3 else 0
        n_cal = max(1, round(0.2 * n)) if n >= 3 else 0
        for i, fam in enumerate(fams):
            parts[fam] = "test" if i < n_test else "calibration" if i < n_test + n_cal else "train"
    return parts


def _noisy_text(text: str, rng: random.Random) -> str:
    out, i = [], 0
    while i < len(text):
        two = text[i : i + 2]
        if two in CONFUSIONS and rng.random() < 0.02:
            out.append(CONFUSIONS[two])
            i += 2
            continue
        ch = text[i]
        r = rng.random()
        if ch in CONFUSIONS and r < 0.02:
            out.append(CONFUSIONS[ch])
        elif r < 0.025 and ch in ".,:;'":
            pass
        else:
            out.append(ch)
        i += 1
    return "".join(out)


def layout_of(doc: dict, noisy: bool) -> Layout:
    """The document's lines as a layout; ``noisy``: read through simulated OCR noise (seeded by the doc id)."""
    lines = [
        (ln["text"], Box(*ln["box"]), float(ln.get("confidence", 1.0)))
        for ln in doc["lines"]
        if ln["text"].strip() and ln["box"][0] < ln["box"][2] and ln["box"][1] < ln["box"][3]
    ]
    if noisy:
        rng = random.Random(f"noise:{doc['doc']}")
        lines.sort(key=lambda t: (round(t[1].y0, 3), t[1].x0))
        merged: list[tuple[str, Box, float]] = []
        for text, box, _ in lines:
            prev = merged[-1] if merged else None
            if (
                prev is not None
                and abs(prev[1].y0 - box.y0) < 0.3 * box.height
                and 0 <= box.x0 - prev[1].x1 < 4 * box.height
                and rng.random() < 0.3
            ):
                merged[-1] = (prev[0] + " " + text, prev[1].union(box), prev[2])
            else:
                merged.append((text, box, 1.0))
        lines = [(_noisy_text(t, rng), b, rng.uniform(0.78, 0.99)) for t, b, _ in merged]
    return Layout([Item(t, b, c, i) for i, (t, b, c) in enumerate(lines)])


def _score(text: str, answers: list[str]) -> float:
    return anls(text, answers) if answers else 0.0


def process(job: tuple[dict, bool]) -> list[dict]:
    """Candidates, features and labels of every question of one document (every candidate: the negatives are
    thinned only when a training matrix is built)."""
    doc, noisy = job
    layout = layout_of(doc, noisy)
    out = []
    for qd in doc["questions"]:
        q = understand(qd["question"], qd.get("task", "doc"))
        cands = propose(q, layout)
        rows = featurise(q, layout, cands, Matcher(q.info, layout)) if cands else []
        answers = list(qd.get("answers") or [])
        texts = [format_answer(trim_span(c.text, q.answer_type), q.info, q.task) for c in cands]
        scores = [_score(t, answers) for t in texts]
        labels = [1 if s >= 0.8 else 0 for s in scores]
        keep = list(range(len(cands)))
        rules = next((c for c in cands if "rules" in c.votes), None)
        rules_text = format_answer(trim_span(rules.text, q.answer_type), q.info, q.task) if rules else ""
        out.append(
            {
                "doc": doc["doc"],
                "qid": qd.get("id", qd["question"]),
                "kind": doc["kind"],
                "family": doc["family"],
                "qfamily": qd.get("family", ""),
                "noisy": noisy,
                "answers": answers,
                "rows": np.asarray([rows[i] for i in keep], dtype=np.float32).reshape(len(keep), len(FEATURE_NAMES)),
                "labels": np.asarray([labels[i] for i in keep], dtype=np.int8),
                "scores": np.asarray([scores[i] for i in keep], dtype=np.float32),
                "texts": [texts[i] for i in keep],
                "sources": [sorted(cands[i].votes) for i in keep],
                "strong": np.asarray([bool(set(cands[i].votes) - {"typed"}) for i in keep], dtype=bool),
                "rules_answer": rules_text,
                "rules_conf": float(rules.votes["rules"]) if rules else 0.0,
            }
        )
    return out


def build(docs: list[dict], workers: int) -> list[dict]:
    """Every question record of ``docs``, in document order."""
    jobs = []
    for d in docs:
        noisy = int(hashlib.sha256(d["doc"].encode()).hexdigest(), 16) % 1000 < NOISY_SHARE * 1000
        jobs.append((d, noisy))
    out: list[dict] = []
    start = time.time()
    with get_context("spawn").Pool(workers) as pool:
        for n, recs in enumerate(pool.imap(process, jobs, chunksize=8), 1):
            out.extend(recs)
            if n % 500 == 0:
                print(f"  {n}/{len(jobs)} documents, {time.time() - start:.0f} s", file=sys.stderr, flush=True)
    return out


#: A task or typed-span kind counts as covered when the development families hold at least this many questions of it.
COVERED = 100


def coverage(docs: list[dict], parts: dict[str, str]) -> tuple[list[str], list[str], list[str]]:
    """The tasks, typed-span kinds and question shapes the development (train and calibration) questions cover:
    the scored reader leaves every other kind of question to the rule cascade."""
    tasks: dict[str, int] = defaultdict(int)
    kinds: dict[str, int] = defaultdict(int)
    shapes: dict[str, int] = defaultdict(int)
    for d in docs:
        if parts[d["family"]] == "test":
            continue
        for qd in d["questions"]:
            q = understand(qd["question"], qd.get("task", "doc"))
            tasks[q.task] += 1
            shapes[q.shape] += 1
            if q.span_kind:
                kinds[q.span_kind] += 1
    tasks_, kinds_, shapes_ = (sorted(k for k, n in c.items() if n >= COVERED) for c in (tasks, kinds, shapes))
    return tasks_, kinds_, shapes_


#: Reader modules that only consume features (the scorer and the readers built on it): changing them changes no
#: candidate and no feature, so cached features stay valid.
FEATURE_CONSUMERS = ("scorer.py", "readers.py")


def reader_code_digest() -> str:
    """A digest of the code that computes candidates and features (the reader's source files but the feature
    consumers, the layout, and this script's reading of a corpus page): features computed by other code are not
    reused."""
    import inspect

    h = hashlib.sha256()
    folder = REPO / "src" / "docintent" / "reader"
    producers = [p for p in sorted(folder.glob("*.py")) if p.name not in FEATURE_CONSUMERS]
    for path in producers + [REPO / "src" / "docintent" / "layout" / "lines.py"]:
        h.update(path.read_bytes())
    for part in (_noisy_text, layout_of, process):
        h.update(inspect.getsource(part).encode())
    h.update(json.dumps([CONFUSIONS, NOISY_SHARE], sort_keys=True).encode())
    return h.hexdigest()[:16]


def cached_build(
    corpora: list[tuple[str, list[dict]]], parts: dict[str, str], workers: int, cache: Path
) -> dict[str, list[dict]]:
    """:func:`build` of each corpus (its digest and its documents), kept in ``cache`` under the corpus digest and
    the reader code's digest, then dealt to the parts by family: adding a corpus rebuilds only that one."""
    out: dict[str, list[dict]] = defaultdict(list)
    for digest, docs in corpora:
        path = cache / f"{digest[:16]}-{reader_code_digest()}-{len(docs)}.pkl"
        if path.exists():
            with path.open("rb") as fh:
                recs = pickle.load(fh)
        else:
            recs = build(docs, workers)
            cache.mkdir(parents=True, exist_ok=True)
            with path.open("wb") as fh:
                pickle.dump(recs, fh, protocol=pickle.HIGHEST_PROTOCOL)
        for rec in recs:
            out[parts[rec["family"]]].append(rec)
    return out


# -- training -------------------------------------------------------------------------------------------

#: The trees' arrays, beside ``scorer.json`` (which names this file).
TREES_FILE = "scorer.trees.npz"
#: The bags' trees, one file each (``k`` from 0).
BAG_FILE = "scorer.bag{k}.npz"


def proposing(recs: list[dict]) -> list[str]:
    """The sources that proposed at least one candidate in ``recs``: the scored reader runs only these (a source
    that never proposed in training, such as the chart table on text-layer pages, has no weight in the trees)."""
    seen = {s for r in recs for srcs in r["sources"] for s in srcs}
    return [s for s in SOURCE_NAMES if s in seen]


def thin(rec: dict, seed: int) -> np.ndarray:
    """The rows of one question a training matrix keeps: every positive, every negative a source other than
    ``typed`` proposed, and up to :data:`NEGATIVES` of the others (seeded by the document and question)."""
    labels, strong = rec["labels"], rec["strong"]
    pos = np.flatnonzero(labels == 1)
    hard = np.flatnonzero((labels == 0) & strong)
    weak = list(np.flatnonzero((labels == 0) & ~strong))
    random.Random(f"{seed}:{rec['doc']}:{rec['qid']}:{rec['noisy']}").shuffle(weak)
    return np.sort(np.concatenate([pos, hard, np.asarray(weak[: max(NEGATIVES - len(hard), 0)], dtype=np.int64)]))


def _matrix(
    recs: list[dict], columns: list[int], drop_sources: tuple[str, ...] = (), seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    xs, ys = [], []
    for r in recs:
        keep = thin(r, seed)
        thinned = dict(r, rows=r["rows"][keep], labels=r["labels"][keep], sources=[r["sources"][i] for i in keep])
        x, y = _ablate(thinned, drop_sources)
        xs.append(x[:, columns])
        ys.append(y)
    return np.concatenate(xs), np.concatenate(ys)


_SRC_COL = {s: FEATURE_NAMES.index(f"src_{s}") for s in SOURCE_NAMES}
_RANK_COL = {s: FEATURE_NAMES.index(f"rank_{s}") for s in SOURCE_NAMES}


def _ablate(rec: dict, drop: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    """The record's rows as if the sources in ``drop`` had not run: candidates only they proposed are gone and
    the agreement features are counted without them."""
    x, y = rec["rows"], rec["labels"]
    if not drop:
        return x, y
    keep = [i for i, srcs in enumerate(rec["sources"]) if set(srcs) - set(drop)]
    x = x[keep].copy()
    for s in drop:
        x[:, _SRC_COL[s]] = 0
        x[:, _RANK_COL[s]] = 0
        if s == "rules":
            x[:, FEATURE_NAMES.index("rules_chose")] = 0
    x[:, FEATURE_NAMES.index("n_sources")] = x[:, [_SRC_COL[s] for s in SOURCE_NAMES]].sum(axis=1)
    return x, y[keep]


def train(recs: list[dict], columns: list[int], seed: int, rounds: int = ROUNDS, drop_sources: tuple[str, ...] = ()):
    import lightgbm as lgb

    x, y = _matrix(recs, columns, drop_sources, seed)
    params = dict(PARAMS, seed=seed, bagging_seed=seed, feature_fraction_seed=seed, data_random_seed=seed)
    return lgb.train(params, lgb.Dataset(x, label=y, free_raw_data=True), num_boost_round=rounds)


def cached_train(recs: list[dict], columns: list[int], seed: int, rounds: int, corpora: list[str], cache: Path):
    """:func:`train`, its trees kept in ``cache`` under everything that decides them (the reader code, the corpora,
    the families learned, the seed, the rounds, the parameters). Training is deterministic, so a kept booster is the
    one training would give again; every run predicts with the booster read back from its text, kept or new."""
    import lightgbm as lgb

    key = hashlib.sha256(
        json.dumps(
            [
                reader_code_digest(),
                sorted(corpora),
                sorted({r["family"] for r in recs}),
                len(recs),
                seed,
                rounds,
                columns,
                PARAMS,
                NEGATIVES,
                lgb.__version__,
            ],
            sort_keys=True,
        ).encode()
    ).hexdigest()[:20]
    path = cache / f"{key}.txt"
    if path.exists():
        return lgb.Booster(model_str=path.read_text(encoding="utf-8"))
    text = train(recs, columns, seed, rounds).model_to_string()
    cache.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)
    return lgb.Booster(model_str=text)


def flatten(booster) -> dict:
    """LightGBM's trees as flat arrays (see :class:`docintent.reader.scorer.Trees`)."""
    dump = booster.dump_model()
    feature, threshold, left, right, value, roots = [], [], [], [], [], []
    depth = 0

    def walk(node: dict, level: int) -> int:
        nonlocal depth
        depth = max(depth, level)
        i = len(feature)
        feature.append(-1)
        threshold.append(0.0)
        left.append(i)
        right.append(i)
        value.append(0.0)
        if "leaf_value" in node:
            value[i] = float(node["leaf_value"])
            return i
        if node.get("decision_type", "<=") != "<=":
            raise ValueError(f"unsupported split {node.get('decision_type')}")
        feature[i] = int(node["split_feature"])
        threshold[i] = float(node["threshold"])
        left[i] = walk(node["left_child"], level + 1)
        right[i] = walk(node["right_child"], level + 1)
        return i

    for tree in dump["tree_info"]:
        roots.append(walk(tree["tree_structure"], 0))
    return {
        "feature": np.asarray(feature, np.int16),
        "threshold": np.asarray(threshold, np.float64),
        "left": np.asarray(left, np.int32),
        "right": np.asarray(right, np.int32),
        "value": np.asarray(value, np.float64),
        "roots": np.asarray(roots, np.int32),
        "depth": depth + 1,
    }


def choose(recs: list[dict], probs: list[np.ndarray]) -> list[dict]:
    """Per question: the chosen text, its probability, the runner-up's, its score and the candidates' indices best
    first (``order``; ties: the order the sources proposed them)."""
    out = []
    for r, p in zip(recs, probs):
        if len(p) == 0:
            out.append({"text": "", "p1": 0.0, "p2": 0.0, "score": 0.0, "order": []})
            continue
        order = [int(i) for i in np.lexsort((np.arange(len(p)), -np.round(p, 9)))]
        best = order[0]
        p2 = float(p[order[1]]) if len(p) > 1 else 0.0
        out.append(
            {
                "text": r["texts"][best],
                "p1": float(p[best]),
                "p2": p2,
                "score": float(r["scores"][best]),
                "order": order,
            }
        )
    return out


def train_bags(recs: list[dict], columns: list[int], seed: int, corpora: list[str], cache: Path, n: int = BAGS) -> list:
    """``n`` forests of :data:`BAG_ROUNDS` trees, the k-th trained without every n-th layout family (families in
    name order, those at positions k, k + n, ...), each seeded apart; kept in ``cache``."""
    families = sorted({r["family"] for r in recs})
    out = []
    for k in range(n):
        left_out = set(families[k::n])
        part = [r for r in recs if r["family"] not in left_out]
        out.append(cached_train(part, columns, seed + 1 + k, BAG_ROUNDS, corpora, cache))
    return out


def floored(chosen: list[dict], recs: list[dict], bags: list, columns: list[int]) -> list[dict]:
    """``chosen`` with each answer's ``floor``: the lowest probability the main forest and the bags give the chosen
    candidate (:meth:`Scorer.floor`), which the calibration weighs beside ``p1``."""
    if not bags:
        return chosen
    probs = [predict(b, recs, columns) for b in bags]
    out = []
    for i, c in enumerate(chosen):
        # a question without candidates has nothing to doubt: its floor is its own p1, so every row carries one
        # and fit_calibration weighs the bags on all of them
        j = c["order"][0] if c["order"] else None
        out.append(dict(c, floor=min([c["p1"]] + ([float(p[i][j]) for p in probs] if j is not None else []))))
    return out


def logits(p: np.ndarray) -> np.ndarray:
    """``log(p / (1 - p))`` of each probability, kept within [1e-6, 1 - 1e-6]."""
    p = np.clip(p, 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def new_kind_weights(recs: list[dict], seen: list[dict]) -> np.ndarray:
    """Sample weights for a calibration fit on ``recs`` predicted by trees trained on ``seen``: the records of a
    kind none of ``seen`` has (a new kind of page, not only a new layout of a known kind) weigh as much together as
    all the others, so the fit learns what a new kind does to the trees' certainty."""
    known = {r["kind"] for r in seen}
    new = np.array([r["kind"] not in known for r in recs])
    w = np.ones(len(recs))
    if new.any() and (~new).any():
        w[new] = (~new).sum() / new.sum()
    return w


def fit_calibration(chosen: list[dict], recs: list[dict], weights: np.ndarray | None = None) -> dict:
    """Logistic fit of 'the chosen answer is right' on logit(p1), the margin to the runner-up and, where the rows
    have a :func:`floored` ``floor``, how far the bags fall below the main forest (``logit(p1) - logit(floor)``)."""
    from sklearn.linear_model import LogisticRegression

    p1 = np.array([c["p1"] for c in chosen])
    p2 = np.array([c["p2"] for c in chosen])
    y = np.array([chosen_is_right(c, r) for c, r in zip(chosen, recs)], dtype=int)
    columns = [logits(p1), logits(p1) - logits(p2)]
    bagged = all("floor" in c for c in chosen)
    if bagged:
        columns.append(logits(p1) - logits(np.array([c["floor"] for c in chosen])))
    lr = LogisticRegression(C=10.0).fit(np.stack(columns, axis=1), y, sample_weight=weights)
    out = {"a": float(lr.intercept_[0]), "b": float(lr.coef_[0][0]), "c": float(lr.coef_[0][1])}
    if bagged:
        out["d"] = float(lr.coef_[0][2])
    return out


def chosen_is_right(c: dict, r: dict) -> bool:
    """Whether a :func:`choose` row is right: its question has answers and it scores above 0.5 (WildDoc's rule)."""
    if not r["answers"]:
        return False
    return c["score"] > 0.5


def calibrated(cal: dict, p1: float, p2: float, floor: float | None = None) -> float:
    """The calibrated confidence of an answer (:meth:`Scorer.confidence`)."""
    z = cal["a"] + cal["b"] * logits(np.array(p1)) + cal["c"] * (logits(np.array(p1)) - logits(np.array(p2)))
    if floor is not None and "d" in cal:
        z = z + cal["d"] * (logits(np.array(p1)) - logits(np.array(floor)))
    return float(1 / (1 + np.exp(-np.clip(z, -50, 50))))


# -- figures ---------------------------------------------------------------------------------------------


def ece(conf: np.ndarray, right: np.ndarray, bins: int = 10) -> float:
    """Expected calibration error (equal-width bins), in points."""
    total = 0.0
    for b in range(bins):
        lo, hi = b / bins, (b + 1) / bins
        sel = (conf >= lo) & ((conf < hi) if b < bins - 1 else (conf <= hi))
        if sel.any():
            total += sel.sum() * abs(conf[sel].mean() - right[sel].mean())
    return 100.0 * total / max(len(conf), 1)


def aurc(conf: np.ndarray, right: np.ndarray) -> float:
    """Area under the risk-coverage curve (answers taken most confident first), in points; lower is better."""
    order = np.argsort(-conf, kind="stable")
    wrong = 1 - right[order]
    risks = np.cumsum(wrong) / np.arange(1, len(wrong) + 1)
    return 100.0 * float(risks.mean()) if len(risks) else 0.0


def evaluate(recs: list[dict], chosen: list[dict], cal: dict) -> dict:
    """Figures of one part: ANLS of rules-only and the scorer overall, by kind and question family, clean and
    noisy; calibration figures of both confidences."""
    rows = []
    for r, c in zip(recs, chosen):
        conf = calibrated(cal, c["p1"], c["p2"], c.get("floor"))
        rules_right = bool(r["answers"]) and _score(r["rules_answer"], r["answers"]) > 0.5
        rows.append(
            {
                "kind": r["kind"],
                "qfamily": r["qfamily"],
                "noisy": r["noisy"],
                "answerable": bool(r["answers"]),
                "scorer": c["score"] if r["answers"] else None,
                "rules": _score(r["rules_answer"], r["answers"]) if r["answers"] else None,
                "conf": conf,
                "right": chosen_is_right(c, r),
                "rules_conf": RULES_CALIBRATION(r["rules_conf"], 0.0) if RULES_CALIBRATION else r["rules_conf"],
                "rules_right": rules_right,
            }
        )

    def table(key) -> dict:
        groups: dict[str, list[dict]] = defaultdict(list)
        for row in rows:
            if row["answerable"]:
                groups[key(row)].append(row)
        return {
            g: {
                "n": len(v),
                "rules": round(100 * np.mean([x["rules"] for x in v]), 1),
                "scorer": round(100 * np.mean([x["scorer"] for x in v]), 1),
            }
            for g, v in sorted(groups.items())
        }

    def calib(sel: list[dict]) -> dict:
        conf = np.array([x["conf"] for x in sel])
        right = np.array([x["right"] for x in sel], dtype=float)
        rconf = np.array([x["rules_conf"] for x in sel])
        rright = np.array([x["rules_right"] for x in sel], dtype=float)
        hi, rhi = conf >= 0.9, rconf >= 0.9
        return {
            "n": len(sel),
            "ece": round(ece(conf, right), 2),
            "aurc": round(aurc(conf, right), 2),
            "at_0.9": int(hi.sum()),
            "wrong_at_0.9": round(100 * float(1 - right[hi].mean()), 1) if hi.any() else None,
            "rules_ece": round(ece(rconf, rright), 2),
            "rules_aurc": round(aurc(rconf, rright), 2),
            "rules_at_0.9": int(rhi.sum()),
            "rules_wrong_at_0.9": round(100 * float(1 - rright[rhi].mean()), 1) if rhi.any() else None,
        }

    clean = [x for x in rows if not x["noisy"]]
    noisy = [x for x in rows if x["noisy"]]
    return {
        "overall": table(lambda x: "clean" if not x["noisy"] else "noisy"),
        "by_kind_clean": table(lambda x: x["kind"] if not x["noisy"] else "~"),
        "by_kind_noisy": table(lambda x: x["kind"] if x["noisy"] else "~"),
        "by_family_clean": table(lambda x: x["qfamily"] if not x["noisy"] else "~"),
        "calibration_clean": calib(clean),
        "calibration_noisy": calib(noisy),
        "unanswerable": {
            "n": sum(1 for x in rows if not x["answerable"]),
            "mean_conf": round(float(np.mean([x["conf"] for x in rows if not x["answerable"]] or [0])), 3),
        },
    }


def predict(booster, recs: list[dict], columns: list[int], drop: tuple[str, ...] = ()) -> list[np.ndarray]:
    """The trees' probability of every candidate of each record (none for a record without candidates), read on
    ``columns``, with the sources in ``drop`` taken out as :func:`_ablate` does."""
    out = []
    for r in recs:
        x, _ = _ablate(r, drop)
        out.append(booster.predict(x[:, columns]) if len(x) else np.zeros(0))
    return out


def _restrict(recs: list[dict], drop: tuple[str, ...]) -> list[dict]:
    """Records whose texts / scores / sources follow the ablation's candidate subset."""
    if not drop:
        return recs
    out = []
    for r in recs:
        keep = [i for i, s in enumerate(r["sources"]) if set(s) - set(drop)]
        out.append(
            dict(
                r,
                texts=[r["texts"][i] for i in keep],
                scores=r["scores"][keep],
                sources=[r["sources"][i] for i in keep],
                rows=r["rows"],
                labels=r["labels"],
            )
        )
    return out


def markdown(report: dict) -> str:
    lines = [
        f"# Reader scorer: leave-layout-family-out ({report['corpus']['docs']} documents, "
        f"{report['corpus']['questions']} questions, seed {report['seed']})",
        "",
        "Figures on the **test** families only (never trained or calibrated on). ANLS in points, answerable "
        "questions; `rules` = the rule cascade alone, `scorer` = every source chosen by the trained scorer.",
        "",
    ]
    t = report["test"]
    lines += ["| part | n | rules | scorer |", "|---|---|---|---|"]
    lines += [f"| {k} | {v['n']} | {v['rules']} | {v['scorer']} |" for k, v in t["overall"].items()]
    one = report.get("test_one_part")
    if one:
        lines += [
            "",
            "The shipped trees learn on the train and calibration families (the calibration is cross-fitted: "
            "each part predicted by trees trained on the other). Trained on the train families alone and "
            "calibrated on the calibration families, the same test families read: "
            + ", ".join(f"{k} {v['scorer']}" for k, v in one["overall"].items())
            + f"; clean ECE {one['calibration_clean']['ece']}, wrong at >= 0.9 "
            f"{one['calibration_clean']['wrong_at_0.9']} % of {one['calibration_clean']['at_0.9']}.",
        ]
    for name in ("by_kind_clean", "by_kind_noisy", "by_family_clean"):
        lines += ["", f"## {name.replace('_', ' ')}", "", "| group | n | rules | scorer |", "|---|---|---|---|"]
        lines += [f"| {k} | {v['n']} | {v['rules']} | {v['scorer']} |" for k, v in t[name].items() if k != "~"]
    lines += [
        "",
        "## Confidence",
        "",
        "| pages | n | ECE | wrong at >= 0.9 (n) | AURC | rules: ECE | wrong at >= 0.9 (n) | AURC |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in ("calibration_clean", "calibration_noisy"):
        c = t[name]
        lines.append(
            f"| {name.split('_')[1]} | {c['n']} | {c['ece']} | {c['wrong_at_0.9']} ({c['at_0.9']}) | {c['aurc']} | "
            f"{c['rules_ece']} | {c['rules_wrong_at_0.9']} ({c['rules_at_0.9']}) | {c['rules_aurc']} |"
        )
    lines += [
        "",
        f"Unanswerable questions: {t['unanswerable']['n']}, mean confidence {t['unanswerable']['mean_conf']}.",
    ]
    if report.get("ablations"):
        lines += ["", *ablation_lines(report["ablations"])]
    return "\n".join(lines) + "\n"


def ablation_lines(table: dict) -> list[str]:
    lines = [
        f"## Ablations (test families, clean / noisy ANLS; trees trained on the train families alone, "
        f"{ABLATION_ROUNDS} rounds)",
        "",
        "| removed | clean | noisy |",
        "|---|---|---|",
    ]
    return lines + [f"| {name} | {fig['clean']} | {fig['noisy']} |" for name, fig in table.items()]


def ablations_markdown(table: dict) -> str:
    """The ablations of ``--ablations-only``: for the shipped model's corpus, with its calibration."""
    head = [
        f"# Reader scorer ablations (model {table['model']}, corpus sha256 {table['corpus_sha256'][:12]}, "
        f"seed {table['seed']})",
        "",
    ]
    return "\n".join(head + ablation_lines(table["ablations"])) + "\n"


def ablations(train_recs: list[dict], test_recs: list[dict], columns: list[int], cal: dict, seed: int) -> dict:
    """Test-family ANLS (clean, noisy) of trees trained on the train families alone with every feature group and
    every source removed in turn, and of the same trees with nothing removed (the baseline of this table)."""
    out: dict[str, dict] = {}
    base = train(train_recs, columns, seed, ABLATION_ROUNDS)
    ev = evaluate(test_recs, choose(test_recs, predict(base, test_recs, columns)), cal)["overall"]
    out["nothing (the baseline of this table)"] = {k: ev.get(k, {}).get("scorer") for k in ("clean", "noisy")}
    for group, names in GROUPS.items():
        cols = [i for i, n in enumerate(FEATURE_NAMES) if n not in names]
        b = train(train_recs, cols, seed, ABLATION_ROUNDS)
        ev = evaluate(test_recs, choose(test_recs, predict(b, test_recs, cols)), cal)["overall"]
        out[f"features: {group}"] = {k: ev.get(k, {}).get("scorer") for k in ("clean", "noisy")}
        print(f"ablation features {group}: {out[f'features: {group}']}", file=sys.stderr)
    for source in SOURCE_NAMES:
        drop = (source,)
        b = train(train_recs, columns, seed, ABLATION_ROUNDS, drop)
        sub = _restrict(test_recs, drop)
        ev = evaluate(sub, choose(sub, predict(b, test_recs, columns, drop)), cal)["overall"]
        out[f"source: {source}"] = {k: ev.get(k, {}).get("scorer") for k in ("clean", "noisy")}
        print(f"ablation source {source}: {out[f'source: {source}']}", file=sys.stderr)
    return out


def printing_of(corpus: Path) -> dict:
    """The printing stack its builder recorded beside a corpus (``manifest.json``; empty when it recorded none)."""
    manifest = corpus.parent / "manifest.json"
    if not manifest.is_file():
        return {}
    return json.loads(manifest.read_text(encoding="utf-8")).get("printing", {})


#: The corpora the scorer learns from by default: the generated corpus and the broad set's development layouts.
DEFAULT_CORPORA = [str(ROOT / "out" / "readerset" / "docs.jsonl"), str(ROOT / "out" / "broadcorpus" / "docs.jsonl")]


#: Where candidates, features and trained trees are kept between runs.
DEFAULT_CACHE = str(ROOT / "out" / "reader_features")


def load_corpora(paths: list[str], limit: int = 0):
    """The documents of every corpus in ``paths`` (the first ``limit`` only, when given), each corpus's digest with
    its documents, and the digest of them all; a missing corpus ends the run with one line naming it."""
    docs: list[dict] = []
    digest = hashlib.sha256()
    corpora: list[tuple[str, list[dict]]] = []
    for path in paths:
        if not Path(path).is_file():
            raise SystemExit(
                f"{path}: no corpus there; build it with benchmarks/reader_corpus.py or benchmarks/broad_corpus.py "
                "(see benchmarks/train_reader.py's help)"
            )
        data = Path(path).read_bytes()
        digest.update(data)
        these = [json.loads(line) for line in data.decode("utf-8").splitlines() if line.strip()]
        if limit:
            these = these[: max(limit - len(docs), 0)]
        docs += these
        corpora.append((hashlib.sha256(data).hexdigest(), these))
    return docs, corpora, digest


def shown(path: Path) -> str:
    """``path`` relative to the repository when it lies inside it."""
    path = path.resolve()
    return path.relative_to(REPO).as_posix() if path.is_relative_to(REPO) else str(path)


def versions() -> dict[str, str]:
    from importlib.metadata import version

    out = {"python": platform.python_version()}
    for pkg in ("lightgbm", "numpy", "scikit-learn", "rapidfuzz", "docintent"):
        try:
            out[pkg] = version(pkg)
        except Exception:
            out[pkg] = "?"
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--corpus",
        nargs="+",
        default=DEFAULT_CORPORA,
        help="corpora in the training format (default: the generated corpus and the broad set's layouts)",
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--out", default=str(MODEL_DIR))
    ap.add_argument("--rounds", type=int, default=ROUNDS)
    ap.add_argument(
        "--bags",
        type=int,
        default=BAGS,
        help="forests trained each without every n-th layout family, weighed in the confidence (an experiment: 3)",
    )
    ap.add_argument("--ablations", action="store_true", help="retrain with each source / feature group removed")
    ap.add_argument(
        "--ablations-only",
        action="store_true",
        help="only the ablations, with the shipped model's calibration; writes reader_scorer_ablations.{json,md}",
    )
    ap.add_argument("--limit", type=int, default=0, help="use only the first N documents (a quick check)")
    ap.add_argument(
        "--cache",
        default=DEFAULT_CACHE,
        help="where candidates, features (keyed by corpus and reader code) and trained trees are kept between runs",
    )
    args = ap.parse_args()

    docs, corpora, digest = load_corpora(args.corpus, args.limit)
    parts = split_families(docs, args.seed)
    start = time.time()
    recs = cached_build(corpora, parts, args.workers, Path(args.cache))
    print(
        f"candidates and features: {time.time() - start:.0f} s "
        + ", ".join(f"{k} {len(v)} questions" for k, v in sorted(recs.items())),
        file=sys.stderr,
    )
    columns = list(range(len(FEATURE_NAMES)))
    train_recs, cal_recs, test_recs = recs["train"], recs["calibration"], recs["test"]
    if args.ablations_only:
        shipped = json.loads((Path(args.out) / MODEL_FILE).read_text(encoding="utf-8"))
        table = {"seed": args.seed, "corpus_sha256": digest.hexdigest(), "model": shipped["version"]}
        table["ablations"] = ablations(train_recs, test_recs, columns, shipped["calibration"], args.seed)
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "reader_scorer_ablations.json").write_text(json.dumps(table, indent=1) + "\n", encoding="utf-8")
        (RESULTS / "reader_scorer_ablations.md").write_text(ablations_markdown(table), encoding="utf-8")
        print(ablations_markdown(table))
        return
    # Cross-fitting: each of the two development parts is predicted by trees trained on the other, so the
    # calibration is fitted on predictions for families the trees never saw; the shipped trees learn on both.
    keys, boosters = [d for d, _ in corpora], Path(args.cache) / "boosters"
    on_train = cached_train(train_recs, columns, args.seed, args.rounds, keys, boosters)
    on_cal = cached_train(cal_recs, columns, args.seed, args.rounds, keys, boosters)
    # the bags of each part floor the other part's answers, as the shipped bags floor a new layout's
    bags_train = train_bags(train_recs, columns, args.seed, keys, boosters, args.bags)
    bags_cal = train_bags(cal_recs, columns, args.seed, keys, boosters, args.bags)
    on_cal_chosen = floored(choose(cal_recs, predict(on_train, cal_recs, columns)), cal_recs, bags_train, columns)
    on_train_chosen = floored(choose(train_recs, predict(on_cal, train_recs, columns)), train_recs, bags_cal, columns)
    held = cal_recs + train_recs
    weights = (
        np.concatenate([new_kind_weights(cal_recs, train_recs), new_kind_weights(train_recs, cal_recs)])
        if args.bags
        else None
    )
    cal = fit_calibration(on_cal_chosen + on_train_chosen, held, weights)
    strict_cal = fit_calibration(on_cal_chosen, cal_recs)
    booster = cached_train(train_recs + cal_recs, columns, args.seed, args.rounds, keys, boosters)
    bags = train_bags(train_recs + cal_recs, columns, args.seed, keys, boosters, args.bags)
    test_chosen = floored(choose(test_recs, predict(booster, test_recs, columns)), test_recs, bags, columns)
    n_q = sum(len(d["questions"]) for d in docs)
    report = {
        "seed": args.seed,
        "corpus": {
            "docs": len(docs),
            "questions": n_q,
            "sha256": digest.hexdigest(),
            "families": {p: sorted(f for f, v in parts.items() if v == p) for p in ("train", "calibration", "test")},
        },
        "calibration": cal,
        "test": evaluate(test_recs, test_chosen, cal),
        # the stricter scheme: trees trained on the train families alone, calibrated on the calibration ones
        "test_one_part": evaluate(
            test_recs,
            floored(choose(test_recs, predict(on_train, test_recs, columns)), test_recs, bags_train, columns),
            strict_cal,
        ),
    }

    if args.ablations:
        report["ablations"] = ablations(train_recs, test_recs, columns, cal, args.seed)

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    trees = flatten(booster)
    model = {
        "version": f"scorer-{digest.hexdigest()[:12]}-seed{args.seed}",
        "features": list(FEATURE_NAMES),
        "trees": TREES_FILE,
        "depth": trees.pop("depth"),
        "base": 0.0,
        "calibration": cal,
        "sources": proposing(train_recs + cal_recs),
    }
    model["tasks"], model["span_kinds"], model["shapes"] = coverage(docs, parts)
    if bags:
        model["bags"] = []
        for k, bag in enumerate(bags):
            flat = flatten(bag)
            name = BAG_FILE.format(k=k)
            model["bags"].append({"trees": name, "depth": flat.pop("depth"), "base": 0.0})
            np.savez_compressed(out / name, **flat)
    (out / MODEL_FILE).write_text(json.dumps(model, indent=1) + "\n", encoding="utf-8")
    # np.savez_compressed stamps no time into the archive, so the same trees give the same bytes
    np.savez_compressed(out / TREES_FILE, **trees)
    manifest = {
        "version": model["version"],
        "corpus_sha256": digest.hexdigest(),
        "corpus": [shown(Path(p)) for p in args.corpus],
        "corpus_sha256_each": [digest for digest, _ in corpora],
        # what printed each corpus (its builder's manifest): the corpus's bytes follow the Chromium and font versions
        "corpus_printing": [printing_of(Path(p)) for p in args.corpus],
        "documents": len(docs),
        "questions": n_q,
        "seed": args.seed,
        "trees_sha256": hashlib.sha256((out / TREES_FILE).read_bytes()).hexdigest(),
        "sources": model["sources"],
        "params": dict(PARAMS, rounds=args.rounds),
        "negatives_per_question": NEGATIVES,
        "noisy_share": NOISY_SHARE,
        "families": {p: len(v) for p, v in report["corpus"]["families"].items()},
        "tasks": model["tasks"],
        "span_kinds": model["span_kinds"],
        "shapes": model["shapes"],
        "split": report["corpus"]["families"],
        "libraries": versions(),
        "test": {"clean": report["test"]["overall"].get("clean"), "noisy": report["test"]["overall"].get("noisy")},
    }
    if bags:
        manifest["bags"] = {
            "rounds": BAG_ROUNDS,
            "sha256": [hashlib.sha256((out / b["trees"]).read_bytes()).hexdigest() for b in model["bags"]],
        }
    (out / "scorer.manifest.json").write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "reader_scorer.json").write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
    (RESULTS / "reader_scorer.md").write_text(markdown(report), encoding="utf-8")
    print(markdown(report))
    size = sum((out / f).stat().st_size for f in [TREES_FILE] + [b["trees"] for b in model.get("bags", [])])
    print(f"total {time.time() - start:.0f} s; model {size / 1e6:.2f} MB", file=sys.stderr)


if __name__ == "__main__":
    main()
