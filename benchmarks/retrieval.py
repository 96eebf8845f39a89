"""Retrieval benchmark on the TeX Live documentation corpus (build it first with benchmarks/build_corpus.py).

Measures, and saves to benchmarks/results/retrieval.md and .json:

1. quality: BM25, dense, fusion and the search agent (offline planner) with its two ablations, on the
   VisDocAgentBench contract: Recall@1/3/5/10 and MRR@10 in percent, overall and by level;
2. BM25 engines on this corpus: ours (scipy.sparse), bm25s and tantivy: index time, query latency, quality;
3. index throughput (pages per minute, text layer vs OCR on a small sample), query latency p50/p95 at
   10k pages (the corpus duplicated under new handles), and index size per page.

    python benchmarks/retrieval.py --corpus benchmarks/out/texlive
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from docintent.evaluation.visdoc import LEVEL_NAMES, load_annotations, load_page_ids, load_queries, score
from docintent.retrieval import PageIndex, build_index, get_retriever, reciprocal_rank_fusion
from docintent.retrieval.agent import SearchAgent
from docintent.retrieval.bm25 import BM25
from docintent.retrieval.planners import OfflinePlanner
from docintent.retrieval.retrievers import FusionRetriever
from docintent.retrieval.text import tokenize

RESULTS = Path(__file__).resolve().parent / "results"
LATENCY_PAGES = 10_000


def percentile_ms(seconds: list[float], q: float) -> float:
    return round(1000.0 * float(np.percentile(seconds, q)), 2)


def run_static(retriever, queries) -> tuple[dict[str, list[str]], list[float]]:
    subs, times = {}, []
    for q in queries:
        t0 = time.perf_counter()
        subs[q.query_id] = [h.handle for h in retriever.search(q.query, 10)]
        times.append(time.perf_counter() - t0)
    return subs, times


def run_agent(agent, queries) -> tuple[dict[str, list[str]], list[float], dict]:
    subs, times, steps, forced = {}, [], [], 0
    for q in queries:
        result = agent.run(q.query)
        subs[q.query_id] = result.handles
        times.append(result.seconds)
        steps.append(result.steps)
        forced += result.forced
    return subs, times, {"mean_steps": round(float(np.mean(steps)), 2), "forced": forced}


def quality(index, queries, gold, known, with_dense: bool) -> list[dict]:
    rows = []
    retrievers = {"bm25": get_retriever(index, "bm25")}
    if with_dense:
        retrievers["dense"] = get_retriever(index, "dense", progress=False)
        retrievers["fusion"] = FusionRetriever(index, dense=retrievers["dense"])
    for name, retriever in retrievers.items():
        subs, times = run_static(retriever, queries)
        rows.append({"method": name, "scores": score(subs, gold, known=known), "p50_ms": percentile_ms(times, 50), "extra": {}})
        print(f"{name}: {rows[-1]['scores'].overall}", file=sys.stderr)
    shared = dict(retrievers)
    agent_methods = ["bm25"] + (["fusion"] if with_dense else [])
    configs = [(f"agent (offline, {m} searches)", dict(method=m), {}) for m in agent_methods]
    configs += [
        ("agent, no iterative search (top-30 judged)", dict(method="bm25"), {"iterative": False}),
        ("agent, no page inspection", dict(method="bm25"), {"inspection": False}),
    ]
    for name, planner_kw, agent_kw in configs:
        agent = SearchAgent(index, OfflinePlanner(**planner_kw), retrievers=shared, **agent_kw)
        subs, times, extra = run_agent(agent, queries)
        rows.append({"method": name, "scores": score(subs, gold, known=known), "p50_ms": percentile_ms(times, 50), "extra": extra})
        print(f"{name}: {rows[-1]['scores'].overall} {extra}", file=sys.stderr)
    return rows


def engines(index, queries, gold, known) -> list[dict]:
    """Our BM25 against bm25s and tantivy on the same pages and queries."""
    texts = index.texts
    handles = index.handles
    out = []
    tokens = [tokenize(t) for t in texts]

    def evaluate(name, build, search):
        t0 = time.perf_counter()
        engine = build()
        build_s = time.perf_counter() - t0
        subs, times = {}, []
        for q in queries:
            t1 = time.perf_counter()
            subs[q.query_id] = search(engine, q.query)
            times.append(time.perf_counter() - t1)
        s = score({k: (v + [h for h in handles if h not in v])[:10] for k, v in subs.items()}, gold, known=known)
        out.append(
            {"engine": name, "index_s": round(build_s, 3), "p50_ms": percentile_ms(times, 50), "p95_ms": percentile_ms(times, 95),
             "R@10": s.overall["R@10"], "MRR@10": s.overall["MRR@10"]}
        )

    def ours_search(bm, query):
        rows, _ = bm.top(tokenize(query), 10)
        return [handles[r] for r in rows]

    evaluate("docintent BM25 (scipy.sparse, our tokens)", lambda: BM25.fit(tokens), ours_search)
    try:
        import bm25s

        def bm25s_build():
            r = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
            r.index(tokens, show_progress=False)
            return r

        def bm25s_search(r, query):
            s = r.get_scores(tokenize(query))
            top = np.argsort(-s, kind="stable")[:10]
            return [handles[i] for i in top if s[i] > 0]

        evaluate(f"bm25s {bm25s.__version__} (lucene, our tokens)", bm25s_build, bm25s_search)
    except ImportError:
        print("bm25s not installed: skipped", file=sys.stderr)
    try:
        import tantivy

        def tantivy_build():
            sb = tantivy.SchemaBuilder()
            sb.add_text_field("handle", stored=True, tokenizer_name="raw")
            sb.add_text_field("body", stored=False, tokenizer_name="en_stem")
            schema = sb.build()
            ix = tantivy.Index(schema)
            writer = ix.writer(heap_size=50_000_000, num_threads=1)
            for h, t in zip(handles, texts):
                writer.add_document(tantivy.Document(handle=h, body=t))
            writer.commit()
            ix.reload()
            return ix

        def tantivy_search(ix, query):
            words = " ".join(tokenize(query, stemming=False))
            if not words:
                return []
            searcher = ix.searcher()
            parsed = ix.parse_query(words, ["body"])
            return [searcher.doc(addr)["handle"][0] for _, addr in searcher.search(parsed, 10).hits]

        evaluate("tantivy (en_stem tokenizer, in memory)", tantivy_build, tantivy_search)
    except ImportError:
        print("tantivy not installed: skipped", file=sys.stderr)
    return out


def throughput(docs: list[str], sample_ocr: int) -> dict:
    tmp = Path(tempfile.mkdtemp(prefix="docintent-bench-"))
    try:
        report = build_index(docs, tmp / "text", text="pdf", progress=False)
        text_ppm = report.pages_per_minute
        from docintent.ocr import get_engine

        out = {"text_layer_pages": report.pages_processed, "text_layer_pages_per_minute": round(text_ppm, 1), "ocr": {}}
        for kind in ("rapidocr", "tesseract"):
            try:
                engine = get_engine(kind, cache=False)
                few = build_index(docs[:3], tmp / f"ocr-{kind}", text="ocr", ocr=engine, limit=sample_ocr, progress=False)
            except ImportError as err:
                print(f"{kind}: skipped ({err})", file=sys.stderr)
                continue
            out["ocr"][kind] = {"pages": few.pages_processed, "pages_per_minute": round(few.pages_per_minute, 2)}
        return out
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def latency_10k(index, queries, with_dense: bool) -> dict:
    """BM25 / dense / fusion query latency with the corpus repeated until it holds at least 10k pages."""
    import scipy.sparse as sp

    copies = -(-LATENCY_PAGES // len(index))
    bm = index.bm25
    big = BM25(sp.vstack([bm.weights] * copies).tocsc(), bm.vocab, k1=bm.k1, b=bm.b, idf=bm.idf_kind)
    n_pages = big.n_docs
    times = []
    for q in queries:
        t0 = time.perf_counter()
        big.top(tokenize(q.query), 10)
        times.append(time.perf_counter() - t0)
    out = {"pages": n_pages, "copies": copies, "bm25": {"p50_ms": percentile_ms(times, 50), "p95_ms": percentile_ms(times, 95)}}
    if with_dense:
        dense = get_retriever(index, "dense", progress=False)
        emb = np.vstack([dense.embeddings] * copies)
        d_times, f_times = [], []
        for q in queries:
            t0 = time.perf_counter()
            v = dense.model.encode([q.query], normalize_embeddings=True, convert_to_numpy=True)[0]
            sims = emb @ v
            top = np.argpartition(-sims, 1000)[:1000]
            dense_rank = top[np.argsort(-sims[top])]
            t1 = time.perf_counter()
            rows, _ = big.top(tokenize(q.query), 1000)
            reciprocal_rank_fusion([[str(r) for r in rows], [str(r) for r in dense_rank]])[:10]
            t2 = time.perf_counter()
            d_times.append(t1 - t0)
            f_times.append(t2 - t0)
        out["dense"] = {"p50_ms": percentile_ms(d_times, 50), "p95_ms": percentile_ms(d_times, 95)}
        out["fusion"] = {"p50_ms": percentile_ms(f_times, 50), "p95_ms": percentile_ms(f_times, 95)}
    return out


def size_per_page(index) -> dict:
    files = {p.name: p.stat().st_size for p in index.directory.iterdir() if p.is_file()}
    core = sum(v for k, v in files.items() if not k.startswith("dense_"))
    dense = sum(v for k, v in files.items() if k.startswith("dense_"))
    return {"bytes_per_page_text_and_bm25": round(core / len(index)), "bytes_per_page_dense": round(dense / len(index)), "files": files}


def markdown(meta, rows, engine_rows, perf) -> str:
    levels = [name for name in LEVEL_NAMES.values() if any(name in r["scores"].by_level for r in rows)]
    lines = [
        "# Retrieval on TeX Live documentation (VisDocAgentBench contract)",
        "",
        f"Corpus: {meta['documents']} PDFs of `{meta['source']}` with at most {meta['max_doc_pages']} pages each, "
        f"{meta['pages']} pages; {meta['n_queries']} queries ({', '.join(f'{k} {v}' for k, v in meta['queries'].items())}). "
        f"Machine: {meta['machine']}. Percent; invalid submissions score 0.",
        "",
        "| method | R@1 | R@3 | R@5 | R@10 | MRR@10 | " + " | ".join(f"{lv} R@10 / MRR@10" for lv in levels) + " | p50 s/query | steps |",
        "|---|---|---|---|---|---|" + "---|" * len(levels) + "---|---|",
    ]
    for r in rows:
        o = r["scores"].overall
        per_level = " | ".join(
            f"{r['scores'].by_level[lv]['R@10']:.1f} / {r['scores'].by_level[lv]['MRR@10']:.1f}" if lv in r["scores"].by_level else "-"
            for lv in levels
        )
        steps = r["extra"].get("mean_steps", "-")
        lines.append(
            f"| {r['method']} | {o['R@1']:.1f} | {o['R@3']:.1f} | {o['R@5']:.1f} | {o['R@10']:.1f} | {o['MRR@10']:.1f} | {per_level} | "
            f"{r['p50_ms'] / 1000:.3f} | {steps} |"
        )
    lines += ["", "## BM25 engines on this corpus", "", "| engine | index s | p50 ms | p95 ms | R@10 | MRR@10 |", "|---|---|---|---|---|---|"]
    for e in engine_rows:
        lines.append(f"| {e['engine']} | {e['index_s']} | {e['p50_ms']} | {e['p95_ms']} | {e['R@10']:.1f} | {e['MRR@10']:.1f} |")
    t, lat, size = perf["throughput"], perf["latency"], perf["size"]
    lines += [
        "",
        "## Speed and size",
        "",
        f"- Index throughput (2 shared cores): text layer {t['text_layer_pages_per_minute']:,.0f} pages/min over {t['text_layer_pages']} pages; "
        "OCR " + ", ".join(f"{k} {v['pages_per_minute']:.1f} pages/min" for k, v in t["ocr"].items())
        + f" on a sample of {max((v['pages'] for v in t['ocr'].values()), default=0)} pages (first model load included).",
        f"- Query latency at {lat['pages']:,} pages (the corpus repeated {lat['copies']} times under new rows): "
        + "; ".join(f"{m} p50 {lat[m]['p50_ms']} ms, p95 {lat[m]['p95_ms']} ms" for m in ("bm25", "dense", "fusion") if m in lat)
        + ".",
        f"- Index size: {size['bytes_per_page_text_and_bm25'] / 1024:.1f} kB/page for SQLite text + metadata + BM25; "
        f"dense embeddings {size['bytes_per_page_dense'] / 1024:.1f} kB/page; page images are re-rendered from the PDFs (0 bytes).",
    ]
    return "\n".join(lines) + "\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="benchmarks/out/texlive")
    ap.add_argument("--no-dense", action="store_true", help="skip dense and fusion (no docintent[dense])")
    ap.add_argument("--ocr-sample", type=int, default=4, help="pages OCR'd for the throughput figure")
    args = ap.parse_args()
    corpus = Path(args.corpus)
    index = PageIndex.open(corpus / "index")
    queries, gold, known = load_queries(corpus), load_annotations(corpus), load_page_ids(corpus)
    info = json.loads((corpus / "corpus.json").read_text())
    with_dense = not args.no_dense
    if with_dense:
        try:
            import sentence_transformers  # noqa: F401
        except ImportError:
            print("sentence-transformers missing: dense and fusion skipped (pip install 'docintent[dense]')", file=sys.stderr)
            with_dense = False
    meta = {
        "source": info["source"], "documents": info["documents"], "pages": len(index), "max_doc_pages": info["max_doc_pages"],
        "queries": {LEVEL_NAMES[lv]: sum(1 for a in gold.values() if a.level == lv) for lv in sorted({a.level for a in gold.values()})},
        "n_queries": len(queries), "machine": f"{os.cpu_count()} CPU cores ({platform.machine()}), no GPU",
    }
    rows = quality(index, queries, gold, known, with_dense)
    engine_rows = engines(index, queries, gold, known)
    perf = {
        "throughput": throughput(info["documents_list"], args.ocr_sample),
        "latency": latency_10k(index, queries, with_dense),
        "size": size_per_page(index),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    md = markdown(meta, rows, engine_rows, perf)
    (RESULTS / "retrieval.md").write_text(md, encoding="utf-8")
    data = {
        "meta": meta,
        "quality": [{"method": r["method"], **r["scores"].to_dict(), "p50_ms": r["p50_ms"], **r["extra"]} for r in rows],
        "engines": engine_rows,
        "performance": perf,
    }
    (RESULTS / "retrieval.json").write_text(json.dumps(data, indent=2), encoding="utf-8")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
