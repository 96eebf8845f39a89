"""Typed values in OCR text: dates, times and spans (numbers live in :mod:`docintent.numbers`)."""

from __future__ import annotations

import re

from ..numbers import NUMBER_RE, Number, find_numbers, format_number, parse_number

_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
DATE_RE = re.compile(
    rf"""(
        \b\d{{4}}[-/.]\d{{1,2}}[-/.]\d{{1,2}}\b                                  # 2024-03-12
      | \b\d{{1,2}}[-/.]\d{{1,2}}[-/.]\d{{2,4}}\b                                # 12/03/2024
      | \b\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTHS})\.?,?\s+\d{{2,4}}\b           # 12 March 2024
      | \b(?:{_MONTHS})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{2,4}}\b           # March 12, 2024
      | \b(?:{_MONTHS})\.?,?\s+\d{{4}}\b                                         # March 2024
    )""",
    re.IGNORECASE | re.VERBOSE,
)
TIME_RE = re.compile(r"\b\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?\b", re.IGNORECASE)


def find_dates(text: str) -> list[str]:
    return [m.group(0).strip(" ,") for m in DATE_RE.finditer(text)]


def is_numeric_text(text: str) -> bool:
    return parse_number(text) is not None


def clean_span(text: str) -> str:
    """Trim separators and stray punctuation that OCR leaves around a value."""
    return text.strip().strip(":;,|*").strip()


__all__ = [
    "DATE_RE",
    "NUMBER_RE",
    "TIME_RE",
    "Number",
    "clean_span",
    "find_dates",
    "find_numbers",
    "format_number",
    "is_numeric_text",
    "parse_number",
]
