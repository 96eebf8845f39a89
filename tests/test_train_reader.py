"""benchmarks/train_reader.py: trees kept in the cache are the trees training gives."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from needs import need_module

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def train_reader():
    need_module("lightgbm", "the scorer is trained with LightGBM (pip install -e '.[train]')")
    sys.path.insert(0, str(BENCHMARKS))
    try:
        import train_reader

        yield train_reader
    finally:
        sys.path.remove(str(BENCHMARKS))


def _records(train_reader, n: int, seed: int) -> list[dict]:
    rng = np.random.default_rng(seed)
    width = len(train_reader.FEATURE_NAMES)
    recs = []
    for i in range(n):
        rows = rng.random((6, width)).astype(np.float32)
        labels = np.zeros(6, dtype=np.int8)
        labels[int(rows[:, 0].argmax())] = 1
        recs.append(
            {
                "doc": f"d{i}",
                "qid": "q",
                "noisy": False,
                "family": f"fam-{i % 3}",
                "rows": rows,
                "labels": labels,
                "sources": [["typed"]] * 6,
                "strong": np.zeros(6, dtype=bool),
            }
        )
    return recs


def test_kept_trees_predict_what_fresh_ones_do_and_another_seed_trains_anew(train_reader, tmp_path):
    recs = _records(train_reader, 200, 0)
    columns = list(range(len(train_reader.FEATURE_NAMES)))
    first = train_reader.cached_train(recs, columns, 0, 5, ["corpus"], tmp_path)
    assert len(list(tmp_path.glob("*.txt"))) == 1
    again = train_reader.cached_train(recs, columns, 0, 5, ["corpus"], tmp_path)
    x = recs[0]["rows"]
    assert np.array_equal(first.predict(x), again.predict(x))
    assert np.array_equal(first.predict(x), train_reader.train(recs, columns, 0, 5).predict(x))
    train_reader.cached_train(recs, columns, 1, 5, ["corpus"], tmp_path)
    assert len(list(tmp_path.glob("*.txt"))) == 2
