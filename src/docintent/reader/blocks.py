"""Multi-token values and the blocks that hold them: time ranges, durations, a month and year, a title set on
several lines, the name under it, the journal or event a page names, counts and objects stated in sentences.

Each rule recognises one question shape and reads one value shape; a question of another shape, or a page
without such a value, gets None and is read by the other rules. Everything is read from word shapes and
geometry: nothing here knows a template.

>>> find_durations("Time allowed 1 hour and 30 minutes")
['1 hour and 30 minutes']
>>> find_time_ranges("15:00 - 15:52 Room 2.14")
['15:00 - 15:52']
"""

from __future__ import annotations

import re

from ..layout.lines import Item, Layout
from . import entities as ent
from .extract import Matcher
from .question import STOPWORDS, QuestionInfo
from .rows import squash, visual_rows
from .solution import Solution

_DURATION = re.compile(
    r"\b\d+(?:[.,]\d+)?\s*(?:hours?|hrs?\.?|h|minutes?|mins?\.?|days?|weeks?|months?|years?)"
    r"(?:\s*(?:and|,)?\s*\d+\s*(?:minutes?|mins?\.?|hours?|seconds?|secs?))?\b",
    re.I,
)
_TIME_RANGE = re.compile(
    r"\b\d{1,2}[:.]\d{2}\s*(?:[ap]\.?m\.?)?\s*(?:[-–—]|to|until|bis)\s*\d{1,2}[:.]\d{2}\s*(?:[ap]\.?m\.?)?", re.I
)
_MONTHS = (
    "january|february|march|april|may|june|july|august|september|october|november|december|januar|februar|"
    "märz|juni|juli|oktober|dezember|janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|"
    "novembre|décembre|enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre"
)
_MONTH_YEAR = re.compile(rf"\b(?:{_MONTHS})\s+(?:19|20)\d\d\b|\b(?:0?[1-9]|1[0-2])/(?:19|20)\d\d\b", re.I)


def find_durations(text: str) -> list[str]:
    """Spans that state a length of time ("1 hour and 30 minutes", "90 min")."""
    return [m.group(0).strip(" ,") for m in _DURATION.finditer(text)]


def find_time_ranges(text: str) -> list[str]:
    """Spans that state a range of clock times ("15:00 - 15:52", "9.30 to 11.00")."""
    return [m.group(0).strip() for m in _TIME_RANGE.finditer(text)]


def _best_by_words(info: QuestionInfo, layout: Layout, found: list[tuple[Item, str]], base: float) -> Solution | None:
    if not found:
        return None
    matcher = Matcher(info, layout)

    def near(item: Item) -> float:
        own = matcher.match(item)[0]
        around = [
            o
            for o in layout.items
            if o is not item
            and abs(o.cy - item.cy) < 2.5 * max(item.h, layout.median_h)
            and (o.box.x1 <= item.box.x0 + item.h or abs(o.box.x0 - item.box.x0) < 2 * item.h)
        ]
        return max([own] + [0.8 * matcher.match(o)[0] for o in around])

    scored = sorted(
        ((near(item), -k, item, span) for k, (item, span) in enumerate(found)), key=lambda t: (t[0], t[1]), reverse=True
    )
    s, _, item, span = scored[0]
    alone = 0.1 if len({sp for _, sp in found}) == 1 else 0.0
    return Solution(
        span,
        min(base + 0.35 * s + alone, 0.95) * (0.7 + 0.3 * item.confidence),
        layout.region_of([item]),
        "multi-token value",
    )


def solve_multi_token(info: QuestionInfo, layout: Layout) -> Solution | None:
    """Time ranges, durations and a month with its year, as printed."""
    low = info.text.lower()
    if re.search(
        r"\bfrom what time to what time\b|\b(?:what|which) (?:time|hours)\b.*\b(?:run|last|held|open|take place)\b|\btime range\b|\bbetween what times\b",
        low,
    ):
        found = [(i, r) for i in layout.items for r in find_time_ranges(i.text)]
        return _best_by_words(info, layout, found, 0.5)
    if re.search(r"\bhow (?:much time|long)\b|\bduration\b|\btime allowed\b", low):
        found = [(i, d) for i in layout.items for d in find_durations(i.text) if not re.fullmatch(r"\d+\s*h", d, re.I)]
        return _best_by_words(info, layout, found, 0.45)
    if re.search(r"\bmonth and year\b|\bwhich month\b.*\b(?:show|cover|calendar)\b", low):
        found = [(i, m.group(0)) for i in layout.items for m in _MONTH_YEAR.finditer(i.text)]
        if found:
            big = max(i.h for i, _ in found)
            found = [f for f in found if f[0].h >= 0.8 * big] + [f for f in found if f[0].h < 0.8 * big]
        return _best_by_words(info, layout, found, 0.5)
    return None


# -- titles, presenters, journals, events ---------------------------------------------------------------

_TITLE_Q = re.compile(
    r"\btitle of the (?:talk|presentation|paper|article|lecture|report|slide|document|thesis|poster|seminar)\b"
    r"|\b(?:talk|presentation|paper|article|lecture|thesis|seminar) (?:called|titled|entitled)\b|^\s*what is the title\s*\??\s*$",
    re.I,
)
_NAV = re.compile(r"^(introduction|summary|outline|contents|conclusions?|agenda)$", re.I)


def title_block(layout: Layout, below: float = 0.05) -> list[Item]:
    """The page's title: the tallest line in its upper part that is no navigation bar, with the lines stacked
    with it at a similar height."""
    top = [
        i
        for i in layout.items
        if i.box.y0 >= below
        and i.box.y0 < 0.6
        and len(i.text.strip()) > 3
        and not _NAV.match(i.text.strip())
        and re.search(r"[A-Za-z]{3}", i.text)
    ]
    if not top:
        return []
    head = max(top, key=lambda i: (round(i.h / max(layout.median_h, 1e-6), 1), -i.box.y0))
    block = [head]
    for direction in (1, -1):
        last = head
        while True:
            nxt = [
                o
                for o in layout.items
                if o not in block
                and 0.75 * head.h <= o.h <= 1.3 * head.h
                and (o.box.y0 - last.box.y1 if direction > 0 else last.box.y0 - o.box.y1) <= 0.6 * head.h
                and (o.cy > last.cy if direction > 0 else o.cy < last.cy)
                and abs(o.cx - last.cx) < 0.25
            ]
            if not nxt:
                break
            last = min(nxt, key=lambda o: abs(o.cy - last.cy))
            block.append(last)
    return sorted(block, key=lambda i: i.cy)


def solve_title(info: QuestionInfo, layout: Layout) -> Solution | None:
    if not _TITLE_Q.search(info.text):
        return None
    # a slide's running header sits in the first twentieth; the title is under it
    block = title_block(layout, 0.05) or title_block(layout, 0.0)
    if not block:
        return None
    text = " ".join(i.text.strip() for i in block)
    return Solution(text, 0.6 + 0.3 * min(i.confidence for i in block), layout.region_of(block), "title block")


_NAME_TOKEN = r"[A-ZÀ-Ý][\w'’.-]*"
_PERSON = re.compile(rf"{_NAME_TOKEN}(?:\s+(?:{_NAME_TOKEN}|de|van|von|der|la|da|di|del))+")
_PRESENTER_Q = re.compile(
    r"\bwho (?:is )?(?:giving|gives|gave|presents|presented|presenting|delivers|delivering)\b|\bpresenter\b|\bspeaker of\b|\bwho (?:is|was) the speaker\b",
    re.I,
)
_SUPERS = str.maketrans("", "", "¹²³⁴⁵⁶⁷⁸⁹⁰*†‡")


def people_in(text: str) -> list[str]:
    """Person-shaped names in a line (markers and commas between them removed)."""
    clean = re.sub(r"(?<=[a-zà-ÿ])\d+\b", " ", text.translate(_SUPERS))
    out = []
    for part in re.split(r",|;|\band\b|&|·|\|", clean):
        for m in _PERSON.finditer(part.strip()):
            if ent.ENTITIES.person(m.group(0)):
                out.append(m.group(0).strip())
    return out


def solve_presenter(info: QuestionInfo, layout: Layout) -> Solution | None:
    if not _PRESENTER_Q.search(info.text):
        return None
    footer = re.search(r"\bfooter\b|\bbottom\b", info.text, re.I)
    items = sorted(layout.items, key=lambda i: i.cy, reverse=bool(footer))
    if footer:
        items = [i for i in items if i.box.y0 > 0.8]
    else:
        block = title_block(layout, 0.05)
        limit = block[-1].box.y1 if block else 0.0
        items = [i for i in items if i.box.y0 >= limit]
    for item in items:
        names = people_in(item.text)
        if names:
            return Solution(
                names[0], 0.75 * (0.7 + 0.3 * item.confidence), layout.region_of([item]), "name under the title"
            )
    return None


_PUBLICATION = re.compile(
    r"\b(journal|annals|letters|transactions|proceedings|review|bulletin|magazine|quarterly|"
    r"newsletter|zeitschrift|revue|gazette)\b",
    re.I,
)


def solve_journal(info: QuestionInfo, layout: Layout) -> Solution | None:
    if not re.search(
        r"\b(?:which|what) (?:journal|publication|periodical|magazine|proceedings)\b|\bpublished in\b|\bjournal\b.*\b(?:in|published)\b",
        info.text,
        re.I,
    ):
        return None
    best = None
    for item in layout.items:
        for k, chunk in enumerate(re.split(r"·|\||,|\s[-–]\s", item.text)):
            chunk = chunk.strip()
            if (
                not _PUBLICATION.search(chunk)
                or len(chunk.split()) > 8
                or re.search(r"\b(vol|no|pp|issue)\b\.?\s*\d", chunk, re.I)
            ):
                continue
            s = 1.0 - 0.5 * item.box.y0 - 0.05 * k
            if best is None or s > best[0]:
                best = (s, chunk.strip(" .:"), item)
    if best is None:
        return None
    return Solution(
        best[1], 0.8 * (0.7 + 0.3 * best[2].confidence), layout.region_of([best[2]]), "publication named on the page"
    )


_EVENT = re.compile(
    r"\b(workshop|conference|symposium|meeting|congress|summit|forum|colloquium|seminar|convention|"
    r"school|days|week|fair|expo)\b",
    re.I,
)
_VENUE_WORDS = re.compile(
    r"\b(universit\w*|institut\w*|college|centre|center|hall|hotel|campus|school|academy|museum|library)\b", re.I
)


def solve_event(info: QuestionInfo, layout: Layout) -> Solution | None:
    low = info.text.lower()
    if re.search(
        r"\b(?:at|for) which (?:event|conference|workshop|meeting)\b|\bwhat (?:event|conference|workshop)\b.*\b(?:talk|given|presented|for)\b",
        low,
    ):
        best = None
        for item in layout.items:
            chunk = re.split(r",|·|\|", item.text)[0].strip()
            if _EVENT.search(chunk) and 2 <= len(chunk.split()) <= 10 and not re.match(r"^(the|this|a)\b", chunk, re.I):
                s = item.h
                if best is None or s > best[0]:
                    best = (s, chunk, item)
        if best is not None:
            return Solution(best[1], 0.75, layout.region_of([best[2]]), "event named on the page")
        return None
    if re.search(
        r"\bwhere (?:does|did|will) (?:the|this) (?:event|conference|workshop|meeting|programme|program)\b.*\b(?:take place|held|happen)\b",
        low,
    ):
        for item in sorted(layout.items, key=lambda i: i.cy):
            for chunk in re.split(r",|·|\|", item.text):
                chunk = re.sub(r"^(?:programme|program|venue|location|place)\s*:?\s*", "", chunk.strip(), flags=re.I)
                if _VENUE_WORDS.search(chunk) and 2 <= len(chunk.split()) <= 8:
                    return Solution(chunk.strip(), 0.75, layout.region_of([item]), "venue named near the top")
    return None


# -- values stated in sentences -------------------------------------------------------------------------

_NUMBER_WORDS = (
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty thirty forty fifty hundred"
).split()
_COUNT_TOKEN = rf"(?:\d[\d,.]*|{'|'.join(_NUMBER_WORDS)})"


def _sentences(layout: Layout) -> list[tuple[str, list[Item]]]:
    """Running text joined across line breaks, with the lines it came from."""
    out = []
    for row in visual_rows(layout):
        for item in row.items:
            if len(item.text.split()) < 4:
                continue
            nxt = [o for o in layout.below(item, 1.3) if abs(o.box.x0 - item.box.x0) < 2 * item.h][:1]
            out.append((item.text + (" " + nxt[0].text if nxt else ""), [item] + nxt))
    return out


def solve_prose_count(info: QuestionInfo, layout: Layout) -> Solution | None:
    """ "How many samples were collected?": the number written just before the noun in a sentence that carries
    the question's other words ("we collected 290 samples"; "answer three of the five questions")."""
    m = re.match(r"^\s*(?:within |in |after |for )?how many (\w+)\b(.*)$", info.text.strip(), re.I)
    if not m:
        return None
    noun = m.group(1).lower()
    stem = noun[:-1] if noun.endswith("s") and len(noun) > 3 else noun
    others = [w for w in squash(m.group(2)).split() if w not in STOPWORDS and len(w) > 2]
    pattern = re.compile(
        rf"\b({_COUNT_TOKEN})\s+(?:of (?:the |all )?(?:\w+\s+)?)?(?:[a-z-]+\s+){{0,2}}?{re.escape(stem)}\w*\b", re.I
    )
    best = None
    for text, items in _sentences(layout):
        for mm in pattern.finditer(text):
            count = mm.group(1).rstrip(".,")
            if re.fullmatch(r"(?:19|20)\d\d", count):
                continue
            words = set(squash(text).split())
            hits = sum(1 for w in others if any(t.startswith(w[:5]) for t in words))
            s = hits / max(len(others), 1)
            if best is None or s > best[0]:
                best = (s, count, items)
    if best is None or (others and best[0] == 0):
        return None
    s, count, items = best
    return Solution(count, 0.55 + 0.35 * s, layout.region_of(items), "count stated in a sentence")


_MODAL = re.compile(r"^\s*what (may|can|must|should|will|shall|do|does|did) (?:the )?([\w-]+) (\w+)\b(.*)\?", re.I)


def solve_prose_object(info: QuestionInfo, layout: Layout) -> Solution | None:
    """ "What may candidates use during the exam?": the object after "may use" in a sentence."""
    m = _MODAL.match(info.text.strip())
    if not m:
        return None
    modal, verb = m.group(1).lower(), m.group(3).lower()
    pattern = re.compile(rf"\b{modal}\s+(?:\w+\s+)?{verb}\s+([^.;:!?]+)", re.I)
    for text, items in _sentences(layout):
        mm = pattern.search(text)
        if mm:
            obj = re.split(r"\s+(?:during|in|at|for|when|while|if|unless)\b", mm.group(1).strip())[0]
            if obj and len(obj.split()) <= 8:
                return Solution(obj.strip(" ,"), 0.7, layout.region_of(items), "object stated in a sentence")
    return None


def solve_block(info: QuestionInfo, layout: Layout) -> Solution | None:
    """The first block rule whose question shape matches and whose value is on the page."""
    for rule in (
        solve_multi_token,
        solve_title,
        solve_presenter,
        solve_journal,
        solve_event,
        solve_prose_count,
        solve_prose_object,
    ):
        sol = rule(info, layout)
        if sol is not None and sol.text:
            return sol
    return None


__all__ = [
    "find_durations",
    "find_time_ranges",
    "people_in",
    "solve_block",
    "solve_event",
    "solve_journal",
    "solve_multi_token",
    "solve_presenter",
    "solve_prose_count",
    "solve_prose_object",
    "solve_title",
    "title_block",
]
