"""Parts of a printed range: its start, its end or the whole of "01/03/2024 - 31/03/2024", "14:30 - 16:00".

A page prints a period as one range; a question asks for its end ("When does the statement period end?"), its
start ("When did the meeting begin?") or the whole ("From what time to what time did the meeting run?"). The
scorer weighs each date or time of the range as a candidate of the asked type and cannot tell which end of the
range the question wants (both stand on the labelled line, the first nearer the label). :func:`asked_part` reads
which part the question asks for; :func:`part_of_range` finds the range a chosen value stands in on its line and
returns the asked part. A value that stands in no range is left as it is.

>>> asked_part("When does the statement period end?"), asked_part("From what time to what time did it run?")
('end', 'whole')
>>> line = "Statement period: 01/03/2024 - 31/03/2024"
>>> part_of_range(line, "01/03/2024", "end")
'31/03/2024'
>>> part_of_range("Time: 14:30 - 16:00", "14:30", "whole"), part_of_range("Time: 14:30 - 16:00", "14:30 - 16:00", "start")
('14:30 - 16:00', '14:30')
>>> part_of_range("Issued: 01/03/2024, due 31/03/2024", "01/03/2024", "end") is None
True
>>> asked_part("When is the pool open?"), asked_part("When does registration close?")
('', 'end')
"""

from __future__ import annotations

import re

from .values import DATE_RE, TIME_RE

#: What joins the two ends of a printed range: a dash of any width or a word that means "to".
_JOIN = re.compile(r"\s*(?:-|–|—|−|to|until|till|through|thru|bis|au|al|tot)\s*", re.IGNORECASE)
_WHOLE = re.compile(
    r"\bfrom (?:what|which|when)\b.*\b(?:to|until|till) (?:what|which|when)\b"
    r"|\bbetween (?:what|which) (?:dates|times|hours|years)\b"
    r"|\b(?:start|begin|beginning|opening) and (?:end|finish|closing)\b"
    r"|\bwhat (?:period|dates|hours|time span|span)\b"
)
_END = re.compile(
    r"\b(?:end|ends|ended|ending|end date|finish|finishes|finished|expire|expires|expired|expiry|until when"
    r"|last day|conclude|concluded|concludes|closing (?:time|date))\b"
    # "close" as an event ("When does registration close?"), not a state ("When is the office closed?")
    r"|\b(?:does|did|do|will)\b[^?]*\b(?:close|closes)\b"
)
_START = re.compile(
    r"\b(?:start|starts|started|starting|begin|begins|began|beginning|commence|commences|commenced|first day"
    r"|from when|opening (?:time|date))\b"
    # "open" as an event ("When does the exhibition open?"), not a state ("When is the pool open?")
    r"|\b(?:does|did|do|will)\b[^?]*\b(?:open|opens)\b"
)


def asked_part(question: str) -> str:
    """Which part of a range ``question`` asks for: "whole", "end", "start", or "" (none: a single value)."""
    low = question.lower()
    if _WHOLE.search(low):
        return "whole"
    end, start = _END.search(low), _START.search(low)
    if end and not start:
        return "end"
    if start and not end:
        return "start"
    return ""


def _values(line: str) -> list[tuple[int, int]]:
    """The spans of the dates and clock times on ``line``, in order, none inside another."""
    spans = sorted(
        {(m.start(), m.end()) for rx in (DATE_RE, TIME_RE) for m in rx.finditer(line)}, key=lambda s: (s[0], -s[1])
    )
    kept: list[tuple[int, int]] = []
    for s in spans:
        if not kept or s[0] >= kept[-1][1]:
            kept.append(s)
    return kept


def ranges_on(line: str) -> list[tuple[tuple[int, int], tuple[int, int]]]:
    """The ranges printed on ``line``: pairs of neighbouring dates or times joined by a dash or a "to" word."""
    values = _values(line)
    return [(a, b) for a, b in zip(values, values[1:]) if _JOIN.fullmatch(line[a[1] : b[0]])]


def part_of_range(line: str, value: str, part: str) -> str | None:
    """The ``part`` ("start", "end" or "whole") of the range on ``line`` that holds ``value``; None when ``value``
    stands in no range there, is that part already, or stands on the line more than once with different answers
    ("Mon 9:00 - 17:00, Sat 9:00 - 12:00")."""
    pairs = ranges_on(line) if part and value else []
    if not pairs:
        return None
    found = {
        _part_at(line, pairs, m.start(), m.start() + len(value), part)
        for m in re.finditer(rf"(?<![\w:/.]){re.escape(value)}(?![\w:/])", line)
    }
    return found.pop() if len(found) == 1 else None


def _part_at(
    line: str, pairs: list[tuple[tuple[int, int], tuple[int, int]]], at: int, stop: int, part: str
) -> str | None:
    """:func:`part_of_range` for the value at ``line[at:stop]``, given the line's ranges (``pairs``)."""
    for a, b in pairs:
        if not (a[0] <= at < b[1]):
            continue
        start, end, whole = line[a[0] : a[1]], line[b[0] : b[1]], line[a[0] : b[1]]
        covers = at <= a[0] and stop >= b[1]  # the value is the whole range ("14:30 - 16:00" under "Time")
        if part == "whole":
            return None if covers else whole
        if part == "end" and (covers or stop <= a[1]):
            return end
        if part == "start" and (covers or at >= b[0]):
            return start
        if at >= b[0]:  # the second value of this pair may be the first of the next ("a - b - c")
            continue
        return None
    return None


__all__ = ["asked_part", "part_of_range", "ranges_on"]
