"""One-step operations over the rows a question names: yes/no comparisons of two values, sums and
differences of two values, reverse look-ups (the row label of a given value), the other cell of a named row
(the time of a session, the owner of an action) and counts of a listed field.

Each reads rows and column headers (:mod:`.rows`); a question that does not have the operation's shape, or
whose targets are not found, gets None and is read by the other rules.

>>> parse_comparison("Is the Rent amount larger than the Salary amount? Answer yes or no.")
('Rent amount', 'larger', 'Salary amount')
>>> parse_pair("What is the total price of Tea and Milk together?")
('sum', 'Tea', 'Milk')
"""

from __future__ import annotations

import re

from ..layout.lines import Item, Layout
from .extract import tokens
from .question import STOPWORDS, QuestionInfo, strip_yesno
from .rows import (
    Row,
    clean_label,
    header_above,
    header_score,
    headers_above,
    is_textual,
    phrase_score,
    resolve_target,
    row_label,
    squash,
    visual_rows,
)
from .solution import Solution
from .values import TIME_RE, Number, find_dates, find_numbers, format_places, printed_decimals

_MORE = (
    "larger",
    "higher",
    "greater",
    "more",
    "bigger",
    "longer",
    "heavier",
    "older",
    "later",
    "above",
    "over",
    "exceed",
    "exceeds",
    "costlier",
    "pricier",
)
_LESS = ("lower", "smaller", "less", "fewer", "cheaper", "shorter", "lighter", "younger", "earlier", "below", "under")
_CMP = "|".join(_MORE + _LESS)
_COMPARISON = re.compile(
    rf"^(?:is|are|was|were|does|did|do|has|have|had)\s+(?P<a>.+?)\s+(?:(?:than|that)\s+)?(?P<op>{_CMP})(?:\s+than)?\s+(?P<b>.+?)\s*[?.]?\s*$",
    re.I,
)


def parse_comparison(question: str) -> tuple[str, str, str] | None:
    """(first thing, comparison word, second thing) of a yes/no comparison question, or None."""
    q = strip_yesno(question)
    m = _COMPARISON.match(q)
    if not m:
        return None
    a = re.sub(r"^(?:the|a|an)\s+", "", m.group("a").strip(), flags=re.I)
    b = re.sub(r"^(?:the|a|an)\s+", "", m.group("b").strip(" ?."), flags=re.I)
    return a, m.group("op").lower(), b


_PAIR_TAIL = r"(?:\s+(?:together|combined|altogether|in total|in all|added up|summed))?\s*[?.]?\s*$"
_PAIRS = (
    ("diff", re.compile(r"\bdifference (?:in [\w ()%]+? )?between (?P<a>.+?) and (?P<b>.+?)\s*[?.]?\s*$", re.I)),
    (
        "diff",
        re.compile(
            r"\bhow (?:much|many) (?:more|less|fewer|higher|lower|cheaper|greater|larger|smaller)\b(?: [\w ()%]+?)? (?:does|did|do|is|was|are|were|has|had) (?P<a>.+?) (?:than) (?P<b>.+?)\s*[?.]?\s*$",
            re.I,
        ),
    ),
    ("sum", re.compile(rf"\b(?:sum|total|combined)\b.*?\b(?:of|for|in) (?P<a>.+?) and (?P<b>.+?){_PAIR_TAIL}", re.I)),
    (
        "sum",
        re.compile(
            r"\b(?:are|is|do|does|did|were|was|in|for|of) (?P<a>[^,]+?) and (?P<b>.+?)\s+(?:together|combined|altogether|in total|in all)\s*[?.]?\s*$",
            re.I,
        ),
    ),
)


#: A two-value question states its pair in its last clause; only the question's last characters are searched,
#: so the lazy patterns below stay linear in the question's length.
PAIR_WINDOW = 400


def parse_pair(question: str) -> tuple[str, str, str] | None:
    """("sum" | "diff", first target, second target) of a two-value arithmetic question, or None."""
    q = question.strip()
    if len(q) > PAIR_WINDOW:
        q = q[-PAIR_WINDOW:].split(" ", 1)[-1]
    for kind, pattern in _PAIRS:
        m = pattern.search(q)
        if m:
            a, b = m.group("a").strip(), m.group("b").strip(" ?.")
            # the innermost "of / in / for" before the first target: "the total price of A and B"
            inner = re.split(r"\b(?:of|in|for|are|is)\s+", a)
            a = inner[-1].strip() if inner[-1].strip() else a
            return kind, a, b
    return None


def _context(question: str, *targets: str) -> list[str]:
    """The question's words that name the column: not the targets', not question or operation words."""
    skip = {w for t in targets for w in squash(t).split()}
    ops = set(_MORE + _LESS) | {
        "together",
        "combined",
        "total",
        "sum",
        "difference",
        "between",
        "yes",
        "no",
        "answer",
        "altogether",
        "much",
        "many",
        "how",
        "worth",
        "cost",
        "costs",
    }
    words = [
        w for w in squash(question).split() if w not in skip and w not in STOPWORDS and w not in ops and len(w) > 1
    ]
    if re.search(r"\btotal\s+(?:price|cost|amount|value)s?\b|\bline\s+totals?\b", question, re.I):
        words.append("total")  # here "total" names the column, not the operation
    return words


def _with_head(a: str, b: str) -> str:
    """ "questions 3 and 4": the second target borrows the first one's noun."""
    lead = re.match(r"^(\d+[a-z]?)\b", b.strip())
    if lead:
        m = re.match(r"^(.*?\b)(\d+[a-z]?)$", a.strip())
        if m and m.group(1).strip():
            return m.group(1) + lead.group(1)
    return b


def _numbers_in(item: Item) -> list[Number]:
    return [n for n in find_numbers(item.text) if not re.fullmatch(r"(?:19|20)\d\d", n.text)]


def row_value(layout: Layout, row: Row, matched: str, context: list[str]) -> tuple[Item, Number, float] | None:
    """The number of ``row`` the question asks for: under a header its context words name, else the row's
    amount (a running balance is never a row's amount) rightmost first.

    Returns (cell, number, certainty): how sure the choice of column is. 1 when the question names no column
    (or asks for the row's amount); the header's match with the named column when one carries it; else the
    choice is a guess among the row's figures (1 / their number, at most 1/2)."""
    cells: list[tuple[Item, Number]] = []
    figures = 0  # every number the row prints outside its label, a quantity before "x" included
    for item in row.items:
        nums = _numbers_in(item)
        if not nums:
            continue
        if phrase_score(matched, item.text) >= 0.99 and not _numbers_in_rest(item.text, matched):
            continue  # the label itself ("Question 3")
        figures += len(nums)
        num = nums[-1]
        if re.search(r"[x×@]\s*$", item.text[: num.start]) and len(row.items) > 1 and item is not row.items[-1]:
            continue  # a unit price after "@" is not what the line costs
        cells.append((item, num))
    if not cells:
        return None
    scored = []
    for rank, (item, num) in enumerate(reversed(cells)):
        # The column's header is whichever label over the cell the question's words name: a title printed just
        # above a table is over every column too, and must not hide the header under it.
        stack = headers_above(layout, item)
        h, header = max(((header_score(o, context), o) for o in stack), key=lambda t: t[0], default=(0.0, None))
        running = header is not None and re.search(r"\bbalance\b", header.text, re.I) is not None
        scored.append((h - (0.5 if running and h < 0.9 else 0.0) - 0.01 * rank, item, num, h))
    best = max(scored, key=lambda t: t[0])
    printed = set(squash(row.text).split())
    if not [w for w in context if w not in _ROW_AMOUNT_WORDS and w not in printed]:
        # the question asks for the row's amount, which the rightmost figure is; a word printed in the row itself
        # ("a stuffed gnu" where the description says "stuffed") describes the row, it names no column
        certainty = 1.0
    else:
        # A column the question names and no header over the cell carries: the cell is a guess among the row's
        # figures, also when it is the only one left standing alone ("6 x €180.07" holds the quantity asked for,
        # the line total beside it is what remains).
        certainty = max(min(best[3], 1.0), 1.0 / max(figures, 2))
    return best[1], best[2], certainty


#: Words that ask for a row's amount rather than name a column of their own: where no header carries them, the
#: rightmost figure that is not a running balance is what they mean (a till receipt has no header at all).
_ROW_AMOUNT_WORDS = frozenset({"amount", "amounts", "total", "totals", "price", "prices", "cost", "value", "sum"})


def _numbers_in_rest(text: str, matched: str) -> bool:
    rest = squash(text).replace(squash(matched), " ")
    return bool(re.search(r"\d", rest))


def _two_values(info: QuestionInfo, layout: Layout, a: str, b: str, question: str) -> tuple | None:
    rows = visual_rows(layout)
    b = _with_head(a, b)
    # words both targets share name the column ("the Rent amount" / "the Salary amount"), not the rows
    common = set(squash(a).split()) & set(squash(b).split())
    a_only = " ".join(w for w in a.split() if squash(w) not in common)
    b_only = " ".join(w for w in b.split() if squash(w) not in common)
    if common and a_only and b_only:
        a, b = a_only, b_only
    sa, ra, ma = resolve_target(layout, a, rows)
    sb, rb, mb = resolve_target(layout, b, rows)
    if ra is None or rb is None or ra is rb:
        return None
    context = _context(question, ma, mb, a, b)  # a row's words never name the column, matched or not
    va, vb = row_value(layout, ra, ma, context), row_value(layout, rb, mb, context)
    if va is None or vb is None:
        return None
    conf = min(sa, sb) * min(i.confidence for i in (va[0], vb[0])) * min(ra.level(va[0]), rb.level(vb[0]))
    return va, vb, conf, ra, rb


def solve_comparison(info: QuestionInfo, layout: Layout) -> Solution | None:
    """ "Is the A amount larger than the B amount?": both values looked up in their rows, then compared."""
    parsed = parse_comparison(info.text)
    if parsed is None:
        return None
    a, op, b = parsed
    b = re.sub(r"^(?:those|that|the ones?)\s+(?:of|in|for)\s+", "", b, flags=re.I)
    a_target = re.split(r"\b(?:of|in|for)\s+", a)[-1] if re.search(r"\b(?:of|in|for)\s+", a) else a
    b_target = re.split(r"\b(?:of|in|for)\s+", b)[-1] if re.search(r"\b(?:of|in|for)\s+", b) else b
    found = _two_values(info, layout, a_target, b_target, info.text)
    if found is None:
        return None
    va, vb, conf, ra, rb = found
    x, y = abs(va[1].value), abs(vb[1].value)
    holds = x > y if op in _MORE else x < y
    yes, no = ("true", "false") if re.search(r"\b(true|false)\b", info.text, re.I) else ("yes", "no")
    region = layout.region_of([va[0], vb[0]] + ra.items[:1] + rb.items[:1])
    # yes / no from a guessed column is near a coin's toss: its certainty scales what the look-ups add to it
    conf *= min(va[2], vb[2])
    return Solution(yes if holds else no, 0.55 + 0.4 * conf, region, "comparison of two looked-up values")


def solve_pair(info: QuestionInfo, layout: Layout) -> Solution | None:
    """ "What is the combined X of A and B?" / "How much more does A cost than B?": two look-ups, one step."""
    parsed = parse_pair(info.text)
    if parsed is None:
        return None
    kind, a, b = parsed
    found = _two_values(info, layout, a, b, info.text)
    if found is None:
        return None
    va, vb, conf, ra, rb = found
    x, y = va[1].value, vb[1].value
    value = (
        x + y
        if kind == "sum"
        else (
            abs(x) - abs(y)
            if re.search(r"\bhow (?:much|many) (?:more|higher|greater|larger)\b", info.text, re.I)
            else abs(x - y)
        )
    )
    if kind == "diff" and not re.search(r"\bhow (?:much|many)\b", info.text, re.I):
        value = abs(x - y)
    places = max(printed_decimals(n.text, n.value, most=2) for n in (va[1], vb[1]))
    text = format_places(value, places)
    region = layout.region_of([va[0], vb[0]] + ra.items[:1] + rb.items[:1])
    # A figure computed from a guessed column is a guess: the column's certainty scales the whole confidence,
    # not only the part above the floor a found pair of rows earns.
    column = min(va[2], vb[2])
    return Solution(text, (0.5 + 0.4 * conf) * column, region, f"{kind} of two looked-up values")


# -- reverse look-ups and the other cells of a named row ------------------------------------------------


_MONTH_NAMES = (
    "january|february|march|april|may|june|july|august|september|october|november|december|"
    "jan|feb|mar|apr|jun|jul|aug|sep|sept|oct|nov|dec"
)
_DAY_MONTH = re.compile(
    rf"\b(\d{{1,2}})(?:st|nd|rd|th)?\.?\s+({_MONTH_NAMES})\b|\b({_MONTH_NAMES})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?\b(?!,?\s*\d{{4}})",
    re.I,
)


def day_month(text: str) -> list[tuple[int, str, int, int]]:
    """(day, month word, start, end) of the day-and-month dates in ``text`` ("24 March", "December 24")."""
    out = []
    for m in _DAY_MONTH.finditer(text):
        day, month = (m.group(1), m.group(2)) if m.group(1) else (m.group(4), m.group(3))
        if 1 <= int(day) <= 31:
            out.append((int(day), month.lower()[:3], m.start(), m.end()))
    return out


_DIMENSIONS = re.compile(r"\d+(?:[.,]\d+)?\s*(?:[x×]|by)\s*\d+(?:[.,]\d+)?", re.I)


def _dimension_values(dims: str) -> list[float]:
    """The numbers of a dimensions literal ("8.5 by 11" -> [8.5, 11.0]), in order."""
    return [n.value for n in find_numbers(re.sub(r"[x×]|by", " ", dims, flags=re.I))]


def _literal(question: str) -> tuple[str, str] | None:
    """The value a reverse look-up gives: ("number" | "dimensions" | "date" | "daymonth" | "time" | "text",
    literal), or None."""
    q = strip_yesno(question)
    quoted = re.findall(r"[\"“‘']([^\"”’']{2,80})[\"”’']", q)
    if quoted:
        return "text", quoted[0]
    dims = _DIMENSIONS.search(q)
    if dims:  # "11 x 17 inches": both numbers, in that order
        return "dimensions", dims.group(0)
    dates = find_dates(q)
    if dates:
        return "date", dates[0]
    if day_month(q):
        d = day_month(q)[0]
        return "daymonth", q[d[2] : d[3]]
    times = TIME_RE.findall(q)
    if times:
        return "time", times[0]
    nums = [n for n in find_numbers(q) if not re.fullmatch(r"(?:19|20)\d\d", n.text)]
    decimal = [n for n in nums if re.search(r"[.,]\d", n.text) or n.money]
    if decimal:
        return "number", decimal[0].text
    paren = re.findall(r"\(([^)]{3,40})\)", q)
    if paren:
        return "text", paren[0]
    # a proper name inside the question (not its first word): "Which session does Amber Foster give?"
    names = re.findall(r"(?<=\s)((?:[A-ZÀ-Ý][\w'’.-]+)(?:\s+(?:[A-ZÀ-Ý][\w'’.-]+|de|van|von|der|la|da|di))+)", q)
    if names:
        return "text", max(names, key=len)
    if nums:
        return "number", nums[0].text
    m = re.search(
        r"\b(?:is|does|was|did)\s+(?:the\s+)?(.+?)(?:\s+(?:start|begin|end|take place|happen|held))?\s*\?", q, re.I
    )
    if m and re.match(
        r"^\s*(?:at what time|what time|on (?:which|what) (?:week)?(?:day|date)|when is|when does)\b", q, re.I
    ):
        return "fuzzy", m.group(1)
    return None


def _same_value(a: Number, b: Number) -> bool:
    return abs(abs(a.value) - abs(b.value)) <= 1e-6 * max(1.0, abs(b.value))


def _cells_with(layout: Layout, kind: str, literal: str) -> list[Item]:
    """Items that hold the literal value."""
    out = []
    if kind == "number":
        target = find_numbers(literal)[0]
        for item in layout.items:
            if any(_same_value(n, target) for n in find_numbers(item.text)):
                out.append(item)
    elif kind == "dimensions":
        wanted = _dimension_values(literal)
        for item in layout.items:
            for m in _DIMENSIONS.finditer(item.text):
                got = _dimension_values(m.group(0))
                if len(got) == len(wanted) and all(abs(a - b) < 1e-6 for a, b in zip(got, wanted)):
                    out.append(item)
                    break
    elif kind == "date":
        lit = squash(literal)
        for item in layout.items:
            if any(squash(d) == lit for d in find_dates(item.text)) or phrase_score(literal, item.text) >= 1.0:
                out.append(item)
    elif kind == "daymonth":
        day, month = day_month(literal)[0][:2]
        for item in layout.items:
            if any(d == day and mo == month for d, mo, _, _ in day_month(item.text)):
                out.append(item)
            elif item.text.strip() == str(day) and any(month == mo[:3] for mo in _months_on(layout)):
                out.append(item)
    elif kind == "time":
        for item in layout.items:
            if literal in TIME_RE.findall(item.text):
                out.append(item)
    else:
        words = literal.split()
        # a phrase taken from the question's wording may end in its verb ("... transaction booked")
        tries = [" ".join(words[: len(words) - k]) for k in range(3 if kind == "fuzzy" else 1) if len(words) - k >= 1]
        for phrase in tries:
            scored = [(phrase_score(phrase, item.text), item) for item in layout.items]
            top = max((s for s, _ in scored), default=0.0)
            floor = 0.97 if kind == "fuzzy" else 0.88
            out = [item for s, item in scored if s >= max(floor, top - 0.02)]
            if out:
                break
    return out


_WANT_TIME = re.compile(r"\b(?:what|which) time\b|\bwhen does\b.*\b(?:start|begin|end|finish)\b", re.I)
_WANT_DAY = re.compile(r"\b(?:which|what) (?:day|date|weekday)\b|^when is\b|^when was\b|\bon which day\b", re.I)
_WANT_PERSON = re.compile(r"^who\b|\bwhich person\b|\bresponsible\b|\bspeaker\b|\bowner\b|\bpresenter\b", re.I)


def _months_on(layout: Layout) -> list[str]:
    """Month words of the page's "Month YYYY" headings (a calendar's month)."""
    return [
        m.group(1).lower()[:3]
        for it in layout.items
        for m in re.finditer(rf"\b({_MONTH_NAMES})\w*\s+(?:19|20)\d\d\b", it.text, re.I)
    ]


def _row_of(layout: Layout, item: Item) -> list[Item]:
    return sorted([item] + layout.same_row(item, 0.5), key=lambda o: o.box.x0)


def _noun(question: str) -> list[str]:
    """The noun a "which X" question names ("which transaction" -> ["transaction"])."""
    m = re.match(r"^\s*(?:which|what)\s+([a-z]+)(?:\s+([a-z]+))?", question, re.I)
    if not m:
        return []
    words = [w.lower() for w in m.groups() if w and w.lower() not in STOPWORDS]
    return [w for w in words if w not in ("is", "was", "has", "had", "does", "did")]


_ASKS_FOR_ANOTHER = re.compile(r"^\s*(?:which|what|who|when|on which|at what|at which|in which)\b", re.I)


def given_value(question: str) -> tuple[str, str] | None:
    """The value a reverse look-up gives, when ``question`` is one: it asks which / what / who / when and names
    a value to find on the page ("Which fee amounts to 2.643,00 €?" -> ``("number", "2.643,00 €")``); else None.

    >>> given_value("Which merchant charged 62,56?")
    ('number', '62,56')
    >>> given_value("What is the total amount due?") is None
    True
    """
    q = question.strip()
    return _literal(q) if _ASKS_FOR_ANOTHER.match(q) else None


def solve_reverse(info: QuestionInfo, layout: Layout) -> Solution | None:
    """The cell of the row that holds the value the question gives: its label ("which item cost 28.44?"),
    its time, its day or its person."""
    q = info.text.strip()
    lit = given_value(q)
    if lit is None:
        return None
    kind, literal = lit
    cells = _cells_with(layout, kind, literal)
    if not cells or len(cells) > 8:
        return None
    year = re.search(r"\b(?:in|for)\s+((?:19|20)\d\d)\b", q)
    weekday = re.search(r"\bon\s+((?:mon|tues|wednes|thurs|fri|satur|sun)day)\b", q, re.I)
    noun = _noun(q)
    want_time, want_day = bool(_WANT_TIME.search(q)), bool(_WANT_DAY.search(q))
    want_weekday = bool(re.search(r"\bweekday\b|\bwhich day of the week\b", q, re.I))
    want_person = bool(_WANT_PERSON.search(q))
    unit = max(layout.median_h, 1e-6)
    best: tuple[float, str, list[Item]] | None = None

    def offer(score: float, answer: str, items: list[Item]) -> None:
        nonlocal best
        if answer and (best is None or score > best[0]):
            best = (score, answer, items)

    for cell in cells:
        s0 = 1.0
        if year:
            h = header_above(layout, cell)
            s0 *= 1.0 if h is not None and year.group(1) in h.text else 0.6
        if weekday:
            day = _day_heading(layout, cell, any_heading=True)
            s0 *= 1.0 if day is not None and weekday.group(1).lower() in day[0].lower() else 0.5
        own = cell.text
        if want_weekday:
            h = header_above(layout, cell)
            if h is not None and re.fullmatch(r"[A-Za-z]+day", h.text.strip()):
                offer(0.9 * s0, h.text.strip(), [cell, h])
            continue
        if want_time and kind != "time" and TIME_RE.findall(own):
            offer(0.95 * s0, TIME_RE.findall(own)[0], [cell])
            continue
        if want_day and kind not in ("date", "daymonth"):
            if day_month(own) or find_dates(own):
                d = find_dates(own)
                offer(0.95 * s0, d[0] if d else own[day_month(own)[0][2] : day_month(own)[0][3]], [cell])
                continue
            grid = _grid_day(layout, cell)
            if grid is not None:
                offer(0.85 * s0, grid[0], [cell, grid[1]])
                continue
        if kind == "daymonth":
            # a listed note ("24 March: Fire drill, 08:00") or the entry under a calendar's day number
            if day_month(own):
                rest = own[day_month(own)[0][3] :].strip(" :–-")
                rest = re.split(r",\s*(?=\d{1,2}:\d{2})|\s+\d{1,2}:\d{2}", rest)[0].strip(" ,.;")
                if rest:
                    offer(0.9 * s0, rest, [cell])
                    continue
            under = [o for o in layout.below(cell, 2.0) if is_textual(o) and o.box.x0 >= cell.box.x0 - unit]
            if under:
                offer(0.8 * s0, under[0].text.strip(), [cell, under[0]])
            continue
        row = _row_of(layout, cell)
        if kind in ("number", "date", "time") and not (want_time or want_day or want_person):
            label, run = row_label(row, cell, unit)
            if label and phrase_score(literal, label) < 0.9:
                h = header_above(layout, run[0])
                offer(s0 * (0.85 + 0.15 * header_score(h, noun)) * (0.6 + 0.4 * run[0].confidence), label, [cell] + run)
        for rank, other in enumerate(row):
            if other is cell:
                continue
            text = other.text.strip()
            h = header_above(layout, other)
            if want_time:
                times = TIME_RE.findall(text)
                if times:
                    offer(s0 * (0.6 + 0.4 * other.confidence), times[0], [cell, other])
                continue
            if want_day:
                ds = find_dates(text)
                if ds or re.fullmatch(r"\d{1,2}|[A-Z][a-z]+day", text):
                    offer(0.9 * s0 * (0.6 + 0.4 * other.confidence), ds[0] if ds else text, [cell, other])
                continue
            if not is_textual(other) or phrase_score(literal, text) >= 0.9:
                continue
            hs = header_score(h, noun)
            if kind in ("text", "fuzzy") and hs < 0.9 and not want_person:
                continue  # a named row's other cell must sit under the column the question names
            fit = 0.75 + 0.25 * hs - 0.02 * rank
            if want_person and not re.search(r"^[A-ZÀ-Ý][\w'’.-]+(?:\s+[A-ZÀ-Ý][\w'’.-]+)+$", text):
                fit -= 0.3
            offer(s0 * fit * (0.6 + 0.4 * other.confidence), clean_label(text), [cell, other])
        if want_day and best is None:
            day = _day_heading(layout, cell)
            if day is not None:
                offer(0.7 * s0, day[0], [cell, day[1]])
    if best is None:
        return None
    score, answer, items = best
    return Solution(answer, min(0.45 + 0.45 * score, 0.93), layout.region_of(items), f"row of the given {kind}")


def _grid_day(layout: Layout, cell: Item) -> tuple[str, Item] | None:
    """A calendar entry's date: the day number just above it in its cell, with the page's month."""
    unit = max(layout.median_h, 1e-6)
    above = [
        o
        for o in layout.items
        if o.cy < cell.cy
        and cell.box.y0 - o.box.y1 < 2.5 * unit
        and re.fullmatch(r"\d{1,2}", o.text.strip())
        and o.box.x0 >= cell.box.x0 - 1.5 * unit
        and o.box.x0 <= cell.box.x0 + 3 * unit
    ]
    months = [
        m.group(0)
        for it in layout.items
        for m in re.finditer(rf"\b({_MONTH_NAMES})[a-z]*(?=\s+(?:19|20)\d\d\b)", it.text, re.I)
    ]
    if not above or not months:
        return None
    day = max(above, key=lambda o: o.cy)
    return f"{int(day.text.strip())} {months[0]}", day


def _day_heading(layout: Layout, cell: Item, any_heading: bool = False) -> tuple[str, Item] | None:
    """The nearest heading above ``cell`` that states a date (a programme's day heading); ``any_heading``:
    the heading's whole text (its weekday too)."""
    above = sorted(
        (
            o
            for o in layout.items
            if o.cy < cell.cy - 0.5 * cell.h
            and (find_dates(o.text) or re.search(r"\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b", o.text, re.I))
        ),
        key=lambda o: -o.cy,
    )
    for o in above:
        if len(_row_of(layout, o)) <= 2:
            d = find_dates(o.text)
            return (o.text.strip() if any_heading or not d else d[0]), o
    return None


_LIST_COUNT = re.compile(r"^how many (\w+)\b", re.I)


def solve_list_count(info: QuestionInfo, layout: Layout) -> Solution | None:
    """ "How many people were present?": the names listed after the label the question's words point to."""
    m = _LIST_COUNT.match(info.text.strip())
    if not m:
        return None
    words = [w for w in tokens(info.text) if w not in STOPWORDS and w != m.group(1).lower() and len(w) > 2]
    best = None
    for item in layout.items:
        if ":" not in item.text:
            continue
        label, rest = item.text.split(":", 1)
        if not rest.strip() or not any(phrase_score(w, label) >= 0.9 for w in words):
            continue
        parts = [p for p in re.split(r",|;|\band\b", rest) if p.strip()]
        if len(parts) >= 2 and not find_numbers(rest):
            best = (len(parts), item)
            break
    if best is None:
        return None
    return Solution(str(best[0]), 0.8, layout.region_of([best[1]]), "items listed after the label")


_ROW_COST = re.compile(
    r"^\s*(?:how much (?:did|does|do|was|were|is|are) (?:the )?(?P<a>.+?) cost|what (?:did|does|do) (?:the )?(?P<b>.+?) cost"
    r"|(?:what is|what was) the (?:price|cost|amount|line total) (?:of|for) (?:the )?(?P<c>.+?))\s*\??\s*$",
    re.I,
)


def solve_row_amount(info: QuestionInfo, layout: Layout) -> Solution | None:
    """ "How much did Spinach cost?": the amount on the row the item names (what the line costs, not its unit
    price)."""
    m = _ROW_COST.match(info.text)
    if not m:
        return None
    target = next(g for g in m.groups() if g)
    score, row, matched = resolve_target(layout, target, visual_rows(layout), 0.9)
    if row is None:
        return None
    found = row_value(layout, row, matched, _context(info.text, matched))
    if found is None:
        return None
    # The question's shape asks for the row's amount (its price, cost, amount or line total), so the column's
    # certainty is not used here: the rightmost figure that is no running balance is what it asks for.
    item, num, _ = found
    conf = 0.5 + 0.4 * score * item.confidence * row.level(item)
    return Solution(num.text, conf, layout.region_of([item] + row.items[:1]), "amount on the named row")


def solve_operation(info: QuestionInfo, layout: Layout) -> Solution | None:
    """The first operation whose shape the question has and whose targets are on the page."""
    for op in (solve_comparison, solve_pair, solve_reverse, solve_list_count, solve_row_amount):
        sol = op(info, layout)
        if sol is not None:
            return sol
    return None


__all__ = [
    "parse_comparison",
    "parse_pair",
    "row_value",
    "solve_comparison",
    "solve_list_count",
    "solve_operation",
    "solve_pair",
    "given_value",
    "solve_reverse",
    "solve_row_amount",
    "strip_yesno",
]
