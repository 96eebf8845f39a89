"""Static retrievers over a :class:`~docintent.retrieval.index.PageIndex`: BM25, dense, and their fusion.

>>> from docintent.retrieval import PageIndex, get_retriever
>>> index = PageIndex.open("manual.idx")                           # doctest: +SKIP
>>> [hit.handle for hit in get_retriever(index, "bm25").search("font size commands", k=3)]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..errors import ConfigError, UnknownComponentError
from .bm25 import top_rows
from .fields import FieldScorer
from .index import PageIndex
from .passages import DENSE_MODEL as DENSE_MODEL
from .passages import PassageEmbeddings, encode, load_sentence_model

METHODS = ("bm25", "dense", "fusion")
RRF_K = 60
RRF_DEPTH = 1000
#: (BM25, dense) weights of the fusion, and the dense soft-max temperature; see the class docstrings.
FUSION_WEIGHTS = (1.0, 1.0)
DENSE_TEMPERATURE = 0.0



@dataclass(frozen=True)
class Hit:
    """One ranked page: its handle and the retriever's score (higher is better)."""

    handle: str
    score: float


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], *, k: int = RRF_K, depth: int = RRF_DEPTH, weights: Sequence[float] | None = None
) -> list[Hit]:
    """Fuse ranked handle lists: ``score(h) = sum over lists of w / (k + rank(h))``, ranks from 1.

    Only the first ``depth`` entries of each list count; ``weights`` default to 1 per list. Ties break by
    first appearance.

    >>> [h.handle for h in reciprocal_rank_fusion([["a", "b", "c"], ["b", "c"]])]
    ['b', 'c', 'a']
    """
    scores: dict[str, float] = {}
    weights = list(weights) if weights is not None else [1.0] * len(rankings)
    for ranking, weight in zip(rankings, weights):
        for rank, handle in enumerate(ranking[:depth], start=1):
            scores[handle] = scores.get(handle, 0.0) + weight / (k + rank)
    order = sorted(scores.items(), key=lambda kv: -kv[1])  # stable: first appearance wins ties
    return [Hit(h, s) for h, s in order]


class Retriever:
    """Ranks the pages of an index for a text query."""

    name = "base"

    def __init__(self, index: PageIndex) -> None:
        self.index = index

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """The ``k`` best pages for ``query``, best first."""
        raise NotImplementedError


class BM25Retriever(Retriever):
    """Field-weighted Okapi BM25 (body, headings, document title; see :mod:`docintent.retrieval.fields`).

    ``fields=False`` scores the body alone (plain BM25, k1 1.2, b 0.75, as in :mod:`docintent.retrieval.bm25`).
    """

    name = "bm25"

    def __init__(self, index: PageIndex, *, fields: bool = True) -> None:
        super().__init__(index)
        self.fields = FieldScorer(index) if fields else None

    def terms(self, query: str) -> list[str]:
        """The query's index terms (tokenised as the index was)."""
        return self.index.bm25.terms(query)

    def scores(self, query: str) -> np.ndarray:
        """Score of every page (rows in handle order)."""
        terms = self.terms(query)
        return self.fields.scores(terms) if self.fields is not None else self.index.bm25.scores(terms)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        rows, scores = top_rows(self.scores(query), k)
        return [Hit(self.index.handles[r], float(s)) for r, s in zip(rows, scores)]


def _load_sentence_model():
    """Kept for callers of the earlier name; see :func:`docintent.retrieval.passages.load_sentence_model`."""
    return load_sentence_model()


class DenseRetriever(Retriever):
    """all-MiniLM-L6-v2 over whole pages as overlapping passages (needs ``pip install 'docintent[dense]'``).

    Each page is cut into passages of 160 words every 120 words (:mod:`docintent.retrieval.passages`); a page
    scores the soft maximum of its passages' cosine with the query (``temperature``; 0 is the plain maximum).
    Passage embeddings are computed once and cached in the index directory.
    """

    name = "dense"

    def __init__(
        self,
        index: PageIndex,
        *,
        temperature: float = DENSE_TEMPERATURE,
        batch_size: int = 32,
        progress: bool | None = None,
        model=None,
    ) -> None:
        super().__init__(index)
        self.temperature = temperature
        self.passages = PassageEmbeddings(index.directory, index.texts, model=model, batch_size=batch_size, progress=progress)

    @property
    def model(self):
        return self.passages.model

    def query_vector(self, query: str) -> np.ndarray:
        return encode(self.model, [query])[0]

    def scores(self, query: str) -> np.ndarray:
        """Score of every page (rows in handle order)."""
        return self.passages.scores(self.query_vector(query), temperature=self.temperature)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        sims = self.scores(query)
        k = min(k, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.lexsort((top, -sims[top]))]
        return [Hit(self.index.handles[r], float(sims[r])) for r in top]


class FusionRetriever(Retriever):
    """Weighted reciprocal-rank fusion of the BM25 and dense rankings.

    ``score(page) = w_bm25 / (k + rank_bm25) + w_dense / (k + rank_dense)`` over the first ``depth`` pages of
    each ranking; k, depth and the weights were chosen on the development queries.
    """

    name = "fusion"

    def __init__(
        self,
        index: PageIndex,
        *,
        dense: DenseRetriever | None = None,
        bm25: BM25Retriever | None = None,
        weights: tuple[float, float] = FUSION_WEIGHTS,
        k: int = RRF_K,
        depth: int = RRF_DEPTH,
    ) -> None:
        super().__init__(index)
        self.bm25 = bm25 or BM25Retriever(index)
        self.dense = dense or DenseRetriever(index)
        self.weights, self.k, self.depth = weights, k, depth

    def search(self, query: str, k: int = 10) -> list[Hit]:
        lists = [[h.handle for h in r.search(query, self.depth)] for r in (self.bm25, self.dense)]
        return reciprocal_rank_fusion(lists, k=self.k, depth=self.depth, weights=self.weights)[:k]


def get_retriever(index: PageIndex, method: str = "bm25", **options) -> Retriever:
    """The retriever named ``method`` ("bm25", "dense" or "fusion") over ``index``."""
    if method == "bm25":
        return BM25Retriever(index)
    if method == "dense":
        return DenseRetriever(index, **options)
    if method == "fusion":
        return FusionRetriever(index, dense=DenseRetriever(index, **options))
    raise UnknownComponentError("retrieval method", method, list(METHODS))


def check_k(k: int, maximum: int | None = None) -> int:
    """Validate a result count (1..maximum)."""
    if k < 1 or (maximum is not None and k > maximum):
        raise ConfigError(f"k must be between 1 and {maximum or 'the index size'}, got {k}")
    return k
