"""benchmarks/broad_corpus.py: the scorer's extra training pages come from the broad set's development layouts only,
with seeds the broad set never draws, and adding them leaves the scorer corpus's own split of families as it was."""

from __future__ import annotations

import shutil
import sys
import zlib
from pathlib import Path

import pytest

from needs import need_module

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def modules():
    need_module("faker", "the broad set's layouts draw their values with Faker")
    need_module("pypdfium2", "pages are read from their PDF text layer")
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import broad_corpus
        import train_reader

        yield broad_corpus, train_reader
    finally:
        sys.path.remove(str(BENCHMARKS))


def test_seeds_are_never_the_broad_sets_own(modules):
    broad_corpus, _ = modules
    own = {zlib.crc32(f"letter-block/{k}".encode()) for k in range(10)}
    ours = {broad_corpus.seed_of(side, "letter-block", k) for side in ("dev", "test") for k in range(200)}
    assert not own & ours
    assert broad_corpus.seed_of("dev", "letter-block", 3) != broad_corpus.seed_of("test", "letter-block", 3)


def test_extra_families_go_to_training_and_leave_the_corpus_split_alone(modules):
    _, train_reader = modules
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from readerset import FAMILIES
    finally:
        sys.path.remove(str(BENCHMARKS))
    own = [{"kind": f.rsplit("-t", 1)[0], "family": f} for f in FAMILIES]
    extra = [
        {"kind": "broad-schedule", "family": "broad-schedule-calendar"},
        {"kind": "broad-schedule", "family": "broad-schedule-programme"},
        {"kind": "broad-letter", "family": "broad-letter-block"},
    ]
    alone = train_reader.split_families(own, 0)
    both = train_reader.split_families(own + extra, 0)
    assert {f: both[f] for f in alone} == alone
    assert {both[d["family"]] for d in extra} == {"train"}
    assert sorted(alone.values()).count("test") == 20


def test_a_printed_page_keeps_only_questions_the_scorer_answers_with_their_answers_on_it(modules):
    broad_corpus, _ = modules
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        pytest.skip("chromium is not installed")
    rec, drops = broad_corpus.one(("dev", "schedule-programme", 0))
    assert rec is not None and not drops
    assert rec["kind"] == "broad-schedule" and rec["family"] == "broad-schedule-programme"
    text = " | ".join(line["text"] for line in rec["lines"]).lower()
    assert rec["questions"] and all(q["family"] not in broad_corpus.LEFT_OUT for q in rec["questions"])
    assert all(any(a.lower() in text for a in q["answers"]) for q in rec["questions"])
    assert all(0 <= v <= 1 for line in rec["lines"] for v in line["box"])
    again, _ = broad_corpus.one(("dev", "schedule-programme", 0))
    assert again == rec
