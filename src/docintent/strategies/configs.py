"""One typed configuration per strategy mode; a knob a mode does not have is refused, naming the valid ones.

==================== =============================================================================================
:class:`DirectConfig`   ``none``: answer directly
:class:`PipelineConfig` ``pipeline-*``: every restoration tool in the degradation families' order (or a seeded
                        random order), then answer; no checks
:class:`JudgeConfig`    ``judge-*``: the brain diagnoses, the tools for what it found run, then answer
:class:`LoopConfig`     ``docintent``, ``agres`` (no review), ``prompt-only`` (no tools): Phase A / Phase B rounds
:class:`MactConfig`     ``mact``, ``docintent+mact`` (``restore_first``): plan, execute, judge, answer
:class:`PageRestoreConfig` ``restore --auto``: question-free restoration of a page, each step judged on the page
==================== =============================================================================================

Every configuration declares in ``uses`` the run settings (:class:`RunSettings`: ``max_rounds``, ``seed``, ``tools``,
``inspection``) its knobs set; :class:`ToolboxConfig` is the base of the modes with the shared ``tools`` knob.

>>> LoopConfig(name="docintent", max_rounds=3).max_rounds
3
>>> DirectConfig(name="none", np=3)
Traceback (most recent call last):
...
docintent.errors.ConfigError: strategy 'none' (mode direct): unknown option 'np'; valid options: none
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import ConfigError, did_you_mean
from ..registry import describe_validation_error

#: MACT's roles, in the order they act.
MACT_ROLES = ("plan", "execute", "judge", "answer")


@dataclass(frozen=True)
class RunSettings:
    """What a run takes from its mode's configuration: the settings a mode declares in
    :attr:`StrategyConfig.uses` come from its knobs, the others are these defaults.

    >>> LoopConfig(name="docintent", max_rounds=3).run_settings()
    RunSettings(max_rounds=3, seed=0, tools=None, inspection=False)
    """

    #: The most rounds (``state.max_rounds``).
    max_rounds: int = 10
    #: Seeds :meth:`~docintent.strategies.Run.rng` (with the question and the page).
    seed: int = 0
    #: The toolbox offered to the brain (None: every registered restoration tool).
    tools: tuple[str, ...] | None = None
    #: Offer the inspection tools (zoom, OCR look-ups) as well.
    inspection: bool = False


#: The run settings, in :class:`RunSettings` order.
RUN_SETTINGS: tuple[str, ...] = tuple(f.name for f in fields(RunSettings))


class StrategyConfig(BaseModel):
    """What every mode's configuration has: the ``name`` rows are labelled with, and the ``mode``.

    ``uses`` declares the run settings (:class:`RunSettings`) the mode's knobs set, each a field of the same
    name; it is checked when the class is defined, so a misnamed setting, a declared setting with no field, or
    a field named like a run setting but not declared is refused instead of silently ignored.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    mode: str
    #: Knobs shared by no mode (the name is not a knob).
    knob_names: ClassVar[tuple[str, ...]] = ()
    #: The run settings this mode's knobs set (a subset of :data:`RUN_SETTINGS`).
    uses: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        cls._check_uses()

    @classmethod
    def _check_uses(cls) -> None:
        """Refuse a declaration of run settings that does not match the class's fields (one line, naming the knob)."""
        where = cls.__name__
        for name in cls.uses:
            if name not in RUN_SETTINGS:
                raise ConfigError(
                    f"{where}.uses: {name!r} is not a run setting{did_you_mean(name, RUN_SETTINGS)}; "
                    f"run settings: {', '.join(RUN_SETTINGS)}"
                )
            if name not in cls.model_fields:
                raise ConfigError(f"{where}.uses declares run setting {name!r} but {where} has no knob {name!r}")
        for name in cls.model_fields:
            if name in RUN_SETTINGS and name not in cls.uses:
                raise ConfigError(
                    f"{where} has knob {name!r}, a run setting it does not declare: add {name!r} to {where}.uses"
                )

    def __init__(self, **data: Any) -> None:
        try:
            super().__init__(**data)
        except ValidationError as err:
            mode = type(self).model_fields["mode"].default
            what = f"strategy {data.get('name', '?')!r} (mode {mode})"
            raise ConfigError(describe_validation_error(what, err, type(self).knobs())) from None

    @classmethod
    def knobs(cls) -> list[str]:
        """The options this mode takes (what ``--strategy-opt`` may set)."""
        return [k for k in cls.model_fields if k not in ("name", "mode")]

    def with_options(self, **options: Any) -> StrategyConfig:
        """A copy with ``options`` changed, validated like a new configuration (unknown knobs refused)."""
        unknown = [k for k in options if k not in self.knobs()]
        if unknown:
            listed = ", ".join(repr(k) for k in unknown)
            hint = did_you_mean(unknown[0], self.knobs())
            raise ConfigError(
                f"strategy {self.name!r} (mode {self.mode}): unknown option{'s' if len(unknown) > 1 else ''} "
                f"{listed}{hint}; valid options: {', '.join(self.knobs()) or 'none'}"
            )
        return type(self)(**{**self.model_dump(), **options})

    def changed_knobs(self, base: StrategyConfig) -> dict[str, Any]:
        """The knobs whose value differs from ``base`` (what a row label names)."""
        return {k: getattr(self, k) for k in self.knobs() if getattr(self, k) != getattr(base, k)}

    def run_settings(self) -> RunSettings:
        """The settings a run of this configuration takes: the declared ones (:attr:`uses`) from the knobs of
        the same name, the others :class:`RunSettings`' defaults."""
        return RunSettings(**{name: getattr(self, name) for name in self.uses})


def _tool_names(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [v for v in value.replace("+", ",").split(",") if v.strip()]
    return tuple(str(v).strip() for v in value)


class ToolboxConfig(StrategyConfig):
    """A mode that offers the brain a toolbox: the shared ``tools`` knob (a plug-in mode with a toolbox
    subclasses it, adding its other settings to ``uses``)."""

    uses: ClassVar[tuple[str, ...]] = ("tools",)

    tools: Annotated[
        tuple[str, ...] | None,
        Field(description="restrict the toolbox to these tools (None: every registered restoration tool)"),
    ] = None

    @field_validator("tools", mode="before")
    @classmethod
    def _split(cls, value: Any) -> tuple[str, ...] | None:
        return _tool_names(value)


class DirectConfig(StrategyConfig):
    """Answer directly from the page as given."""

    mode: Literal["direct"] = "direct"


class PipelineConfig(ToolboxConfig):
    """Every restoration tool (orientation excepted), in the families' order or a seeded random one."""

    mode: Literal["pipeline"] = "pipeline"
    uses: ClassVar[tuple[str, ...]] = ("tools", "seed")
    random_order: Annotated[bool, Field(description="shuffle the tools (seeded by the question and page)")] = False
    seed: Annotated[int, Field(description="seed of the random order")] = 0


class JudgeConfig(ToolboxConfig):
    """The brain diagnoses the page; the tools for what it diagnosed run (orientation first), then answer."""

    mode: Literal["judge"] = "judge"
    uses: ClassVar[tuple[str, ...]] = ("tools", "seed")
    random_order: Annotated[bool, Field(description="run the diagnosed tools in a seeded random order")] = False
    seed: Annotated[int, Field(description="seed of the random order")] = 0


class LoopConfig(ToolboxConfig):
    """DocIntent's Phase A / Phase B rounds and their ablations."""

    mode: Literal["loop"] = "loop"
    uses: ClassVar[tuple[str, ...]] = ("tools", "max_rounds", "inspection")
    review: Annotated[bool, Field(description="Phase B: review every restoration (False: the agres ablation)")] = True
    offer_tools: Annotated[bool, Field(description="offer restoration tools (False: the prompt-only ablation)")] = True
    max_rounds: Annotated[int, Field(ge=0, le=50, description="T, the most Phase A rounds")] = 10
    inspection: Annotated[bool, Field(description="offer inspection tools (zoom) in Phase A")] = False


class MactConfig(ToolboxConfig):
    """MACT: plan, execute (``ne`` candidates per step), judge, correct (at most ``nc``), answer."""

    mode: Literal["mact"] = "mact"
    uses: ClassVar[tuple[str, ...]] = ("tools", "max_rounds")
    np: Annotated[int, Field(ge=1, le=8, description="plans")] = 1
    ne: Annotated[int, Field(ge=1, le=8, description="candidate executions per step")] = 1
    nc: Annotated[int, Field(ge=0, le=8, description="corrections at most")] = 3
    roles: Annotated[tuple[str, ...], Field(description="the roles that act (plan and execute always)")] = MACT_ROLES
    restore_first: Annotated[bool, Field(description="restore with the docintent loop first")] = False
    max_rounds: Annotated[int, Field(ge=0, le=50, description="T of the restoration loop (restore_first)")] = 10

    @field_validator("roles", mode="before")
    @classmethod
    def _roles(cls, value: Any) -> tuple[str, ...]:
        if isinstance(value, str):
            value = [r for r in value.replace("+", ",").split(",") if r.strip()]
        roles = tuple(str(r).strip() for r in value)
        unknown = [r for r in roles if r not in MACT_ROLES]
        if unknown or not {"plan", "execute"} <= set(roles):
            raise ValueError(f"roles must include plan and execute and come from {', '.join(MACT_ROLES)}")
        return roles


class PageRestoreConfig(StrategyConfig):
    """Question-free restoration (``restore --auto``): each step judged on the whole page."""

    mode: Literal["page"] = "page"
    uses: ClassVar[tuple[str, ...]] = ("max_rounds",)
    max_rounds: Annotated[int, Field(ge=0, le=50, description="the most restoration steps")] = 8


__all__ = [
    "MACT_ROLES",
    "RUN_SETTINGS",
    "DirectConfig",
    "JudgeConfig",
    "LoopConfig",
    "MactConfig",
    "PageRestoreConfig",
    "PipelineConfig",
    "RunSettings",
    "StrategyConfig",
    "ToolboxConfig",
]
