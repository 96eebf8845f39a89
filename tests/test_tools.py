"""Restoration tools: robustness on odd inputs, purity, determinism, and that each one fixes its damage."""

from __future__ import annotations

from pathlib import Path

import cv2
import numpy as np
import pytest

from docintent.cli import main
from docintent.errors import UnknownComponentError
from docintent.page import Page
from docintent.synth import degrade
from docintent.synth.render import render_page, render_text_lines
from docintent.tools import get_tool, list_tools

RESTORATION = ["deshadowing", "appearance", "demoire", "deblurring", "dewarping"]
ALL_TOOLS = RESTORATION + ["rotate_90", "rotate_180", "rotate_270"]


@pytest.fixture(scope="module")
def rendered() -> np.ndarray:
    img, _ = render_page(width=600, seed=3)
    return img


def luminance(pixels: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(pixels, cv2.COLOR_RGB2GRAY).astype(np.float32)


def test_builtin_restoration_tools_are_registered():
    names = {t.name for t in list_tools()}
    assert set(ALL_TOOLS) <= names
    for name in RESTORATION:
        tool = get_tool(name)
        assert len(tool.description) > 80
        assert tool.spec()["function"]["name"] == name


def test_unknown_tool_error_lists_valid_names():
    with pytest.raises(UnknownComponentError) as err:
        get_tool("unblur")
    message = str(err.value)
    assert "unblur" in message
    for name in ALL_TOOLS:
        assert name in message


@pytest.mark.parametrize("name", ALL_TOOLS)
@pytest.mark.parametrize(
    "array",
    [
        np.full((1, 1, 3), 200, np.uint8),
        np.random.default_rng(0).integers(0, 256, (10000, 40, 3), dtype=np.uint8),
        np.random.default_rng(1).integers(0, 256, (40, 10000, 3), dtype=np.uint8),
        np.tile(np.linspace(0, 255, 64, dtype=np.uint8), (48, 1)),  # grayscale
        np.dstack([np.full((50, 70, 3), 30, np.uint8), np.full((50, 70), 128, np.uint8)]),  # RGBA
    ],
    ids=["1x1", "10000x40", "40x10000", "gray", "rgba"],
)
def test_odd_inputs_give_rgb_pages(name, array):
    page = Page.from_array(array)
    out = get_tool(name)(page)
    assert isinstance(out, Page)
    assert out.pixels.dtype == np.uint8 and out.pixels.ndim == 3 and out.pixels.shape[2] == 3
    assert out.ops[-1].startswith(name)


@pytest.mark.parametrize("name", RESTORATION)
def test_input_untouched_and_output_deterministic(name, rendered):
    damaged = degrade.shadow(degrade.defocus(rendered, np.random.default_rng(0), 0.4), np.random.default_rng(1), 0.5)
    page = Page.from_array(damaged)
    before = page.hash
    first = get_tool(name)(page)
    second = get_tool(name)(page)
    assert page.hash == before and np.array_equal(page.pixels, damaged)
    assert first.hash == second.hash
    assert first is not page


def test_rotation_round_trips_are_pixel_identical(rendered):
    page = Page.from_array(rendered[:301, :203])
    quarter = get_tool("rotate_270")(get_tool("rotate_90")(page))
    half = get_tool("rotate_180")(get_tool("rotate_180")(page))
    assert quarter.hash == page.hash and half.hash == page.hash
    assert get_tool("rotate_90")(page).size == (301, 203)


def test_deshadowing_evens_out_the_paper(rendered):
    damaged = degrade.shadow(rendered, np.random.default_rng(2), 0.9)
    out = get_tool("deshadowing")(Page.from_array(damaged)).pixels
    paper = luminance(rendered) > 250  # where the clean page is blank paper
    spread_before = luminance(damaged)[paper].std()
    spread_after = luminance(out)[paper].std()
    assert spread_after < 0.25 * spread_before
    assert luminance(out)[paper].mean() > 240
    # ink stays ink
    assert luminance(out)[luminance(rendered) < 60].mean() < 100


def test_deshadowing_keeps_chart_colours(rendered):
    out = get_tool("deshadowing")(Page.from_array(rendered)).pixels
    coloured = (rendered.max(axis=2).astype(int) - rendered.min(axis=2)) > 80  # the chart's bars
    assert coloured.sum() > 1000
    assert np.abs(out[coloured].astype(int) - rendered[coloured]).mean() < 12


def test_appearance_whitens_paper_and_restores_ink_contrast(rendered):
    rng = np.random.default_rng(4)
    damaged = degrade.color_cast(degrade.low_contrast(rendered, rng, 0.8), rng, 0.8)
    out = get_tool("appearance")(Page.from_array(damaged)).pixels
    paper = luminance(rendered) > 250
    ink = luminance(rendered) < 60

    def cast(img):
        return float(np.abs(img[paper].mean(axis=0) - img[paper].mean()).max())

    def contrast(img):
        return float(luminance(img)[paper].mean() - luminance(img)[ink].mean())

    assert cast(damaged) > 10 and cast(out) < 3
    assert contrast(out) > 1.8 * contrast(damaged)


def spectral_peak_energy(pixels: np.ndarray, clean: np.ndarray) -> float:
    """Energy of the largest high-frequency spectral peaks of the difference from the clean page."""
    diff = luminance(pixels) - luminance(clean)
    mag = np.abs(np.fft.rfft2(diff - diff.mean()))
    fy = np.abs(np.fft.fftfreq(diff.shape[0]))[:, None]
    fx = np.fft.rfftfreq(diff.shape[1])[None, :]
    return float(np.sort(mag[np.hypot(fx, fy) > 0.08])[-20:].sum())


def test_demoire_removes_the_screen_pattern(rendered):
    damaged = degrade.moire(rendered, np.random.default_rng(5), 0.6)
    result = get_tool("demoire")(Page.from_array(damaged))
    assert result.meta["moire_peaks"] > 0
    assert spectral_peak_energy(result.pixels, rendered) < 0.2 * spectral_peak_energy(damaged, rendered)
    # The paper has no stripes left. (Clipping of the pattern on white paper also left it smoothly greyer
    # in places: a brightness change for deshadowing, not a pattern, so only fine texture is measured.)
    paper = cv2.erode((luminance(rendered) > 250).astype(np.uint8), np.ones((9, 9), np.uint8)) > 0

    def texture(img):
        diff = luminance(img) - luminance(rendered)
        return float((diff - cv2.GaussianBlur(diff, (0, 0), 6))[paper].std())

    assert texture(result.pixels) < 0.5 * texture(damaged)
    assert luminance(result.pixels)[luminance(rendered) < 60].mean() < 100


def test_demoire_finds_no_pattern_on_a_clean_page(rendered):
    result = get_tool("demoire")(Page.from_array(rendered))
    assert result.meta["moire_peaks"] == 0
    assert np.abs(luminance(result.pixels) - luminance(rendered)).mean() < 1.0


def edge_sharpness(pixels: np.ndarray) -> float:
    """Mean of the strongest 2 % of gradient magnitudes (the letter edges)."""
    g = luminance(pixels)
    mag = np.hypot(cv2.Sobel(g, cv2.CV_32F, 1, 0), cv2.Sobel(g, cv2.CV_32F, 0, 1))
    return float(np.sort(mag.ravel())[-mag.size // 50 :].mean())


@pytest.mark.parametrize("blur", [degrade.defocus, degrade.motion_blur])
def test_deblurring_sharpens_blurred_text(rendered, blur):
    damaged = blur(rendered, np.random.default_rng(6), 0.5)
    result = get_tool("deblurring")(Page.from_array(damaged))
    assert result.ops[-1] != "deblurring:sharp"
    assert edge_sharpness(result.pixels) > 1.3 * edge_sharpness(damaged)
    error = lambda img: np.abs(luminance(img) - luminance(rendered)).mean()  # noqa: E731
    assert error(result.pixels) < error(damaged)


def test_deblurring_leaves_sharp_text_alone(rendered):
    page = Page.from_array(rendered)
    result = get_tool("deblurring")(page)
    assert result.ops[-1] == "deblurring:sharp"
    assert np.array_equal(result.pixels, page.pixels)  # no ringing added


def row_profile_contrast(pixels: np.ndarray) -> float:
    """Standard deviation of the ink per row: high when text lines are straight and level."""
    ink = (luminance(pixels) < 128).mean(axis=1)
    return float(ink.std())


def test_dewarping_straightens_curled_lines():
    lines = [f"Line {i}: the quick brown fox jumps over the lazy dog {1000 + 37 * i}" for i in range(14)]
    clean = render_text_lines(lines, width=900, font_px=22)
    damaged = degrade.curl(clean, np.random.default_rng(7), 0.8)
    result = get_tool("dewarping")(Page.from_array(damaged))
    assert result.ops[-1] == "dewarping:curve"
    before, after = row_profile_contrast(damaged), row_profile_contrast(result.pixels)
    # At least half of the row-profile contrast the curl took away is back.
    assert after - before > 0.5 * (row_profile_contrast(clean) - before)


def blurred_correlation(a: np.ndarray, b: np.ndarray) -> float:
    la, lb = (cv2.GaussianBlur(luminance(x), (0, 0), 3).ravel() for x in (a, b))
    return float(np.corrcoef(la, lb)[0, 1])


def test_dewarping_rectifies_a_photographed_page(rendered):
    damaged = degrade.perspective(rendered, np.random.default_rng(8), 0.8)
    result = get_tool("dewarping")(Page.from_array(damaged))
    assert result.ops[-1].startswith("dewarping:perspective")
    h, w = rendered.shape[:2]
    # The page fills the result (no table left at the borders) and, scaled to the original size, lines up
    # with the original page.
    border = np.concatenate([result.pixels[:3], result.pixels[-3:]], axis=0)
    assert luminance(border).mean() > 230 and luminance(result.pixels[:, :3]).mean() > 230
    restored = cv2.resize(result.pixels, (w, h), interpolation=cv2.INTER_AREA)
    assert blurred_correlation(restored, rendered) > 0.95
    assert blurred_correlation(cv2.resize(damaged, (w, h)), rendered) < 0.5
    assert 0.75 < (result.height / result.width) / (h / w) < 1.33


def _red_box(pixels: np.ndarray):
    from docintent.page import Box

    red = (pixels[..., 0] > 150) & (pixels[..., 1] < 90) & (pixels[..., 2] < 90)
    ys, xs = np.nonzero(red)
    h, w = red.shape
    return Box(xs.min() / w, ys.min() / h, (xs.max() + 1) / w, (ys.max() + 1) / h)


@pytest.mark.parametrize("damage, seed, iou", [(degrade.curl, 7, 0.9), (degrade.perspective, 8, 0.75)])
def test_dewarping_maps_a_region_to_the_flattened_page_and_back(damage, seed, iou):
    """A red mark on a curled or photographed page: its box on the capture, moved through the recorded
    transform, covers the mark on the flattened page, and the mark's box there, moved back, covers it on the
    capture (what places an answer read on the flattened page on the page as captured)."""
    lines = [f"Line {i}: the quick brown fox jumps over the lazy dog {1000 + 37 * i}" for i in range(14)]
    clean = render_text_lines(lines, width=900, font_px=22).copy()
    h, w = clean.shape[:2]
    clean[int(h * 0.6) : int(h * 0.66), int(w * 0.7) : int(w * 0.78)] = (230, 0, 0)
    before = Page.from_array(damage(clean, np.random.default_rng(seed), 0.8))
    tool = get_tool("dewarping")
    after = tool(before)
    assert after.ops[-1] != "dewarping:none"
    on_before, on_after = _red_box(before.pixels), _red_box(after.pixels)
    assert tool.map_region(on_before, before, after).iou(on_after) > iou
    assert tool.unmap_region(on_after, before, after).iou(on_before) > iou
    # A page the tool did not make has no transform to map through.
    assert tool.map_region(on_before, before, before) is None
    # The transform belongs to the flattened page, not to pages made from it.
    assert "warp" not in after.derive(after.pixels.copy(), "copy").meta


def test_dewarping_leaves_a_flat_page_alone(rendered):
    result = get_tool("dewarping")(Page.from_array(rendered))
    assert result.ops[-1] == "dewarping:none"
    assert np.array_equal(result.pixels, rendered)


def test_restore_command_writes_the_restored_image(tmp_path: Path, rendered, capsys):
    source = tmp_path / "shadowed.png"
    cv2.imwrite(str(source), cv2.cvtColor(degrade.shadow(rendered, np.random.default_rng(9), 0.9), cv2.COLOR_RGB2BGR))
    output = tmp_path / "flat.png"
    assert main(["restore", str(source), "--tool", "deshadowing", "-o", str(output)]) == 0
    assert "deshadowing" in capsys.readouterr().out
    saved = cv2.cvtColor(cv2.imread(str(output)), cv2.COLOR_BGR2RGB)
    assert saved.shape == rendered.shape
    paper = luminance(rendered) > 250
    assert (
        luminance(saved)[paper].std()
        < 0.25 * luminance(cv2.cvtColor(cv2.imread(str(source)), cv2.COLOR_BGR2RGB))[paper].std()
    )


def test_restore_command_rejects_unknown_tool(tmp_path: Path, rendered, capsys):
    source = tmp_path / "page.png"
    cv2.imwrite(str(source), rendered)
    assert main(["restore", str(source), "--tool", "sharpen"]) == 1
    err = capsys.readouterr().err
    assert "unknown tool 'sharpen'" in err and "deshadowing" in err


@pytest.mark.parametrize(
    "name", ["appearance", "deblurring", "demoire", "deshadowing", "dewarping", "rotate_90", "rotate_180", "rotate_270"]
)
def test_every_restoration_tool_places_a_box_of_its_output_back_on_its_input(name):
    """What gives every answer a box on the page as given: a red mark found on a tool's output, moved back through
    the tool, covers the mark on its input - for every built-in restoration tool, turns and flattening included."""
    from docintent.tools import restoration_tools

    assert sorted(restoration_tools()) == sorted(
        ["appearance", "deblurring", "demoire", "deshadowing", "dewarping", "rotate_90", "rotate_180", "rotate_270"]
    )
    lines = [f"Line {i}: the quick brown fox jumps over the lazy dog {1000 + 37 * i}" for i in range(14)]
    clean = render_text_lines(lines, width=900, font_px=22).copy()
    h, w = clean.shape[:2]
    clean[int(h * 0.6) : int(h * 0.66), int(w * 0.7) : int(w * 0.78)] = (230, 0, 0)
    pixels = degrade.perspective(clean, np.random.default_rng(8), 0.8) if name == "dewarping" else clean
    tool = get_tool(name)
    before = Page.from_array(pixels)
    after = tool(before)
    on_before, on_after = _red_box(before.pixels), _red_box(after.pixels)
    back = tool.unmap_region(on_after, before, after)
    assert back is not None and 0.0 <= back.x0 < back.x1 <= 1.0 and 0.0 <= back.y0 < back.y1 <= 1.0
    assert back.iou(on_before) > (0.75 if name == "dewarping" else 0.9)
