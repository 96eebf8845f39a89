"""The trained candidate scorer: gradient-boosted trees over :mod:`~docintent.reader.features`, and a calibration
of the chosen answer's probability, loaded from one JSON file without network and without the library that
trained it.

The model file (``docintent/data/reader/scorer.json``) holds the feature names the trees were trained on, the
candidate sources that proposed in training, and a logistic calibration fitted on layout families the trees never
saw; the trees themselves are flat arrays (feature, threshold, left, right, leaf value) in the compressed NumPy
file it names (``scorer.trees.npz``; an older model keeps them inline under ``trees``). The calibration: ``P(right) = sigmoid(a + b x logit(p1) + c x (logit(p1) - logit(p2)))`` with ``p1``, ``p2``
the trees' probabilities of the best and second candidate. A model may also name **bags** (``bags``: forests
trained each with a third of the layout families left out); its calibration then adds ``d x (logit(p1) -
logit(floor))``, ``floor`` the lowest of the main forest's and the bags' probabilities of the best candidate
(:meth:`Scorer.floor`). Where the bags disagree, the training did not pin down how to read the layout, so the
answer is less sure than the main forest alone says. Its manifest beside it (``scorer.manifest.json``)
names the training data's digest, the seed and the library versions; ``benchmarks/train_reader.py`` writes
both (one seeded command).

>>> scorer = Scorer.default()
>>> set(scorer.feature_names) <= set(FEATURE_NAMES)   # every feature it was trained on is computed
True
"""

from __future__ import annotations

import io
import json
import math
import threading
from dataclasses import KW_ONLY, dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path

import numpy as np

from .features import FEATURE_NAMES

MODEL_FILE = "scorer.json"
#: The arrays of :class:`Trees`, by name, in the ``.npz`` file a model names under ``trees``.
TREE_ARRAYS = ("feature", "threshold", "left", "right", "value", "roots")


def logit(p: float, bound: float = 1e-6) -> float:
    """``log(p / (1 - p))``, with ``p`` kept within [bound, 1 - bound] (a certain 0 or 1 is never infinitely far).

    >>> round(logit(0.5), 3), round(logit(0.9), 3), round(logit(1.0, bound=1e-4), 3)
    (0.0, 2.197, 9.21)
    """
    p = min(max(float(p), bound), 1.0 - bound)
    return math.log(p / (1.0 - p))


@dataclass(frozen=True)
class Trees:
    """Flat arrays of every tree: node ``i`` of the forest splits on ``feature[i]`` at ``threshold[i]`` (go to
    ``left[i]`` when the value is <= the threshold) or, when ``feature[i] < 0``, is a leaf worth ``value[i]``;
    ``roots`` are each tree's first node."""

    feature: np.ndarray
    threshold: np.ndarray
    left: np.ndarray
    _: KW_ONLY
    right: np.ndarray
    value: np.ndarray
    roots: np.ndarray
    depth: int
    base: float

    def margin(self, x: np.ndarray) -> np.ndarray:
        """The summed leaf values (log-odds) of every row of ``x``."""
        n = x.shape[0]
        if n == 0:
            return np.zeros(0)
        node = np.broadcast_to(self.roots, (n, self.roots.size)).copy()
        rows = np.arange(n)[:, None]
        for _ in range(self.depth):
            feat = self.feature[node]
            leaf = feat < 0
            if leaf.all():
                break
            vals = x[rows, np.where(leaf, 0, feat)]
            go_left = vals <= self.threshold[node]
            nxt = np.where(go_left, self.left[node], self.right[node])
            node = np.where(leaf, node, nxt)
        return self.base + self.value[node].sum(axis=1)


class Scorer:
    """Candidate probabilities and the calibrated confidence of the chosen one (see the module docstring)."""

    def __init__(
        self,
        model: dict,
        arrays: dict[str, np.ndarray] | None = None,
        bags: list[tuple[dict[str, np.ndarray], dict]] | None = None,
    ) -> None:
        names = tuple(model["features"])
        missing = [n for n in names if n not in FEATURE_NAMES]
        if missing:
            raise ValueError(f"scorer model: features this reader does not compute: {', '.join(missing[:5])}")
        self.feature_names = names
        self._columns = np.array([FEATURE_NAMES.index(n) for n in names], dtype=np.int64)
        t = arrays if arrays is not None else model["trees"]
        if isinstance(t, str):
            raise ValueError(f"scorer model: its trees are in {t!r}; load it with Scorer.load or Scorer.default")
        # the forest's depth and base margin sit beside the arrays: in the model when the arrays are in a file
        self.trees = _trees(t, model if arrays is not None else t)
        self.bags = tuple(_trees(b_arrays, shape) for b_arrays, shape in (bags or ()))
        cal = model.get("calibration") or {"a": 0.0, "b": 1.0, "c": 0.0}
        self.calibration = (float(cal["a"]), float(cal["b"]), float(cal["c"]), float(cal.get("d", 0.0)))
        self.version = str(model.get("version", ""))
        #: The tasks and typed-span kinds of the questions it was trained on (others are left to the rules).
        self.tasks = frozenset(model.get("tasks", ("doc",)))
        self.span_kinds = frozenset(model.get("span_kinds", ()))
        #: The question shapes it was trained on (``Question.shape``; None: an older model that does not say).
        self.shapes: frozenset[str] | None = frozenset(model["shapes"]) if "shapes" in model else None
        #: The candidate sources that proposed while it was trained (None: an older model that does not say).
        self.sources: tuple[str, ...] | None = tuple(model["sources"]) if "sources" in model else None
        self.meta = {k: v for k, v in model.items() if k not in ("trees", "features")}

    @classmethod
    def load(cls, path: str | Path) -> Scorer:
        """The model in ``path`` (its trees' ``.npz`` file beside it)."""
        path = Path(path)
        return cls._read(path.parent, path.name)

    @classmethod
    def default(cls) -> Scorer:
        """The committed model, loaded once per process."""
        global _DEFAULT
        with _LOCK:
            if _DEFAULT is None:
                _DEFAULT = cls._read(resources.files("docintent").joinpath("data", "reader"), MODEL_FILE)
            return _DEFAULT

    @classmethod
    def _read(cls, folder: Path | Traversable, name: str) -> Scorer:
        model = json.loads(folder.joinpath(name).read_text(encoding="utf-8"))
        trees = model.get("trees")
        bags = [(_arrays(folder.joinpath(b["trees"]).read_bytes()), b) for b in model.get("bags", ())]
        return cls(model, _arrays(folder.joinpath(trees).read_bytes()) if isinstance(trees, str) else None, bags)

    def probabilities(self, rows: list[list[float]]) -> np.ndarray:
        """The trees' probability that each candidate (a row of features) is the answer."""
        if not rows:
            return np.zeros(0)
        x = np.asarray(rows, dtype=np.float64)[:, self._columns]
        return _sigmoid(self.trees.margin(x))

    def floor(self, best: float, row: list[float]) -> float:
        """The best candidate's probability as the confidence takes it: the lowest of ``best`` (the main forest's)
        and each bag's probability of the same candidate (``row``: its features); ``best`` itself without bags."""
        if not self.bags:
            return best
        x = np.asarray([row], dtype=np.float64)[:, self._columns]
        return min([best] + [float(_sigmoid(bag.margin(x))[0]) for bag in self.bags])

    def confidence(self, best: float, second: float, floor: float | None = None) -> float:
        """Calibrated probability that the best candidate is right, from its probability, the runner-up's and,
        with bags, the lowest probability any forest gives it (:meth:`floor`; None: ``best``)."""
        a, b, c, d = self.calibration
        z = a + b * logit(best) + c * (logit(best) - logit(second))
        if floor is not None:
            z += d * (logit(best) - logit(floor))
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


def _sigmoid(margin: np.ndarray) -> np.ndarray:
    """Probabilities from summed leaf values (log-odds)."""
    return 1.0 / (1.0 + np.exp(-margin))


def _trees(t: dict, shape: dict) -> Trees:
    """A forest from its arrays ``t``; its depth and base margin from ``shape``."""
    return Trees(
        np.asarray(t["feature"], np.int64),
        np.asarray(t["threshold"], np.float64),
        np.asarray(t["left"], np.int64),
        right=np.asarray(t["right"], np.int64),
        value=np.asarray(t["value"], np.float64),
        roots=np.asarray(t["roots"], np.int64),
        depth=int(shape["depth"]),
        base=float(shape.get("base", 0.0)),
    )


def _arrays(data: bytes) -> dict[str, np.ndarray]:
    """The tree arrays of an ``.npz`` file's bytes (plain arrays only: nothing is unpickled)."""
    with np.load(io.BytesIO(data), allow_pickle=False) as npz:
        return {name: npz[name] for name in TREE_ARRAYS}


_DEFAULT: Scorer | None = None
_LOCK = threading.Lock()
