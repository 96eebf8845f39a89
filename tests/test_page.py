"""Page immutability, hashing, provenance; Box conversions."""

from __future__ import annotations

import numpy as np
import pytest

from docintent import Box, Page
from docintent.errors import InvalidBoxError


def test_page_is_immutable_and_copies_caller_arrays():
    arr = np.zeros((4, 5, 3), np.uint8)
    page = Page.from_array(arr)
    arr[0, 0, 0] = 99
    assert page.pixels[0, 0, 0] == 0
    with pytest.raises(ValueError):
        page.pixels[0, 0, 0] = 1


def test_hash_depends_on_content_and_shape():
    a = Page.from_array(np.zeros((4, 6), np.uint8))
    assert a.hash == Page.from_array(np.zeros((4, 6), np.uint8)).hash
    assert a.hash != Page.from_array(np.zeros((6, 4), np.uint8)).hash
    assert a.hash != Page.from_array(np.ones((4, 6), np.uint8)).hash


def test_derive_records_provenance_without_touching_the_original():
    page = Page.from_array(np.zeros((4, 6), np.uint8), source="x.png")
    out = page.derive(255 - page.pixels, "invert")
    assert out.ops == ("invert",) and out.source == "x.png" and page.ops == ()
    assert page.pixels.max() == 0 and out.pixels.min() == 255


def test_crop_uses_canonical_box():
    page = Page.from_array(np.arange(100, dtype=np.uint8).reshape(10, 10))
    crop = page.crop(Box(0.2, 0.5, 0.6, 1.0))
    assert crop.size == (4, 5)
    assert crop.pixels[0, 0, 0] == 52


def test_box_conventions_round_trip():
    box = Box.parse([100, 250, 600, 900])  # 0-1000 integers
    assert box.as_tuple() == (0.1, 0.25, 0.6, 0.9)
    assert Box.parse([0.1, 0.25, 0.6, 0.9]) == box
    assert box.to_1000() == (100, 250, 600, 900)
    assert Box.from_pixels(box.to_pixels(2000, 1000), 2000, 1000) == box
    inner = Box(0.5, 0.5, 1.0, 1.0)
    assert inner.within(box).relative_to(box).as_tuple(9) == inner.as_tuple(9)


def test_bad_boxes_are_refused_with_a_reason():
    with pytest.raises(InvalidBoxError, match="degenerate"):
        Box(0.5, 0.1, 0.5, 0.2)
    with pytest.raises(InvalidBoxError, match="outside the page"):
        Box.clamped(1.2, 1.3, 1.5, 1.6)
    with pytest.raises(InvalidBoxError, match="exactly 4 numbers"):
        Box.parse([1, 2, 3])
    assert Box.clamped(-0.2, 0.1, 0.5, 1.4).as_tuple() == (0.0, 0.1, 0.5, 1.0)
