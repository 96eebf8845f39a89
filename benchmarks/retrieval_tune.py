"""Choose the retrieval parameters on the development queries only, and write the dev table.

Development sets: the generated ``dev`` queries (162) and the development half of the hand-written questions
(``handwritten-dev``, 26); ``test`` and ``handwritten-test`` are never loaded here. The two sets are combined
by the *macro* mean of their MRR@10 (each set counts half), so the 162 bookmark-like generated queries do not
drown the 26 questions written from page content, which are the kind users ask.

Stages, each fixing the best value of the one before (printed and saved as a table per stage):

1. lexical body BM25: tokeniser (docintent's older scheme, or words of 2+ characters as ``bm25s`` splits
   them), stop-word list (Lucene's 33 English words as in ``bm25s``, or docintent's longer list with question
   words), k1 and b;
2. field weights (headings, document title) over that body;
3. pseudo-relevance feedback (RM3-like: terms of the top pages added to the query);
4. dense: soft-max temperature of page = max over passages;
5. fusion of the lexical and dense rankings: reciprocal-rank fusion (k, dense weight, depth) and
   score fusion of normalised scores (min-max or z-score over the top pages, dense weight), the lexical
   half's heading weight chosen again;
6. a re-ranking of the fused top pages by their best passage under both matches (lexical and dense).

    python benchmarks/retrieval_tune.py --corpus benchmarks/out/texlive
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from docintent.retrieval import PageIndex  # noqa: E402
from docintent.retrieval.bm25 import BM25  # noqa: E402
from docintent.retrieval.fields import headings  # noqa: E402
from docintent.retrieval.text import LUCENE_STOPWORDS, QUESTION_WORDS, STOPWORDS, tokenize  # noqa: E402
from retrieval import RESULTS, load_sets  # noqa: E402

SETS = ("dev", "handwritten-dev")


def mrr_rows(ranked: list[np.ndarray], golds: list[set[int]]) -> dict[str, float]:
    """R@1, R@10, MRR@10 in percent for row rankings."""
    r1 = r10 = mrr = 0.0
    for top, gold in zip(ranked, golds):
        for i, r in enumerate(top[:10]):
            if int(r) in gold:
                r10 += 1
                mrr += 1 / (i + 1)
                r1 += i == 0
                break
    n = max(len(golds), 1)
    return {"R@1": round(100 * r1 / n, 1), "R@10": round(100 * r10 / n, 1), "MRR@10": round(100 * mrr / n, 1)}


def rank(scores: np.ndarray, k: int = 10) -> np.ndarray:
    """Rows of the k best scores (ties by row), positive or not."""
    k = min(k, len(scores))
    top = np.argpartition(-scores, k - 1)[:k]
    return top[np.lexsort((top, -scores[top]))]


class Dev:
    """The development queries as rows, and the objective (macro MRR@10 over the two sets)."""

    def __init__(self, index: PageIndex, sets: dict[str, list[dict]]) -> None:
        self.sets = sets
        self.golds = {name: [{index.row_of[h] for h in q["gold"]} for q in qs] for name, qs in sets.items()}
        self.queries = {name: [q["query"] for q in qs] for name, qs in sets.items()}

    def score(self, score_fn) -> dict:
        """Metrics per set and the objective for ``score_fn(set_name, i, query) -> page scores``."""
        out: dict = {}
        for name, qs in self.queries.items():
            ranked = [rank(score_fn(name, i, q)) for i, q in enumerate(qs)]
            out[name] = mrr_rows(ranked, self.golds[name])
        out["objective"] = round(float(np.mean([out[n]["MRR@10"] for n in self.queries])), 2)
        return out


def scheme_tokens(scheme: str, stop: frozenset[str], stemming: bool = False):
    def tok(text: str) -> list[str]:
        return tokenize(text, stopwords=stop, stemming=stemming, scheme=scheme)

    return tok


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="benchmarks/out/texlive")
    ap.add_argument("--out", default="retrieval_tune")
    ap.add_argument("--no-dense", action="store_true")
    args = ap.parse_args()
    corpus = Path(args.corpus)
    index = PageIndex.open(corpus / "index")
    dev = Dev(index, load_sets(corpus, index, list(SETS)))
    texts = index.texts
    heads = [headings(t) for t in texts]
    titles = [f"{r.doc_title} {Path(r.doc_path).stem}" for r in index.records()]
    tables: dict[str, list[dict]] = {}

    def record(stage: str, params: dict, res: dict) -> None:
        row = {
            **params,
            **{f"{n} MRR@10": res[n]["MRR@10"] for n in SETS},
            **{f"{n} R@1": res[n]["R@1"] for n in SETS},
            "objective": res["objective"],
        }
        tables.setdefault(stage, []).append(row)
        print(stage, row, file=sys.stderr, flush=True)

    def best(stage: str) -> dict:
        return max(tables[stage], key=lambda r: r["objective"])

    # 1. body BM25
    stops = {
        "lucene33": LUCENE_STOPWORDS,
        "lucene33+question": LUCENE_STOPWORDS | QUESTION_WORDS,
        "docintent-v1": STOPWORDS,
    }
    for scheme in ("words2", "alnum"):
        for stop_name, stop in stops.items():
            for stemming in (False, True):
                tok = scheme_tokens(scheme, stop, stemming)
                docs = [tok(t) for t in texts]
                for k1 in (0.9, 1.2, 1.5):
                    for b in (0.5, 0.75, 0.9):
                        model = BM25.fit(docs, k1=k1, b=b, stemming=False)
                        res = dev.score(lambda s, i, q, m=model, t=tok: m.scores(t(q)))
                        record(
                            "1 body",
                            {"tokens": scheme, "stop words": stop_name, "stemming": stemming, "k1": k1, "b": b},
                            res,
                        )
    b1 = best("1 body")
    tok = scheme_tokens(b1["tokens"], stops[b1["stop words"]], b1["stemming"])
    body = BM25.fit([tok(t) for t in texts], k1=b1["k1"], b=b1["b"], stemming=False)
    qterms = {name: [tok(q) for q in qs] for name, qs in dev.queries.items()}
    body_scores = {name: [body.scores(t) for t in ts] for name, ts in qterms.items()}

    # 2. field weights
    head = BM25.fit([tok(t) for t in heads], stemming=False)
    title = BM25.fit([tok(t) for t in titles], stemming=False)
    head_scores = {name: [head.scores(t) for t in ts] for name, ts in qterms.items()}
    title_scores = {name: [title.scores(t) for t in ts] for name, ts in qterms.items()}
    for wh in (0.0, 0.1, 0.2, 0.3, 0.5, 0.75, 1.0):
        for wt in (0.0, 0.1, 0.2, 0.3, 0.5):
            res = dev.score(
                lambda s, i, q, wh=wh, wt=wt: body_scores[s][i] + wh * head_scores[s][i] + wt * title_scores[s][i]
            )
            record("2 fields", {"head": wh, "title": wt}, res)
    b2 = best("2 fields")
    lex = {
        s: [
            body_scores[s][i] + b2["head"] * head_scores[s][i] + b2["title"] * title_scores[s][i] for i in range(len(v))
        ]
        for s, v in body_scores.items()
    }

    # 2b. BM25 over the passages (the dense retriever's windows), a page scoring its best passage
    from docintent.retrieval.passages import split_passages

    p_rows, p_toks = [], []
    for row, text in enumerate(texts):
        for part in split_passages(text):
            p_rows.append(row)
            p_toks.append(tok(part))
    p_rows_a = np.asarray(p_rows)
    pbm = BM25.fit(p_toks, k1=b1["k1"], b=b1["b"], stemming=False)

    def passage_max(terms: list[str]) -> np.ndarray:
        out = np.zeros(len(texts), dtype=np.float32)
        np.maximum.at(out, p_rows_a, pbm.scores(terms))
        return out

    pmax = {name: [passage_max(t) for t in ts] for name, ts in qterms.items()}
    for gamma in (0.0, 0.25, 0.5, 1.0, 2.0):
        res = dev.score(lambda s, i, q, g=gamma: lex[s][i] + g * pmax[s][i])
        record("2b passages", {"passage weight": gamma}, res)
    b2b = best("2b passages")
    lex = {s: [v[i] + b2b["passage weight"] * pmax[s][i] for i in range(len(v))] for s, v in lex.items()}

    # 3. pseudo-relevance feedback on the lexical side
    inv_vocab = {c: t for t, c in body.vocab.items()}
    weights_csr = body.weights.tocsr()

    def prf(scores: np.ndarray, terms: list[str], docs: int, n_terms: int, alpha: float, s, i) -> np.ndarray:
        top = rank(scores, docs)
        top = top[scores[top] > 0]
        if len(top) == 0:
            return scores
        sub = weights_csr[top]
        mass = np.asarray(sub.sum(axis=0)).ravel()  # summed BM25 weight of each term over the feedback pages
        qset = set(terms)
        order = np.argsort(-mass)
        extra = [inv_vocab[int(c)] for c in order[: n_terms + len(qset)] if inv_vocab[int(c)] not in qset][:n_terms]
        if not extra:
            return scores
        exp = body.scores(extra)
        return scores / max(float(scores.max()), 1e-9) * (1 - alpha) + alpha * exp / max(float(exp.max()), 1e-9)

    record("3 feedback", {"docs": 0, "terms": 0, "alpha": 0.0}, dev.score(lambda s, i, q: lex[s][i]))
    for docs in (3, 5, 10):
        for n_terms in (5, 10, 20):
            for alpha in (0.1, 0.2, 0.3, 0.5):
                res = dev.score(lambda s, i, q, d=docs, n=n_terms, a=alpha: prf(lex[s][i], qterms[s][i], d, n, a, s, i))
                record("3 feedback", {"docs": docs, "terms": n_terms, "alpha": alpha}, res)
    b3 = best("3 feedback")

    results: dict = {"sets": {n: len(v) for n, v in dev.sets.items()}, "objective": "mean of the two sets' MRR@10"}
    if not args.no_dense:
        from docintent.retrieval.passages import PassageEmbeddings, encode, load_sentence_model

        model = load_sentence_model()
        pe = PassageEmbeddings(index.directory, texts, model=model, progress=False)
        t0 = time.perf_counter()
        qvec = {name: encode(model, qs) for name, qs in dev.queries.items()}
        results["query_encode_ms"] = round(
            1000 * (time.perf_counter() - t0) / sum(len(v) for v in dev.queries.values()), 1
        )
        sims = {name: [pe.passage_scores(v) for v in vs] for name, vs in qvec.items()}
        rows = pe.rows
        n_pages = len(texts)

        def page_scores(ps: np.ndarray, temp: float) -> np.ndarray:
            best_ = np.full(n_pages, -1.0, dtype=np.float32)
            np.maximum.at(best_, rows, ps)
            if temp <= 0:
                return best_
            acc = np.zeros(n_pages)
            np.add.at(acc, rows, np.exp((ps - best_[rows]) / temp))
            return (best_ + temp * np.log(acc)).astype(np.float32)

        for temp in (0.0, 0.01, 0.02, 0.05, 0.1):
            dense_t = {s: [page_scores(p, temp) for p in v] for s, v in sims.items()}
            record("4 dense", {"temperature": temp}, dev.score(lambda s, i, q, d=dense_t: d[s][i]))
        b4 = best("4 dense")
        dense = {s: [page_scores(p, b4["temperature"]) for p in v] for s, v in sims.items()}
        lexf = {
            s: [
                prf(lex[s][i], qterms[s][i], b3["docs"], b3["terms"], b3["alpha"], s, i) if b3["docs"] else lex[s][i]
                for i in range(len(v))
            ]
            for s, v in lex.items()
        }

        def rrf(a: np.ndarray, d: np.ndarray, k: int, wd: float, depth: int) -> np.ndarray:
            out = np.zeros(n_pages)
            for arr, w in ((a, 1.0), (d, wd)):
                top = rank(arr, depth)
                if arr is a:
                    top = top[arr[top] > 0]
                out[top] += w / (k + np.arange(1, len(top) + 1))
            return out

        # The field weights are chosen again inside the fusion: a heading weight that suits the bookmark-like
        # generated queries may do better once the dense half carries the paraphrased questions.
        rrf_lex: list[tuple[str, dict]] = [(f"fields head {b2['head']}", lexf if b3["docs"] else lex)]
        for wh in (0.3, 0.5, 0.75, 1.0):
            if wh != b2["head"]:
                rrf_lex.append(
                    (
                        f"fields head {wh}",
                        {
                            s: [
                                body_scores[s][i]
                                + wh * head_scores[s][i]
                                + b2["title"] * title_scores[s][i]
                                + b2b["passage weight"] * pmax[s][i]
                                for i in range(len(v))
                            ]
                            for s, v in body_scores.items()
                        },
                    )
                )
        lex_of = dict(rrf_lex)
        for lexname, lexs in rrf_lex:
            for k in (1, 2, 3, 5, 10, 20, 60):
                for wd in (0.1, 0.15, 0.2, 0.25, 0.35, 0.5, 0.75, 1.0):
                    for depth in (20, 100, 1000):
                        res = dev.score(
                            lambda s, i, q, k=k, wd=wd, depth=depth, L=lexs: rrf(L[s][i], dense[s][i], k, wd, depth)
                        )
                        record("5 rrf", {"lexical": lexname, "k": k, "dense weight": wd, "depth": depth}, res)

        def norm(x: np.ndarray, how: str, depth: int) -> np.ndarray:
            top = rank(x, depth)
            v = x[top]
            if how == "minmax":
                lo, hi = float(v.min()), float(v.max())
                z = (x - lo) / max(hi - lo, 1e-9)
            else:
                z = (x - float(v.mean())) / max(float(v.std()), 1e-9)
            out = np.full(len(x), float(z[top].min()) if how == "minmax" else float(z[top].min()))
            out[top] = z[top]
            return out

        for lexname, lexs in rrf_lex:
            for how in ("minmax", "z"):
                for depth in (10, 20, 50, 100):
                    for wd in (0.2, 0.3, 0.4, 0.5, 0.6):
                        res = dev.score(
                            lambda s, i, q, h=how, depth=depth, wd=wd, L=lexs: (
                                (1 - wd) * norm(L[s][i], h, depth) + wd * norm(dense[s][i], h, depth)
                            )
                        )
                        record(
                            "5 score fusion", {"lexical": lexname, "norm": how, "depth": depth, "dense weight": wd}, res
                        )
        # 6. re-rank the fused top pages by their best passage under both matches (lexical and dense)
        b5, b5s = best("5 rrf"), best("5 score fusion")
        if b5["objective"] >= b5s["objective"]:
            lex5 = lex_of[b5["lexical"]]
            fused = {
                s: [rrf(lex5[s][i], dense[s][i], b5["k"], b5["dense weight"], b5["depth"]) for i in range(len(v))]
                for s, v in lex5.items()
            }
        else:
            lex5 = lex_of[b5s["lexical"]]
            wd5, h5, d5 = b5s["dense weight"], b5s["norm"], b5s["depth"]
            fused = {
                s: [(1 - wd5) * norm(lex5[s][i], h5, d5) + wd5 * norm(dense[s][i], h5, d5) for i in range(len(v))]
                for s, v in lex5.items()
            }
        p_lex = {name: [pbm.scores(t) for t in ts] for name, ts in qterms.items()}

        def rerank(f: np.ndarray, pl: np.ndarray, ps: np.ndarray, top_n: int, beta: float) -> np.ndarray:
            top = rank(f, top_n)
            mask = np.isin(p_rows_a, top)
            lexn = pl / max(float(pl[mask].max()), 1e-9)
            both = np.where(mask, 0.5 * lexn + 0.5 * ps, -1.0)
            best_p = np.full(n_pages, -1.0)
            np.maximum.at(best_p, p_rows_a, both)
            out = np.full(n_pages, -1e9)
            span = float(f[top].max() - f[top].min())
            fn = (f[top] - float(f[top].min())) / max(span, 1e-9)
            out[top] = (1 - beta) * fn + beta * best_p[top]
            return out

        for top_n in (10, 20, 30):
            for beta in (0.0, 0.1, 0.2, 0.3, 0.5):
                res = dev.score(lambda s, i, q, n=top_n, bt=beta: rerank(fused[s][i], p_lex[s][i], sims[s][i], n, bt))
                record("6 passage rerank", {"top": top_n, "weight": beta}, res)
    results["stages"] = tables
    results["chosen"] = {stage: best(stage) for stage in tables}
    results["load_average_end"] = round(os.getloadavg()[0], 1)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{args.out}.json").write_text(compact_json(results), encoding="utf-8")
    (RESULTS / f"{args.out}.md").write_text(markdown(results), encoding="utf-8")
    print(markdown(results))
    return 0


def compact_json(res: dict) -> str:
    """The results as JSON with one table row per line (the full grids run to a thousand rows)."""
    head = {k: v for k, v in res.items() if k != "stages"}
    stages = ",\n".join(
        f"  {json.dumps(stage)}: [\n" + ",\n".join("    " + json.dumps(row) for row in rows) + "\n  ]"
        for stage, rows in res["stages"].items()
    )
    return json.dumps(head, indent=1)[:-2] + ',\n "stages": {\n' + stages + "\n }\n}\n"


def markdown(res: dict) -> str:
    lines = [
        "# Retrieval parameters chosen on the development queries",
        "",
        "Development sets only: "
        + ", ".join(f"**{k}** {v}" for k, v in res["sets"].items())
        + f". Objective: {res['objective']} (percent). Each stage keeps the best row of the stage before; stage 5 "
        "chooses the heading weight of the fusion's lexical half again. "
        f"`benchmarks/retrieval_tune.py`; load average {res['load_average_end']} at the end.",
        "",
        "Best row of each stage (the library defaults follow stages 1, 2, 4 and the better of the two fusions; stages "
        "2b, 3 and 6 add code for gains of at most 0.3 and were left out):",
        "",
    ]
    for stage, row in res["chosen"].items():
        params = ", ".join(f"{k} {v}" for k, v in row.items() if "MRR" not in k and "R@1" not in k and k != "objective")
        lines.append(f"- {stage}: {params} (objective {row['objective']})")
    for stage, rows in res["stages"].items():
        rows = sorted(rows, key=lambda r: -r["objective"])
        keys = list(rows[0])
        lines += [
            "",
            f"## {stage} (best 12 of {len(rows)})",
            "",
            "| " + " | ".join(keys) + " |",
            "|" + "---|" * len(keys),
        ]
        lines += ["| " + " | ".join(str(r[k]) for k in keys) + " |" for r in rows[:12]]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
