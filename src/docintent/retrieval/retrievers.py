"""Static retrievers over a :class:`~docintent.retrieval.index.PageIndex`: BM25, dense, and their fusion.

>>> from docintent.retrieval import PageIndex, get_retriever
>>> index = PageIndex.open("manual.idx")                           # doctest: +SKIP
>>> [hit.handle for hit in get_retriever(index, "bm25").search("font size commands", k=3)]  # doctest: +SKIP
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..errors import ConfigError, UnknownComponentError
from ..registry import Registry, options_from_signature
from .bm25 import top_rows
from .fields import FieldScorer
from .index import PageIndex
from .passages import DENSE_MODEL as DENSE_MODEL
from .passages import PassageEmbeddings, encode, load_sentence_model

FUSION_MODES = ("zscore", "rrf")
# Chosen on the development queries (``benchmarks/retrieval_tune.py``, ``benchmarks/results/retrieval_tune.md``):
#: how the fusion combines the two rankings, over how many top pages of each, with which (BM25, dense) weights;
FUSION_MODE = "zscore"
FUSION_DEPTH = 20
FUSION_WEIGHTS = (0.6, 0.4)
#: the heading weight of the fusion's lexical half (the bm25 method's own is in :mod:`.fields`);
FUSION_HEAD_WEIGHT = 0.5
#: reciprocal-rank fusion's k, depth and (BM25, dense) weights (``mode="rrf"``: its best row on dev, 1.2 points
#: below the z-score fusion there);
RRF_K = 5
RRF_DEPTH = 1000
RRF_WEIGHTS = (1.0, 0.75)
#: the soft-max temperature of a page's dense score over its passages.
DENSE_TEMPERATURE = 0.05


@dataclass(frozen=True)
class Hit:
    """One ranked page: its handle and the retriever's score (higher is better)."""

    handle: str
    score: float


def reciprocal_rank_fusion(
    rankings: Sequence[Sequence[str]], *, k: int = 60, depth: int = RRF_DEPTH, weights: Sequence[float] | None = None
) -> list[Hit]:
    """Fuse ranked handle lists: ``score(h) = sum over lists of w / (k + rank(h))``, ranks from 1.

    Only the first ``depth`` entries of each list count; ``weights`` default to 1 per list. Ties break by
    first appearance. ``k`` defaults to the customary 60 (the offline planner fuses its searches so); the
    ``fusion`` retriever's ``rrf`` mode uses :data:`RRF_K`.

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

    ``fields=False`` scores the body alone (plain BM25 with the index's k1 and b). ``head_weight`` and
    ``title_weight`` default to those chosen for the ``bm25`` method.
    """

    name = "bm25"

    def __init__(
        self,
        index: PageIndex,
        *,
        fields: bool = True,
        head_weight: float | None = None,
        title_weight: float | None = None,
    ) -> None:
        super().__init__(index)
        weights = {k: v for k, v in (("head_weight", head_weight), ("title_weight", title_weight)) if v is not None}
        self.fields = FieldScorer(index, **weights) if fields else None

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
        self.passages = PassageEmbeddings(
            index.directory, index.texts, model=model, batch_size=batch_size, progress=progress
        )

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
    """The BM25 and dense rankings fused into one.

    ``mode="zscore"`` (the default): each retriever's scores are standardised over its ``depth`` best pages
    (``z = (s - mean) / std``; a page below them gets the lowest of them) and summed with ``weights``
    (BM25, dense). ``mode="rrf"``: weighted reciprocal-rank fusion, ``w_bm25 / (k + rank_bm25) + w_dense /
    (k + rank_dense)`` over the first ``depth`` pages of each ranking (defaults :data:`RRF_K`,
    :data:`RRF_DEPTH`, :data:`RRF_WEIGHTS`). The lexical half is field-weighted
    BM25 with the heading weight :data:`FUSION_HEAD_WEIGHT`. Mode, depth, weights and heading weight were
    chosen on the development queries (``benchmarks/retrieval_tune.py``).
    """

    name = "fusion"

    def __init__(
        self,
        index: PageIndex,
        *,
        dense: DenseRetriever | None = None,
        bm25: BM25Retriever | None = None,
        mode: str = FUSION_MODE,
        weights: tuple[float, float] | None = None,
        k: int = RRF_K,
        depth: int | None = None,
    ) -> None:
        super().__init__(index)
        if mode not in FUSION_MODES:
            raise UnknownComponentError("fusion mode", mode, list(FUSION_MODES))
        self.bm25 = bm25 or BM25Retriever(index, head_weight=FUSION_HEAD_WEIGHT)
        self.dense = dense or DenseRetriever(index)
        self.mode, self.k = mode, k
        self.weights = weights if weights is not None else (FUSION_WEIGHTS if mode == "zscore" else RRF_WEIGHTS)
        self.depth = depth if depth is not None else (FUSION_DEPTH if mode == "zscore" else RRF_DEPTH)
        if self.depth < 1:
            raise ConfigError(f"fusion depth must be at least 1, got {self.depth}")
        #: Each returned page's rank in the BM25 and dense rankings of the last search (absent: below the first
        #: ``depth``), for ``--explain``.
        self.ranks: dict[str, dict[str, int]] = {}

    def search(self, query: str, k: int = 10) -> list[Hit]:
        if self.mode == "rrf":
            lists = [[h.handle for h in r.search(query, self.depth)] for r in (self.bm25, self.dense)]
            fused = reciprocal_rank_fusion(lists, k=self.k, depth=self.depth, weights=self.weights)[:k]
        else:
            parts = [self.bm25.scores(query), self.dense.scores(query)]
            tops = [top_rows(part, self.depth, positive=False)[0] for part in parts]
            total = np.zeros(len(self.index.handles))
            for weight, part, top in zip(self.weights, parts, tops):
                total += weight * standardise_top(part, top)
            rows = np.lexsort((np.arange(len(total)), -total))[:k]
            fused = [Hit(self.index.handles[r], float(total[r])) for r in rows]
            lists = [[self.index.handles[r] for r in top] for top in tops]
        self.ranks = {
            hit.handle: {
                name: ranking.index(hit.handle) + 1
                for name, ranking in zip(("bm25", "dense"), lists)
                if hit.handle in ranking
            }
            for hit in fused
        }
        return fused


def standardise_top(scores: np.ndarray, top: np.ndarray) -> np.ndarray:
    """Scores as z-values over the best of them (rows ``top``, from :func:`~docintent.retrieval.bm25.top_rows`);
    every other page gets the lowest of those.

    >>> scores = np.array([3.0, 1.0, 2.0, 0.0])
    >>> standardise_top(scores, top_rows(scores, 3, positive=False)[0]).round(3).tolist()
    [1.225, -1.225, 0.0, -1.225]
    """
    if len(top) == 0:
        return np.zeros(len(scores))
    best = scores[top].astype(np.float64)
    z = (best - best.mean()) / max(float(best.std()), 1e-9)
    out = np.full(len(scores), float(z.min()))
    out[top] = z
    return out


def _fusion(index: PageIndex, **options: Any) -> FusionRetriever:
    return FusionRetriever(index, dense=DenseRetriever(index, **options))


def _bm25(index: PageIndex) -> BM25Retriever:
    return BM25Retriever(index)


_DENSE_OPTIONS = options_from_signature(DenseRetriever, "DenseOptions", skip=("index",))

#: Retrieval methods; plug-ins join through the ``docintent.retrievers`` entry points (a factory of
#: ``(index, **options) -> Retriever``).
RETRIEVERS: Registry[Retriever] = Registry("retrieval method", group="docintent.retrievers", supplied=("index",))
#: The built-in methods: (name, factory, options, description), each registered once, here.
_BUILT_IN: tuple[tuple[str, Callable[..., Retriever], Any, str], ...] = (
    ("bm25", _bm25, None, "BM25 over the pages' text and fields"),
    ("dense", DenseRetriever, _DENSE_OPTIONS, "MiniLM passage embeddings (docintent[dense])"),
    ("fusion", _fusion, _DENSE_OPTIONS, "z-scored BM25 and dense rankings, fused"),
)
for _name, _factory, _options, _description in _BUILT_IN:
    RETRIEVERS.register(_name, _factory, _options, description=_description)

#: The built-in retrieval methods' names (every registered one, plug-ins included: ``RETRIEVERS.kinds()``).
METHODS: tuple[str, ...] = tuple(name for name, *_ in _BUILT_IN)


def get_retriever(index: PageIndex, method: str = "bm25", **options: Any) -> Retriever:
    """The retriever named ``method`` ("bm25", "dense", "fusion" or a plug-in) over ``index``; an unknown
    method or option is one error naming the valid ones."""
    entry = RETRIEVERS.entry(method)
    RETRIEVERS.validate(method, options)
    return entry.factory(index, **options)


def check_k(k: int, maximum: int | None = None) -> int:
    """Validate a result count (1..maximum)."""
    if k < 1 or (maximum is not None and k > maximum):
        raise ConfigError(f"k must be between 1 and {maximum or 'the index size'}, got {k}")
    return k
