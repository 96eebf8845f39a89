"""Property-based tests: hostile input never escapes as anything but a named DocIntentError.

The number of examples comes from the hypothesis profile (``tests/conftest.py``): ``ci`` (default, bounded
so the suite stays fast) or ``long`` (``HYPOTHESIS_PROFILE=long pytest tests/test_properties.py``).
"""

from __future__ import annotations

import argparse
import io
import json
import math

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


@given(answer=_texts.filter(lambda s: s.strip() != "" and not s.strip().startswith("[")),
       number=st.from_regex(r"-?[1-9]\d{0,6}(\.\d{1,3})?%?", fullmatch=True))
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
