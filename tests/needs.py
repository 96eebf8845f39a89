"""Optional test inputs and outside oracles: skipped on a developer's machine, required in CI.

Under ``CI=true`` a missing oracle (``rank_bm25``, ``bm25s``, Tesseract) or reference file (the WildDoc
leaderboard predictions) fails the test instead of skipping it, so a green CI run means the outside checks ran.
"""

from __future__ import annotations

import importlib
import os
from pathlib import Path
from types import ModuleType

import pytest

IN_CI = os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def _missing(message: str) -> None:
    if IN_CI:
        pytest.fail(f"{message} (required when CI=true)", pytrace=False)
    pytest.skip(message)


def need_module(name: str, reason: str = "") -> ModuleType:
    """Import ``name``, or skip (fail in CI) saying why the test needs it."""
    try:
        return importlib.import_module(name)
    except ImportError as err:
        _missing(f"{name} is not importable ({err})" + (f": {reason}" if reason else ""))
        raise  # unreachable: skip/fail raise


def need_file(path: Path, what: str) -> Path:
    """``path`` if it is a file, else skip (fail in CI) naming what is missing and where it was looked for."""
    if not Path(path).is_file():
        _missing(f"{what} not found at {path}")
    return Path(path)
