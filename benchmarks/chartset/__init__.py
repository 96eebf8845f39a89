"""Synthetic charts in many styles, with their data tables and questions known.

A chart **style** is a look (a rendering path with its fonts, palette, gridlines, legend position and frame) and a
chart kind (vertical or horizontal bars, grouped or stacked, lines, pies, donuts, scatter), with or without
printed value labels. Seventeen looks: nine drawn by matplotlib, eight hand-written SVG pages drawn by headless
Chromium; eleven kinds; 187 styles. Looks are split by **family**: the development looks are the ones the chart
reader was written on, the held-out looks (:data:`HELDOUT_LOOKS`) were never looked at while developing, so a
figure on them says how the reader does on chart styles it was not written for.

Every chart has gold: its data table (series x categories, one value each) and questions with answers computed
from it (the value of a category, the largest / smallest, a difference, a trend, a count, a share).

>>> spec = make(0, 0, style_by_name("svg-flat/vbar"))
>>> len(spec.categories) == len(spec.values[0]), spec.questions[0]["op"]
(True, 'value')
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

#: (name, renderer, settings) of every look; settings are read by the renderer of that path.
LOOKS: dict[str, dict[str, Any]] = {
    # matplotlib, development
    "mpl-default": {
        "renderer": "mpl",
        "mpl_style": "default",
        "font": "DejaVu Sans",
        "palette": "tab10",
        "legend": "best",
    },
    "mpl-ggplot": {
        "renderer": "mpl",
        "mpl_style": "ggplot",
        "font": "Liberation Sans",
        "palette": "style",
        "legend": "upper right",
    },
    "mpl-whitegrid": {
        "renderer": "mpl",
        "mpl_style": "seaborn-v0_8-whitegrid",
        "font": "DejaVu Sans",
        "palette": "deep",
        "legend": "outside right",
    },
    "mpl-bmh": {
        "renderer": "mpl",
        "mpl_style": "bmh",
        "font": "Liberation Serif",
        "palette": "style",
        "legend": "upper left",
    },
    "mpl-darkgrid": {
        "renderer": "mpl",
        "mpl_style": "seaborn-v0_8-darkgrid",
        "font": "Noto Sans",
        "palette": "muted",
        "legend": "outside top",
    },
    "mpl-classic": {
        "renderer": "mpl",
        "mpl_style": "classic",
        "font": "DejaVu Serif",
        "palette": "classic",
        "legend": "upper right",
    },
    # matplotlib, held out
    "mpl-538": {
        "renderer": "mpl",
        "mpl_style": "fivethirtyeight",
        "font": "DejaVu Sans",
        "palette": "style",
        "legend": "outside top",
    },
    "mpl-solarize": {
        "renderer": "mpl",
        "mpl_style": "Solarize_Light2",
        "font": "Liberation Sans Narrow",
        "palette": "style",
        "legend": "upper left",
    },
    "mpl-ticks-serif": {
        "renderer": "mpl",
        "mpl_style": "seaborn-v0_8-ticks",
        "font": "Liberation Serif",
        "palette": "colorblind",
        "legend": "outside bottom",
    },
    # SVG in Chromium, development
    "svg-flat": {
        "renderer": "svg",
        "font": "'DejaVu Sans', sans-serif",
        "palette": ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2"],
        "grid": "solid",
        "legend": "top",
        "frame": "left-bottom",
        "bg": "#ffffff",
    },
    "svg-report": {
        "renderer": "svg",
        "font": "'Liberation Serif', serif",
        "palette": ["#2f4b7c", "#a05195", "#ff7c43", "#ffa600"],
        "grid": "none",
        "legend": "right",
        "frame": "bottom",
        "bg": "#ffffff",
    },
    "svg-print": {
        "renderer": "svg",
        "font": "'Liberation Sans Narrow', sans-serif",
        "palette": ["#1b9e77", "#d95f02", "#7570b3", "#e7298a"],
        "grid": "dashed",
        "legend": "bottom",
        "frame": "box",
        "bg": "#ffffff",
    },
    "svg-slate": {
        "renderer": "svg",
        "font": "'Noto Sans', sans-serif",
        "palette": ["#0072b2", "#e69f00", "#009e73", "#cc79a7"],
        "grid": "band",
        "legend": "top-left",
        "frame": "none",
        "bg": "#f7f7f2",
    },
    "svg-mono": {
        "renderer": "svg",
        "font": "'DejaVu Sans Mono', monospace",
        "palette": ["#3d5a80", "#ee6c4d", "#98c1d9", "#293241"],
        "grid": "dashed",
        "legend": "right",
        "frame": "box",
        "bg": "#ffffff",
    },
    # SVG in Chromium, held out
    "svg-dashboard": {
        "renderer": "svg",
        "font": "'Liberation Sans', sans-serif",
        "palette": ["#6c5ce7", "#00b894", "#fdcb6e", "#d63031"],
        "grid": "dotted",
        "legend": "top-right",
        "frame": "none",
        "bg": "#ffffff",
        "rounded": True,
    },
    "svg-pastel": {
        "renderer": "svg",
        "font": "'DejaVu Serif', serif",
        "palette": ["#8ecae6", "#ffb703", "#fb8500", "#219ebc"],
        "grid": "solid",
        "legend": "bottom",
        "frame": "left-bottom",
        "bg": "#fffdf6",
    },
    "svg-ledger": {
        "renderer": "svg",
        "font": "'Liberation Mono', monospace",
        "palette": ["#5f0f40", "#fb8b24", "#0f4c5c", "#9a031e"],
        "grid": "dashed",
        "legend": "top-right",
        "frame": "bottom",
        "bg": "#fbfbfb",
    },
}
HELDOUT_LOOKS = ("mpl-538", "mpl-solarize", "mpl-ticks-serif", "svg-dashboard", "svg-pastel", "svg-ledger")
DEV_LOOKS = tuple(k for k in LOOKS if k not in HELDOUT_LOOKS)

#: Chart kinds: bars (vertical / horizontal, single, grouped, stacked), lines, pies, donuts, scatter.
KINDS = ("vbar", "hbar", "grouped", "hgrouped", "stacked", "hstacked", "line", "multiline", "pie", "donut", "scatter")


@dataclass(frozen=True)
class Style:
    """One chart style: a look and a kind, with printed value labels or without."""

    look: str
    kind: str
    labelled: bool

    @property
    def name(self) -> str:
        return f"{self.look}/{self.kind}"

    @property
    def renderer(self) -> str:
        return str(LOOKS[self.look]["renderer"])

    @property
    def split(self) -> str:
        return "heldout" if self.look in HELDOUT_LOOKS else "dev"


def _styles() -> list[Style]:
    out = []
    for i, look in enumerate(LOOKS):
        for j, kind in enumerate(KINDS):
            # Pies mostly print their shares; every other kind is labelled in about half the looks.
            labelled = (i + j) % 2 == 0 if kind not in ("pie", "donut") else (i + j) % 3 != 0
            out.append(Style(look, kind, labelled))
    return out


STYLES: tuple[Style, ...] = tuple(_styles())


def style_by_name(name: str) -> Style:
    return next(s for s in STYLES if s.name == name)


# --- content ------------------------------------------------------------------------------------------------

_COUNTRIES = (
    "Spain",
    "Norway",
    "Chile",
    "Kenya",
    "Japan",
    "Brazil",
    "Canada",
    "Poland",
    "Egypt",
    "Peru",
    "Italy",
    "Ghana",
    "Mexico",
    "Sweden",
    "India",
    "Greece",
    "Turkey",
    "Ireland",
)
_PRODUCTS = ("Laptops", "Phones", "Tablets", "Monitors", "Printers", "Cameras", "Speakers", "Routers")
_CHANNELS = ("Online", "In store", "Phone", "Catalogue", "Partners", "Wholesale", "Direct mail", "Other")
_MONTHS = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")
_REGIONS = ("North", "South", "East", "West", "Central")

#: (title, what the questions call the value, tick format, low, high, decimals)
_SUBJECTS = (
    ("Unemployment rate", "unemployment rate", "pct", 2, 25, 1),
    ("Share of adults online", "share of adults online", "pct", 20, 95, 0),
    ("Average monthly rent", "average rent", "currency", 300, 2400, 0),
    ("Tourist arrivals (thousands)", "tourist arrivals", "thousands", 1200, 48000, 0),
    ("Coffee consumption (kg per person)", "coffee consumption", "plain", 1, 12, 1),
    ("Car exports", "car exports", "unit", 40, 900, 0),
    ("Renewable electricity", "renewable share", "pct", 5, 80, 0),
    ("Research spending", "research spending", "currency", 20, 400, 0),
    ("Rainfall (mm)", "rainfall", "plain", 10, 240, 0),
    ("Units sold", "units sold", "thousands", 1000, 9000, 0),
)
_SERIES_NAMES = (
    ("2021", "2022", "2023"),
    ("Men", "Women"),
    ("Domestic", "Export", "Other"),
    ("Plan", "Actual"),
    ("Urban", "Rural"),
    ("2019", "2024"),
)


def format_value(v: float, fmt: str, decimals: int) -> str:
    """A value as the chart prints it (ticks and value labels)."""
    body = f"{v:,.{decimals}f}" if fmt in ("thousands", "currency") else f"{v:.{decimals}f}"
    return {"pct": f"{body}%", "currency": f"${body}", "unit": f"{body} kt"}.get(fmt, body)


@dataclass
class ChartSpec:
    """One chart: its style, title, series x categories values and the questions with gold answers."""

    id: str
    style: Style
    title: str
    what: str
    fmt: str
    decimals: int
    categories: list[str]
    series: list[str]
    values: list[list[float]]  # [series][category]
    questions: list[dict] = field(default_factory=list)
    seed: int = 0

    def label(self, v: float) -> str:
        return format_value(v, self.fmt, self.decimals)

    def table(self) -> dict[str, Any]:
        return {"series": self.series, "categories": self.categories, "values": self.values}


def _distinct(rng: random.Random, n: int, lo: float, hi: float, decimals: int) -> list[float]:
    while True:
        vals = [round(rng.uniform(lo, hi), decimals) for _ in range(n)]
        if len(set(vals)) == n and (hi - lo) * 0.04 < max(vals) - min(vals):
            return vals


def make(seed: int, index: int, style: Style) -> ChartSpec:
    """Chart ``index`` of ``style`` (deterministic in ``seed``, the style and the index)."""
    rng = random.Random(f"{seed}/{style.name}/{index}")
    kind = style.kind
    title, what, fmt, lo, hi, decimals = rng.choice(_SUBJECTS)
    if kind in ("pie", "donut"):
        n = rng.randint(3, 6)
        cats = rng.sample(_CHANNELS, n)
        while True:  # whole-percent shares summing to 100, distinct, none under 3 %
            raw = [rng.uniform(0.4, 3.0) for _ in range(n)]
            vals = [round(100 * r / sum(raw)) for r in raw]
            vals[vals.index(max(vals))] += 100 - sum(vals)
            if len(set(vals)) == n and min(vals) >= 3:
                break
        spec = ChartSpec(
            f"{style.look}.{kind}.{index:03d}",
            style,
            rng.choice(("Sales by channel", "Share of orders by channel", "Revenue by channel"))
            + f", {rng.randint(2015, 2024)}",
            "share",
            "pct",
            0,
            cats,
            ["Share"],
            [[float(v) for v in vals]],
            seed=seed,
        )
        spec.questions = _questions(rng, spec)
        return spec
    multi = kind in ("grouped", "hgrouped", "stacked", "hstacked", "multiline") or (
        kind == "scatter" and rng.random() < 0.5
    )
    timeline = kind in ("line", "multiline") or (kind in ("vbar", "scatter") and rng.random() < 0.3)
    if timeline:
        n = rng.randint(5, 9) if kind != "vbar" else rng.randint(4, 7)
        if rng.random() < 0.6:
            y0 = rng.randint(2008, 2016)
            cats = [str(y0 + k) for k in range(n)]
        else:
            m0 = rng.randint(0, 12 - n)
            cats = list(_MONTHS[m0 : m0 + n])
    else:
        n = rng.randint(3, 6) if multi else rng.randint(3, 8)
        cats = rng.sample(_COUNTRIES if rng.random() < 0.6 else _PRODUCTS + _REGIONS, n)
    series = [what.capitalize()]
    if multi:
        names = rng.choice(_SERIES_NAMES)
        series = list(names[: rng.randint(2, len(names))]) if len(names) > 2 else list(names)
    if kind in ("stacked", "hstacked"):
        lo, hi = lo / len(series), hi / len(series)
        lo = max(lo, hi * 0.15)
    values = []
    for _ in series:
        if timeline:
            level = rng.uniform(lo + 0.2 * (hi - lo), hi - 0.2 * (hi - lo))
            walk = []
            for _k in range(n):
                level = min(max(level + rng.gauss(0, 0.15 * (hi - lo)), lo), hi)
                walk.append(round(level, decimals))
            while len(set(walk)) < n:
                walk = [round(v + rng.uniform(-1, 1) * 10**-decimals, decimals) for v in walk]
            values.append(walk)
        else:
            values.append(_distinct(rng, n, lo, hi, decimals))
    spec = ChartSpec(
        f"{style.look}.{kind}.{index:03d}", style, title, what, fmt, decimals, cats, series, values, seed=seed
    )
    spec.questions = _questions(rng, spec)
    return spec


def _num(v: float, decimals: int) -> str:
    return f"{v:.{decimals}f}" if decimals else str(int(round(v)))


def _questions(rng: random.Random, spec: ChartSpec) -> list[dict]:
    """Questions with answers computed from the data table; ``op`` names the operation and ``kind`` the answer
    type (number, category, trend)."""
    kind, cats, series, vals, d = spec.style.kind, spec.categories, spec.series, spec.values, spec.decimals
    what = spec.what
    qs: list[dict] = []

    def add(op: str, question: str, answer: str, answer_kind: str = "number") -> None:
        qs.append({"op": op, "question": question, "answer": answer, "kind": answer_kind})

    if kind in ("pie", "donut"):
        i, j = rng.sample(range(len(cats)), 2)
        v = vals[0]
        add(
            "value",
            rng.choice(
                (
                    "What percentage does {c} account for?",
                    "What share of the total is {c}?",
                    "How large is the {c} slice, in percent?",
                )
            ).format(c=cats[i]),
            _num(v[i], 0),
        )
        add(
            "max",
            rng.choice(("Which channel has the largest share?", "Which segment is the largest?")),
            cats[v.index(max(v))],
            "category",
        )
        add(
            "min",
            rng.choice(("Which channel has the smallest share?", "Which segment is the smallest?")),
            cats[v.index(min(v))],
            "category",
        )
        add("diff", f"What is the difference between the shares of {cats[i]} and {cats[j]}?", _num(abs(v[i] - v[j]), 0))
        add(
            "count",
            rng.choice(("How many segments does the pie chart have?", "How many slices are in the chart?")),
            str(len(cats)),
            "count",
        )
        return qs
    k = rng.randrange(len(series))
    s = series[k]
    row = vals[k]
    i, j = rng.sample(range(len(cats)), 2)
    single = len(series) == 1
    noun = "year" if cats[0].isdigit() else "month" if cats[0] in _MONTHS else "category"
    in_s = "" if single else f" in {s}" if s[0].isdigit() else f" for {s}"
    if single:
        add(
            "value",
            rng.choice(
                (
                    "What is the value for {c}?",
                    "What was the {w} in {c}?",
                    "According to the chart, what is the {w} for {c}?",
                )
            ).format(c=cats[i], w=what),
            _num(row[i], d),
        )
    else:
        add(
            "value",
            rng.choice(("What is the {s} value for {c}?", "What was the {w} of {c}{ins}?")).format(
                s=s, c=cats[i], w=what, ins=in_s
            ),
            _num(row[i], d),
        )
    add(
        "max",
        rng.choice(("Which {n} has the highest {w}{ins}?", "Which {n} has the largest value{ins}?")).format(
            n=noun, w=what, ins=in_s
        ),
        cats[row.index(max(row))],
        "category",
    )
    add(
        "min",
        rng.choice(("Which {n} has the lowest {w}{ins}?", "Which {n} has the smallest value{ins}?")).format(
            n=noun, w=what, ins=in_s
        ),
        cats[row.index(min(row))],
        "category",
    )
    add("diff", f"What is the difference between {cats[i]} and {cats[j]}{in_s}?", _num(abs(row[i] - row[j]), d))
    if noun != "category":
        a, b = sorted((i, j))
        add(
            "trend",
            f"Did the {what}{in_s} increase or decrease from {cats[a]} to {cats[b]}?",
            "increase" if row[b] > row[a] else "decrease",
            "trend",
        )
    if kind in ("stacked", "hstacked"):
        add("total", f"What is the total for {cats[i]}?", _num(sum(v[i] for v in vals), d))
    elif single and kind in ("vbar", "hbar"):
        share = 100 * row[i] / sum(row)
        add("share", f"What share of the total does {cats[i]} have, in percent?", f"{share:.1f}")
    count_q = {
        "year": "How many years does the chart cover?",
        "month": "How many months are shown?",
        "category": "How many categories are shown in the chart?",
    }[noun]
    add("count", count_q, str(len(cats)), "count")
    if not single:
        add("count", "How many series does the legend list?", str(len(series)), "count")
    return qs


__all__ = [
    "DEV_LOOKS",
    "HELDOUT_LOOKS",
    "KINDS",
    "LOOKS",
    "STYLES",
    "ChartSpec",
    "Style",
    "format_value",
    "make",
    "style_by_name",
]
