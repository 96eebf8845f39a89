"""Tables like TableVQA-Bench's: financial statements (``fintabnetqa``) and general headed tables
(``vwtq`` look-ups, comparisons and counts; ``vtabfact`` true/false claims answered "1" or "0").
"""

from __future__ import annotations

import re

import numpy as np

from . import vocab as V
from .canvas import Canvas
from .fonts import faces_by_style
from .questions import QA, Document, phrase

KINDS = ("financial", "general")

# line items that financial statements print in parentheses when they are losses or outflows
_CAN_BE_NEGATIVE = {
    "Operating income",
    "Interest expense",
    "Other income (expense), net",
    "Net income",
    "Income before income taxes",
    "Restructuring charges",
    "Capital expenditures",
}

_NUMERIC = re.compile(r"[-$()%,.\d ]+")

_FIN_ROWS = (
    "Net sales",
    "Cost of sales",
    "Gross profit",
    "Research and development",
    "Selling, general and administrative",
    "Operating income",
    "Interest expense",
    "Other income (expense), net",
    "Income before income taxes",
    "Provision for income taxes",
    "Net income",
    "Depreciation and amortization",
    "Capital expenditures",
    "Cash and cash equivalents",
    "Total assets",
    "Long-term debt",
    "Restructuring charges",
)

_GENERAL = (
    # (title, row-key header, key pool, numeric columns (name, lo, hi), text column (name, pool))
    (
        "Results of the regional championship",
        "Athlete",
        "person",
        (("Gold", 0, 9), ("Silver", 0, 9), ("Bronze", 0, 9)),
        ("Country", V.COUNTRIES),
    ),
    (
        "Largest branches by staff",
        "City",
        "city",
        (("Employees", 40, 2500), ("Year opened", 1960, 2022)),
        ("Manager", "person"),
    ),
    ("Season standings", "Team", "team", (("Played", 20, 20), ("Won", 0, 20), ("Points", 0, 60)), ("Coach", "person")),
    (
        "Election results by district",
        "District",
        "district",
        (("Votes", 1000, 90000), ("Turnout (%)", 30, 90)),
        ("Winner", "person"),
    ),
)

_TEAMS = ("Rovers", "United", "Athletic", "Wanderers", "City", "Rangers", "Albion", "Harriers", "Dynamo", "Olympic")
_DISTRICTS = (
    "North Hills",
    "Riverside",
    "Old Town",
    "Lakeshore",
    "Westgate",
    "Eastfield",
    "Southport",
    "Greenwood",
    "Harbourview",
    "Stonebridge",
)


def _keys(rng: np.random.Generator, kind: str, n: int) -> list[str]:
    if kind == "person":
        names: list[str] = []
        while len(names) < n:
            p = V.person(rng)
            if p not in names:
                names.append(p)
        return names
    if kind == "city":
        return [c[0] for c in V.pick(rng, V.CITIES, n)]
    if kind == "team":
        return [f"{c[0]} {t}" for c, t in zip(V.pick(rng, V.CITIES, n), V.pick(rng, _TEAMS, n))]
    return V.pick(rng, _DISTRICTS, n)


def _draw_table(
    rng: np.random.Generator, title: str, header: list[str], rows: list[list[str]], note: str = ""
) -> tuple[np.ndarray, list[str]]:
    """Typeset a headed table; the first column left-aligned, the others right-aligned."""
    face = V.pick(rng, faces_by_style("sans") + faces_by_style("serif"))
    size = int(rng.integers(24, 30))
    pad = int(size * 0.7)
    probe = Canvas(10, 10, face)
    widths = [
        max(probe.text_width(r[k], size, bold=(i == 0)) for i, r in enumerate([header] + rows)) + 2 * pad
        for k in range(len(header))
    ]
    widths = [max(w, int(size * 4.5)) for w in widths]
    row_h = int(size * 1.9)
    margin = int(rng.integers(50, 90))
    width = max(sum(widths) + 2 * margin, probe.text_width(title, size + 8, True) + 2 * margin)
    height = margin * 2 + int(size * 2.6) + row_h * (len(rows) + 1) + (int(size * 2.5) if note else 0)
    c = Canvas(width, height, face, ink=(20, 20, 20))
    accent = V.pick(rng, ((25, 60, 120), (40, 40, 40), (20, 90, 60), (120, 30, 30)))
    ruled = V.pick(rng, ("grid", "lines", "banded"))
    y = margin
    c.text(margin, y, title, size + 8, bold=True)
    y += int(size * 2.6)
    x0 = margin
    xs = np.cumsum([x0] + widths).tolist()
    numeric = [k > 0 and all(_NUMERIC.fullmatch(r[k]) for r in rows) for k in range(len(header))]
    for r, cells in enumerate([header] + rows):
        top = y + r * row_h
        if r == 0:
            c.rect(xs[0], top, xs[-1], top + row_h, fill=accent if ruled != "lines" else (230, 230, 230))
        elif ruled == "banded" and r % 2 == 0:
            c.rect(xs[0], top, xs[-1], top + row_h, fill=(236, 240, 246))
        for k, cell in enumerate(cells):
            colour = (255, 255, 255) if r == 0 and ruled != "lines" else None
            if not numeric[k]:
                c.text(xs[k] + pad, top + row_h / 2, cell, size, bold=r == 0, fill=colour, anchor="lm")
            else:
                c.text(xs[k + 1] - pad, top + row_h / 2, cell, size, bold=r == 0, fill=colour, anchor="rm")
        if ruled == "grid" or r == 0:
            c.line(xs[0], top + row_h, xs[-1], top + row_h, width=2, fill=(90, 90, 90))
        elif ruled == "lines":
            c.line(xs[0], top + row_h, xs[-1], top + row_h, width=1, fill=(180, 180, 180))
    bottom = y + row_h * (len(rows) + 1)
    if ruled == "grid":
        c.rect(xs[0], y, xs[-1], bottom, outline=(90, 90, 90), width=2)
        for x in xs[1:-1]:
            c.line(x, y, x, bottom, width=1, fill=(90, 90, 90))
    if note:
        c.text(margin, bottom + int(size * 0.8), note, size - 6, fill=(90, 90, 90))
    img = c.finish(margin=0)
    return _upscale(img), [face.name]


def _upscale(img: np.ndarray) -> np.ndarray:
    """Scale so the longest side is at least 1500 px (captures are photographed at phone resolution)."""
    import cv2

    h, w = img.shape[:2]
    scale = 1500.0 / max(h, w)
    if scale <= 1.0:
        return img
    return cv2.resize(img, (int(round(w * scale)), int(round(h * scale))), interpolation=cv2.INTER_CUBIC)


def _fin_cell(value: float, kind: str, first_row: bool) -> str:
    if kind == "pct":
        return f"{value:.1f}%" if value >= 0 else f"({abs(value):.1f})%"
    body = f"{abs(value):,.0f}"
    if first_row:
        body = f"$ {body}"
    return f"({body})" if value < 0 else body


def _fin_answers(value: float, printed: str, kind: str) -> tuple[str, ...]:
    if kind == "pct":
        core = f"{abs(value):.1f}"
        out = [printed, f"{'-' if value < 0 else ''}{core}%", f"{'-' if value < 0 else ''}{core}"]
    else:
        core = f"{abs(value):,.0f}"
        plain = f"{abs(value):.0f}"
        sign = "-" if value < 0 else ""
        out = [printed, f"({core})" if value < 0 else core, f"{sign}{core}", f"{sign}{plain}", f"{sign}${core}"]
    return tuple(dict.fromkeys(out))


def render_financial(rng: np.random.Generator) -> Document:
    """A financial statement extract: line items by year, thousands of dollars, negatives in parentheses."""
    org = V.company(rng)
    n_rows = int(rng.integers(5, 10))
    items = V.pick(rng, _FIN_ROWS, n_rows)
    y1 = int(rng.integers(2008, 2023))
    years = [str(y1 - k) for k in range(int(rng.integers(2, 4)))]
    with_pct = bool(rng.random() < 0.4)
    data: dict[str, dict[str, float]] = {}
    rows: list[list[str]] = []
    kinds: dict[str, str] = {}
    for r, item in enumerate(items):
        base = float(rng.integers(50, 90000))
        vals = [round(base * rng.uniform(0.8, 1.2)) for _ in years]
        if item in _CAN_BE_NEGATIVE and rng.random() < 0.4:
            vals = [-v for v in vals]
        kinds[item] = "num"
        data[item] = dict(zip(years, vals))
        rows.append([item] + [_fin_cell(v, "num", r == 0) for v in vals])
    header = [V.pick(rng, ("(in thousands)", "In thousands of dollars", "Fiscal year"))] + years
    if with_pct:
        item = "Operating margin"
        vals = [round(float(rng.uniform(-15, 35)), 1) for _ in years]
        kinds[item] = "pct"
        data[item] = dict(zip(years, vals))
        rows.append([item] + [_fin_cell(v, "pct", False) for v in vals])
    title = f"{org}: selected financial data"
    image, fonts = _draw_table(rng, title, header, rows, note="Amounts in parentheses are negative.")
    printed = {r[0]: dict(zip(years, r[1:])) for r in rows}
    qas: list[QA] = []
    keys = list(data)
    cells = [(item, year) for item in keys for year in years]
    for idx in rng.choice(len(cells), size=3, replace=False):
        item, year = cells[int(idx)]
        value, cell = data[item][year], printed[item][year]
        qas.append(
            QA(
                phrase(
                    rng,
                    (
                        "What was the {i} in {y}?",
                        "What is the value of {i} for {y}?",
                        "How much was {i} in fiscal {y}?",
                        "In {y}, what did {i} amount to?",
                        "What does the table report for {i} in {y}?",
                    ),
                    i=item.lower() if item[1].islower() else item,
                    y=year,
                ),
                _fin_answers(value, cell, kinds[item]),
                "lookup",
                subset="fintabnetqa",
                printed=True,
                meta={"row": item, "column": year},
            )
        )
    item = V.pick(rng, [k for k in keys if kinds[k] == "num"])
    a, b = years[-1], years[0]
    change = data[item][b] - data[item][a]
    qas.append(
        QA(
            phrase(
                rng,
                ("By how much did {i} change from {a} to {b}?", "What was the change in {i} between {a} and {b}?"),
                i=item,
                a=a,
                b=b,
            ),
            tuple(
                dict.fromkeys([f"{change:,.0f}", f"{change:.0f}"] + ([f"({abs(change):,.0f})"] if change < 0 else []))
            ),
            "difference",
            subset="fintabnetqa",
            printed=False,
            meta={"row": item, "value": change},
        )
    )
    # true/false claims: half true, half false
    item = V.pick(rng, keys)
    up = data[item][years[0]] > data[item][years[-1]]
    claim_true = bool(rng.random() < 0.5)
    said_up = up if claim_true else not up
    claim = f"{item} was {'higher' if said_up else 'lower'} in {years[0]} than in {years[-1]}."
    qas.append(_fact(rng, claim, claim_true, {"row": item}))
    item, year = V.pick(rng, keys), V.pick(rng, years)
    negative = data[item][year] < 0
    claim_true = bool(rng.random() < 0.5)
    said_negative = negative if claim_true else not negative
    claim = f"The {item.lower()} figure for {year} is {'negative' if said_negative else 'positive'}."
    qas.append(_fact(rng, claim, claim_true, {"row": item, "column": year}))
    content = {"title": title, "header": header, "rows": rows, "values": data}
    return Document("table", "financial", image, content=content, questions=qas, fonts=fonts)


def _fact(rng: np.random.Generator, claim: str, truth: bool, meta: dict) -> QA:
    q = phrase(
        rng,
        (
            "Is the following statement true or false according to the table? {c}",
            "According to the table, is this claim correct: {c}",
            "True or false: {c}",
            'Does the table support the statement "{c}"?',
        ),
        c=claim,
    )
    answers = ("1", "True") if truth else ("0", "False")
    return QA(q, answers, "fact", subset="vtabfact", printed=False, meta={**meta, "claim": claim, "truth": truth})


def render_general(rng: np.random.Generator) -> Document:
    """A general headed table (standings, results, branches) with text and numeric columns."""
    title, key_header, key_kind, numeric, (text_header, text_pool) = V.pick(rng, _GENERAL)
    n = int(rng.integers(5, 10))
    keys = _keys(rng, key_kind, n)
    cols: dict[str, list] = {}
    for name, lo, hi in numeric:
        cols[name] = [int(v) for v in rng.integers(lo, hi + 1, n)]
    if text_pool == "person":
        texts = _keys(rng, "person", n)
    else:
        texts = [V.pick(rng, text_pool[:8]) for _ in range(n)]  # a small pool so values repeat (counting)
    header = [key_header, text_header] + [name for name, _, _ in numeric]
    rows = [
        [k, t] + [f"{cols[name][i]:,}" if cols[name][i] >= 10000 else str(cols[name][i]) for name, _, _ in numeric]
        for i, (k, t) in enumerate(zip(keys, texts))
    ]
    image, fonts = _draw_table(rng, title, header, rows)
    num_name = V.pick(rng, [name for name, lo, hi in numeric if lo != hi])
    col = cols[num_name]
    i = int(rng.integers(n))
    qas = [
        QA(
            phrase(
                rng,
                (
                    "What is the {c} value for {k}?",
                    "How many {lc} does {k} have?",
                    "What does the {c} column show for {k}?",
                    "What is listed under {c} for {k}?",
                ),
                c=num_name,
                lc=num_name.lower(),
                k=keys[i],
            ),
            tuple(dict.fromkeys([rows[i][2 + [h for h, _, _ in numeric].index(num_name)], str(col[i])])),
            "lookup",
            subset="vwtq",
            printed=True,
            meta={"row": keys[i], "column": num_name},
        ),
        QA(
            phrase(
                rng,
                (
                    "What is the {t} for {k}?",
                    "Which {lt} is listed for {k}?",
                    "Who is the {lt} of {k}?" if text_pool == "person" else "What {lt} does {k} have?",
                ),
                t=text_header,
                lt=text_header.lower(),
                k=keys[i],
            ),
            (texts[i],),
            "lookup",
            subset="vwtq",
            printed=True,
            meta={"row": keys[i], "column": text_header},
        ),
    ]
    if len(set(col)) == n:
        best = keys[int(np.argmax(col))]
        qas.append(
            QA(
                phrase(
                    rng,
                    (
                        "Which {kh} has the highest {c}?",
                        "Which {kh} has the most {lc}?",
                        "Which {kh} ranks first by {c}?",
                    ),
                    kh=key_header.lower(),
                    c=num_name,
                    lc=num_name.lower(),
                ),
                (best,),
                "compare",
                subset="vwtq",
                printed=True,
                meta={"column": num_name},
            )
        )
    j = int(rng.integers(n))
    if j != i and col[i] != col[j]:
        more = keys[i] if col[i] > col[j] else keys[j]
        qas.append(
            QA(
                phrase(
                    rng,
                    ("Which has more {lc}, {a} or {b}?", "Between {a} and {b}, which has the higher {c}?"),
                    lc=num_name.lower(),
                    c=num_name,
                    a=keys[i],
                    b=keys[j],
                ),
                (more,),
                "compare",
                subset="vwtq",
                printed=True,
                meta={"column": num_name},
            )
        )
    value = V.pick(rng, texts)
    count = texts.count(value)
    qas.append(
        QA(
            phrase(
                rng,
                (
                    "How many rows have {t} {v}?",
                    "How many entries list {v} as {lt}?",
                    "In how many rows is the {lt} {v}?",
                ),
                t=text_header,
                lt=text_header.lower(),
                v=value,
            ),
            (str(count),),
            "count",
            subset="vwtq",
            printed=False,
            meta={"column": text_header},
        )
    )
    threshold = int(np.median(col))
    above = int(sum(v > threshold for v in col))
    plural = {"City": "cities"}.get(key_header, key_header.lower() + "s")
    qas.append(
        QA(
            phrase(
                rng,
                ("How many {kh} have a {c} value above {x}?", "How many rows show a {c} value above {x}?"),
                kh=plural,
                x=threshold,
                lc=num_name.lower(),
                c=num_name,
            ),
            (str(above),),
            "count",
            subset="vwtq",
            printed=False,
            meta={"column": num_name},
        )
    )
    truth = bool(rng.random() < 0.5)
    k = int(rng.integers(n))
    shown = col[k] if truth else col[k] + int(rng.choice([-3, -2, -1, 1, 2, 3])) * max(1, col[k] // 20 or 1)
    qas.append(_fact(rng, f"The {num_name} value for {keys[k]} is {shown}.", shown == col[k], {"row": keys[k]}))
    truth = bool(rng.random() < 0.5)
    if len(set(col)) == n:
        top = keys[int(np.argmax(col))]
        named = top if truth else V.pick(rng, [x for x in keys if x != top])
        qas.append(_fact(rng, f"{named} has the highest {num_name} in the table.", named == top, {"column": num_name}))
    content = {"title": title, "header": header, "rows": rows}
    return Document("table", "general", image, content=content, questions=qas, fonts=fonts)


def render_table(rng: np.random.Generator, kind: str | None = None) -> Document:
    """One table of ``kind`` (``financial`` or ``general``; random when None)."""
    kind = kind or V.pick(rng, KINDS)
    return render_financial(rng) if kind == "financial" else render_general(rng)
