"""The Brain: the decision maker behind every strategy. It answers four questions and nothing else.

- ``decide(state) -> Answer | UseTool`` (Phase A: answer now, or restore one degradation first);
- ``review(state, before, after) -> Keep | Rollback`` (Phase B: did the restoration help the evidence?);
- ``diagnose(state) -> list[str]`` (the MLLM-Judge baseline: which degradations are present);
- ``answer(state) -> Answer`` (answer from the current page, no tools).

And the four MACT roles (``mact`` strategies), each with a default any brain can play, overridden by brains
that reason in steps (the offline reader, the model brain; scripted brains script them):

- ``plan(state, count, feedback, previous) -> list[Plan]`` (steps with goals and expected outputs, no tools);
- ``execute(state, plan, step, results, candidate, feedback) -> Execution`` (one step, with a tool it picks);
- ``judge(state, plan, results) -> Verdict`` (accept, or flag a plan / execution mistake; never answers);
- ``conclude(state, runs, corrections) -> Answer`` (the answer from the corrected process).

Decisions carry the tokens they cost (``usage``), so strategies can account without knowing the brain.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from ..page import Page
from ..trace import Step
from ..vocabulary import TASKS, Task

if TYPE_CHECKING:  # the role records import Usage from here
    from .roles import Correction, Execution, Plan, PlanStep, Verdict

__all__ = ["TASKS", "Answer", "Brain", "Decision", "Diagnosis", "Keep", "Review", "Rollback", "State", "Task", "Usage",
           "UseTool"]


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
    """The final answer. ``confidence`` in [0, 1]; ``reasoning`` is free text for the trace."""

    text: str
    confidence: float = 0.5
    reasoning: str = ""
    usage: Usage = Usage()


@dataclass(frozen=True)
class UseTool:
    """Phase A decision: run tool ``name`` (with ``args``) because ``why``."""

    name: str
    why: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    usage: Usage = Usage()


@dataclass(frozen=True)
class Keep:
    """Phase B decision: the restored page is at least as readable; continue from it."""

    why: str = ""
    usage: Usage = Usage()


@dataclass(frozen=True)
class Rollback:
    """Phase B decision: the restoration hurt; return to the previous page and disable the tool."""

    why: str = ""
    usage: Usage = Usage()


@dataclass(frozen=True)
class Diagnosis:
    """The degradations a brain sees on a page (names from :data:`docintent.vocabulary.DEGRADATIONS`).

    ``rotation``: when "orientation" is listed, the rotation tool that makes the page upright
    ("rotate_90", "rotate_180" or "rotate_270").
    """

    degradations: tuple[str, ...]
    rotation: str | None = None
    usage: Usage = Usage()


M = TypeVar("M")

Decision = Answer | UseTool
Review = Keep | Rollback


@dataclass
class State:
    """What a brain may look at. Never holds gold answers or recorded degradation labels."""

    question: str
    task: str
    page: Page
    original: Page
    available_tools: list[str]
    history: list[Step] = field(default_factory=list)  # the steps so far
    round: int = 0
    max_rounds: int = 10
    evidence: list[Any] = field(default_factory=list)  # zoom / OCR evidence gathered in Phase A
    #: The brain's private memo for this question (a typed object the brain defines and owns, e.g. cached
    #: readings); strategies never read it. See :meth:`Brain.memo`.
    memo: Any = None


class Brain(ABC):
    """Base class of brains. Implementations: OpenAI-compatible model, offline reader, scripted."""

    name: str = "brain"
    #: Version of the prompts a model brain sends (recorded in run manifests); None for brains without prompts.
    prompt_version: str | None = None

    @abstractmethod
    def decide(self, state: State) -> Decision:
        """Phase A: answer, or pick the tool for the most severe question-relevant degradation."""

    @abstractmethod
    def review(self, state: State, before: Page, after: Page) -> Review:
        """Phase B: compare the page before and after the last tool; never answers."""

    @abstractmethod
    def diagnose(self, state: State) -> Diagnosis:
        """List the degradations present on ``state.page`` (orientation included)."""

    @abstractmethod
    def answer(self, state: State) -> Answer:
        """Answer the question from ``state.page`` without any tool."""

    # -- MACT roles (defaults: one plan of one step, answered by ``answer``; every process accepted) ------

    def plan(self, state: State, count: int = 1, feedback: Verdict | None = None,
             previous: tuple[Plan, ...] = ()) -> list[Plan]:
        """Planning: up to ``count`` plans for the question (``feedback``: the plan mistake a judge found;
        ``previous``: the plans made so far). Default: one step, "answer from the page"."""
        from .roles import Plan, PlanStep

        step = PlanStep("s1", "answer the question from the page", "text", op="read")
        return [Plan(f"p{len(previous) + 1}", "lookup", (step,), "one reading of the page")]

    def execute(self, state: State, plan: Plan, step: PlanStep, results: dict[str, Execution],
                candidate: int = 0, feedback: Verdict | None = None) -> Execution:
        """Execution: carry out ``step`` (``results``: earlier steps' executions; ``candidate``: which of the
        ``Ne`` attempts, or a later one after an execution mistake). Default: :meth:`answer`."""
        from .roles import Execution

        answer = self.answer(state)
        return Execution(step.id, self.name, answer.text, answer.text, answer.confidence, {}, answer.reasoning,
                         candidate, answer.usage)

    def judge(self, state: State, plan: Plan, results: dict[str, Execution]) -> Verdict:
        """Judgment: accept the plan and its executions, or flag one mistake. Default: accept."""
        from .roles import Verdict

        return Verdict.ok(("this brain does not judge",))

    def conclude(self, state: State, runs: list[tuple[Plan, dict[str, Execution], Verdict]],
                 corrections: list[Correction]) -> Answer:
        """Answer role: the answer from the corrected process. Default: the last output of the first
        accepted plan (else of the first plan)."""
        if not runs:
            return Answer("", 0.0, "no plan ran")
        plan, results, verdict = next((r for r in runs if r[2].accept), runs[0])
        final = results.get(plan.steps[-1].id) if plan.steps else None
        if final is None:
            return Answer("", 0.0, f"plan {plan.id} produced nothing")
        return Answer(final.output, final.confidence, f"last output of plan {plan.id}")

    def memo(self, state: State, kind: type[M]) -> M:
        """This brain's memo of type ``kind`` for the question in ``state``, created empty on first use."""
        if not isinstance(state.memo, kind):
            state.memo = kind()
        return state.memo

    def close(self) -> None:
        """Release resources (HTTP clients, models)."""
