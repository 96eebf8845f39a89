"""What a ``docintent serve`` process allows: limits, brains, token, where runs are kept."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from ..brains import Brain, get_brain
from ..errors import ConfigError
from ..redaction import register_secret

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
    _: KW_ONLY
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
        for name, low, high in (
            ("workers", 1, MAX_WORKERS),
            ("max_upload_bytes", 1, MAX_UPLOAD_BYTES),
            ("max_pixels", 1, None),
            ("keep_runs", 1, None),
            ("max_queued", 1, None),
            ("max_question_chars", 1, None),
            ("max_rounds", 0, None),
        ):
            _check_whole(name, getattr(self, name), low, high)
        for name in ("run_timeout_s", "keep_seconds"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value) or value <= 0:
                raise ConfigError(f"{name} must be a finite number of seconds above 0, got {value!r}")
        if not self.brains:
            raise ConfigError("at least one brain must be configured")
        if self.default_brain not in self.brains:
            raise ConfigError(f"default brain {self.default_brain!r} is not one of {sorted(self.brains)}")
        if self.token is not None:
            check_token(self.token, "the bearer token")
            register_secret(self.token)

    @staticmethod
    def token_from_env() -> str | None:
        """The token from ``DOCINTENT_SERVE_TOKEN``: None when the variable is unset; a ConfigError when it is
        set but empty (a service meant to be locked must not start open)."""
        value = os.environ.get(TOKEN_ENV)
        if value is None:
            return None
        check_token(value, TOKEN_ENV)
        return value


#: The most runs one service executes at once, and the largest upload it accepts (10 GB).
MAX_WORKERS = 256
MAX_UPLOAD_BYTES = 10 * 1024 * MB
#: The shortest bearer token accepted.
MIN_TOKEN_CHARS = 8


def check_token(token: str, what: str) -> None:
    """Refuse a bearer token that would not protect anything or could never be sent: empty, short, or with
    characters an HTTP header cannot carry. The message says how to fix it."""
    if not token.strip():
        raise ConfigError(
            f"{what} is empty, which would serve every endpoint without authentication; give a token of at "
            f"least {MIN_TOKEN_CHARS} characters, or unset it (and leave --token out) to serve without one"
        )
    if len(token) < MIN_TOKEN_CHARS:
        raise ConfigError(f"{what} must be at least {MIN_TOKEN_CHARS} characters long")
    if not all("!" <= ch <= "~" for ch in token):
        raise ConfigError(
            f"{what} may hold only printable ASCII characters without spaces (it is sent in an HTTP header)"
        )


def _check_whole(name: str, value: object, low: int, high: int | None) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < low or (high is not None and value > high):
        bound = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise ConfigError(f"{name} must be a whole number {bound}, got {value!r}")
