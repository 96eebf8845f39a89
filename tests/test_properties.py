"""Property-based tests: hostile input never escapes as anything but a named DocIntentError.

The number of examples comes from the hypothesis profile (``tests/conftest.py``): ``ci`` (default, bounded
so the suite stays fast) or ``long`` (``HYPOTHESIS_PROFILE=long pytest tests/test_properties.py``).
"""

from __future__ import annotations

import argparse
import io
import json
import math
import time

import numpy as np
import pytest

pytest.importorskip("hypothesis", reason="the property tests need hypothesis (pip install 'docintent[test]')")
from hypothesis import HealthCheck, assume, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from docintent.errors import ConfigError, DocIntentError, InputError  # noqa: E402

# Small decode limit: a mutated header may claim a huge image; decoding it must be refused, not attempted.
MAX_PIXELS = 4_000_000


def _image_bytes(fmt: str) -> bytes:
    from PIL import Image

    rng = np.random.default_rng(0)
    img = Image.fromarray(rng.integers(0, 255, (24, 32, 3), dtype=np.uint8))
    buf = io.BytesIO()
    img.save(buf, fmt)
    return buf.getvalue()


SEEDS = {fmt: _image_bytes(fmt) for fmt in ("PNG", "JPEG", "TIFF", "PDF")}
SUFFIX = {"PNG": ".png", "JPEG": ".jpg", "TIFF": ".tif", "PDF": ".pdf"}


def _load(tmp_path_factory, data: bytes, suffix: str):
    """Load bytes through the public file loader (PDF or image by content); return the Page or the error."""
    from docintent.io import load_page

    path = tmp_path_factory.mktemp("hyp") / f"input{suffix}"
    path.write_bytes(data)
    try:
        page = load_page(path, max_pixels=MAX_PIXELS, dpi=36)
    except InputError as err:
        assert str(path) in str(err), "the error must name the input"
        return err
    assert page.pixels.dtype == np.uint8 and page.pixels.ndim == 3 and page.pixels.shape[2] == 3
    assert page.width * page.height <= MAX_PIXELS
    return page


fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@fixture_ok
@given(data=st.binary(max_size=2048), suffix=st.sampled_from([".png", ".jpg", ".tif", ".pdf", ".bin", ""]))
def test_random_bytes_load_or_refuse(tmp_path_factory, data, suffix):
    _load(tmp_path_factory, data, suffix)


@fixture_ok
@given(fmt=st.sampled_from(sorted(SEEDS)), cut=st.floats(0.0, 1.0, exclude_max=True))
def test_truncated_files_load_or_refuse(tmp_path_factory, fmt, cut):
    data = SEEDS[fmt][: int(len(SEEDS[fmt]) * cut)]
    _load(tmp_path_factory, data, SUFFIX[fmt])


@fixture_ok
@given(
    fmt=st.sampled_from(sorted(SEEDS)),
    edits=st.lists(st.tuples(st.integers(0, 200), st.integers(0, 255)), min_size=1, max_size=6),
)
def test_header_mutations_load_or_refuse(tmp_path_factory, fmt, edits):
    data = bytearray(SEEDS[fmt])
    for position, value in edits:
        data[position % len(data)] = value
    _load(tmp_path_factory, bytes(data), SUFFIX[fmt])


@fixture_ok
@given(fmt=st.sampled_from(["PNG", "TIFF"]), width=st.integers(1, 70_000), height=st.integers(1, 70_000))
def test_claimed_size_over_the_limit_is_refused_before_decoding(tmp_path_factory, fmt, width, height):
    """A header claiming more pixels than the limit is refused from the header alone."""
    import struct

    data = bytearray(SEEDS[fmt])
    if fmt == "PNG":  # IHDR width/height at bytes 16..24 (the CRC then fails, which must not matter first)
        data[16:24] = struct.pack(">II", width, height)
    else:  # Pillow's little-endian TIFF: find the ImageWidth (256) / ImageLength (257) entries
        offset = struct.unpack("<I", data[4:8])[0]
        count = struct.unpack("<H", data[offset : offset + 2])[0]
        for i in range(count):
            entry = offset + 2 + 12 * i
            tag, kind = struct.unpack("<HH", data[entry : entry + 4])
            if tag in (256, 257):
                value = width if tag == 256 else height
                packed = struct.pack("<H", min(value, 65535)) + b"\0\0" if kind == 3 else struct.pack("<I", value)
                data[entry + 8 : entry + 12] = packed
    result = _load(tmp_path_factory, bytes(data), SUFFIX[fmt])
    if not isinstance(result, Exception):
        assert result.width * result.height <= MAX_PIXELS


# --- WildDoc scorer ---------------------------------------------------------------------------------

_texts = st.one_of(
    st.text(max_size=40),
    st.from_regex(r"-?\d{1,7}([.,]\d{1,4})?%?", fullmatch=True),
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers().map(str),
)
_list_texts = st.lists(_texts, max_size=4).map(repr) | st.lists(_texts, max_size=4).map(
    lambda xs: "[" + ", ".join(xs) + "]"
)
_answers = st.one_of(_texts, _list_texts, st.lists(_texts, max_size=4), st.lists(_list_texts, max_size=3))


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    task=st.sampled_from(["doc", "chart", "table"]),
    subset=st.sampled_from(["DocVQA", "ChartQA", "fintabnetqa", "vtabfact", "vwtq", "vwtq_syn", "other"]),
    prediction=st.one_of(st.none(), _texts, _list_texts, st.floats(allow_nan=True)),
    answers=_answers,
)
def test_wilddoc_score_is_a_number_in_unit_interval(task, subset, prediction, answers):
    from docintent.evaluation.metrics import row_correct, score_row

    score = score_row(task, subset, prediction, answers)
    assert isinstance(score, float) and not math.isnan(score)
    assert 0.0 <= score <= 1.0
    assert isinstance(row_correct(task, score), bool)


@given(
    answer=_texts.filter(lambda s: s.strip() != "" and not s.strip().startswith("[")),
    number=st.from_regex(r"-?[1-9]\d{0,6}(\.\d{1,3})?%?", fullmatch=True),
)
def test_a_prediction_equal_to_its_gold_answer_scores_one(answer, number):
    from docintent.evaluation.metrics import score_row

    assert score_row("doc", "DocVQA", answer, [answer]) == 1.0
    assert score_row("chart", "ChartQA", number, [number]) == 1.0


# --- tool-call parser ---------------------------------------------------------------------------

_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=12),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=12,
)
_jsonish = st.one_of(
    st.text(alphabet=st.sampled_from('{}[]":,<>/ `\\ntoolcalnme'), max_size=120),
    _json_values.map(json.dumps),
    st.tuples(st.text(max_size=20), _json_values.map(json.dumps), st.text(max_size=20)).map(
        lambda t: f"{t[0]}<tool_call>{t[1]}</tool_call>{t[2]}"
    ),
    st.tuples(_json_values.map(json.dumps), st.integers(0, 60)).map(lambda t: "```json\n" + t[0][: t[1]]),
    st.builds(
        lambda name, args: json.dumps({"name": name, "arguments": args}),
        st.one_of(st.text(max_size=10), st.integers(), st.none()),
        st.one_of(_json_values, _json_values.map(json.dumps)),
    ),
)


@given(text=_jsonish)
def test_tool_call_parser_never_raises(text):
    from docintent.brains.toolcalls import decode_arguments, parse_json_object, parse_text_calls

    calls = parse_text_calls(text)
    for call in calls:
        assert isinstance(call.name, str) and call.name
        assert call.arguments is None or isinstance(call.arguments, dict)
        assert (call.arguments is None) == (call.error is not None)
    obj = parse_json_object(text)
    assert obj is None or isinstance(obj, dict)
    arguments, error = decode_arguments(text)
    assert (arguments is None) != (error is None)


# --- region and page parsing --------------------------------------------------------------------

_number_text = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True).map(repr),
    st.integers(-5, 5000).map(str),
    st.sampled_from(["", " ", "nan", "inf", "-0", "1e3", "0x10", "½", "1,5"]),
)


@given(parts=st.lists(_number_text, min_size=0, max_size=6), separator=st.sampled_from([",", " ", ";"]))
def test_region_argument_is_a_valid_box_or_refused(parts, separator):
    from docintent.commands._common import region_arg

    text = separator.join(parts)
    try:
        box = region_arg(text)
    except argparse.ArgumentTypeError as err:
        assert str(err)
        return
    values = box.as_tuple()
    assert all(0.0 <= v <= 1.0 for v in values)
    assert box.x0 < box.x1 and box.y0 < box.y1


@given(
    spec=st.one_of(
        st.none(),
        st.text(alphabet=st.sampled_from("0123456789-, x"), max_size=20),
        st.lists(
            st.tuples(st.integers(-3, 10**12), st.integers(-3, 10**12)).map(lambda t: f"{t[0]}-{t[1]}"), max_size=3
        ).map(",".join),
    ),
    count=st.integers(1, 500),
)
def test_page_selection_is_in_range_or_refused(spec, count):
    from docintent.retrieval.evidence import parse_pages

    try:
        numbers = parse_pages(spec, count)
    except ConfigError as err:
        assert "--pages" in str(err)
        return
    assert numbers and len(numbers) == len(set(numbers))
    assert all(1 <= n <= count for n in numbers)


@given(text=st.text(max_size=12))
def test_page_argument_is_a_page_number_or_refused(text):
    from docintent.commands._common import page_arg

    try:
        value = page_arg(text)
    except argparse.ArgumentTypeError:
        return
    assume(value is not None)
    assert isinstance(value, int) and value >= 0


def test_every_refusal_is_a_docintent_error():
    """The properties above accept only InputError from the loaders; check that is a DocIntentError."""
    assert issubclass(InputError, DocIntentError)
    with pytest.raises(InputError):
        from docintent.io import load_bytes

        load_bytes(b"not an image at all", name="x.png")


# --- dataset rows: a bad row is that row's error, never the end of the run --------------------------------------

_surrogate = st.integers(0xD800, 0xDFFF).map(chr)
_row_text = st.one_of(st.text(max_size=12), st.lists(st.one_of(st.characters(), _surrogate), max_size=6).map("".join))
_row_value = st.one_of(
    _row_text,
    st.integers(-3, 3),
    st.none(),
    st.booleans(),
    st.lists(_row_text, max_size=3),
    st.dictionaries(_row_text, _row_text, max_size=2),
)
_ROW_KEYS = ("id", "image", "question", "answers", "task", "subset", "group", "capture", "degradations", "meta")


@st.composite
def _dataset_lines(draw) -> bytes:
    """JSONL bytes: rows of valid samples, rows with hostile values (lone surrogates, wrong types, missing
    fields), rows encoded as invalid UTF-8, junk lines, an optional byte-order mark."""
    lines = []
    for index in range(draw(st.integers(1, 4))):
        row: dict = {
            "id": f"s{index}",
            "image": "page.png",
            "question": "What is the total?",
            "answers": ["42"],
            "task": "doc",
        }
        for key in draw(st.lists(st.sampled_from(_ROW_KEYS), max_size=3, unique=True)):
            if draw(st.booleans()):
                row[key] = draw(_row_value)
            else:
                row.pop(key, None)
        text = json.dumps(row, ensure_ascii=draw(st.booleans()))
        encoded = text.encode("utf-8", "surrogatepass")  # a surrogate becomes bytes that are not UTF-8
        if draw(st.integers(0, 9)) == 0:
            encoded = draw(st.binary(max_size=30))
        lines.append(encoded)
    bom = b"\xef\xbb\xbf" if draw(st.booleans()) else b""
    return bom + b"\n".join(lines) + b"\n"


@fixture_ok
@given(data=_dataset_lines())
def test_a_dataset_loads_or_is_refused_and_its_bad_rows_are_error_rows(tmp_path_factory, data):
    from docintent.errors import DatasetError
    from docintent.evaluation.datasets import load_dataset
    from docintent.evaluation.runner import BrainFactory, read_results, run_benchmark

    folder = tmp_path_factory.mktemp("rows")
    (folder / "page.png").write_bytes(SEEDS["PNG"])
    (folder / "samples.jsonl").write_bytes(data)
    try:
        samples = load_dataset(f"jsonl:{folder / 'samples.jsonl'}")
    except DatasetError as err:
        assert "samples.jsonl" in str(err) or "sample id" in str(err)  # names the file (or the repeated id)
        return
    brain = BrainFactory("scripted", {"final": "42"})
    try:
        first = run_benchmark(samples, ["none"], brain, folder / "run", progress=False)
    except DatasetError as err:  # two rows with one id: refused before any row is written
        assert "occurs more than once" in str(err)
        return
    rows = read_results(folder / "run")
    assert first.rows == len(samples) == len(rows)
    (folder / "run" / "results.jsonl").read_bytes().decode("utf-8")  # valid UTF-8, whatever the dataset held
    for sample, row in zip(samples, rows):
        if sample.meta.get("row_error") or sample.meta.get("image_error"):
            assert row["error"]
    again = run_benchmark(
        load_dataset(f"jsonl:{folder / 'samples.jsonl'}"), ["none"], brain, folder / "run", progress=False
    )
    assert again.new_rows == 0 and again.rows == len(samples)  # the resume neither crashes nor repeats


# --- index folders: a damaged file is a named error, never another exception -------------------------------------


@pytest.fixture(scope="module")
def built_index(tmp_path_factory):
    """A small index (text-layer PDF pages and one image) with its BM25 files written."""
    import pypdfium2 as pdfium

    from docintent.retrieval import build_index

    folder = tmp_path_factory.mktemp("index-inputs")
    pdf = pdfium.PdfDocument.new()
    for _ in range(3):
        pdf.new_page(200, 200)
    pdf.save(str(folder / "doc.pdf"))
    (folder / "page.png").write_bytes(SEEDS["PNG"])

    class Ocr:
        name = "fixed"

        def read(self, page, region=None):
            return type("R", (), {"text": "invoice total warranty"})()

    out = tmp_path_factory.mktemp("index") / "idx"
    build_index([folder], out, text="auto", ocr=Ocr(), progress=False)
    return out


_json_junk = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(10**12), 10**12), st.floats(), st.text(max_size=8)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)


@fixture_ok
@given(
    target=st.sampled_from(["bm25_vocab.json", "bm25.npz", "index.sqlite"]),
    how=st.sampled_from(["bytes", "truncate", "json-field", "sql"]),
    edits=st.lists(st.tuples(st.integers(0, 1 << 16), st.integers(0, 255)), min_size=1, max_size=8),
    junk=_json_junk,
    field=st.sampled_from(["vocab", "k1", "b", "idf", "stemming", "tokenizer"]),
    sql=st.sampled_from(
        [
            "UPDATE pages SET page_no = {v}",
            "UPDATE pages SET handle = '{s}' WHERE rowid = 1",
            "UPDATE meta SET value = '{s}'",
            "UPDATE documents SET path = '{s}'",
            "UPDATE pages SET text = NULL",
            "DELETE FROM documents",
            "UPDATE documents SET n_pages = {v}",
            "UPDATE pages SET width = '{s}'",
            "DROP TABLE meta",
        ]
    ),
)
def test_a_damaged_index_folder_is_a_named_error(tmp_path_factory, built_index, target, how, edits, junk, field, sql):
    import shutil
    import sqlite3

    from docintent.retrieval import PageIndex, get_retriever

    folder = tmp_path_factory.mktemp("damaged") / "idx"
    shutil.copytree(built_index, folder)
    path = folder / target
    data = bytearray(path.read_bytes())
    if how == "bytes":
        for position, value in edits:
            data[position % len(data)] = value
        path.write_bytes(bytes(data))
    elif how == "truncate":
        path.write_bytes(bytes(data[: edits[0][0] % len(data)]))
    elif how == "json-field":
        meta = json.loads((folder / "bm25_vocab.json").read_text())
        meta[field] = junk
        (folder / "bm25_vocab.json").write_text(json.dumps(meta))
    else:
        value = edits[0][0] - 100
        text = "".join(chr(32 + v % 90) for _, v in edits).replace("'", "")
        with sqlite3.connect(folder / "index.sqlite") as con:
            con.execute(sql.format(v=value, s=text))
    try:
        index = PageIndex.open(folder)
        try:
            for method in ("bm25",):
                for hit in get_retriever(index, method).search("invoice warranty", 3):
                    record = index.record(hit.handle)
                    assert record.page_no >= 0
        finally:
            index.close()
    except DocIntentError as err:
        assert str(err)


# --- HTTP headers, form fields and paths: never a 500 ---------------------------------------------------------

_header_bytes = st.binary(max_size=40).filter(lambda b: b"\r" not in b and b"\n" not in b and b"\0" not in b)


@pytest.fixture(scope="module")
def service():
    pytest.importorskip("fastapi", reason="the service needs the serve extra")
    from fastapi.testclient import TestClient

    from docintent.brains import Answer, FunctionBrain
    from docintent.server import ServeConfig, create_app

    def brain():
        return FunctionBrain(decide=lambda state: Answer("42", 0.9, ""), answer=lambda state: Answer("42", 0.9, ""))

    config = ServeConfig(brains={"scripted": brain}, default_brain="scripted", warm_up=False, token="a-long-token")
    with TestClient(create_app(config)) as client:
        auth = {"Authorization": "Bearer a-long-token"}
        run_id = client.post(
            "/v1/ask",
            headers=auth,
            files={"file": ("p.png", SEEDS["PNG"])},
            data={"question": "What is the total?", "strategy": "none"},
        ).json()["id"]
        deadline = time.monotonic() + 30
        while client.get(f"/v1/runs/{run_id}", headers=auth).json()["status"] not in ("done", "failed"):
            assert time.monotonic() < deadline
            time.sleep(0.02)
        yield client, run_id


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    last=_header_bytes,
    authorization=_header_bytes,
    extra=_header_bytes,
    path=st.sampled_from(
        [
            "/v1/runs/{id}/events",
            "/v1/runs/{id}",
            "/v1/health",
            "/v1/tools",
            "/v1/config",
            "/v1/runs/{id}/pages/{x}.jpg",
            "/v1/runs/{x}",
        ]
    ),
    x=st.text(max_size=30),
)
def test_any_header_value_gets_an_answer_below_500(service, last, authorization, extra, path, x):
    import urllib.parse

    client, run_id = service
    target = path.format(id=run_id, x=urllib.parse.quote(x, safe=""))
    for token in (b"Bearer a-long-token", authorization):
        headers = {"Authorization": token, "Last-Event-ID": last, "X-Anything": extra}
        response = client.get(target, headers=headers)
        assert response.status_code < 500, (target, headers, response.text[:200])
        if response.status_code == 400:
            assert "Last-Event-ID" in response.json()["error"]
        if target.endswith("/events") and response.status_code == 200 and token == b"Bearer a-long-token":
            assert last.strip().isdigit() or not last.strip()


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(
    page=st.text(max_size=12),
    max_rounds=st.text(max_size=12),
    question=st.text(max_size=30),
    task=st.text(max_size=8),
    strategy=st.sampled_from(["none", "docintent", "", "nosuch"]),
)
def test_any_form_value_gets_an_answer_below_500(service, page, max_rounds, question, task, strategy):
    client, _ = service
    response = client.post(
        "/v1/ask",
        headers={"Authorization": "Bearer a-long-token"},
        files={"file": ("p.png", SEEDS["PNG"])},
        data={"question": question, "page": page, "max_rounds": max_rounds, "task": task, "strategy": strategy},
    )
    assert response.status_code < 500, response.text[:200]
    assert response.status_code in (202, 400, 413, 415, 503), response.status_code
