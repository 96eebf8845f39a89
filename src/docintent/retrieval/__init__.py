"""Closed-corpus page retrieval: a page index, static retrievers (BM25, dense, fusion) and a search agent.

>>> from docintent.retrieval import build_index, PageIndex, get_retriever
>>> build_index(["manuals/"], "manuals.idx")                                   # doctest: +SKIP
>>> index = PageIndex.open("manuals.idx")                                      # doctest: +SKIP
>>> get_retriever(index, "bm25").search("how to change the page margins", k=5)  # doctest: +SKIP
"""

from .index import BuildReport, PageIndex, PageRecord, build_index
from .planners import PLANNERS
from .retrievers import (
    METHODS,
    RETRIEVERS,
    BM25Retriever,
    DenseRetriever,
    FusionRetriever,
    Hit,
    Retriever,
    get_retriever,
    reciprocal_rank_fusion,
)

__all__ = [
    "METHODS",
    "PLANNERS",
    "RETRIEVERS",
    "BM25Retriever",
    "BuildReport",
    "DenseRetriever",
    "FusionRetriever",
    "Hit",
    "PageIndex",
    "PageRecord",
    "Retriever",
    "build_index",
    "get_retriever",
    "reciprocal_rank_fusion",
]
