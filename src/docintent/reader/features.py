"""The scorer's features of one answer candidate: the same function at training and at reading time.

:func:`featurise` turns each :class:`~docintent.reader.candidates.AnswerCandidate` of one question on one page
into a fixed vector of numbers (:data:`FEATURE_NAMES`), in groups that an ablation can remove one at a time
(:data:`GROUPS`):

- ``type``: the answer type the question expects, the types the candidate's text has, and whether they agree;
- ``label``: how well the asked field's words are carried by the candidate's line, the line left of it, the
  line above it, the head of its row and of its column (keyword coverage and fuzzy similarity of the phrase);
- ``layout``: where the best label sits relative to the candidate (same line, left, above) and how far;
- ``typography``: the line's height against the page's median, its position, whether it is the page's largest;
- ``ocr``: the line's recognition confidence;
- ``text``: the candidate's length, digits, capitals, how many of its words are the question's own;
- ``sources``: which sources proposed it, their scores and ranks, how many agree, whether the rules chose it;
- ``question``: the operation and the kind of typed span the question asks for, whether it is generic;
- ``page``: how many candidates of the same type compete, and this one's rank among them by label match.
"""

from __future__ import annotations

import bisect
import math
import re
import threading
from functools import lru_cache
from weakref import WeakKeyDictionary

import numpy as np
from rapidfuzz import fuzz

from ..layout.lines import Item, Layout
from .candidates import SOURCE_NAMES, AnswerCandidate, place_of
from .entities import ENTITIES
from .extract import MATCHING, Matcher, tokens
from .query import Question
from .spans import EMAIL_RE, URL_RE
from .values import DATE_RE, find_numbers

ANSWER_TYPES = (
    "number",
    "money",
    "percent",
    "date",
    "name",
    "id",
    "yesno",
    "truefalse",
    "count",
    "category",
    "text",
    "digits",
)
OPERATIONS = ("lookup", "max", "min", "diff", "sum", "avg", "count", "verify", "compare", "ratio")
SPAN_KINDS = ("", "date", "author", "email", "url", "version", "year", "page", "agent", "postal", "street", "other")
TEXT_TYPES = (
    "date",
    "money",
    "percent",
    "number",
    "integer",
    "email",
    "url",
    "phone",
    "id",
    "person",
    "org",
    "words",
    "long",
)

#: Which candidate text types fit each expected answer type.
FITS: dict[str, frozenset[str]] = {
    "number": frozenset({"number", "integer", "money", "percent"}),
    "money": frozenset({"money", "number"}),
    "percent": frozenset({"percent", "number"}),
    "date": frozenset({"date"}),
    "name": frozenset({"person", "org", "words"}),
    "id": frozenset({"id", "integer", "email", "url", "phone"}),
    "count": frozenset({"integer"}),
    "digits": frozenset({"integer", "id"}),
    "category": frozenset({"words", "person", "org"}),
    "text": frozenset({"words", "long", "person", "org", "date"}),
    "yesno": frozenset({"words"}),
    "truefalse": frozenset({"words"}),
}


def _names(prefix: str, values: tuple[str, ...]) -> list[str]:
    return [f"{prefix}{v or 'none'}" for v in values]


GROUPS: dict[str, list[str]] = {
    "type": _names("q_type_", ANSWER_TYPES) + _names("c_type_", TEXT_TYPES) + ["type_fit"],
    "label": [
        "m_self",
        "m_text",
        "m_prefix",
        "m_left",
        "m_above",
        "m_row_head",
        "m_col_head",
        "m_best",
        "fz_best",
        "syn_left",
        "syn_above",
        "syn_self",
    ],
    "layout": [
        "rel_same_line",
        "rel_left",
        "rel_above",
        "label_dist",
        "colon_before",
        "is_whole_line",
        "row_cells",
        "subject_on_page",
        "subject_same_line",
        "subject_below",
        "subject_dist",
        "is_place",
    ],
    "typography": ["height", "height_rank", "is_largest", "cy", "cx", "x0", "top_fifth"],
    "ocr": ["confidence"],
    "text": ["n_chars", "n_words", "digit_share", "upper_share", "question_words", "ends_colon", "is_label_word"],
    "sources": [f"src_{s}" for s in SOURCE_NAMES]
    + [f"rank_{s}" for s in SOURCE_NAMES]
    + ["n_sources", "max_vote", "rules_chose"],
    "question": _names("op_", OPERATIONS) + _names("span_", SPAN_KINDS) + ["generic", "heading_q", "n_keywords"],
    "page": ["same_type_n", "same_type_rank", "n_items"],
}
FEATURE_NAMES: tuple[str, ...] = tuple(name for group in GROUPS.values() for name in group)
_INDEX = {name: i for i, name in enumerate(FEATURE_NAMES)}
_ID_RE = re.compile(r"^(?=.*\d)[A-Za-z0-9#./-]{3,}$")
_PHONE_RE = re.compile(r"^\+?[\d ()./-]{7,}$")
_LABELS = frozenset(
    {
        "no",
        "no.",
        "#",
        "nr",
        "id",
        "ref",
        "tel",
        "to",
        "from",
        "date",
        "name",
        "amount",
        "total",
        "subject",
        "re",
        "invoice",
        "number",
        "page",
        "dear",
    }
)


@lru_cache(maxsize=4096)
def text_types(text: str) -> frozenset[str]:
    """The types ``text`` has as a whole (a candidate answer): date, money, percent, number, integer, e-mail, URL,
    phone, identifier, person, organisation, words (a short phrase), long (a sentence)."""
    t = text.strip()
    types: set[str] = set()
    if DATE_RE.fullmatch(t) or (DATE_RE.search(t) and len(t) <= 24):
        types.add("date")
    nums = find_numbers(t)
    if nums and len(nums) == 1 and len(t) - len(nums[0].text) <= 4:
        n = nums[0]
        types.add("percent" if n.percent else "money" if n.money else "number")
        if float(n.value).is_integer() and not n.percent and not n.money:
            types.add("integer")
        if re.search(r"[.,]\d\d$", n.text) and not n.percent:
            types.add("money")
    if EMAIL_RE.fullmatch(t):
        types.add("email")
    elif URL_RE.match(t):
        types.add("url")
    if _PHONE_RE.match(t) and sum(ch.isdigit() for ch in t) >= 7:
        types.add("phone")
    if _ID_RE.match(t) and not types & {"date", "money", "percent"}:
        types.add("id")
    if ENTITIES.person(t):
        types.add("person")
    if ENTITIES.organisation(t):
        types.add("org")
    words = t.split()
    if re.search(r"[A-Za-zÀ-ÿ]", t) and not nums:
        types.add("words" if len(words) <= 8 else "long")
    return frozenset(types)


def _phrase_similarity(field: str, text: str) -> float:
    if not field or not text:
        return 0.0
    return fuzz.token_set_ratio(field, text.lower()) / 100.0


def _synonym_hit(q: Question, item: Item | None) -> float:
    if item is None:
        return 0.0
    toks = set(tokens(item.text))
    return 1.0 if toks & q.synonyms else 0.0


class Geometry:
    """Each line's neighbours on one layout, computed once for every question asked of it (vectorised): the
    nearest line left of it on its row, the nearest line above it in its column, the head of its row (the
    leftmost line on it) and of its column (the top of the run of lines stacked above it), and its row's size."""

    def __init__(self, layout: Layout) -> None:
        items = layout.items
        n = len(items)
        b = np.array([[it.box.x0, it.box.y0, it.box.x1, it.box.y1] for it in items], dtype=np.float64).reshape(n, 4)
        x0, y0, x1, y1 = b.T
        h = np.maximum(y1 - y0, 1e-9)
        w = np.maximum(x1 - x0, 1e-9)
        vin = np.minimum(y1[:, None], y1[None, :]) - np.maximum(y0[:, None], y0[None, :])
        vov = np.maximum(vin, 0) / np.maximum(np.minimum(h[:, None], h[None, :]), 1e-9)
        hin = np.minimum(x1[:, None], x1[None, :]) - np.maximum(x0[:, None], x0[None, :])
        hov = np.maximum(hin, 0) / np.maximum(np.minimum(w[:, None], w[None, :]), 1e-9)
        eye = np.eye(n, dtype=bool)
        same_row = (vov >= 0.5) & ~eye  # [i, o]: o on i's row
        left_ok = same_row & (x1[None, :] <= x0[:, None] + 0.25 * h[:, None])
        self.left = _pick(left_ok, x0[None, :].repeat(n, 0), largest=True)
        head_ok = same_row & (x1[None, :] <= x0[:, None])
        self.row_head = _pick(head_ok, -x0[None, :].repeat(n, 0), largest=True)
        gap = y0[:, None] - y1[None, :]  # [i, o]: how far o ends above i's top
        limit = 4.0 * np.maximum(layout.median_h, h)[:, None]
        above_ok = ~eye & (y1[None, :] <= y0[:, None] + 0.3 * h[:, None]) & (hov >= 0.3) & (gap < limit)
        self.above = _pick(above_ok, -gap, largest=True)
        self.row_size = (vov >= 0.5).sum(axis=1)
        self.col_head = np.full(n, -1, dtype=np.int64)
        for i in range(n):
            cur, head, steps = i, -1, 0
            while self.above[cur] >= 0 and steps < 40:
                cur = int(self.above[cur])
                head, steps = cur, steps + 1
            self.col_head[i] = head


def _pick(mask: np.ndarray, key: np.ndarray, largest: bool) -> np.ndarray:
    """Per row of ``mask``: the column with the largest ``key`` among the allowed ones (-1 when none)."""
    if mask.size == 0:
        return np.full(mask.shape[0], -1, dtype=np.int64)
    scored = np.where(mask, key if largest else -key, -np.inf)
    best = np.argmax(scored, axis=1)
    return np.where(mask.any(axis=1), best, -1)


_GEOMETRY: WeakKeyDictionary[Layout, Geometry] = WeakKeyDictionary()
_GEOMETRY_LOCK = threading.Lock()


def geometry(layout: Layout) -> Geometry:
    """The layout's :class:`Geometry`, computed on first use and kept as long as the layout lives."""
    with _GEOMETRY_LOCK:
        geo = _GEOMETRY.get(layout)
        if geo is None:
            geo = _GEOMETRY[layout] = Geometry(layout)
        return geo


class PageFeatures:
    """What every candidate of one question on one page shares: row and column neighbours, heights, matches."""

    def __init__(self, q: Question, layout: Layout, matcher: Matcher) -> None:
        self.q, self.layout, self.matcher = q, layout, matcher
        heights = sorted(it.h for it in layout.items)
        self.heights = heights
        self.max_h = heights[-1] if heights else 0.0
        self.median_h = max(layout.median_h, 1e-6)
        self.geo = geometry(layout)
        self._position = {id(it): i for i, it in enumerate(layout.items)}

    def _at(self, table: np.ndarray, item: Item) -> Item | None:
        i = self._position.get(id(item))
        if i is None:
            return None
        j = int(table[i])
        return self.layout.items[j] if j >= 0 else None

    def left(self, item: Item) -> Item | None:
        return self._at(self.geo.left, item)

    def above(self, item: Item) -> Item | None:
        return self._at(self.geo.above, item)

    def row_head(self, item: Item) -> Item | None:
        return self._at(self.geo.row_head, item)

    def col_head(self, item: Item) -> Item | None:
        return self._at(self.geo.col_head, item)

    def row_size(self, item: Item) -> int:
        i = self._position.get(id(item))
        return int(self.geo.row_size[i]) if i is not None else 1

    def match(self, item: Item | None) -> float:
        return self.matcher.match(item)[0] if item is not None else 0.0

    def height_rank(self, item: Item) -> float:
        below = bisect.bisect_left(self.heights, item.h - 1e-9)
        return below / max(len(self.heights) - 1, 1)


def _match_words(matcher: Matcher, text: str) -> float:
    toks = tokens(text)
    if not toks or not matcher.keywords:
        return 0.0
    got = {kw for kw in matcher.keywords if any(MATCHING.word(kw, t) for t in toks)}
    return matcher.coverage(got)


def featurise(
    q: Question, layout: Layout, cands: list[AnswerCandidate], matcher: Matcher | None = None
) -> list[list[float]]:
    """One feature vector (in :data:`FEATURE_NAMES` order) per candidate."""
    matcher = matcher or Matcher(q.info, layout)
    pf = PageFeatures(q, layout, matcher)
    qwords = {w.lower() for w in re.findall(r"[A-Za-z0-9]+", q.text)}
    span_kind = q.span_kind if q.span_kind in SPAN_KINDS else "other"
    want = FITS.get(q.answer_type, frozenset())
    types = [text_types(c.text) for c in cands]
    rows: list[list[float]] = []
    label_scores: list[float] = []
    want_subject = q.subject.lower()
    subjects = [it for it in layout.items if want_subject and want_subject in it.text.lower()]
    for cand, ctypes in zip(cands, types):
        v = [0.0] * len(FEATURE_NAMES)

        def put(name: str, value: float, v=v) -> None:
            v[_INDEX[name]] = float(value)

        put(f"q_type_{q.answer_type}" if q.answer_type in ANSWER_TYPES else "q_type_text", 1)
        for t in ctypes:
            put(f"c_type_{t}", 1)
        put("type_fit", 1 if ctypes & want else 0)
        item = cand.anchor
        text = cand.text
        if item is not None:
            own = item.text
            pos = own.lower().find(text.lower())
            prefix = own[:pos] if pos > 0 else ""
            left, above = pf.left(item), pf.above(item)
            row_head, col_head = pf.row_head(item), pf.col_head(item)
            m = {
                "m_self": pf.match(item),
                "m_text": _match_words(matcher, text),
                "m_prefix": _match_words(matcher, prefix),
                "m_left": pf.match(left),
                "m_above": pf.match(above),
                "m_row_head": pf.match(row_head) if row_head is not left else 0.0,
                "m_col_head": pf.match(col_head) if col_head is not above else 0.0,
            }
            for k, val in m.items():
                put(k, val)
            label_of = {
                "m_prefix": item,
                "m_left": left,
                "m_above": above,
                "m_row_head": row_head,
                "m_col_head": col_head,
            }
            best_key = max(label_of, key=lambda k: m[k])
            best_label = m[best_key]
            put("m_best", best_label)
            label_item = label_of[best_key]
            label_text = prefix if best_key == "m_prefix" else (label_item.text if label_item is not None else "")
            put("fz_best", _phrase_similarity(q.field, label_text))
            put("syn_left", _synonym_hit(q, left))
            put("syn_above", _synonym_hit(q, above))
            put("syn_self", 1.0 if set(tokens(prefix)) & q.synonyms else 0.0)
            put("rel_same_line", 1 if best_key == "m_prefix" and best_label > 0 else 0)
            put("rel_left", 1 if best_key in ("m_left", "m_row_head") and best_label > 0 else 0)
            put("rel_above", 1 if best_key in ("m_above", "m_col_head") and best_label > 0 else 0)
            if label_item is not None and best_label > 0 and label_item is not item:
                dist = math.hypot(item.cx - label_item.cx, item.cy - label_item.cy) / pf.median_h
            else:
                dist = 0.0 if best_label > 0 else 50.0
            put("label_dist", min(dist, 50.0))
            put(
                "colon_before",
                1 if prefix.rstrip().endswith(":") or (left is not None and left.text.rstrip().endswith(":")) else 0,
            )
            put("is_whole_line", 1 if text.strip().lower() == own.strip().lower() else 0)
            put("row_cells", pf.row_size(item))
            if subjects:
                put("subject_on_page", 1)
                unit = max(layout.median_h, 1e-6)
                near = min(subjects, key=lambda o: abs(o.cy - item.cy) + abs(o.box.x0 - item.box.x0))
                put("subject_same_line", 1 if near is item else 0)
                put(
                    "subject_below",
                    1 if 0 < item.cy - near.cy < 7 * unit and abs(item.box.x0 - near.box.x0) < 4 * unit else 0,
                )
                put("subject_dist", min(abs(item.cy - near.cy) / unit, 50.0))
            else:
                put("subject_dist", 50.0)
            put("is_place", 1 if place_of(own) == text or any(place_of(p) == text for p in own.split(",")) else 0)
            put("height", item.h / pf.median_h)
            put("height_rank", pf.height_rank(item))
            put("is_largest", 1 if item.h >= pf.max_h - 1e-9 else 0)
            put("cy", item.cy)
            put("cx", item.cx)
            put("x0", item.box.x0)
            put("top_fifth", 1 if item.cy < 0.2 else 0)
            put("confidence", item.confidence)
            label_scores.append(best_label + m["m_self"] * 0.1)
        else:
            put("label_dist", 50.0)
            label_scores.append(0.0)
        words = text.split()
        put("n_chars", math.log1p(len(text)))
        put("n_words", len(words))
        put("digit_share", sum(ch.isdigit() for ch in text) / max(len(text), 1))
        put("upper_share", sum(ch.isupper() for ch in text) / max(sum(ch.isalpha() for ch in text), 1))
        ctoks = [w.lower() for w in re.findall(r"[A-Za-z0-9]+", text)]
        put("question_words", sum(1 for w in ctoks if w in qwords) / max(len(ctoks), 1))
        put("ends_colon", 1 if text.rstrip().endswith(":") else 0)
        put("is_label_word", 1 if ctoks and all(w in _LABELS for w in ctoks) else 0)
        for s in SOURCE_NAMES:
            if s in cand.votes:
                put(f"src_{s}", 1)
                put(f"rank_{s}", 1.0 / (1 + cand.ranks.get(s, 0)))
        put("n_sources", len(cand.votes))
        put(
            "max_vote",
            max((min(val, 3.0) for s, val in cand.votes.items() if s not in ("typed", "heading")), default=0.0),
        )
        put("rules_chose", 1 if "rules" in cand.votes else 0)
        put(f"op_{q.operation}" if q.operation in OPERATIONS else "op_lookup", 1)
        put(f"span_{span_kind or 'none'}", 1)
        put("generic", 1 if q.generic else 0)
        put("heading_q", 1 if q.info.heading else 0)
        put("n_keywords", len(q.keywords))
        put("n_items", math.log1p(len(layout.items)))
        rows.append(v)
    # competition among candidates of a fitting type, ranked by their label match
    fitting = [i for i, t in enumerate(types) if t & want]
    order = sorted(fitting, key=lambda i: -label_scores[i])
    for rank, i in enumerate(order):
        rows[i][_INDEX["same_type_n"]] = math.log1p(len(fitting))
        rows[i][_INDEX["same_type_rank"]] = 1.0 / (1 + rank)
    return rows
