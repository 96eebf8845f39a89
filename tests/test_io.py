"""Loading images and PDFs: formats, conversions, and one specific error per kind of bad input."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest
from PIL import Image

from docintent import Page
from docintent.errors import (
    CorruptImageError,
    DecompressionBombError,
    DocIntentError,
    EmptyFileError,
    EncryptedPdfError,
    FileMissingError,
    PdfPageOutOfRangeError,
    UnsupportedFormatError,
)
from docintent.io import load_page, load_pdf, pdf_page_count, resize_longest, to_data_url
from needs import need_module


def _rgb(w=40, h=30):
    rng = np.random.default_rng(0)
    return rng.integers(0, 255, (h, w, 3), dtype=np.uint8)


@pytest.mark.parametrize(
    "fmt,suffix",
    [("PNG", ".png"), ("JPEG", ".jpg"), ("TIFF", ".tif"), ("WEBP", ".webp"), ("BMP", ".bmp"), ("GIF", ".gif")],
)
def test_loads_every_raster_format_as_rgb_uint8(tmp_path, fmt, suffix):
    path = tmp_path / f"img{suffix}"
    Image.fromarray(_rgb()).save(path, format=fmt)
    page = load_page(path)
    assert page.size == (40, 30)
    assert page.pixels.dtype == np.uint8 and page.pixels.shape == (30, 40, 3)
    assert page.source == str(path)


def test_lossless_formats_keep_pixels(tmp_path):
    arr = _rgb()
    Image.fromarray(arr).save(tmp_path / "a.png")
    assert np.array_equal(load_page(tmp_path / "a.png").pixels, arr)


def test_gif_uses_first_frame(tmp_path):
    frames = [Image.new("RGB", (8, 8), c) for c in ("red", "blue")]
    frames[0].save(tmp_path / "anim.gif", save_all=True, append_images=frames[1:])
    page = load_page(tmp_path / "anim.gif")
    r, g, b = page.pixels[4, 4]
    assert r > 200 and b < 50


def test_exif_orientation_is_applied(tmp_path):
    img = Image.fromarray(_rgb(40, 20))
    exif = Image.Exif()
    exif[0x0112] = 6  # "rotate 90 CW to display"
    img.save(tmp_path / "rot.jpg", exif=exif)
    assert load_page(tmp_path / "rot.jpg").size == (20, 40)


@pytest.mark.parametrize(
    "mode,make",
    [
        ("L", lambda: Image.fromarray(np.full((10, 12), 128, np.uint8))),
        ("P", lambda: Image.fromarray(_rgb(12, 10)).convert("P")),
        ("RGBA", lambda: Image.fromarray(np.dstack([_rgb(12, 10), np.full((10, 12), 255, np.uint8)]))),
        ("LA", lambda: Image.fromarray(np.full((10, 12), 128, np.uint8)).convert("LA")),
        ("I;16", lambda: Image.fromarray(np.full((10, 12), 65535, np.uint16))),
    ],
)
def test_converts_modes_to_rgb(tmp_path, mode, make):
    img = make()
    path = tmp_path / f"m_{mode.replace(';', '')}.png"
    img.save(path)
    page = load_page(path)
    assert page.pixels.shape == (10, 12, 3) and page.pixels.dtype == np.uint8
    if mode == "I;16":
        assert page.pixels.min() == 255  # full-scale 16-bit white stays white


def test_transparent_pixels_become_white_paper(tmp_path):
    rgba = np.zeros((5, 5, 4), np.uint8)  # fully transparent black
    Image.fromarray(rgba).save(tmp_path / "t.png")
    assert load_page(tmp_path / "t.png").pixels.min() == 255


def test_missing_file(tmp_path):
    with pytest.raises(FileMissingError, match="nope.png: no such file"):
        load_page(tmp_path / "nope.png")


def test_directory_is_not_a_file(tmp_path):
    with pytest.raises(FileMissingError, match="not a regular file"):
        load_page(tmp_path)


def test_empty_file(tmp_path):
    (tmp_path / "empty.jpg").write_bytes(b"")
    with pytest.raises(EmptyFileError, match=r"empty.jpg: the file is empty"):
        load_page(tmp_path / "empty.jpg")


def test_truncated_image(tmp_path):
    buf = io.BytesIO()
    Image.fromarray(_rgb(200, 200)).save(buf, format="PNG")
    (tmp_path / "cut.png").write_bytes(buf.getvalue()[: len(buf.getvalue()) // 2])
    with pytest.raises(CorruptImageError, match="cut.png"):
        load_page(tmp_path / "cut.png")


def test_valid_signature_with_damaged_header_is_corrupt(tmp_path):
    (tmp_path / "sig.png").write_bytes(b"\x89PNG\r\n\x1a\n" + b"\x00\x00\x00\rIHDR" + b"\x01" * 5)
    with pytest.raises(CorruptImageError, match="sig.png: cannot decode image"):
        load_page(tmp_path / "sig.png")


def test_garbage_with_image_suffix_is_corrupt(tmp_path):
    (tmp_path / "bad.jpg").write_bytes(b"\x00\x01 not a jpeg at all" * 10)
    with pytest.raises(CorruptImageError, match="bad.jpg: not a readable jpg image"):
        load_page(tmp_path / "bad.jpg")


def test_unsupported_format(tmp_path):
    (tmp_path / "notes.txt").write_text("hello, this is text")
    with pytest.raises(UnsupportedFormatError, match="notes.txt: unsupported format"):
        load_page(tmp_path / "notes.txt")


def test_decompression_bomb_limit(tmp_path):
    Image.new("RGB", (300, 300), "white").save(tmp_path / "big.png")
    with pytest.raises(DecompressionBombError, match=r"300x300 = 90,000 pixels exceeds the limit of 10,000"):
        load_page(tmp_path / "big.png", max_pixels=10_000)


def test_decompression_bomb_limit_from_settings(tmp_path, monkeypatch):
    from docintent.settings import get_settings

    Image.new("RGB", (300, 300), "white").save(tmp_path / "big.png")
    monkeypatch.setenv("DOCINTENT_MAX_PIXELS", "1000")
    get_settings.cache_clear()
    try:
        with pytest.raises(DecompressionBombError, match="DOCINTENT_MAX_PIXELS"):
            load_page(tmp_path / "big.png")
    finally:
        monkeypatch.delenv("DOCINTENT_MAX_PIXELS")
        get_settings.cache_clear()


def _make_pdf(path, pages=2):
    imgs = [Image.new("RGB", (200, 100), c) for c in ("white", "black", "red")[:pages]]
    imgs[0].save(path, save_all=True, append_images=imgs[1:], resolution=72)


def test_pdf_pages_render_at_dpi(tmp_path):
    _make_pdf(tmp_path / "doc.pdf")
    assert pdf_page_count(tmp_path / "doc.pdf") == 2
    pages = load_pdf(tmp_path / "doc.pdf", dpi=144)
    assert [p.size for p in pages] == [(400, 200), (400, 200)]
    assert pages[0].pixels.mean() > 250 and pages[1].pixels.mean() < 5
    assert load_page(tmp_path / "doc.pdf", page=1, dpi=72).size == (200, 100)


def test_pdf_page_out_of_range(tmp_path):
    _make_pdf(tmp_path / "doc.pdf")
    with pytest.raises(
        PdfPageOutOfRangeError, match=r"doc.pdf: page 6 requested, but the PDF has 2 page\(s\) \(pages count from 1\)"
    ):
        load_page(tmp_path / "doc.pdf", page=5)


def test_encrypted_pdf(tmp_path):
    pypdf = need_module("pypdf", "pypdf makes the encrypted test file")
    writer = pypdf.PdfWriter()
    writer.add_blank_page(100, 100)
    writer.encrypt("secret")
    with open(tmp_path / "locked.pdf", "wb") as fh:
        writer.write(fh)
    with pytest.raises(EncryptedPdfError, match="locked.pdf: the PDF is encrypted"):
        load_page(tmp_path / "locked.pdf")
    assert load_page(tmp_path / "locked.pdf", password="secret").size[0] > 0


def test_corrupt_pdf(tmp_path):
    (tmp_path / "broken.pdf").write_bytes(b"%PDF-1.4\n this is not a pdf body")
    with pytest.raises(CorruptImageError, match="broken.pdf: cannot open PDF"):
        load_page(tmp_path / "broken.pdf")


def test_all_input_errors_share_one_base(tmp_path):
    with pytest.raises(DocIntentError):
        load_page(tmp_path / "missing.png")


def test_resize_longest_and_data_url():
    page = Page.from_array(np.full((1000, 3000, 3), 255, np.uint8))
    small = resize_longest(page, 2048)
    assert small.size == (2048, 683) and small.ops[-1].startswith("resize_longest")
    assert resize_longest(small, 4096) is small  # no upscaling by default
    url = to_data_url(small, "png")
    assert url.startswith("data:image/png;base64,")
    decoded = Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))
    assert decoded.size == (2048, 683)
    assert to_data_url(small, "jpeg").startswith("data:image/jpeg;base64,")


def test_load_document_reads_pdf_pages_or_the_one_image_page(tmp_path):
    from docintent.io import load_document, page_count

    _make_pdf(tmp_path / "doc.pdf")
    Image.fromarray(_rgb()).save(tmp_path / "one.png")
    assert page_count(tmp_path / "doc.pdf") == 2 and page_count(tmp_path / "one.png") == 1
    assert [p.size for p in load_document(tmp_path / "doc.pdf", pages=[1], dpi=72)] == [(200, 100)]
    assert [p.size for p in load_document(tmp_path / "one.png")] == [(40, 30)]
    with pytest.raises(
        PdfPageOutOfRangeError, match=r"one.png: page 3 requested, but an image has one page \(pages count from 1\)"
    ):
        load_document(tmp_path / "one.png", pages=[2])


def test_every_pdfium_call_of_concurrent_pdf_work_holds_the_one_lock(tmp_path, monkeypatch):
    """PDFium is not thread-safe: counting, rendering and reading the text layer of PDFs from eight threads at
    once must each open their documents under docintent's lock (the service answers uploads on threads)."""
    import threading
    from concurrent.futures import ThreadPoolExecutor

    import pypdfium2 as pdfium

    from docintent.document import Document
    from docintent.io import PDFIUM_LOCK, load_pdf, pdf_page_count
    from docintent.retrieval.evidence import text_layer
    from retrieval_helpers import make_pdf

    pdf = make_pdf(tmp_path / "two.pdf", ["Invoice INV-2041\nTotal amount due: $1,250.00", "Thank you"])
    data = pdf.read_bytes()
    opened: list[bool] = []
    real = pdfium.PdfDocument

    def watched(*args, **kwargs):
        opened.append(PDFIUM_LOCK._is_owned())  # type: ignore[attr-defined]
        return real(*args, **kwargs)

    monkeypatch.setattr(pdfium, "PdfDocument", watched)
    barrier = threading.Barrier(8)

    def work(i: int) -> tuple:
        barrier.wait()
        source = data if i % 2 else pdf
        return (
            pdf_page_count(source),
            len(load_pdf(source, pages=[i % 2], dpi=50)),
            text_layer(source, None, [1])[0] is not None,
            Document(source).page(2).width > 0,
        )

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(work, range(8)))
    assert results == [(2, 1, True, True)] * 8
    assert opened and all(opened)
