"""What kind of entity a span of text is: a person's name, an organisation, a country.

The reader's relation and block rules ask these questions through :data:`ENTITIES`; the defaults are word-shape
rules (capitalised tokens, institution words, a country list). ``benchmarks/reader_libraries.py`` puts spaCy's
named-entity recogniser in their place to compare them (:class:`EntityRules`).

>>> ENTITIES.person("Carmine Losekann"), ENTITIES.organisation("Price University"), ENTITIES.country("Israel")
(True, True, True)
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

ORG_WORDS = re.compile(
    r"\b(universit\w*|college|institut\w*|school|centre|center|laborator\w*|lab|academy|hospital|foundation|"
    r"corporation|company|inc|ltd|llc|gmbh|ag|sa|spa|s\.a\.s?|bv|plc|research|observatory|polytechnic|"
    r"hochschule|école|ecole|escuela|scuola|museum|agency|council|ministry|bank|group)\b",
    re.I,
)
_NAME_WORD = r"[A-ZÀ-Ý][\w'’.-]*"
_PERSON_LINE = re.compile(
    rf"^(?:(?:mr|mrs|ms|dr|prof)\.?\s+)?{_NAME_WORD}(?:\s+(?:{_NAME_WORD}|de|van|von|der|den|la|le|da|di|del|dos|du|zu)){{1,3}}$"
)
_NOT_PERSON = re.compile(
    r"\b(workshop|conference|meeting|annual|journal|model|results?|news|introduction|summary|"
    r"street|road|avenue|dear|regards|sincerely|subject|invoice|receipt|statement|total)\b",
    re.I,
)


def is_person_name(text: str) -> bool:
    """Whether ``text`` is shaped like one person's name: two to four capitalised tokens (particles allowed),
    no digit, no institution or document word."""
    t = text.strip(" ,")
    return (
        bool(_PERSON_LINE.match(t))
        and not ORG_WORDS.search(t)
        and not _NOT_PERSON.search(t)
        and not re.search(r"\d", t)
        and len(t) < 40
    )


def is_organisation(text: str) -> bool:
    """Whether ``text`` names an institution or a company (it carries an institution word or a legal form)."""
    return bool(ORG_WORDS.search(text))


_COUNTRIES = frozenset(
    """afghanistan albania algeria andorra angola argentina armenia australia austria azerbaijan bahamas bahrain
    bangladesh barbados belarus belgium belize benin bhutan bolivia bosnia botswana brazil brunei bulgaria burkina
    burundi cambodia cameroon canada chad chile china colombia congo croatia cuba cyprus czechia denmark djibouti
    dominica ecuador egypt eritrea estonia eswatini ethiopia fiji finland france gabon gambia georgia germany ghana
    greece grenada guatemala guinea guyana haiti honduras hungary iceland india indonesia iran iraq ireland israel
    italy jamaica japan jordan kazakhstan kenya kiribati kosovo kuwait kyrgyzstan laos latvia lebanon lesotho
    liberia libya liechtenstein lithuania luxembourg madagascar malawi malaysia maldives mali malta mauritania
    mauritius mexico micronesia moldova monaco mongolia montenegro morocco mozambique myanmar namibia nauru nepal
    netherlands nicaragua niger nigeria norway oman pakistan palau panama paraguay peru philippines poland portugal
    qatar romania russia rwanda samoa senegal serbia seychelles singapore slovakia slovenia somalia spain sudan
    suriname sweden switzerland syria taiwan tajikistan tanzania thailand togo tonga tunisia turkey turkmenistan
    tuvalu uganda ukraine uruguay usa uk uzbekistan vanuatu venezuela vietnam yemen zambia zimbabwe deutschland
    österreich schweiz españa italia nederland belgië belgique suisse""".split()
) | {
    "united states",
    "united kingdom",
    "new zealand",
    "south africa",
    "south korea",
    "north korea",
    "costa rica",
    "el salvador",
    "sri lanka",
    "saudi arabia",
    "united arab emirates",
    "czech republic",
    "dominican republic",
    "ivory coast",
    "puerto rico",
    "hong kong",
    "the netherlands",
    "united states of america",
}


def is_country(text: str) -> bool:
    """Whether ``text`` is a country name (English and a few native names)."""
    return re.sub(r"[^a-zà-ÿ]+", " ", text.lower()).strip() in _COUNTRIES


@dataclass(frozen=True)
class EntityRules:
    """The three questions the reader asks of a span; the defaults are this module's word-shape rules."""

    person: Callable[[str], bool] = is_person_name
    organisation: Callable[[str], bool] = is_organisation
    country: Callable[[str], bool] = is_country


#: The entity rules the reader uses (a benchmark may replace it with a library's).
ENTITIES = EntityRules()

__all__ = ["ENTITIES", "ORG_WORDS", "EntityRules", "is_country", "is_organisation", "is_person_name"]
