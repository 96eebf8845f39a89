"""Strategies: DocIntent's answerability-guided loop, the baselines and ablations it is compared with, MACT,
and question-free page restoration, all modes of one orchestration over a public run context."""

from ..trace import Result, Step
from .baselines import pipeline_tools
from .configs import (
    MACT_ROLES,
    RUN_SETTINGS,
    DirectConfig,
    JudgeConfig,
    LoopConfig,
    MactConfig,
    PageRestoreConfig,
    PipelineConfig,
    RunSettings,
    StrategyConfig,
    ToolboxConfig,
)
from .core import (
    CONFIGS,
    MODES,
    NAMED,
    STRATEGIES,
    Mode,
    Strategy,
    applicable_options,
    configured_strategy,
    get_strategy,
)
from .run import Applied, OnStep, Run, RunStopped, ShouldStop

__all__ = [
    "CONFIGS",
    "MACT_ROLES",
    "MODES",
    "NAMED",
    "RUN_SETTINGS",
    "STRATEGIES",
    "Applied",
    "DirectConfig",
    "JudgeConfig",
    "LoopConfig",
    "MactConfig",
    "Mode",
    "OnStep",
    "PageRestoreConfig",
    "PipelineConfig",
    "Result",
    "Run",
    "RunSettings",
    "RunStopped",
    "ShouldStop",
    "Step",
    "Strategy",
    "StrategyConfig",
    "ToolboxConfig",
    "applicable_options",
    "configured_strategy",
    "get_strategy",
    "pipeline_tools",
]
