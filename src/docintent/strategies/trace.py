"""Trace and Result: every step of a strategy as data (printed by the CLI, stored in runs, shown in the viewer)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from ..page import Page


@dataclass
class Step:
    """One step of a strategy.

    ``phase``: "A" (decide), "B" (review), "tool" (a tool ran), "diagnose", "answer", "inspect" (zoom/OCR).
    ``action``: "answer", "use_tool", "keep", "rollback", "applied", "failed", "skipped", "diagnosed", "inspected".
    ``before`` / ``after``: page hashes.
    """

    phase: str
    action: str
    tool: str | None = None
    reason: str = ""
    before: str | None = None
    after: str | None = None
    seconds: float = 0.0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    round: int | None = None
    data: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


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
        """Tools that ran (kept or rolled back), as the paper's "Avg. Tools" counts them."""
        return sum(1 for s in self.trace if s.phase == "tool" and s.action in ("applied", "failed"))

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
            "error": self.error,
            "trace": [s.to_dict() for s in self.trace],
        }
