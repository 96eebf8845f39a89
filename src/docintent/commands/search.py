"""``docintent search``: rank the pages of an index for a query (static retrievers or the search agent)."""

from __future__ import annotations

import argparse
import json
from typing import Any

from ._common import PLANNER_KINDS, Kinds, positive_int

#: ``--method``: every registered retriever, plug-ins included, and the search agent.
SEARCH_METHODS = Kinds("docintent.retrieval.retrievers:RETRIEVERS", extra=("agent",))

#: Shown under ``docintent search --help``.
EXAMPLES = ('docintent search index/ "warranty period"',)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("search", help="find the pages of an index that answer a query")
    p.add_argument("index", help="index directory made by `docintent index`")
    p.add_argument("query", help="the question or keywords")
    p.add_argument("-k", type=positive_int, default=10, help="number of pages to list (default 10)")
    p.add_argument(
        "--method",
        choices=SEARCH_METHODS,
        default="bm25",
        metavar="METHOD",
        help="retrieval method: %(choices)s (default %(default)s; dense and fusion need docintent[dense], "
        "agent: the search agent, planned by --planner)",
    )
    p.add_argument(
        "--planner",
        choices=PLANNER_KINDS,
        default="offline",
        metavar="KIND",
        help="planner of --method agent: %(choices)s (default %(default)s)",
    )
    p.add_argument(
        "--planner-opt",
        action="append",
        metavar="KEY=VALUE",
        help="planner option (repeatable), e.g. sees_images=false for --planner openai",
    )
    p.add_argument("--model", default=None, help="model name for --planner openai (default DOCINTENT_MODEL)")
    p.add_argument(
        "--base-url", default=None, help="OpenAI-compatible endpoint (default DOCINTENT_BASE_URL / OPENAI_BASE_URL)"
    )
    p.add_argument("--api-key", default=None, help="API key (default OPENAI_API_KEY; local servers need none)")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument(
        "--explain",
        action="store_true",
        help="say why each page ranked: matched query terms, BM25 field shares, the best-matching passage "
        "and, with --method agent, the evidence pages and rationale",
    )
    p.set_defaults(func=run)


def _planner_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--planner-opt`` options with the endpoint flags that were given (a planner of another kind is not handed
    endpoint options it does not take; one it does not take that was given is refused, naming the valid ones)."""
    from ..errors import ConfigError
    from ..redaction import register_options
    from ._common import parse_options

    options = parse_options(args.planner_opt)
    given = {
        key: value
        for key, value in (("model", args.model), ("base_url", args.base_url), ("api_key", args.api_key))
        if value is not None
    }
    register_options(given)
    for key, value in given.items():
        if key in options and options[key] != value:
            raise ConfigError(
                f"--{key.replace('_', '-')} and --planner-opt {key}=... name different values; give one of them"
            )
        options[key] = value
    return options


def run(args: argparse.Namespace) -> int:
    from ..errors import ModelEndpointError
    from ..retrieval import PageIndex, get_retriever
    from ..retrieval.retrievers import FusionRetriever

    index = PageIndex.open(args.index)
    rows: list[dict[str, Any]] = []
    retriever = None
    searches: list[str] = []  # the agent's searches, for --explain
    if args.method == "agent":
        from ..retrieval.agent import SearchAgent
        from ..retrieval.passages import embeddings_ready
        from ..retrieval.planners import PLANNERS

        options = _planner_options(args)
        # The offline planner starts from the best static ranking it can afford: fusion once the index has its
        # passage embeddings (built by a first `--method dense` or `fusion` search), BM25 before.
        if args.planner == "offline":
            options.setdefault("method", "fusion" if embeddings_ready(index.directory) else "bm25")
        planner = PLANNERS.get(args.planner, **options)
        result = SearchAgent(index, planner).run(args.query)
        if result.error:
            # The agent still returns a contract-valid ranking (filled in from BM25), but it is not the agent's:
            # reporting it as a result would pass a failed search off as a successful one.
            raise ModelEndpointError(f"the search agent stopped after {result.steps} step(s): {result.error}")
        searches += [
            f"{step.data['args'].get('method', 'bm25')} {step.data['args'].get('query', '')!r}"
            for step in result.trace
            if step.tool == "search"
        ]
        for rank, page in enumerate(result.ranking[: args.k], start=1):
            rows.append(
                {"rank": rank, "handle": page.handle, "evidence": list(page.evidence), "rationale": page.rationale}
            )
    else:
        retriever = get_retriever(index, args.method)
        for rank, hit in enumerate(retriever.search(args.query, args.k), start=1):
            rows.append({"rank": rank, "handle": hit.handle, "score": round(hit.score, 4)})
    for row in rows:
        rec = index.record(row["handle"])
        row["document"], row["page"] = rec.doc_path, rec.page_no + 1
        row["snippet"] = " ".join(rec.text.split())[:80]
    if args.explain:
        from ..retrieval.explain import explain_hit

        dense = (
            getattr(retriever, "dense", None)
            if args.method == "fusion"
            else retriever
            if args.method == "dense"
            else None
        )
        ranks = getattr(retriever, "ranks", {})
        for row in rows:
            row["explain"] = explain_hit(index, args.query, row["handle"], dense=dense).to_dict()
            if row["handle"] in ranks:
                row["explain"]["fusion_ranks"] = ranks[row["handle"]]
    if args.explain and args.method == "agent":
        for row in rows:
            row["explain"]["agent_searches"] = searches
    if args.json:
        print(json.dumps(rows, indent=2))
        return 0
    if not rows:
        print("no matching pages")
    for row in rows:
        score = f"{row['score']:8.3f}" if "score" in row else ""
        print(f"{row['rank']:3d}  {row['handle']}  {score}  {row['document']} p.{row['page']}  {row['snippet']}")
        if "explain" in row:
            ex = row["explain"]
            terms = ", ".join(f"{t} x{n}" for t, n in ex["matched_terms"].items()) or "none"
            fields = ", ".join(f"{k} {v:.2f}" for k, v in ex["fields"].items())
            print(f"     matched terms: {terms}")
            print(f"     BM25 by field: {fields}")
            cosine = f" (cosine {ex['passage_cosine']:.2f})" if "passage_cosine" in ex else ""
            print(f"     passage{cosine}: {ex['passage'][:300]}")
            if "fusion_ranks" in ex and isinstance(retriever, FusionRetriever):
                ranks = ", ".join(
                    f"{name} rank {ex['fusion_ranks'].get(name, f'below {retriever.depth}')}"
                    for name in ("bm25", "dense")
                )
                w_bm25, w_dense = retriever.weights
                how = f"zscore over the top {retriever.depth}" if retriever.mode == "zscore" else f"rrf k {retriever.k}"
                print(f"     fusion: {ranks} (weights {w_bm25:g} : {w_dense:g}, {how})")
            if "rationale" in row:
                print(f"     agent: {row['rationale']}; evidence pages: {', '.join(row['evidence']) or 'none'}")
    if args.explain and args.method == "agent" and rows:
        print("agent searches: " + "; ".join(searches))
    return 0
