"""Typed values in OCR text: dates, times and spans (numbers live in :mod:`docintent.numbers`)."""

from __future__ import annotations

import re

from ..numbers import NUMBER_RE, Number, find_numbers, format_number, format_places, parse_number, printed_decimals

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


#: The years a document's date is taken to lie in: OCR turns "2021" into "2821" or "2O21" into "2921", and
#: a date that far out is a misreading, not a date.
YEARS = range(1000, 2200)


def plausible_date(span: str) -> bool:
    """Whether a date span names a day the calendar has: a month of 1-12, a day of 1-31 and a year in
    :data:`YEARS` (a two-digit year passes). OCR misreads dates into shapes the date pattern still matches.

    >>> [plausible_date(s) for s in ("2023-05-05", "2023-15-15", "2821/08/17", "31/12/2024", "12/31/24", "32.1.2024")]
    [True, False, False, True, True, False]
    >>> plausible_date("12 March 2024"), plausible_date("March 2924"), plausible_date("45 March 2024")
    (True, False, False)
    """
    digits = re.findall(r"\d+", span)
    numbers = [int(d) for d in digits]
    four = [n for n, d in zip(numbers, digits) if len(d) == 4]
    if any(y not in YEARS for y in four):
        return False
    if re.search(r"[A-Za-z]", span):  # a month by name: the other number, if any, is the day
        return all(1 <= n <= 31 for n in numbers if n not in four)
    if len(numbers) != 3:
        return True
    if len(digits[0]) == 4:  # year first: year, month, day
        return 1 <= numbers[1] <= 12 and 1 <= numbers[2] <= 31
    a, b = numbers[0], numbers[1]  # day and month in either order
    return (1 <= a <= 31 and 1 <= b <= 12) or (1 <= a <= 12 and 1 <= b <= 31)


def misread_date(text: str) -> bool:
    """Whether ``text``, a short answer, holds a date the calendar does not have (:func:`plausible_date`).

    >>> misread_date("2914/12/18"), misread_date("2014/12/18"), misread_date("Version 2914 of the guide, 2014")
    (True, False, False)
    """
    if len(text) > 24:
        return False
    return any(not plausible_date(m.group(0)) for m in DATE_RE.finditer(text))


def is_numeric_text(text: str) -> bool:
    return parse_number(text) is not None


def clean_span(text: str) -> str:
    """Trim separators and stray punctuation that OCR leaves around a value."""
    return text.strip().strip(":;,|*").strip()


__all__ = [
    "DATE_RE",
    "YEARS",
    "misread_date",
    "plausible_date",
    "NUMBER_RE",
    "TIME_RE",
    "Number",
    "clean_span",
    "find_dates",
    "find_numbers",
    "format_number",
    "format_places",
    "printed_decimals",
    "is_numeric_text",
    "parse_number",
]
