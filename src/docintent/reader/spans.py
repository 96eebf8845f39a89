"""Typed answer spans: the exact part of a page that answers "which version", "what e-mail", "on which page".

Questions about real documents mostly ask for one typed entity: a version, a date, an e-mail address, a URL,
a postal code, the page a table-of-contents entry points to, the title of a numbered section, or a person named
in a title block. The layout readers in :mod:`.extract` return the text next to a label; here the question is
first classified by the kind of entity it wants (:func:`classify`), then every entity of that kind on the page
is found with a pattern that knows its shape, and the one closest to the question's locating words wins.
Nothing here knows a template: title blocks are read by position and shape (names under the main heading,
before the date), tables of contents by their rows (entry text, dot leaders, page number).

>>> classify("On which page does the section \\"Quitting Octave\\" begin?").kind
'page'
>>> classify("What is the author's e-mail address?").kind
'email'
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

from rapidfuzz import fuzz

from ..layout.lines import Item, Layout
from .extract import Candidate, Matcher
from .values import DATE_RE

# -- question kinds ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpanQuestion:
    """What typed span a question wants. ``subject``: the entry / thing it names (ToC title, package name);
    ``ordinal``: "first" / "last" when it asks for one of several listed names."""

    kind: str
    subject: str = ""
    ordinal: str = ""
    _: KW_ONLY
    section: str = ""  # a section / table number named in the question ("2.6", "Table 3")
    words: tuple[str, ...] = field(default_factory=tuple)


_QUOTED = re.compile(r"[\"“‘']([^\"”’']{2,80})[\"”’']")
_SECTION_NO = re.compile(r"\b(?:section|chapter|part)\s+(\d+(?:\.\d+)*)\b", re.I)
_TABLE_NO = re.compile(r"\b(table|figure)\s+(\d+)\b", re.I)


def _page_subject(question: str) -> str:
    quoted = _QUOTED.findall(question)
    if quoted:
        return quoted[0]
    m = re.search(
        r"\b(?:does|do|did|is|are)\s+(?:the\s+)?(?:section\s+|chapter\s+|part\s+)?(.+?)\s+(?:begin|start|appear)s?\b",
        question,
        re.I,
    )
    if m:
        return re.sub(r"^(?:section|chapter)\s+\d+(?:\.\d+)*\s*", "", m.group(1), flags=re.I).strip(" \"'")
    return ""


def classify(question: str) -> SpanQuestion | None:
    """The typed span ``question`` asks for, or None when it asks for something else (a value in a table,
    a yes/no, a count...)."""
    q = question.strip()
    low = q.lower()
    if re.match(r"(is|are|was|were|does|do|did|can|has|have|will|should)\b", low):
        return None  # a yes/no question
    section = (_SECTION_NO.search(q) or [None, ""])[1] or ""
    if re.search(r"\b(?:on|at) (?:which|what) page\b|\bwhich page\b|\bwhat page\b|\bpage number\b", low):
        return SpanQuestion("page", _page_subject(q), section=section)
    table = _TABLE_NO.search(q)
    if re.search(r"\b(title|name|heading) of (?:the )?(section|chapter|table|figure)\b", low):
        if table:
            return SpanQuestion("caption", section=f"{table.group(1)} {table.group(2)}")
        if section:
            return SpanQuestion("section_title", section=section)
    if re.search(r"\be-?mail\b|\bmailing list\b|@", low):
        return SpanQuestion("email", words=_subject_words(low))
    if re.search(
        r"\burl\b|\bweb ?site\b|\bwebsite\b|\brepository\b|\bweb page\b|\bhomepage\b|\blink\b|\bissue tracker", low
    ) or re.search(r"\bwhere should\b.*\b(report|issues?)\b", low):
        return SpanQuestion("url", words=_subject_words(low))
    issue = re.search(
        r"\b(issue|volume|vol|number|no)\b\.?\s*(?:number)?\b.*\b(journal|newsletter|magazine|bulletin|this|publication|proceedings)\b|\b(which|what) (issue|volume)\b",
        low,
    )
    if issue:
        return SpanQuestion("issue", "volume" if "volume" in low or re.search(r"\bvol\b", low) else "issue")
    if re.search(r"\bwhich years\b|\bwhat years\b|\byears\b.*\bcover", low):
        return SpanQuestion("years")
    if re.search(r"\b(?:in )?(?:which|what) year\b", low):
        return SpanQuestion("year")
    if re.search(r"\b(zip|postal|post)\s*code\b|\bpostcode\b", low):
        return SpanQuestion("postal")
    if re.search(r"\bstreet address\b|\bstreet\b", low):
        return SpanQuestion("street")
    m = re.search(
        r"\bwho (?:is|are|was|were)(?: the)? ?(first|last|main|active|original|current)?\s*(author|authors|writer|maintainer|editor)s?\b",
        low,
    )
    if m or re.search(r"\bwho wrote\b|\bwho (?:is|are) (?:the )?authors?\b|\bauthor of\b", low):
        ordinal = m.group(1) if m and m.group(1) else ""
        if re.search(r"\bfirst author\b|\bfirst (?:name|person)\b", low):
            ordinal = "first"
        elif re.search(r"\blast author\b", low):
            ordinal = "last"
        return SpanQuestion("author", ordinal=ordinal, words=_subject_words(low))
    agent = re.match(r"who (?:\w+ )?(\w+ed)\b", low)
    if agent and agent.group(1) not in ("used", "needed"):
        return SpanQuestion("agent", agent.group(1))
    if low.startswith("who"):
        return None
    definition = _definition_question(q)
    if definition is not None:
        return definition
    if re.search(r"\b(version|release|edition)\b", low) and not re.search(r"\b(when|date|which year|what year)\b", low):
        if re.search(
            r"\bwhich edition of the (documentation|manual)\b.*\baccording\b|\bwhich edition of the documentation\b",
            low,
        ):
            return None
        edition = "edition" if re.search(r"\bedition\b", low) and not re.search(r"\bversion\b", low) else ""
        return SpanQuestion("version", _version_subject(q), ordinal=edition, words=_subject_words(low))
    if re.search(
        r"^\s*(when|on what date|what date)\b|\bdate\b|\bdated\b|\b(in which|what) month\b|\breleased\b", low
    ) and not re.search(r"\bwhich year\b|\bwhat year\b", low):
        return SpanQuestion("date", words=_subject_words(low))
    return None


_DEFINE_RE = re.compile(
    r"^what does (?:the )?(?:command|operator|function|statement|option|key(?: sequence)?|macro|expression)?\s*(.+?)\s+"
    r"(?:do|compute|mean|return|print|produce|give|display|stand for)\s*\??$",
    re.I,
)
_TERM_RE = re.compile(
    r"^which (?:unit |shell |built-in )?(?:command|function|key sequence|key|operator|option|macro|statement|expression)s?\s+(.+?)\s*\??$",
    re.I,
)


def _definition_question(question: str) -> SpanQuestion | None:
    """Reference-card questions: "What does X do?" (read right of X) and "Which command does Y?" (left of Y)."""
    m = _DEFINE_RE.match(question.strip())
    if m:
        return SpanQuestion("define", m.group(1).strip())
    m = _TERM_RE.match(question.strip())
    if m:
        return SpanQuestion("term", m.group(1).strip())
    return None


_FILLER = frozenset(
    """what which who whom is are was were the a an of for to in on at by this that these does do did be
    version release edition package manual document documentation documented describe describes given listed
    page e-mail email address mail url web site website repository author author's authors is's should be
    reported report written date when""".split()
)


def _subject_words(low: str) -> tuple[str, ...]:
    return tuple(w for w in re.findall(r"[a-z0-9][a-z0-9+.-]*", low) if w not in _FILLER and len(w) > 1)


def _version_subject(question: str) -> str:
    m = re.search(r"\b(?:version|release|edition)s? of (?:the )?([A-Za-z][\w.+-]*)", question, re.I)
    if m and m.group(1).lower() not in ("the", "this", "it", "manual", "documentation", "document"):
        return m.group(1)
    m = re.search(r"\b(?:which|what) ([A-Z][\w.+-]*) (?:version|release)\b", question)
    if m:
        return m.group(1)
    return ""


# -- entity patterns -----------------------------------------------------------------------------------

EMAIL_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._%+-]*\s?@\s?[A-Za-z0-9-]+(?:\s?\.\s?[A-Za-z0-9-]+)*\.[A-Za-z]{2,}")
URL_RE = re.compile(
    r"(?:https?\s?:\s?/\s?/\s?|www\.)[^\s<>\"')\]]+|\b(?:github|gitlab|sourceforge|bitbucket)\.(?:com|net|org)/[^\s<>\"')\]]+",
    re.I,
)
VERSION_RE = re.compile(r"(?<![\w./-])(v\.?\s?)?(\d+(?:\.\d+)+[a-z]?|\d+[a-z]?)(?![\w/]|\.\d|-\d{1,3}\b)", re.I)
_VERSION_WORD = re.compile(r"\b(version|release|edition|v\.?)\s*$", re.I)
POSTAL_RE = re.compile(
    r"\b\d{5}(?:\s?[-–]\s?\d{4})?\b|\b\d{4}\s?[A-Z]{2}\b|\b[A-Z]\d[A-Z]\s?\d[A-Z]\d\b|\b[A-Z]{1,2}\d[A-Z\d]?\s\d[A-Z]{2}\b"
)
STREET_RE = re.compile(
    r"\b\d{1,5}\s+(?:[A-Z][a-z]+\s+){1,3}(?:Street|St\.|Avenue|Ave\.|Road|Rd\.|Lane|Drive|Boulevard|Blvd\.|Way|Place|Square)(?:,\s*[A-Z][a-z]+\s+Floor)?"
    r"|\b[A-ZÄÖÜ][a-zäöüß]+(?:weg|straße|strasse|str\.|gasse|platz|laan|straat|veld|plein)\s+\d+[a-z]?\b"
)
_TRAIL_PAGE = re.compile(r"(?<=[A-Za-z.)\s·…_-])(?:[.\s·…_-]*)(\d{1,4})\s*$")
_LEADERS = re.compile(r"(?:\s*[.·…]\s*){2,}")
_YEAR_ONLY = re.compile(r"^(19|20)\d\d$")


def _norm(text: str) -> str:
    text = text.replace("’", "'").replace("‘", "'").replace("“", '"').replace("”", '"').replace("–", "-")
    return re.sub(r"\s+", " ", text).strip()


def _squash(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", " ", text.lower()).strip()


# -- candidates ----------------------------------------------------------------------------------------


def span_candidates(question: str, layout: Layout, matcher: Matcher, finders: Finders | None = None) -> list[Candidate]:
    """Typed answer candidates for ``question`` on ``layout`` (empty when the question is not of a typed kind).

    ``finders``: what finds dates, e-mail addresses, URLs, postal codes, streets and name lines in one line of
    text (default :data:`RULES`, this module's patterns; ``benchmarks/entities.py`` puts libraries in their place
    to compare them)."""
    sq = classify(question)
    if sq is None or not layout.items:
        return []
    entity_readers = {
        "email": _emails,
        "url": _urls,
        "postal": _postal,
        "street": _street,
        "date": _dates,
        "author": _authors,
    }
    if sq.kind in entity_readers:
        return entity_readers[sq.kind](sq, layout, matcher, finders or RULES)
    reader = {
        "page": _toc_page,
        "section_title": _section_title,
        "caption": _caption,
        "version": _versions,
        "define": _define,
        "term": _term,
        "issue": _issue,
        "agent": _agent,
        "year": _year,
        "years": _years,
    }[sq.kind]
    return reader(sq, layout, matcher)


def _near_score(item: Item, layout: Layout, matcher: Matcher) -> float:
    """How strongly ``item`` or the lines just around it carry the question's words (0..1)."""
    own = matcher.match(item)[0]
    around = [o for o in layout.items if o is not item and abs(o.cy - item.cy) < 2.2 * max(item.h, layout.median_h)]
    near = max((matcher.match(o)[0] for o in around), default=0.0)
    return max(own, 0.5 * near)


def _typed(
    items_and_spans: list[tuple[Item, str, float]], layout: Layout, matcher: Matcher, source: str, base: float = 0.5
) -> list[Candidate]:
    """Score typed spans: a typed entity is a confident answer; the question's words near it decide between several."""
    out = []
    n = len(items_and_spans)
    for rank, (item, span, prior) in enumerate(items_and_spans):
        near = _near_score(item, layout, matcher)
        alone = 0.2 if n == 1 else 0.0
        score = (base + 0.5 * near + alone) * prior * (0.7 + 0.3 * item.confidence) - 0.01 * rank
        out.append(Candidate(span, min(score, 0.98), source, items=[item]))
    return out


# -- entity finders: one line of text in, the entities of one kind out ----------------------------------


def find_emails(text: str) -> list[str]:
    """E-mail addresses in ``text``; OCR's stray spaces around "@" and "." are closed up."""
    return [re.sub(r"\s+", "", m.group(0)).rstrip(".") for m in EMAIL_RE.finditer(text)]


def find_urls(text: str) -> list[str]:
    """URLs in ``text`` (with a scheme, "www.", or on a code-hosting site); OCR's stray spaces closed up."""
    urls = (re.sub(r"\s+", "", m.group(0)).rstrip(".,;:") for m in URL_RE.finditer(text))
    return [u for u in urls if "@" not in u]


def find_postal_codes(text: str) -> list[str]:
    """Postal codes of the common shapes (US ZIP and ZIP+4, Dutch, Canadian, British); bare years excluded."""
    return [m.group(0) for m in POSTAL_RE.finditer(text) if not _YEAR_ONLY.match(m.group(0))]


def find_streets(text: str) -> list[str]:
    """Street addresses: "51 Franklin Street", "Ginsterweg 1"."""
    return [m.group(0) for m in STREET_RE.finditer(text)]


def find_dates(text: str) -> list[tuple[int, int, str]]:
    """Dates in ``text`` as (start, end, span): year-first, numeric and month-name dates (six languages)."""
    # year-first dates first: "v3.0.1-2022/02/04" holds 2022/02/04, not the "0.1-2022" a d-m-y pattern sees
    spans = [(m.start(), m.end(), re.sub(r"\s", "", m.group(0))) for m in _DATE_EXTRA.finditer(text)]
    spans += [(m.start(), m.end(), m.group(0)) for m in _FOREIGN_DATE.finditer(text)]
    for m in DATE_RE.finditer(text):
        if any(m.start() < e and s < m.end() for s, e, _ in spans) or re.search(r"\d\.$", text[: m.start()]):
            continue
        spans.append((m.start(), m.end(), m.group(0)))
    return spans


def is_name_line(text: str) -> bool:
    """Whether ``text`` (symbols, e-mails and notes already removed) is shaped like one or two person names:
    2-8 capitalised tokens or particles ("de", "van"), no word a title or heading would use."""
    toks = text.split()
    if not 2 <= len(toks) <= 8 or any(t.lower().strip(".,") in _NOT_NAME for t in toks):
        return False
    if not all(_NAME_TOKEN.match(t.strip(",")) for t in toks):
        return False
    return sum(1 for t in toks if t[:1].isupper()) >= 2


@dataclass(frozen=True)
class Finders:
    """The functions that find typed entities in one line of text.

    The defaults are this module's rules. Libraries (dateparser, probablepeople, spaCy, email-validator,
    urlextract, usaddress) were measured in their place on the real-page questions and none scored better
    on the development split (``benchmarks/results/entities.md``), so the reader uses the rules.
    """

    dates: Callable[[str], list[tuple[int, int, str]]] = find_dates
    emails: Callable[[str], list[str]] = find_emails
    urls: Callable[[str], list[str]] = find_urls
    _: KW_ONLY
    postal_codes: Callable[[str], list[str]] = find_postal_codes
    streets: Callable[[str], list[str]] = find_streets
    name_line: Callable[[str], bool] = is_name_line


#: The finders the reader uses.
RULES = Finders()


def _emails(sq: SpanQuestion, layout: Layout, matcher: Matcher, finders: Finders) -> list[Candidate]:
    found = [(item, email, 1.0) for item in layout.items for email in finders.emails(item.text)]
    return _typed(found, layout, matcher, "e-mail address")


def _urls(sq: SpanQuestion, layout: Layout, matcher: Matcher, finders: Finders) -> list[Candidate]:
    found = [(item, url, 1.0) for item in layout.items for url in finders.urls(item.text)]
    return _typed(found, layout, matcher, "URL")


def _postal(sq: SpanQuestion, layout: Layout, matcher: Matcher, finders: Finders) -> list[Candidate]:
    found = []
    for item in layout.items:
        for code in finders.postal_codes(item.text):
            # an address line: the code is followed or preceded by a place name, not embedded in prose
            prior = 1.0 if len(item.text.split()) <= 8 else 0.6
            found.append((item, code, prior))
    return _typed(found, layout, matcher, "postal code")


def _street(sq: SpanQuestion, layout: Layout, matcher: Matcher, finders: Finders) -> list[Candidate]:
    found = [(item, street, 1.0) for item in layout.items for street in finders.streets(item.text)]
    return _typed(found, layout, matcher, "street address")


def _versions(sq: SpanQuestion, layout: Layout, matcher: Matcher) -> list[Candidate]:
    """Version strings: a dotted number after "version" / "release" / "edition" / "v", or prefixed "v1.2".

    The question's subject ("Which version of hpstatement") prefers the version printed right after it; bare
    dotted numbers count only in the title block (a ToC's "3.2" is a section, not a version)."""
    found = []
    subject = sq.subject.lower()
    want_edition = sq.ordinal == "edition"
    for item in layout.items:
        text = _norm(item.text)
        for m in VERSION_RE.finditer(text):
            before = text[: m.start()]
            prefixed = bool(m.group(1))
            worded = _VERSION_WORD.search(before)
            token = m.group(0).strip()
            number = m.group(2)
            if _YEAR_ONLY.match(number) or re.fullmatch(r"\d{1,2}", number) and not worded:
                continue
            if not (prefixed or worded) and (
                item.box.y0 > 0.45 or "." not in number or _TRAIL_PAGE.search(text) and text.strip() != token
            ):
                continue
            prior = 1.0 if (prefixed or worded) else 0.6
            if item.box.y0 < 0.35 and len(text) < 60:
                prior *= 1.15  # the title block states the document's own version
            if (
                _TRAIL_PAGE.search(text)
                and text.strip() != m.group(0).strip()
                and _LEADERS.search(text)
                or re.match(r"^\d+(\.\d+)*\.?\s", text)
            ):
                prior *= 0.7  # a table-of-contents row mentioning a version
            if subject:
                idx = text.lower().find(subject)
                if idx >= 0 and idx < m.start():
                    gap = len(text[idx + len(subject) : m.start()].split())
                    prior *= 1.25 if gap <= 2 else 1.05
                elif idx < 0:
                    prior *= 0.8
            if worded and worded.group(1).lower() == "edition":
                prior *= 1.2 if want_edition else 0.85
                token = number
            elif worded and worded.group(1).lower().startswith("v") and len(worded.group(1)) <= 2:
                token = (worded.group(1) + number).replace(" ", "")
            found.append(
                (
                    item,
                    token
                    if prefixed
                    else number
                    if not worded or not worded.group(1).lower().startswith("v")
                    else token,
                    prior,
                )
            )
    if want_edition:
        for item in layout.items:
            for m in _EDITION_WORD.finditer(_norm(item.text)):
                found.append((item, m.group(1), 1.3))
    return _typed(found, layout, matcher, "version number")


_EDITION_WORD = re.compile(
    r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|\d+(?:st|nd|rd|th))\s+edition\b", re.I
)
_FOREIGN_MONTHS = (
    "januari|februari|maart|mei|juni|juli|augustus|oktober|januar|februar|märz|maerz|dezember|janvier|février|"
    "fevrier|mars|avril|mai|juin|juillet|août|aout|septembre|octobre|novembre|décembre|decembre|enero|febrero|"
    "marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|gennaio|febbraio|aprile|maggio|"
    "giugno|luglio|settembre|ottobre|dicembre"
)
_FOREIGN_DATE = re.compile(rf"\b\d{{1,2}}\.?\s+(?:{_FOREIGN_MONTHS})\s+\d{{4}}\b", re.I)
_DATE_EXTRA = re.compile(r"\b\d{4}\s?/\s?\d{1,2}\s?/\s?\d{1,2}\b|\b\d{4}-\d{2}-\d{2}\b")


def _dates(sq: SpanQuestion, layout: Layout, matcher: Matcher, finders: Finders) -> list[Candidate]:
    """Dates; a line that is only a date near the top is the document's own date."""
    found = []
    for item in layout.items:
        text = _norm(item.text)
        for start, end, span in finders.dates(text):
            rest = (text[:start] + text[end:]).strip(" ,.()[]-")
            alone = len(rest) <= 6 or bool(re.fullmatch(r"v?\d+(\.\d+)+[a-z]?", rest))
            top = item.box.y0 < 0.5
            prior = 1.0 if alone and top else 0.85 if alone else 0.8
            found.append((item, span.strip(" ,."), prior))
    return _typed(found, layout, matcher, "date")


_NAME_TOKEN = re.compile(r"^(?:[A-ZÀ-ÖØ-Þ][\wÀ-ÿ'’-]*\.?|[A-Za-z]\.|de|la|van|der|von|da|di|le|du|den|ter|&|and)$")
_NOT_NAME = frozenset(
    """the package manual guide edition version documentation program book class bundle language collection
    typesetting macros contents abstract introduction table chapter section copyright university laboratory
    school department institute federal republic germany france usa for with of in on to interactive quick
    reference card extending experimental modern draw compute user""".split()
)


def name_text(item: Item, name_line: Callable[[str], bool] = is_name_line) -> str | None:
    """``item``'s text as a person-name line (symbols, e-mails and parentheses removed), or None."""
    text = re.sub(r"\([^)]*\)|\S+@\S+|[∗*†‡§¶]+|\d+$", " ", _norm(item.text))
    text = re.sub(r"[“\"]_?[^”\"]*_?[”\"]", " ", text)  # a nickname in quotes
    text = re.sub(r"\s+", " ", text).strip(" ,;")
    return text if text and name_line(text) else None


def _authors(sq: SpanQuestion, layout: Layout, matcher: Matcher, finders: Finders) -> list[Candidate]:
    """Names in the title block: name-shaped lines under the main heading, in reading order."""
    items = sorted((i for i in layout.items if i.box.y0 < 0.55), key=lambda i: (round(i.cy, 3), i.box.x0))
    if not items:
        return []
    top = (
        [i for i in items if i.box.y0 < 0.35 and len(i.text.strip()) > 2]
        or [i for i in items if len(i.text.strip()) > 2]
        or items
    )
    heading = max(top, key=lambda i: i.h)
    runs: list[list[tuple[Item, str]]] = [[]]
    for item in items:
        if item is heading or item.box.y0 < heading.box.y0 - 0.5 * heading.h:
            continue
        text = name_text(item, finders.name_line)
        if text:
            runs[-1].append((item, text))
        elif runs[-1]:
            runs.append([])
    runs = [r for r in runs if r]
    if not runs:
        return []
    # The authors are the first run of name lines under the title; later runs list contributors.
    block = runs[0]
    others = [n for r in runs if r is not block for n in r]
    ordered = (list(reversed(block)) if sq.ordinal == "last" else block) + others
    qualifiers = {w for w in ("active", "current", "main", "original", "maintainer") if w == sq.ordinal}
    out = []
    for rank, (item, text) in enumerate(ordered[:6]):
        single = re.split(r"\s+(?:&|and)\s+", text)
        span = single[0] if sq.ordinal in ("first", "main") and len(single) > 1 else text
        score = (0.72 - 0.06 * rank) * (0.7 + 0.3 * item.confidence)
        if qualifiers and any(re.search(rf"\b{q}\b", item.text, re.I) for q in qualifiers):
            score += 0.2  # "Maïeul Rouquette (active)"
        out.append(Candidate(span, score, "title-block name", items=[item]))
    return out


def _toc_rows(layout: Layout) -> list[tuple[Item, str, str, list[Item]]]:
    """ToC rows: (first item, entry text, page number, items) for entries that end in a page number.

    A visual line is read left to right and cut after every page number, so a two-column contents page gives
    one row per column; an OCR line that merged two columns ("1. License 3 6.3. Greek Letters 13") is cut
    where a page number is followed by a new section number."""
    rows = []
    seen: set[int] = set()
    for item in sorted(layout.items, key=lambda i: (round(i.cy, 3), i.box.x0)):
        if item.index in seen:
            continue
        line = sorted([item] + [o for o in layout.same_row(item, 0.5) if o.index not in seen], key=lambda o: o.box.x0)
        segment: list[Item] = []
        for o in line:
            seen.add(o.index)
            segment.append(o)
            if not _ends_in_page(o.text) and o is not line[-1]:
                continue
            text = _norm(" ".join(i.text for i in segment))
            for piece in _COLUMN_CUT.split(text):
                m = _TRAIL_PAGE.search(piece)
                if not m:
                    continue
                entry = _LEADERS.sub(" ", piece[: m.start()]).strip(" .·…")
                if len(re.sub(r"[^A-Za-z]", "", entry)) >= 2:
                    rows.append((segment[0], entry, m.group(1), list(segment)))
            segment = []
    return rows


def _ends_in_page(text: str) -> bool:
    """An entry with words that ends in a page number ("Preface . . . 5", or the lone "5" of a split row)."""
    text = _norm(text)
    if re.fullmatch(r"\d{1,4}", text):
        return True
    m = _TRAIL_PAGE.search(text)
    return m is not None and bool(re.search(r"[A-Za-z]", text[: m.start()]))


_COLUMN_CUT = re.compile(
    r"(?<=\s\d)\s+(?=\d+(?:\.\d+)*\.?\s+[A-Z])|(?<=\s\d\d)\s+(?=\d+(?:\.\d+)*\.?\s+[A-Z])|(?<=\s\d\d\d)\s+(?=\d+(?:\.\d+)*\.?\s+[A-Z])"
)


def _toc_page(sq: SpanQuestion, layout: Layout, matcher: Matcher) -> list[Candidate]:
    subject = _squash(sq.subject)
    out = []
    for item, entry, page, row in _toc_rows(layout):
        number = re.match(r"^(\d+(?:\.\d+)*)\.?\s+", entry)
        title = entry[number.end() :] if number else entry
        title_sq = _squash(title)
        sim = fuzz.token_set_ratio(subject, title_sq) / 100.0 if subject else 0.0
        full = fuzz.ratio(subject, title_sq) / 100.0 if subject else 0.0
        sim = 0.5 * sim + 0.5 * full
        if sq.section and number and number.group(1) == sq.section:
            sim = max(sim, 0.9) + 0.1
        if sim < 0.6:
            continue
        out.append(
            Candidate(
                page, min(0.35 + 0.6 * sim, 0.97) * (0.7 + 0.3 * item.confidence), "table-of-contents row", items=row
            )
        )
    return out


def _section_title(sq: SpanQuestion, layout: Layout, matcher: Matcher) -> list[Candidate]:
    out = []
    for item, entry, _page, row in _toc_rows(layout):
        m = re.match(r"^(\d+(?:\.\d+)*)\.?\s+(.+)$", entry)
        if m and m.group(1) == sq.section:
            out.append(
                Candidate(m.group(2).strip(), 0.9 * (0.7 + 0.3 * item.confidence), "table-of-contents row", items=row)
            )
    if not out:  # a heading in the body ("1.2 The classes of SI units")
        for item in layout.items:
            m = re.match(rf"^{re.escape(sq.section)}\.?\s+(.+)$", _norm(item.text))
            if m:
                out.append(Candidate(m.group(1).strip(), 0.75, "numbered heading", items=[item]))
    return out


def _caption(sq: SpanQuestion, layout: Layout, matcher: Matcher) -> list[Candidate]:
    out = []
    label = sq.section.lower()
    for item in layout.items:
        text = _norm(item.text)
        m = re.match(rf"^\s*{re.escape(label)}\s*[:.]\s*(.+)$", text, re.I)
        if m:
            caption = m.group(1).strip()
            first = re.split(r"(?<=[a-z])\.\s", caption)[0].rstrip(". ")
            out.append(Candidate(first, 0.9 * (0.7 + 0.3 * item.confidence), "caption", items=[item]))
    return out


def _compact(text: str) -> str:
    return re.sub(r"\s+", "", _norm(text)).lower()


def _define(sq: SpanQuestion, layout: Layout, matcher: Matcher) -> list[Candidate]:
    """ "What does X do?": the description printed right of the term X (a reference card, a glossary)."""
    subject = _compact(sq.subject)
    out = []
    for item in layout.items:
        text = _compact(item.text)
        if not text.startswith(subject[: max(1, len(subject) - 1)]):
            continue
        sim = fuzz.ratio(subject, text[: len(subject)]) / 100.0
        right = layout.right_of(item)
        if len(text) <= len(subject) + 2 and right:
            out.append(Candidate(right[0].text.strip(), 0.85 * sim, "term and description", items=[item, right[0]]))
        elif len(text) > len(subject) + 2:
            # term and description read as one line: the description is what follows the term
            raw = _norm(item.text)
            cut, seen = 0, 0
            while cut < len(raw) and seen < len(subject):
                if not raw[cut].isspace():
                    seen += 1
                cut += 1
            rest = raw[cut:].strip()
            if rest and re.match(r"^[a-z]", rest):
                out.append(Candidate(rest, 0.7 * sim, "term and description", items=[item]))
    return out


def _term(sq: SpanQuestion, layout: Layout, matcher: Matcher) -> list[Candidate]:
    """ "Which command does Y?": the term printed left of the description that best says Y."""
    subject = _squash(sq.subject)
    out = []
    for item in layout.items:
        text = _squash(item.text)
        if len(text) < 4:
            continue
        sim = 0.5 * fuzz.token_set_ratio(subject, text) / 100.0 + 0.5 * fuzz.ratio(subject, text) / 100.0
        if sim < 0.6:
            continue
        left = layout.left_of(item)
        if left:
            out.append(Candidate(left[0].text.strip(), sim * 0.9, "description and term", items=[left[0], item]))
    return out


_ISSUE = re.compile(r"\b(?:issue|no\.?|number|nr\.?|heft)\s*#?\s*(\d+(?:[/-]\d+)?)\b", re.I)
_VOLUME = re.compile(r"\b(?:volume|vol\.?|jahrgang|bd\.?)\s*(\d+)\b", re.I)


def _issue(sq: SpanQuestion, layout: Layout, matcher: Matcher) -> list[Candidate]:
    """Issue / volume numbers: a masthead or running header states them; the same words in a paragraph
    ("see issue 3") count much less."""
    pattern = _VOLUME if sq.subject == "volume" else _ISSUE
    found = []
    for item in layout.items:
        for m in pattern.finditer(_norm(item.text)):
            header = item.box.y0 < 0.12 or item.box.y1 > 0.92
            prose = len(item.text.split()) > 12
            found.append((item, m.group(1), (1.2 if header else 0.8) * (0.5 if prose else 1.0)))
    return _typed(found, layout, matcher, "issue / volume number")


def _agent(sq: SpanQuestion, layout: Layout, matcher: Matcher) -> list[Candidate]:
    """ "Who organized / prepared / created X?": the name after "<verb> by" on the page."""
    stem = sq.subject[:-2] if sq.subject.endswith("ed") else sq.subject
    stem = stem[:-1] if stem.endswith("e") else stem
    out = []
    ordered = sorted(layout.items, key=lambda i: (round(i.cy, 3), i.box.x0))
    for k, item in enumerate(ordered):
        text = _norm(item.text)
        m = re.search(rf"\b{re.escape(stem)}\w*\s+by:?\s*(.*)$", text, re.I)
        if not m:
            continue
        rest = m.group(1).strip()
        if not rest and k + 1 < len(ordered):
            rest = _norm(ordered[k + 1].text)
        name = re.match(r"((?:[A-Z][\w'’.-]*|de|la|van|von|der)(?:\s+(?:[A-Z][\w'’.-]*|de|la|van|von|der))*)", rest)
        if name:
            span = trim_span(name.group(1).rstrip("."), "name")
            out.append(
                Candidate(
                    span,
                    (0.55 + 0.4 * matcher.match(item)[0]) * (0.7 + 0.3 * item.confidence),
                    "named after 'by'",
                    items=[item],
                )
            )
    return out


_YEAR = re.compile(r"\b(1[5-9]\d\d|20\d\d)\b")


def _year(sq: SpanQuestion, layout: Layout, matcher: Matcher) -> list[Candidate]:
    """ "In which year ...": the year in the line that carries the question's words best."""
    out = []
    for score, item in matcher.ranked()[:5]:
        nxt = layout.below(item, 1.2)[:1]
        for source_item in [item] + nxt:
            for m in _YEAR.finditer(source_item.text):
                weight = 1.0 if source_item is item else 0.8
                out.append(
                    Candidate(
                        m.group(1), min(0.4 + 0.55 * score, 0.95) * weight, "year in the matching line", items=[item]
                    )
                )
    return out


_YEAR_RANGE = re.compile(r"\b(1[5-9]\d\d|20\d\d)\s?[-–]\s?(1[5-9]\d\d|20\d\d)\b")


def _years(sq: SpanQuestion, layout: Layout, matcher: Matcher) -> list[Candidate]:
    found = [
        (item, f"{m.group(1)}-{m.group(2)}", 1.0)
        for item in layout.items
        for m in _YEAR_RANGE.finditer(_norm(item.text))
    ]
    return _typed(found, layout, matcher, "range of years")


def trim_span(text: str, kind: str) -> str:
    """Trim what is not part of a ``kind`` answer: connectives, brackets, a trailing "and many others"."""
    text = text.strip()
    if kind in ("name", "author"):
        text = re.sub(r"^(?:and|by|from|&)\s+", "", text, flags=re.I)
        text = re.sub(r"\s+(?:and|&)\s+(?:many\s+)?others\b.*$|\s+et al\.?.*$", "", text, flags=re.I)
    text = text.strip(" ,;:(")
    if text.count("(") < text.count(")"):
        text = text.rstrip(")")
    return text


__all__ = [
    "RULES",
    "Finders",
    "SpanQuestion",
    "classify",
    "find_dates",
    "find_emails",
    "find_postal_codes",
    "find_streets",
    "find_urls",
    "is_name_line",
    "span_candidates",
    "trim_span",
]
