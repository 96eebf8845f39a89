"""What a ``docintent serve`` process allows: limits, brains, token, where runs are kept."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..brains import Brain, get_brain
from ..errors import ConfigError

#: Name of the environment variable holding the bearer token (``--token`` overrides it).
TOKEN_ENV = "DOCINTENT_SERVE_TOKEN"
MB = 1024 * 1024


def brain_factory(kind: str, **options: Any) -> Callable[[], Brain]:
    """A function building a fresh brain of ``kind`` with ``options`` for each run."""

    def make() -> Brain:
        return get_brain(kind, **options)

    return make


@dataclass(frozen=True)
class ServeConfig:
    """Settings of one service. Every limit has a default fit for a laptop.

    ``brains`` maps the names a request may choose (form field ``brain``) to functions building a brain;
    requests never pass brain options such as endpoints or keys, so a client cannot point the service at
    another host. ``runs_dir``: benchmark run directories to browse (None: the runs browser is off).
    """

    workers: int = 2
    max_upload_bytes: int = 25 * MB
    max_pixels: int = 40_000_000
    run_timeout_s: float = 300.0
    keep_runs: int = 100
    keep_seconds: float = 3600.0
    max_queued: int = 64
    max_question_chars: int = 2000
    max_rounds: int = 10
    token: str | None = None
    cors_origins: tuple[str, ...] = ()
    data_dir: Path | None = None
    runs_dir: Path | None = None
    brains: dict[str, Callable[[], Brain]] = field(default_factory=lambda: {"offline": brain_factory("offline")})
    default_brain: str = "offline"
    model_base_url: str | None = None  # probed by /v1/health when an OpenAI-compatible brain is configured
    warm_up: bool = True  # load the OCR engine at start so the first run does not pay for it

    def __post_init__(self) -> None:
        if self.workers < 1:
            raise ConfigError(f"workers must be at least 1, got {self.workers}")
        if self.max_upload_bytes < 1:
            raise ConfigError(f"the upload limit must be positive, got {self.max_upload_bytes}")
        if self.run_timeout_s <= 0:
            raise ConfigError(f"the run timeout must be positive, got {self.run_timeout_s}")
        if self.keep_runs < 1:
            raise ConfigError(f"keep_runs must be at least 1, got {self.keep_runs}")
        if self.keep_seconds <= 0:
            raise ConfigError(f"keep_seconds must be positive, got {self.keep_seconds}")
        if not self.brains:
            raise ConfigError("at least one brain must be configured")
        if self.default_brain not in self.brains:
            raise ConfigError(f"default brain {self.default_brain!r} is not one of {sorted(self.brains)}")
        if self.token is not None and len(self.token) < 8:
            raise ConfigError("the bearer token must be at least 8 characters long")

    @staticmethod
    def token_from_env() -> str | None:
        """The token from ``DOCINTENT_SERVE_TOKEN`` (None when unset or empty)."""
        return os.environ.get(TOKEN_ENV) or None
