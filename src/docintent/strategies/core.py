"""One orchestration for every strategy: DocIntent's Algorithm 1, its baselines, its ablations and MACT.

A strategy is a named, typed configuration (:mod:`docintent.strategies.configs`) of a *mode*; a mode is a
function over the run context (:class:`~docintent.strategies.run.Run`) registered in :data:`MODES` with its
configuration class, so a strategy with new control flow is one function and one config class:

================== ==========================================================================================
``none``           answer directly (mode ``direct``)
``pipeline-*``     every restoration tool in the families' order (or a seeded random order), then answer
``judge-*``        ``brain.diagnose`` lists degradations, the matching tools run (fixed or random order), answer
``prompt-only``    answerability-guided ``decide`` with no tools offered (ablation)
``agres``          Phase A with tools, no Phase B review (ablation)
``docintent``      Phase A decide -> tool -> Phase B review -> keep or roll back and disable, at most T rounds
``mact``           plan -> execute (Ne candidates per step) -> judge -> correct (at most Nc) -> answer
``docintent+mact`` restore as ``docintent`` does, then MACT on the kept page
================== ==========================================================================================

>>> get_strategy("docintent", max_rounds=3).config.max_rounds
3
>>> configured_strategy("mact", np=2, nc=1).name
'mact[nc=1,np=2]'
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

from ..brains.base import Answer, Restorer, require_mact
from ..errors import DocIntentError
from ..page import Page
from ..registry import Registry
from ..tools import get_tool, list_tools, restoration_tools
from ..trace import Action, AnswerStep, Phase, Result, Step
from ..vocabulary import INSPECTION
from .baselines import run_direct, run_judge, run_pipeline
from .configs import (
    DirectConfig,
    JudgeConfig,
    LoopConfig,
    MactConfig,
    PageRestoreConfig,
    PipelineConfig,
    RunSettings,
    StrategyConfig,
)
from .loop import run_loop
from .mact import run_mact
from .page import run_page_restore
from .run import OnStep, Run, RunStopped, ShouldStop

#: A mode: what runs a configuration of its class over a run context and returns the answer.
ModeRunner = Callable[[Run, Any], Answer]


class Mode:
    """A mode of the orchestration: its configuration class and the function that runs it."""

    def __init__(self, config: type[StrategyConfig], runner: ModeRunner, needs_mact: bool = False) -> None:
        self.config = config
        self.runner = runner
        self.needs_mact = needs_mact

    @property
    def name(self) -> str:
        """The mode's name: its configuration's ``mode``."""
        return str(self.config.model_fields["mode"].default)

    def __call__(self) -> Mode:
        return self


#: The built-in modes, each registered here and only here (named by its configuration's ``mode``): a built-in
#: mode is its config class (:mod:`~docintent.strategies.configs`), its runner and one line in this tuple.
_BUILT_IN_MODES: tuple[Mode, ...] = (
    Mode(DirectConfig, run_direct),
    Mode(PipelineConfig, run_pipeline),
    Mode(JudgeConfig, run_judge),
    Mode(LoopConfig, run_loop),
    Mode(PageRestoreConfig, run_page_restore),
    Mode(MactConfig, run_mact, needs_mact=True),
)

#: Modes by name; a plug-in mode joins through the ``docintent.modes`` entry points (a :class:`Mode`).
MODES: Registry[Mode] = Registry("strategy mode", group="docintent.modes")
for _built_in in _BUILT_IN_MODES:
    MODES.register(_built_in.name, _built_in)

#: Every built-in mode's configuration class, by mode (a plug-in mode registers its class in :data:`MODES`).
CONFIGS: dict[str, type[StrategyConfig]] = {m.name: m.config for m in _BUILT_IN_MODES}


class _Named:
    def __init__(self, config: StrategyConfig) -> None:
        self.config = config

    def __call__(self) -> StrategyConfig:
        return self.config


#: The named strategies (their configurations); plug-ins through the ``docintent.strategies`` entry points.
NAMED: Registry[StrategyConfig] = Registry("strategy", group="docintent.strategies")
for _config in (
    DirectConfig(name="none"),
    PipelineConfig(name="pipeline-fixed"),
    PipelineConfig(name="pipeline-random", random_order=True),
    JudgeConfig(name="judge-fixed"),
    JudgeConfig(name="judge-random", random_order=True),
    LoopConfig(name="prompt-only", review=False, offer_tools=False),
    LoopConfig(name="agres", review=False),
    LoopConfig(name="docintent"),
    MactConfig(name="mact"),
    MactConfig(name="docintent+mact", restore_first=True),
):
    NAMED.register(_config.name, _Named(_config))


class _StrategyNames(Mapping[str, StrategyConfig]):
    """The named strategies as a read-only mapping ``name -> configuration`` (in registration order)."""

    def __getitem__(self, name: str) -> StrategyConfig:
        if name not in NAMED:
            raise KeyError(name)
        return NAMED.get(name)

    def __iter__(self) -> Iterator[str]:
        return iter(NAMED.kinds_in_order())

    def __len__(self) -> int:
        return len(NAMED.kinds())


STRATEGIES: Mapping[str, StrategyConfig] = _StrategyNames()


class Strategy:
    """Runs one configuration with a brain. Stateless between questions."""

    def __init__(self, config: StrategyConfig) -> None:
        self.config = config
        self.mode = MODES.get(config.mode)

    @property
    def name(self) -> str:
        return self.config.name

    @property
    def settings(self) -> RunSettings:
        """What a run takes from the configuration (the run settings its mode declares, see
        :meth:`StrategyConfig.run_settings`)."""
        settings = self.config.run_settings()
        if not isinstance(settings, RunSettings):
            raise TypeError(f"{type(self.config).__name__}.run_settings returned {settings!r}, expected RunSettings")
        return settings

    def check(self, brain: Restorer) -> None:
        """Refuse, before any work, a brain this strategy cannot run with (MACT needs the roles) and tools
        that are not registered."""
        if self.mode.needs_mact:
            require_mact(brain, self.name)
        for name in self.settings.tools or ():
            get_tool(name)  # an unknown name lists the valid ones

    def toolbox(self) -> list[str]:
        """The tools offered to the brain."""
        settings = self.settings
        names = list(settings.tools) if settings.tools is not None else restoration_tools()
        if settings.inspection:
            names += [t.name for t in list_tools(INSPECTION) if t.name not in names]
        return names

    def run(
        self,
        page: Page,
        question: str,
        task: str,
        brain: Restorer,
        *,
        on_step: OnStep | None = None,
        should_stop: ShouldStop | None = None,
        tools: list[str] | None = None,
        preface: Sequence[Step] = (),
    ) -> Result:
        """Answer ``question`` about ``page`` and return the answer with its full trace.

        ``on_step(step, run)`` hears of every step as it is recorded; ``should_stop()`` is asked after every
        step, and a True ends the run with no answer and the reason as its error. ``tools``: the toolbox
        (default: the configuration's). ``preface``: steps recorded first, before the mode runs (why this page
        of a document is being read).
        """
        self.check(brain)
        settings = self.settings
        run = Run(
            self.name,
            page,
            question,
            task,
            brain,
            tools if tools is not None else self.toolbox(),
            max_rounds=settings.max_rounds,
            seed=settings.seed,
            on_step=on_step,
            should_stop=should_stop,
        )
        error = None
        try:
            for step in preface:
                run.record(step)
            answer = self.mode.runner(run, self.config)
        except RunStopped as err:
            error = f"{type(err).__name__}: {err}"
            stopped = AnswerStep(Phase.ANSWER, Action.STOPPED, None, reason=error, before=run.state.page.hash)
            run.state.history.append(stopped)  # not through record: that would ask should_stop again
            if on_step is not None:
                on_step(stopped, run)
            answer = Answer("", 0.0, error)
        except DocIntentError as err:
            # A brain that cannot answer (endpoint down, bad output) ends with an empty answer and the reason.
            error = f"{type(err).__name__}: {err}"
            try:
                run.record(AnswerStep(Phase.ANSWER, Action.FAILED, None, reason=error, before=run.state.page.hash))
            except RunStopped:
                pass
            answer = Answer("", 0.0, error)
        return run.result(answer, error)

    def __repr__(self) -> str:
        return f"<Strategy {self.name}>"


def get_strategy(name: str, **options: Any) -> Strategy:
    """The strategy called ``name`` (see :data:`STRATEGIES`), with the knobs of its mode set by ``options``;
    a knob its mode does not have is refused, naming the valid ones.

    >>> get_strategy("none", np=3)
    Traceback (most recent call last):
    ...
    docintent.errors.ConfigError: strategy 'none' (mode direct): unknown option 'np'; valid options: none
    """
    config = NAMED.get(name)
    return Strategy(config.with_options(**options) if options else config)


def applicable_options(name: str, **options: Any) -> dict[str, Any]:
    """Of ``options``, those that are knobs of strategy ``name`` (a service offers one ``max_rounds`` field for
    every strategy; it means something only for the ones that have rounds).

    >>> applicable_options("none", max_rounds=3), applicable_options("docintent", max_rounds=3)
    ({}, {'max_rounds': 3})
    """
    knobs = NAMED.get(name).knobs()
    return {k: v for k, v in options.items() if k in knobs}


def configured_strategy(name: str, **options: Any) -> Strategy:
    """:func:`get_strategy`, named after the knobs that differ from the named strategy's, so runs with other
    knobs keep their own rows (``roles`` after an ``@``).

    >>> configured_strategy("mact", roles="plan,execute").name
    'mact@plan,execute'
    >>> configured_strategy("docintent", max_rounds=10).name
    'docintent'
    """
    base = NAMED.get(name)
    strategy = get_strategy(name, **options)
    changed = strategy.config.changed_knobs(base)
    roles = changed.pop("roles", None)
    label = name
    if changed:
        label += "[" + ",".join(f"{k}={_label_value(v)}" for k, v in sorted(changed.items())) + "]"
    if roles is not None:
        label += "@" + ",".join(roles)
    return Strategy(strategy.config.model_copy(update={"name": label}))


def _label_value(value: Any) -> str:
    if isinstance(value, tuple):
        return "+".join(str(v) for v in value)
    return str(value)


__all__ = [
    "CONFIGS",
    "MODES",
    "NAMED",
    "STRATEGIES",
    "Mode",
    "Strategy",
    "applicable_options",
    "configured_strategy",
    "get_strategy",
]
