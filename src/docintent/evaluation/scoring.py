"""Re-score finished runs (or a WildDoc predictions file) without running anything again.

A run is a directory with ``results.jsonl``: one row per (sample, strategy) with at least ``sample``
(a ``Sample.to_dict()``), ``strategy``, ``answer`` (the prediction) and ``error``. A WildDoc predictions
file is JSONL (optionally gzipped) with ``index``, ``question``, ``answer``, ``prediction``.

    >>> from docintent.evaluation.scoring import score_path
    >>> for run in score_path("runs/wilddoc-offline"):            # doctest: +SKIP
    ...     print(run.strategy, run.summary.average_score)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DatasetError
from .datasets import iter_jsonl, read_wilddoc_predictions
from .metrics import Summary, parse_answers, row_metric, summarize, summary_markdown


@dataclass
class StrategyScore:
    """The summary of one strategy's rows; ``errors`` counts rows that failed (scored as empty answers)."""

    strategy: str
    summary: Summary
    rows: int
    errors: int

    def to_dict(self) -> dict[str, Any]:
        return {"strategy": self.strategy, "rows": self.rows, "errors": self.errors, **self.summary.to_dict()}

    def markdown(self) -> str:
        """A heading line and the summary table."""
        head = f"### {self.strategy} ({self.rows} rows, {self.errors} errors)"
        return f"{head}\n\n{summary_markdown(self.summary)}"


def _results_file(path: Path) -> Path:
    if path.is_dir():
        results = path / "results.jsonl"
        if not results.is_file():
            raise DatasetError(f"{path}: no results.jsonl in this run directory")
        return results
    if not path.is_file():
        raise DatasetError(f"{path}: no such run directory or file")
    return path


def _prediction_file_label(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".jsonl", ".json"):
        name = name.removesuffix(suffix)
    return name


def _gold_answers(task: str, answers: Any) -> list[str]:
    """Gold answers of a run row as a list. A single string is one answer (a table answer as it is, other
    families' list text such as ``"['40', '40%']"`` expanded), never a sequence of characters."""
    if isinstance(answers, str):
        return [answers] if task == "table" else parse_answers(answers)
    if answers is None:
        return []
    return [str(a) for a in answers]


def run_rows(path: str | Path) -> dict[str, list[dict[str, Any]]]:
    """Scorable rows by strategy, in first-seen order.

    A run row becomes ``{id, task, subset, group, answers, prediction, error}``; when a sample was run
    more than once by a strategy (a resumed run), its last row counts. A WildDoc predictions file is one
    "strategy" named after the file.
    """
    file = _results_file(Path(path))
    first = next(iter_jsonl(file), None)
    if first is None:
        raise DatasetError(f"{file}: holds no rows")
    _, row = first
    if "sample" not in row:
        if "index" in row and "prediction" in row:
            return {_prediction_file_label(file): read_wilddoc_predictions(file)}
        raise DatasetError(
            f"{file}: rows have neither 'sample' (a docintent run) nor 'index' and 'prediction' (predictions)"
        )
    by_strategy: dict[str, dict[str, dict[str, Any]]] = {}
    for number, row in iter_jsonl(file):
        sample = row.get("sample")
        if not isinstance(sample, dict):
            raise DatasetError(f"{file}:{number}: row has no 'sample' object")
        missing = [k for k in ("id", "task", "answers") if k not in sample]
        if missing:
            raise DatasetError(f"{file}:{number}: sample lacks {', '.join(missing)}")
        strategy = str(row.get("strategy") or "unnamed")
        answers = _gold_answers(str(sample["task"]), sample["answers"])
        if not any(a.strip() for a in answers):  # scoring it 0 would lower the average for no reason
            raise DatasetError(
                f"{file}:{number}: sample {str(sample['id'])!r} has no gold answer, so it cannot be "
                "scored; add its answers or leave the row out"
            )
        by_strategy.setdefault(strategy, {})[str(sample["id"])] = {
            "id": str(sample["id"]),
            "task": str(sample["task"]),
            "subset": str(sample.get("subset") or sample["task"]),
            "group": str(sample.get("group") or sample["id"]),
            "answers": answers,
            "prediction": row.get("answer"),
            "error": row.get("error"),
            "metric": row_metric(sample),
        }
    return {strategy: list(rows.values()) for strategy, rows in by_strategy.items()}


def score_path(path: str | Path) -> list[StrategyScore]:
    """Score every strategy of a run directory, ``results.jsonl`` or WildDoc predictions file."""
    scores = []
    for strategy, rows in run_rows(path).items():
        errors = sum(1 for r in rows if r.get("error"))
        scores.append(StrategyScore(strategy, summarize(rows), len(rows), errors))
    return scores


def scores_markdown(scores: list[StrategyScore]) -> str:
    """All strategies' tables, one after the other."""
    return "\n\n".join(s.markdown() for s in scores) + "\n"


def scores_json(scores: list[StrategyScore]) -> str:
    """All strategies' summaries as a JSON document (percentages unrounded)."""
    return json.dumps({"strategies": [s.to_dict() for s in scores]}, indent=2) + "\n"
