"""One question analysis: the :class:`Question` record every candidate source and the scorer read.

:func:`understand` analyses a question once: the expected answer type and operation
(:func:`~docintent.reader.question.analyse`), the typed span it asks for, if any
(:func:`~docintent.reader.spans.classify`), the asked field as a phrase with the words documents use as labels
for it, and the constraints it states (a year, a quoted name, "first" / "last"). The rule cascade keeps its own
views of the same record (``info`` and ``span``); nothing re-analyses the question text.

>>> q = understand("What is the invoice no.?")
>>> q.answer_type, q.field, "number" in q.synonyms
('id', 'invoice no', True)
>>> understand("Who is the author?").generic
True
"""

from __future__ import annotations

import re
from dataclasses import KW_ONLY, dataclass

from .extract import SYNONYMS
from .intent import Intent, parse_intent
from .operations import given_value
from .question import STOPWORDS, QuestionInfo, analyse
from .ranges import asked_part
from .spans import SpanQuestion, classify

#: The plain questions a new user asks of any page: the field alone, no label to look for beyond it.
GENERIC_FIELDS = frozenset(
    {
        "date",
        "title",
        "author",
        "total",
        "addressee",
        "sender",
        "recipient",
        "subject",
        "amount",
        "name",
        "number",
        "heading",
        "headline",
        "signatory",
        "issuer",
    }
)
#: Asked fields and the other words documents print as their label (English and the generator's languages).
FIELD_WORDS: dict[str, tuple[str, ...]] = {
    "author": ("by", "authors", "written", "prepared"),
    "addressee": ("to", "dear", "attention", "attn", "recipient"),
    "recipient": ("to", "dear", "attention", "attn"),
    "sender": ("from", "sincerely", "regards", "yours"),
    "date": ("dated", "datum", "fecha", "le", "issued", "on"),
    "total": ("sum", "gesamt", "summe", "importe", "montant", "due", "payable", "balance"),
    "invoice": ("rechnung", "facture", "factura", "bill"),
    "number": ("no", "nr", "num", "#", "n°", "nº", "ref"),
    "tax": ("vat", "gst", "mwst", "ust", "tva", "iva", "btw"),
    "customer": ("client", "kunde", "bill", "billed", "sold"),
    "price": ("rate", "cost", "preis", "prix", "precio", "unit"),
    "quantity": ("qty", "menge", "quantité", "cantidad", "units", "pcs"),
    "phone": ("tel", "telephone", "telefon", "téléphone", "mobile"),
    "email": ("e-mail", "mail"),
    "title": ("heading",),
    "subject": ("re", "betreff", "objet", "asunto", "regarding"),
}
_ORDINAL = re.compile(r"\b(first|last|second|third|main|corresponding)\b")
_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_QUOTED = re.compile(r"[\"“‘']([^\"”’']{2,80})[\"”’']")
_PROPER = re.compile(
    r"(?<!^)(?<![.?!]\s)\b([A-ZÀ-Ý][\w'’&.-]*(?:(?:\s+|,\s*|\s+(?:and|&|of|de|van|von|der)\s+)[A-ZÀ-Ý][\w'’&.-]*)*)"
)
#: Answer-format instructions a question may carry ("(no more than 5 words)", "Answer in at most 3 words.",
#: "Answer with a single word."): they say how to answer, not what to look for.
_INSTRUCTION = re.compile(
    r"\s*\(?\b(?:answer\s+)?(?:in|with|using)?\s*(?:at most|no more than|not more than|a single|one|up to)\s+"
    r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|single)?\s*words?\b[.:)]*\s*",
    re.I,
)
#: How plain questions name a field without its label: (pattern, field, label words to look for).
_PLAIN_FIELDS = (
    (
        re.compile(
            r"\bwho (?:is it|is this|was it|was this) (?:from|by)\b|\bwho sent (?:it|this)\b|\bwho is the sender\b"
        ),
        "sender",
        ("from", "sender", "sincerely", "regards"),
    ),
    (
        re.compile(
            r"\bto whom\b|\bwho is (?:it|this) (?:addressed |sent )?to\b|\baddressee\b|\bwho is the recipient\b"
        ),
        "addressee",
        ("to", "dear", "attention", "recipient"),
    ),
    (
        re.compile(r"\bwho wrote (?:it|this)\b|\bwho is the author\b|\bauthor of (?:it|this)\b"),
        "author",
        ("by", "author", "authors"),
    ),
    (
        re.compile(r"\bwhat is the (?:heading|headline|title)\b|\btitle of (?:the|this) (?:document|page)\b"),
        "title",
        ("title",),
    ),
)
_LIMIT = re.compile(r"\b(maximum|max|at most|limit|up to|longest|no more than|not exceed|allowed)\b")


@dataclass(frozen=True)
class Question:
    """What a question asks (see the module docstring).

    ``field``: the asked field as the question phrases it ("invoice no", "due date"); ``synonyms``: the words a
    page may label that field with; ``answer_type``: the expected type; ``operation``: look-up, max, min, diff,
    sum, avg, count, verify, compare or ratio; ``span_kind``: the typed span asked for (date, author, url...)
    or ""; ``generic``: a field alone ("What is the date?"); ``constraints``: years, quoted names, ordinals and
    limits the question states."""

    text: str
    task: str
    info: QuestionInfo
    _: KW_ONLY
    span: SpanQuestion | None
    field: str
    synonyms: frozenset[str]
    constraints: tuple[str, ...] = ()
    #: The named thing the question asks about ("In which city is *Adams Group*?"), or "".
    subject: str = ""
    #: How the question asks (:func:`shape_of`): "plain", or "gives <kind>" for a reverse look-up that names a
    #: value of that kind and asks what stands beside it ("Which fee amounts to 2.643,00 €?": "gives number").
    shape: str = "plain"
    #: The intent and its targets (:func:`~docintent.reader.intent.parse_intent` on the same analysis), which MACT's
    #: roles plan and judge by; None only for a record built by hand.
    intent: Intent | None = None
    #: The part of a printed range the question asks for (:func:`~docintent.reader.ranges.asked_part`): "start",
    #: "end", "whole", or "" for a single value.
    part: str = ""

    @property
    def answer_type(self) -> str:
        return self.info.answer_type

    @property
    def operation(self) -> str:
        return self.info.intent

    @property
    def span_kind(self) -> str:
        return self.span.kind if self.span is not None else ""

    @property
    def keywords(self) -> list[str]:
        return self.info.keywords

    @property
    def generic(self) -> bool:
        words = self.field.split()
        return bool(words) and len(words) <= 2 and all(w in GENERIC_FIELDS for w in words)

    @property
    def asks_limit(self) -> bool:
        return any(c.startswith("limit") for c in self.constraints)


def _field_phrase(info: QuestionInfo) -> str:
    """The asked field: the longest run of content words (``info.phrases``), else the keywords."""
    words = [w.strip(".?,").lower() for w in (info.phrases[0].split() if info.phrases else info.keywords)]
    words = [w for w in words if w and w not in STOPWORDS]
    return " ".join(words[:5])


def strip_instructions(question: str) -> str:
    """``question`` without answer-format instructions.

    >>> strip_instructions("What is the subtotal? (no more than 2 words)")
    'What is the subtotal?'
    >>> strip_instructions("In at most 5 words: What is the letter about?")
    'What is the letter about?'
    """
    text = _INSTRUCTION.sub(" ", question)
    text = re.sub(r"^\s*[:,.-]\s*", "", re.sub(r"\s*\bAnswer\s*[.:]?\s*$", "", text.strip(), flags=re.I))
    text = re.sub(r"\?\s*[.:]+\s*$", "?", re.sub(r"\s+", " ", text)).strip()
    return text or question.strip()


#: The kinds of given value that make a which / who question a reverse look-up.
_REVERSE_KINDS = ("number", "date", "daymonth", "time", "dimensions")
_WHICH_OR_WHO = re.compile(r"^\s*(?:which|who|on which|at which|in which)\b", re.I)


def shape_of(asked: str) -> str:
    """How ``asked`` asks: "gives <kind>" when it names a value of that kind and asks which thing or who has it
    (a reverse look-up), else "plain". A reader trained on no question of a shape leaves it to the rule cascade.

    >>> shape_of("Which merchant charged 62,56?"), shape_of("Who speaks at 11:20?")
    ('gives number', 'gives time')
    >>> shape_of("What is the line total for LED panel 60x60?"), shape_of("Who is the author of the ragged2e package?")
    ('plain', 'plain')
    """
    given = given_value(asked)
    if given is None or given[0] not in _REVERSE_KINDS or not _WHICH_OR_WHO.match(asked):
        return "plain"
    # the value stands as a word of its own, not inside a name ("the ragged2e package" gives no number)
    if not re.search(rf"(?<!\w){re.escape(given[1].strip())}(?!\w)", asked):
        return "plain"
    return f"gives {given[0]}"


def understand(question: str, task: str = "doc") -> Question:
    """The one analysis of ``question`` (see :class:`Question`)."""
    asked = strip_instructions(question)
    info = analyse(asked, task)
    intent = parse_intent(asked, task, info)  # before the field words below widen the keywords
    low = asked.lower()
    phrase = _field_phrase(info)
    for pattern, name, labels in _PLAIN_FIELDS:
        if pattern.search(low):
            phrase = name
            info.keywords = list(
                dict.fromkeys(info.keywords + [w for w in labels if w not in STOPWORDS or w in ("to", "by", "from")])
            )
            if name == "title":
                info.heading = True
            break
    synonyms: set[str] = set()
    for word in set(phrase.split()) | set(info.keywords):
        synonyms.add(word)
        synonyms.update(SYNONYMS.get(word, ()))
        synonyms.update(FIELD_WORDS.get(word, ()))
        synonyms.update(k for table in (SYNONYMS, FIELD_WORDS) for k, v in table.items() if word in v)
    constraints = [f"year:{y}" for y in _YEAR.findall(asked)]
    constraints += [f"quoted:{q}" for q in _QUOTED.findall(asked)]
    constraints += [f"ordinal:{m}" for m in _ORDINAL.findall(low)]
    if _LIMIT.search(low):
        constraints.append("limit")
    names = [re.sub(r"['’]s?$", "", m.group(1)).strip(" ,") for m in _PROPER.finditer(asked)]
    names = [n for n in names if n.lower() not in STOPWORDS and len(n) > 2]
    subject = max(names, key=len) if names else ""
    return Question(
        asked,
        task,
        info,
        span=classify(asked),
        field=phrase,
        synonyms=frozenset(synonyms),
        constraints=tuple(constraints),
        subject=subject,
        shape=shape_of(asked),
        intent=intent,
        part=asked_part(asked),
    )
