"""One orchestration for every strategy: DocIntent's Algorithm 1, its baselines and its ablations.

Each strategy is a :class:`StrategyConfig` (which phases run, which tools, in what order), executed by the same
:class:`Strategy` code, so they share every line they can:

============== ============================================================================================
``none``       answer directly
``pipeline-*`` all non-rotation tools in a fixed (or seeded random) order, then answer; no checks
``judge-*``    ``brain.diagnose`` lists degradations, the matching tools run (fixed or random order), answer
``prompt-only``answerability-guided ``decide`` with no tools offered (ablation)
``agres``      Phase A with tools, no Phase B review (ablation)
``docintent``  Phase A decide -> tool -> Phase B review -> keep or roll back and disable, at most T rounds
``mact``       plan -> execute (Ne candidates per step) -> judge -> correct (at most Nc) -> answer
               (:mod:`docintent.strategies.mact`)
``docintent+mact`` restore as ``docintent`` does, then MACT on the kept page
============== ============================================================================================
"""

from __future__ import annotations

import hashlib
import random
import time
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..brains.base import (
    Answer,
    Brain,
    Diagnosis,
    Keep,
    Rollback,
    State,
    Usage,
    UseTool,
)
from ..errors import ConfigError, DocIntentError, UnknownComponentError
from ..page import Page
from ..tools import InspectionTool, get_tool, list_tools, tools_for
from ..trace import Action, Phase, Result, Step
from ..vocabulary import INSPECTION

#: The paper's fixed order of the non-rotation restoration tools (pipeline baseline).
PIPELINE_ORDER = ("dewarping", "demoire", "deblurring", "deshadowing", "appearance")
#: The judge baseline's fixed order of degradations (orientation first).
JUDGE_ORDER = ("orientation", "warp", "moire", "blur", "shadow", "appearance")
#: MACT's roles, in the order they act.
MACT_ROLES = ("plan", "execute", "judge", "answer")


@dataclass(frozen=True)
class StrategyConfig:
    """What a strategy does. ``mode``: "direct", "pipeline", "judge", "loop" or "mact".

    MACT knobs (mode "mact"): ``np`` plans, ``ne`` candidate executions per step, ``nc`` corrections at most,
    ``roles`` the roles that act (plan and execute always; judge and answer can be switched off for
    ablations); ``restore_first``: run the ``docintent`` loop first and reason over the page it keeps.
    """

    name: str
    mode: str
    review: bool = True  # Phase B (loop mode)
    offer_tools: bool = True  # loop mode: False = prompt-only ablation
    random_order: bool = False  # pipeline / judge
    max_rounds: int = 10  # T
    seed: int = 0
    tools: tuple[str, ...] | None = None  # restrict the toolbox (None = every registered restoration tool)
    inspection: bool = False  # offer inspection tools (zoom) in Phase A
    restore_first: bool = False  # mact: the docintent loop first
    np: int = 1  # mact: plans
    ne: int = 1  # mact: candidate executions per step
    nc: int = 3  # mact: corrections at most
    roles: tuple[str, ...] = MACT_ROLES  # mact: the roles that act

    def __post_init__(self) -> None:
        if self.mode not in ("direct", "pipeline", "judge", "loop", "mact"):
            raise ConfigError(f"strategy {self.name!r}: unknown mode {self.mode!r}")
        if self.max_rounds < 0:
            raise ConfigError(f"strategy {self.name!r}: max_rounds must be >= 0, got {self.max_rounds}")
        for knob, least in (("np", 1), ("ne", 1), ("nc", 0)):
            value = getattr(self, knob)
            if not isinstance(value, int) or value < least:
                raise ConfigError(f"strategy {self.name!r}: {knob} must be a whole number >= {least}, got {value!r}")
        roles = tuple(self.roles)
        unknown = [r for r in roles if r not in MACT_ROLES]
        if unknown or not {"plan", "execute"} <= set(roles):
            raise ConfigError(f"strategy {self.name!r}: roles {list(roles)!r} must include plan and execute and "
                              f"come from {', '.join(MACT_ROLES)}")
        object.__setattr__(self, "roles", roles)


STRATEGIES: dict[str, StrategyConfig] = {
    c.name: c
    for c in (
        StrategyConfig("none", "direct"),
        StrategyConfig("pipeline-fixed", "pipeline"),
        StrategyConfig("pipeline-random", "pipeline", random_order=True),
        StrategyConfig("judge-fixed", "judge"),
        StrategyConfig("judge-random", "judge", random_order=True),
        StrategyConfig("prompt-only", "loop", review=False, offer_tools=False),
        StrategyConfig("agres", "loop", review=False),
        StrategyConfig("docintent", "loop"),
        StrategyConfig("mact", "mact"),
        StrategyConfig("docintent+mact", "mact", restore_first=True),
    )
}


class Strategy:
    """Runs one :class:`StrategyConfig` with a brain. Stateless between questions."""

    def __init__(self, config: StrategyConfig) -> None:
        self.config = config

    @property
    def name(self) -> str:
        return self.config.name

    # -- public -----------------------------------------------------------------------------------

    def run(self, page: Page, question: str, task: str, brain: Brain) -> Result:
        """Answer ``question`` about ``page`` and return the answer with its full trace."""
        run = _Run(self.config, page, question, task, brain)
        return run.execute()

    def __repr__(self) -> str:
        return f"<Strategy {self.name}>"


def get_strategy(name: str, **options: Any) -> Strategy:
    """The strategy called ``name`` (see :data:`STRATEGIES`), with config fields overridden by ``options``.

    >>> get_strategy("docintent", max_rounds=3).config.max_rounds
    3
    """
    try:
        config = STRATEGIES[name]
    except KeyError:
        raise UnknownComponentError("strategy", name, list(STRATEGIES)) from None
    if options:
        unknown = set(options) - set(StrategyConfig.__dataclass_fields__)
        if unknown:
            raise ConfigError(f"strategy {name!r}: unknown option(s) {sorted(unknown)}")
        if "tools" in options and options["tools"] is not None:
            options["tools"] = tuple(options["tools"])
        if isinstance(options.get("roles"), str):
            options["roles"] = tuple(r.strip() for r in options["roles"].replace("+", ",").split(",") if r.strip())
        config = replace(config, **options)
    return Strategy(config)


def configured_strategy(name: str, **options: Any) -> Strategy:
    """:func:`get_strategy`, named after its options too, so runs with other knobs keep their own rows.

    >>> configured_strategy("mact", np=2, nc=1).name
    'mact[nc=1,np=2]'
    >>> configured_strategy("mact", roles="plan,execute").name
    'mact@plan,execute'
    """
    strategy = get_strategy(name, **options)
    roles = options.pop("roles", None)
    label = name
    if options:
        label += "[" + ",".join(f"{k}={v}" for k, v in sorted(options.items())) + "]"
    if roles is not None:
        label += "@" + ",".join(strategy.config.roles)
    strategy.config = replace(strategy.config, name=label)
    return strategy


# -- the shared execution ---------------------------------------------------------------------------


class _Run:
    def __init__(self, config: StrategyConfig, page: Page, question: str, task: str, brain: Brain) -> None:
        self.config = config
        self.brain = brain
        self.start = time.perf_counter()
        self.usage = Usage()
        self.kept: list[str] = []
        self.rolled_back: list[str] = []
        self.tried: set[tuple[str, str]] = set()  # (page hash, tool call) pairs already run
        self.pages: dict[str, Page] = {page.hash: page}
        self.state = State(
            question=question,
            task=task,
            page=page,
            original=page,
            available_tools=self._toolbox(),
            max_rounds=config.max_rounds,
        )

    def _toolbox(self) -> list[str]:
        if self.config.tools is not None:
            for name in self.config.tools:
                get_tool(name)  # unknown names fail before any work
            names = list(self.config.tools)
        else:
            names = [t.name for t in list_tools() if t.degradation != INSPECTION]
        if self.config.inspection:
            names += [t.name for t in list_tools(INSPECTION) if t.name not in names]
        return names

    def _rng(self) -> random.Random:
        digest = hashlib.blake2b(f"{self.config.seed}|{self.state.question}|{self.state.original.hash}".encode(), digest_size=8)
        return random.Random(int.from_bytes(digest.digest(), "big"))

    # -- steps ------------------------------------------------------------------------------------

    def _record(self, step: Step, usage: Usage = Usage()) -> Step:
        step.prompt_tokens += usage.prompt_tokens
        step.completion_tokens += usage.completion_tokens
        self.usage = self.usage + usage
        self.state.history.append(step)
        return step

    def _apply(self, name: str, args: dict[str, Any], why: str) -> tuple[Page | None, Action]:
        """Run a tool on the current page. Returns the new page (None unless APPLIED) and what happened:

        APPLIED (a new page state), NO_CHANGE (the tool returned the same pixels: it found nothing to fix),
        FAILED (it raised; the error is in the trace) or SKIPPED (this call already ran on this page state).
        """
        before = self.state.page
        call = f"{name}{sorted(args.items())}"
        if (before.hash, call) in self.tried:
            self._record(Step(Phase.TOOL, Action.SKIPPED, name, "already run on this page state", before.hash,
                              round=self.state.round))
            return None, Action.SKIPPED
        self.tried.add((before.hash, call))
        t0 = time.perf_counter()
        try:
            after = get_tool(name).run(before, **args)
        except Exception as err:  # a failing tool never ends the run: it is recorded and treated as a rollback
            reason = f"{type(err).__name__}: {err}"
            self._record(
                Step(Phase.TOOL, Action.FAILED, name, reason, before.hash, None, time.perf_counter() - t0,
                     round=self.state.round)
            )
            return None, Action.FAILED
        data = {"args": args} if args else {}
        if after.hash == before.hash:
            # Nothing to review: the page state is the same one, so a Phase B could only compare it with itself.
            self._record(Step(Phase.TOOL, Action.NO_CHANGE, name, f"{why}; the tool changed no pixel", before.hash,
                              before.hash, time.perf_counter() - t0, round=self.state.round, data=data))
            return None, Action.NO_CHANGE
        self.pages[after.hash] = after
        self._record(
            Step(Phase.TOOL, Action.APPLIED, name, why, before.hash, after.hash, time.perf_counter() - t0,
                 round=self.state.round, data=data)
        )
        return after, Action.APPLIED

    def _answer(self, phase: Phase = Phase.ANSWER) -> Answer:
        t0 = time.perf_counter()
        answer = self.brain.answer(self.state)
        self._record(
            Step(phase, Action.ANSWER, None, answer.reasoning, self.state.page.hash, seconds=time.perf_counter() - t0,
                 data={"answer": answer.text, "confidence": answer.confidence}),
            answer.usage,
        )
        return answer

    def _disable(self, name: str) -> None:
        if name in self.state.available_tools:
            self.state.available_tools.remove(name)

    # -- modes ------------------------------------------------------------------------------------

    def execute(self) -> Result:
        mode = self.config.mode
        error = None
        try:
            if mode == "direct":
                answer = self._answer()
            elif mode == "pipeline":
                answer = self._pipeline()
            elif mode == "judge":
                answer = self._judge()
            elif mode == "mact":
                from .mact import run_mact

                if self.config.restore_first:
                    self._rounds()  # restore; the reasoning below replaces Phase A's answer
                answer = run_mact(self)
            else:
                answer = self._loop()
        except DocIntentError as err:
            # A brain that cannot answer (endpoint down, bad output) ends with an empty answer and the reason.
            error = f"{type(err).__name__}: {err}"
            self._record(Step(Phase.ANSWER, Action.FAILED, None, error, self.state.page.hash))
            answer = Answer("", 0.0, error)
        return Result(
            answer=answer.text,
            strategy=self.config.name,
            confidence=answer.confidence,
            trace=list(self.state.history),
            tools_kept=list(self.kept),
            tools_rolled_back=list(self.rolled_back),
            seconds=time.perf_counter() - self.start,
            prompt_tokens=self.usage.prompt_tokens,
            completion_tokens=self.usage.completion_tokens,
            error=error,
            final_page=self.state.page,
            pages=self.pages,
        )

    def _run_sequence(self, names: Sequence[str], why: str) -> None:
        for name in names:
            after, _ = self._apply(name, {}, why)
            if after is not None:
                self.state.page = after
                self.kept.append(name)

    def _pipeline(self) -> Answer:
        names = [n for n in PIPELINE_ORDER if n in self.state.available_tools]
        if self.config.random_order:
            self._rng().shuffle(names)
        self._run_sequence(names, "pipeline: every restoration tool, no assessment")
        return self._answer()

    def _judge(self) -> Answer:
        t0 = time.perf_counter()
        diagnosis: Diagnosis = self.brain.diagnose(self.state)
        self._record(
            Step(Phase.DIAGNOSE, Action.DIAGNOSED, None, ", ".join(diagnosis.degradations) or "no degradation",
                 self.state.page.hash, seconds=time.perf_counter() - t0,
                 data={"degradations": list(diagnosis.degradations), "rotation": diagnosis.rotation}),
            diagnosis.usage,
        )
        found = [d for d in JUDGE_ORDER if d in diagnosis.degradations]
        if self.config.random_order:
            self._rng().shuffle(found)
        names = []
        for degradation in found:
            if degradation == "orientation":
                candidates = [diagnosis.rotation] if diagnosis.rotation else []
            else:
                candidates = tools_for(degradation)
            tool = next((t for t in candidates if t in self.state.available_tools and t not in names), None)
            if tool:
                names.append(tool)
        self._run_sequence(names, "judge: diagnosed degradation")
        return self._answer()

    def _loop(self) -> Answer:
        """Phase A / Phase B rounds, then the answer when the rounds run out without one."""
        decided = self._rounds()
        return decided if decided is not None else self._answer()

    def _rounds(self) -> Answer | None:
        """Phase A / Phase B rounds: Phase A's answer, or None when the rounds run out."""
        config = self.config
        state = self.state
        if not config.offer_tools:
            state.available_tools = []
        for t in range(config.max_rounds):
            state.round = t
            t0 = time.perf_counter()
            decision = self.brain.decide(state)
            if isinstance(decision, Answer):
                self._record(
                    Step(Phase.DECIDE, Action.ANSWER, None, decision.reasoning, state.page.hash, seconds=time.perf_counter() - t0,
                         round=t, data={"answer": decision.text, "confidence": decision.confidence}),
                    decision.usage,
                )
                return decision
            if not isinstance(decision, UseTool):
                raise TypeError(f"{type(self.brain).__name__}.decide returned {decision!r}, expected Answer or UseTool")
            self._record(
                Step(Phase.DECIDE, Action.USE_TOOL, decision.name, decision.why, state.page.hash, seconds=time.perf_counter() - t0,
                     round=t, data={"args": decision.args} if decision.args else {}),
                decision.usage,
            )
            if decision.name not in state.available_tools:
                # The brain asked for a tool that is not offered (disabled or unknown): nothing runs this round.
                self._record(Step(Phase.TOOL, Action.SKIPPED, decision.name, "tool not available", state.page.hash, round=t))
                continue
            tool = get_tool(decision.name)
            if isinstance(tool, InspectionTool):
                self._inspect(tool, decision)
                continue
            before = state.page
            after, outcome = self._apply(decision.name, decision.args, decision.why)
            if after is None:
                # A failed tool counts as rolled back; one that changed nothing, or was already run on this
                # page state, is neither kept nor rolled back. Either way it is not offered again.
                if outcome == Action.FAILED:
                    self.rolled_back.append(decision.name)
                self._disable(decision.name)
                continue
            if not config.review:
                state.page = after
                self.kept.append(decision.name)
                continue
            t0 = time.perf_counter()
            verdict = self.brain.review(state, before, after)
            if isinstance(verdict, Keep):
                self._record(
                    Step(Phase.REVIEW, Action.KEEP, decision.name, verdict.why, before.hash, after.hash, time.perf_counter() - t0, round=t),
                    verdict.usage,
                )
                state.page = after
                self.kept.append(decision.name)
            elif isinstance(verdict, Rollback):
                self._record(
                    Step(Phase.REVIEW, Action.ROLLBACK, decision.name, verdict.why, before.hash, after.hash, time.perf_counter() - t0, round=t),
                    verdict.usage,
                )
                state.page = before  # exactly the previous Page object
                self.rolled_back.append(decision.name)
                self._disable(decision.name)
            else:
                raise TypeError(f"{type(self.brain).__name__}.review returned {verdict!r}, expected Keep or Rollback")
        return None

    def _inspect(self, tool: InspectionTool, decision: UseTool) -> None:
        """Inspection tools (zoom/OCR) gather evidence and change no page, so no Phase B follows."""
        t0 = time.perf_counter()
        try:
            evidence = tool.inspect(self.state.page, **tool.check_args(decision.args))
        except Exception as err:
            self._record(Step(Phase.INSPECT, Action.FAILED, tool.name, f"{type(err).__name__}: {err}", self.state.page.hash,
                              seconds=time.perf_counter() - t0, round=self.state.round))
            return
        self.state.evidence.append(evidence)
        self._record(Step(Phase.INSPECT, Action.INSPECTED, tool.name, decision.why, self.state.page.hash,
                          seconds=time.perf_counter() - t0, round=self.state.round,
                          data={"args": decision.args, "evidence": getattr(evidence, "summary", lambda: str(evidence)[:500])()}))
