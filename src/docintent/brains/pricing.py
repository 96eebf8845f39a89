"""What model calls cost: a price table in US dollars per million input and output tokens.

Prices change and differ between providers, so docintent ships no prices: give your own, per model name,
or as one price for the brain (``ModelBrain(price_in=..., price_out=...)``). A local model costs nothing.

>>> table = PriceTable({"gpt-4o": Price(2.5, 10.0)})
>>> round(table.cost("gpt-4o", Usage(prompt_tokens=19_032, completion_tokens=500)), 6)
0.05258
>>> table.cost("qwen-local", Usage(prompt_tokens=10_000))
0.0
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from ..errors import ConfigError
from .base import Usage


@dataclass(frozen=True)
class Price:
    """US dollars per one million input (prompt) and output (completion) tokens."""

    input_per_million: float
    output_per_million: float

    def __post_init__(self) -> None:
        if self.input_per_million < 0 or self.output_per_million < 0:
            raise ConfigError(f"prices must be >= 0, got {self.input_per_million} / {self.output_per_million}")

    def cost(self, usage: Usage) -> float:
        """``prompt_tokens * input / 1e6 + completion_tokens * output / 1e6`` dollars."""
        return (usage.prompt_tokens * self.input_per_million + usage.completion_tokens * self.output_per_million) / 1e6


FREE = Price(0.0, 0.0)


class PriceTable:
    """Prices by model name. A model not in the table costs ``default`` (free unless given)."""

    def __init__(self, prices: Mapping[str, Price | tuple[float, float]] | None = None, default: Price = FREE) -> None:
        self.prices = {name: p if isinstance(p, Price) else Price(*p) for name, p in (prices or {}).items()}
        self.default = default

    def price(self, model: str | None) -> Price:
        return self.prices.get(model or "", self.default)

    def cost(self, model: str | None, usage: Usage) -> float:
        """Dollars that ``usage`` of ``model`` costs."""
        return self.price(model).cost(usage)

    @classmethod
    def from_json(cls, path: str | Path) -> PriceTable:
        """Read ``{"model": [input_per_million, output_per_million], ...}`` from a JSON file."""
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
            return cls({name: Price(float(v[0]), float(v[1])) for name, v in data.items()})
        except (OSError, ValueError, TypeError, IndexError, AttributeError) as err:
            raise ConfigError(
                f"{path}: not a price table ({{model: [input, output] $ per 1M tokens}}): {err}"
            ) from None
