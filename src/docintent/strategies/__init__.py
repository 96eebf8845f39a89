"""Strategies: DocIntent's answerability-guided loop and the baselines/ablations it is compared with."""

from ..trace import Result, Step
from .core import (
    JUDGE_ORDER,
    PIPELINE_ORDER,
    STRATEGIES,
    Strategy,
    StrategyConfig,
    configured_strategy,
    get_strategy,
)

__all__ = ["JUDGE_ORDER", "PIPELINE_ORDER", "STRATEGIES", "Result", "Step", "Strategy", "StrategyConfig",
           "configured_strategy", "get_strategy"]
