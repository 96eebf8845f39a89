"""Charts like ChartQA's: bar, grouped bar, line and pie charts drawn with matplotlib (Agg).

Values are printed on the marks in some charts and must be read off the axis in others (``meta.labelled``);
answers are digits, as ChartQA expects, and a numeric reader is usually scored with a 5 % tolerance.
"""

from __future__ import annotations

import io

import numpy as np

from . import vocab as V
from .fonts import faces_by_style
from .questions import QA, Document, phrase

KINDS = ("bar", "grouped_bar", "line", "pie")

_REGISTERED: set[str] = set()

_SUBJECTS = (
    ("Share of adults who use social media", "%", (10, 90)),
    ("Unemployment rate", "%", (2, 25)),
    ("Number of tourists (millions)", "", (1, 90)),
    ("Average monthly rent (USD)", "", (300, 2500)),
    ("Electricity from renewables", "%", (5, 80)),
    ("Smartphone sales (million units)", "", (5, 300)),
    ("Public debt (% of GDP)", "%", (20, 130)),
    ("Coffee consumption (kg per person)", "", (1, 12)),
    ("Internet users", "%", (20, 99)),
    ("Car exports (thousand units)", "", (50, 900)),
)


def _fmt(v: float, decimals: int) -> str:
    return f"{v:.{decimals}f}" if decimals else f"{int(round(v))}"


def _values(rng: np.random.Generator, n: int, lo: float, hi: float, decimals: int) -> list[float]:
    # distinct values so "highest" and "lowest" have one answer
    while True:
        vals = np.round(rng.uniform(lo, hi, n), decimals)
        if len(set(vals.tolist())) == n:
            return [float(v) for v in vals]


def _figure(rng: np.random.Generator):
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib import font_manager

    face = V.pick(rng, faces_by_style("sans") + faces_by_style("serif"))
    for path in (face.regular, face.bold):
        if path not in _REGISTERED:  # addfont appends on every call
            font_manager.fontManager.addfont(path)
            _REGISTERED.add(path)
    family = font_manager.FontProperties(fname=face.regular).get_name()
    w, h = V.pick(rng, ((8.0, 5.6), (8.0, 6.0), (7.2, 6.0), (8.4, 5.2)))
    rc = {
        "font.family": family,
        "font.size": float(rng.uniform(12, 15)),
        "axes.titlesize": 17,
        "svg.hashsalt": "docintent",
    }
    style = V.pick(rng, ("default", "seaborn-v0_8-whitegrid", "ggplot", "bmh", "seaborn-v0_8-darkgrid"))
    return plt, rc, style, (w, h), face


def _render(plt, fig) -> np.ndarray:
    from PIL import Image

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=220)
    plt.close(fig)
    buf.seek(0)
    return np.asarray(Image.open(buf).convert("RGB"), dtype=np.uint8).copy()


def render_chart(rng: np.random.Generator, kind: str | None = None) -> Document:
    """One chart of ``kind`` (random when None) with its questions."""
    kind = kind or V.pick(rng, KINDS)
    plt, rc, style, size, face = _figure(rng)
    title, unit, (lo, hi) = V.pick(rng, _SUBJECTS)
    decimals = int(rng.integers(0, 2)) if hi <= 30 else 0
    labelled = bool(rng.random() < 0.6)
    source = V.pick(
        rng, ("Source: national statistics office", "Source: industry survey", "Source: company reports", "")
    )
    with plt.style.context(style), plt.rc_context(rc):
        fig, ax = plt.subplots(figsize=size)
        if kind == "pie":
            doc = _pie(rng, ax, title)
            labelled = True
        elif kind == "line":
            doc = _line(rng, ax, title, unit, lo, hi, decimals, labelled)
        elif kind == "grouped_bar":
            doc = _grouped(rng, ax, title, unit, lo, hi, decimals, labelled)
        else:
            doc = _bar(rng, ax, title, unit, lo, hi, decimals, labelled)
        from matplotlib.font_manager import FontProperties

        # the bold file by path: some faces do not declare a weight matplotlib can look up by name
        ax.title.set_fontproperties(FontProperties(fname=face.bold, size=17))
        if source:
            fig.text(0.01, 0.01, source, fontsize=9, color="0.35")
        fig.tight_layout()
        image = _render(plt, fig)
    content, qas = doc
    content.update(kind=kind, title=content.get("title", title), labelled=labelled)
    for qa in qas:
        qa.meta.setdefault("labelled", labelled)
    return Document("chart", kind, image, content=content, questions=qas, fonts=[face.name])


def _with_unit(answers: tuple[str, ...], unit: str) -> tuple[str, ...]:
    """Digits first (ChartQA's form); with a percent axis the same numbers written with ``%`` too."""
    return answers + tuple(f"{a}{unit}" for a in answers) if unit else answers


def _value_q(rng, what: str, cat: str, value: float, decimals: int, labelled: bool, kind: str, unit: str = "") -> QA:
    q = phrase(
        rng,
        (
            "What is the value for {c}?",
            "What value does {c} have?",
            "How high is the {w} for {c}?",
            "What was the {w} in {c}?",
            "According to the chart, what is the {w} for {c}?",
        ),
        c=cat,
        w=what,
    )
    return QA(
        q,
        _with_unit(V.number_answers(value, decimals), unit),
        "value",
        subset=kind,
        printed=labelled,
        meta={"value": value},
    )


def _extreme_qs(rng, cats, vals, what: str, kind: str, noun: str = "category") -> list[QA]:
    hi_cat = cats[int(np.argmax(vals))]
    lo_cat = cats[int(np.argmin(vals))]
    high = ["Which {n} has the largest {w}?", "What is the {n} with the highest {w}?"]
    low = ["Which {n} has the smallest {w}?", "What is the {n} with the lowest {w}?"]
    if kind != "grouped_bar":  # with one series "the highest value" is unambiguous
        high += ["Which {n} has the highest value?", "Which {n} is the highest?"]
        low += ["Which {n} has the lowest value?"]
    return [
        QA(phrase(rng, high, n=noun, w=what), (hi_cat,), "extreme", subset=kind, printed=True),
        QA(phrase(rng, low, n=noun, w=what), (lo_cat,), "extreme", subset=kind, printed=True),
    ]


def _diff_q(rng, a: str, va: float, b: str, vb: float, decimals: int, kind: str) -> QA:
    diff = round(abs(va - vb), decimals)
    q = phrase(
        rng,
        (
            "What is the difference between {a} and {b}?",
            "By how much does {a} differ from {b}?",
            "What is the gap between the values of {a} and {b}?",
        ),
        a=a,
        b=b,
    )
    return QA(q, V.number_answers(diff, decimals), "difference", subset=kind, printed=False, meta={"value": diff})


def _bar(rng, ax, title, unit, lo, hi, decimals, labelled):
    n = int(rng.integers(3, 9))
    cats = V.pick(rng, V.COUNTRIES, n)
    vals = _values(rng, n, lo, hi, decimals)
    colour = V.pick(rng, ("#1f77b4", "#2a9d8f", "#e76f51", "#264653", "#6a4c93", "#d62828"))
    horizontal = bool(rng.random() < 0.35)
    if horizontal:
        bars = ax.barh(cats, vals, color=colour)
        ax.invert_yaxis()
    else:
        bars = ax.bar(cats, vals, color=colour)
        ax.tick_params(axis="x", rotation=30 if n > 5 else 0)
    if labelled:
        ax.bar_label(bars, labels=[_fmt(v, decimals) + unit for v in vals], padding=3)
    ax.set_title(title)
    what = title.split(" (")[0].lower()
    i, j = rng.choice(n, 2, replace=False)
    qas = [
        _value_q(rng, what, cats[i], vals[i], decimals, labelled, "bar", unit),
        *_extreme_qs(rng, cats, vals, what, "bar", "country"),
        _diff_q(rng, cats[i], vals[i], cats[j], vals[j], decimals, "bar"),
        QA(
            phrase(
                rng,
                (
                    "How many bars are there?",
                    "How many bars does the chart show?",
                    "How many countries are shown in the chart?",
                ),
            ),
            (str(n),),
            "count",
            subset="bar",
            printed=False,
        ),
    ]
    return {"title": title, "data": dict(zip(cats, vals)), "horizontal": horizontal}, qas


def _grouped(rng, ax, title, unit, lo, hi, decimals, labelled):
    n = int(rng.integers(3, 6))
    cats = V.pick(rng, V.COUNTRIES, n)
    y0 = int(rng.integers(2012, 2021))
    series = [str(y0), str(y0 + int(rng.integers(1, 4)))]
    if rng.random() < 0.4:
        series.append(str(int(series[-1]) + 1))
    data = {s: _values(rng, n, lo, hi, decimals) for s in series}
    width = 0.8 / len(series)
    x = np.arange(n)
    for k, s in enumerate(series):
        bars = ax.bar(x + (k - (len(series) - 1) / 2) * width, data[s], width, label=s)
        if labelled:
            ax.bar_label(bars, labels=[_fmt(v, decimals) for v in data[s]], padding=2, fontsize=9)
    ax.set_xticks(x, cats)
    ax.legend(title=None)
    ax.set_title(title)
    what = title.split(" (")[0].lower()
    i = int(rng.integers(n))
    s = V.pick(rng, series)
    v = data[s][i]
    a, b = series[0], series[-1]
    qas = [
        QA(
            phrase(
                rng,
                (
                    "What is the value for {c} in {s}?",
                    "What was the {w} in {c} in {s}?",
                    "In {s}, what value does {c} have?",
                ),
                c=cats[i],
                s=s,
                w=what,
            ),
            _with_unit(V.number_answers(v, decimals), unit),
            "value",
            subset="grouped_bar",
            printed=labelled,
            meta={"value": v},
        ),
        *_extreme_qs(rng, cats, data[s], f"{what} in {s}", "grouped_bar", "country"),
        QA(
            phrase(
                rng,
                (
                    "By how much did the value for {c} change between {a} and {b}?",
                    "What is the difference between {a} and {b} for {c}?",
                ),
                c=cats[i],
                a=a,
                b=b,
            ),
            V.number_answers(round(abs(data[b][i] - data[a][i]), decimals), decimals),
            "difference",
            subset="grouped_bar",
            printed=False,
            meta={"value": round(abs(data[b][i] - data[a][i]), decimals)},
        ),
        QA(
            phrase(rng, ("How many bars are there in total?", "How many bars does the chart contain?")),
            (str(n * len(series)),),
            "count",
            subset="grouped_bar",
            printed=False,
        ),
        QA(
            phrase(rng, ("How many years are compared in the chart?", "How many series does the legend list?")),
            (str(len(series)),),
            "count",
            subset="grouped_bar",
            printed=False,
        ),
    ]
    return {"title": title, "data": data, "categories": cats}, qas


def _line(rng, ax, title, unit, lo, hi, decimals, labelled):
    n = int(rng.integers(5, 11))
    y0 = int(rng.integers(2000, 2015))
    years = [str(y0 + k) for k in range(n)]
    walk = np.cumsum(rng.normal(0, (hi - lo) * 0.12, n)) + rng.uniform(lo, hi)
    vals = np.round(np.clip(walk, lo, hi), decimals)
    while len(set(vals.tolist())) < n:  # break ties so the peak year is unique
        vals = np.round(vals + rng.uniform(-1, 1, n) * 10.0 ** (-decimals), decimals)
    vals = [float(v) for v in vals]
    ax.plot(years, vals, marker=V.pick(rng, ("o", "s", "^", "D")), linewidth=2.2)
    if labelled:
        for xk, v in zip(years, vals):
            ax.annotate(_fmt(v, decimals), (xk, v), textcoords="offset points", xytext=(0, 7), ha="center", fontsize=10)
    ax.set_title(title)
    ax.tick_params(axis="x", rotation=45 if n > 7 else 0)
    what = title.split(" (")[0].lower()
    i, j = rng.choice(n, 2, replace=False)
    a, b = sorted((int(i), int(j)))
    qas = [
        QA(
            phrase(
                rng,
                ("What was the value in {y}?", "What was the {w} in {y}?", "In {y}, what was the {w}?"),
                y=years[i],
                w=what,
            ),
            _with_unit(V.number_answers(vals[i], decimals), unit),
            "value",
            subset="line",
            printed=labelled,
            meta={"value": vals[i]},
        ),
        QA(
            phrase(
                rng,
                (
                    "In which year was the value highest?",
                    "Which year had the peak {w}?",
                    "In what year did the {w} reach its maximum?",
                ),
                w=what,
            ),
            (years[int(np.argmax(vals))],),
            "extreme",
            subset="line",
            printed=True,
        ),
        QA(
            phrase(rng, ("In which year was the value lowest?", "Which year saw the lowest {w}?"), w=what),
            (years[int(np.argmin(vals))],),
            "extreme",
            subset="line",
            printed=True,
        ),
        _diff_q(rng, years[a], vals[a], years[b], vals[b], decimals, "line"),
        QA(
            phrase(rng, ("How many years does the chart cover?", "How many data points are plotted?")),
            (str(n),),
            "count",
            subset="line",
            printed=False,
        ),
    ]
    return {"title": title, "data": dict(zip(years, vals))}, qas


def _pie(rng, ax, title):
    n = int(rng.integers(3, 7))
    labels = V.pick(
        rng, ("Online", "In store", "Phone", "Catalogue", "Partners", "Other", "Wholesale", "Direct mail"), n
    )
    raw = rng.dirichlet(np.ones(n) * 2.0) * 100
    vals = np.maximum(np.round(raw).astype(int), 1)
    vals[int(np.argmax(vals))] += 100 - int(vals.sum())
    while len(set(vals.tolist())) < n:
        k = int(rng.integers(n))
        m = int(np.argmax(vals))
        if k != m:
            vals[k] += 1
            vals[m] -= 1
    vals = [int(v) for v in vals]
    ax.pie(
        vals, labels=labels, autopct="%d%%", startangle=float(rng.uniform(0, 360)), wedgeprops={"edgecolor": "white"}
    )
    ax.axis("equal")
    title = V.pick(rng, ("Sales by channel", "Share of orders by channel", "Revenue by sales channel"))
    ax.set_title(f"{title}, {int(rng.integers(2015, 2025))}")
    i, j = rng.choice(n, 2, replace=False)
    qas = [
        QA(
            phrase(
                rng,
                (
                    "What percentage does {c} account for?",
                    "What share of the total is {c}?",
                    "How large is the {c} segment, in percent?",
                ),
                c=labels[i],
            ),
            (str(vals[i]), f"{vals[i]}%"),
            "value",
            subset="pie",
            printed=True,
            meta={"value": vals[i]},
        ),
        *_extreme_qs(rng, labels, vals, "share", "pie", "segment"),
        QA(
            phrase(
                rng,
                (
                    "What is the difference between the shares of {a} and {b}?",
                    "By how many percentage points does {a} differ from {b}?",
                ),
                a=labels[i],
                b=labels[j],
            ),
            (str(abs(vals[i] - vals[j])),),
            "difference",
            subset="pie",
            printed=False,
            meta={"value": abs(vals[i] - vals[j])},
        ),
        QA(
            phrase(rng, ("How many segments does the pie chart have?", "How many slices are in the pie?")),
            (str(n),),
            "count",
            subset="pie",
            printed=False,
        ),
    ]
    return {"title": title, "data": dict(zip(labels, vals))}, qas
