"""Synthetic degradations: shape and dtype kept, seeded, input untouched, damage grows with severity."""

from __future__ import annotations

import numpy as np
import pytest

from docintent.synth import degrade
from docintent.synth.render import render_page

FUNCTIONS = [
    degrade.perspective, degrade.curl, degrade.shadow, degrade.defocus, degrade.motion_blur,
    degrade.low_contrast, degrade.color_cast, degrade.stain, degrade.uneven_light, degrade.moire,
    degrade.noise, degrade.jpeg,
]


@pytest.fixture(scope="module")
def page() -> np.ndarray:
    img, _ = render_page(width=360, seed=5)
    return img


@pytest.mark.parametrize("fn", FUNCTIONS, ids=lambda f: f.__name__)
def test_degradation_contract(fn, page):
    original = page.copy()
    a = fn(page, np.random.default_rng(1), 0.6)
    b = fn(page, np.random.default_rng(1), 0.6)
    assert a.shape == page.shape and a.dtype == np.uint8
    assert np.array_equal(a, b)  # the generator is the only source of randomness
    assert np.array_equal(page, original)
    mild = np.abs(fn(page, np.random.default_rng(1), 0.1).astype(int) - page).mean()
    strong = np.abs(fn(page, np.random.default_rng(1), 1.0).astype(int) - page).mean()
    assert strong > mild > 0 or fn is degrade.jpeg and strong > mild


@pytest.mark.parametrize("fn", FUNCTIONS + [degrade.rotate], ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(1, 1, 3), (2, 300, 3), (300, 2, 3)])
def test_degradation_handles_tiny_images(fn, shape):
    out = fn(np.full(shape, 200, np.uint8), np.random.default_rng(0), 1.0)
    assert out.dtype == np.uint8 and out.ndim == 3 and out.size == np.prod(shape)


def test_rotate_turns_by_quarter_turns(page):
    out = degrade.rotate(page, np.random.default_rng(3), 0.5)
    assert any(np.array_equal(out, np.rot90(page, -k)) for k in (1, 2, 3))


def test_bad_input_is_refused():
    with pytest.raises(ValueError, match="HxWx3 uint8"):
        degrade.shadow(np.zeros((10, 10), np.uint8), np.random.default_rng(0), 0.5)
