"""Tokenisation shared by the BM25 index, the query side and the offline search planner.

Lower-cased alphanumeric runs, English stop words removed, and a light suffix stemmer so that a query
saying "selecting fonts" meets a page saying "font selection". The stemmer is deliberately conservative
(plural, -ing, -ed, -ion, -ly, -ment): a wrong conflation costs more precision than it gains recall on
technical manuals, where many words are command or package names.

>>> tokenize("Selecting the Fonts of \\\\section headings")
['select', 'font', 'sect', 'head']
"""

from __future__ import annotations

import re
from functools import lru_cache

_TOKEN = re.compile(r"[a-z0-9]+")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers him his how i if in into is it its itself just me more most my no nor not now of off on
    once only or other our out over own same she should so some such than that the their them then there these
    they this those through to too under until up very was we were what when where which while who whom why
    will with would you your yours page pages""".split()
)

# Suffixes tried longest first; each keeps a stem of at least 3 characters.
_SUFFIXES = ("ations", "ation", "ments", "ment", "ings", "ing", "ions", "ion", "edly", "ed", "ly", "ies", "es", "s")


@lru_cache(maxsize=200_000)
def stem(word: str) -> str:
    """Strip one common English suffix (see the module docstring); digits and short words are kept as is."""
    if len(word) <= 4 or word.isdigit():
        return word
    for suffix in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            base = word[: -len(suffix)]
            if suffix == "ies":
                return base + "y"
            if suffix == "es" and not base.endswith(("s", "x", "z", "ch", "sh")):
                # "types" -> "typ" would split from "type": drop only the "s".
                return word[:-1]
            if suffix == "s" and word.endswith("ss"):
                return word
            if suffix in ("ing", "ed", "ings") and len(base) >= 4 and base[-1] == base[-2] and base[-1] not in "lsz":
                base = base[:-1]  # "setting" -> "set"
            return base
    return word


def tokenize(text: str, *, stopwords: frozenset[str] = STOPWORDS, stemming: bool = True) -> list[str]:
    """Index terms of ``text`` in order (duplicates kept, as BM25 needs term frequencies)."""
    words = _TOKEN.findall(text.lower())
    if stemming:
        return [stem(w) for w in words if w not in stopwords]
    return [w for w in words if w not in stopwords]
