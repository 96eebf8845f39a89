"""Numbers in document text, parsed once for every reader.

Two rules, because two questions are asked of text:

- :func:`find_numbers` / :func:`parse_number`: the numbers *inside* running text or a label ("Total 1,234
  units", "12.5%"), as the reader extracts values;
- :func:`parse_cell_number`: whether a table *cell* is a number as a whole, in financial notation
  ("$(612.3)", "18.0%"), as table reconstruction decides which cells are figures.

(The WildDoc scorer keeps its own parser in :mod:`docintent.evaluation.metrics`: it must follow the
leaderboard's rules to the letter, not ours.)

>>> parse_number("1,234 units"), parse_cell_number("$(612.3)"), format_number(12.0)
(1234.0, -612.3, '12')
"""

from __future__ import annotations

import re
from dataclasses import KW_ONLY, dataclass

NUMBER_RE = re.compile(
    r"""
    (?P<neg>[-\u2212\u2013]\s?)?
    (?P<open>\()?
    (?P<cur>[$\u20ac\u00a3\u00a5])?\s?
    (?P<num>\d{1,3}(?:\.\d{3})+,\d{1,2}(?!\d)               # 4.822,72 (decimal comma, dot groups)
      |\d{1,3}(?:[\u0020\u202f\u00a0]\d{3})+,\d{1,2}(?!\d)   # 20 874,50
      |\d{1,3}(?:[,\u202f\u00a0]\d{3})+(?:\.\d+)?
      |(?<![\d,])\d+,\d{1,2}(?![\d,])                                 # 9,62
      |\d+(?:\.\d+)?|\.\d+)
    (?P<close>\))?
    (?P<cur2>\s?[\u20ac\u00a3](?![A-Za-z]))?
    \s?(?P<pct>%)?
    (?P<scale>\s?(?:[kKmMbB](?![a-zA-Z])|thousand|million|billion|bn))?
    """,
    re.VERBOSE,
)


@dataclass(frozen=True)
class Number:
    """A number found in text: ``value`` (negatives from a minus sign or parentheses), its span and flags."""

    value: float
    text: str
    start: int
    _: KW_ONLY
    end: int
    percent: bool = False
    money: bool = False


def find_numbers(text: str) -> list[Number]:
    """All numbers in ``text`` (``"(1,234)"`` is -1234, ``"12.5%"`` is 12.5 with ``percent``)."""
    out = []
    for m in NUMBER_RE.finditer(text):
        raw = m.group("num")
        if re.search(r",\d{1,2}$", raw):  # a decimal comma: dots and spaces group thousands
            raw = re.sub(r"[.\s\u202f\u00a0]", "", raw).replace(",", ".")
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
        out.append(
            Number(
                value,
                text[start:end].strip(),
                start,
                end=end,
                percent=bool(m.group("pct")),
                money=bool(m.group("cur") or m.group("cur2")),
            )
        )
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


def format_number(value: float, *, max_decimals: int = 2) -> str:
    """Digits only: ``12.0`` -> ``"12"``, ``3.14159`` -> ``"3.14"``, ``-0.5`` -> ``"-0.5"``."""
    if abs(value - round(value)) < 1e-9:
        return str(int(round(value)))
    return f"{value:.{max_decimals}f}".rstrip("0").rstrip(".")


def printed_decimals(text: str, value: float, *, most: int | None = None) -> int:
    """Decimal places the number ``text`` (worth ``value``) prints: the digits after its last separator. Three of
    them after a whole value are a thousands group, not decimals; more than ``most`` count as none.

    >>> printed_decimals("12.50 €", 12.5), printed_decimals("5,397", 5397.0), printed_decimals("0.125", 0.125)
    (2, 0, 3)
    >>> printed_decimals("0.125", 0.125, most=2)
    0
    """
    m = re.search(r"[.,](\d+)\D*$", text)
    if not m:
        return 0
    places = len(m.group(1))
    if places == 3 and float(value).is_integer():
        return 0
    return 0 if most is not None and places > most else places


def format_places(value: float, places: int) -> str:
    """``value`` with ``places`` decimals; with none, as :func:`format_number` prints it."""
    return f"{value:.{places}f}" if places else format_number(value)


_CELL_RE = re.compile(r"(\d{1,3}(?:,\d{3})+|\d+)?(\.\d+)?\s*(%|pts?|bps|x|[kmb]n?)?", re.IGNORECASE)
CURRENCY = {"$", "\u20ac", "\u00a3", "\u00a5", "US$", "usd", "eur"}
_MINUS = ("-", "\u2212", "\u2013")


def parse_cell_number(text: str) -> float | None:
    """The number a table cell shows, or None: ``"$1,234.5"`` -> 1234.5, ``"(612.3)"`` and ``"$(612.3)"`` ->
    -612.3, ``"18.0%"`` -> 18.0, ``"-7"`` -> -7.0. Accounting parentheses and a leading minus mean negative.

    >>> parse_cell_number("$(1,234)"), parse_cell_number("(4.5%)"), parse_cell_number("Revenue")
    (-1234.0, -4.5, None)
    """
    t = "".join(text.split())
    if not any(ch.isdigit() for ch in t):
        return None
    negative = False
    for _ in range(2):  # "$(12)" and "($12)" both occur
        t = t.removeprefix("US$").lstrip("".join(CURRENCY - {"US$", "usd", "eur"}))
        if t.startswith("(") and t.endswith(")"):
            negative, t = True, t[1:-1]
        if t[:1] in _MINUS or t[:1] == "+":
            negative, t = negative or t[0] != "+", t[1:]
    m = _CELL_RE.fullmatch(t)
    if m is None or (m.group(1) is None and m.group(2) is None):
        return None
    value = float((m.group(1) or "0").replace(",", "") + (m.group(2) or ""))
    return -value if negative else value
