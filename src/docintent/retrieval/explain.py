"""Why a page ranked: the query terms it holds, each BM25 field's share, and the passage that matches best.

>>> explain_hit(index, "how do I rotate a picture?", "page_000123")        # doctest: +SKIP
Explanation(terms={'rotate': 3, 'picture': 1}, fields={'body': 7.1, 'headings': 2.3, 'title': 0.0}, ...)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from .fields import FieldScorer
from .index import PageIndex
from .passages import split_passages

#: Words in the passage shown for a lexical explanation.
WINDOW_WORDS = 40


@dataclass(frozen=True)
class Explanation:
    """What made one page rank for one query."""

    terms: dict[str, int]
    fields: dict[str, float]
    passage: str
    _: KW_ONLY
    passage_score: float | None = None  # cosine of the best dense passage, when dense scores were used
    extra: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "matched_terms": self.terms,
            "fields": {k: round(v, 3) for k, v in self.fields.items()},
            "passage": self.passage,
        }
        if self.passage_score is not None:
            out["passage_cosine"] = round(self.passage_score, 3)
        return out | self.extra


def best_window(text: str, terms: set[str], *, stemming: bool, words: int = WINDOW_WORDS, tokenizer: str = "v1") -> str:
    """The ``words``-word stretch of ``text`` holding the most distinct query terms (earliest on ties)."""
    from .text import index_terms

    tokens = text.split()
    if len(tokens) <= words:
        return " ".join(tokens)
    marks = [bool(set(index_terms(t, tokenizer, stemming=stemming)) & terms) for t in tokens]
    best, best_at = -1, 0
    for start in range(0, len(tokens) - words + 1, max(1, words // 4)):
        hits = sum(marks[start : start + words])
        if hits > best:
            best, best_at = hits, start
    return " ".join(tokens[best_at : best_at + words])


def explain_hit(index: PageIndex, query: str, handle: str, *, dense: Any = None) -> Explanation:
    """Explain one page of a ranking (``dense``: a :class:`~docintent.retrieval.retrievers.DenseRetriever`)."""
    row = index.row_of[handle]
    bm = index.bm25
    terms = bm.terms(query)
    text = index.text(handle)
    counts = Counter(t for t in bm.terms(text) if t in set(terms))
    fields = FieldScorer(index).explain(terms, row)
    if dense is not None:
        vector = dense.query_vector(query)
        passage, cosine = dense.passages.best_passage(vector, row)
        return Explanation(dict(counts.most_common()), fields, passage, passage_score=cosine)
    passage = best_window(text, set(terms), stemming=bm.stemming, tokenizer=bm.tokenizer)
    if not passage:
        passage = split_passages(text)[0][:300]
    return Explanation(dict(counts.most_common()), fields, passage)
