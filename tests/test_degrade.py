"""Synthetic degradations: shape and dtype kept, seeded, input untouched, damage grows with severity."""

from __future__ import annotations

import numpy as np
import pytest

from docintent.synth import degrade
from docintent.synth.render import render_page

FUNCTIONS = [
    degrade.perspective,
    degrade.curl,
    degrade.shadow,
    degrade.defocus,
    degrade.motion_blur,
    degrade.low_contrast,
    degrade.color_cast,
    degrade.stain,
    degrade.uneven_light,
    degrade.moire,
    degrade.noise,
    degrade.jpeg,
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


# --- the capture kinds of the broad question set: glare, crumpled paper, a photo from a distance ---------

NEW_FUNCTIONS = [degrade.glare, degrade.crumple, degrade.distance]


@pytest.mark.parametrize("fn", NEW_FUNCTIONS, ids=lambda f: f.__name__)
def test_new_degradations_keep_the_contract(fn, page):
    test_degradation_contract(fn, page)


@pytest.mark.parametrize("fn", NEW_FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("shape", [(1, 1, 3), (2, 300, 3), (300, 2, 3)])
def test_new_degradations_handle_tiny_images(fn, shape):
    test_degradation_handles_tiny_images(fn, shape)


def _text_lines(n: int = 14) -> tuple[np.ndarray, list[str]]:
    from conftest import render_text_page

    lines = [f"Line {i + 1}: amount {1000 + 37 * i} paid on {i + 3} March" for i in range(n)]
    return render_text_page(lines, size=30, width=900), lines


def test_glare_washes_out_one_spot_and_leaves_the_rest_readable():
    import cv2

    from docintent import Page
    from docintent.ocr import get_engine

    img, lines = _text_lines()
    out = degrade.glare(img, np.random.default_rng(4), 0.9)
    grey_in = cv2.cvtColor(img, cv2.COLOR_RGB2GRAY).astype(np.float32)
    grey_out = cv2.cvtColor(out, cv2.COLOR_RGB2GRAY).astype(np.float32)
    # the hot spot: where the darkest ink got lightest; there black text is lifted to a pale grey
    lifted = cv2.blur(grey_out - grey_in, (41, 41))
    y, x = np.unravel_index(int(np.argmax(lifted)), lifted.shape)
    spot_in, spot_out = grey_in[y - 20 : y + 20, x - 20 : x + 20], grey_out[y - 20 : y + 20, x - 20 : x + 20]
    assert spot_in.min() < 60 and spot_out.min() > 150, "text under the hot spot is nearly washed out"
    assert np.percentile(spot_out, 90) >= 245, "the hot spot reaches near saturation"
    # a line far from the hot spot is still read word for word
    row = 40 + int(30 * 1.6) * np.arange(len(lines)) + 15
    far = int(np.argmax(np.abs(row - y)))
    text = get_engine("rapidocr").read(Page.from_array(out, source="glare")).text
    assert lines[far].split(":")[1].strip() in text, text


def test_crumple_bends_straight_lines_and_shades_facets():
    flat = np.full((400, 600, 3), 255, np.uint8)
    flat[198:202, :] = 0  # one straight black rule across the page
    out = degrade.crumple(flat, np.random.default_rng(2), 0.9)
    grey = out.mean(axis=2)
    rows = [int(np.argmin(grey[:, c])) for c in range(20, 580, 20)]
    assert max(rows) - min(rows) >= 2, "the rule no longer runs straight"
    assert max(abs(r - 200) for r in rows) <= 0.006 * 600 + 4, "the content moved only locally"
    paper = grey[grey > 120]
    assert paper.std() > 4 and paper.min() < 235, "the facets are shaded differently"


def test_distance_makes_the_page_small_and_loses_detail():
    import cv2

    img, _ = _text_lines(8)
    out = degrade.distance(img, np.random.default_rng(0), 0.8)
    assert out.shape == img.shape
    paper = (out.min(axis=2) > 200).mean()
    assert paper < 0.75 * (img.min(axis=2) > 200).mean(), "a table surrounds the smaller page"
    sharp_in = cv2.Laplacian(cv2.cvtColor(img, cv2.COLOR_RGB2GRAY), cv2.CV_32F).var()
    sharp_out = cv2.Laplacian(cv2.cvtColor(out, cv2.COLOR_RGB2GRAY), cv2.CV_32F).var()
    assert sharp_out < 0.5 * sharp_in, "detail is lost as at a lower resolution"


def test_capture_plans_apply_the_new_kinds_the_planner_never_draws(page):
    from docintent.synth.capture import EXTRA, CapturePlan, Planner, Step, apply

    plan = CapturePlan(
        (Step("crumple", 0.7, 1), Step("distance", 0.6, 2), Step("glare", 0.8, 3), Step("jpeg", 0.3, 4)), 90, 300, 5
    )
    out, meta = apply(page, plan)
    assert max(out.shape[:2]) == 300 and out.shape[0] < out.shape[1]  # turned a quarter, longest side kept
    assert [s["name"] for s in meta["steps"]] == ["crumple", "distance", "glare", "jpeg"]
    assert plan.names == ("crumple", "distance", "glare", "rotation_90", "jpeg")
    planner = Planner(np.random.default_rng(0))
    drawn = {s.name for c in (1, 2, 3, 4) * 50 for s in planner.plan(c).steps}
    assert not drawn & set(EXTRA)
