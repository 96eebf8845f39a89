"""benchmarks/reader_captured.py on a five-page corpus: only the test family is built, with its gold answers
checked on the printed page, four captures a question, the meta the report breaks down by, and a rebuild that
gives identical files; a split that disagrees with the scorer's manifest is refused unless skipped."""

from __future__ import annotations

import filecmp
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from needs import need_module

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"
SCRIPT = BENCHMARKS / "reader_captured.py"

pytestmark = pytest.mark.slow


def _build(corpus: Path, out: Path, *extra: str) -> subprocess.CompletedProcess:
    cmd = [sys.executable, str(SCRIPT), "build", "--corpus", str(corpus), "--out", str(out), "--per-family", "1"]
    return subprocess.run([*cmd, *extra], capture_output=True, text=True, timeout=600)


def test_builds_the_test_family_deterministically(tmp_path):
    need_module("faker", "the reader corpus draws its values with Faker")
    if not (shutil.which("chromium") or shutil.which("chromium-browser")):
        pytest.skip("chromium is not installed")
    sys.path.insert(0, str(BENCHMARKS))
    try:
        from reader_corpus import batch
    finally:
        sys.path.remove(str(BENCHMARKS))
    records, _ = batch((0, 0, [f"receipt-t{i}" for i in range(1, 6)], None, 0))
    corpus = tmp_path / "corpus" / "docs.jsonl"
    corpus.parent.mkdir()
    corpus.write_text("".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in records))

    scorer = BENCHMARKS.parent / "src" / "docintent" / "data" / "reader" / "scorer.manifest.json"
    has_split = scorer.is_file() and "split" in json.loads(scorer.read_text())
    if has_split:  # five receipts cannot have the committed scorer's split of every kind
        refused = _build(corpus, tmp_path / "a")
        assert refused.returncode != 0 and "disagree" in refused.stderr and len(refused.stderr.splitlines()) == 1

    for out in ("a", "b"):
        done = _build(corpus, tmp_path / out, "--skip-split-check")
        assert done.returncode == 0, done.stderr[-2000:]
    a, b = tmp_path / "a", tmp_path / "b"
    names = sorted(p.relative_to(a).as_posix() for p in a.rglob("*") if p.is_file())
    assert names == sorted(p.relative_to(b).as_posix() for p in b.rglob("*") if p.is_file())
    assert all(filecmp.cmp(a / n, b / n, shallow=False) for n in names)

    manifest = json.loads((a / "manifest.json").read_text())
    assert manifest["pages"] == 1 and manifest["samples"] == 4 * manifest["questions"]
    assert 1 <= manifest["questions"] <= 3 and ("SKIPPED" in manifest["split_check"]["status"]) == has_split
    rows = [json.loads(line) for line in (a / "samples.jsonl").read_text().splitlines()]
    (family,) = manifest["layout_families"]
    assert family in manifest["test_families"]
    for row in rows:
        meta = row["meta"]
        assert row["subset"] == meta["kind"] == "receipt" and meta["layout_family"] == family
        assert meta["family"] != "unanswerable" and row["answers"]
        assert meta["condition"] and (a / meta["clean_image"]).is_file() and (a / row["image"]).is_file()
    assert sorted(r["capture"] for r in rows if r["group"] == rows[0]["group"]) == [1, 2, 3, 4]
