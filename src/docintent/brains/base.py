"""The brain protocols: a :class:`Restorer` answers four questions, and a brain that reasons in steps also plays
the four :class:`MactRoles`.

:class:`Restorer` (every brain; the Phase A / Phase B loop and the baselines):

- ``decide(state) -> Answer | UseTool`` (Phase A: answer now, or restore one degradation first);
- ``review(state, change) -> Keep | Rollback`` (Phase B: did the restoration described by the
  :class:`~docintent.brains.decisions.Change` help the evidence?);
- ``diagnose(state) -> Diagnosis`` (the MLLM-Judge baseline: which degradations are present);
- ``answer(state) -> Answer`` (answer from the current page, no tools).

:class:`MactRoles` (opt-in; every method required; ``mact`` strategies refuse a brain that does not play it):

- ``plan(state, count, feedback, previous) -> list[Plan]`` (steps with goals and expected outputs, no tools);
- ``execute(state, plan, step, results, candidate, feedback) -> Execution`` (one step, with a tool it picks);
- ``judge(state, plan, results) -> Verdict`` (accept, or flag a plan / execution mistake; never answers);
- ``conclude(state, runs, corrections) -> Answer`` (the answer from the corrected process).

Decisions carry the tokens they cost (``usage``), so strategies can account without knowing the brain.

>>> from docintent.brains import ScriptedBrain, FunctionBrain
>>> plays_mact(ScriptedBrain()), plays_mact(FunctionBrain())
(True, False)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import KW_ONLY, dataclass, field
from typing import Any, TypeVar

from ..errors import ConfigError
from ..page import Page
from ..tools.base import Evidence
from ..trace import Step
from ..vocabulary import TASKS, Task
from .decisions import Answer, Change, Decision, Diagnosis, Keep, Review, Rollback, Usage, UseTool
from .roles import Correction, Execution, Plan, PlanStep, Verdict

__all__ = [
    "TASKS",
    "Answer",
    "Brain",
    "Change",
    "Decision",
    "Diagnosis",
    "Keep",
    "MactRoles",
    "Restorer",
    "Review",
    "Rollback",
    "State",
    "Task",
    "Usage",
    "UseTool",
    "plays_mact",
    "require_mact",
]

M = TypeVar("M")


@dataclass
class State:
    """What a brain may look at. Never holds gold answers or recorded degradation labels.

    ``evidence``: what inspection tools (zoom) gathered so far, each with the hash of the page it was read on.
    """

    question: str
    task: str
    page: Page
    _: KW_ONLY
    original: Page
    available_tools: list[str]
    history: list[Step] = field(default_factory=list)  # the steps so far
    round: int = 0
    max_rounds: int = 10
    evidence: list[Evidence] = field(default_factory=list)
    #: The brain's private memo for this question (a typed object the brain defines and owns, e.g. cached
    #: readings); strategies never read it. See :meth:`Restorer.memo`.
    memo: Any = None


class Restorer(ABC):
    """Base class of brains: the four questions of the restoration loop. Implementations: the
    OpenAI-compatible model brain, the offline reader, the scripted test doubles."""

    name: str = "brain"
    #: Version of the prompts a model brain sends (recorded in run manifests); None for brains without prompts.
    prompt_version: str | None = None

    @abstractmethod
    def decide(self, state: State) -> Decision:
        """Phase A: answer, or pick the tool for the most severe question-relevant degradation."""

    @abstractmethod
    def review(self, state: State, change: Change) -> Review:
        """Phase B: judge ``change`` (which tool ran, with which arguments, the pages before and after, the
        region the decision was about); never answers."""

    @abstractmethod
    def diagnose(self, state: State) -> Diagnosis:
        """List the degradations present on ``state.page`` (orientation included)."""

    @abstractmethod
    def answer(self, state: State) -> Answer:
        """Answer the question from ``state.page`` without any tool."""

    def memo(self, state: State, kind: type[M]) -> M:
        """This brain's memo of type ``kind`` for the question in ``state``, created empty on first use."""
        if not isinstance(state.memo, kind):
            state.memo = kind()
        return state.memo

    def work(self, state: State) -> dict[str, int]:
        """What answering the question in ``state`` cost this brain, as counts that depend only on the page,
        the question and the settings (never seconds, never what a cache held): the offline reader's text-line
        detections, recognised lines and orientation checks. Strategies add them to ``Result.work`` when the run
        ends. A brain that counts nothing reports nothing (the default)."""
        return {}

    def close(self) -> None:
        """Release resources (HTTP clients, models)."""


#: The general name of a decision maker; every brain is a :class:`Restorer`.
Brain = Restorer


class MactRoles(ABC):
    """The four MACT roles, all required. A brain opts in by inheriting this beside :class:`Restorer`."""

    @abstractmethod
    def plan(
        self, state: State, count: int = 1, feedback: Verdict | None = None, previous: tuple[Plan, ...] = ()
    ) -> list[Plan]:
        """Planning: up to ``count`` plans for the question (``feedback``: the plan mistake a judge found;
        ``previous``: the plans made so far)."""

    @abstractmethod
    def execute(
        self,
        state: State,
        plan: Plan,
        step: PlanStep,
        results: dict[str, Execution],
        candidate: int = 0,
        feedback: Verdict | None = None,
    ) -> Execution:
        """Execution: carry out ``step`` (``results``: earlier steps' executions; ``candidate``: which of the
        ``Ne`` attempts, or a later one after an execution mistake)."""

    @abstractmethod
    def judge(self, state: State, plan: Plan, results: dict[str, Execution]) -> Verdict:
        """Judgment: accept the plan and its executions, or flag one mistake."""

    @abstractmethod
    def conclude(
        self, state: State, runs: list[tuple[Plan, dict[str, Execution], Verdict]], corrections: list[Correction]
    ) -> Answer:
        """Answer role: the answer from the corrected process."""


def plays_mact(brain: object) -> bool:
    """Whether ``brain`` plays the MACT roles."""
    return isinstance(brain, MactRoles)


def require_mact(brain: object, strategy: str) -> None:
    """Refuse, before any work, a brain that does not play the MACT roles for a strategy that needs them."""
    if not plays_mact(brain):
        kind = getattr(brain, "name", type(brain).__name__)
        raise ConfigError(
            f"strategy {strategy!r} needs a brain that plays the MACT roles (plan, execute, judge, conclude); "
            f"the {kind!r} brain ({type(brain).__name__}) does not. Use the offline or openai brain, "
            f"ScriptedBrain, or FunctionMactBrain"
        )
