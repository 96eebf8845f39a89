"""BM25 scores against outside references (rank_bm25, bm25s), fusion, and the dense extra's error."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from docintent.errors import MissingDependencyError
from docintent.retrieval import reciprocal_rank_fusion
from docintent.retrieval.bm25 import BM25
from docintent.retrieval.text import LUCENE_STOPWORDS, QUESTION_WORDS, index_terms, tokenize
from needs import need_module

DOCS = [
    "The graphicx package scales and rotates included graphics.",
    "Use the color package to define named colours; the color package needs a driver.",
    "Font selection: the family, series and shape of a font are chosen separately.",
    "Tables: the array package extends the tabular environment with new column types.",
    "The tabular environment is part of the LaTeX kernel; tables float with table.",
    "Colours in tables come from the colortbl package, which loads the color package.",
    "Index entries are sorted by makeindex.",
]
QUERIES = ["color package driver", "tabular tables column", "font shape", "package package color", "unknown words only"]


def test_okapi_scores_match_rank_bm25():
    rank_bm25 = need_module("rank_bm25", "the outside check of BM25 scores")
    corpus = [tokenize(d) for d in DOCS]
    ours = BM25.fit(corpus, idf="okapi")
    reference = rank_bm25.BM25Okapi(corpus, k1=1.2, b=0.75, epsilon=0.25)
    # "package" is in more than half of the pages: its negative idf is floored the same way in both.
    assert reference.idf[tokenize("package")[0]] > 0
    for query in QUERIES:
        q = tokenize(query)
        np.testing.assert_allclose(ours.scores(q), reference.get_scores(q), rtol=1e-5, atol=1e-6)


def test_lucene_scores_match_bm25s():
    bm25s = need_module("bm25s", "the outside check of BM25 rankings")
    corpus = [tokenize(d) for d in DOCS]
    ours = BM25.fit(corpus)
    reference = bm25s.BM25(method="lucene", k1=1.2, b=0.75)
    reference.index(corpus, show_progress=False)
    for query in QUERIES[:4]:
        q = tokenize(query)
        # bm25s leaves out the constant (k1 + 1) factor of the term-frequency part.
        np.testing.assert_allclose(ours.scores(q), reference.get_scores(q) * 2.2, rtol=1e-5, atol=1e-6)


def test_index_tokeniser_splits_words_as_bm25s_does():
    bm25s = need_module("bm25s", "the outside check of the tokeniser")
    texts = DOCS + ["How do I rotate a 2-page PDF_file by 90 degrees, and what does \\rotatebox{x} do?"]
    stop = sorted(LUCENE_STOPWORDS | QUESTION_WORDS)
    theirs = bm25s.tokenize(texts, stopwords=stop, return_ids=False, show_progress=False)
    for text, their_terms in zip(texts, theirs):
        assert index_terms(text, "v2", stemming=False) == list(their_terms)
    # bm25s's own English list is Lucene's, which the index keeps whole.
    assert set(bm25s.stopwords.STOPWORDS_EN) == LUCENE_STOPWORDS


def test_lucene_scores_match_bm25s_with_the_index_tokeniser_and_k1():
    bm25s = need_module("bm25s", "the outside check of BM25 rankings")
    from docintent.retrieval.index import INDEX_B, INDEX_K1

    corpus = [index_terms(d) for d in DOCS]
    ours = BM25.fit(corpus, k1=INDEX_K1, b=INDEX_B, tokenizer="v2")
    reference = bm25s.BM25(method="lucene", k1=INDEX_K1, b=INDEX_B)
    reference.index(corpus, show_progress=False)
    for query in ["Which package needs a driver for colours?", "How are tables with new column types made?"]:
        q = ours.terms(query)
        np.testing.assert_allclose(ours.scores(q), reference.get_scores(q) * (INDEX_K1 + 1), rtol=1e-5, atol=1e-6)


def test_top_ranks_best_first_and_drops_zero_scores():
    bm = BM25.fit([tokenize(d) for d in DOCS])
    rows, scores = bm.top(tokenize("color package driver"), 10)
    assert list(rows[:2]) == [1, 5] and np.all(np.diff(scores) <= 0) and np.all(scores > 0)
    assert len(bm.top(tokenize("unknown words only"), 10)[0]) == 0


def test_save_and_load_keep_scores(tmp_path):
    bm = BM25.fit([tokenize(d) for d in DOCS])
    bm.save(tmp_path)
    again = BM25.load(tmp_path)
    np.testing.assert_allclose(again.scores(tokenize("font shape")), bm.scores(tokenize("font shape")))


def test_a_model_saved_before_tokeniser_names_keeps_tokenising_queries_the_old_way(tmp_path):
    import json

    bm = BM25.fit([tokenize(d, stemming=False) for d in DOCS], stemming=False)
    bm.save(tmp_path)
    meta_path = tmp_path / "bm25_vocab.json"
    meta = json.loads(meta_path.read_text())
    del meta["tokenizer"]
    meta_path.write_text(json.dumps(meta))
    old = BM25.load(tmp_path)
    assert old.tokenizer == "v1"
    # v1 dropped "between" and kept one-letter words; v2 keeps "between" and drops one-letter words.
    assert old.terms("spacing between rows x") == ["spacing", "rows", "x"]
    assert BM25.fit([["a"]], stemming=False, tokenizer="v2").terms("spacing between rows x") == [
        "spacing",
        "between",
        "rows",
    ]


def test_reciprocal_rank_fusion_formula():
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["c", "a"]], k=60)
    assert [h.handle for h in fused] == ["a", "c", "b"]
    assert fused[0].score == pytest.approx(1 / 61 + 1 / 62)
    assert [h.handle for h in reciprocal_rank_fusion([["a", "b"], ["b"]], depth=1)] == ["a", "b"]


def test_missing_dense_extra_names_the_install_command(monkeypatch, tmp_path):
    from docintent.retrieval.retrievers import _load_sentence_model

    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    with pytest.raises(MissingDependencyError, match=r"pip install 'docintent\[dense\]'"):
        _load_sentence_model()
