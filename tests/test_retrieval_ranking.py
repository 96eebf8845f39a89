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
    fielded = BM25Retriever(index).search("rotation", 2)
    assert body_only[0].handle == _page(index, "Drivers")
    assert fielded[0].handle == _page(index, "4.2 Rotation")
    assert (index.directory / "bm25_head.npz").is_file()  # derived file, reused by the next retriever
    assert BM25Retriever(index).search("rotation", 1)[0].handle == fielded[0].handle


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
