"""Shared pieces of the rendered documents: seeded field values in several locales, styles, HTML helpers.

Every document is made from one :class:`Ctx`: a ``random.Random`` and a ``Faker`` seeded from the document's
id, a locale (names, addresses, phone numbers, number and date formats), and a :class:`Style` drawn once per
document (fonts, colours, where labels sit, how tables are ruled). A layout function builds the page's HTML
from it and returns the questions whose gold answers it printed.
"""

from __future__ import annotations

import datetime as dt
import functools
import html
import importlib
import random
import re
import unicodedata
from dataclasses import dataclass, field

from faker import Faker

#: locale -> (country printed in addresses, currency symbol, currency code, symbol after the amount,
#:            decimal separator, thousands separator, date formats a document of that locale may use)
LOCALES: dict[str, tuple[str, str, str, bool, str, str, tuple[str, ...]]] = {
    "en_US": ("United States", "$", "USD", False, ".", ",", ("%B %d, %Y", "%m/%d/%Y", "%b %d, %Y")),
    "en_GB": ("United Kingdom", "£", "GBP", False, ".", ",", ("%d %B %Y", "%d/%m/%Y", "%d %b %Y")),
    "en_AU": ("Australia", "$", "AUD", False, ".", ",", ("%d %B %Y", "%d/%m/%Y")),
    "en_IE": ("Ireland", "€", "EUR", False, ".", ",", ("%d %B %Y", "%d/%m/%Y")),
    "de_DE": ("Germany", "€", "EUR", True, ",", ".", ("%d.%m.%Y", "%d %B %Y")),
    "fr_FR": ("France", "€", "EUR", True, ",", " ", ("%d/%m/%Y", "%d %B %Y")),
    "es_ES": ("Spain", "€", "EUR", True, ",", ".", ("%d/%m/%Y", "%d %B %Y")),
    "it_IT": ("Italy", "€", "EUR", True, ",", ".", ("%d/%m/%Y", "%d %B %Y")),
    "nl_NL": ("Netherlands", "€", "EUR", False, ",", ".", ("%d-%m-%Y", "%d %B %Y")),
}
LOCALE_NAMES = tuple(LOCALES)
MONTHS = (
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
)
WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday")

SANS = ("DejaVu Sans", "Liberation Sans", "Noto Sans", "Liberation Sans Narrow")
SERIF = ("DejaVu Serif", "Liberation Serif", "Noto Serif")
MONO = ("DejaVu Sans Mono", "Liberation Mono")
ACCENTS = ("#1f4e79", "#7a1f1f", "#1d6b46", "#5b2c83", "#b35900", "#00606b", "#333333", "#8a1c4a", "#2b5d9c")


@dataclass(frozen=True)
class Question:
    """One question about a page; ``evidence`` must be on the page's text layer (default: the first answer)."""

    question: str
    answers: tuple[str, ...]
    family: str
    task: str = "doc"
    evidence: tuple[str, ...] = ()

    def must_show(self) -> tuple[str, ...]:
        """The strings the build checks against the rendered text layer."""
        return self.evidence or self.answers[:1]


@dataclass
class Document:
    """A rendered document: its HTML, page size (CSS), and the questions written while building it."""

    html: str
    questions: list[Question]
    page_size: str = "A4"


@dataclass(frozen=True)
class Style:
    """Typography and structure choices drawn once per document, so no template looks the same twice."""

    font: str
    heading_font: str
    size: float  # body font size in CSS px
    accent: str
    label_side: str  # "left", "right" (label right-aligned before the value) or "above"
    rules: str  # "grid", "rows", "none", "zebra"
    align: str  # "left" or "right": where the letterhead / sender block goes
    uppercase_labels: bool


def q(
    question: str,
    answers: str | list[str] | tuple[str, ...],
    family: str,
    task: str = "doc",
    evidence: list[str] | tuple[str, ...] = (),
) -> Question:
    """A question; answers given as one string or several accepted forms (the first is the printed one)."""
    answers = (answers,) if isinstance(answers, str) else tuple(answers)
    seen: list[str] = []
    for a in answers:
        if a and a not in seen:
            seen.append(a)
    return Question(question, tuple(seen), family, task, tuple(evidence))


@dataclass
class Ctx:
    """Seeded randomness and locale-aware formatting for one document."""

    seed: int
    locale: str
    rng: random.Random = field(init=False)
    fake: Faker = field(init=False)
    style: Style = field(init=False)
    date_format: str = field(init=False)
    tx_format: str = "%d.%m.%Y"  # the short date form of a table's date column, where a layout uses one

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)
        self.fake = Faker(self.locale)
        self.fake.seed_instance(self.seed)
        r = self.rng
        serif = r.random() < 0.45
        self.style = Style(
            font=r.choice(SERIF if serif else SANS),
            heading_font=r.choice(SERIF + SANS),
            size=r.uniform(12.5, 14.5),
            accent=r.choice(ACCENTS),
            label_side=r.choice(("left", "right", "above")),
            rules=r.choice(("grid", "rows", "none", "zebra")),
            align=r.choice(("left", "right")),
            uppercase_labels=r.random() < 0.3,
        )
        self.date_format = r.choice(LOCALES[self.locale][6])

    # --- values ---------------------------------------------------------------------------------

    @property
    def country(self) -> str:
        """The country of this document's locale."""
        return LOCALES[self.locale][0]

    def pick(self, seq):
        """One element of ``seq``."""
        return self.rng.choice(list(seq))

    def sample(self, seq, k: int) -> list:
        """``k`` distinct elements of ``seq``."""
        return self.rng.sample(list(seq), k)

    def person(self) -> str:
        """A full name without titles or suffixes (so the printed name is the whole answer)."""
        for _ in range(20):
            name = f"{self.fake.first_name()} {self.fake.last_name()}"
            if 5 <= len(name) <= 28 and "." not in name:
                return name
        return name

    def people(self, k: int) -> list[str]:
        """``k`` different names with different last names (so a surname picks one person)."""
        out: list[str] = []
        while len(out) < k:
            name = self.person()
            if name.split()[-1] not in {n.split()[-1] for n in out}:
                out.append(name)
        return out

    def company(self) -> str:
        """An organisation name that fits on one line."""
        for _ in range(20):
            name = self.fake.company().replace("\n", " ")
            if 4 <= len(name) <= 34:
                return name
        return name

    def companies(self, k: int) -> list[str]:
        """``k`` different organisation names."""
        out: list[str] = []
        while len(out) < k:
            name = self.company()
            if name not in out:
                out.append(name)
        return out

    def city(self) -> str:
        """A city name of one line."""
        for _ in range(20):
            if self.locale in _UNORDERED_CITIES:
                c = self.fake.random_element(_sorted_cities(self.locale))
            else:
                c = self.fake.city()
            if len(c) <= 22:
                return c
        return c

    def cities(self, k: int) -> list[str]:
        """``k`` different cities."""
        out: list[str] = []
        while len(out) < k:
            c = self.city()
            if c not in out:
                out.append(c)
        return out

    def street(self) -> str:
        """A street line (number and street)."""
        return self.fake.street_address().replace("\n", " ")

    def postcode(self) -> str:
        """A postal code of this locale."""
        return self.fake.postcode()

    def phone(self) -> str:
        """A phone number as this locale writes it (extensions dropped)."""
        return re.split(r"\s*(?:x|ext)", self.fake.phone_number())[0]

    def email(self, name: str, domain: str | None = None) -> str:
        """An e-mail address built from a name (ASCII only)."""
        parts = [re.sub(r"[^a-z]", "", ascii_fold(p.lower())) for p in name.split()]
        user = ".".join(p for p in (parts[0][:1] if self.rng.random() < 0.4 else parts[0], parts[-1]) if p)
        return f"{user}@{domain or self.domain()}"

    def domain(self, org: str | None = None) -> str:
        """A mail domain, from an organisation name when given."""
        if org:
            word = re.sub(r"[^a-z]", "", ascii_fold(org.lower()).split()[0]) or "mail"
            return f"{word}.{self.pick(('com', 'org', 'net', 'eu', 'io'))}"
        return self.pick(("example.com", "example.org", "example.net", "mail.example"))

    def ident(self, prefix: str = "", digits: int = 6, sep: str = "-") -> str:
        """An identifier such as ``INV-2024-004817``."""
        body = "".join(str(self.rng.randrange(10)) for _ in range(digits))
        return f"{prefix}{sep}{body}" if prefix else body

    def date(self, start: dt.date | None = None, days: int = 600) -> dt.date:
        """A date within ``days`` after ``start`` (default 2023-01-01)."""
        start = start or dt.date(2023, 1, 1)
        return start + dt.timedelta(days=self.rng.randrange(days))

    def fmt_date(self, d: dt.date, fmt: str | None = None) -> str:
        """A date in this document's date format (English month names, no leading zero on long forms)."""
        return fmt_date(d, fmt or self.date_format)

    def money(self, x: float, symbol: bool = True) -> str:
        """An amount as this locale prints it, with its currency symbol unless ``symbol`` is false."""
        _, sym, _, after, dec, thou, _ = LOCALES[self.locale]
        text = number(x, 2, dec, thou)
        if not symbol:
            return text
        return f"{text} {sym}" if after else f"{sym}{text}"

    def amount_answers(self, x: float, symbol: bool = True) -> list[str]:
        """Accepted forms of an amount: as printed (with its currency symbol or, with ``symbol`` false,
        without), the other of the two, and in plain English notation."""
        return [self.money(x, symbol), self.money(x, not symbol), number(x, 2, ".", ",")]

    def time(self, minutes: int) -> str:
        """A clock time, 24 h (``14:30``) or, for US documents, 12 h (``2:30 PM``)."""
        h, m = divmod(minutes, 60)
        if self.locale == "en_US":
            return f"{(h - 1) % 12 + 1}:{m:02d} {'AM' if h < 12 else 'PM'}"
        return f"{h:02d}:{m:02d}"


#: Locales whose Faker city list is built from a set, so its order (and a seeded draw from it) changes with
#: the interpreter's hash seed; their cities are drawn from the sorted list instead.
_UNORDERED_CITIES = ("it_IT",)


@functools.cache
def _sorted_cities(locale: str) -> tuple[str, ...]:
    return tuple(sorted(set(importlib.import_module(f"faker.providers.address.{locale}").Provider.cities)))


def ascii_fold(text: str) -> str:
    """``text`` without diacritics (for e-mail addresses and domains)."""
    folded = unicodedata.normalize("NFKD", text.replace("ß", "ss").replace("ø", "o").replace("æ", "ae"))
    return "".join(c for c in folded if not unicodedata.combining(c))


def fmt_date(d: dt.date, fmt: str) -> str:
    """``strftime`` with English month / weekday names whatever the process locale, days without a zero pad
    in written-out forms (``March 5, 2024``, ``5 March 2024``)."""
    out = fmt.replace("%B", MONTHS[d.month - 1]).replace("%b", MONTHS[d.month - 1][:3])
    out = out.replace("%A", WEEKDAYS[d.weekday()]).replace("%a", WEEKDAYS[d.weekday()][:3])
    if "%B" in fmt or "%b" in fmt:
        out = out.replace("%d", str(d.day))
    return d.strftime(out)


def number(x: float, decimals: int = 2, dec: str = ".", thou: str = ",") -> str:
    """``x`` with ``decimals`` decimals and the given separators (``1.234,56``)."""
    text = f"{x:,.{decimals}f}"
    return text.replace(",", "\0").replace(".", dec).replace("\0", thou)


def e(text: object) -> str:
    """HTML-escaped text."""
    return html.escape(str(text), quote=True)


def label(ctx: Ctx, text: str) -> str:
    """A field label as this document writes labels."""
    return e(text.upper() if ctx.style.uppercase_labels else text)


def field_rows(ctx: Ctx, pairs: list[tuple[str, str]], cls: str = "kv") -> str:
    """Label / value pairs laid out as the document's style says: label left, right-aligned before the value,
    or above it (a grid of small boxes)."""
    side = ctx.style.label_side
    if side == "above":
        cells = "".join(
            f'<div class="kvbox"><div class="kvl">{label(ctx, k)}</div><div class="kvv">{e(v)}</div></div>'
            for k, v in pairs
        )
        return f'<div class="{cls} above">{cells}</div>'
    align = "right" if side == "right" else "left"
    rows = "".join(
        f'<tr><th style="text-align:{align}">{label(ctx, k)}{":" if side == "left" else ""}</th><td>{e(v)}</td></tr>'
        for k, v in pairs
    )
    return f'<table class="{cls}">{rows}</table>'


def table(
    ctx: Ctx,
    header: list[str],
    rows: list[list[str]],
    numeric: set[int] = frozenset(),
    cls: str = "data",
    foot: list[list[str]] | None = None,
    rules: str | None = None,
) -> str:
    """A data table ruled as the document's style says (full grid, row rules, none, zebra stripes)."""
    rules = rules or ctx.style.rules

    def cells(row: list[str], tag: str) -> str:
        return "".join(f"<{tag}{' class=num' if i in numeric else ''}>{e(c)}</{tag}>" for i, c in enumerate(row))

    head = f"<thead><tr>{cells(header, 'th')}</tr></thead>" if header else ""
    body = "".join(f"<tr>{cells(r, 'td')}</tr>" for r in rows)
    tail = "".join(f'<tr class="foot">{cells(r, "td")}</tr>' for r in foot or [])
    return f'<table class="{cls} rules-{rules}">{head}<tbody>{body}{tail}</tbody></table>'


def base_css(ctx: Ctx, page: str = "A4", margin: str = "16mm 17mm") -> str:
    """CSS every layout starts from: the page box, the document's fonts and colours, table rule styles."""
    s = ctx.style
    return f"""
@page {{ size: {page}; margin: 0; }}
* {{ box-sizing: border-box; }}
html, body {{ margin: 0; padding: 0; }}
body {{ font-family: '{s.font}'; font-size: {s.size:.1f}px; color: #1a1a1a; line-height: 1.35; }}
.page {{ padding: {margin}; overflow: hidden; }}
h1, h2, h3 {{ font-family: '{s.heading_font}'; color: {s.accent}; margin: 0 0 6px 0; }}
table {{ border-collapse: collapse; }}
table.kv th {{ font-weight: 600; padding: 2px 10px 2px 0; vertical-align: top; color: #444; }}
table.kv td {{ padding: 2px 0; }}
.kv.above {{ display: flex; flex-wrap: wrap; gap: 8px 22px; }}
.kvbox .kvl {{ font-size: 0.78em; color: #666; letter-spacing: 0.03em; }}
.kvbox .kvv {{ font-weight: 600; }}
table.data {{ width: 100%; margin: 8px 0; }}
table.data th, table.data td {{ padding: 4px 7px; text-align: left; }}
table.data .num {{ text-align: right; }}
table.data th {{ color: {s.accent}; }}
.rules-grid th, .rules-grid td {{ border: 1px solid #888; }}
.rules-rows th {{ border-bottom: 2px solid {s.accent}; }}
.rules-rows td {{ border-bottom: 1px solid #ccc; }}
.rules-zebra th {{ background: {s.accent}; color: #fff !important; }}
.rules-zebra tr:nth-child(even) td {{ background: #eef1f4; }}
.rules-none th {{ border-bottom: 1px solid #999; }}
tr.foot td {{ font-weight: 700; border-top: 2px solid #555; }}
"""


def page_html(css: str, body: str, title: str = "document") -> str:
    """A complete HTML file."""
    return (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><title>{e(title)}</title><style>{css}</style>'
        f"</head><body>{body}</body></html>"
    )


def address_lines(
    ctx: Ctx, name: str, org: str | None = None, city: str | None = None, country: bool = False
) -> tuple[list[str], str]:
    """Lines of a postal address and the city used; the order of postcode and city follows the locale."""
    city = city or ctx.city()
    code = ctx.postcode()
    if ctx.locale in ("en_US",):
        last = f"{city}, {ctx.fake.state_abbr()} {code}"
    elif ctx.locale in ("en_GB", "en_IE"):
        last = f"{city} {code}"
    elif ctx.locale == "en_AU":
        last = f"{city} {ctx.fake.state_abbr()} {code}"
    else:
        last = f"{code} {city}"
    lines = [name] + ([org] if org else []) + [ctx.street(), last] + ([ctx.country] if country else [])
    return lines, city


_SUBJECTS = (
    "The approach",
    "This analysis",
    "Previous work",
    "The team",
    "Our evaluation",
    "The committee",
    "The second phase",
    "A closer look",
    "The pilot study",
    "Further testing",
    "The review",
)
_VERBS = ("suggests", "confirms", "indicates", "shows", "makes clear", "does not rule out", "supports the view")
_CLAIMS = (
    "that the results hold across sites",
    "that costs remain within the agreed range",
    "that demand will grow steadily next year",
    "that the method is robust to missing data",
    "that further investment is justified",
    "that the schedule can be kept",
    "that the effect is small but consistent",
    "that smaller teams respond faster",
    "that the new process reduces errors",
    "that regional differences persist",
)
_TAILS = (
    "",
    " in most cases",
    " over the period studied",
    ", although more data are needed",
    ", as expected",
    " for the time being",
    " under normal conditions",
)


def prose(ctx: Ctx, sentences: int) -> str:
    """Plausible filler sentences (no figures, so they never compete with a gold answer)."""
    return " ".join(
        f"{ctx.pick(_SUBJECTS)} {ctx.pick(_VERBS)} {ctx.pick(_CLAIMS)}{ctx.pick(_TAILS)}." for _ in range(sentences)
    )
