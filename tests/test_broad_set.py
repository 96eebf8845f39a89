"""The broad question set's rendered layouts: gold answers printed on the page, seeded, split by layout.

Builds every layout's HTML (no browser) and checks what the set's build relies on: each question's answer,
or each value a computed answer comes from, is in the page's visible text; the same seed gives the same
document and another seed another one; the committed split keeps every layout and real document on one side.
"""

from __future__ import annotations

import html
import json
import os
import re
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path

import pytest

from needs import need_module

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def broadset():
    need_module("faker", "the broad set's layouts draw their values with Faker")
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import broadset

        yield broadset
    finally:
        sys.path.remove(str(BENCHMARKS))


def _visible(page: str) -> str:
    body = re.sub(r"<style>.*?</style>", " ", page, flags=re.S)
    return re.sub(r"\s+", " ", html.unescape(re.sub(r"<[^>]+>", " ", body)))


def _build(broadset, layout: str, k: int):
    from broadset.common import LOCALE_NAMES, Ctx

    seed = zlib.crc32(f"{layout}/{k}".encode())
    return broadset.LAYOUTS[layout][1](Ctx(seed, LOCALE_NAMES[(seed >> 3) % len(LOCALE_NAMES)]))


def test_every_layout_prints_what_its_questions_ask(broadset):
    families = set()
    for layout in broadset.LAYOUTS:
        doc = _build(broadset, layout, 0)
        text = re.sub(r"\s+", " ", _visible(doc.html))
        assert len(doc.questions) >= 6, layout
        for question in doc.questions:
            assert question.answers and all(a.strip() for a in question.answers), (layout, question)
            for shown in question.must_show():
                assert re.sub(r"\s+", " ", shown) in text, (layout, question.question, shown)
            families.add(question.family)
    assert families == {
        "relation",
        "entity_type",
        "role",
        "multi_token",
        "lookup",
        "reverse_lookup",
        "schedule",
        "arithmetic",
        "chart",
        "prose_value",
    }


def test_documents_are_seeded(broadset):
    for layout in ("invoice-classic", "paper-twocol", "schedule-calendar"):
        first, again, other = _build(broadset, layout, 0), _build(broadset, layout, 0), _build(broadset, layout, 1)
        assert first.html == again.html and first.questions == again.questions
        assert first.html != other.html


def test_split_is_by_layout_and_document_with_every_type_on_both_sides(broadset):
    split = json.loads((BENCHMARKS / "data" / "broad_split.json").read_text())
    assert set(split["layouts"]) == set(broadset.LAYOUTS)
    for side in ("dev", "test"):
        types = {broadset.LAYOUTS[name][0] for name, s in split["layouts"].items() if s == side}
        assert types == {t for t, _ in broadset.LAYOUTS.values()}, side
    per = split["pages_per_layout"]
    pages = {side: per[side] * sum(1 for s in split["layouts"].values() if s == side) for side in ("dev", "test")}
    assert 0.55 <= pages["dev"] / (pages["dev"] + pages["test"]) <= 0.62


def test_documents_do_not_depend_on_the_hash_seed(broadset):
    """Set iteration order changes with PYTHONHASHSEED; no document may depend on it (a Faker city list is
    built from a set, so such a draw goes through a sorted copy)."""
    code = textwrap.dedent(f"""
        import hashlib, sys, zlib
        sys.path.insert(0, {str(BENCHMARKS)!r})
        from broadset import LAYOUTS
        from broadset.common import Ctx, LOCALE_NAMES
        h = hashlib.sha256()
        for name in LAYOUTS:
            for k in range(4):
                seed = zlib.crc32(f"{{name}}/{{k}}".encode())
                h.update(LAYOUTS[name][1](Ctx(seed, LOCALE_NAMES[(seed >> 3) % len(LOCALE_NAMES)])).html.encode())
        print(h.hexdigest())
        """)
    digests = {
        subprocess.run(
            [sys.executable, "-c", code],
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in (1, 2)
    }
    assert len(digests) == 1
