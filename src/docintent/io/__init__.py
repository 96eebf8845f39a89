"""Image and PDF loading, resizing and encoding for models."""

from .encode import IMAGE_OUTPUT_SUFFIXES, cap_pixels, encode, mark_box, resize_longest, save_page, to_data_url
from .load import (
    IMAGE_FORMATS,
    PDFIUM_LOCK,
    is_pdf_bytes,
    load_bytes,
    load_document,
    load_page,
    load_pdf,
    open_pdf,
    page_count,
    pdf_page_count,
    pdf_page_text,
    readable_page_count,
    render_pdf_page,
)

__all__ = [
    "IMAGE_FORMATS",
    "PDFIUM_LOCK",
    "IMAGE_OUTPUT_SUFFIXES",
    "cap_pixels",
    "encode",
    "is_pdf_bytes",
    "load_bytes",
    "load_document",
    "load_page",
    "load_pdf",
    "mark_box",
    "open_pdf",
    "page_count",
    "pdf_page_count",
    "pdf_page_text",
    "readable_page_count",
    "render_pdf_page",
    "resize_longest",
    "save_page",
    "to_data_url",
]
