"""Multi-step questions over a rendered chart or table: differences, sums, averages, conditional counts and
second-highest, computed from the document's clean content.

They are made from ``Document.content`` with their own random stream, after the document is drawn, so asking for
them changes nothing in the documents or the look-up questions of a seed (the default set stays byte-identical).
Each question's ``meta`` says ``multistep`` and which ``op`` it needs; ``intent`` names the question kind
(``difference``, ``sum``, ``average``, ``count``, ``second``) so reports can split scores by it.

>>> import numpy as np
>>> from docintent.synth.questions import Document
>>> doc = Document("chart", "bar", np.zeros((2, 2, 3), np.uint8), content={"data": {"Peru": 12, "Chad": 30, "Mali": 7},
...                "labelled": True}, questions=[], fonts=[])
>>> [q.intent for q in multistep_questions(doc, np.random.default_rng(0))]
['difference', 'sum', 'average', 'count', 'second']
"""

from __future__ import annotations

import re
from typing import Any

import numpy as np

from . import vocab as V
from .questions import QA, Document, phrase


def _decimals(values: list[float]) -> int:
    """How many decimals the printed values carry (charts print 0 or 1)."""
    return 1 if any(abs(v - round(v)) > 1e-9 for v in values) else 0


def _num(value: float, decimals: int) -> tuple[str, ...]:
    return V.number_answers(round(value, decimals), decimals)


def multistep_questions(doc: Document, rng: np.random.Generator) -> list[QA]:
    """Multi-step questions about ``doc`` (charts with one series or grouped bars, general and financial
    tables); an empty list for other documents."""
    if doc.family == "chart":
        return _chart(doc, rng)
    if doc.family == "table":
        return _table(doc, rng)
    return []


def _qa(question: str, answers: tuple[str, ...], intent: str, subset: str, op: str, **meta: Any) -> QA:
    return QA(question, answers, intent, subset=subset, printed=False, meta={"multistep": True, "op": op, **meta})


def _chart(doc: Document, rng: np.random.Generator) -> list[QA]:
    content = doc.content
    kind = doc.kind
    data = content.get("data", {})
    if kind == "grouped_bar":
        cats = list(content.get("categories", []))
        series = list(data)
        if len(cats) < 2 or len(series) < 2:
            return []
        s = series[int(rng.integers(len(series)))]
        vals = [float(v) for v in data[s]]
        what = "value"
        i = int(rng.integers(len(cats)))
        total = sum(float(data[x][i]) for x in series)
        dec = _decimals([float(v) for x in series for v in data[x]])
        qs = [
            _qa(
                phrase(
                    rng,
                    (
                        "What is the total for {c} across all years shown?",
                        "What do the values for {c} add up to over all years?",
                    ),
                    c=cats[i],
                ),
                _num(total, dec),
                "sum",
                kind,
                "sum",
                labelled=content.get("labelled"),
            )
        ]
        qs += _pairwise(rng, cats, vals, kind, what, "country", content.get("labelled"), series=s)
        return qs
    if not isinstance(data, dict) or len(data) < 3:
        return []
    cats = [str(k) for k in data]
    vals = [float(v) for v in data.values()]
    noun = {"pie": "segment", "line": "year"}.get(kind, "country")
    what = "share" if kind == "pie" else "value"
    return _pairwise(rng, cats, vals, kind, what, noun, content.get("labelled"))


def _pairwise(
    rng, cats: list[str], vals: list[float], kind: str, what: str, noun: str, labelled: Any, series: str | None = None
) -> list[QA]:
    """Difference, sum, average, conditional count and second-highest over one series of values."""
    dec = _decimals(vals)
    n = len(cats)
    i, j = (int(x) for x in rng.choice(n, 2, replace=False))
    a, b = cats[i], cats[j]
    where = f" in {series}" if series else ""
    qs = [
        _qa(
            phrase(
                rng,
                (
                    "By how much does {a} differ from {b}{s}?",
                    "How much higher is {hi} than {lo}{s}?",
                    "What is the gap between {a} and {b}{s}?",
                ),
                a=a,
                b=b,
                hi=cats[i] if vals[i] >= vals[j] else cats[j],
                lo=cats[j] if vals[i] >= vals[j] else cats[i],
                s=where,
            ),
            _num(abs(vals[i] - vals[j]), dec),
            "difference",
            kind,
            "diff",
            labelled=labelled,
        ),
        _qa(
            phrase(
                rng,
                (
                    "What is the sum of {a} and {b}{s}?",
                    "What do {a} and {b} add up to{s}?",
                    "What is the combined {w} of {a} and {b}{s}?",
                ),
                a=a,
                b=b,
                w=what,
                s=where,
            ),
            _num(vals[i] + vals[j], dec),
            "sum",
            kind,
            "sum",
            labelled=labelled,
        ),
        _qa(
            phrase(
                rng,
                ("What is the average of {a} and {b}{s}?", "What is the mean {w} of {a} and {b}{s}?"),
                a=a,
                b=b,
                w=what,
                s=where,
            ),
            _num((vals[i] + vals[j]) / 2, dec + (1 if (vals[i] + vals[j]) * 10**dec % 2 else 0)),
            "average",
            kind,
            "avg",
            labelled=labelled,
        ),
    ]
    ordered = sorted(vals)
    # a threshold between two neighbouring values, so a reading within a few percent still counts right
    k = int(rng.integers(1, n))
    threshold = round((ordered[k - 1] + ordered[k]) / 2, dec)
    if ordered[k - 1] < threshold < ordered[k]:
        above = sum(v > threshold for v in vals)
        plural = {"country": "countries", "segment": "segments", "year": "years"}[noun]
        qs.append(
            _qa(
                phrase(
                    rng,
                    ("How many {p} have a {w} above {x}{s}?", "How many {p} are above {x}{s}?"),
                    p=plural,
                    w=what,
                    x=_fmt(threshold, dec),
                    s=where,
                ),
                (str(above),),
                "count",
                kind,
                "count",
                labelled=labelled,
                threshold=threshold,
            )
        )
    if len(set(vals)) == n and n >= 3:
        second = cats[int(np.argsort(vals)[-2])]
        qs.append(
            _qa(
                phrase(
                    rng,
                    ("Which {n} has the second highest {w}{s}?", "Which {n} ranks second by {w}{s}?"),
                    n=noun,
                    w=what,
                    s=where,
                ),
                (second,),
                "second",
                kind,
                "second",
                labelled=labelled,
            )
        )
    return qs


def _fmt(v: float, dec: int) -> str:
    return f"{v:.{dec}f}" if dec else str(int(round(v)))


def _cell_number(text: str) -> float | None:
    t = text.replace(",", "").replace("$", "").replace("%", "").strip()
    negative = t.startswith("(") and t.endswith(")")
    t = t.strip("()")
    try:
        v = float(t)
    except ValueError:
        return None
    return -v if negative else v


def _table(doc: Document, rng: np.random.Generator) -> list[QA]:
    content = doc.content
    header: list[str] = list(content.get("header", []))
    rows: list[list[str]] = [list(r) for r in content.get("rows", [])]
    if not header or len(rows) < 3:
        return []
    if doc.kind == "financial":
        return _financial(rng, header, rows)
    numeric = [
        c
        for c in range(1, len(header))
        if all(_cell_number(r[c]) is not None for r in rows) and not re.search(r"year", header[c], re.I)
    ]
    numeric = [c for c in numeric if len({r[c] for r in rows}) > 2]
    if not numeric:
        return []
    c = numeric[int(rng.integers(len(numeric)))]
    col = header[c]
    keys = [r[0] for r in rows]
    vals = [float(_cell_number(r[c]) or 0.0) for r in rows]
    kh = header[0].lower()
    plural = {"city": "cities"}.get(kh, kh + "s")
    n = len(rows)
    i, j = (int(x) for x in rng.choice(n, 2, replace=False))
    hi, lo = (i, j) if vals[i] >= vals[j] else (j, i)
    qs = [
        _qa(
            phrase(
                rng,
                ("What is the difference in {c} between {a} and {b}?", "How many more {lc} does {h} have than {l}?"),
                c=col,
                lc=col.lower(),
                a=keys[i],
                b=keys[j],
                h=keys[hi],
                l=keys[lo],
            ),
            _num(vals[hi] - vals[lo], 0),
            "difference",
            "vwtq",
            "diff",
            column=col,
        ),
        _qa(
            phrase(
                rng,
                ("What is the combined {c} of {a} and {b}?", "What is the total {c} of {a} and {b}?"),
                c=col,
                a=keys[i],
                b=keys[j],
            ),
            _num(vals[i] + vals[j], 0),
            "sum",
            "vwtq",
            "sum",
            column=col,
        ),
        _qa(
            phrase(rng, ("What is the average {c} of {a} and {b}?",), c=col, a=keys[i], b=keys[j]),
            _num((vals[i] + vals[j]) / 2, 1 if (vals[i] + vals[j]) % 2 else 0),
            "average",
            "vwtq",
            "avg",
            column=col,
        ),
    ]
    ordered = sorted(vals)
    k = int(rng.integers(1, n))
    if ordered[k - 1] < ordered[k]:
        threshold = int((ordered[k - 1] + ordered[k]) // 2)
        if ordered[k - 1] <= threshold < ordered[k]:
            below = rng.random() < 0.5
            count = sum(v < threshold for v in vals) if below else sum(v > threshold for v in vals)
            qs.append(
                _qa(
                    phrase(
                        rng,
                        ("How many {p} have {c} {w} {x}?", "In how many rows is the {c} {w} {x}?"),
                        p=plural,
                        c=col,
                        w="below" if below else "above",
                        x=str(threshold),
                    ),
                    (str(count),),
                    "count",
                    "vwtq",
                    "count",
                    column=col,
                    threshold=threshold,
                )
            )
    if len(set(vals)) == n:
        second = keys[int(np.argsort(vals)[-2])]
        qs.append(
            _qa(
                phrase(
                    rng, ("Which {kh} has the second highest {c}?", "Which {kh} ranks second by {c}?"), kh=kh, c=col
                ),
                (second,),
                "second",
                "vwtq",
                "second",
                column=col,
            )
        )
    return qs


def _financial(rng: np.random.Generator, header: list[str], rows: list[list[str]]) -> list[QA]:
    years = header[1:]
    if len(years) < 2:
        return []
    plain = [r for r in rows if not r[0].lower().endswith("margin")]
    r = plain[int(rng.integers(len(plain)))]
    vals = [_cell_number(x) for x in r[1:]]
    if any(v is None for v in vals):
        return []
    v = [float(x) for x in vals if x is not None]
    a, b = 0, len(years) - 1
    total = v[a] + v[b]
    qs = [
        _qa(
            phrase(
                rng,
                ("What is the sum of {i} in {x} and {y}?", "What is the combined {i} for {x} and {y}?"),
                i=r[0],
                x=years[a],
                y=years[b],
            ),
            _signed(total),
            "sum",
            "fintabnetqa",
            "sum",
            row=r[0],
        ),
        _qa(
            phrase(
                rng,
                (
                    "What is the average {i} across all years shown?",
                    "What was the mean {i} over the years in the table?",
                ),
                i=r[0],
            ),
            _avg_answers(sum(v) / len(v)),
            "average",
            "fintabnetqa",
            "avg",
            row=r[0],
        ),
    ]
    col = int(rng.integers(len(years)))
    items = [(row[0], _cell_number(row[1 + col])) for row in plain]
    values = [x for _, x in items if x is not None]
    if len(set(values)) == len(values) and len(values) >= 3:
        second = sorted(items, key=lambda t: t[1] if t[1] is not None else -1e18)[-2][0]
        qs.append(
            _qa(
                phrase(rng, ("Which line item has the second highest value in {y}?",), y=years[col]),
                (second,),
                "second",
                "fintabnetqa",
                "second",
                column=years[col],
            )
        )
    return qs


def _signed(value: float) -> tuple[str, ...]:
    """A whole amount as a table prints it: with and without separators, negatives also in parentheses."""
    out = [f"{value:,.0f}", f"{value:.0f}"]
    if value < 0:
        out.append(f"({abs(value):,.0f})")
    return tuple(dict.fromkeys(out))


def _avg_answers(value: float) -> tuple[str, ...]:
    rounded = round(value, 1)
    out = [f"{rounded:,.1f}", f"{rounded:.1f}"]
    if abs(rounded - round(rounded)) < 1e-9:
        out = [f"{round(rounded):,.0f}", f"{round(rounded):.0f}"] + out
    return tuple(dict.fromkeys(out))
