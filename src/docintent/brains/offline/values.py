"""Typed values in OCR text: numbers, money, percentages, dates; and answer formatting per task."""

from __future__ import annotations

import re
from dataclasses import dataclass

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
NUMBER_RE = re.compile(
    r"""
    (?P<neg>[-\u2212\u2013]\s?)?
    (?P<open>\()?
    (?P<cur>[$\u20ac\u00a3\u00a5])?\s?
    (?P<num>\d{1,3}(?:[,\u202f\u00a0]\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)
    (?P<close>\))?
    \s?(?P<pct>%)?
    (?P<scale>\s?(?:[kKmMbB](?![a-zA-Z])|thousand|million|billion|bn))?
    """,
    re.VERBOSE,
)
TIME_RE = re.compile(r"\b\d{1,2}:\d{2}(?:\s?[ap]\.?m\.?)?\b", re.IGNORECASE)


@dataclass(frozen=True)
class Number:
    """A number found in text: ``value`` (negatives from a minus sign or parentheses), its span and flags."""

    value: float
    text: str
    start: int
    end: int
    percent: bool = False
    money: bool = False


def find_numbers(text: str) -> list[Number]:
    """All numbers in ``text`` (``"(1,234)"`` is -1234, ``"12.5%"`` is 12.5 with ``percent``)."""
    out = []
    for m in NUMBER_RE.finditer(text):
        raw = m.group("num")
        try:
            value = float(re.sub(r"[,\u202f\u00a0]", "", raw))
        except ValueError:
            continue
        negative = bool(m.group("neg")) or (bool(m.group("open")) and bool(m.group("close")))
        if negative:
            value = -value
        start, end = m.span()
        # Keep a lone "(" or ")" out of the span unless they form a negative pair.
        if m.group("open") and not m.group("close"):
            start += 1
        if m.group("close") and not m.group("open"):
            end -= 1
        out.append(Number(value, text[start:end].strip(), start, end, bool(m.group("pct")), bool(m.group("cur"))))
    return out


def parse_number(text: str) -> float | None:
    """The single number ``text`` holds (ignoring currency, thousands separators, %), else None."""
    nums = find_numbers(text)
    if len(nums) != 1:
        return None
    rest = (text[: nums[0].start] + text[nums[0].end :]).strip(" .:;*")
    if re.search(r"[A-Za-z]{3,}", rest) and not re.fullmatch(r"(?i)(usd|eur|gbp|pts|points|units|%|percent)?", rest):
        return None
    return nums[0].value


def find_dates(text: str) -> list[str]:
    return [m.group(0).strip(" ,") for m in DATE_RE.finditer(text)]


def is_numeric_text(text: str) -> bool:
    return parse_number(text) is not None


def format_number(value: float, *, max_decimals: int = 2) -> str:
    """Digits only: ``12.0`` -> ``"12"``, ``3.14159`` -> ``"3.14"``, ``-0.5`` -> ``"-0.5"``."""
    if abs(value - round(value)) < 1e-9:
        return str(int(round(value)))
    return f"{value:.{max_decimals}f}".rstrip("0").rstrip(".")


def clean_span(text: str) -> str:
    """Trim separators and stray punctuation that OCR leaves around a value."""
    return text.strip().strip(":;,|*").strip()
