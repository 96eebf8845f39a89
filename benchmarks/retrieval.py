"""Retrieval benchmark on the TeX Live documentation corpus (build it first with benchmarks/build_corpus.py).

Query sets (``benchmarks/data/README.md``): the generated queries split by document into dev and test
(``texlive_split.json``), and 68 questions written from page content (``texlive_questions.jsonl``), split
into halves by the same rule (``handwritten-dev`` 26, ``handwritten-test`` 42). Parameters were chosen on
dev + handwritten-dev; ``handwritten-test`` and ``test`` were never tuned on. On each set, in this script:

- outside references on the same pages: plain ``bm25s`` (its own tokeniser, English stop words, k1 1.2,
  b 0.75) and ``tantivy`` (its ``en_stem`` analyser, default BM25);
- docintent ``bm25`` (field-weighted), ``bm25`` body only, ``dense`` and ``fusion`` (when the passage
  embeddings exist or ``--embed`` builds them) and the search ``agent`` (offline planner), with its first
  search's R@1 beside it;
- Recall@1/10 and MRR@10 in percent, overall and by kind (direct / one-bridge); query latency p50/p95.

Also: index build time and size with the derived field files, passage counts, embedding throughput on a
sample of passages (and the full-corpus time it implies when ``--embed`` is not given).

The parameters themselves are chosen by ``benchmarks/retrieval_tune.py`` (dev sets only). An index built
with older BM25 defaults gets its body refitted first (``refit_bm25``; page texts and passage embeddings
are kept).

    python benchmarks/retrieval.py --corpus benchmarks/out/texlive             # test + hand-written
    python benchmarks/retrieval.py --sets dev                                  # development runs
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

from docintent.retrieval import PageIndex
from docintent.retrieval.agent import SearchAgent
from docintent.retrieval.fields import FieldScorer
from docintent.retrieval.passages import PassageEmbeddings, split_passages
from docintent.retrieval.planners import OfflinePlanner
from docintent.retrieval.retrievers import BM25Retriever, DenseRetriever, FusionRetriever

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
DATA = HERE / "data"
KINDS = {1: "direct", 2: "one-bridge"}


def load_sets(corpus: Path, index: PageIndex, names: list[str]) -> dict[str, list[dict]]:
    """Query sets as lists of {id, query, kind, gold (set of handles)}."""
    split = json.loads((DATA / "texlive_split.json").read_text())["queries"]
    gold = {}
    for line in (corpus / "evaluator_annotations.jsonl").read_text().splitlines():
        row = json.loads(line)
        gold[row["query_id"]] = row
    sets: dict[str, list[dict]] = {}
    for name in names:
        if name in ("dev", "test"):
            rows = []
            for line in (corpus / "queries.jsonl").read_text().splitlines():
                q = json.loads(line)
                if split[q["query_id"]]["split"] == name:
                    g = gold[q["query_id"]]
                    rows.append(
                        {
                            "id": q["query_id"],
                            "query": q["query"],
                            "kind": KINDS[g["level"]],
                            "gold": {g["answer_page_id"]},
                        }
                    )
            sets[name] = rows
        elif name.startswith("handwritten"):
            from split_queries import split_of

            half = name.partition("-")[2]  # "", "dev" or "test": the half by the split rule of the gold document
            where = {(Path(r.doc_path).name, r.page_no + 1): r.handle for r in index.records()}
            rows = []
            for line in (DATA / "texlive_questions.jsonl").read_text().splitlines():
                q = json.loads(line)
                if half and split_of(q["gold"][0]["document"]) != half:
                    continue
                handles = {where[(g["document"], g["page"])] for g in q["gold"] if (g["document"], g["page"]) in where}
                rows.append({"id": q["id"], "query": q["question"], "kind": q["kind"], "gold": handles})
            sets[name] = rows
    return sets


def metrics(rankings: dict[str, list[str]], queries: list[dict]) -> dict:
    """R@1, R@10, MRR@10 (percent) overall and by kind; a hit is the first gold page in the top 10."""

    def block(qs):
        r1 = r10 = mrr = 0.0
        for q in qs:
            top = rankings[q["id"]][:10]
            ranks = [i for i, h in enumerate(top) if h in q["gold"]]
            if ranks:
                r10 += 1
                mrr += 1 / (ranks[0] + 1)
                r1 += ranks[0] == 0
        n = max(len(qs), 1)
        return {
            "n": len(qs),
            "R@1": round(100 * r1 / n, 1),
            "R@10": round(100 * r10 / n, 1),
            "MRR@10": round(100 * mrr / n, 1),
        }

    out = {"all": block(queries)}
    for kind in ("direct", "one-bridge"):
        out[kind] = block([q for q in queries if q["kind"] == kind])
    return out


def pct(seconds: list[float], q: float) -> float:
    return round(1000.0 * float(np.percentile(seconds, q)), 2) if seconds else 0.0


class Plain:
    """The outside references, built on the same page texts."""

    @staticmethod
    def bm25s(index: PageIndex):
        import bm25s

        t0 = time.perf_counter()
        model = bm25s.BM25(k1=1.2, b=0.75)
        model.index(bm25s.tokenize(index.texts, stopwords="en", show_progress=False), show_progress=False)
        build = time.perf_counter() - t0
        handles = index.handles

        def search(query: str) -> list[str]:
            tokens = bm25s.tokenize([query], stopwords="en", show_progress=False)
            if not tokens.vocab:
                return []
            docs, scores = model.retrieve(tokens, k=10, show_progress=False)
            return [handles[int(d)] for d, s in zip(docs[0], scores[0]) if s > 0]

        return f"plain bm25s {bm25s.__version__}", search, build

    @staticmethod
    def tantivy(index: PageIndex):
        import tantivy

        t0 = time.perf_counter()
        sb = tantivy.SchemaBuilder()
        sb.add_text_field("handle", stored=True, tokenizer_name="raw")
        sb.add_text_field("body", stored=False, tokenizer_name="en_stem")
        ix = tantivy.Index(sb.build())
        writer = ix.writer(heap_size=50_000_000, num_threads=1)
        for h, t in zip(index.handles, index.texts):
            writer.add_document(tantivy.Document(handle=h, body=t))
        writer.commit()
        ix.reload()
        build = time.perf_counter() - t0
        searcher = ix.searcher()

        def search(query: str) -> list[str]:
            words = " ".join("".join(c if c.isalnum() else " " for c in query).split())
            if not words:
                return []
            parsed = ix.parse_query(words, ["body"])
            return [searcher.doc(addr)["handle"][0] for _, addr in searcher.search(parsed, 10).hits]

        return "tantivy (en_stem)", search, build


def run_method(search, queries: list[dict]) -> tuple[dict[str, list[str]], list[float]]:
    rankings, times = {}, []
    for q in queries:
        t0 = time.perf_counter()
        rankings[q["id"]] = list(search(q["query"]))[:10]
        times.append(time.perf_counter() - t0)
    return rankings, times


def embedding_sample(index: PageIndex, n: int) -> dict:
    """Passages per page and embedding throughput on ``n`` passages (model load excluded)."""
    from docintent.retrieval.passages import encode, load_sentence_model

    counts = [len(split_passages(t)) for t in index.texts]
    model = load_sentence_model()
    rng = np.random.default_rng(0)
    rows = rng.choice(len(index), size=min(n, len(index)), replace=False)
    sample = [split_passages(index.texts[int(r)])[0] for r in rows][:n]
    encode(model, sample[:2])
    t0 = time.perf_counter()
    encode(model, sample)
    seconds = time.perf_counter() - t0
    total = int(sum(counts))
    return {
        "passages": total,
        "passages_per_page": round(total / len(index), 2),
        "sample": len(sample),
        "sample_passages_per_second": round(len(sample) / seconds, 2),
        "full_corpus_hours_at_that_rate": round(total / (len(sample) / seconds) / 3600, 2),
        "bytes_float16": total * 384 * 2 + total * 4,
        "load_average": round(os.getloadavg()[0], 1),
    }


def index_costs(corpus: Path) -> dict:
    """Build time and bytes of the BM25 body and the derived field models, on a copy of the index."""
    from docintent.retrieval.index import write_bm25

    tmp = corpus / "_cost_copy"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir()
    shutil.copy(corpus / "index" / "index.sqlite", tmp / "index.sqlite")
    con = sqlite3.connect(str(tmp / "index.sqlite"))
    t0 = time.perf_counter()
    write_bm25(con, tmp)
    body_s = time.perf_counter() - t0
    con.close()
    index = PageIndex.open(tmp)
    fields = FieldScorer(index)
    t0 = time.perf_counter()
    _ = fields.head, fields.title
    fields_s = time.perf_counter() - t0
    size = {p.name: p.stat().st_size for p in tmp.iterdir() if p.is_file()}
    pages = len(index)
    index.close()
    shutil.rmtree(tmp, ignore_errors=True)
    core = sum(
        v for k, v in size.items() if k.startswith("index.sqlite") or k.startswith("bm25.") or k == "bm25_vocab.json"
    )
    derived = sum(v for k, v in size.items() if k.startswith(("bm25_head", "bm25_title")))
    return {
        "pages": pages,
        "bm25_body_s": round(body_s, 2),
        "field_models_s": round(fields_s, 2),
        "bytes_per_page_core": round(core / pages),
        "bytes_per_page_fields": round(derived / pages),
    }


def defaults() -> dict:
    """The library defaults this run measured (chosen on dev by ``benchmarks/retrieval_tune.py``)."""
    from docintent.retrieval import fields, retrievers
    from docintent.retrieval.index import INDEX_B, INDEX_K1
    from docintent.retrieval.text import INDEX_TOKENIZER

    return {
        "tokenizer": INDEX_TOKENIZER,
        "k1": INDEX_K1,
        "b": INDEX_B,
        "head_weight": fields.HEAD_WEIGHT,
        "title_weight": fields.TITLE_WEIGHT,
        "fusion_mode": retrievers.FUSION_MODE,
        "fusion_depth": retrievers.FUSION_DEPTH,
        "fusion_weights": list(retrievers.FUSION_WEIGHTS),
        "fusion_head_weight": retrievers.FUSION_HEAD_WEIGHT,
        "dense_temperature": retrievers.DENSE_TEMPERATURE,
    }


def refit_bm25(directory: Path) -> bool:
    """Refit the BM25 body of an index built with other tokeniser or k1/b defaults than the current ones.

    The page texts do not change, so passage embeddings that were fresh stay so (their freshness is judged
    against ``bm25.npz``'s time). Returns whether it refitted.
    """
    from docintent.retrieval.bm25 import BM25
    from docintent.retrieval.index import INDEX_B, INDEX_K1, write_bm25
    from docintent.retrieval.text import INDEX_TOKENIZER

    bm = BM25.load(directory)
    if (bm.tokenizer, bm.k1, bm.b) == (INDEX_TOKENIZER, INDEX_K1, INDEX_B):
        return False
    body = directory / "bm25.npz"
    kept = [p for p in directory.glob("passages_*.npy") if p.stat().st_mtime >= body.stat().st_mtime]
    con = sqlite3.connect(str(directory / "index.sqlite"))
    try:
        write_bm25(con, directory)
    finally:
        con.close()
    for path in kept:
        path.touch()
    print(
        f"refitted the BM25 body ({bm.tokenizer}, k1 {bm.k1}, b {bm.b} -> {INDEX_TOKENIZER}, k1 {INDEX_K1}, b {INDEX_B})",
        file=sys.stderr,
    )
    return True


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="benchmarks/out/texlive")
    ap.add_argument(
        "--sets",
        default="test,handwritten,handwritten-test",
        help="comma list of dev, test, handwritten, handwritten-dev, handwritten-test",
    )
    ap.add_argument("--embed", action="store_true", help="build the full passage embeddings (hours on 2 busy cores)")
    ap.add_argument("--embed-sample", type=int, default=32, help="passages timed for the throughput figure (0: skip)")
    ap.add_argument("--no-agent", action="store_true")
    ap.add_argument("--out", default=None, help="results name (default retrieval, or retrieval_dev for --sets dev)")
    args = ap.parse_args()
    corpus = Path(args.corpus)
    refit_bm25(corpus / "index")
    index = PageIndex.open(corpus / "index")
    names = args.sets.split(",")
    sets = load_sets(corpus, index, names)
    bm25 = BM25Retriever(index)
    bm25.search("warm up the field models", 1)
    body = BM25Retriever(index, fields=False)
    methods = []
    for make in (Plain.bm25s, Plain.tantivy):
        try:
            methods.append(make(index)[:2])
        except ImportError as err:
            print(f"skipped an outside reference: {err}", file=sys.stderr)
    methods += [
        ("docintent bm25 (body only)", lambda q: [h.handle for h in body.search(q, 10)]),
        ("docintent bm25", lambda q: [h.handle for h in bm25.search(q, 10)]),
    ]
    retrievers: dict = {"bm25": bm25}
    dense_ready = PassageEmbeddings(index.directory, index.texts).stem.with_suffix(".npy").is_file()
    if dense_ready or args.embed:
        dense = DenseRetriever(index, progress=False)
        fusion = FusionRetriever(index, dense=dense)
        retrievers.update(dense=dense, fusion=fusion)
        methods += [
            ("docintent dense", lambda q: [h.handle for h in dense.search(q, 10)]),
            ("docintent fusion", lambda q: [h.handle for h in fusion.search(q, 10)]),
        ]
    first_method = "fusion" if "fusion" in retrievers else "bm25"
    results: dict = {
        "meta": {
            "pages": len(index),
            "machine": f"{os.cpu_count()} CPU cores ({platform.machine()}), no GPU",
            "sets": {
                k: {
                    "n": len(v),
                    "direct": sum(q["kind"] == "direct" for q in v),
                    "one-bridge": sum(q["kind"] == "one-bridge" for q in v),
                }
                for k, v in sets.items()
            },
            "agent_searches": first_method,
            "defaults": defaults(),
        },
        "quality": {},
        "latency_ms": {},
    }
    for set_name, queries in sets.items():
        rows = {}
        for name, search in methods:
            rankings, times = run_method(search, queries)
            rows[name] = metrics(rankings, queries)
            results["latency_ms"].setdefault(name, []).extend(times)
            print(f"{set_name} {name}: {rows[name]['all']}", file=sys.stderr, flush=True)
        if not args.no_agent:
            agent = SearchAgent(index, OfflinePlanner(method=first_method), retrievers=retrievers)
            rankings, firsts, times = {}, {}, []
            for q in queries:
                result = agent.run(q["query"])
                rankings[q["id"]] = result.handles
                searches = [s for s in result.trace if s.tool == "search"]
                firsts[q["id"]] = searches[0].data.get("results", [])[:10] if searches else []
                times.append(result.seconds)
            name = f"docintent agent (offline, {first_method} searches)"
            rows[name] = metrics(rankings, queries)
            rows["agent's first search"] = metrics(firsts, queries)
            results["latency_ms"].setdefault(name, []).extend(times)
            first_all = rows["agent's first search"]["all"]
            print(f"{set_name} {name}: {rows[name]['all']} first {first_all}", file=sys.stderr, flush=True)
        results["quality"][set_name] = rows
    results["latency_ms"] = {
        k: {"p50": pct(v, 50), "p95": pct(v, 95), "n": len(v)} for k, v in results["latency_ms"].items()
    }
    results["meta"]["load_average_end"] = round(os.getloadavg()[0], 1)
    if "dev" not in names:
        results["index"] = index_costs(corpus)
        if args.embed_sample:
            try:
                results["embedding"] = embedding_sample(index, args.embed_sample)
            except ImportError as err:
                print(f"embedding throughput skipped: {err}", file=sys.stderr)
    name = args.out or ("retrieval_dev" if names == ["dev"] else "retrieval")
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(results, indent=2), encoding="utf-8")
    md = markdown(results)
    (RESULTS / f"{name}.md").write_text(md, encoding="utf-8")
    print(md)
    return 0


def markdown(res: dict) -> str:
    meta = res["meta"]
    lines = [
        "# Page retrieval on the TeX Live documentation",
        "",
        f"{meta['pages']:,} pages (`benchmarks/build_corpus.py`). Query sets: "
        + "; ".join(
            f"**{k}** {v['n']} ({v['direct']} direct, {v['one-bridge']} one-bridge)" for k, v in meta["sets"].items()
        )
        + ". Percent. Parameters were chosen on the generated dev queries and the dev half of the hand-written questions; "
        "`test` and `handwritten-test` were never tuned on (`handwritten` is both halves). "
        f"{meta['machine']}, load average {meta['load_average_end']} at the end.",
    ]
    d = meta.get("defaults")
    if d:
        lines += [
            "",
            f"Defaults measured: tokeniser {d['tokenizer']}, k1 {d['k1']}, b {d['b']}; bm25 field weights heading "
            f"{d['head_weight']}, title {d['title_weight']}; fusion {d['fusion_mode']} over the top {d['fusion_depth']} of "
            f"each list, weights (BM25, dense) {tuple(d['fusion_weights'])}, heading weight {d['fusion_head_weight']}; "
            f"dense soft-max temperature {d['dense_temperature']}.",
        ]
    for set_name, rows in res["quality"].items():
        lines += [
            "",
            f"## {set_name}",
            "",
            "| method | R@1 | R@10 | MRR@10 | direct R@1 / R@10 / MRR | one-bridge R@1 / R@10 / MRR |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for name, m in rows.items():
            a, d, b = m["all"], m["direct"], m["one-bridge"]
            lines.append(
                f"| {name} | {a['R@1']} | {a['R@10']} | {a['MRR@10']} | {d['R@1']} / {d['R@10']} / {d['MRR@10']} | "
                f"{b['R@1']} / {b['R@10']} / {b['MRR@10']} |"
            )
    lines += [
        "",
        "## Query latency (all queries above, full corpus)",
        "",
        "| method | p50 ms | p95 ms | queries |",
        "|---|---:|---:|---:|",
    ]
    for name, v in res["latency_ms"].items():
        lines.append(f"| {name} | {v['p50']} | {v['p95']} | {v['n']} |")
    if "index" in res:
        ix = res["index"]
        lines += [
            "",
            "## Index",
            "",
            f"- BM25 body model: {ix['bm25_body_s']} s for {ix['pages']:,} pages; heading and title field models "
            f"(derived files, built on first search): {ix['field_models_s']} s.",
            f"- Size: {ix['bytes_per_page_core'] / 1024:.1f} kB/page (SQLite text + provenance + BM25 body), "
            f"+{ix['bytes_per_page_fields'] / 1024:.1f} kB/page for the field models.",
        ]
    if "embedding" in res:
        e = res["embedding"]
        lines += [
            f"- Passages (160 words, stride 120): {e['passages']:,} ({e['passages_per_page']} per page), "
            f"{e['bytes_float16'] / 1024 / 1024:.1f} MiB as float16 embeddings. MiniLM embedded "
            f"{e['sample_passages_per_second']} passages/s on a sample of {e['sample']} (load average {e['load_average']}), "
            f"i.e. {e['full_corpus_hours_at_that_rate']} h for the corpus at that rate."
        ]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.exit(main())
