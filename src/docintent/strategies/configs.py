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

>>> LoopConfig(name="docintent", max_rounds=3).max_rounds
3
>>> DirectConfig(name="none", np=3)
Traceback (most recent call last):
...
docintent.errors.ConfigError: strategy 'none' (mode direct): unknown option 'np'; valid options: none
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from ..errors import ConfigError, did_you_mean
from ..registry import describe_validation_error

#: MACT's roles, in the order they act.
MACT_ROLES = ("plan", "execute", "judge", "answer")


class StrategyConfig(BaseModel):
    """What every mode's configuration has: the ``name`` rows are labelled with, and the ``mode``."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    mode: str
    #: Knobs shared by no mode (the name is not a knob).
    knob_names: ClassVar[tuple[str, ...]] = ()

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
            raise ConfigError(f"strategy {self.name!r} (mode {self.mode}): unknown option{'s' if len(unknown) > 1 else ''} "
                              f"{listed}{hint}; valid options: {', '.join(self.knobs()) or 'none'}")
        return type(self)(**{**self.model_dump(), **options})

    def changed_knobs(self, base: StrategyConfig) -> dict[str, Any]:
        """The knobs whose value differs from ``base`` (what a row label names)."""
        return {k: getattr(self, k) for k in self.knobs() if getattr(self, k) != getattr(base, k)}


def _tool_names(value: Any) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = [v for v in value.replace("+", ",").split(",") if v.strip()]
    return tuple(str(v).strip() for v in value)


class _Toolbox(StrategyConfig):
    tools: Annotated[tuple[str, ...] | None, Field(
        description="restrict the toolbox to these tools (None: every registered restoration tool)")] = None

    @field_validator("tools", mode="before")
    @classmethod
    def _split(cls, value: Any) -> tuple[str, ...] | None:
        return _tool_names(value)


class DirectConfig(StrategyConfig):
    """Answer directly from the page as given."""

    mode: Literal["direct"] = "direct"


class PipelineConfig(_Toolbox):
    """Every restoration tool (orientation excepted), in the families' order or a seeded random one."""

    mode: Literal["pipeline"] = "pipeline"
    random_order: Annotated[bool, Field(description="shuffle the tools (seeded by the question and page)")] = False
    seed: Annotated[int, Field(description="seed of the random order")] = 0


class JudgeConfig(_Toolbox):
    """The brain diagnoses the page; the tools for what it diagnosed run (orientation first), then answer."""

    mode: Literal["judge"] = "judge"
    random_order: Annotated[bool, Field(description="run the diagnosed tools in a seeded random order")] = False
    seed: Annotated[int, Field(description="seed of the random order")] = 0


class LoopConfig(_Toolbox):
    """DocIntent's Phase A / Phase B rounds and their ablations."""

    mode: Literal["loop"] = "loop"
    review: Annotated[bool, Field(description="Phase B: review every restoration (False: the agres ablation)")] = True
    offer_tools: Annotated[bool, Field(description="offer restoration tools (False: the prompt-only ablation)")] = True
    max_rounds: Annotated[int, Field(ge=0, le=50, description="T, the most Phase A rounds")] = 10
    inspection: Annotated[bool, Field(description="offer inspection tools (zoom) in Phase A")] = False


class MactConfig(_Toolbox):
    """MACT: plan, execute (``ne`` candidates per step), judge, correct (at most ``nc``), answer."""

    mode: Literal["mact"] = "mact"
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
    max_rounds: Annotated[int, Field(ge=0, le=50, description="the most restoration steps")] = 8


#: Every mode's configuration class, by mode (a new mode registers its class in ``docintent.strategies.MODES``).
CONFIGS: dict[str, type[StrategyConfig]] = {
    c.model_fields["mode"].default: c
    for c in (DirectConfig, PipelineConfig, JudgeConfig, LoopConfig, MactConfig, PageRestoreConfig)
}

__all__ = ["CONFIGS", "MACT_ROLES", "DirectConfig", "JudgeConfig", "LoopConfig", "MactConfig", "PageRestoreConfig",
           "PipelineConfig", "StrategyConfig"]
