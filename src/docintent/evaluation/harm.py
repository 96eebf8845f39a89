"""Where restoration hurt: one strategy minus a baseline, per document kind and per capture condition, with a
paired bootstrap interval, and the samples where a kept tool lowered the score.

A run's rows are paired by sample id (only samples both strategies answered count). For each group (a
document kind, ``subset``; a capture condition, ``meta.condition``; any ``meta`` field) the difference of the
mean scores is given in points with a 95 % interval from a paired bootstrap (2,000 resamples of the group's
samples, seeded, so the same rows give the same interval). A group whose interval lies wholly below zero is a
measured loss; a difference inside the interval's spread is noise.

>>> rows = [{"sample": {"id": str(i), "subset": "letter", "meta": {}}, "strategy": s, "score": v,
...          "result": {"tools_kept": ["deblurring"] if s == "docintent" and i == 0 else []}}
...         for i in range(4) for s, v in (("none", 1.0), ("docintent", 0.0 if i == 0 else 1.0))]
>>> cell = harm_table(rows, ["subset"])[0]
>>> cell.value, cell.n, round(cell.diff, 1), [h.sample for h in harmed_samples(rows)]
('letter', 4, -25.0, ['0'])
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass
from typing import Any

import numpy as np

#: Bootstrap resamples and the seed they are drawn with.
RESAMPLES = 2000
SEED = 0


@dataclass(frozen=True)
class HarmCell:
    """One group: ``key`` (the field grouped by) and its ``value``, ``n`` paired samples, the mean score of each
    strategy and their difference in points, with the paired bootstrap's 95 % interval."""

    key: str
    value: str
    n: int
    _: KW_ONLY
    treated: float
    baseline: float
    diff: float
    low: float
    high: float

    @property
    def loss(self) -> bool:
        """The interval lies wholly below zero: a measured loss."""
        return self.high < 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "value": self.value,
            "n": self.n,
            "treated": round(self.treated, 2),
            "baseline": round(self.baseline, 2),
            "diff": round(self.diff, 2),
            "low": round(self.low, 2),
            "high": round(self.high, 2),
            "loss": self.loss,
        }


@dataclass(frozen=True)
class Harmed:
    """A sample where the treated strategy kept a tool and scored lower than the baseline."""

    sample: str
    question: str
    baseline: float
    _: KW_ONLY
    treated: float
    kept: tuple[str, ...]
    group: str


def _field(sample: dict[str, Any], key: str) -> str | None:
    if key in ("subset", "task"):
        value = sample.get(key) or sample.get("task")
    else:
        value = (sample.get("meta") or {}).get(key)
    return None if value in (None, "") else str(value)


def _pairs(rows: Sequence[dict[str, Any]], treated: str, baseline: str) -> list[tuple[dict, dict, dict]]:
    by: dict[str, dict[str, dict]] = {}
    for row in rows:
        by.setdefault(str(row["sample"]["id"]), {})[row["strategy"]] = row
    return [
        (pair[treated]["sample"], pair[treated], pair[baseline])
        for _, pair in sorted(by.items())
        if treated in pair and baseline in pair
    ]


def _score(row: dict[str, Any]) -> float:
    return 0.0 if row.get("error") else float(row.get("score") or 0.0)


def group_keys(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The fields a run can be broken down by: ``subset`` (the document kind) and the capture ``condition`` (or
    ``family``) when the samples record one."""
    keys = ["subset"]
    meta = [(r["sample"].get("meta") or {}) for r in rows]
    for key in ("condition", "family"):
        if any(key in m for m in meta):
            keys.append(key)
    return keys


def harm_table(
    rows: Sequence[dict[str, Any]],
    keys: Sequence[str] | None = None,
    *,
    treated: str = "docintent",
    baseline: str = "none",
    min_samples: int = 1,
) -> list[HarmCell]:
    """``treated`` minus ``baseline`` per value of each of ``keys`` (default :func:`group_keys`), groups with at
    least ``min_samples`` paired samples, in the order key, then value."""
    pairs = _pairs(rows, treated, baseline)
    rng = np.random.default_rng(SEED)
    out: list[HarmCell] = []
    for key in keys or group_keys(rows):
        groups: dict[str, list[float]] = {}
        means: dict[str, list[tuple[float, float]]] = {}
        for sample, t, b in pairs:
            value = _field(sample, key)
            if value is None:
                continue
            groups.setdefault(value, []).append(_score(t) - _score(b))
            means.setdefault(value, []).append((_score(t), _score(b)))
        for value in sorted(groups):
            diffs = np.asarray(groups[value])
            if len(diffs) < min_samples:
                continue
            boot = diffs[rng.integers(0, len(diffs), size=(RESAMPLES, len(diffs)))].mean(axis=1)
            low, high = np.percentile(boot, [2.5, 97.5])
            t_mean = float(np.mean([m[0] for m in means[value]]))
            b_mean = float(np.mean([m[1] for m in means[value]]))
            out.append(
                HarmCell(
                    key,
                    value,
                    len(diffs),
                    treated=100 * t_mean,
                    baseline=100 * b_mean,
                    diff=100 * float(diffs.mean()),
                    low=100 * float(low),
                    high=100 * float(high),
                )
            )
    return out


def harmed_samples(
    rows: Sequence[dict[str, Any]], *, treated: str = "docintent", baseline: str = "none", key: str = "subset"
) -> list[Harmed]:
    """The samples where ``treated`` kept at least one tool and scored lower than ``baseline``, worst first."""
    out = []
    for sample, t, b in _pairs(rows, treated, baseline):
        kept = tuple((t.get("result") or {}).get("tools_kept") or ())
        if kept and _score(t) < _score(b):
            out.append(
                Harmed(
                    str(sample["id"]),
                    str(sample.get("question", "")),
                    _score(b),
                    treated=_score(t),
                    kept=kept,
                    group=_field(sample, key) or "",
                )
            )
    return sorted(out, key=lambda h: (h.treated - h.baseline, h.sample))


def harm_markdown(
    rows: Sequence[dict[str, Any]],
    *,
    treated: str = "docintent",
    baseline: str = "none",
    min_samples: int = 8,
    shown: int = 12,
) -> str:
    """The harm section of a report: the table per group (groups of at least ``min_samples``) and the samples
    where a kept tool lowered the score."""
    cells = harm_table(rows, treated=treated, baseline=baseline, min_samples=min_samples)
    if not cells:
        return ""
    lines = [
        f"| group | value | n | {treated} | {baseline} | difference (points) | 95 % interval |",
        "|---|---|---:|---:|---:|---:|---|",
    ]
    for c in cells:
        mark = " **loss**" if c.loss else ""
        lines.append(
            f"| {c.key} | {c.value} | {c.n} | {c.treated:.1f} | {c.baseline:.1f} | {c.diff:+.1f}{mark} "
            f"| {c.low:+.1f} to {c.high:+.1f} |"
        )
    harmed = harmed_samples(rows, treated=treated, baseline=baseline)
    lines += [
        "",
        f"{len(harmed)} sample(s) where {treated} kept a tool and scored lower than {baseline}"
        + (":" if harmed else "."),
    ]
    if harmed:
        lines += ["", "| sample | kind | kept | " + f"{baseline} | {treated} |", "|---|---|---|---:|---:|"]
        lines += [
            f"| {h.sample} | {h.group} | {', '.join(h.kept)} | {h.baseline:.2f} | {h.treated:.2f} |"
            for h in harmed[:shown]
        ]
        if len(harmed) > shown:
            lines.append(f"| ... {len(harmed) - shown} more | | | | |")
    return "\n".join(lines)


__all__ = ["HarmCell", "Harmed", "group_keys", "harm_markdown", "harm_table", "harmed_samples"]
