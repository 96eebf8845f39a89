"""VisDocAgentBench files and scorer: one ranked-output contract for static retrievers and search agents.

A benchmark directory holds three JSONL files:

- ``queries.jsonl``: ``{"query_id", "query", "topic_id"}``
- ``evaluator_annotations.jsonl``: ``{"query_id", "answer_page_id", "level", "support_page_ids", "topic_id"}``
  (``level``: 1 direct, 2 one-bridge, 3 two-bridge; kept away from every retriever)
- ``pages.jsonl``: ``{"page_id", ...}``, the known handles (extra fields are provenance)

A submission maps each query id to a ranking. A ranking that is not exactly 10 distinct known handles is
invalid: it scores 0 on every metric but still counts in the denominator, as does a query with no submission.

Metrics, in percent over all annotated queries (and per level and per topic):

- Recall@k = share of queries whose answer page is among the first k handles (k = 1, 3, 5, 10);
- MRR@10 = mean of 1 / rank of the answer page, 0 when it is not in the first 10.

>>> gold = {"q1": Annotation("q1", "p3", 1, support_page_ids=(), topic_id="t")}
>>> score({"q1": ["p1", "p2", "p3", "p4", "p5", "p6", "p7", "p8", "p9", "p10"]}, gold, known={f"p{i}" for i in range(1, 11)}).overall["MRR@10"]
33.33
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DatasetError

RANKING_SIZE = 10
CUTOFFS = (1, 3, 5, 10)
LEVEL_NAMES = {1: "direct", 2: "one-bridge", 3: "two-bridge"}
METRICS = tuple(f"R@{k}" for k in CUTOFFS) + ("MRR@10",)


@dataclass(frozen=True)
class Query:
    """One benchmark question."""

    query_id: str
    query: str
    topic_id: str


@dataclass(frozen=True)
class Annotation:
    """The evaluator's answer page for one query (never shown to a retriever)."""

    query_id: str
    answer_page_id: str
    level: int
    _: KW_ONLY
    support_page_ids: tuple[str, ...]
    topic_id: str


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    if not path.is_file():
        raise DatasetError(f"{path}: file not found")
    rows = []
    with path.open(encoding="utf-8") as fh:
        for n, line in enumerate(fh, start=1):
            if line.strip():
                try:
                    rows.append(json.loads(line))
                except json.JSONDecodeError as err:
                    raise DatasetError(f"{path}:{n}: not valid JSON ({err.msg})") from None
    return rows


def _field(row: Mapping[str, Any], key: str, path: Path, n: int) -> Any:
    if key not in row:
        raise DatasetError(f"{path}: row {n} has no {key!r} field")
    return row[key]


def load_queries(directory: str | Path) -> list[Query]:
    """``queries.jsonl`` of a benchmark directory."""
    path = Path(directory) / "queries.jsonl"
    return [
        Query(str(_field(r, "query_id", path, n)), str(_field(r, "query", path, n)), str(r.get("topic_id", "")))
        for n, r in enumerate(_read_jsonl(path), start=1)
    ]


def load_annotations(directory: str | Path) -> dict[str, Annotation]:
    """``evaluator_annotations.jsonl`` keyed by query id."""
    path = Path(directory) / "evaluator_annotations.jsonl"
    out = {}
    for n, r in enumerate(_read_jsonl(path), start=1):
        qid = str(_field(r, "query_id", path, n))
        out[qid] = Annotation(
            qid,
            str(_field(r, "answer_page_id", path, n)),
            int(_field(r, "level", path, n)),
            support_page_ids=tuple(str(s) for s in r.get("support_page_ids", ())),
            topic_id=str(r.get("topic_id", "")),
        )
    return out


def load_page_ids(directory: str | Path) -> set[str]:
    """The known page handles of ``pages.jsonl``."""
    path = Path(directory) / "pages.jsonl"
    return {str(_field(r, "page_id", path, n)) for n, r in enumerate(_read_jsonl(path), start=1)}


def write_jsonl(path: str | Path, rows: Iterable[Mapping[str, Any]]) -> None:
    """Write rows as one JSON object per line (UTF-8)."""
    with Path(path).open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


def ranking_problem(ranking: Sequence[str] | None, known: set[str]) -> str | None:
    """Why ``ranking`` breaks the contract (exactly 10 distinct known handles), or None when it is valid."""
    if ranking is None:
        return "no submission"
    if len(ranking) != RANKING_SIZE:
        return f"{len(ranking)} handles instead of {RANKING_SIZE}"
    if len(set(ranking)) != len(ranking):
        dup = sorted({h for h in ranking if list(ranking).count(h) > 1})
        return f"duplicate handles: {', '.join(dup)}"
    unknown = [h for h in ranking if h not in known]
    if unknown:
        return f"unknown handles: {', '.join(unknown)}"
    return None


def query_metrics(ranking: Sequence[str] | None, answer: str, known: set[str]) -> dict[str, float]:
    """Recall@k (0/1) and reciprocal rank@10 of one query; all 0 for an invalid ranking."""
    if ranking_problem(ranking, known) is not None:
        return {m: 0.0 for m in METRICS}
    ranking = list(ranking)  # type: ignore[arg-type]
    rank = ranking.index(answer) + 1 if answer in ranking else None
    out = {f"R@{k}": float(rank is not None and rank <= k) for k in CUTOFFS}
    out["MRR@10"] = 1.0 / rank if rank is not None else 0.0
    return out


def _mean_percent(rows: list[dict[str, float]]) -> dict[str, float]:
    n = len(rows)
    return {m: round(100.0 * sum(r[m] for r in rows) / n, 2) if n else 0.0 for m in METRICS} | {"n": n}


@dataclass
class Scores:
    """Benchmark scores in percent: overall, per level name and per topic, plus invalid submissions."""

    overall: dict[str, float]
    by_level: dict[str, dict[str, float]]
    by_topic: dict[str, dict[str, float]]
    _: KW_ONLY
    invalid: dict[str, str] = field(default_factory=dict)
    per_query: dict[str, dict[str, float]] = field(default_factory=dict, repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {"overall": self.overall, "by_level": self.by_level, "by_topic": self.by_topic, "invalid": self.invalid}


def score(
    submissions: Mapping[str, Sequence[str] | None], annotations: Mapping[str, Annotation], *, known: set[str]
) -> Scores:
    """Score ``submissions`` (query id -> ranking) against every annotated query (see the module docstring)."""
    per_query: dict[str, dict[str, float]] = {}
    invalid: dict[str, str] = {}
    for qid, ann in annotations.items():
        ranking = submissions.get(qid)
        problem = ranking_problem(ranking, known)
        if problem:
            invalid[qid] = problem
        per_query[qid] = query_metrics(ranking, ann.answer_page_id, known)
    by_level: dict[str, list] = {}
    by_topic: dict[str, list] = {}
    for qid, ann in annotations.items():
        by_level.setdefault(LEVEL_NAMES.get(ann.level, f"level-{ann.level}"), []).append(per_query[qid])
        by_topic.setdefault(ann.topic_id, []).append(per_query[qid])
    return Scores(
        overall=_mean_percent(list(per_query.values())),
        by_level={
            k: _mean_percent(v)
            for k, v in sorted(
                by_level.items(),
                key=lambda kv: list(LEVEL_NAMES.values()).index(kv[0]) if kv[0] in LEVEL_NAMES.values() else 99,
            )
        },
        by_topic={k: _mean_percent(v) for k, v in sorted(by_topic.items())},
        invalid=invalid,
        per_query=per_query,
    )
