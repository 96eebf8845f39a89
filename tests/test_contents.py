"""What the tools, loaders and signals put in their output, not only its type: a restoration moves a damaged page
measurably closer to the clean one, a tool with nothing to do leaves the pixels as they were, converted image
modes keep their values, and a blank page of any shape has nothing to diagnose."""

from __future__ import annotations

import numpy as np
import pytest
from PIL import Image

from docintent.io import load_page
from docintent.page import Page
from docintent.perception import diagnose
from docintent.synth import degrade
from docintent.synth.render import render_page
from docintent.tools import get_tool

RESTORATION = ["deshadowing", "appearance", "demoire", "deblurring", "dewarping"]


@pytest.fixture(scope="module")
def clean() -> np.ndarray:
    img, _ = render_page(width=1000, seed=3)
    return img


def mean_error(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.float64) - b.astype(np.float64)).mean())


@pytest.mark.parametrize(
    "tool,damage,seed,at_most",
    [
        ("deshadowing", degrade.shadow, 0, 0.1),
        ("deshadowing", degrade.uneven_light, 1, 0.1),
        ("appearance", degrade.low_contrast, 0, 0.1),
        ("appearance", degrade.color_cast, 1, 0.1),
        ("deblurring", degrade.motion_blur, 1, 0.9),
        ("deblurring", degrade.defocus, 0, 0.95),
        ("demoire", degrade.moire, 0, 0.95),
    ],
    ids=lambda v: getattr(v, "__name__", str(v)),
)
def test_each_tool_moves_its_damage_closer_to_the_clean_page(clean, tool, damage, seed, at_most):
    damaged = damage(clean, np.random.default_rng(seed), 0.6 if tool == "deblurring" else 0.7)
    restored = get_tool(tool)(Page.from_array(damaged)).pixels
    assert restored.shape == clean.shape
    before, after = mean_error(damaged, clean), mean_error(restored, clean)
    assert after <= at_most * before, f"{tool}: mean error {before:.2f} -> {after:.2f}"


@pytest.mark.parametrize("name", ["deblurring", "dewarping"])
def test_a_tool_with_nothing_to_fix_leaves_the_clean_page_as_it_was(clean, name):
    page = Page.from_array(clean)
    assert get_tool(name)(page).hash == page.hash


def test_demoire_on_a_clean_page_changes_next_to_nothing(clean):
    # Its notch filter finds no screen pattern; what remains is the chroma smoothing, which touches only colour.
    out = get_tool("demoire")(Page.from_array(clean)).pixels
    assert mean_error(out, clean) < 1.0


@pytest.mark.parametrize("name", RESTORATION + ["rotate_90", "rotate_180", "rotate_270"])
def test_a_uniform_page_stays_uniform_paper(name):
    page = Page.from_array(np.full((1, 1, 3), 200, np.uint8))
    out = get_tool(name)(page).pixels
    assert out.std() < 1.0  # no pattern appears out of nothing
    # grey paper may be whitened (deshadowing, appearance), never darkened to ink
    assert 195 <= out.mean() <= 255


@pytest.mark.parametrize("name", ["rotate_90", "rotate_180", "rotate_270"])
def test_rotations_move_pixels_without_changing_them(clean, name):
    out = get_tool(name)(Page.from_array(clean)).pixels
    assert sorted(out.shape[:2]) == sorted(clean.shape[:2])
    assert np.array_equal(np.sort(out, axis=None), np.sort(clean, axis=None))


def _save(tmp_path, img: Image.Image, name: str):
    path = tmp_path / f"{name}.png"
    img.save(path)
    return load_page(path).pixels


def test_loaded_modes_keep_their_values(tmp_path):
    grey = np.full((6, 8), 128, np.uint8)
    assert (_save(tmp_path, Image.fromarray(grey), "L") == 128).all()
    assert (_save(tmp_path, Image.fromarray(grey).convert("LA"), "LA") == 128).all()
    rgb = np.dstack([np.full((6, 8), v, np.uint8) for v in (200, 40, 90)])
    opaque = np.dstack([rgb, np.full((6, 8), 255, np.uint8)])
    assert np.array_equal(_save(tmp_path, Image.fromarray(opaque), "RGBA"), rgb)
    half = np.dstack([np.zeros((6, 8, 3), np.uint8), np.full((6, 8), 128, np.uint8)])  # black at half opacity
    assert np.allclose(_save(tmp_path, Image.fromarray(half), "RGBA_half"), 127, atol=1)  # on white paper
    palette = Image.fromarray(rgb).convert("P")
    assert np.array_equal(_save(tmp_path, palette, "P"), np.asarray(palette.convert("RGB")))


@pytest.mark.parametrize("shape", [(1, 1), (2, 3), (40, 10000), (10000, 40), (7, 900), (64, 64)])
def test_a_blank_page_of_any_shape_has_nothing_to_diagnose(shape):
    assert diagnose(Page.from_array(np.full(shape + (3,), 245, np.uint8))) == []
