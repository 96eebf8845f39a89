"""Question analysis: what the answer looks like and which words locate the evidence."""

from __future__ import annotations

import re
from dataclasses import KW_ONLY, dataclass, field

STOPWORDS = frozenset(
    """a an the of in on at to for from by with and or as is are was were be been being this that these those it its
    what which who whom whose when where why how does do did can could should would will shall may might must
    has have had there their them they he she his her you your we our i me my us per than then into onto over under
    according shown show shows given listed mentioned stated written displayed indicated reported
    page document chart graph table figure plot image picture please tell find give state provide much many""".split()
)
#: Words that often name a field but say little on their own; they count less when matching evidence.
GENERIC_WORDS = frozenset("value values number amount name total data year date".split())
#: Question words -> words documents use as labels for the same field.
CONCEPTS = {
    "wrote|written|writer|author|authored": ("prepared", "author", "by"),
    "copy|copied": ("cc",),
    "customer|client|billed": ("bill", "customer", "client", "sold"),
    "card": ("card", "debit", "credit", "visa", "mastercard"),
    "sender|sent": ("from",),
    "recipient|addressed|receives|receive": ("to", "attention"),
    "signed|signature|signs": ("signature", "sincerely", "regards", "faithfully", "truly", "signed"),
    "cashier|served": ("cashier", "server", "clerk"),
    "department": ("department", "dept"),
    "subject|about|regarding": ("subject", "re"),
    "phone": ("tel", "telephone"),
    "paid|payment": ("paid", "payment", "total"),
}
#: Questions answered by the document's main heading (the issuer, the title).
HEADING_RE = re.compile(
    r"\b(title|headline|heading)\b|\bname of the (store|shop|company|business|merchant|restaurant|organi[sz]ation|firm)\b"
    r"|\bwhere was (this|the) (purchase|receipt|order)\b|\bwhich (store|shop|company|business|merchant|restaurant)\b|\bwho (issued|sent) (this|the) (receipt|invoice)\b"
)
#: Words that ask for the whole-column/row aggregate or comparison rather than a single cell.
MAX_WORDS = (
    "peak",
    "highest",
    "largest",
    "biggest",
    "greatest",
    "most",
    "maximum",
    "max",
    "top",
    "peak",
    "tallest",
    "longest",
    "best",
)
MIN_WORDS = ("lowest", "smallest", "least", "minimum", "min", "fewest", "shortest", "bottom", "worst")


@dataclass
class QuestionInfo:
    """What a question asks for.

    ``answer_type``: number | money | percent | date | name | id | yesno | truefalse | count | category | text.
    ``intent``: lookup | max | min | diff | sum | avg | count | verify | ratio.
    ``keywords``: content words that should appear near the evidence. ``phrases``: longer spans (quoted text,
    capitalised names, runs of content words) to match against OCR lines.
    """

    text: str
    answer_type: str
    intent: str
    _: KW_ONLY
    keywords: list[str]
    phrases: list[str] = field(default_factory=list)
    targets: list[str] = field(default_factory=list)  # e.g. the two things compared in a difference question
    condition: tuple[str, float] | None = None  # count questions: ("above", 41.0)
    heading: bool = False  # asks for the document's title / issuer (its largest heading)


_WORD_RE = re.compile(r"[A-Za-z0-9$%][A-Za-z0-9$%&'./-]*")


def content_words(text: str) -> list[str]:
    words = [w.strip(".'").lower() for w in _WORD_RE.findall(text)]
    return [w for w in words if w and w not in STOPWORDS and len(w) > 1 or w.isdigit()]


def _phrases(question: str) -> list[str]:
    phrases: list[str] = []
    phrases += [m.strip() for m in re.findall(r"[\"“'‘]([^\"”'’]{2,60})[\"”'’]", question)]
    # Runs of content words between stop words are candidate field names ("total amount due", "invoice number").
    tokens = [t.strip("?.,;:!()") for t in question.split()]
    run: list[str] = []
    for tok in tokens + [""]:
        low = tok.lower()
        if tok and low not in STOPWORDS and not low.startswith(("what", "which", "how")):
            run.append(tok)
        else:
            if run:
                phrases.append(" ".join(run))
            run = []
    seen, out = set(), []
    for p in sorted(phrases, key=len, reverse=True):
        if p.lower() not in seen and len(p) > 1:
            seen.add(p.lower())
            out.append(p)
    return out


_YESNO_TAIL = re.compile(
    r"\s*\(?\s*answer\s+(?:with\s+)?(?:yes|no|true|false)(?:\s+or\s+(?:yes|no|true|false))?\s*\.?\)?\s*$", re.I
)


def strip_yesno(question: str) -> str:
    """The question without an "Answer yes or no." instruction.

    >>> strip_yesno("Is A larger than B? Answer yes or no.")
    'Is A larger than B?'
    """
    return _YESNO_TAIL.sub("", question.strip()).strip()


def analyse(question: str, task: str = "doc") -> QuestionInfo:
    """Classify the expected answer and pick the locating words of ``question``.

    >>> q = analyse("What is the total amount due on the invoice?")
    >>> q.answer_type, q.intent, q.keywords
    ('money', 'lookup', ['total', 'amount', 'due', 'invoice'])
    >>> analyse("Which country has the highest share?", "chart").intent
    'max'
    """
    q = question.strip()
    low = strip_yesno(q).lower()
    words = re.findall(r"[a-z]+", low)
    first = words[0] if words else ""
    intent = "lookup"
    answer_type = "text"

    if (
        re.search(r"\b(true or false|is it true)\b", low)
        # on a document a statement is often the page itself ("When does the statement period end?"): there it
        # asks for a verdict only when the question says so
        or re.search(r"\b(claim|statement)\b", low)
        and (task != "doc" or re.search(r"\b(true|false|correct|supported|refuted)\b", low))
        or task == "table"
        and re.search(r"\b(true|false)\b", low)
    ):
        intent, answer_type = "verify", "truefalse"
    elif (
        first in ("is", "are", "does", "do", "did", "was", "were", "can", "has", "have", "will", "should")
        and " or " not in low
    ):
        intent, answer_type = "verify", "yesno"
    elif (
        re.search(r"\bhow many\b|\bcount\b", low)
        or re.search(r"\bnumber of (?!the )\w+s\b", low)
        and not any(re.search(rf"\b{w}\b", low) for w in MAX_WORDS + MIN_WORDS + ("peak",))
    ) and not re.search(r"\bhow many (dollars|percent|points|units)\b", low):
        intent, answer_type = "count", "count"
    elif re.search(r"^(which|who)\b.*\bor\b", low) and re.search(
        r"\b(more|less|higher|lower|greater|larger|bigger|smaller|fewer|most|least)\b", low
    ):
        intent, answer_type = "compare", "category"
    elif re.search(
        r"\b(difference|differ|gap|change|changed|increase|increased|decrease|decreased|grow|grew|growth|drop|dropped|decline|declined|rise|rose|fall|fell)\b|\bhow much (more|less|higher|lower|greater|bigger|smaller)\b|\b(more|less|higher|lower) than\b",
        low,
    ):
        intent, answer_type = "diff", "number"
    elif re.search(r"\b(sum|combined|altogether|in total|total of)\b", low):
        intent, answer_type = "sum", "number"
    elif re.search(r"\b(average|mean)\b", low):
        intent, answer_type = "avg", "number"
    elif re.search(r"\bratio\b|\btimes (as|more)\b", low):
        intent, answer_type = "ratio", "number"
    elif any(re.search(rf"\b{w}\b", low) for w in MAX_WORDS) and (
        first in ("which", "who", "what", "name") or "category" in low
    ):
        intent = "max"
        answer_type = (
            "category"
            if re.match(
                r"(which|who)\b|what (is|was) the (name|category|label|country|year|month|company|product|item|region)",
                low,
            )
            else "number"
        )
    elif any(re.search(rf"\b{w}\b", low) for w in MIN_WORDS) and (
        first in ("which", "who", "what", "name") or "category" in low
    ):
        intent = "min"
        answer_type = (
            "category"
            if re.match(
                r"(which|who)\b|what (is|was) the (name|category|label|country|year|month|company|product|item|region)",
                low,
            )
            else "number"
        )

    if intent == "lookup":
        if first in ("who", "whom") or re.search(r"\bin whose name\b", low):
            # a person or a body, whatever field names it ("Who is the account holder?", "Who owns the budget?")
            answer_type = "name"
        elif re.search(r"^when\b|\b(?:what|which) (?:date|day)\b", low) and not re.search(r"\bamount\b", low):
            # asked for by its kind before any field word ("On what date was the phone bill transaction?")
            answer_type = "date"
        elif re.search(r"\b(terms|method|status|type|mode|category|description|title|subject|purpose|reason)\b", low):
            answer_type = "text"
        elif re.search(r"\b(which|what) (city|town|country|place|location|venue|room|building)\b|^where\b", low):
            answer_type = "name"
        elif re.search(
            r"\b(number|no\.?|id|code|reference|ref|account|zip|postcode|phone|telephone|fax|e-?mail|website|address)\b",
            low,
        ) and not re.search(r"\bhow\b|\bnumber of\b", low):
            answer_type = "id"
        elif re.search(
            r"\b(when|date|day|deadline|dated|due on|issued on)\b|\b(which|what) month\b|\bmonth and year\b", low
        ) and not re.search(r"\bamount\b", low):
            answer_type = "date"
        elif re.search(r"\b(percent|percentage|rate|share|%)\b", low):
            answer_type = "percent"
        elif re.search(
            r"\b(price|cost|amount|total|balance|fee|salary|revenue|sales|income|paid|pay|payment|budget|tax|subtotal|charge|\$)\b",
            low,
        ):
            answer_type = "money"
        elif re.search(
            r"\b(who|whom|which person|name of the (person|manager|author|sender|recipient|customer|client))\b", low
        ) or re.search(r"\b(signed|addressed|sent|prepared|approved|written)\s+by\b", low):
            answer_type = "name"
        elif (
            re.search(
                r"\b(how much|how long|how old|value|score|quantity|qty|weight|height|age|count|number|figure|level|percentage|year)\b",
                low,
            )
            or task == "chart"
        ):
            answer_type = "number"

    if intent == "lookup" and re.search(r"\blast (four|4|three|3) digits\b", low):
        answer_type = "digits"
    keywords = content_words(q)
    # Questions name fields by what they mean; documents label them with their own words.
    for trigger, labels in CONCEPTS.items():
        if re.search(rf"\b{trigger}\b", low):
            keywords += [w for w in labels if w not in keywords]
    info = QuestionInfo(q, answer_type, intent, keywords=keywords, phrases=_phrases(q))
    if intent in ("diff", "ratio", "sum", "avg"):
        m = re.search(r"between (.+?) and (.+?)(?:\?|$|,| in | for | on )", q, re.IGNORECASE) or re.search(
            r"from (.+?) to (.+?)(?:\?|$|,| in | for | on )", q, re.IGNORECASE
        )
        if m:
            info.targets = [m.group(1).strip(" ?"), m.group(2).strip(" ?")]
    elif intent == "compare":
        m = re.search(r",?\s*([^,?]+?)\s+or\s+([^,?]+?)\s*\??$", q, re.IGNORECASE)
        if m:
            info.targets = [m.group(1).strip(" ?"), m.group(2).strip(" ?")]
            info.keywords = [k for k in info.keywords if k not in " ".join(info.targets).lower()]
    if intent == "count":
        m = re.search(
            r"\b(above|over|more than|greater than|higher than|at least|below|under|less than|lower than|fewer than|at most)\s+\$?(-?[\d,.]+)",
            low,
        )
        if m:
            info.condition = (m.group(1), float(m.group(2).replace(",", "").rstrip(".")))
    info.heading = bool(HEADING_RE.search(low))
    return info
