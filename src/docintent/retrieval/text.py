"""Tokenisation shared by the BM25 index, the query side and the offline search planner.

Lower-cased alphanumeric runs, English stop words removed, optionally a light suffix stemmer so that a
query saying "selecting fonts" meets a page saying "font selection". The stemmer is deliberately
conservative (plural, -ing, -ed, -ion, -ly, -ment). Page text first goes through :func:`normalize`: words split by a
line-end hyphen or a soft hyphen from the PDF text layer are joined again.

Indexes are built without stemming (:data:`INDEX_STEMMING`): on the development queries of the TeX Live
benchmark it raised BM25's MRR@10 from 15.6 to 18.6, since many query words are command or package names
the stemmer conflates with ordinary words. An index records its setting, and queries are tokenised to match.

New indexes use the ``v2`` tokeniser (:data:`INDEX_TOKENIZER`): words of two or more word characters, as
``bm25s`` and scikit-learn split them, and a short stop list, Lucene's 33 English words plus the words a
question is asked with (:data:`QUESTION_WORDS`: "how", "which", "does", "I", "you"...). The first indexes
(``v1``) kept single characters and dropped a long general stop list; on the development questions written
from page content that list cost 7 points of MRR@10 against ``bm25s``'s tokens and stop words (32.0 vs 39.1),
as in manuals words such as "before", "between", "over" or "page" carry meaning, while the question words
alone gain 2.7 (41.8, both at k1 1.2; ``benchmarks/results/retrieval_tune.md``).

>>> tokenize("Selecting the Fonts of \\\\section headings")
['select', 'font', 'sect', 'head']
"""

from __future__ import annotations

import re
from functools import lru_cache

from ..errors import ConfigError

#: Token patterns by scheme name: ``alnum`` (every ASCII letter/digit run, the first indexes) and ``words2``
#: (Unicode word characters, at least two, as ``bm25s`` and scikit-learn split).
_TOKEN = re.compile(r"[a-z0-9]+")
_SCHEMES = {"alnum": _TOKEN, "words2": re.compile(r"\b\w\w+\b")}
_SPLIT_WORD = re.compile(r"(\w)(?:-\n|[\ufffe\u00ad]\s*)(\w)")
#: Whether new indexes stem their terms (see the module docstring).
INDEX_STEMMING = False

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having
    he her here hers him his how i if in into is it its itself just me more most my no nor not now of off on
    once only or other our out over own same she should so some such than that the their them then there these
    they this those through to too under until up very was we were what when where which while who whom why
    will with would you your yours page pages""".split()
)

#: Lucene's English stop words (also ``bm25s``'s ``stopwords="en"``).
LUCENE_STOPWORDS = frozenset(
    """a an and are as at be but by for if in into is it no not of on or such that the their then there these
    they this to was will with""".split()
)
#: The words a question is asked with (interrogatives, auxiliaries, the asker and the reader), which name nothing
#: a page is about; added to :data:`LUCENE_STOPWORDS` for the index (see the module docstring).
QUESTION_WORDS = frozenset(
    """what which who whom whose why how when where do does did can could would should may might shall i me my
    we our you your""".split()
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


def normalize(text: str) -> str:
    """Join words the text layer split at a line-end hyphen or a soft hyphen ("Alterna\\ufffetively").

    >>> normalize("en-\\nlarged alterna\\ufffetively")
    'enlarged alternatively'
    """
    return _SPLIT_WORD.sub(r"\1\2", text)


def tokenize(
    text: str, *, stopwords: frozenset[str] = STOPWORDS, stemming: bool = True, scheme: str = "alnum"
) -> list[str]:
    """Index terms of ``text`` in order (duplicates kept, as BM25 needs term frequencies)."""
    words = _SCHEMES[scheme].findall(normalize(text).lower())
    if stemming:
        return [stem(w) for w in words if w not in stopwords]
    return [w for w in words if w not in stopwords]


#: Named tokenisers (token pattern, stop words) an index can be built with; the name is saved with it.
TOKENIZERS: dict[str, tuple[str, frozenset[str]]] = {
    "v1": ("alnum", STOPWORDS),
    "v2": ("words2", LUCENE_STOPWORDS | QUESTION_WORDS),
}
#: The tokeniser of new indexes (see the module docstring); indexes saved without a name used "v1".
INDEX_TOKENIZER = "v2"


def index_terms(text: str, tokenizer: str = INDEX_TOKENIZER, *, stemming: bool = INDEX_STEMMING) -> list[str]:
    """Terms of ``text`` as an index built with the named tokeniser sees them.

    >>> index_terms("How do I rotate the picture of a page by 90 degrees?")
    ['rotate', 'picture', 'page', '90', 'degrees']
    """
    try:
        scheme, stopwords = TOKENIZERS[tokenizer]
    except KeyError:
        raise ConfigError(f"unknown tokenizer {tokenizer!r}; valid: {', '.join(TOKENIZERS)}") from None
    return tokenize(text, stopwords=stopwords, stemming=stemming, scheme=scheme)
