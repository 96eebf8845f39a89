"""Dataset loaders on small files the tests write: WildDoc TSV and folder, synthetic sets, plain JSONL."""

from __future__ import annotations

import base64
import csv
import io
import json
import re
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from docintent.errors import DatasetError
from docintent.evaluation.datasets import load_dataset, parse_wilddoc_index
from docintent.sample import Sample


def _png(value: int) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(np.full((8, 12, 3), value, np.uint8)).save(buf, format="PNG")
    return buf.getvalue()


def _write_tsv(path: Path, rows: list[dict], columns: list[str]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=columns, delimiter="\t")
        writer.writeheader()
        writer.writerows(rows)
    return path


def test_wilddoc_index_gives_task_subset_group_and_capture():
    idx = parse_wilddoc_index("TableVQA-vwtq_syn-3-17")
    assert (idx.task, idx.subset, idx.group, idx.capture) == ("table", "vwtq_syn", "TableVQA-vwtq_syn-17", 3)
    chart = parse_wilddoc_index("ChartQA-test_human-4-314")
    assert (chart.task, chart.subset, chart.group) == ("chart", "ChartQA", "ChartQA-test_human-314")
    with pytest.raises(DatasetError, match="unknown dataset 'InfoVQA'"):
        parse_wilddoc_index("InfoVQA-val-1-2")
    with pytest.raises(DatasetError, match="expected <Dataset>-<subset>-<capture>-<qid>"):
        parse_wilddoc_index("DocVQA-1-2")


def test_wilddoc_tsv_with_base64_images(tmp_path):
    png = base64.b64encode(_png(200)).decode()
    rows = [
        {"index": "DocVQA-val-1-7", "question": "What is the total?", "answer": "['40', '40%']", "image": png},
        {"index": "DocVQA-val-2-7", "question": "What is the total?", "answer": "['40', '40%']", "image": png},
        # VLMEvalKit writes a repeated image as the index of the row that holds it
        {"index": "TableVQA-vtabfact-1-3", "question": "Is it so?", "answer": "1", "image": "DocVQA-val-1-7"},
    ]
    tsv = _write_tsv(tmp_path / "WildDoc.tsv", rows, ["index", "question", "answer", "image"])
    cache = tmp_path / "cache"
    samples = load_dataset(f"wilddoc:{tsv}", cache_dir=cache)

    assert [s.task for s in samples] == ["doc", "doc", "table"]
    first = samples[0]
    assert first.answers == ("40", "40%")
    assert first.group == "DocVQA-val-7" and first.capture == 1 and first.subset == "DocVQA"
    assert samples[2].answers == ("1",) and samples[2].subset == "vtabfact"
    # one image, written once, shared by all three rows and readable as the same pixels
    assert len(list(cache.iterdir())) == 1
    assert {s.image for s in samples} == {first.image}
    assert first.image.endswith(".png")
    assert np.asarray(Image.open(first.image))[0, 0].tolist() == [200, 200, 200]


def test_wilddoc_tsv_reuses_cached_images(tmp_path):
    png = base64.b64encode(_png(10)).decode()
    rows = [{"index": "ChartQA-test_human-1-1", "question": "q", "answer": "[2011, 2012]", "image": png}]
    tsv = _write_tsv(tmp_path / "w.tsv", rows, ["index", "question", "answer", "image"])
    cache = tmp_path / "cache"
    (image,) = {s.image for s in load_dataset(f"wilddoc:{tsv}", cache_dir=cache)}
    Path(image).write_bytes(b"kept")  # a second load must not rewrite an image it already has
    samples = load_dataset(f"wilddoc:{tsv}", cache_dir=cache)
    assert Path(samples[0].image).read_bytes() == b"kept"
    assert samples[0].answers == ("2011", "2012")


def test_wilddoc_tsv_bad_base64_names_the_row(tmp_path):
    """Undecodable base64 is that row's problem (recorded as its error by a run), not the whole dataset's."""
    rows = [{"index": "DocVQA-val-1-1", "question": "q", "answer": "['a']", "image": "!" * 100}]
    tsv = _write_tsv(tmp_path / "bad.tsv", rows, ["index", "question", "answer", "image"])
    (sample,) = load_dataset(f"wilddoc:{tsv}", cache_dir=tmp_path / "c")
    assert re.match(r".*bad\.tsv:2: image is not valid base64", sample.meta["image_error"])


def test_wilddoc_tsv_missing_columns(tmp_path):
    tsv = _write_tsv(tmp_path / "cols.tsv", [{"index": "DocVQA-val-1-1", "image": "x"}], ["index", "image"])
    with pytest.raises(DatasetError, match="missing column"):
        load_dataset(f"wilddoc:{tsv}")


def test_wilddoc_tsv_with_image_paths(tmp_path):
    (tmp_path / "img").mkdir()
    (tmp_path / "img" / "a.png").write_bytes(_png(0))
    rows = [{"index": "TableVQA-fintabnetqa-2-5", "question": "q", "answer": "$1,200", "image_path": "img/a.png"}]
    tsv = _write_tsv(tmp_path / "p.tsv", rows, ["index", "question", "answer", "image_path"])
    (sample,) = load_dataset(f"wilddoc:{tsv}")
    assert sample.image == str(tmp_path / "img" / "a.png")
    assert sample.answers == ("$1,200",)


def test_wilddoc_folder_of_jsonl(tmp_path):
    (tmp_path / "a.png").write_bytes(_png(1))
    rows = [
        {"index": "DocVQA-val-1-9", "question": "q", "answer": ["x", "y"], "image": "a.png"},
        {"index": "TableVQA-vwtq-4-9", "question": "q", "answer": "a|b", "image": "a.png"},
    ]
    (tmp_path / "wilddoc.jsonl").write_text("\n".join(json.dumps(r) for r in rows) + "\n")
    samples = load_dataset(f"wilddoc:{tmp_path}")
    assert samples[0].answers == ("x", "y")
    assert samples[1].answers == ("a|b",) and samples[1].capture == 4
    assert samples[0].image == str(tmp_path / "a.png")


def test_wilddoc_folder_row_with_bad_index(tmp_path):
    (tmp_path / "w.jsonl").write_text(json.dumps({"index": "Foo-1", "question": "q", "answer": "a", "image": "a"}))
    with pytest.raises(DatasetError, match=r"w\.jsonl:1: WildDoc index 'Foo-1'"):
        load_dataset(f"wilddoc:{tmp_path}")


def _sample(i: int, image: str) -> Sample:
    return Sample(
        id=f"s{i}", image=image, question="What is the total?", answers=("42",), task="doc",
        subset="invoice", group=f"g{i // 2}", capture=i % 2 + 1, degradations=("blur",),
    )  # fmt: skip


def test_synth_set_resolves_images_against_its_folder(tmp_path):
    out = tmp_path / "synth"
    (out / "images").mkdir(parents=True)
    samples = [_sample(i, f"images/{i}.png") for i in range(3)]
    (out / "samples.jsonl").write_text("\n".join(json.dumps(s.to_dict()) for s in samples))
    loaded = load_dataset(f"synth:{out}")
    assert [s.id for s in loaded] == ["s0", "s1", "s2"]
    assert loaded[1].image == str(out / "images" / "1.png")
    assert loaded[1].group == "g0" and loaded[1].capture == 2 and loaded[1].degradations == ("blur",)


def test_jsonl_of_samples_and_its_errors(tmp_path):
    path = tmp_path / "set.jsonl"
    path.write_text(json.dumps(_sample(0, "/abs/page.png").to_dict()) + "\n\n")
    (sample,) = load_dataset(f"jsonl:{path}", allow_outside_paths=True)  # an absolute path elsewhere
    assert sample.image == "/abs/page.png" and sample.answers == ("42",)

    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(_sample(0, "a.png").to_dict()) + "\n" + json.dumps({"id": "x", "image": "a"}) + "\n")
    with pytest.raises(DatasetError, match=r"bad\.jsonl:2: row lacks question, answers, task"):
        load_dataset(f"jsonl:{bad}")
    broken = tmp_path / "broken.jsonl"
    broken.write_text("{not json\n")
    with pytest.raises(DatasetError, match=r"broken\.jsonl:1: not valid JSON"):
        load_dataset(f"jsonl:{broken}")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("wilddoc", "expected KIND:PATH"),
        ("coco:/x", "unknown kind 'coco'; valid kinds: synth, wilddoc, jsonl"),
        ("jsonl:/no/such/file.jsonl", "/no/such/file.jsonl: no such file"),
        ("synth:/no/such/dir", "/no/such/dir: no such directory"),
        ("wilddoc:/no/such.tsv", "/no/such.tsv: no such file or directory"),
    ],
)
def test_bad_specs_name_the_problem(spec, message):
    with pytest.raises(DatasetError, match=message.replace(".", r"\.").replace("(", r"\(")):
        load_dataset(spec)


def test_synth_folder_without_index(tmp_path):
    with pytest.raises(DatasetError, match="no samples.jsonl"):
        load_dataset(f"synth:{tmp_path}")
