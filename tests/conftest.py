"""Shared fixtures: pages rendered by the tests themselves (no files from the network)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from needs import EXTRAS, need_extra

os.environ.setdefault("OMP_THREAD_LIMIT", "1")
# No docintent.toml of the developer's (project or user config folder) changes what the tests see; the tests of
# the config file point DOCINTENT_CONFIG elsewhere themselves.
os.environ["DOCINTENT_CONFIG"] = "none"

# Property-based tests: a bounded number of examples by default (CI); HYPOTHESIS_PROFILE=long for a deep run.
try:
    from hypothesis import settings as _hypothesis_settings

    _hypothesis_settings.register_profile("ci", max_examples=40, deadline=None, derandomize=True)
    _hypothesis_settings.register_profile("long", max_examples=5000, deadline=None)
    _hypothesis_settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
except ImportError:  # hypothesis is in the test extra; without it only tests/test_properties.py is skipped
    pass


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked with an optional extra's marker runs only where that extra is installed."""
    for marker in EXTRAS:
        if item.get_closest_marker(marker) is not None:
            need_extra(marker)


#: tests/plugins is a plug-in distribution the tests install in a process of their own; importing it here (the
#: doctest collection imports every module) would put its entry points before every test of this process.
collect_ignore = ["plugins"]

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"


def font_path(name: str = "DejaVuSans.ttf") -> str:
    import matplotlib

    return str(Path(matplotlib.get_data_path()) / "fonts" / "ttf" / name)


def render_text_page(lines: list[str], *, size: int = 28, width: int = 1000, margin: int = 40) -> np.ndarray:
    """Black text lines on white paper, as an RGB array."""
    from PIL import Image, ImageDraw, ImageFont

    font = ImageFont.truetype(font_path(), size)
    height = margin * 2 + int(len(lines) * size * 1.6)
    img = Image.new("RGB", (width, height), "white")
    draw = ImageDraw.Draw(img)
    for i, line in enumerate(lines):
        draw.text((margin, margin + int(i * size * 1.6)), line, fill="black", font=font)
    return np.asarray(img)


@pytest.fixture(scope="session")
def text_page():
    from docintent.page import Page

    lines = [
        "Invoice number: INV-2041",
        "Date: 12 March 2024",
        "Total amount due: $1,250.00",
        "Thank you for your order",
    ]
    return Page.from_array(render_text_page(lines), source="rendered"), lines


@pytest.fixture(autouse=True, scope="session")
def _isolated_cache(tmp_path_factory):
    """Tests never write into the user's cache directory."""
    os.environ["DOCINTENT_CACHE_DIR"] = str(tmp_path_factory.mktemp("cache"))
    from docintent.settings import get_settings

    get_settings.cache_clear()
    yield
