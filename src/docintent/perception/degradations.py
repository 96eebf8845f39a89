"""The degradation families, one :class:`Degradation` record each, in one registry.

Everything that speaks of degradations reads these records: the measured signals (``measure``), the offline
brain's choice of tool and its diagnosis (``threshold``), the pipeline and judge baselines (``order``), the
prompts a model is sent (``wording``), the parser of a model's diagnosis (``synonyms``) and the review of a tool
that moves content (``geometric``). A plug-in family arrives through the ``docintent.degradations`` entry-point
group as a :class:`Degradation` (with its own ``measure``); a tool for it declares the family's name as its
``degradation`` and is then offered by every strategy that restores.

>>> [d.name for d in families()]
['orientation', 'warp', 'moire', 'blur', 'shadow', 'appearance']
>>> parse_degradation("uneven lighting")
'shadow'
>>> get_degradation("warp").geometric
True
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from ..errors import ConfigError
from ..page import Box, Page
from ..registry import Registry
from .signals import DEFAULT_THRESHOLDS
from .signals import measure as measure_signals

#: A severity measure: the page (and a region of it, or None for the whole page) -> severity in [0, 1].
Measure = Callable[[Page, "Box | None"], float]


@dataclass(frozen=True)
class Degradation:
    """One degradation family.

    ``name``: what tools declare as their ``degradation`` and brains diagnose; ``wording``: how prompts
    describe it to a model; ``synonyms``: word stems a model's free-text diagnosis is matched against;
    ``measure``: its severity in [0, 1] from the pixels (None: judged otherwise, as orientation is by the
    orientation classifier); ``threshold``: the severity above which it is reported and restored; ``order``:
    where it comes in the pipeline and judge baselines (lower first); ``geometric``: restoring it moves content,
    so a region found before its tool does not lie at the same place after it; ``plain``: what a page with this
    damage needs, in a few words for people ("needs more light"), as traces print it.
    """

    name: str
    wording: str
    synonyms: tuple[str, ...] = ()
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
        """Whether a severity is measured from the pixels (every family but orientation)."""
        return self.measure is not None


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


def _builtin_measure(name: str) -> Measure:
    def measure(page: Page, region: Box | None = None) -> float:
        return float(measure_signals(page, region, orientation=False).severities[name])

    measure.__name__ = f"measure_{name}"
    return measure


def _load_builtins() -> None:
    for record in BUILTIN:
        DEGRADATIONS.add(record)


#: The built-in families (the DocIntent paper's six), in pipeline order. Thresholds were calibrated on
#: synthetic captures (``benchmarks/diagnosis.py``) and checked on a real photographed page.
BUILTIN: tuple[Degradation, ...] = (
    Degradation("orientation", "the page is sideways or upside down (also say which clockwise rotation makes it "
                "upright: rotate_90, rotate_180 or rotate_270)", ("orient", "rotat", "upside", "sideways"),
                None, threshold=DEFAULT_THRESHOLDS["orientation"], order=0, geometric=True,
                plain="the page is not upright"),
    Degradation("warp", "curled, folded or perspective-distorted paper, bent text lines",
                ("warp", "curl", "perspect", "fold", "bent", "distort"), _builtin_measure("warp"), DEFAULT_THRESHOLDS["warp"], 10, True,
                plain="the page is bent or photographed at an angle"),
    Degradation("moire", "wavy interference patterns from photographing a screen or print", ("moir",),
                _builtin_measure("moire"), DEFAULT_THRESHOLDS["moire"], 20, plain="a moiré pattern covers the text"),
    Degradation("blur", "out of focus or motion blur", ("blur", "focus"), _builtin_measure("blur"), DEFAULT_THRESHOLDS["blur"], 30,
                plain="the text is blurred"),
    Degradation("shadow", "shadows or uneven lighting across the page", ("shadow", "lighting", "illumin"),
                _builtin_measure("shadow"), DEFAULT_THRESHOLDS["shadow"], 40, plain="a shadow lies over the text"),
    Degradation("appearance", "faded, low-contrast, colour-cast or stained appearance",
                ("appear", "contrast", "fade", "colour", "color", "stain"), _builtin_measure("appearance"), DEFAULT_THRESHOLDS["appearance"], 50,
                plain="needs more light and contrast"),
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
    DEGRADATIONS.add(record, origin=f"module {record.measure.__module__ if record.measure else 'unknown'}")


__all__ = ["BUILTIN", "DEGRADATIONS", "Degradation", "Thresholds", "Measure", "degradation_list", "degradation_names", "families",
           "get_degradation", "names",
           "parse_degradation", "register_degradation", "restorable"]
