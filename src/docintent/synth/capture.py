"""Capture conditions: which degradations each photographed copy of a page gets, and applying them.

A :class:`CapturePlan` is pure data (degradation names, severities, seeds), drawn for all captures before any
pixel is touched so the mix can be balanced across the whole set and the plan is recorded per image. The
degradation functions come from :mod:`docintent.synth.degrade`; placing the page on a desk and folding it
live here. Steps run in physical order: the paper (stain, fold, crumple), the screen it may be shown on
(moiré), the page's shape in space (curl, perspective) and its distance from the camera, the light (shadow,
uneven light, glare, low contrast, colour cast), the lens
(defocus, motion blur), the sensor (noise), how the photo is held (rotation) and how it is saved (JPEG).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from . import degrade

#: Degradation names a plan may contain besides the rotations, in the order they are applied.
ORDER = (
    "stain",
    "fold",
    "moire",
    "curl",
    "perspective",
    "shadow",
    "low_contrast",
    "color_cast",
    "defocus",
    "motion_blur",
    "noise",
    "jpeg",
)
ROTATIONS = {90: "rotation_90", 180: "rotation_180", 270: "rotation_270"}
ALL_NAMES = ORDER + tuple(ROTATIONS.values())
#: Degradations a plan may name that the :class:`Planner` never draws (so generated sets stay as they were);
#: capture sets built condition by condition use them: crumpled paper, a photo from a distance, glare.
EXTRA = ("crumple", "distance", "uneven_light", "glare")

# Pairs that do not happen together in one photo (a screen neither curls nor stains) or would be redundant.
_EXCLUSIVE = ({"defocus", "motion_blur"}, {"curl", "fold"}, {"moire", "stain"}, {"moire", "curl"}, {"moire", "fold"})


@dataclass(frozen=True)
class Step:
    """One degradation with its severity in [0, 1] and the seed of the generator that drew its details."""

    name: str
    severity: float
    seed: int


@dataclass(frozen=True)
class CapturePlan:
    """The degradations of one capture, the clockwise rotation of the photo, and the output size."""

    steps: tuple[Step, ...]
    rotation: int
    longest_side: int
    seed: int

    @property
    def names(self) -> tuple[str, ...]:
        """Degradation names as recorded in ``Sample.degradations`` (application order, rotation last)."""
        names = [s.name for s in self.steps if s.name != "jpeg"]
        if self.rotation:
            names.append(ROTATIONS[self.rotation])
        names += [s.name for s in self.steps if s.name == "jpeg"]
        return tuple(names)

    def to_meta(self) -> dict[str, Any]:
        """The plan as plain data for ``Sample.meta``: enough to re-create the capture exactly."""
        return {
            "steps": [{"name": s.name, "severity": round(s.severity, 4), "seed": s.seed} for s in self.steps],
            "rotation_clockwise": self.rotation,
            "longest_side": self.longest_side,
            "seed": self.seed,
        }


@dataclass
class Planner:
    """Draws capture plans so that every degradation shows up often enough to be measured on its own.

    Capture 1 of a question is mild (one light degradation, or nearly clean with probability
    ``clean_first``); captures 2-4 combine 1-3 degradations of any severity, and are turned by 90/180/270
    degrees with probability ``rotate_p``. Degradations are drawn with weights that favour the ones used
    least so far, which keeps each degradation's share close to even.
    """

    rng: np.random.Generator
    clean_first: float = 0.4
    rotate_p: float = 0.2
    used: Counter = field(default_factory=Counter)

    def _draw(self, k: int) -> list[str]:
        chosen: list[str] = []
        for _ in range(k):
            pool = [
                n
                for n in ORDER
                if n not in chosen and not any(n in pair and (pair - {n}) & set(chosen) for pair in _EXCLUSIVE)
            ]
            weights = np.array([1.0 / (1.0 + self.used[n]) ** 2 for n in pool])
            name = pool[int(self.rng.choice(len(pool), p=weights / weights.sum()))]
            chosen.append(name)
            self.used[name] += 1
        return chosen

    def plan(self, capture: int) -> CapturePlan:
        """The plan for capture number ``capture`` (1..4) of a question."""
        seed = int(self.rng.integers(2**31))
        longest = int(self.rng.integers(1600, 2001))
        if capture == 1:
            if self.rng.random() < self.clean_first:
                return CapturePlan((), 0, longest, seed)
            names, lo, hi, rotation = self._draw(1), 0.1, 0.4, 0
        else:
            k = int(self.rng.choice([1, 2, 3], p=[0.3, 0.4, 0.3]))
            names, lo, hi = self._draw(k), 0.25, 1.0
            rotation = int(self.rng.choice([90, 180, 270])) if self.rng.random() < self.rotate_p else 0
        steps = tuple(
            Step(n, float(self.rng.uniform(lo, hi)), int(self.rng.integers(2**31)))
            for n in sorted(names, key=ORDER.index)
        )
        return CapturePlan(steps, rotation, longest, seed)


# --- pixels ----------------------------------------------------------------------------------------


def desk(shape: tuple[int, int], rng: np.random.Generator) -> tuple[np.ndarray, str]:
    """A table surface to lay a page on: wood grain, a fabric-like mottle, or a plain painted desk."""
    h, w = shape
    kind = ("wood", "mottled", "plain")[int(rng.integers(3))]
    sh, sw = max(h // 8, 4), max(w // 8, 4)
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32)
    palette = {
        "wood": ((150, 100, 55), (120, 80, 45), (175, 130, 85), (90, 60, 40)),
        "mottled": ((110, 110, 110), (70, 90, 70), (140, 125, 105), (60, 65, 80)),
        "plain": ((200, 200, 195), (215, 205, 185), (170, 175, 180), (225, 225, 220)),
    }[kind]
    base = np.array(palette[int(rng.integers(len(palette)))], np.float32) * rng.uniform(0.85, 1.1)
    if kind == "wood":
        warp = cv2.GaussianBlur(rng.normal(0, 1, (sh, sw)).astype(np.float32), (0, 0), 6) * 40
        angle = rng.uniform(0, np.pi)
        coord = np.cos(angle) * xx + np.sin(angle) * yy + warp
        grain = 0.5 + 0.5 * np.sin(coord / rng.uniform(2.0, 5.0))
        tone = 1.0 - 0.25 * grain
    elif kind == "mottled":
        tone = 1.0 + cv2.GaussianBlur(rng.normal(0, 1, (sh, sw)).astype(np.float32), (0, 0), 3) * 0.6
    else:
        tone = 1.0 + cv2.GaussianBlur(rng.normal(0, 1, (sh, sw)).astype(np.float32), (0, 0), 12) * 0.8
    small = np.clip(base[None, None, :] * tone[:, :, None] + 0.5, 0, 255).astype(np.uint8)
    return cv2.resize(small, (w, h), interpolation=cv2.INTER_LINEAR), kind


def place_on_desk(page: np.ndarray, rng: np.random.Generator, margin: float) -> tuple[np.ndarray, dict]:
    """The page centred on a desk texture with ``margin`` (a fraction of the page size) on every side."""
    h, w = page.shape[:2]
    mh, mw = int(round(h * margin)), int(round(w * margin))
    scene, kind = desk((h + 2 * mh, w + 2 * mw), rng)
    # a faint drop shadow under the paper so its edge reads as a sheet lying on the table
    # (computed at 1/8 scale: it is smooth, and full-size blurs cost more than the whole capture)
    sh, sw = scene.shape[0] // 8 + 1, scene.shape[1] // 8 + 1
    soft = np.zeros((sh, sw), np.float32)
    off = max(1, int(0.006 * max(h, w) / 8))
    soft[(mh // 8) + off : (mh + h) // 8 + off, (mw // 8) + off : (mw + w) // 8 + off] = 1.0
    soft = cv2.GaussianBlur(soft, (0, 0), max(1.0, 0.01 * max(h, w) / 8))
    soft = cv2.resize(soft, (scene.shape[1], scene.shape[0]), interpolation=cv2.INTER_LINEAR)
    scene = cv2.multiply(scene, cv2.merge([1.0 - 0.45 * soft] * 3), dtype=cv2.CV_8U)
    scene[mh : mh + h, mw : mw + w] = page
    return scene, {"background": kind, "margin": round(margin, 4)}


def fold(img: np.ndarray, rng: np.random.Generator, severity: float = 0.5) -> np.ndarray:
    """A page that was folded and flattened again: a crease line, panels lit differently, a small step.

    The crease runs roughly across (letter folded in thirds) or down the page at 25-75 % of its length;
    one panel is darkened by up to ``22 % * severity`` with a soft gradient into the crease, the crease itself
    is a thin dark line with a bright edge, and the content on one side shifts by up to ``5 * severity`` px.
    """
    a = np.asarray(img)
    s = float(np.clip(severity, 0.0, 1.0))
    h, w = a.shape[:2]
    horizontal = rng.random() < 0.7
    pos = rng.uniform(0.25, 0.75)
    tilt = rng.uniform(-0.04, 0.04)
    flip = rng.random() < 0.5
    # The light and shift fields are smooth, so they are computed at 1/4 scale and enlarged.
    q = 4
    sh, sw = (h + q - 1) // q, (w + q - 1) // q
    yy, xx = np.mgrid[0:sh, 0:sw].astype(np.float32) * q
    if horizontal:
        dist = yy - (pos * h + tilt * (xx - w / 2))  # signed distance to the crease, in px
    else:
        dist = xx - (pos * w + tilt * (yy - h / 2))
    width = max(2.0 * q, 0.004 * max(h, w))
    side = 1.0 / (1.0 + np.exp(-dist / (width * 8)))  # 0 on one panel, 1 on the other
    if flip:
        side = 1.0 - side
    crease = np.exp(-((dist / width) ** 2))
    ridge = np.exp(-(((dist - 2.5 * width) / width) ** 2))
    light = (1.0 - 0.22 * s * side) * (1.0 - 0.45 * s * crease) * (1.0 + 0.08 * s * ridge)
    light = cv2.resize(light, (w, h), interpolation=cv2.INTER_LINEAR)
    step = cv2.resize((5.0 * s * side).astype(np.float32), (w, h), interpolation=cv2.INTER_LINEAR)
    gy, gx = np.indices((h, w), dtype=np.float32)
    if horizontal:
        gy -= step
    else:
        gx -= step
    moved = cv2.remap(a, gx, gy, cv2.INTER_LINEAR, borderMode=cv2.BORDER_REPLICATE)
    return cv2.multiply(moved, cv2.merge([light.astype(np.float32)] * 3), dtype=cv2.CV_8U)


_FUNCTIONS = {
    "stain": degrade.stain,
    "fold": fold,
    "moire": degrade.moire,
    "perspective": degrade.perspective,
    "shadow": degrade.shadow,
    "low_contrast": degrade.low_contrast,
    "color_cast": degrade.color_cast,
    "defocus": degrade.defocus,
    "motion_blur": degrade.motion_blur,
    "noise": degrade.noise,
    "jpeg": degrade.jpeg,
    "crumple": degrade.crumple,
    "distance": degrade.distance,
    "uneven_light": degrade.uneven_light,
    "glare": degrade.glare,
}


def _resize_longest(img: np.ndarray, longest: int) -> np.ndarray:
    h, w = img.shape[:2]
    scale = longest / max(h, w)
    if abs(scale - 1.0) < 1e-3:
        return img
    interp = cv2.INTER_AREA if scale < 1 else cv2.INTER_CUBIC
    return cv2.resize(img, (max(1, int(round(w * scale))), max(1, int(round(h * scale)))), interpolation=interp)


def apply(page: np.ndarray, plan: CapturePlan) -> tuple[np.ndarray, dict[str, Any]]:
    """Photograph ``page`` under ``plan``; returns the capture and what was done (for ``Sample.meta``)."""
    meta: dict[str, Any] = plan.to_meta()
    rng = np.random.default_rng(plan.seed)
    steps = {s.name: s for s in plan.steps}
    img = page

    def run(name: str, image: np.ndarray) -> np.ndarray:
        step = steps[name]
        return _FUNCTIONS[name](image, np.random.default_rng(step.seed), step.severity)

    for name in ("stain", "fold", "crumple", "moire"):
        if name in steps:
            img = run(name, img)
    if "curl" in steps:
        step = steps["curl"]
        if "perspective" in steps:
            img = degrade.curl(img, np.random.default_rng(step.seed), step.severity)
        else:
            # lay the page on the desk first so the curl bends its outline as well as its lines; the extra
            # band at top and bottom keeps curl's white fill off the picture and is cut away afterwards
            margin = float(rng.uniform(0.05, 0.12))
            scene, placed = place_on_desk(img, rng, margin)
            band = int(0.05 * scene.shape[0]) + 2
            scene = cv2.copyMakeBorder(scene, band, band, 0, 0, cv2.BORDER_REFLECT)
            scene = degrade.curl(scene, np.random.default_rng(step.seed), step.severity)
            img = np.ascontiguousarray(scene[band:-band])
            meta["placement"] = placed
    if "perspective" in steps:
        img = run("perspective", img)
        meta["placement"] = {"background": "degrade.perspective", "margin": None}
    if "distance" in steps:
        img = run("distance", img)
    img = _resize_longest(img, plan.longest_side)
    for name in ("shadow", "uneven_light", "glare", "low_contrast", "color_cast", "defocus", "motion_blur", "noise"):
        if name in steps:
            img = run(name, img)
    if plan.rotation:
        img = np.rot90(img, -plan.rotation // 90)  # clockwise, as docintent's rotate tools count
    if "jpeg" in steps:
        img = run("jpeg", np.ascontiguousarray(img))
    meta["size"] = [int(img.shape[1]), int(img.shape[0])]
    return np.ascontiguousarray(img), meta
