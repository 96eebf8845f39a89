"""Trace and Result: every step of a strategy as data (printed by the CLI, stored in runs, shown in the viewer).

A :class:`Step` names its ``phase`` and ``action`` with the :class:`Phase` and :class:`Action` enums. They are
``StrEnum``s whose values are the strings runs have always stored, so an old ``results.jsonl`` loads unchanged
and ``Step.phase == "B"`` still holds for code that reads rows as plain dicts.

>>> step = Step(Phase.REVIEW, Action.KEEP, "deshadowing", "evidence reads better")
>>> step.to_dict()["phase"], step.phase == "B"
('B', True)
>>> Step.from_dict(step.to_dict()) == step
True
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field, fields
from enum import StrEnum
from typing import Any

from .page import Page


class Phase(StrEnum):
    """Which part of a strategy a step belongs to."""

    DECIDE = "A"  # Phase A: answer now, or pick a tool
    REVIEW = "B"  # Phase B: keep or roll back the last restoration
    TOOL = "tool"  # a restoration tool ran
    DIAGNOSE = "diagnose"  # the judge baseline listed degradations
    ANSWER = "answer"  # the final answer from the current page
    INSPECT = "inspect"  # zoom / OCR of a region gathered evidence
    SEARCH = "search"  # the retrieval agent called one of its tools (the action names the tool)
    FINALIZE = "finalize"  # the retrieval agent's budget ran out and it was asked for its ranking
    # MACT's roles (the answer role records under ANSWER)
    PLAN = "plan"  # planning wrote plans (or re-planned after a plan mistake)
    EXECUTE = "execute"  # one candidate execution of one plan step
    JUDGE = "judge"  # judgment accepted a plan's process or flagged a mistake


class Action(StrEnum):
    """What a step did."""

    ANSWER = "answer"
    USE_TOOL = "use_tool"
    KEEP = "keep"
    ROLLBACK = "rollback"
    APPLIED = "applied"  # a tool produced a new page state
    NO_CHANGE = "no_change"  # a tool ran and returned the same pixels (nothing to fix): nothing to review
    FAILED = "failed"
    SKIPPED = "skipped"  # not run: the tool is not offered, or already ran on this page state
    DIAGNOSED = "diagnosed"
    INSPECTED = "inspected"
    FORCED = "forced"  # a final ranking asked for after the step budget
    # the retrieval agent's tools, one action each
    SEARCH = "search"
    INSPECT_PAGES = "inspect_pages"
    CROP_PAGES = "crop_pages"
    GET_PAGE_TEXT = "get_page_text"
    SUBMIT = "submit"
    # MACT's roles
    PLANNED = "planned"
    REPLANNED = "replanned"  # planning again after a plan mistake (a correction)
    EXECUTED = "executed"
    REEXECUTED = "reexecuted"  # a flagged step run again (a correction)
    SELECTED = "selected"  # the best of Ne candidate executions kept
    ACCEPTED = "accepted"
    FLAGGED = "flagged"


@dataclass
class Step:
    """One step of a strategy. ``before`` / ``after``: page hashes; ``data``: step-specific details."""

    phase: Phase
    action: Action
    tool: str | None = None
    reason: str = ""
    before: str | None = None
    after: str | None = None
    seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    round: int | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        # Accept the stored strings too (old runs, hand-written traces); unknown values fail here, not later.
        self.phase = Phase(self.phase)
        self.action = Action(self.action)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form; enums become their string values."""
        out = asdict(self)
        out["phase"], out["action"] = str(self.phase), str(self.action)
        return out

    @classmethod
    def from_dict(cls, row: dict[str, Any]) -> Step:
        """The Step a :meth:`to_dict` row describes (unknown keys are ignored)."""
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in row.items() if k in names})


#: Tool actions that count as a tool having run (the paper's "Avg. Tools").
RAN = (Action.APPLIED, Action.NO_CHANGE, Action.FAILED)


@dataclass
class Result:
    """The outcome of one strategy on one question."""

    answer: str
    strategy: str
    confidence: float = 0.0
    trace: list[Step] = field(default_factory=list)
    tools_kept: list[str] = field(default_factory=list)
    tools_rolled_back: list[str] = field(default_factory=list)
    seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    error: str | None = None
    final_page: Page | None = field(default=None, repr=False)
    pages: dict[str, Page] = field(default_factory=dict, repr=False)  # every page state by hash

    @property
    def tools_used(self) -> int:
        """Tools that ran (kept, rolled back or changing nothing), as the paper's "Avg. Tools" counts them."""
        return sum(1 for s in self.trace if s.phase == Phase.TOOL and s.action in RAN)

    @property
    def tokens_by_phase(self) -> dict[str, dict[str, int]]:
        """Prompt and completion tokens per phase ("A", "B", "answer", "diagnose"); phases without tokens are left out."""
        totals: dict[str, dict[str, int]] = {}
        for step in self.trace:
            if step.prompt_tokens or step.completion_tokens:
                phase = totals.setdefault(str(step.phase), {"prompt": 0, "completion": 0})
                phase["prompt"] += step.prompt_tokens
                phase["completion"] += step.completion_tokens
        return totals

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (no images; page hashes stay in the trace)."""
        return {
            "answer": self.answer,
            "strategy": self.strategy,
            "confidence": self.confidence,
            "tools_used": self.tools_used,
            "tools_kept": list(self.tools_kept),
            "tools_rolled_back": list(self.tools_rolled_back),
            "seconds": self.seconds,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "tokens_by_phase": self.tokens_by_phase,
            "error": self.error,
            "trace": [s.to_dict() for s in self.trace],
        }
