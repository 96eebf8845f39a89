"""The degradation families, one :class:`Degradation` record each, in one registry.

A record is everything docintent knows of a family: its name, how prompts word it, the words a model's diagnosis
is matched against, its measure, its threshold, its place in the pipeline, whether its tool moves content, and
what it means in plain words. Everything that speaks of degradations reads these records: the measured signals
(``measure``; :func:`docintent.perception.signals.measure` reports every built-in family), the offline brain's
choice of tool and its diagnosis (``threshold``), the pipeline and judge baselines (``order``), the prompts a
model is sent (``wording``), the parser of a model's diagnosis (``synonyms``) and the review of a tool that moves
content (``geometric``). Adding a built-in family is adding its record to :data:`BUILTIN` (and its tool module to
:mod:`docintent.tools`); nothing else lists the families.

A plug-in family arrives through the ``docintent.degradations`` entry-point group as a :class:`Degradation` (with
its own ``measure``); a tool for it declares the family's name as its ``degradation`` and is then offered by every
strategy that restores.

>>> families()[0].name, families()[0].measured
('orientation', False)
>>> parse_degradation("uneven lighting")
'shadow'
>>> get_degradation("warp").geometric
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import KW_ONLY, dataclass, field
from types import MappingProxyType
from typing import Any

import numpy as np

from ..errors import ConfigError
from ..page import Box, Page
from ..registry import Registry
from .analysis import Shared, severity

#: A severity measure: the page (and a region of it, or None for the whole page) -> severity in [0, 1].
Measure = Callable[[Page, "Box | None"], float]


@dataclass(frozen=True)
class Degradation:
    """One degradation family.

    ``name``: what tools declare as their ``degradation`` and brains diagnose; ``wording``: how prompts
    describe it to a model; ``synonyms``: word stems a model's free-text diagnosis is matched against;
    ``measure``: its severity in [0, 1] from the pixels (a built-in family's is a
    :class:`~docintent.perception.analysis.Shared` formula over the one shared analysis of the page, so measuring
    every built-in family costs one pass; orientation's needs the orientation classifier, and the family is not
    :attr:`measured` for restoring; None: not measured); ``threshold``: the severity above which it is reported and restored; ``order``:
    where it comes in the pipeline and judge baselines (lower first); ``geometric``: restoring it moves content,
    so a region found before its tool does not lie at the same place after it; ``plain``: what a page with this
    damage needs, in a few words for people ("needs more light"), as traces print it.
    """

    name: str
    wording: str
    synonyms: tuple[str, ...] = ()
    _: KW_ONLY
    measure: Measure | None = field(default=None, compare=False, repr=False)
    threshold: float = 0.5
    order: int = 100
    geometric: bool = False
    plain: str = ""

    def __post_init__(self) -> None:
        if not self.name or not self.name.replace("_", "").isalnum() or self.name != self.name.lower():
            raise ConfigError(f"degradation name {self.name!r} must be lower_snake_case")
        if not 0.0 <= float(self.threshold) <= 1.0:
            raise ConfigError(f"degradation {self.name!r}: threshold {self.threshold!r} must lie in [0, 1]")

    @property
    def measured(self) -> bool:
        """Whether its severity is measured from the pixels to choose a restoration (every family with a measure
        but orientation, which the orientation classifier judges and a rotation fixes)."""
        return self.measure is not None and not getattr(self.measure, "orientation", False)


class _DegradationRegistry(Registry[Degradation]):
    def register_plugin(self, name: str, obj: Any, origin: str) -> None:
        record = obj() if callable(obj) and not isinstance(obj, Degradation) else obj
        if not isinstance(record, Degradation):
            raise ConfigError(f"degradation plug-in {name!r} ({origin}) is not a docintent Degradation")
        self.add(record, origin)

    def add(self, record: Degradation, origin: str = "built-in") -> None:
        """Register ``record`` under its name."""
        self.register(record.name, _Constant(record), origin=origin, description=record.wording)


class _Constant:
    """A factory that returns one record (registries build components; a family is a record)."""

    def __init__(self, value: Degradation) -> None:
        self.value = value

    def __call__(self) -> Degradation:
        return self.value


def _load_builtins() -> None:
    for record in BUILTIN:
        DEGRADATIONS.add(record)


# --- the built-in families' severities: formulas over the raw measurements of the shared analysis -----------
# (units and ranges in :data:`docintent.perception.analysis.RANGES`)


def _orientation(raw: Mapping[str, float]) -> float:
    """1 - P(upright) from the orientation classifier, when it says the page is turned."""
    if raw.get("orientation_angle", 0.0) == 0:
        return 0.0
    return float(np.clip(1.0 - raw["p_upright"], 0.0, 1.0))


def _warp(raw: Mapping[str, float]) -> float:
    """Worst of: bent text lines (text heights), fanned line directions (degrees), page edge or background visible
    around the page, skewed page corners."""
    return max(
        severity("line_bend", raw["line_bend"]),
        severity("line_fan", raw["line_fan"]),
        severity("background_visible", raw["background_visible"]),
        severity("corner_skew", raw["corner_skew"]),
    )


def _shadow(raw: Mapping[str, float]) -> float:
    """Light fall-off across open paper: 1 - (darkest paper / brightest paper) of the paper map."""
    return severity("shadow_falloff", raw["shadow_falloff"])


def _blur(raw: Mapping[str, float]) -> float:
    """Edge width beyond a sharp edge's, in text heights (the worst of four edge directions), and at least a pixel
    and a half of it."""
    # Blur matters relative to the text, but under about a pixel and a half no text is unreadable and no
    # deblurring helps: small sharp text must not pass for blurred.
    return min(severity("blur_relative", raw["blur_relative"]), severity("blur_px", raw.get("blur_px", 0.0)))


def _appearance(raw: Mapping[str, float]) -> float:
    """Worst of: narrow tone range (paper brightness x ink depth), colour cast of the paper, warm stains."""
    return max(
        severity("tone_range", raw["tone_range"]),
        severity("paper_cast", raw["paper_cast"]),
        severity("stain_tint", raw["stain_tint"]),
    )


def _moire(raw: Mapping[str, float]) -> float:
    """Isolated off-axis spectral peaks (decades above their ring's median), luminance or colour."""
    return severity("moire_peak", raw["moire_peak"])


#: The built-in families (the DocIntent paper's six), in the order their severities are reported (equal severities
#: keep it; ``order`` is their place in the pipeline). Thresholds were calibrated on synthetic captures
#: (``benchmarks/diagnosis.py``) and checked on a real photographed page.
BUILTIN: tuple[Degradation, ...] = (
    Degradation(
        "orientation",
        "the page is sideways or upside down (also say which clockwise rotation makes it "
        "upright: rotate_90, rotate_180 or rotate_270)",
        ("orient", "rotat", "upside", "sideways"),
        measure=Shared(_orientation, orientation=True),
        threshold=0.7,
        order=0,
        geometric=True,
        plain="the page is not upright",
    ),
    Degradation(
        "warp",
        "curled, folded or perspective-distorted paper, bent text lines",
        ("warp", "curl", "perspect", "fold", "bent", "distort"),
        measure=Shared(_warp),
        threshold=0.3,
        order=10,
        geometric=True,
        plain="the page is bent or photographed at an angle",
    ),
    Degradation(
        "shadow",
        "shadows or uneven lighting across the page",
        ("shadow", "lighting", "illumin"),
        measure=Shared(_shadow),
        threshold=0.5,
        order=40,
        plain="a shadow lies over the text",
    ),
    Degradation(
        "blur",
        "out of focus or motion blur",
        ("blur", "focus"),
        measure=Shared(_blur),
        threshold=0.35,
        order=30,
        plain="the text is blurred",
    ),
    Degradation(
        "appearance",
        "faded, low-contrast, colour-cast or stained appearance",
        ("appear", "contrast", "fade", "colour", "color", "stain"),
        measure=Shared(_appearance),
        threshold=0.2,
        order=50,
        plain="needs more light and contrast",
    ),
    Degradation(
        "moire",
        "wavy interference patterns from photographing a screen or print",
        ("moir",),
        measure=Shared(_moire),
        threshold=0.45,
        order=20,
        plain="a moiré pattern covers the text",
    ),
)

#: Every degradation family, built-in and plug-in (entry-point group ``docintent.degradations``).
DEGRADATIONS = _DegradationRegistry("degradation", group="docintent.degradations", loader=_load_builtins)


@dataclass(frozen=True)
class Thresholds:
    """Severity above which a degradation is reported and restored, per family.

    The defaults are each family's :attr:`~docintent.perception.degradations.Degradation.threshold` (calibrated
    on synthetic captures, ``benchmarks/diagnosis.py``, and checked on a real photographed page); a caller with
    another trade-off between missed and needless restorations overrides some: ``Thresholds(shadow=0.4)``.

    >>> Thresholds(shadow=0.4).of("shadow"), Thresholds().of("blur")
    (0.4, 0.35)
    """

    overrides: Mapping[str, float]

    def __init__(self, **overrides: float) -> None:
        for name, value in overrides.items():
            DEGRADATIONS.entry(name)  # an unknown family lists the valid ones
            if not 0.0 <= float(value) <= 1.0:
                raise ValueError(f"threshold of {name!r} must lie in [0, 1], got {value!r}")
        object.__setattr__(self, "overrides", MappingProxyType({k: float(v) for k, v in overrides.items()}))

    def of(self, family: str) -> float:
        """The threshold of ``family``."""
        if family in self.overrides:
            return self.overrides[family]
        return float(get_degradation(family).threshold)

    def __getattr__(self, family: str) -> float:
        # ``Thresholds().shadow``: the threshold of a family by attribute, as the fields were once read
        if family.startswith("_") or family == "overrides":
            raise AttributeError(family)
        try:
            return self.of(family)
        except Exception:
            raise AttributeError(family) from None

    def __reduce__(self):  # a mapping proxy does not pickle (worker processes receive brains by pickling)
        return (_thresholds, (dict(self.overrides),))


def _thresholds(overrides: dict[str, float]) -> Thresholds:
    return Thresholds(**overrides)


def get_degradation(name: str) -> Degradation:
    """The family called ``name``; an unknown name lists every valid one."""
    return DEGRADATIONS.get(name)


def families() -> list[Degradation]:
    """Every family, in ``order`` (then by name)."""
    return sorted((DEGRADATIONS.get(k) for k in DEGRADATIONS.kinds()), key=lambda d: (d.order, d.name))


def names() -> tuple[str, ...]:
    """The names of :func:`families`, in order."""
    return tuple(d.name for d in families())


def restorable() -> list[Degradation]:
    """The families whose severity is measured from the pixels (every family but orientation), in order."""
    return [d for d in families() if d.measured]


def parse_degradation(text: str) -> str | None:
    """The family a free-text degradation word names ("uneven lighting" -> "shadow"), or None."""
    word = text.strip().lower()
    for record in families():
        if word == record.name or any(stem in word for stem in record.synonyms):
            return record.name
    return None


def degradation_list() -> str:
    """Every family as a prompt line ``- name: wording``, in order."""
    return "\n".join(f"- {d.name}: {d.wording}" for d in families())


def degradation_names() -> str:
    """Every family's name in words, in order: ``"orientation, warp, ... or appearance"``."""
    listed = list(names())
    return listed[0] if len(listed) == 1 else ", ".join(listed[:-1]) + " or " + listed[-1]


def register_degradation(record: Degradation) -> None:
    """Register a family from code (a plug-in package usually declares an entry point instead)."""
    where = getattr(record.measure, "formula", record.measure)  # a shared formula's module, not the analysis'
    DEGRADATIONS.add(record, origin=f"module {where.__module__ if where is not None else 'unknown'}")


__all__ = [
    "BUILTIN",
    "DEGRADATIONS",
    "Degradation",
    "Thresholds",
    "Measure",
    "degradation_list",
    "degradation_names",
    "families",
    "get_degradation",
    "names",
    "parse_degradation",
    "register_degradation",
    "restorable",
]
