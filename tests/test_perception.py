"""Measured degradation signals: each rises with its degradation, stays quiet on clean pages, and copes with
odd inputs."""

from __future__ import annotations

import numpy as np
import pytest

from docintent.page import Box, Page
from docintent.perception import FAMILIES, Thresholds, diagnose, measure, rotation_fix, text
from docintent.perception.degradations import names
from docintent.synth import degrade
from docintent.synth.render import render_page
from docintent.tools import get_tool
from needs import need_module


@pytest.fixture(scope="module")
def clean() -> np.ndarray:
    return render_page(width=900, seed=4)[0]


def _severity(img: np.ndarray, family: str) -> float:
    return getattr(measure(Page.from_array(img), orientation=False), family)


# (degradation function, family it should raise, seed of its random details, three severities); blur is
# probed low because a 900-px page's text is small: even mild blur is already a lot for it.
MILD, MEDIUM, STRONG = 0.2, 0.55, 0.95
CASES = [
    (degrade.defocus, "blur", 0, (0.0, 0.1, 0.4)),
    (degrade.motion_blur, "blur", 0, (0.0, 0.05, 0.3)),
    (degrade.shadow, "shadow", 0, (MILD, MEDIUM, STRONG)),
    (degrade.low_contrast, "appearance", 0, (MILD, MEDIUM, STRONG)),
    (degrade.color_cast, "appearance", 0, (MILD, MEDIUM, STRONG)),
    (degrade.stain, "appearance", 3, (MILD, MEDIUM, STRONG)),
    (degrade.moire, "moire", 0, (0.05, 0.3, STRONG)),
    (degrade.perspective, "warp", 0, (0.0, 0.3, 0.75)),
    (degrade.curl, "warp", 0, (MILD, MEDIUM, STRONG)),
]


@pytest.mark.parametrize("fn,family,seed,levels", CASES, ids=[f"{c[0].__name__}" for c in CASES])
def test_signal_rises_with_severity(clean, fn, family, seed, levels):
    levels = [_severity(fn(clean, np.random.default_rng(seed), s), family) for s in levels]
    assert levels[0] <= levels[1] + 0.02 and levels[1] <= levels[2] + 0.02, levels
    assert levels[2] > levels[0], levels
    assert levels[2] > Thresholds().of(family), f"{fn.__name__} at its strongest not diagnosed: {levels}"
    assert _severity(clean, family) < Thresholds().of(family)


def test_clean_render_has_nothing_to_fix(clean):
    signals = measure(Page.from_array(clean))
    assert diagnose(Page.from_array(clean)) == [], signals.severities
    assert signals.rotation is None
    assert all(0.0 <= v <= 1.0 for v in signals.severities.values())


def test_raw_measurements_explain_the_severity(clean):
    blurred = degrade.defocus(clean, np.random.default_rng(0), 0.9)
    sharp, soft = measure(Page.from_array(clean)), measure(Page.from_array(blurred))
    # the edges of the defocused page are several pixels wider, at the same text size
    assert soft.raw["edge_width"] > sharp.raw["edge_width"] + 2.0
    assert soft.raw["text_height"] == pytest.approx(sharp.raw["text_height"], rel=0.25)


@pytest.mark.parametrize("turns,fix", [(1, "rotate_270"), (2, "rotate_180"), (3, "rotate_90")])
def test_rotation_fix_makes_the_page_upright(clean, turns, fix):
    turned = Page.from_array(np.rot90(clean, -turns))  # content turned clockwise by 90 * turns degrees
    assert rotation_fix(turned) == fix
    assert measure(turned).orientation > Thresholds().orientation
    assert "orientation" in diagnose(turned)
    assert rotation_fix(get_tool(fix)(turned)) is None


def test_region_is_measured_on_its_own_pixels(clean):
    w = clean.shape[1]
    mixed = clean.copy()
    mixed[:, : w // 2] = degrade.defocus(clean, np.random.default_rng(0), 0.9)[:, : w // 2]
    page = Page.from_array(mixed)
    left, right = Box(0.0, 0.0, 0.45, 0.6), Box(0.55, 0.0, 1.0, 0.6)
    assert measure(page, right).blur < Thresholds().blur
    assert measure(page, left).blur > Thresholds().blur
    assert "blur" in diagnose(page, left) and "blur" not in diagnose(page, right)
    assert measure(page, left).region == left


@pytest.mark.parametrize("shape", [(1, 1), (2, 3), (40, 10000), (10000, 40), (7, 900), (64, 64)])
def test_tiny_and_odd_pages_do_not_crash(shape):
    rng = np.random.default_rng(0)
    page = Page.from_array(rng.integers(0, 256, shape + (3,), dtype=np.uint8))
    signals = measure(page)
    assert list(signals.severities) == list(FAMILIES)  # every built-in of the shared analysis, in record order
    assert all(0.0 <= v <= 1.0 for v in signals.severities.values())
    assert isinstance(diagnose(page, Box(0.0, 0.0, 0.5, 0.5)), list)


def test_blank_page_is_clean():
    page = Page.from_array(np.full((600, 400, 3), 250, np.uint8))
    assert diagnose(page) == []


def test_near_grey_stripes_measure_without_a_nan():
    # A grey page whose red channel is one level lower on every other row (what a screen capture's chroma
    # subsampling can leave): the opponent channels hold exact zeros beside a large term, and the spectrum's
    # smoothing must not round them below zero (the log of that was NaN, and the colour peak was lost with it).
    import warnings

    from docintent.perception.spectrum import periodic_peaks

    img = np.full((512, 512, 3), 200, np.uint8)
    img[::2, :, 0] = 199
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lum, colour = periodic_peaks(img)
    assert np.isfinite(lum) and np.isfinite(colour)
    assert colour > 1.0  # the stripes are a strong colour pattern, and are measured as one


def test_real_photo_with_uneven_light():
    skimage_data = need_module("skimage.data", "the real photographed page skimage ships")
    page = Page.from_array(skimage_data.page())
    found = diagnose(page)
    assert "shadow" in found or "appearance" in found, measure(page).severities
    assert "moire" not in found and "warp" not in found, measure(page).severities


def test_custom_thresholds_change_the_diagnosis(clean):
    shaded = Page.from_array(degrade.shadow(clean, np.random.default_rng(0), 0.5))
    assert "shadow" in diagnose(shaded)
    assert "shadow" not in diagnose(shaded, thresholds=Thresholds(shadow=1.0))


def test_diagnose_command_names_the_degradation(tmp_path, clean, capsys):
    from PIL import Image

    from docintent.cli import main

    path = tmp_path / "shaded.png"
    Image.fromarray(degrade.shadow(clean, np.random.default_rng(0), 0.8)).save(path)
    assert main(["diagnose", str(path)]) == 0
    out = capsys.readouterr().out
    assert "diagnosis: shadow" in out
    assert main(["diagnose", str(path), "--json", "--region", "0,0,0.5,0.5"]) == 0
    data = __import__("json").loads(capsys.readouterr().out)
    assert set(data["severities"]) == set(names()) and "shadow_falloff" in data["raw"]


def test_signals_are_read_only_and_survive_pickling(clean):
    import pickle

    signals = measure(Page.from_array(clean), orientation=False)
    with pytest.raises(TypeError, match="read-only"):
        signals.raw["blur_relative"] = 0.0
    with pytest.raises(TypeError, match="read-only"):
        signals.severities["blur"] = 1.0
    copy = pickle.loads(pickle.dumps(signals))
    assert copy.severities == signals.severities and dict(copy.raw) == dict(signals.raw)
    assert copy.blur == signals.blur == signals.severities["blur"] and copy == signals


def _at_offset(values: np.ndarray, offset: int) -> np.ndarray:
    """``values`` copied into memory that starts ``offset`` bytes past a 64-byte boundary."""
    buf = np.empty(values.nbytes + 128, np.uint8)
    start = (-buf.ctypes.data) % 64 + offset
    out = buf[start : start + values.nbytes].view(values.dtype).reshape(values.shape)
    out[...] = values
    return out


def test_an_edges_gradient_is_the_same_wherever_the_page_lies_in_memory():
    # An edge of a page's grey levels gives gradients such as (1.75, 0) and (0.875, -0.125). OpenCV's vectorised
    # magnitude read 1.7500001 for the first, its scalar path 1.75, and which one ran followed the arrays' memory
    # alignment: the same capture measured 1,243 or 1,244 edges, and another blur, in another process.
    gx = np.tile(np.float32([1.75, 0.875, -0.125, 3.5, 0.0]), (9, 41))
    gy = np.tile(np.float32([0.0, -0.125, 0.875, 0.0, 2.25]), (9, 41))
    exact = np.sqrt(gx.astype(np.float64) ** 2 + gy.astype(np.float64) ** 2).astype(np.float32)
    for ox, oy in ((0, 0), (4, 0), (0, 12), (16, 36), (28, 60)):
        assert np.array_equal(text.gradient_magnitude(_at_offset(gx, ox), _at_offset(gy, oy)), exact)
