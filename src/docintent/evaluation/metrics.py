"""WildDoc leaderboard metrics: ANLS, relaxed accuracy, TableVQA matches, consistency.

These are the rules of the scorer behind the published WildDoc leaderboard (the VLMEvalKit WildDoc
evaluation), written from their definitions. They reproduce every figure of the reference results
(Qwen2.5-VL-72B, 37,396 rows) to 0.01; ``tests/test_wilddoc_metrics.py`` checks it.

Three task families, one per WildDoc subtask; synthetic sets reuse them:

- ``doc``   (DocVQA)   -> :func:`anls`, tau 0.5;
- ``chart`` (ChartQA)  -> :func:`relaxed_accuracy`, 5 % tolerance;
- ``table`` (TableVQA) -> one rule per sub-split (:func:`table_match`), macro-averaged over sub-splits.

Each subtask reports a score (mean row score, in percent) and a consistency (percent of questions
whose every capture is correct). The WildDoc average is the plain mean of the three subtasks.

Example::

    >>> from docintent.evaluation.metrics import score_row, summarize, summary_markdown
    >>> score_row("chart", "ChartQA", "10.4", ["10"])
    1.0
    >>> rows = [dict(task="doc", subset="DocVQA", group="q1", prediction="40", answers=["40"])]
    >>> summarize(rows).tasks["doc"].score
    100.0
"""

from __future__ import annotations

import ast
import math
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from rapidfuzz.distance import Levenshtein

from ..errors import ConfigError, DatasetError, UnknownComponentError
from ..registry import Registry
from ..vocabulary import TASKS

TABLE_SUBSETS: tuple[str, ...] = ("fintabnetqa", "vtabfact", "vwtq", "vwtq_syn")
ANLS_TAU = 0.5
RELAXED_TOLERANCE = 0.05


# --- answers -------------------------------------------------------------------------------------


def parse_answers(answers: str | Iterable[str] | None) -> list[str]:
    """Turn gold answers into a list of strings.

    WildDoc stores DocVQA (and some ChartQA) answers as the text of a Python list, e.g.
    ``"['40', '40%']"``. A string that is such a list literal is expanded into its items (each item
    ``str()``-ed: ``"[2011, 2012]"`` -> ``["2011", "2012"]``); any other string is one answer, and so is
    malformed list text (``"[Italy , 22]"``). A sequence is already a list of answers: its items are
    taken as they are (``["[200600]"]`` is the one answer ``"[200600]"``).
    """
    if answers is None:
        return []
    if not isinstance(answers, str):
        return [str(a) for a in answers]
    return _literal_list(answers) or [answers]


def _literal_list(text: str) -> list[str] | None:
    stripped = text.strip()
    if not (stripped.startswith("[") and stripped.endswith("]")):
        return None
    try:
        value = ast.literal_eval(stripped)
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    if not isinstance(value, list) or not value:
        return None
    return [str(v) for v in value]


def _text(prediction: Any) -> str:
    """A prediction as text; a missing prediction (failed row) is the empty answer."""
    if prediction is None:
        return ""
    if isinstance(prediction, float) and math.isnan(prediction):
        return ""
    return str(prediction)


# --- DocVQA: ANLS --------------------------------------------------------------------------------


def _anls_text(text: str) -> str:
    return " ".join(text.strip().lower().split())


def normalized_levenshtein(answer: str, prediction: str) -> float:
    """NL(a, p) = Levenshtein(a', p') / max(|a'|, |p'|), with x' = x stripped, lower-cased and its
    whitespace runs collapsed to one space; NL = 0 when both are empty."""
    a, p = _anls_text(answer), _anls_text(prediction)
    length = max(len(a), len(p))
    if length == 0:
        return 0.0
    return Levenshtein.distance(a, p) / length


def anls(prediction: str, answers: str | Iterable[str], tau: float = ANLS_TAU) -> float:
    """Row ANLS: s = 1 - min_a NL(a, prediction) over the gold answers; the row scores s if
    s >= tau, else 0 (tau = 0.5). No gold answer scores 0."""
    golds = parse_answers(answers)
    if not golds:
        return 0.0
    pred = _text(prediction)
    best = 1.0 - min(normalized_levenshtein(a, pred) for a in golds)
    return best if best >= tau else 0.0


# --- ChartQA: relaxed accuracy -------------------------------------------------------------------


def _relaxed_float(text: str) -> float | None:
    """``float(text)``, where a trailing ``%`` divides by 100; None when it is no number."""
    try:
        if text.endswith("%"):
            return float(text.rstrip("%")) / 100.0
        return float(text)
    except ValueError:
        return None


def relaxed_match(prediction: str, target: str, tolerance: float = RELAXED_TOLERANCE) -> bool:
    """Relaxed correctness of one prediction against one target (ChartQA, Methani et al.).

    The prediction is stripped. If both parse as numbers (a trailing ``%`` means /100) and the target
    is non-zero: correct iff |p - t| / |t| <= tolerance (5 %). Otherwise: case-insensitive exact match.
    """
    pred = _text(prediction).strip()
    target = str(target)
    p, t = _relaxed_float(pred), _relaxed_float(target)
    if p is not None and t:
        return abs(p - t) / abs(t) <= tolerance
    return pred.lower() == target.lower()


def relaxed_accuracy(prediction: str, answers: str | Iterable[str], tolerance: float = RELAXED_TOLERANCE) -> float:
    """Row relaxed accuracy: 1 if :func:`relaxed_match` holds for any gold answer, else 0."""
    return float(any(relaxed_match(prediction, a, tolerance) for a in parse_answers(answers)))


# --- TableVQA ------------------------------------------------------------------------------------

_SINGLE_QUOTES = re.compile("[\u2018\u2019\u00b4`]")
_DOUBLE_QUOTES = re.compile("[\u201c\u201d]")
_DASHES = re.compile("[\u2010\u2011\u2012\u2013\u2014\u2212]")
# Trailing footnote marks: a bracketed note (not at the very start), a numbered citation, or a symbol.
_TRAILING_NOTES = re.compile(r"(?:(?<!^)\[[^\]]*\]|\[\d+\]|[•♦†‡*#+])*$")
# Trailing " (details)" groups, never the whole string.
_TRAILING_PARENS = re.compile(r"(?<!^)(?: \([^)]*\))*$")
_QUOTED = re.compile(r'^"([^"]*)"$')


def normalize_table_text(text: str) -> str:
    """WikiTableQuestions string normalisation.

    Drop diacritics (NFKD, remove combining marks); map curly / acute / back quotes to ``'`` and ``"``
    and the unicode dashes to ``-``; then repeatedly strip trailing footnote marks (``[1]``, ``*``,
    ``†`` ...), trailing parenthesised details and one pair of enclosing double quotes until nothing
    changes; drop one final ``.``; collapse whitespace; lower-case.
    """
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if unicodedata.category(c) != "Mn")
    text = _SINGLE_QUOTES.sub("'", text)
    text = _DOUBLE_QUOTES.sub('"', text)
    text = _DASHES.sub("-", text)
    while True:
        before = text
        text = _TRAILING_NOTES.sub("", text.strip())
        text = _TRAILING_PARENS.sub("", text.strip())
        text = _QUOTED.sub(r"\1", text.strip())
        if text == before:
            break
    if text.endswith("."):
        text = text[:-1]
    return re.sub(r"\s+", " ", text).lower().strip()


_FIN_UNIT_WORDS = (
    "dollar", "gallons", "square feet", "shares", "mbtu", "mbpd", "mbbls",
    "mmbtu", "unit", "gwh", "year", "mmcf", "mile", "mboe",
)  # fmt: skip
_FIN_UNITS = re.compile(r"\b(?:" + "|".join(_FIN_UNIT_WORDS) + r")s?\b", re.IGNORECASE)
_FIN_SYMBOLS = re.compile(r"[$(),]")
# Scale words become exponents; applied in this order ("10 million" -> "10e6", "5 %" -> "5e-2").
_FIN_SCALES = (
    (re.compile(r" \bthousand\b"), "e3"),
    (re.compile(r" \bmillion\b"), "e6"),
    (re.compile(r" \bbillion\b"), "e9"),
    (re.compile(r"\bthousand\b"), "e3"),
    (re.compile(r"\bmillion\b"), "e6"),
    (re.compile(r"\bbillion\b"), "e9"),
    (re.compile(r" ?%"), "e-2"),
)


def fintabnet_values(text: str) -> tuple[float | str, tuple[float | str, float | str]]:
    """FinTabNetQA normalisation: ``(value, (scaled, unscaled))``.

    :func:`normalize_table_text`, then delete ``$ ( ) ,`` and unit words (dollar, shares, gallons,
    square feet, mile, year, unit, gwh, mbtu, mmbtu, mbpd, mbbls, mmcf, mboe, each optionally plural).
    The scaled form writes thousand / million / billion / % as e3 / e6 / e9 / e-2, the unscaled form
    drops them. If both forms read as floats the values are floats, else both stay strings.
    """
    text = _FIN_UNITS.sub("", _FIN_SYMBOLS.sub("", normalize_table_text(text)))
    scaled = unscaled = text
    for pattern, exponent in _FIN_SCALES:
        scaled = pattern.sub(exponent, scaled)
        unscaled = pattern.sub("", unscaled)
    try:
        value = float(scaled)
        return value, (value, float(unscaled))
    except ValueError:
        return scaled, (scaled, unscaled)


def fintabnet_match(prediction: str, answer: str) -> float:
    """1 if the normalised values are equal, or if any form of the prediction (scaled / unscaled)
    equals any form of the answer; else 0. See :func:`fintabnet_values`."""
    pred, pred_forms = fintabnet_values(_text(prediction))
    gold, gold_forms = fintabnet_values(str(answer))
    return float(pred == gold or any(p == g for p in pred_forms for g in gold_forms))


_TRUE_GOLDS = frozenset({"1", "true"})
_FALSE_GOLDS = frozenset({"0", "false"})


def tabfact_match(prediction: str, answer: str) -> float:
    """TabFact verdict: the lower-cased prediction must contain exactly one of ``true`` / ``false``
    (substring test; both or neither score 0), matching gold ``1`` (entailed) or ``0`` (refuted).
    Gold ``true`` / ``false`` are accepted as well, for synthetic sets."""
    pred = _text(prediction).lower()
    says_true, says_false = "true" in pred, "false" in pred
    if says_true == says_false:
        return 0.0
    gold = str(answer).strip().lower()
    return float((says_true and gold in _TRUE_GOLDS) or (says_false and gold in _FALSE_GOLDS))


@dataclass(frozen=True)
class _Denotation:
    """One WikiTableQuestions value: a number, a date (year, month, day; -1 = unknown) or a string.

    ``normalized`` is the normalised original text; ``key`` decides duplicates within one answer
    (numbers by amount, dates by (y, m, d), strings by normalised text).
    """

    kind: str
    normalized: str
    amount: float | int | None = None
    ymd: tuple[int, int, int] | None = None

    @property
    def key(self) -> tuple:
        if self.kind == "number":
            return ("number", self.amount)
        if self.kind == "date":
            return ("date", self.ymd)
        return ("string", self.normalized)

    def matches(self, other: _Denotation) -> bool:
        if self.normalized == other.normalized:
            return True
        if self.kind == other.kind == "number":
            return abs(self.amount - other.amount) < 1e-6  # type: ignore[operator]
        if self.kind == other.kind == "date":
            return self.ymd == other.ymd
        return False


# The leaderboard parses numbers by its own rules (plain int/float literals), not docintent.numbers: scores must match it.
def _parse_number(text: str) -> float | int | None:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _parse_date(text: str) -> tuple[int, int, int] | None:
    parts = text.lower().split("-")
    if len(parts) != 3:
        return None
    try:
        year = -1 if parts[0] in ("xx", "xxxx") else int(parts[0])
        month = -1 if parts[1] == "xx" else int(parts[1])
        day = -1 if parts[2] == "xx" else int(parts[2])
    except ValueError:
        return None
    if year == month == day == -1:
        return None
    if not (month == -1 or 1 <= month <= 12) or not (day == -1 or 1 <= day <= 31):
        return None
    return year, month, day


def _number(amount: float | int, original: str) -> _Denotation:
    if abs(amount - round(amount)) < 1e-6:
        # int() truncates (2.9999999 -> 2) exactly as the leaderboard scorer does, so figures stay comparable
        amount = int(amount)
    return _Denotation("number", normalize_table_text(original), amount=amount)


def _denotation(text: str) -> _Denotation:
    amount = _parse_number(text)
    if amount is not None:
        return _number(amount, text)
    ymd = _parse_date(text)
    if ymd is not None:
        if ymd[1] == ymd[2] == -1:
            return _number(ymd[0], text)
        return _Denotation("date", normalize_table_text(text), ymd=ymd)
    return _Denotation("string", normalize_table_text(text))


def _unescape_wtq(item: str) -> str:
    return item.replace(r"\n", "\n").replace(r"\p", "|").replace("\\\\", "\\")


def wtq_denotations(text: str) -> list[_Denotation]:
    """Split a WikiTableQuestions answer on ``|`` (unescaping ``\\n``, ``\\p``, ``\\\\``) into distinct
    values: an item that ``int()`` / ``float()`` reads is a number, ``yyyy-mm-dd`` (``xx`` for unknown
    parts) a date (a bare year a number), anything else a normalised string."""
    unique: dict[tuple, _Denotation] = {}
    for item in text.split("|"):
        value = _denotation(_unescape_wtq(item))
        unique.setdefault(value.key, value)
    return list(unique.values())


def wtq_match(prediction: str, answer: str) -> float:
    """Denotation accuracy: after ``||`` -> ``|``, prediction and gold are split into value sets
    (:func:`wtq_denotations`); 1 if both sets have the same size and every gold value matches some
    predicted value (equal normalised text, numbers within 1e-6, equal dates), else 0."""
    pred = _text(prediction).replace("||", "|")
    if pred == "nan":  # what a spreadsheet round trip leaves of an empty answer
        pred = ""
    gold_values = wtq_denotations(str(answer))
    pred_values = wtq_denotations(pred)
    if len(gold_values) != len(pred_values):
        return 0.0
    return float(all(any(g.matches(p) for p in pred_values) for g in gold_values))


_ANSWER_PREFIX = re.compile(r"^Answer: ")


def table_match(subset: str, prediction: str, answer: str) -> float:
    """One TableVQA row against one gold answer. A leading ``"Answer: "`` is removed first; then
    ``fintabnetqa`` -> :func:`fintabnet_match`, ``vtabfact`` -> :func:`tabfact_match`, ``vwtq`` /
    ``vwtq_syn`` and any other sub-split -> :func:`wtq_match`."""
    pred = _ANSWER_PREFIX.sub("", _text(prediction))
    if subset == "fintabnetqa":
        return fintabnet_match(pred, answer)
    if subset == "vtabfact":
        return tabfact_match(pred, answer)
    return wtq_match(pred, answer)


def table_score(subset: str, prediction: str, answers: str | Iterable[str]) -> float:
    """Row TableVQA score: the best :func:`table_match` over the gold answers (WildDoc has one).
    Table answers are never expanded as list text: ``|`` separates the items of one answer."""
    golds = [answers] if isinstance(answers, str) else [str(a) for a in answers]
    return max((table_match(subset, prediction, g) for g in golds), default=0.0)


# --- rows ----------------------------------------------------------------------------------------


def _check_task(task: str) -> None:
    if task not in TASKS:
        raise UnknownComponentError("task", task, list(TASKS))


@dataclass(frozen=True)
class Metric:
    """A way to score a prediction, and everything a table needs to report it.

    ``score(prediction, answers, subset)`` in [0, 1]; ``correct(score)``: whether a row counts as right for
    consistency; ``title``: how tables name it beside the task's title ("ANLS, tau 0.5"; ``None``: its name;
    ``""``: nothing); ``aggregate``: ``"mean"`` (the mean over every row, consistency over every question) or
    ``"macro"`` (each sub-split scored apart, then averaged with equal weight, as TableVQA is). Summaries, the
    bench table, ``docintent report`` and ``docintent score`` all read these fields, so they agree by
    construction.
    """

    name: str
    score: Callable[[str, str | Iterable[str], str], float]
    correct: Callable[[float], bool]
    _: KW_ONLY
    title: str | None = None
    aggregate: str = "mean"

    def __post_init__(self) -> None:
        if self.aggregate not in AGGREGATES:
            raise ConfigError(
                f"metric {self.name!r}: aggregate {self.aggregate!r} is not one of {', '.join(AGGREGATES)}"
            )

    def __call__(self) -> Metric:
        return self

    def label(self, subsets: int = 0) -> str:
        """What a table prints after the task's title, in brackets ("" for nothing): the title and, for a macro
        average, over how many sub-splits."""
        parts = [self.name if self.title is None else self.title]
        if self.aggregate == "macro":
            parts.append(f"macro over {subsets} sub-splits")
        return ", ".join(p for p in parts if p)


#: How a metric's rows become a task's figure (:attr:`Metric.aggregate`).
AGGREGATES = ("mean", "macro")


#: Metrics by name; a dataset's samples may name theirs in ``meta["metric"]`` (plug-ins: the
#: ``docintent.metrics`` entry points). Each task has its own by default (its record's ``metric``:
#: :data:`TASK_METRICS`).
METRICS: Registry[Metric] = Registry("metric", group="docintent.metrics")

#: WildDoc's three metrics.
BUILTIN: tuple[Metric, ...] = (
    Metric("anls", lambda p, a, s: anls(p, a), lambda score: score > ANLS_TAU, title=f"ANLS, tau {ANLS_TAU}"),
    Metric(
        "relaxed_accuracy",
        lambda p, a, s: relaxed_accuracy(p, a),
        lambda score: score >= 1.0,
        title=f"relaxed accuracy, {RELAXED_TOLERANCE:.0%}",
    ),
    Metric("table", lambda p, a, s: table_score(s, p, a), lambda score: score >= 1.0, title="", aggregate="macro"),
)
for _record in BUILTIN:
    METRICS.register(_record.name, _record)


class _TaskMetrics(Mapping[str, str]):
    """Task name -> the name of its default metric, read from the task records (plug-in tasks included)."""

    def __getitem__(self, task: str) -> str:
        if task not in TASKS:
            raise KeyError(task)
        return TASKS[task].metric

    def __iter__(self) -> Iterator[str]:
        return iter(TASKS)

    def __len__(self) -> int:
        return len(TASKS)


#: The default metric of each task (the built-ins: WildDoc's rules), as each task's record names it.
TASK_METRICS: Mapping[str, str] = _TaskMetrics()


def row_metric(sample: Mapping[str, Any]) -> str | None:
    """The metric a stored sample names for itself (``meta["metric"]``), or None: its task's default."""
    meta = sample.get("meta")
    return meta.get("metric") if isinstance(meta, Mapping) else None


def _metric(task: str, metric: str | None) -> Metric:
    _check_task(task)
    return METRICS.get(metric or TASK_METRICS[task])


def score_row(
    task: str, subset: str, prediction: str | None, answers: str | Iterable[str], metric: str | None = None
) -> float:
    """Score one prediction by its task family (or by ``metric``, when the sample names one), in [0, 1].

    ``doc`` -> :func:`anls`; ``chart`` -> :func:`relaxed_accuracy`; ``table`` -> :func:`table_score` with
    ``subset`` choosing the sub-split rule. A missing prediction (``None``) is the empty answer.
    """
    return float(_metric(task, metric).score(_text(prediction), answers, subset))


def row_correct(task: str, score: float, metric: str | None = None) -> bool:
    """Whether a row counts as correct for consistency: ``doc`` needs ANLS > 0.5 (strictly), the other
    families need a full score of 1 (or the rule of ``metric``)."""
    return bool(_metric(task, metric).correct(score))


# --- summary -------------------------------------------------------------------------------------


@dataclass
class SplitScore:
    """Score and consistency of one subtask or sub-split, in percent.

    ``score`` = 100 x mean row score. ``consistency`` = 100 x (questions whose every capture is
    correct) / (questions). ``rows`` / ``questions``: how many of each were scored.
    """

    score: float
    consistency: float
    rows: int
    _: KW_ONLY
    questions: int
    subsets: dict[str, SplitScore] = field(default_factory=dict)
    #: The name of the metric the rows were scored by (a task's figure; "" on a sub-split).
    metric: str = ""

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "score": self.score,
            "consistency": self.consistency,
            "rows": self.rows,
            "questions": self.questions,
        }
        if self.metric:
            d["metric"] = self.metric
        if self.subsets:
            d["subsets"] = {name: s.to_dict() for name, s in self.subsets.items()}
        return d


@dataclass
class Summary:
    """Per-subtask results (``tasks[task]``, in :data:`TASKS` order) and their plain means."""

    tasks: dict[str, SplitScore]
    average_score: float
    average_consistency: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "tasks": {name: s.to_dict() for name, s in self.tasks.items()},
            "average": {"score": self.average_score, "consistency": self.average_consistency},
        }


def _get(row: Any, name: str, default: Any = None) -> Any:
    if isinstance(row, Mapping):
        return row.get(name, default)
    return getattr(row, name, default)


def _split(scores: Sequence[float], groups: Sequence[str], correct: Sequence[bool]) -> SplitScore:
    all_correct: dict[str, bool] = defaultdict(lambda: True)
    for group, ok in zip(groups, correct):
        all_correct[group] = all_correct[group] and ok
    questions = len(all_correct)
    return SplitScore(
        score=100.0 * sum(scores) / len(scores),
        consistency=100.0 * sum(all_correct.values()) / questions,
        rows=len(scores),
        questions=questions,
    )


def summarize(rows: Iterable[Any]) -> Summary:
    """Score rows and aggregate them the WildDoc way.

    Each row is a mapping or object with ``task``, ``subset``, ``group``, ``prediction`` and
    ``answers`` (a row that already has a numeric ``score`` is not re-scored), and optionally ``metric`` (the
    sample's own; default: its task's). Per task family: score = mean row score; consistency = share of groups
    (questions) whose rows are all correct (the metric's :attr:`Metric.correct`). A ``"macro"`` metric (the
    table rule) is computed per sub-split and then averaged with equal weight (both score and consistency). The
    average is the mean over the task families present. Each task's figure carries the metric it was scored by
    (:attr:`SplitScore.metric`). Raises DatasetError when there are no rows, or when one task's rows name two
    metrics (their figures cannot be one number).
    """
    by_task: dict[str, dict[str, list[tuple[float, str, bool]]]] = defaultdict(lambda: defaultdict(list))
    metric_of: dict[str, set[str]] = defaultdict(set)
    for row in rows:
        task = str(_get(row, "task"))
        _check_task(task)
        subset = str(_get(row, "subset") or task)
        metric = _metric(task, _get(row, "metric"))
        metric_of[task].add(metric.name)
        score = _get(row, "score")
        if score is None:
            score = metric.score(_text(_get(row, "prediction")), _get(row, "answers") or (), subset)
        group = str(_get(row, "group") or _get(row, "id"))
        by_task[task][subset].append((float(score), group, bool(metric.correct(float(score)))))
    if not by_task:
        raise DatasetError("no rows to score")

    tasks: dict[str, SplitScore] = {}
    for task in TASKS:
        if task not in by_task:
            continue
        if len(metric_of[task]) > 1:
            raise DatasetError(
                f"the {task!r} rows are scored by {len(metric_of[task])} metrics "
                f"({', '.join(sorted(metric_of[task]))}): one figure cannot hold them; "
                "score each metric's rows apart"
            )
        (name,) = metric_of[task]
        metric = METRICS.get(name)
        splits = {
            subset: _split([s for s, _, _ in items], [f"{subset}/{g}" for _, g, _ in items], [c for *_, c in items])
            for subset, items in sorted(by_task[task].items(), key=lambda kv: _subset_order(task, kv[0]))
        }
        if metric.aggregate == "macro":
            total = SplitScore(
                score=sum(s.score for s in splits.values()) / len(splits),
                consistency=sum(s.consistency for s in splits.values()) / len(splits),
                rows=sum(s.rows for s in splits.values()),
                questions=sum(s.questions for s in splits.values()),
            )
        else:
            items = [item for subset in splits for item in by_task[task][subset]]
            groups = [f"{subset}/{g}" for subset in splits for _, g, _ in by_task[task][subset]]
            total = _split([s for s, _, _ in items], groups, [c for *_, c in items])
        total.subsets = splits
        total.metric = name
        tasks[task] = total
    return Summary(
        tasks=tasks,
        average_score=sum(t.score for t in tasks.values()) / len(tasks),
        average_consistency=sum(t.consistency for t in tasks.values()) / len(tasks),
    )


def _subset_order(task: str, subset: str) -> tuple[int, str]:
    if task == "table" and subset in TABLE_SUBSETS:
        return (TABLE_SUBSETS.index(subset), subset)
    return (len(TABLE_SUBSETS), subset)


def column_title(task: str, metric: Metric | str | None = None, subsets: int = 0) -> str:
    """How a table names ``task``'s figures scored by ``metric`` (default: the task's own): the task's title and
    the metric's label in brackets, e.g. "DocVQA (ANLS, tau 0.5)" or "TableVQA (macro over 4 sub-splits)"."""
    record = _metric(task, metric) if not isinstance(metric, Metric) else metric
    label = record.label(subsets)
    return f"{TASKS[task].title} ({label})" if label else TASKS[task].title


def summary_markdown(summary: Summary, title: str | None = None) -> str:
    """Render a summary as a Markdown table: one line per subtask (score / consistency, percent, two
    decimals), the TableVQA sub-splits indented under it, and the average of the subtasks."""
    lines = []
    if title:
        lines += [f"**{title}**", ""]
    lines += ["| subtask | score | consistency |", "|---|---|---|"]
    for task, result in summary.tasks.items():
        metric = METRICS.get(result.metric or TASK_METRICS[task])
        lines.append(
            f"| {column_title(task, metric, len(result.subsets))} | {result.score:.2f} | {result.consistency:.2f} |"
        )
        if metric.aggregate == "macro":
            for name, sub in result.subsets.items():
                lines.append(f"|   {name} | {sub.score:.2f} | {sub.consistency:.2f} |")
    n = len(summary.tasks)
    label = f"Average of the {n} subtasks" if n > 1 else "Average"
    lines.append(f"| {label} | {summary.average_score:.2f} | {summary.average_consistency:.2f} |")
    return "\n".join(lines)
