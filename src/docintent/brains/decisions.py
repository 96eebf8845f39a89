"""What brains hand back: decisions, verdicts, diagnoses, the tokens they cost, and the change a review judges.

All are frozen dataclasses (plain data a scripted brain can script and a trace can store).

>>> UseTool("deshadowing", "shadow in the total's line").name
'deshadowing'
>>> Usage(10, 2, 1) + Usage(5, 1, 1)
Usage(prompt_tokens=15, completion_tokens=3, calls=2)
"""

from __future__ import annotations

from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from ..page import Box, Page


@dataclass(frozen=True)
class Usage:
    """Tokens one or more model calls cost (zero for brains that call no model)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.calls + other.calls,
        )

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens


@dataclass(frozen=True)
class Answer:
    """The final answer. ``confidence`` in [0, 1]; ``reasoning`` is free text for the trace; ``region``: where
    on the page the answer was read, the evidence region (None when the brain cannot say); ``evidence``: the text
    lines it was read from, as ``(text, confidence, box)``; ``box``: the answer's own box (its line, or the table
    cells it was read or computed from), which the result shows (None: the region)."""

    text: str
    confidence: float = 0.5
    reasoning: str = ""
    _: KW_ONLY
    usage: Usage = Usage()
    region: Box | None = None
    evidence: tuple[tuple[str, float, Box], ...] = ()
    box: Box | None = None


@dataclass(frozen=True)
class UseTool:
    """Phase A decision: run tool ``name`` (with ``args``) because ``why``. ``region``: the part of the page the
    decision is about (the evidence region), carried to the review through the :class:`Change`."""

    name: str
    why: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    _: KW_ONLY
    usage: Usage = Usage()
    region: Box | None = None


@dataclass(frozen=True)
class Keep:
    """Phase B decision: the restored page is at least as readable; continue from it. ``measurements``: the
    figures the verdict rests on (recorded in the trace, shown with ``-v`` and in JSON)."""

    why: str = ""
    usage: Usage = Usage()
    measurements: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Rollback:
    """Phase B decision: the restoration hurt; return to the previous page and disable the tool."""

    why: str = ""
    usage: Usage = Usage()
    measurements: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Diagnosis:
    """The degradations a brain sees on a page (names of registered families,
    :mod:`docintent.perception.degradations`).

    ``rotation``: when "orientation" is listed, the rotation tool that makes the page upright
    ("rotate_90", "rotate_180" or "rotate_270").
    """

    degradations: tuple[str, ...]
    rotation: str | None = None
    usage: Usage = Usage()


@dataclass(frozen=True)
class Change:
    """What a Phase B review judges: tool ``tool`` ran with ``args`` and turned ``before`` into ``after``.

    ``degradation``: the family the tool targets; ``geometric``: the tool moves content (a region of
    ``before`` does not lie at the same place on ``after``); ``region``: the part of ``before`` the decision was
    about (None: the whole page); ``region_after``: where that region lies on ``after`` (the same box for a tool
    that moves nothing, the mapped box for a rotation, None when it must be found again by reading).
    """

    tool: str
    before: Page
    after: Page
    _: KW_ONLY
    args: dict[str, Any] = field(default_factory=dict)
    degradation: str = ""
    geometric: bool = False
    region: Box | None = None
    region_after: Box | None = None

    @property
    def resized(self) -> bool:
        """Whether the page changed size (a crop to the page outline, a quarter turn of a non-square page)."""
        return self.before.size != self.after.size


Decision = Answer | UseTool
Review = Keep | Rollback

__all__ = ["Answer", "Change", "Decision", "Diagnosis", "Keep", "Review", "Rollback", "Usage", "UseTool"]
