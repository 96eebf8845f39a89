"""Answer candidates from a page layout: key-value reading and row/column intersection.

Documents are read generically: a field's value sits right of its label, after a colon on the same line, or
just below it; a table cell sits where the row of its row label meets the column under its header. Nothing
here knows any particular template.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import KW_ONLY, dataclass, field

from rapidfuzz import fuzz

from ..layout.lines import Item, Layout, h_overlap
from .question import GENERIC_WORDS, QuestionInfo
from .values import DATE_RE, clean_span, find_dates, find_numbers, format_number

#: Abbreviations documents use for common field words (matched both ways).
SYNONYMS = {
    "number": ("no", "no.", "#", "num", "nr"),
    "telephone": ("tel", "tel.", "phone"),
    "phone": ("tel", "tel.", "telephone"),
    "quantity": ("qty", "qty."),
    "amount": ("amt", "amt."),
    "reference": ("ref", "ref."),
    "identifier": ("id",),
    "account": ("acct", "a/c"),
    "department": ("dept", "dept."),
    "address": ("addr",),
    "total": ("sum",),
    "e-mail": ("email",),
    "email": ("e-mail",),
    "percent": ("%", "pct"),
    "birth": ("dob",),
    "units": ("qty", "quantity"),
    "date": ("datum", "dated", "fecha"),
    "tax": ("vat", "gst", "hst", "mwst", "ust", "tva", "iva", "btw"),
    "vat": ("tax", "mwst", "ust", "tva", "iva", "btw"),
}
#: Tokens that are labels, never values ("No." after "Invoice").
LABEL_TOKENS = frozenset({"no", "no.", "#", "nr", "id", "ref", "tel", "to", "from", "date", "name", "amount", "total"})


@dataclass
class Candidate:
    """A possible answer with its score and the items that support it."""

    text: str
    score: float
    source: str
    _: KW_ONLY
    items: list[Item] = field(default_factory=list)
    value: float | None = None


_TOKEN_RE = re.compile(r"[A-Za-z0-9$%#&@][A-Za-z0-9$%#&@'./,-]*")


def tokens(text: str) -> list[str]:
    return [t.strip(".,:;'").lower() for t in _TOKEN_RE.findall(text) if t.strip(".,:;'")]


def word_match(keyword: str, token: str) -> float:
    """How well a document token carries a question keyword (1 exact, 0.95 synonym, 0.9 inflection, fuzzy)."""
    if keyword == token:
        return 1.0
    if token in SYNONYMS.get(keyword, ()) or keyword in SYNONYMS.get(token, ()):
        return 0.95
    if len(keyword) >= 4 and len(token) >= 4 and (token.startswith(keyword) or keyword.startswith(token)):
        return 0.9  # plural / inflection: "amounts", "paid"/"payment" is not caught, "sales"/"sale" is
    if len(keyword) < 4 or len(token) < 3:
        return 0.0
    r = fuzz.ratio(keyword, token) / 100.0
    return r if r >= 0.8 else 0.0


@dataclass(frozen=True)
class LabelMatching:
    """How a question keyword is matched to a document token (default :func:`word_match`: exact, synonym,
    inflection, fuzzy spelling). ``benchmarks/reader_libraries.py`` puts sentence embeddings in its place."""

    word: Callable[[str, str], float] = word_match


#: The keyword matching the reader uses (a benchmark may replace it).
MATCHING = LabelMatching()


class Matcher:
    """Scores how well OCR items carry the question's locating words (IDF-weighted fuzzy coverage)."""

    def __init__(self, info: QuestionInfo, layout: Layout) -> None:
        self.info = info
        self.layout = layout
        self.keywords = [k for k in dict.fromkeys(info.keywords) if k]
        n = max(len(layout.items), 1)
        self._tokens = {it.index: tokens(it.text) for it in layout.items}
        self.weights: dict[str, float] = {}
        absent = 0.0
        for kw in self.keywords:
            df = sum(1 for toks in self._tokens.values() if any(MATCHING.word(kw, t) for t in toks))
            base = 0.5 if kw in GENERIC_WORDS else 1.0
            self.weights[kw] = base * (1.0 + math.log((n + 1) / (df + 1)))
            if df == 0:
                absent += self.weights[kw]
        # Question words that appear nowhere on the page (paraphrases, verbs) cannot locate anything; they
        # dilute every match equally, so they count only a quarter.
        self.total_weight = (sum(self.weights.values()) - 0.75 * absent) or 1.0
        self._cache: dict[int, tuple[float, set[str], int]] = {}

    def match(self, item: Item) -> tuple[float, set[str], int]:
        """(weighted coverage in [0,1], matched keywords, index of the last matched token or -1)."""
        hit = self._cache.get(item.index)
        if hit is not None:
            return hit
        toks = self._tokens.get(item.index) or tokens(item.text)
        matched: set[str] = set()
        credit = 0.0
        last = -1
        for kw in self.keywords:
            best, where = 0.0, -1
            for i, tok in enumerate(toks):
                m = MATCHING.word(kw, tok)
                if m > best:
                    best, where = m, i
            if best > 0:
                matched.add(kw)
                credit += self.weights[kw] * best
                last = max(last, where)
        result = (credit / self.total_weight, matched, last)
        self._cache[item.index] = result
        return result

    def coverage(self, words: set[str]) -> float:
        # summed in a fixed order: a set's order follows the process's string hashing, and float sums in another
        # order differ in the last bit, which decides between candidates that tie
        return sum(self.weights[w] for w in sorted(words)) / self.total_weight

    def ranked(self, min_score: float = 0.05) -> list[tuple[float, Item]]:
        scored = [(self.match(it)[0], it) for it in self.layout.items]
        return sorted(((s, it) for s, it in scored if s >= min_score), key=lambda p: (-p[0], p[1].index))


def typed_span(text: str, answer_type: str) -> tuple[str, float]:
    """The part of ``text`` that has the expected type, and how well it fits (0..1)."""
    text = clean_span(text)
    if not text:
        return "", 0.0
    if answer_type in ("money", "number", "percent", "count"):
        nums = [
            n for n in find_numbers(text) if not re.fullmatch(r"\d{1,2}", n.text) or answer_type in ("count", "number")
        ]
        if not nums:
            return text, 0.1
        if answer_type == "money":

            def money_fit(n) -> float:
                if n.percent:
                    return 0.35
                if n.money:
                    return 1.0
                return 0.85 if re.search(r"[.,]\d", n.text) else 0.7

            best = max(nums, key=lambda n: (money_fit(n), abs(n.value)))
            return best.text, money_fit(best)
        if answer_type == "percent":
            best = max(nums, key=lambda n: n.percent)
            return best.text, 1.0 if best.percent else 0.7
        if answer_type == "count":
            ints = [n for n in nums if not n.money and not n.percent and float(n.value).is_integer()]
            if ints:
                return ints[0].text, 1.0 if len(nums) == 1 else 0.85
            return nums[0].text, 0.5
        return nums[0].text, 1.0 if len(nums) == 1 else 0.85
    if answer_type == "id":
        if len(text) > 40:
            return text, 0.3
        return text, 1.0 if re.search(r"\d|@|www\.|\.(com|org|net)\b", text) else 0.6
    if answer_type == "date":
        dates = find_dates(text)
        if dates:
            return dates[0], 1.0
        return text, 0.35 if re.search(r"\d", text) else 0.1
    if answer_type == "digits":
        runs = re.findall(r"\d{3,}", text)
        return (runs[-1][-4:], 1.0) if runs else (text, 0.1)
    if answer_type == "name":
        # "Shirley Cox, Information Technology": a name is the first comma-separated chunk
        chunk = text.split(",")[0].strip()
        if re.search(r"\d", chunk):
            return chunk, 0.3
        return chunk, 1.0 if re.search(r"[A-Z][a-z]", chunk) and len(chunk.split()) <= 5 else 0.6
    return text, 0.9


def _remainder(item: Item, last_token: int) -> str:
    """Text of ``item`` after its label: after a colon, else after the last matched keyword."""
    if ":" in item.text:
        after = item.text.split(":", 1)[1].strip()
        if after:
            return after
    if last_token < 0:
        return ""
    raw = _TOKEN_RE.findall(item.text)
    return " ".join(raw[last_token + 1 :])


def key_value_candidates(info: QuestionInfo, layout: Layout, matcher: Matcher, top: int = 6) -> list[Candidate]:
    """Values next to the best-matching labels: same line after the label, right of it, or below it."""
    out: list[Candidate] = []
    for key_score, key in matcher.ranked()[:top]:
        _, matched, last = matcher.match(key)
        options: list[tuple[str, float, list[Item]]] = []
        rest = _remainder(key, last)
        if rest and not all(t in LABEL_TOKENS for t in tokens(rest)):
            options.append((rest, 1.0, [key]))
        unit = max(key.h, layout.median_h)
        for rank, right in enumerate(layout.right_of(key)[:2]):
            gap = max(right.box.x0 - key.box.x1, 0.0) / unit
            options.append((right.text, (0.95 - 0.15 * rank) * math.exp(-gap / 25.0), [key, right]))
        for rank, below in enumerate(layout.below(key)[:2]):
            gap = max(below.box.y0 - key.box.y1, 0.0) / unit
            options.append((below.text, (0.82 - 0.2 * rank) * math.exp(-gap / 6.0), [key, below]))
        for text, pos_weight, items in options:
            span, fit = typed_span(text, info.answer_type)
            if not span:
                continue
            value_item = items[-1]
            own = matcher.match(value_item)[0] if value_item is not key else 0.0
            label_penalty = 1.0 - 0.7 * min(own / max(key_score, 1e-6), 1.0) if value_item is not key else 1.0
            conf = min(i.confidence for i in items)
            score = key_score * pos_weight * fit * label_penalty * (0.6 + 0.4 * conf)
            out.append(Candidate(span, score, "key-value", items=items))
    return out


def intersection_candidates(info: QuestionInfo, layout: Layout, matcher: Matcher, top: int = 8) -> list[Candidate]:
    """Cells where the row of a row label meets the column under a header (tables, invoices, reports)."""
    ranked = matcher.ranked()[: top * 2]
    out: list[Candidate] = []
    for _s_row, row_item in ranked:
        _, row_words, _ = matcher.match(row_item)
        for _s_col, col_item in ranked:
            if col_item is row_item or col_item.cy >= row_item.cy - 0.5 * row_item.h:
                continue
            _, col_words, _ = matcher.match(col_item)
            if not (col_words - row_words) or not (row_words - col_words):
                continue  # each anchor must bring words of its own
            cells = [c for c in layout.same_row(row_item, 0.4) if c is not col_item and h_overlap(c, col_item) > 0.25]
            if not cells:
                continue
            cell = max(cells, key=lambda c: h_overlap(c, col_item))
            if cell.box.x0 < row_item.box.x1 - 0.5 * row_item.h:
                continue  # the cell must lie right of its row label
            span, fit = typed_span(cell.text, info.answer_type)
            cover = matcher.coverage(row_words | col_words)
            conf = cell.confidence
            # Table rows have several cells; a label/value pair on a form row is read better by key-value.
            tableness = 1.0 if len(layout.same_row(row_item, 0.4)) >= 2 else 0.7
            own = matcher.match(cell)[0]
            score = cover * fit * (0.6 + 0.4 * conf) * 1.05 * tableness * (1.0 - 0.5 * min(own / max(cover, 1e-6), 1.0))
            out.append(Candidate(span, score, "row-column", items=[row_item, col_item, cell]))
    return out


def row_typed_candidates(info: QuestionInfo, layout: Layout, matcher: Matcher, top: int = 3) -> list[Candidate]:
    """When no header names the column: the one cell of the expected type on the best-matching row."""
    if info.answer_type not in ("money", "number", "percent", "count", "date"):
        return []
    out = []
    for key_score, key in matcher.ranked()[:top]:
        cells = [c for c in layout.right_of(key)]
        typed = [(c, *typed_span(c.text, info.answer_type)) for c in cells]
        good = [t for t in typed if t[2] >= 1.0]
        if len(good) >= 1:
            cell, span, _ = good[0]
            out.append(Candidate(span, key_score * 0.7 / len(good) ** 0.5, "row-typed", items=[key, cell]))
    return out


_CAPS_RE = re.compile(
    r"(?<![.!?]\s)\b([A-Z][a-zA-Z&'-]+(?:\s+(?:of|de|and|&)?\s*(?:[A-Z]\.?(?=\s+[A-Z])|[A-Z][a-zA-Z&'-]+))*)"
)


def prose_candidates(info: QuestionInfo, layout: Layout, matcher: Matcher, top: int = 4) -> list[Candidate]:
    """Answers inside running text: the typed span nearest the question's words in the best sentence."""
    if info.answer_type in ("yesno", "truefalse", "category", "count", "id"):
        return []
    out: list[Candidate] = []
    qwords = set(info.keywords) | {w.lower() for w in re.findall(r"[A-Za-z]+", info.text)}
    for score, item in matcher.ranked()[:top]:
        if len(item.text.split()) < 6:
            continue
        nxt = [o for o in layout.below(item, 1.2) if o.box.x0 <= item.box.x0 + 2 * item.h]
        text = item.text + (" " + nxt[0].text if nxt else "")
        spans: list[tuple[int, str]] = []
        if info.answer_type == "date":
            spans = [(m.start(), m.group(0)) for m in DATE_RE.finditer(text)]
        elif info.answer_type in ("money", "number", "percent"):
            spans = [
                (n.start, typed_span(n.text, info.answer_type)[0])
                for n in find_numbers(text)
                if typed_span(n.text, info.answer_type)[1] >= 0.8
            ]
        else:
            for m in _CAPS_RE.finditer(text):
                words = m.group(1).split()
                if any(w.lower() in qwords for w in words) or m.start() == 0:
                    continue
                spans.append((m.start(), m.group(1)))
        if not spans:
            continue
        # nearest to the matched question words in this sentence
        anchors = [mm.start() for kw in matcher.match(item)[1] for mm in re.finditer(re.escape(kw), text.lower())]
        anchor = sum(anchors) / len(anchors) if anchors else 0.0
        pos, span = min(spans, key=lambda p: abs(p[0] - anchor))
        out.append(Candidate(span.strip(" ,."), score * 0.85, "running text", items=[item] + nxt[:1]))
    return out


def heading_candidates(info: QuestionInfo, layout: Layout) -> list[Candidate]:
    """The document's main heading (largest text in the top third) for title / issuer questions."""
    if not info.heading:
        return []
    # a title page centres its title, so the top half; the largest line there
    top = [it for it in layout.items if it.box.y0 < 0.5 and len(it.text) > 2]
    if not top:
        return []
    head = max(top, key=lambda it: (round(it.h / max(layout.median_h, 1e-6), 1), -it.box.y0))
    return [Candidate(head.text.strip(), 0.75, "main heading", items=[head])]


def cell_value(layout: Layout, row_words: list[str], col_words: list[str]) -> Candidate | None:
    """The numeric cell where the row named by ``row_words`` meets the column named by ``col_words``."""
    info = QuestionInfo("", "number", "lookup", keywords=list(dict.fromkeys(row_words + col_words)))
    matcher = Matcher(info, layout)
    cands = [c for c in intersection_candidates(info, layout, matcher) if find_numbers(c.text)]
    if not cands:
        return None
    best = max(cands, key=lambda c: c.score)
    best.value = find_numbers(best.text)[0].value
    return best


def column_values(info: QuestionInfo, layout: Layout, matcher: Matcher) -> tuple[Item, list[tuple[Item, float]]] | None:
    """The numeric column whose header best matches the question."""
    best = None
    for score, header in matcher.ranked()[:8]:
        column = numeric_column(layout, header)
        if len(column) >= 2 and (best is None or score > best[0]):
            best = (score, header, column)
    return (best[1], best[2]) if best else None


def best_candidate(cands: list[Candidate]) -> Candidate | None:
    return max(cands, key=lambda c: c.score) if cands else None


# -- aggregates over a column ------------------------------------------------------------------------


_TOTAL_RE = re.compile(r"^\s*(sub-?total|total|grand total|sum|net total|balance due|amount due)\b", re.I)


def numeric_column(layout: Layout, header: Item) -> list[tuple[Item, float]]:
    """Numeric cells under a header, with their values; rows labelled as totals are not data."""
    out = []
    for cell in layout.column_under(header):
        nums = find_numbers(cell.text)
        if len(nums) != 1:
            continue
        label = row_label(layout, cell)
        if label is not None and label is not cell and _TOTAL_RE.match(label.text):
            continue
        out.append((cell, nums[0].value))
    return out


def row_label(layout: Layout, cell: Item) -> Item | None:
    """The leftmost item on a cell's row (the row's label)."""
    row = [o for o in layout.same_row(cell, 0.4)] + [cell]
    row.sort(key=lambda o: o.box.x0)
    for o in row:
        if not find_numbers(o.text) or re.search(r"[A-Za-z]{3,}", o.text):
            return o
    return row[0] if row else None


def aggregate_candidates(info: QuestionInfo, layout: Layout, matcher: Matcher) -> list[Candidate]:
    """max / min / sum / avg / count / diff over the column whose header matches the question."""
    out: list[Candidate] = []
    headers = [it for s, it in matcher.ranked()[:8]]
    for header in headers:
        column = numeric_column(layout, header)
        if len(column) < 2:
            continue
        # A numeric column under a header the question names answers aggregate questions better than any
        # single labelled value, so its score starts at one half.
        s = 0.5 + 0.5 * matcher.match(header)[0]
        values = [v for _, v in column]
        if info.intent in ("max", "min"):
            pick = max(column, key=lambda cv: cv[1]) if info.intent == "max" else min(column, key=lambda cv: cv[1])
            if info.answer_type == "category":
                label = row_label(layout, pick[0])
                if label is not None and label is not pick[0]:
                    out.append(Candidate(label.text, s * 0.9, f"column-{info.intent}", items=[header, pick[0], label]))
            else:
                out.append(
                    Candidate(pick[0].text, s * 0.9, f"column-{info.intent}", items=[header, pick[0]], value=pick[1])
                )
        elif info.intent == "sum":
            out.append(
                Candidate(
                    format_number(sum(values)),
                    s * 0.8,
                    "column-sum",
                    items=[header] + [c for c, _ in column],
                    value=sum(values),
                )
            )
        elif info.intent == "avg":
            avg = sum(values) / len(values)
            out.append(
                Candidate(format_number(avg), s * 0.8, "column-avg", items=[header] + [c for c, _ in column], value=avg)
            )
        elif info.intent == "count":
            out.append(
                Candidate(
                    str(len(values)),
                    s * 0.6,
                    "column-count",
                    items=[header] + [c for c, _ in column],
                    value=float(len(values)),
                )
            )
    return out
