"""Relations inside blocks: who is affiliated where (superscript markers), where an organisation is, a
person's e-mail and position, and the parts of a letter (sender, recipient, date, subject).

Blocks are read from geometry and word shapes alone: an author line is a run of names each followed by a
marker; an affiliation line starts with a marker; an address block is the lines stacked under a name at the
same left edge, its city the line with a postal code; a letter's salutation, closing and signature are found
by their place and their words. Nothing here knows a template.

>>> author_line_names("Jonas Viala,c, Françoise Parentb*, Joris Shupec", "abc")
['Jonas Vial', 'Françoise Parent', 'Joris Shupe']
>>> org_chunk("1Department of Physics, University of Droney, Aileen Ville, Ireland")
'University of Droney'
>>> city_of_line("12345 Musterhausen"), city_of_line("South James, CT 02788")
('Musterhausen', 'South James')
"""

from __future__ import annotations

import re

from ..layout.lines import Item, Layout
from . import entities as ent
from .blocks import title_block
from .question import QuestionInfo
from .rows import phrase_score, squash
from .solution import Solution
from .spans import find_emails
from .values import find_dates

_SUPERSCRIPTS = str.maketrans("¹²³⁴⁵⁶⁷⁸⁹⁰", "1234567890")
_SUBUNIT = re.compile(r"^(department|dept\.?|faculty|division|chair|section|unit|institute for)\b", re.I)
_NAME_WORD = r"[A-ZÀ-Ý][\w'’.-]*"
_NAME = rf"{_NAME_WORD}(?:\s+(?:{_NAME_WORD}|de|van|von|der|den|la|le|da|di|del|dos|du|zu))*"
_MARKED = re.compile(rf"({_NAME})\s?([0-9*†‡§,]+)(?=\s|,|$)")


def _chunks(text: str) -> list[str]:
    return [c.strip(" .;") for c in re.split(r",|·|\||;|\s[-–]\s", text) if c.strip(" .;")]


def _strip_marker(text: str) -> str:
    return re.sub(r"^[\s0-9*†‡§]+", "", text.translate(_SUPERSCRIPTS)).strip()


def org_chunk(text: str) -> str:
    """The organisation of an affiliation line: its chunk with an institution word, a sub-unit ("Department
    of ...") only when nothing else names one."""
    chunks = _chunks(_strip_marker(text))
    if not chunks:
        return ""
    scored = [
        (2 * bool(ent.ENTITIES.organisation(c)) - (1 if _SUBUNIT.match(c) else 0) - 0.01 * k, c)
        for k, c in enumerate(chunks)
    ]
    return max(scored)[1]


def city_of_line(text: str) -> str:
    """The city of an address line with a postal code ("54321 Musterheim", "South James, CT 02788",
    "Jamie Ville A90 ET74"), or "" when the line has none."""
    t = text.strip(" ,.")
    m = re.match(r"^(?:[A-Z]{1,2}[-\s])?\d{4,5}\s+([A-ZÀ-Ý][\w'’.-]*(?:[\s-]+[A-Za-zÀ-ÿ][\w'’.-]*){0,3})$", t)
    if m:
        return m.group(1)
    m = re.match(r"^(.+?),?\s+[A-Z]{2}\s+\d{5}(?:-\d{4})?$", t)
    if m:
        return m.group(1).strip(" ,")
    toks = t.split()
    k = len(toks)
    while k > 0 and re.search(r"\d", toks[k - 1]):
        k -= 1
    # a postcode after the name ("A90 ET74", "8001"), not a house number after a street ("Hafenweg 4")
    if any(re.fullmatch(r"\d{1,3}[a-z]?", w) for w in toks[k:]):
        return ""
    if 0 < k < len(toks) and len(toks) - k <= 2 and all(re.match(r"^[A-ZÀ-Ý]", w) for w in toks[:k]) and k <= 4:
        return " ".join(toks[:k]).strip(" ,")
    return ""


def _ordered(layout: Layout) -> list[Item]:
    return sorted(layout.items, key=lambda i: (round(i.cy, 3), i.box.x0))


def _block_below(layout: Layout, head: Item, max_lines: int = 6) -> list[Item]:
    """The lines stacked under ``head`` at its left edge (an address block)."""
    out = [head]
    unit = max(head.h, layout.median_h)
    last = head
    for o in sorted((o for o in layout.items if o.cy > head.cy + 0.3 * head.h), key=lambda o: o.cy):
        if o.box.y0 - last.box.y1 > 1.2 * unit:
            break
        if abs(o.box.x0 - head.box.x0) < 1.5 * unit:
            out.append(o)
            last = o
            if len(out) > max_lines:
                break
    return out


def _city_in_block(block: list[Item]) -> tuple[str, Item] | None:
    for item in block:
        for chunk in _chunks(item.text) or [item.text]:
            city = city_of_line(chunk)
            if city:
                return city, item
    return None


# -- question shapes ------------------------------------------------------------------------------------

_PERSON_Q = rf"({_NAME})"
_AFFIL = re.compile(
    rf"(?i:which|what) (?:institution|university|organi[sz]ation|institute|company|employer|school|college|lab|laboratory)\b.*?\b{_PERSON_Q}"
    rf"(?:'s)?\s+(?:affiliated|from|with|at|belong|work)|(?i:where does) {_PERSON_Q}\s+work|"
    rf"(?i:which|what) (?:organi[sz]ation|company|institution|university) does {_PERSON_Q} (?:work|belong)"
)
_WHERE_ORG = re.compile(
    r"in which (?P<what>country|city|town) is (?:the )?(?P<org>.+?)(?:\s+(?:located|based|situated))?\s*\?", re.I
)
_ROLE_CITY = re.compile(
    r"in which (?:city|town) (?:is|does|do) (?:the )?(?P<role>customer|client|recipient|sender|vendor|supplier|seller|buyer|event|company|conference|workshop|meeting)(?:'s (?P<org>organi[sz]ation|company|office))?",
    re.I,
)
_EMAIL_OF = re.compile(rf"[Ee]-?mail(?: address)? of {_PERSON_Q}")
_POSITION_OF = re.compile(rf"(?:position|role|job title|title|function) of {_PERSON_Q}|[Ww]hat does {_PERSON_Q} do\b")


def _find_person(layout: Layout, name: str) -> list[tuple[float, Item]]:
    scored = [(phrase_score(name, i.text.translate(_SUPERSCRIPTS)), i) for i in layout.items]
    top = max((s for s, _ in scored), default=0.0)
    return [(s, i) for s, i in scored if s >= max(0.85, top - 0.02)]


def _affiliation_lines(layout: Layout) -> dict[str, Item]:
    """Lines that start with a marker (a digit, a letter or a symbol glued to a capital): marker -> line."""
    out: dict[str, Item] = {}
    for item in layout.items:
        t = item.text.translate(_SUPERSCRIPTS).strip()
        m = re.match(r"^([0-9]{1,2}|[a-h]|[*†‡§])\s?(?=[A-ZÀ-Ý])", t)
        if m and (ent.ENTITIES.organisation(t) or len(_chunks(t)) >= 2):
            out.setdefault(m.group(1), item)
    return out


def _marker_of(item: Item, name: str, letters: bool) -> str | None:
    """The marker printed right after ``name`` on an author line ("Losekann²", "Viala,c" when affiliations are
    marked with letters)."""
    text = item.text.translate(_SUPERSCRIPTS)
    pattern = r"\s+".join(re.escape(w) for w in name.split())
    m = re.search(pattern, text, re.I)
    if not m:
        return None
    tail = text[m.end() :]
    mark = re.match(r"^\s?([0-9]{1,2}|[*†‡§])", tail) or (re.match(r"^([a-h])(?=[,*†\s]|$)", tail) if letters else None)
    return mark.group(1) if mark else None


def _marker_rank(marker: str) -> int:
    return int(marker) - 1 if marker.isdigit() else ord(marker) - ord("a") if marker.isalpha() else -1


def solve_affiliation(info: QuestionInfo, layout: Layout) -> Solution | None:
    m = _AFFIL.search(info.text)
    if not m:
        return None
    name = next(g for g in m.groups() if g)
    people = _find_person(layout, name)
    if not people:
        return None
    lines = _affiliation_lines(layout)
    letters = any(k.isalpha() for k in lines)
    for score, item in people:
        marker = _marker_of(item, name, letters)
        if marker is None:
            continue
        line = lines.get(marker)
        if line is None:
            # the marker was not read on its line: the affiliation block's lines in marker order
            block = [o for o in _block_below(layout, min(lines.values(), key=lambda o: o.cy))] if lines else []
            rank = _marker_rank(marker)
            line = block[rank] if 0 <= rank < len(block) and ent.ENTITIES.organisation(block[rank].text) else None
        if line is not None:
            org = org_chunk(line.text)
            if org:
                return Solution(
                    org, 0.6 + 0.35 * score * line.confidence, layout.region_of([item, line]), "affiliation by marker"
                )
    # one affiliation for everyone: the first institution line below the names
    item = people[0][1]
    below = [
        o
        for o in _ordered(layout)
        if o.cy > item.cy and o.box.y0 - item.box.y1 < 6 * layout.median_h and ent.ENTITIES.organisation(o.text)
    ]
    if below:
        return Solution(
            org_chunk(below[0].text), 0.55, layout.region_of([item, below[0]]), "affiliation below the name"
        )
    return None


def solve_where_org(info: QuestionInfo, layout: Layout) -> Solution | None:
    """ "In which country / city is ORG?": the chunks after ORG on its line, or its address block."""
    m = _WHERE_ORG.search(info.text)
    if not m or _ROLE_CITY.search(info.text):
        return None
    what, org = m.group("what").lower(), m.group("org")
    hits = [(phrase_score(org, i.text.translate(_SUPERSCRIPTS)), i) for i in layout.items]
    hits = [h for h in hits if h[0] >= 0.85]
    if not hits:
        return None
    score, item = max(hits, key=lambda h: (h[0], -len(h[1].text)))
    chunks = _chunks(_strip_marker(item.text))
    idx = max(range(len(chunks)), key=lambda k: phrase_score(org, chunks[k])) if chunks else 0
    after = chunks[idx + 1 :]
    if what == "country":
        for c in reversed(after):
            if ent.ENTITIES.country(c):
                return Solution(c, 0.6 + 0.35 * score, layout.region_of([item]), "country after the organisation")
        block = _block_below(layout, item)
        for o in block[1:]:
            for c in reversed(_chunks(o.text)):
                if ent.ENTITIES.country(c):
                    return Solution(c, 0.55 + 0.3 * score, layout.region_of([item, o]), "country in the address block")
        if after:
            return Solution(
                after[-1], 0.4 + 0.2 * score, layout.region_of([item]), "last part of the organisation's line"
            )
        return None
    city_parts = [c for c in after if not ent.ENTITIES.country(c)]
    if city_parts:
        city = city_of_line(city_parts[-1]) or city_parts[0]
        return Solution(city, 0.55 + 0.35 * score, layout.region_of([item]), "city after the organisation")
    found = _city_in_block(_block_below(layout, item)[1:])
    if found:
        return Solution(found[0], 0.55 + 0.35 * score, layout.region_of([item, found[1]]), "city in the address block")
    return None


_ROLE_LABELS = {
    "customer": r"bill(?:ed)? to|invoice to|customer|client|sold to|ship to|buyer",
    "client": r"bill(?:ed)? to|invoice to|customer|client|sold to",
    "buyer": r"bill(?:ed)? to|sold to|buyer|customer",
}


def solve_role_city(info: QuestionInfo, layout: Layout) -> Solution | None:
    """ "In which city is the customer / recipient / event?": the block the role points to, then its city."""
    m = _ROLE_CITY.search(info.text)
    if not m:
        return None
    role = m.group("role").lower()
    blocks: list[list[Item]] = []
    if role in _ROLE_LABELS:
        for item in _ordered(layout):
            if re.match(rf"^\s*(?:{_ROLE_LABELS[role]})\b", item.text, re.I):
                rest = re.sub(rf"^\s*(?:{_ROLE_LABELS[role]})\s*:?\s*", "", item.text, flags=re.I)
                block = _block_below(layout, item)
                blocks.append(block if not rest else [item] + block[1:])
    elif role in ("recipient",):
        rec = _recipient_block(layout)
        if rec:
            blocks.append(rec)
    else:  # the event: an institution named near the top with its city after it
        for item in _ordered(layout)[:12]:
            chunks = _chunks(item.text)
            if ent.ENTITIES.organisation(item.text) and len(chunks) >= 2:
                k = next((i for i, c in enumerate(chunks) if ent.ENTITIES.organisation(c)), None)
                if k is None:  # the line reads as an organisation, none of its parts alone does
                    continue
                after = [c for c in chunks[k + 1 :] if not ent.ENTITIES.country(c) and not find_dates(c)]
                if after:
                    return Solution(after[0], 0.75, layout.region_of([item]), "city after the venue")
    for block in blocks:
        found = _city_in_block(block)
        if found:
            return Solution(found[0], 0.8, layout.region_of(block), f"city of the {role}'s address")
    return None


def solve_email_of(info: QuestionInfo, layout: Layout) -> Solution | None:
    m = _EMAIL_OF.search(info.text)
    if not m:
        return None
    name = squash(m.group(1)).split()
    best = None
    for item in layout.items:
        for email in find_emails(item.text):
            local = squash(email.split("@")[0])
            s = sum(1.0 for w in name if len(w) > 2 and w in local) / max(len(name), 1)
            near = phrase_score(" ".join(name), item.text)
            s = max(s, near)
            if best is None or s > best[0]:
                best = (s, email, item)
    if best is None or best[0] < 0.5:
        return None
    return Solution(best[1], 0.55 + 0.4 * best[0], layout.region_of([best[2]]), "e-mail that carries the person's name")


def solve_position_of(info: QuestionInfo, layout: Layout) -> Solution | None:
    m = _POSITION_OF.search(info.text)
    if not m:
        return None
    name = next(g for g in m.groups() if g)
    people = _find_person(layout, name)
    for score, item in sorted(people, key=lambda p: -p[1].cy):
        rest = re.sub(rf"(?i)^.*?{re.escape(name)}\s*[,–-]?\s*", "", item.text).strip()
        if rest and len(rest.split()) <= 6 and not find_emails(rest):
            return Solution(rest, 0.7, layout.region_of([item]), "title after the name")
        below = [o for o in _block_below(layout, item, 3)[1:] if phrase_score(name, o.text) < 0.85]
        if (
            below
            and len(below[0].text.split()) <= 6
            and not find_emails(below[0].text)
            and not re.search(r"\d", below[0].text)
        ):
            return Solution(
                below[0].text.strip(), 0.75 * score + 0.1, layout.region_of([item, below[0]]), "title under the name"
            )
    return None


# -- letters --------------------------------------------------------------------------------------------

_SALUTATION = re.compile(
    r"^\s*(dear|liebe[rs]?|sehr geehrte[rs]?|hallo|hello|hi|to whom|madame|monsieur|cher|chère|gentile|estimad[oa]s?|beste|geachte)\b",
    re.I,
)
_CLOSING = re.compile(
    r"(regards|sincerely|faithfully|yours|best wishes|mit freundlichen|freundliche grüße|viele grüße|beste grüße|"
    r"hochachtungsvoll|cordialement|distinti saluti|atentamente|met vriendelijke|in erwartung|respectfully|thank you)",
    re.I,
)
_SUBJECT = re.compile(r"^\s*(subject|re|betreff|betrifft|objet|oggetto|asunto|onderwerp)\s*:\s*(.+)$", re.I)


def _is_person_line(text: str) -> bool:
    return ent.ENTITIES.person(text.strip(" ,"))


def _salutation(layout: Layout) -> Item | None:
    return next((i for i in _ordered(layout) if _SALUTATION.match(i.text)), None)


def _recipient_block(layout: Layout) -> list[Item] | None:
    sal = _salutation(layout)
    limit = sal.cy if sal is not None else 0.5
    surname = ""
    if sal is not None:
        words = re.findall(_NAME_WORD, re.sub(_SALUTATION, "", sal.text))
        words = [
            w
            for w in words
            if w.lower().strip(".") not in ("mr", "mrs", "ms", "dr", "prof", "frau", "herr", "madam", "sir")
        ]
        surname = words[-1].strip(",.") if words else ""
    lines = [i for i in _ordered(layout) if i.cy < limit]
    if surname:
        for item in lines[1:]:
            if surname.lower() in item.text.lower() and _is_person_line(item.text):
                return _block_below(layout, item)
    # else: the first stacked block under the letterhead that starts with a person's name
    for item in lines[1:]:
        if _is_person_line(item.text):
            block = _block_below(layout, item)
            if len(block) >= 3:
                return block
    return None


def solve_letter(info: QuestionInfo, layout: Layout) -> Solution | None:
    """Sender, recipient, date and subject of a letter (a page with a salutation)."""
    low = info.text.lower()
    sal = _salutation(layout)
    if sal is None:
        return None
    ordered = _ordered(layout)
    if re.search(
        r"\bwho (?:wrote|signed|sent)\b|\bwho is (?:the )?(?:letter|it) from\b|\bsender\b(?!'s)|\bwho is the (?:writer|author)\b|\bfrom whom\b",
        low,
    ):
        after = [i for i in ordered if i.cy > sal.cy]
        for k, item in enumerate(after):
            if _CLOSING.search(item.text) and len(item.text.split()) <= 6:
                for o in after[k + 1 : k + 5]:
                    if _is_person_line(o.text):
                        return Solution(o.text.strip(" ,"), 0.85, layout.region_of([item, o]), "name under the closing")
        names = [i for i in after if _is_person_line(i.text)]
        if names:
            return Solution(names[0].text.strip(" ,"), 0.6, layout.region_of(names[:1]), "name after the letter's body")
        return None
    if re.search(
        r"\b(?:addressed|written|sent) to\b|\bto whom\b|\brecipient\b(?!'s)|\bwho (?:is|was) the letter for\b|\bwho receives\b",
        low,
    ) and not re.search(r"\b(?:city|town|country)\b", low):
        block = _recipient_block(layout)
        if block:
            return Solution(
                block[0].text.strip(" ,"), 0.8, layout.region_of(block[:1]), "first line of the recipient's address"
            )
        return None
    if re.search(r"\bsubject\b|\bwhat is the letter about\b|\bregarding\b", low):
        for item in ordered:
            m = _SUBJECT.match(item.text)
            if m:
                return Solution(m.group(2).strip(), 0.85, layout.region_of([item]), "subject line")
        return None
    if re.search(r"[(\"“]|\brepl(?:y|ied)\b|\breferr", low):
        return None
    if re.search(
        r"\bdate of the letter\b|\bwhen was (?:the|this) letter\b|\bletter dated\b|\bwhat date is the letter\b", low
    ):
        before = [i for i in ordered if i.cy < sal.cy]
        best = None
        for item in before:
            for d in find_dates(item.text):
                rest = item.text.replace(d, "").strip(" ,.")
                alone = not rest or (
                    len(rest.split()) <= 3
                    and not re.search(r"\d", rest)
                    and not re.search(r"\b(since|seit|depuis|member|born|due)\b", rest, re.I)
                )
                s = (1.0 if alone else 0.4) + 0.1 * item.cy
                if best is None or s > best[0]:
                    best = (s, d, item)
        if best is not None and best[0] >= 1.0:
            return Solution(best[1], 0.85, layout.region_of([best[2]]), "date line above the salutation")
    return None


def author_line_names(text: str, letters: str = "") -> list[str]:
    """The names of an author line, markers removed ("Jonas Viala,c, Françoise Parentb*" -> "Jonas Vial",
    "Françoise Parent" when the affiliations are marked with the ``letters`` "abc")."""
    t = text.translate(_SUPERSCRIPTS)
    t = re.sub(r"(?<=[a-zà-ÿ])\d+(?:,\d+)*[*†‡]*", " ", t)
    if letters:
        t = re.sub(rf"(?<=[a-zà-ÿ])[{letters}](?:,[{letters}])*[*†‡]*(?=,|\*|$)", " ", t)
    t = re.sub(r"[*†‡§]", " ", t)
    parts = [p.strip() for p in re.split(r",|;|\band\b|&", t) if p.strip()]
    out = []
    for part in parts:
        part = re.sub(r"\s+", " ", part)
        if _is_person_line(part):
            out.append(part)
        else:
            out += [
                m.group(0) for m in re.finditer(rf"{_NAME_WORD}\s+{_NAME_WORD}", part) if _is_person_line(m.group(0))
            ]
    return out


def solve_author_order(info: QuestionInfo, layout: Layout) -> Solution | None:
    """ "Who is the first / last author?": the author line under the title, markers removed."""
    m = re.search(r"\b(first|last|second|third)\s+(?:author|presenter|speaker|name)\b", info.text, re.I)
    if not m:
        return None
    lines = _affiliation_lines(layout)
    found = sorted(k for k in lines if k.isalpha())
    letters = "".join(chr(c) for c in range(ord("a"), ord(found[-1]) + 2)) if found else ""
    title = title_block(layout, 0.0)
    for item in sorted(layout.items, key=lambda i: i.cy):
        if item.box.y0 > 0.6:
            break
        if item in title:
            continue
        names = author_line_names(item.text, letters)
        if len(names) >= 2:
            k = {"first": 0, "second": 1, "third": 2, "last": -1}[m.group(1).lower()]
            if k < len(names):
                return Solution(names[k], 0.8 * (0.7 + 0.3 * item.confidence), layout.region_of([item]), "author line")
    return None


def solve_relation(info: QuestionInfo, layout: Layout) -> Solution | None:
    """The first relation whose question shape matches and whose block is on the page."""
    for rule in (
        solve_author_order,
        solve_affiliation,
        solve_email_of,
        solve_role_city,
        solve_where_org,
        solve_position_of,
        solve_letter,
    ):
        sol = rule(info, layout)
        if sol is not None and sol.text:
            return sol
    return None


__all__ = [
    "author_line_names",
    "city_of_line",
    "org_chunk",
    "solve_affiliation",
    "solve_email_of",
    "solve_letter",
    "solve_author_order",
    "solve_position_of",
    "solve_relation",
    "solve_role_city",
    "solve_where_org",
]
