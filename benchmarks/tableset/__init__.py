"""Synthetic tables in many styles, rendered by headless Chromium, with their cells known from the DOM.

Each table is one HTML page: a heading, a paragraph, the table and a note under it, so that finding the table
on the page is measured with its structure. Ten styles; five are the development styles the table code was
written on and five are held out (different rules, fills, fonts, wrapping and header shapes), so a figure on
the held-out styles says how the code does on tables it was not written for.

Content comes from five subject kinds (finance, products, schedule, people, statistics), with 3-7 columns
and 4-13 body rows, a stub column of row labels, and numbers in the formats such tables print (thousands
separators, currency, percentages, accounting negatives). Every table carries TableVQA-style questions whose
answers are computed from its cells: look-ups by row and column, the row with the largest / smallest value,
sums, means, differences and row counts.
"""

from __future__ import annotations

import html
import random
from dataclasses import dataclass, field

DEV_STYLES = ("ruled", "zebra", "borderless", "booktabs", "spanning")
HELDOUT_STYLES = ("dark-header", "row-lines", "wrapped", "compact-serif", "spanning-zebra")
STYLES = DEV_STYLES + HELDOUT_STYLES

_FONTS = {
    "sans": "'DejaVu Sans', 'Liberation Sans', Arial, sans-serif",
    "serif": "'DejaVu Serif', 'Liberation Serif', 'Times New Roman', serif",
    "narrow": "'Liberation Sans Narrow', 'DejaVu Sans Condensed', 'Liberation Sans', sans-serif",
    "mono": "'DejaVu Sans Mono', 'Liberation Mono', monospace",
}

_STYLE_CSS = {
    "ruled": "table{border-collapse:collapse} td,th{border:1px solid #333;padding:{pad}px {hpad}px}",
    "zebra": (
        "table{border-collapse:collapse} td,th{padding:{pad}px {hpad}px} tbody tr:nth-child(even){background:#e8eef6}"
        " thead th{border-bottom:2px solid #345}"
    ),
    "borderless": "table{border-collapse:collapse} td,th{padding:{pad}px {hpad}px} th{font-weight:bold}",
    "booktabs": (
        "table{border-collapse:collapse;border-top:2px solid #000;border-bottom:2px solid #000}"
        " thead{border-bottom:1px solid #000} td,th{padding:{pad}px {hpad}px}"
    ),
    "spanning": (
        "table{border-collapse:collapse} td,th{border:1px solid #555;padding:{pad}px {hpad}px}"
        " thead th{background:#f0f0f0}"
    ),
    "dark-header": (
        "table{border-collapse:collapse} td,th{padding:{pad}px {hpad}px}"
        " thead th{background:#1f3b5a;color:#fff} tbody td{border-bottom:1px solid #ccd}"
    ),
    "row-lines": (
        "table{border-collapse:collapse} td,th{padding:{pad}px {hpad}px;border-bottom:1px solid #888}"
        " thead th{border-bottom:2px solid #222;text-transform:uppercase;font-size:0.85em}"
    ),
    "wrapped": (
        "table{border-collapse:collapse;table-layout:fixed;width:560px}"
        " td,th{border:1px solid #444;padding:{pad}px {hpad}px}"
    ),
    "compact-serif": "table{border-collapse:collapse} td,th{padding:{pad}px {hpad}px} thead th{font-style:italic}",
    "spanning-zebra": (
        "table{border-collapse:collapse} td,th{padding:{pad}px {hpad}px}"
        " tbody tr:nth-child(odd){background:#f3ecdf} thead th{border-bottom:1px solid #963}"
    ),
}
_STYLE_FONT = {"compact-serif": "serif", "wrapped": "sans"}
_SPANNING = ("spanning", "spanning-zebra")

_WORDS = (
    "annual review of the regional programme shows steady progress across the measured areas while several "
    "items remain open for the next period and are listed below with the figures reported by each office"
).split()

_PRODUCTS = (
    "Emu",
    "Falcon",
    "Heron",
    "Ibis",
    "Kestrel",
    "Lark",
    "Magpie",
    "Osprey",
    "Plover",
    "Quail",
    "Raven",
    "Swift",
    "Tern",
    "Wren",
    "Finch",
    "Egret",
    "Crane",
    "Dove",
)
_PEOPLE = (
    "Ada Moreno",
    "Ben Okafor",
    "Chloe Martin",
    "Dario Rossi",
    "Elif Kaya",
    "Femi Adeyemi",
    "Greta Lind",
    "Hiro Sato",
    "Ines Duarte",
    "Jonas Berg",
    "Kira Novak",
    "Liam Walsh",
    "Mina Haddad",
    "Nils Eriksen",
)
_DEPTS = ("Sales", "Finance", "Research", "Support", "Legal", "Logistics", "Design", "Operations")
_CITIES = (
    "Lisbon",
    "Oslo",
    "Kraków",
    "Lyon",
    "Turin",
    "Bilbao",
    "Ghent",
    "Tartu",
    "Porto",
    "Graz",
    "Malmö",
    "Utrecht",
    "Basel",
    "Cork",
)
_ITEMS = (
    "Revenue",
    "Cost of sales",
    "Gross profit",
    "Marketing",
    "Research",
    "Operating income",
    "Interest",
    "Income taxes",
    "Net income",
    "Capital expenditure",
    "Dividends",
    "Inventories",
    "Receivables",
    "Cash at year end",
)
_TOPICS = (
    "Opening talk",
    "Data session",
    "Poster round",
    "Panel",
    "Workshop A",
    "Workshop B",
    "Keynote",
    "Tutorial",
    "Demo hour",
    "Closing",
)


@dataclass
class TableSpec:
    """One table: header rows (a list of ``(text, colspan)`` per header line), body rows of cell texts, and the
    questions with answers computed from the cells."""

    style: str
    font: str
    font_px: int
    kind: str
    header: list[list[tuple[str, int]]]
    body: list[list[str]]
    title: str
    questions: list[dict] = field(default_factory=list)
    pad: int = 6
    hpad: int = 10

    def html(self) -> str:
        css = _STYLE_CSS[self.style].replace("{pad}", str(self.pad)).replace("{hpad}", str(self.hpad))
        head = "".join(
            "<tr>"
            + "".join(
                f'<th colspan="{n}">{html.escape(t)}</th>' if n > 1 else f"<th>{html.escape(t)}</th>" for t, n in line
            )
            + "</tr>"
            for line in self.header
        )
        numeric = [all(_number(r[c]) is not None for r in self.body) for c in range(len(self.body[0]))]
        body = "".join(
            "<tr>"
            + "".join(
                f'<td style="text-align:{"right" if numeric[c] else "left"}">{html.escape(t)}</td>'
                for c, t in enumerate(row)
            )
            + "</tr>"
            for row in self.body
        )
        rnd = random.Random(hash((self.title, self.style)) & 0xFFFF)
        para = " ".join(rnd.choice(_WORDS) for _ in range(38)).capitalize() + "."
        note = "Figures as reported; totals may differ by rounding."
        return (
            f"<!doctype html><html><head><meta charset='utf-8'><style>body{{margin:36px;width:820px;"
            f"font-family:{_FONTS[self.font]};font-size:{self.font_px}px;color:#111;background:#fff}}"
            f"h2{{font-size:1.5em;margin:0 0 10px}} p{{margin:8px 0 18px;line-height:1.35}} {css}</style></head>"
            f"<body><h2>{html.escape(self.title)}</h2><p>{html.escape(para)}</p>"
            f"<table id='t'><thead>{head}</thead><tbody>{body}</tbody></table>"
            f"<p style='font-size:0.85em'>{note}</p></body></html>"
        )


def _number(text: str) -> float | None:
    t = text.replace(",", "").replace("$", "").replace("€", "").replace("%", "").strip()
    neg = t.startswith("(") and t.endswith(")")
    t = t.strip("()")
    try:
        v = float(t)
    except ValueError:
        return None
    return -v if neg else v


def _fmt(rng: random.Random, lo: float, hi: float, style: str) -> str:
    v = rng.uniform(lo, hi)
    if style == "int":
        return f"{int(v):,}"
    if style == "usd":
        return f"${v:,.2f}"
    if style == "pct":
        return f"{v:.1f}%"
    if style == "acct":
        return f"({abs(v):,.0f})" if rng.random() < 0.2 else f"{v:,.0f}"
    return f"{v:.2f}"


def _content(rng: random.Random, kind: str, n_rows: int, n_cols: int) -> tuple[str, list[str], list[list[str]], str]:
    """(stub header, value headers, body rows, title) for one subject kind."""
    if kind == "finance":
        years = sorted(rng.sample(range(2015, 2026), n_cols - 1))
        labels = rng.sample(_ITEMS, n_rows)
        body = [[lab] + [_fmt(rng, 100, 90000, "acct") for _ in years] for lab in labels]
        return "Item", [str(y) for y in years], body, "Statement of results (in thousands)"
    if kind == "products":
        cols = ["Price", "Quantity", "Weight (kg)", "Stock", "Discount", "Rating"][: n_cols - 1]
        fmt = {
            "Price": ("usd", 2, 900),
            "Quantity": ("int", 1, 500),
            "Weight (kg)": ("float", 0.2, 40),
            "Stock": ("int", 0, 9000),
            "Discount": ("pct", 0, 40),
            "Rating": ("float", 1, 5),
        }
        labels = rng.sample(_PRODUCTS, n_rows)
        body = [[lab] + [_fmt(rng, fmt[c][1], fmt[c][2], fmt[c][0]) for c in cols] for lab in labels]
        return "Product", cols, body, "Price list"
    if kind == "schedule":
        cols = ["Start", "End", "Room", "Speaker", "Seats"][: n_cols - 1]
        labels = rng.sample(_TOPICS, min(n_rows, len(_TOPICS)))
        body = []
        for i, lab in enumerate(labels):
            h = 9 + i
            row = {
                "Start": f"{h:02d}:{rng.choice(['00', '15', '30'])}",
                "End": f"{h + 1:02d}:{rng.choice(['00', '15'])}",
                "Room": f"R{rng.randint(100, 420)}",
                "Speaker": rng.choice(_PEOPLE),
                "Seats": str(rng.randint(20, 300)),
            }
            body.append([lab] + [row[c] for c in cols])
        return "Session", cols, body, "Programme, day one"
    if kind == "people":
        cols = ["Department", "City", "Since", "Projects", "Salary"][: n_cols - 1]
        labels = rng.sample(_PEOPLE, n_rows)
        body = [
            [lab]
            + [
                {
                    "Department": rng.choice(_DEPTS),
                    "City": rng.choice(_CITIES),
                    "Since": str(rng.randint(2004, 2024)),
                    "Projects": str(rng.randint(1, 30)),
                    "Salary": _fmt(rng, 38000, 120000, "usd"),
                }[c]
                for c in cols
            ]
            for lab in labels
        ]
        return "Name", cols, body, "Staff overview"
    cols = ["Population", "Growth", "Area (km²)", "Density", "Median age"][: n_cols - 1]
    labels = rng.sample(_CITIES, n_rows)
    fmt2 = {
        "Population": ("int", 20000, 900000),
        "Growth": ("pct", 0, 9),
        "Area (km²)": ("float", 20, 600),
        "Density": ("int", 300, 9000),
        "Median age": ("float", 30, 48),
    }
    body = [[lab] + [_fmt(rng, fmt2[c][1], fmt2[c][2], fmt2[c][0]) for c in cols] for lab in labels]
    return "City", cols, body, "Cities at a glance"


def _questions(rng: random.Random, stub: str, heads: list[str], body: list[list[str]]) -> list[dict]:
    """Questions whose answers are computed from the cells (answers as printed, or computed numbers)."""
    out: list[dict] = []
    labels = [r[0] for r in body]
    for _ in range(2):
        r, c = rng.randrange(len(body)), rng.randrange(1, len(heads) + 1)
        out.append(
            {
                "question": f"What is the {heads[c - 1]} of {labels[r]}?",
                "answer": body[r][c],
                "op": "lookup",
                "cells": [[r, c]],
            }
        )
    numeric = [
        c
        for c in range(1, len(heads) + 1)
        if all(_number(row[c]) is not None for row in body) and heads[c - 1] not in ("Since", "Seats") or False
    ]
    if numeric:
        c = rng.choice(numeric)
        values = [_number(row[c]) or 0.0 for row in body]
        best = max(range(len(body)), key=lambda i: values[i])
        worst = min(range(len(body)), key=lambda i: values[i])
        out.append(
            {
                "question": f"Which {stub.lower()} has the highest {heads[c - 1]}?",
                "answer": labels[best],
                "op": "argmax",
                "cells": [[best, c]],
            }
        )
        out.append(
            {
                "question": f"Which {stub.lower()} has the lowest {heads[c - 1]}?",
                "answer": labels[worst],
                "op": "argmin",
                "cells": [[worst, c]],
            }
        )
        out.append(
            {
                "question": f"What is the total {heads[c - 1]}?",
                "answer": _num_text(sum(values)),
                "op": "sum",
                "cells": [[i, c] for i in range(len(body))],
            }
        )
        a, b = rng.sample(range(len(body)), 2)
        out.append(
            {
                "question": f"What is the difference in {heads[c - 1]} between {labels[a]} and {labels[b]}?",
                "answer": _num_text(abs(values[a] - values[b])),
                "op": "difference",
                "cells": [[a, c], [b, c]],
            }
        )
        out.append(
            {
                "question": f"What is the average {heads[c - 1]}?",
                "answer": _num_text(sum(values) / len(values)),
                "op": "mean",
                "cells": [[i, c] for i in range(len(body))],
            }
        )
    out.append(
        {"question": f"How many {stub.lower()} rows are listed?", "answer": str(len(body)), "op": "count", "cells": []}
    )
    return out


def _num_text(v: float) -> str:
    return str(int(round(v))) if abs(v - round(v)) < 1e-9 else f"{v:.2f}"


def make(seed: int, index: int, style: str) -> TableSpec:
    """Table ``index`` of style ``style`` (the same arguments give the same table)."""
    rng = random.Random(f"{seed}-{index}-{style}")
    kind = rng.choice(("finance", "products", "schedule", "people", "stats"))
    n_cols = rng.randint(3, 6 if kind != "finance" else 5)
    n_rows = rng.randint(4, 10 if kind == "schedule" else 13)
    stub, heads, body, title = _content(rng, kind, n_rows, n_cols)
    header: list[list[tuple[str, int]]] = []
    if style in _SPANNING and len(heads) >= 2:
        split = max(1, len(heads) // 2)
        groups = [
            ("Group A" if kind != "finance" else "First period", split),
            ("Group B" if kind != "finance" else "Second period", len(heads) - split),
        ]
        header.append([("", 1)] + [g for g in groups if g[1] > 0])
    header.append([(stub, 1)] + [(h, 1) for h in heads])
    font = _STYLE_FONT.get(
        style, rng.choice(("sans", "serif", "narrow", "mono") if style in HELDOUT_STYLES else ("sans", "serif"))
    )
    spec = TableSpec(
        style,
        font,
        rng.randint(12, 16) if style != "compact-serif" else rng.randint(11, 13),
        kind,
        header,
        body,
        title,
        pad=rng.randint(3, 8),
        hpad=rng.randint(6, 14),
    )
    spec.questions = _questions(rng, stub, heads, body)
    return spec


__all__ = ["DEV_STYLES", "HELDOUT_STYLES", "STYLES", "TableSpec", "make"]
