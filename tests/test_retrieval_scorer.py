"""The VisDocAgentBench scorer on hand-made rankings, and its files."""

from __future__ import annotations

import pytest

from docintent.errors import DatasetError
from docintent.evaluation.visdoc import Annotation, load_annotations, load_page_ids, load_queries, score, write_jsonl

KNOWN = {f"p{i:02d}" for i in range(1, 21)}
TEN = [f"p{i:02d}" for i in range(1, 11)]


def _gold(**answers: tuple[str, int]) -> dict[str, Annotation]:
    return {
        q: Annotation(q, page, level, support_page_ids=(), topic_id="topic-a" if level == 1 else "topic-b")
        for q, (page, level) in answers.items()
    }


def test_ranks_1_3_10_and_missing():
    gold = _gold(q1=("p01", 1), q2=("p03", 1), q3=("p10", 2), q4=("p11", 2))
    s = score({"q1": TEN, "q2": TEN, "q3": TEN, "q4": TEN}, gold, known=KNOWN)
    assert s.overall["R@1"] == 25.0
    assert s.overall["R@3"] == 50.0
    assert s.overall["R@5"] == 50.0
    assert s.overall["R@10"] == 75.0  # the page at rank 10 counts, the one not in the ten does not
    assert s.overall["MRR@10"] == pytest.approx(100 * (1 + 1 / 3 + 1 / 10 + 0) / 4, abs=0.01)
    assert s.by_level["direct"]["R@3"] == 100.0 and s.by_level["one-bridge"]["R@10"] == 50.0
    assert s.by_topic["topic-b"]["MRR@10"] == pytest.approx(100 * (1 / 10) / 2, abs=0.01)
    assert s.invalid == {}


def test_invalid_rankings_score_zero_but_stay_in_the_denominator():
    gold = _gold(q1=("p01", 1), q2=("p01", 1), q3=("p01", 1), q4=("p11", 1), q5=("p01", 1), q6=("p01", 1))
    subs = {
        "q1": TEN[:9],  # nine handles
        "q2": TEN[:9] + ["p01"],  # a duplicate
        "q3": TEN[:9] + ["nope"],  # an unknown handle
        "q4": TEN + ["p11"],  # eleven handles, the answer at rank 11
        "q5": TEN,  # valid, answer at rank 1
        # q6: no submission at all
    }
    s = score(subs, gold, known=KNOWN)
    assert s.overall["n"] == 6
    assert s.overall["R@10"] == pytest.approx(100 / 6, abs=0.01) and s.overall["MRR@10"] == pytest.approx(
        100 / 6, abs=0.01
    )
    assert s.invalid == {
        "q1": "9 handles instead of 10",
        "q2": "duplicate handles: p01",
        "q3": "unknown handles: nope",
        "q4": "11 handles instead of 10",
        "q6": "no submission",
    }


def test_files_round_trip(tmp_path):
    write_jsonl(tmp_path / "queries.jsonl", [{"query_id": "q1", "query": "fonts?", "topic_id": "t"}])
    write_jsonl(
        tmp_path / "evaluator_annotations.jsonl",
        [{"query_id": "q1", "answer_page_id": "p02", "level": 2, "support_page_ids": ["p05"], "topic_id": "t"}],
    )
    write_jsonl(tmp_path / "pages.jsonl", [{"page_id": p} for p in sorted(KNOWN)])
    queries, gold, known = load_queries(tmp_path), load_annotations(tmp_path), load_page_ids(tmp_path)
    assert queries[0].query == "fonts?" and gold["q1"].support_page_ids == ("p05",) and known == KNOWN
    assert score({"q1": TEN}, gold, known=known).by_level["one-bridge"]["MRR@10"] == 50.0
    (tmp_path / "queries.jsonl").write_text('{"query": "no id"}\n')
    with pytest.raises(DatasetError, match="queries.jsonl: row 1 has no 'query_id' field"):
        load_queries(tmp_path)
