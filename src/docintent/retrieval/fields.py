"""Field-weighted BM25: the page body, its headings and its document's title scored separately and summed.

``score(q, page) = body(q, page) + w_head * head(q, page) + w_title * title(q, page)``, each term an Okapi
BM25 over its own field (BM25F's simpler cousin: per-field idf and length normalisation). A page's
*headings* are its short numbered lines ("3.2 Defining Colours") and a short first line (a running head or a
title); its *title* is the PDF title and file name of its document, the same on every page. The field weights
were chosen on development queries (``benchmarks/retrieval_tune.py``). Chosen on the generated dev queries
alone (heading 1.0, title 0.5: MRR@10 18.6 -> 37.6 there), they hurt questions written from page content (the
generated queries paraphrase PDF bookmarks, i.e. headings). On the mean of the two dev sets' MRR@10
(generated, and the development half of the hand-written questions) two settings tie: heading 0.5 (generated
33.8, hand-written 33.3) and heading 0.1 with title 0.5 (23.6, 43.6), which wins by 0.05 and keeps the
``bm25`` method above plain ``bm25s`` on the hand-written dev questions (43.6 vs 39.7). Inside the fusion the
lexical half uses heading 0.5 (:data:`~docintent.retrieval.retrievers.FUSION_HEAD_WEIGHT`): there the dense
half carries the paraphrased questions.

The two field models are derived files of the index directory (``bm25_head.npz``, ``bm25_title.npz`` and
their ``_vocab.json``), built on first use in about a second per 4,000 pages.

>>> headings("3.2 Defining Colours\\nThe colours black, white and red are predefined in every driver.")
'3.2 Defining Colours'
"""

from __future__ import annotations

import re
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .bm25 import BM25

if TYPE_CHECKING:
    from .index import PageIndex

#: Field weights chosen on the development queries (body weight 1).
HEAD_WEIGHT = 0.1
TITLE_WEIGHT = 0.5
_NUMBERED = re.compile(r"^\s*(?:[A-Z]|\d+)(?:\.\d+)*\.?\s+\S")
_MAX_HEADING_WORDS = 10


def headings(text: str) -> str:
    """The heading-like lines of a page, one per line (see the module docstring)."""
    out = []
    for i, line in enumerate(text.split("\n")):
        words = line.split()
        if not 0 < len(words) <= _MAX_HEADING_WORDS or ". . ." in line:
            continue  # table-of-contents leaders are not headings of this page
        if _NUMBERED.match(line) or (i == 0 and len(words) <= 6):
            out.append(line.strip())
    return "\n".join(out)


class FieldScorer:
    """Body, heading and title BM25 of an index, summed with field weights."""

    def __init__(
        self, index: PageIndex, *, head_weight: float = HEAD_WEIGHT, title_weight: float = TITLE_WEIGHT
    ) -> None:
        self.index = index
        self.head_weight = head_weight
        self.title_weight = title_weight

    @property
    def body(self) -> BM25:
        return self.index.bm25

    def _field(self, name: str, texts_of: str) -> BM25:
        directory: Path = self.index.directory
        if derived_is_fresh(directory / f"{name}.npz") and (directory / f"{name}_vocab.json").is_file():
            model = BM25.load(directory, name)
            same = model.stemming == self.body.stemming and model.tokenizer == self.body.tokenizer
            if model.n_docs == len(self.index) and same:
                return model
        texts = self.head_texts() if texts_of == "head" else self.title_texts()
        model = BM25.fit(
            (self.body.terms(t) for t in texts), stemming=self.body.stemming, tokenizer=self.body.tokenizer
        )
        model.save(directory, name)
        return model

    def head_texts(self) -> list[str]:
        return [headings(t) for t in self.index.texts]

    def title_texts(self) -> list[str]:
        return [f"{r.doc_title} {Path(r.doc_path).stem}" for r in self.index.records()]

    @cached_property
    def head(self) -> BM25:
        """BM25 over each page's headings (rows in handle order)."""
        return self._field("bm25_head", "head")

    @cached_property
    def title(self) -> BM25:
        """BM25 over each page's document title and file name."""
        return self._field("bm25_title", "title")

    def scores(self, terms: list[str]) -> np.ndarray:
        """Weighted field score of every page for tokenised query ``terms``."""
        s = self.body.scores(terms)
        if self.head_weight:
            s = s + self.head_weight * self.head.scores(terms)
        if self.title_weight:
            s = s + self.title_weight * self.title.scores(terms)
        return s

    def explain(self, terms: list[str], row: int) -> dict[str, float]:
        """Each field's contribution to one page's score (after weighting)."""
        parts = {"body": float(self.body.scores(terms)[row])}
        if self.head_weight:
            parts["headings"] = self.head_weight * float(self.head.scores(terms)[row])
        if self.title_weight:
            parts["title"] = self.title_weight * float(self.title.scores(terms)[row])
        return parts


def derived_is_fresh(path: Path) -> bool:
    """Whether a derived file exists and was written after the index's last build (which rewrites ``bm25.npz``)."""
    body = path.parent / "bm25.npz"
    return path.is_file() and (not body.is_file() or path.stat().st_mtime >= body.stat().st_mtime)
