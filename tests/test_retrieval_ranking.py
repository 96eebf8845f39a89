"""Field-weighted BM25, passages and dense page scores, fusion weights, the no-harm agent and bridge splitting."""

from __future__ import annotations

import hashlib
import re

import numpy as np
import pytest

from docintent.retrieval import PageIndex, build_index, get_retriever, reciprocal_rank_fusion
from docintent.retrieval.agent import SearchAgent
from docintent.retrieval.fields import headings
from docintent.retrieval.passages import PassageEmbeddings, split_passages
from docintent.retrieval.planners import OfflinePlanner, split_bridge
from docintent.retrieval.retrievers import BM25Retriever, DenseRetriever, FusionRetriever
from docintent.retrieval.text import normalize, tokenize
from retrieval_helpers import FILLER, make_pdf


class HashingModel:
    """A stand-in sentence model: a bag of hashed words, so texts that share words are close."""

    def encode(self, texts, **_):
        out = np.zeros((len(texts), 64), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % 64] += 1.0
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norms == 0, 1, norms)


@pytest.fixture(scope="module")
def index(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("ranking")
    pages = FILLER + [
        # mentions "rotation" three times in its body, but is about something else
        "Drivers\nThe dvips driver supports rotation.\nRotation needs a driver.\nEvery rotation is done by the driver.",
        # the page whose heading is the topic
        "4.2 Rotation\nThe rotatebox command turns its argument.",
    ]
    make_pdf(tmp / "guide.pdf", pages)
    build_index([tmp / "guide.pdf"], tmp / "idx", seed=3)
    idx = PageIndex.open(tmp / "idx")
    yield idx
    idx.close()


def _page(index, needle):
    return next(r.handle for r in index.records() if needle in r.text)


def test_headings_are_numbered_or_short_first_lines():
    text = "Running head\n3.2 Defining Colours\nThe colours black and white are predefined in every driver.\n1 . . . 4"
    assert headings(text).split("\n") == ["Running head", "3.2 Defining Colours"]


def test_heading_field_ranks_the_page_about_the_topic_above_a_page_that_repeats_the_word(index):
    body_only = BM25Retriever(index, fields=False).search("rotation", 2)
    fielded = BM25Retriever(index, head_weight=0.5).search("rotation", 2)  # the fusion's lexical half
    assert body_only[0].handle == _page(index, "Drivers")
    assert fielded[0].handle == _page(index, "4.2 Rotation")
    assert (index.directory / "bm25_head.npz").is_file()  # derived file, reused by the next retriever
    assert BM25Retriever(index, head_weight=0.5).search("rotation", 1)[0].handle == fielded[0].handle
    # The bm25 method's light heading weight (0.1) nudges, but does not overturn three body mentions.
    light = BM25Retriever(index).search("rotation", 2)
    assert [h.handle for h in light] == [h.handle for h in body_only]
    assert light[1].score - body_only[1].score > 0  # the heading still adds to the "4.2 Rotation" page


def test_index_is_unstemmed_and_queries_match_it(index):
    assert index.bm25.stemming is False
    assert index.bm25.terms("Selecting fonts") == ["selecting", "fonts"]
    assert tokenize("Selecting fonts") == ["select", "font"]  # the stemmer is still there for callers


def test_normalize_joins_words_split_by_the_text_layer():
    assert tokenize("Alterna\ufffetively en-\nlarged", stemming=False) == ["alternatively", "enlarged"]
    assert normalize("well-known") == "well-known"


def test_passages_overlap_and_cover_the_page():
    words = [f"w{i}" for i in range(300)]
    parts = split_passages(" ".join(words), size=160, stride=120)
    assert [p.split()[0] for p in parts] == ["w0", "w120", "w140"]
    assert all(len(p.split()) == 160 for p in parts)
    assert set(" ".join(parts).split()) == set(words)
    assert split_passages("") == [""]


def test_dense_page_score_is_the_best_passage_and_soft_max_rewards_several(tmp_path):
    filler = " ".join(f"filler{i}" for i in range(150))
    texts = ["alpha beta gamma", f"{filler} alpha beta gamma {filler} alpha beta gamma", "zeta eta"]
    emb = PassageEmbeddings(tmp_path, texts, model=HashingModel(), size=160, stride=120)
    q = HashingModel().encode(["alpha beta gamma"])[0]
    hard = emb.scores(q)
    per_passage = emb.passage_scores(q)
    for row in range(3):
        assert hard[row] == pytest.approx(per_passage[emb.rows == row].max())
    assert hard[0] > hard[1] > hard[2]
    assert (emb.rows == 1).sum() > 2
    soft = emb.scores(q, temperature=0.05)
    assert np.all(soft >= hard - 1e-6)
    assert soft[0] == pytest.approx(hard[0], abs=1e-3)  # one passage: soft max = max
    # Cached: a second object reads the files instead of encoding.
    again = PassageEmbeddings(tmp_path, texts, model=None)
    np.testing.assert_allclose(again.scores(q), hard, atol=1e-3)


def test_dense_and_fusion_rank_whole_pages(index):
    dense = DenseRetriever(index, model=HashingModel())
    target = _page(index, "4.2 Rotation")
    assert dense.search("the rotatebox command turns its argument", 1)[0].handle == target
    fusion = FusionRetriever(index, dense=dense)
    assert fusion.search("rotatebox turns", 1)[0].handle == target


def test_weighted_fusion():
    fused = reciprocal_rank_fusion([["a", "b"], ["b", "a"]], k=60, weights=[2.0, 1.0])
    assert [h.handle for h in fused] == ["a", "b"]
    assert fused[0].score == pytest.approx(2 / 61 + 1 / 62)


def test_question_without_cue_that_asks_where_a_described_package_starts_is_a_bridge():
    q = "The array manual points to a better package for decimal columns. Where does that package's documentation begin?"
    target, anchor = split_bridge(q)
    assert "documentation begin" in target
    assert anchor.startswith("The array manual")
    assert split_bridge("How do I draw a double rule in a table?") is None
    assert split_bridge("Show the first page of the user guide.") is None  # no thing named only by reference


def test_agent_keeps_its_first_search_on_top_for_direct_questions(index):
    agent = SearchAgent(index, OfflinePlanner())
    for query in ("rotation", "counters representation", "footnotes bottom"):
        first = get_retriever(index, "bm25").search(query, 1)[0].handle
        result = agent.run(query)
        assert result.handles[0] == first
        assert len(result.handles) == 10


def test_search_explain_names_matched_terms_fields_and_passage(index, capsys):
    from docintent.cli import main

    assert main(["search", str(index.directory), "rotatebox rotation", "-k", "1", "--explain"]) == 0
    out = capsys.readouterr().out
    assert "4.2 Rotation" in out
    terms = next(line for line in out.splitlines() if "matched terms:" in line)
    assert "rotatebox x1" in terms and "rotation x1" in terms
    assert "BM25 by field: body" in out and "headings" in out
    assert "passage: 4.2 Rotation The rotatebox command turns its argument." in out


def test_derived_field_files_are_rebuilt_after_the_index_is(tmp_path):
    import os

    make_pdf(tmp_path / "a.pdf", ["1 Alpha topic\nalpha words here.", "2 Beta topic\nbeta words here."])
    build_index([tmp_path / "a.pdf"], tmp_path / "idx")
    idx = PageIndex.open(tmp_path / "idx")
    assert "Alpha topic" in idx.text(BM25Retriever(idx).search("alpha", 1)[0].handle)
    head = tmp_path / "idx" / "bm25_head.npz"
    old = head.stat().st_mtime
    idx.close()
    make_pdf(tmp_path / "a.pdf", ["1 Gamma topic\ngamma words here.", "2 Alpha topic\nalpha words here."])
    build_index([tmp_path / "a.pdf"], tmp_path / "idx", overwrite=True)
    os.utime(head, (old - 10, old - 10))  # as if written long before the rebuild
    idx = PageIndex.open(tmp_path / "idx")
    hit = BM25Retriever(idx).search("alpha", 1)[0].handle
    assert "Alpha topic" in idx.text(hit)
    assert head.stat().st_mtime > old - 10
    idx.close()


def test_question_words_are_dropped_but_words_that_carry_meaning_in_manuals_are_kept(tmp_path):
    after = "Floats\nA float goes after the paragraph that cites the float."
    before = "Early floats\nA float can go before the paragraph."
    make_pdf(tmp_path / "floats.pdf", FILLER + [after, before])
    build_index([tmp_path / "floats.pdf"], tmp_path / "idx")
    idx = PageIndex.open(tmp_path / "idx")
    try:
        assert (idx.bm25.tokenizer, idx.bm25.k1, idx.bm25.b) == ("v2", 1.5, 0.75)  # the defaults chosen on dev
        assert idx.bm25.terms("How can a float go before the paragraph?") == ["float", "go", "before", "paragraph"]
        for retriever in (BM25Retriever(idx, fields=False), BM25Retriever(idx)):
            top = retriever.search("How can a float go before the paragraph?", 2)
            # The first tokeniser dropped "before" as a stop word and ranked the page that says "float" twice first.
            assert "Early floats" in idx.text(top[0].handle) and "after the paragraph" in idx.text(top[1].handle)
    finally:
        idx.close()


class _Scored:
    """A stand-in retriever with fixed page scores."""

    def __init__(self, scores):
        self._scores = np.asarray(scores, dtype=np.float64)

    def scores(self, query):
        return self._scores

    def search(self, query, k=10):
        from docintent.retrieval.retrievers import Hit

        order = np.lexsort((np.arange(len(self._scores)), -self._scores))[:k]
        return [Hit("abcdef"[r], float(self._scores[r])) for r in order]


def test_fusion_defaults_standardise_the_top_scores_and_trust_bm25_more_than_dense():
    from types import SimpleNamespace

    from docintent.retrieval.retrievers import FUSION_DEPTH, FUSION_HEAD_WEIGHT, FUSION_MODE, FUSION_WEIGHTS

    assert (FUSION_MODE, FUSION_DEPTH, FUSION_WEIGHTS, FUSION_HEAD_WEIGHT) == ("zscore", 20, (0.6, 0.4), 0.5)
    index = SimpleNamespace(handles=list("abcdef"))
    bm25 = _Scored([16, 9, 1, 0.5, 0, 0])  # "a" is BM25's clear first
    dense = _Scored([0.3, 0.6, 0.2, 0.1, 0.1, 0.0])  # "b" is dense's clear first
    fusion = FusionRetriever(index, bm25=bm25, dense=dense)  # type: ignore[arg-type]
    assert [h.handle for h in fusion.search("q", 3)] == ["a", "b", "c"]
    assert fusion.ranks["a"] == {"bm25": 1, "dense": 2} and fusion.ranks["b"] == {"bm25": 2, "dense": 1}
    even = FusionRetriever(index, bm25=bm25, dense=dense, weights=(0.5, 0.5))  # type: ignore[arg-type]
    assert [h.handle for h in even.search("q", 2)] == ["b", "a"]
    rrf = FusionRetriever(index, bm25=bm25, dense=dense, mode="rrf")  # type: ignore[arg-type]
    assert (rrf.k, rrf.weights, rrf.depth) == (5, (1.0, 0.75), 1000)
    assert [h.handle for h in rrf.search("q", 2)] == ["a", "b"]  # 1/6 + 0.75/7 beats 1/7 + 0.75/6


def test_default_fusion_lexical_half_weighs_headings_more_than_bm25_alone(index):
    dense = DenseRetriever(index, model=HashingModel())
    fusion = get_retriever(index, "fusion", model=HashingModel())
    assert fusion.bm25.fields.head_weight == 0.5 and BM25Retriever(index).fields.head_weight == 0.1
    assert FusionRetriever(index, dense=dense).bm25.fields.title_weight == 0.5


def test_search_explain_of_fusion_gives_each_list_rank(index, capsys, monkeypatch):
    from docintent.cli import main
    from docintent.retrieval import passages

    monkeypatch.setattr(passages, "load_sentence_model", lambda: HashingModel())
    assert (
        main(["search", str(index.directory), "rotatebox rotation", "-k", "2", "--method", "fusion", "--explain"]) == 0
    )
    out = capsys.readouterr().out
    lines = [line.strip() for line in out.splitlines() if line.strip().startswith("fusion:")]
    assert len(lines) == 2
    assert lines[0].startswith("fusion: bm25 rank 1, dense rank ") and lines[0].endswith(
        "(weights 0.6 : 0.4, zscore over the top 20)"
    )


@pytest.mark.dense
def test_cli_agent_starts_from_fusion_once_the_index_has_passage_embeddings(tmp_path, capsys, monkeypatch):
    from docintent.cli import main
    from docintent.retrieval import passages

    make_pdf(tmp_path / "guide.pdf", FILLER + ["4.2 Rotation\nThe rotatebox command turns its argument."])
    build_index([tmp_path / "guide.pdf"], tmp_path / "idx")
    query = "which command turns its argument"
    assert main(["search", str(tmp_path / "idx"), query, "-k", "1", "--method", "agent", "--explain"]) == 0
    out = capsys.readouterr().out
    assert f"agent searches: bm25 {query!r}" in out and "fusion" not in out
    idx = PageIndex.open(tmp_path / "idx")
    assert len(DenseRetriever(idx, model=HashingModel()).passages.embeddings) == 13  # what a first dense search writes
    idx.close()
    monkeypatch.setattr(passages, "load_sentence_model", lambda: HashingModel())
    assert main(["search", str(tmp_path / "idx"), query, "-k", "1", "--method", "agent", "--explain"]) == 0
    out = capsys.readouterr().out
    assert f"agent searches: fusion {query!r}" in out
    assert "4.2 Rotation" in out.splitlines()[0]
