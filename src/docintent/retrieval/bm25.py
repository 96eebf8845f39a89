"""Okapi BM25 on a scipy.sparse matrix: no search-engine dependency, exact scores, ~1 ms queries at 10k pages.

For term t in document d (length |d| terms, corpus average ``avgdl``, ``N`` documents, ``n_t`` of them holding t)::

    score(q, d) = sum over query terms t of  idf(t) * tf(t, d) * (k1 + 1) / (tf(t, d) + k1 * (1 - b + b * |d| / avgdl))

with k1 = 1.2 and b = 0.75. Two idf variants:

- ``"lucene"`` (default): ``log(1 + (N - n_t + 0.5) / (n_t + 0.5))``, always positive (Lucene, tantivy, bm25s);
- ``"okapi"``: ``log((N - n_t + 0.5) / (n_t + 0.5))`` with negative values replaced by ``epsilon`` times the
  mean idf, exactly as ``rank_bm25.BM25Okapi`` does (used to check the scores against that reference).

A query term repeated in the query counts as often as it appears. The whole weight matrix is precomputed,
so a query is a column slice and one sparse matrix-vector product.

>>> bm = BM25.fit([["red", "apple"], ["green", "apple", "apple"], ["blue", "sky"]])
>>> [int(i) for i in bm.top(["apple"], 2)[0]]
[1, 0]
"""

from __future__ import annotations

import functools
import json
import math
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from pathlib import Path

import numpy as np
import scipy.sparse as sp

from ..errors import ConfigError


def top_rows(scores: np.ndarray, k: int, *, positive: bool = True) -> tuple[np.ndarray, np.ndarray]:
    """Rows and scores of the ``k`` best scores, best first, ties by row (reproducible).

    ``positive``: only positive scores count (for BM25 a page with no query term is no hit); False ranks every
    row (cosines, standardised scores).

    >>> top_rows(np.array([0.5, 2.0, 0.0, 2.0, 1.0]), 3)[0].tolist()
    [1, 3, 4]
    >>> top_rows(np.array([-1.0, 0.0, -3.0]), 2, positive=False)[0].tolist()
    [1, 0]
    """
    hits = np.flatnonzero(scores > 0) if positive else np.arange(len(scores))
    if len(hits) == 0:
        return hits, scores[hits]
    if 0 < k < len(hits):
        # Only rows scoring at least the k-th best can be among the k best (all of a tie at the cut are kept,
        # so the order below still breaks it by row): a partition instead of sorting every hit.
        cut = np.partition(scores[hits], len(hits) - k)[len(hits) - k]
        hits = hits[scores[hits] >= cut]
    order = np.lexsort((hits, -scores[hits]))[:k]
    best = hits[order]
    return best, scores[best]


class BM25:
    """A fitted BM25 model over a list of tokenised documents (row ``i`` = document ``i``)."""

    def __init__(
        self,
        weights: sp.csc_matrix,
        vocab: dict[str, int],
        *,
        k1: float,
        b: float,
        idf: str,
        stemming: bool = True,
        tokenizer: str = "v1",
    ) -> None:
        self.weights = weights
        self.vocab = vocab
        self.k1, self.b, self.idf_kind = k1, b, idf
        #: How the documents were tokenised (a name of :data:`~docintent.retrieval.text.TOKENIZERS`, stemmed
        #: or not); :meth:`terms` tokenises a query the same way.
        self.stemming = stemming
        self.tokenizer = tokenizer

    def terms(self, text: str) -> list[str]:
        """``text`` tokenised as the indexed documents were (same tokeniser, stemmed or not)."""
        from .text import index_terms

        return index_terms(text, self.tokenizer, stemming=self.stemming)

    @property
    def n_docs(self) -> int:
        return int(self.weights.shape[0])

    @functools.cached_property
    def lucene_idf(self) -> np.ndarray:
        """Lucene's idf of every vocabulary term, ``ln(1 + (N - df + 0.5) / (df + 0.5))`` (computed once)."""
        df = np.diff(self.weights.indptr)
        return np.log1p((self.n_docs - df + 0.5) / (df + 0.5))

    @classmethod
    def fit(
        cls,
        docs: Iterable[Sequence[str]],
        *,
        k1: float = 1.2,
        b: float = 0.75,
        idf: str = "lucene",
        epsilon: float = 0.25,
        stemming: bool = True,
        tokenizer: str = "v1",
    ) -> BM25:
        """Count terms and precompute every (document, term) weight.

        ``stemming`` and ``tokenizer`` only record how ``docs`` were tokenised, for :meth:`terms`.
        """
        if idf not in ("lucene", "okapi"):
            raise ConfigError(f"BM25 idf variant {idf!r} is unknown; valid: 'lucene', 'okapi'")
        vocab: dict[str, int] = {}
        rows: list[int] = []
        cols: list[int] = []
        tfs: list[int] = []
        lengths: list[int] = []
        for row, doc in enumerate(docs):
            counts = Counter(doc)
            lengths.append(len(doc))
            for term, tf in counts.items():
                col = vocab.setdefault(term, len(vocab))
                rows.append(row)
                cols.append(col)
                tfs.append(tf)
        n_docs = len(lengths)
        if n_docs == 0:
            raise ConfigError("BM25 needs at least one document")
        rows_a = np.asarray(rows, dtype=np.int64)
        cols_a = np.asarray(cols, dtype=np.int64)
        tf_a = np.asarray(tfs, dtype=np.float64)
        dl = np.asarray(lengths, dtype=np.float64)
        avgdl = dl.mean() if dl.sum() > 0 else 1.0
        df = np.bincount(cols_a, minlength=len(vocab)).astype(np.float64)
        if idf == "lucene":
            idf_v = np.log1p((n_docs - df + 0.5) / (df + 0.5))
        else:
            idf_v = np.log(n_docs - df + 0.5) - np.log(df + 0.5)
            floor = epsilon * idf_v.mean() if len(idf_v) else 0.0
            idf_v = np.where(idf_v < 0, floor, idf_v)
        norm = k1 * (1.0 - b + b * dl[rows_a] / avgdl)
        data = idf_v[cols_a] * tf_a * (k1 + 1.0) / (tf_a + norm)
        weights = sp.csc_matrix((data, (rows_a, cols_a)), shape=(n_docs, len(vocab)), dtype=np.float32)
        return cls(weights, vocab, k1=k1, b=b, idf=idf, stemming=stemming, tokenizer=tokenizer)

    def query_vector(self, terms: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
        """Column indices and multiplicities of the known query terms."""
        counts = Counter(t for t in terms if t in self.vocab)
        cols = np.fromiter((self.vocab[t] for t in counts), dtype=np.int64, count=len(counts))
        mult = np.fromiter(counts.values(), dtype=np.float32, count=len(counts))
        return cols, mult

    def scores(self, terms: Sequence[str]) -> np.ndarray:
        """BM25 score of every document for the tokenised query (float32, length ``n_docs``)."""
        cols, mult = self.query_vector(terms)
        if len(cols) == 0:
            return np.zeros(self.n_docs, dtype=np.float32)
        return np.asarray(self.weights[:, cols] @ mult).ravel()

    def top(self, terms: Sequence[str], k: int) -> tuple[np.ndarray, np.ndarray]:
        """Row indices and scores of the ``k`` best documents with a positive score, best first.

        Ties break by row index so results are reproducible.
        """
        return top_rows(self.scores(terms), k)

    # --- persistence ---------------------------------------------------------------------------------

    def save(self, directory: Path, name: str = "bm25") -> None:
        """Write ``<name>.npz`` and ``<name>_vocab.json`` into ``directory``, each under a temporary name first
        and renamed into place, so a reader (another ``search`` writing the same derived files, say) never
        loads half a file."""
        directory = Path(directory)
        matrix_tmp = directory / f".{name}.{os.getpid()}.tmp.npz"
        vocab_tmp = directory / f".{name}_vocab.{os.getpid()}.tmp.json"
        try:
            sp.save_npz(matrix_tmp, self.weights, compressed=False)
            meta = {
                "k1": self.k1,
                "b": self.b,
                "idf": self.idf_kind,
                "stemming": self.stemming,
                "tokenizer": self.tokenizer,
                "vocab": self.vocab,
            }
            vocab_tmp.write_text(json.dumps(meta), encoding="utf-8")
            os.replace(matrix_tmp, directory / f"{name}.npz")
            os.replace(vocab_tmp, directory / f"{name}_vocab.json")
        finally:
            matrix_tmp.unlink(missing_ok=True)
            vocab_tmp.unlink(missing_ok=True)

    @classmethod
    def load(cls, directory: Path, name: str = "bm25") -> BM25:
        """Read a model written by :meth:`save` (indexes from before the ``stemming`` key were stemmed, those
        from before the ``tokenizer`` key used tokeniser ``v1``)."""
        from .text import TOKENIZERS

        directory = Path(directory)
        meta = json.loads((directory / f"{name}_vocab.json").read_text(encoding="utf-8"))
        weights = sp.load_npz(directory / f"{name}.npz").tocsc()
        # Every field is checked: a damaged or edited file is a ValueError here, never an IndexError later.
        if not isinstance(meta, dict) or not isinstance(meta.get("vocab"), dict):
            raise ValueError(f"{name}_vocab.json holds no vocabulary object")
        columns = weights.shape[1]
        vocab = meta["vocab"]
        if not all(isinstance(t, str) and type(i) is int and 0 <= i < columns for t, i in vocab.items()):
            raise ValueError(
                f"{name}_vocab.json maps a term to something that is not a column of the {columns}-column matrix"
            )
        if len(set(vocab.values())) != len(vocab):
            raise ValueError(f"{name}_vocab.json maps two terms to one column")
        for key in ("k1", "b"):
            value = meta.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value < 0:
                raise ValueError(f"{name}_vocab.json: {key} must be a finite number >= 0, got {value!r}")
        if not isinstance(meta.get("idf"), str) or meta["idf"] not in ("lucene", "okapi"):
            raise ValueError(f"{name}_vocab.json: unknown idf {meta.get('idf')!r}")
        stemming, tokenizer = meta.get("stemming", True), meta.get("tokenizer", "v1")
        if not isinstance(stemming, bool) or not isinstance(tokenizer, str) or tokenizer not in TOKENIZERS:
            raise ValueError(f"{name}_vocab.json: unknown tokeniser settings ({tokenizer!r}, stemming {stemming!r})")
        if not np.all(np.isfinite(weights.data)):
            raise ValueError(f"{name}.npz holds weights that are not finite numbers")
        return cls(weights, vocab, k1=meta["k1"], b=meta["b"], idf=meta["idf"], stemming=stemming, tokenizer=tokenizer)
