"""Paper first pages with affiliation markers, slides, exam sheets, programmes, timetables and calendars."""

from __future__ import annotations

import calendar
import datetime as dt

from . import charts
from .common import (
    LOCALE_NAMES,
    LOCALES,
    MONTHS,
    WEEKDAYS,
    Ctx,
    Document,
    base_css,
    e,
    field_rows,
    label,
    page_html,
    prose,
    q,
    table,
)

FIELDS = (
    "Physics",
    "Computer Science",
    "Chemistry",
    "Mathematics",
    "Economics",
    "Biology",
    "Linguistics",
    "Electrical Engineering",
    "Earth Sciences",
    "Psychology",
    "Materials Science",
    "Statistics",
)
KINDS = (
    "{s} University",
    "{s} Institute of Technology",
    "{s} Research Centre",
    "University of {s}",
    "{s} College",
    "{s} Polytechnic",
    "National Institute of {f}",
    "{s} School of {f}",
)
TOPIC_WORDS = (
    ("Robust", "Scalable", "Efficient", "Adaptive", "Sparse", "Probabilistic", "Interpretable"),
    ("Estimation", "Inference", "Segmentation", "Scheduling", "Retrieval", "Calibration", "Clustering"),
    (
        "of Noisy Sensor Networks",
        "for Document Images",
        "in Coastal Ecosystems",
        "under Uncertainty",
        "for Multilingual Speech",
        "in Heterogeneous Catalysts",
        "of Urban Traffic Flows",
    ),
)
MARKERS = (("1", "2", "3", "4", "5"), ("a", "b", "c", "d", "e"), ("*", "†", "‡", "§", "¶"))


def _affiliations(ctx: Ctx, k: int) -> list[tuple[str, str, str, str]]:
    """``k`` affiliations (department, institution, city, country) from several locales, institutions whose
    names do not contain their city (so "in which city" needs the relation, not the name)."""
    out = []
    used: set[str] = set()
    while len(out) < k:
        loc = ctx.pick(LOCALE_NAMES)
        other = Ctx(ctx.rng.randrange(2**31), loc)
        city = other.city()
        surname = other.fake.last_name()
        inst = ctx.pick(KINDS).format(s=surname, f=ctx.pick(FIELDS))
        if inst in used or city in inst or city in used:
            continue
        used.update((inst, city))
        out.append((f"Department of {ctx.pick(FIELDS)}", inst, city, LOCALES[loc][0]))
    return out


def _authors(ctx: Ctx, n: int) -> list[str]:
    """``n`` author names from several locales."""
    names: list[str] = []
    while len(names) < n:
        name = Ctx(ctx.rng.randrange(2**31), ctx.pick(LOCALE_NAMES)).person()
        if name.split()[-1] not in {x.split()[-1] for x in names}:
            names.append(name)
    return names


def _paper_data(ctx: Ctx) -> dict:
    n_aff = ctx.rng.randint(2, 4)
    affs = _affiliations(ctx, n_aff)
    authors = _authors(ctx, ctx.rng.randint(3, 5))
    links = [[i % n_aff] for i in range(len(authors))]
    links[ctx.rng.randrange(len(authors))].append((ctx.rng.randrange(n_aff - 1) + 1) % n_aff)
    for x in links:
        x[:] = sorted(set(x))
    title = " ".join(ctx.pick(w) for w in TOPIC_WORDS)
    received = ctx.date(dt.date(2022, 1, 1), 500)
    accepted = received + dt.timedelta(days=ctx.rng.randint(40, 200))
    corr = ctx.rng.randrange(len(authors))
    samples = ctx.rng.randint(120, 9000)
    months = ctx.rng.randint(3, 30)
    limit = ctx.pick((150, 200, 250, 300))
    methods = [
        "Baseline",
        "Ours (small)",
        "Ours (full)",
        ctx.pick(("Kernel SVM", "Random forest", "CNN", "Transformer")),
    ]
    rows = []
    used: set[str] = set()
    for mth in methods:
        while True:
            acc = round(ctx.rng.uniform(61, 96), 1)
            f1 = round(acc - ctx.rng.uniform(0.5, 6), 1)
            if f"{acc}" not in used and f"{f1}" not in used:
                used.update((f"{acc}", f"{f1}"))
                break
        rows.append((mth, acc, f1, ctx.rng.randint(3, 240)))
    return {
        "affs": affs,
        "authors": authors,
        "links": links,
        "title": title,
        "received": received,
        "accepted": accepted,
        "corr": corr,
        "samples": samples,
        "months": months,
        "limit": limit,
        "rows": rows,
        "journal": ctx.pick(
            (
                "Journal of Applied Computation",
                "Letters in Data Analysis",
                "Transactions on Sensor Systems",
                "Annals of Empirical Methods",
                "Proceedings of the Workshop on Document Understanding",
            )
        ),
    }


def _paper_questions(ctx: Ctx, d: dict) -> list:
    r = ctx.rng
    authors, affs, links = d["authors"], d["affs"], d["links"]
    single = [i for i, x in enumerate(links) if len(x) == 1]
    i = ctx.pick(single)
    dept, inst, city, country = affs[links[i][0]]
    j = ctx.pick([k for k in range(len(affs)) if k != links[i][0]])
    members = [authors[k] for k, x in enumerate(links) if links[i][0] in x]
    mth, acc, f1, secs = ctx.pick(d["rows"])
    m2 = ctx.pick([x for x in d["rows"] if x[0] != mth])
    best = max(d["rows"], key=lambda x: x[1])
    return [
        q(
            r.choice(
                (
                    f"Which institution is {authors[i]} affiliated with?",
                    f"Where does {authors[i]} work?",
                    f"What is the affiliation of {authors[i]}?",
                )
            ),
            [inst, f"{dept}, {inst}"],
            "relation",
        ),
        q(
            r.choice((f"In which city is {affs[j][1]} located?", f"In which city is {affs[j][1]}?")),
            affs[j][2],
            "relation",
        ),
        q(f"In which country is {inst}?", country, "relation"),
        q(f"Which department of {affs[j][1]} is named?", affs[j][0], "relation"),
        q(r.choice(("What is the title of the paper?", "What is the paper called?")), d["title"], "role"),
        q(
            r.choice(("Who is the corresponding author?", "Which author is marked as corresponding author?")),
            authors[d["corr"]],
            "role",
        ),
        q("Who is the first author?", authors[0], "role"),
        q("Who is the last author?", authors[-1], "role"),
        q("When was the manuscript received?", ctx.fmt_date(d["received"]), "role"),
        q("When was the paper accepted?", ctx.fmt_date(d["accepted"]), "role"),
        q("Which journal is the paper in?", d["journal"], "entity_type"),
        q("How many samples were collected?", [str(f"{d['samples']:,}"), str(d["samples"])], "prose_value"),
        q(
            "What is the maximum length of the abstract in words?",
            str(d["limit"]),
            "prose_value",
            evidence=[f"{d['limit']} words"],
        ),
        q(f"What accuracy does {mth} reach?", [f"{acc}", f"{acc}%"], "lookup", evidence=[mth, f"{acc}"]),
        q(f"Which method has an F1 score of {m2[2]}?", m2[0], "reverse_lookup"),
        q(
            f"What is the difference in accuracy between {mth} and {m2[0]}?",
            [f"{abs(acc - m2[1]):.1f}", f"{abs(acc - m2[1]):g}"],
            "arithmetic",
            "table",
            evidence=[mth, m2[0]],
        ),
        q("Which method has the highest accuracy?", best[0], "arithmetic", "table", evidence=[best[0]]),
        q(
            f"How many authors are affiliated with {affs[links[i][0]][1]}?",
            str(len(members)),
            "relation",
            evidence=members,
        ),
    ]


def _results_table(ctx: Ctx, d: dict, caption_first: bool) -> str:
    cap = f'<div class="cap">Table 1: Accuracy, F1 score and training time on the test set ({d["samples"]:,} samples).</div>'
    t = table(
        ctx,
        ["Method", "Accuracy (%)", "F1", "Time (s)"],
        [[m, f"{a}", f"{f}", str(s)] for m, a, f, s in d["rows"]],
        {1, 2, 3},
        rules="rows",
    )
    return (cap + t) if caption_first else (t + cap)


def paper_twocol(ctx: Ctx) -> Document:
    """Journal-style first page: title, author line with superscript markers, numbered affiliation lines,
    corresponding-author footnote, dates, abstract, then two text columns with a results table."""
    d = _paper_data(ctx)
    s = ctx.style
    marks = ctx.pick(MARKERS)
    names = ", ".join(
        f"{e(a)}<sup>{','.join(marks[x] for x in d['links'][i])}{'*' if i == d['corr'] and marks[0] != '*' else ''}</sup>"
        for i, a in enumerate(d["authors"])
    )
    affs = "".join(
        f"<div><sup>{marks[k]}</sup>{e(dept)}, {e(inst)}, {e(city)}, {e(country)}</div>"
        for k, (dept, inst, city, country) in enumerate(d["affs"])
    )
    corr = d["authors"][d["corr"]]
    corr_mark = "*" if marks[0] != "*" else marks[d["links"][d["corr"]][0]]
    css = (
        base_css(ctx, margin="15mm 16mm")
        + f"""
body {{ font-size: {s.size - 1.5:.1f}px; }}
.j {{ font-size: 0.85em; color: #555; border-bottom: 1px solid #999; padding-bottom: 3px; margin-bottom: 14px; }}
h1 {{ font-size: 1.75em; text-align: center; color: #111; }}
.au {{ text-align: center; font-size: 1.1em; margin: 6px 0; }}
.af {{ text-align: center; font-size: 0.88em; font-style: italic; color: #333; }}
.dates {{ text-align: center; font-size: 0.82em; color: #555; margin: 8px 0; }}
.abs {{ margin: 10px 8mm; text-align: justify; font-size: 0.95em; }}
.cols {{ column-count: 2; column-gap: 7mm; text-align: justify; }}
.cap {{ font-size: 0.85em; font-style: italic; margin-top: 4px; }}
.fn {{ font-size: 0.8em; border-top: 1px solid #999; margin-top: 8px; padding-top: 3px; width: 45%; }}
"""
    )
    email = ctx.email(corr, "uni.example")
    body = f"""<div class="page"><div class="j">{e(d["journal"])} · Vol. {ctx.rng.randint(3, 40)}, No. {ctx.rng.randint(1, 12)}</div>
<h1>{e(d["title"])}</h1><div class="au">{names}</div><div class="af">{affs}</div>
<div class="dates">Received {e(ctx.fmt_date(d["received"]))}; accepted {e(ctx.fmt_date(d["accepted"]))}</div>
<div class="abs"><b>Abstract.</b> We study the problem named in the title on data collected over {d["months"]} months.
Our method improves on strong baselines while remaining simple to train. The abstract of a submission must not
exceed {d["limit"]} words, as the journal's instructions require.</div>
<div class="cols"><h3>1 Introduction</h3><p>Methods of this kind have been used widely, yet their behaviour on
real data remains poorly understood. In this work we collected {d["samples"]:,} samples from several sites and
compare four methods on them.</p><p>Section 2 describes the data; Section 3 reports the results summarised in
Table 1; Section 4 concludes.</p>{_results_table(ctx, d, ctx.rng.random() < 0.5)}
<h3>2 Data</h3><p>All measurements were repeated three times and averaged. Missing values were removed before
training, and the split into training and test data was fixed before any experiment. {e(prose(ctx, 4))}</p>
<p>{e(prose(ctx, 5))}</p></div>
<div class="fn">{corr_mark} Corresponding author: {e(corr)}, {e(email)}</div></div>"""
    qs = _paper_questions(ctx, d)
    qs.append(q(f"What is the e-mail address of {corr}?", email, "relation"))
    return Document(page_html(css, body, "paper"), qs)


def paper_blocks(ctx: Ctx) -> Document:
    """Conference-style first page: each author in a block with the affiliation (institution, city,
    country) and e-mail under the name, several blocks per row; abstract in a shaded box; keywords;
    single-column text with the results table."""
    d = _paper_data(ctx)
    d["links"] = [[x[0]] for x in d["links"]]
    s = ctx.style
    emails = [ctx.email(a, ctx.domain(d["affs"][d["links"][i][0]][1])) for i, a in enumerate(d["authors"])]
    blocks = "".join(
        f'<div class="ab"><div class="n">{e(a)}{"*" if i == d["corr"] else ""}</div>'
        f"<div>{e(d['affs'][d['links'][i][0]][1])}</div><div>{e(d['affs'][d['links'][i][0]][2])}, "
        f'{e(d["affs"][d["links"][i][0]][3])}</div><div class="m">{e(emails[i])}</div></div>'
        for i, a in enumerate(d["authors"])
    )
    css = (
        base_css(ctx, margin="16mm 18mm")
        + f"""
body {{ font-size: {s.size - 1:.1f}px; }}
h1 {{ font-size: 1.6em; text-align: {"center" if s.align == "left" else "left"}; }}
.abs-wrap {{ background: #f2f2ee; padding: 8px 12px; margin: 12px 0; border-left: 4px solid {s.accent}; }}
.authors {{ display: flex; flex-wrap: wrap; gap: 10px 26px; justify-content: center; margin: 10px 0; font-size: 0.92em; }}
.ab {{ text-align: center; min-width: 150px; }} .ab .n {{ font-weight: 700; font-size: 1.05em; }}
.ab .m {{ font-family: 'DejaVu Sans Mono'; font-size: 0.85em; }}
.cap {{ font-size: 0.85em; font-weight: 600; margin-top: 4px; }}
.kw {{ font-size: 0.9em; }}
"""
    )
    kws = ", ".join(
        ctx.sample(
            (
                "benchmarking",
                "robustness",
                "field data",
                "evaluation",
                "signal processing",
                "machine learning",
                "uncertainty",
                "reproducibility",
            ),
            4,
        )
    )
    body = f"""<div class="page"><h1>{e(d["title"])}</h1><div class="authors">{blocks}</div>
<div style="text-align:center;font-size:0.85em">* Corresponding author</div>
<div class="abs-wrap"><b>Abstract</b> — We address the problem in the title with data gathered over {d["months"]}
months at {len(d["affs"])} sites. Following the call for papers, this abstract must not exceed {d["limit"]} words.
We release code and data. <div class="kw"><b>Keywords:</b> {e(kws)}</div></div>
<h3>1. Introduction</h3><p>Our study uses {d["samples"]:,} samples. Each was labelled by two annotators, and
disagreements were resolved by a third. The results are summarised below. {e(prose(ctx, 3))}</p>
{_results_table(ctx, d, False)}<h3>2. Related work</h3><p>{e(prose(ctx, 6))}</p>
<p style="font-size:0.85em">Manuscript received {e(ctx.fmt_date(d["received"]))}; accepted
{e(ctx.fmt_date(d["accepted"]))}. Published in {e(d["journal"])}.</p></div>"""
    qs = [
        x for x in _paper_questions(ctx, d) if "How many authors" not in x.question and "department" not in x.question
    ]
    k = ctx.rng.randrange(len(d["authors"]))
    qs.append(q(f"What is the e-mail address of {d['authors'][k]}?", emails[k], "relation"))
    return Document(page_html(css, body, "paper"), qs)


def _slide_css(ctx: Ctx, dark: bool) -> str:
    s = ctx.style
    bg, fg = ("#1d2330", "#f2f2f2") if dark else ("#ffffff", "#1a1a1a")
    return (
        base_css(ctx, "254mm 142.875mm", "0")
        + f"""
body {{ background: {bg}; color: {fg}; font-size: 19px; }}
.slide {{ width: 254mm; height: 142.8mm; position: relative; overflow: hidden; padding: 10mm 14mm; }}
h1 {{ font-size: 1.8em; color: {"#ffd166" if dark else s.accent}; }}
.foot {{ position: absolute; bottom: 5mm; left: 14mm; right: 14mm; font-size: 0.6em; color: {"#aab" if dark else "#666"};
display: flex; justify-content: space-between; border-top: 1px solid {"#445" if dark else "#ccc"}; padding-top: 2mm; }}
.cols {{ display: flex; gap: 10mm; align-items: flex-start; }}
ul {{ margin: 4px 0; padding-left: 22px; }} li {{ margin-bottom: 6px; }}
table.data {{ font-size: 0.85em; }}
table.data td {{ color: {fg}; }}
.rules-zebra tr:nth-child(even) td {{ background: {"#2f3849" if dark else "#eef1f4"}; }}
svg text {{ fill: {fg}; }}
"""
    )


def _slide(ctx: Ctx, dark: bool) -> Document:
    s = ctx.style
    kind = ctx.pick(("title", "chart", "table"))
    speakers = _authors(ctx, ctx.rng.randint(2, 3))
    affs = _affiliations(ctx, len(speakers))
    event = f"{ctx.pick(('Annual', 'International', 'European', 'Regional'))} {ctx.pick(('Workshop', 'Symposium', 'Conference', 'Meeting'))} on {ctx.pick(FIELDS)}"
    when = ctx.date()
    city = affs[0][2]
    title = " ".join(ctx.pick(w) for w in TOPIC_WORDS)
    n = ctx.rng.randint(2, 30)
    foot = f'<div class="foot"><span>{e(speakers[0])} · {e(event)}</span><span>{n}</span></div>'
    colours = ctx.pick(charts.PALETTES)
    r = ctx.rng
    if kind == "title":
        marks = ctx.pick(MARKERS[:2])
        names = " &nbsp; ".join(f"{e(a)}<sup>{marks[i]}</sup>" for i, a in enumerate(speakers))
        aff = "".join(f"<div><sup>{marks[i]}</sup>{e(x[1])}, {e(x[2])}, {e(x[3])}</div>" for i, x in enumerate(affs))
        body = f"""<div class="slide" style="text-align:center;padding-top:22mm"><h1>{e(title)}</h1>
<div style="font-size:1.05em;margin:10px 0">{names}</div><div style="font-size:0.8em">{aff}</div>
<div style="margin-top:10mm;font-size:0.85em">{e(event)}<br>{e(city)}, {e(ctx.fmt_date(when))}</div></div>"""
        i = r.randrange(len(speakers))
        qs = [
            q(r.choice(("What is the title of the talk?", "What is the presentation called?")), title, "role"),
            q(f"Which institution is {speakers[i]} affiliated with?", affs[i][1], "relation"),
            q(f"In which country is {affs[i][1]}?", affs[i][3], "relation"),
            q("Who is the first presenter?", speakers[0], "role"),
            q("At which event is the talk given?", event, "entity_type"),
            q("On what date is the talk?", ctx.fmt_date(when), "entity_type"),
            q(f"In which city is {affs[-1][1]}?", affs[-1][2], "relation"),
        ]
    elif kind == "chart":
        cats = ctx.sample(("2019", "2020", "2021", "2022", "2023", "2024"), 5)
        cats.sort()
        unit = ctx.pick(("", "%"))
        vals = ctx.sample(range(12, 95), 5)
        label_s = ctx.pick(("Share of respondents", "Adoption rate", "Users (thousands)", "Response rate"))
        chart = charts.bar_chart(
            cats,
            [(label_s, [float(v) for v in vals])],
            colours,
            width=470,
            height=300,
            unit=unit,
            title=label_s,
            font=s.font,
        )
        hi = cats[vals.index(max(vals))]
        bullets = [
            f"Peak in {hi}",
            f"{ctx.pick(('Survey', 'Panel', 'Sample'))} of {ctx.rng.randint(200, 5000):,} people",
            f"Lowest value: {min(vals)}{unit}",
        ]
        body = f"""<div class="slide"><h1>{e(ctx.pick(("Results", "Key findings", "Trend over time", "What we measured")))}</h1>
<div class="cols"><div>{chart}</div><ul>{"".join(f"<li>{e(b)}</li>" for b in bullets)}</ul></div>{foot}</div>"""
        a, b = ctx.sample(range(5), 2)
        qs = [
            q(
                f"What value is shown for {cats[a]}?",
                [f"{vals[a]}{unit}", str(vals[a])],
                "chart",
                "chart",
                evidence=[f"{vals[a]}{unit}"],
            ),
            q("In which year is the value highest?", hi, "chart", "chart"),
            q(
                f"What is the difference between {cats[a]} and {cats[b]}?",
                str(abs(vals[a] - vals[b])),
                "chart",
                "chart",
                evidence=[f"{vals[a]}{unit}", f"{vals[b]}{unit}"],
            ),
            q(f"Which year has a value of {vals[b]}{unit}?", cats[b], "chart", "chart"),
            q("What is the slide number?", str(n), "entity_type"),
            q("Who is giving the presentation?", speakers[0], "role"),
        ]
    else:
        items = ctx.sample(("Tokyo", "Lagos", "Lima", "Oslo", "Perth", "Quito", "Riga", "Turin", "Cork", "Graz"), 4)
        cols = ("Sites", "Samples", "Error (%)")
        rows = [
            (c, ctx.rng.randint(2, 19), ctx.rng.randint(100, 9000), round(ctx.rng.uniform(0.5, 9.9), 1)) for c in items
        ]
        while len({x[2] for x in rows}) < 4 or len({x[3] for x in rows}) < 4:
            rows = [
                (c, ctx.rng.randint(2, 19), ctx.rng.randint(100, 9000), round(ctx.rng.uniform(0.5, 9.9), 1))
                for c in items
            ]
        t = table(ctx, ["Region", *cols], [[c, str(a), f"{b:,}", f"{x}"] for c, a, b, x in rows], {1, 2, 3})
        body = f"""<div class="slide"><h1>{e(ctx.pick(("Data overview", "Field campaign", "Where the data come from")))}</h1>
<div style="width:70%">{t}</div><p style="font-size:0.8em">Errors are median absolute errors per region.</p>{foot}</div>"""
        a, b = ctx.sample(rows, 2)
        qs = [
            q(f"How many samples come from {a[0]}?", [f"{a[2]:,}", str(a[2])], "lookup"),
            q(f"What is the error for {b[0]}?", [f"{b[3]}", f"{b[3]}%"], "lookup", evidence=[f"{b[3]}"]),
            q(f"Which region has {a[1]} sites?", a[0], "reverse_lookup", evidence=[a[0]])
            if [x[1] for x in rows].count(a[1]) == 1
            else q("Which region is listed first?", rows[0][0], "lookup"),
            q(
                f"How many sites are there in {a[0]} and {b[0]} together?",
                str(a[1] + b[1]),
                "arithmetic",
                "table",
                evidence=[a[0], b[0]],
            ),
            q(
                f"Is the error in {a[0]} lower than in {b[0]}? Answer yes or no.",
                "yes" if a[3] < b[3] else "no",
                "arithmetic",
                "table",
                evidence=[a[0], b[0]],
            ),
            q("Who is the presenter named in the footer?", speakers[0], "role"),
        ]
    return Document(page_html(_slide_css(ctx, dark), body, "slide"), qs, "254mm 142.875mm")


def slides_light(ctx: Ctx) -> Document:
    """A light 16:9 slide (title slide with affiliations, chart slide, or table slide) with a footer."""
    return _slide(ctx, False)


def slides_dark(ctx: Ctx) -> Document:
    """The same kinds of slide on a dark theme with a different heading colour and footer."""
    return _slide(ctx, True)


COURSES = (
    "Linear Algebra",
    "Organic Chemistry",
    "Macroeconomics",
    "Data Structures",
    "Thermodynamics",
    "Statistics II",
    "Medieval History",
    "Contract Law",
    "Cell Biology",
    "Signal Processing",
    "Microeconomics",
    "Numerical Methods",
    "Phonetics",
    "Fluid Mechanics",
)


def _duration(minutes: int) -> str:
    h, m = divmod(minutes, 60)
    hs = f"{h} hour{'s' if h > 1 else ''}"
    return f"{hs} and {m} minutes" if m else hs


def exam_cover(ctx: Ctx) -> Document:
    """An exam cover sheet: institution, course and code, date, time allowed written out, instructions in
    prose, a marks table per question, candidate number boxes."""
    course = ctx.pick(COURSES)
    code = f"{course[:3].upper()}{ctx.rng.randint(100, 499)}"
    inst = _affiliations(ctx, 1)[0][1]
    when = ctx.date()
    start = ctx.rng.randint(8, 15) * 60 + ctx.pick((0, 30))
    minutes = ctx.pick((50, 80, 90, 110, 120, 150, 170, 180))
    n = ctx.rng.randint(4, 6)
    answer = ctx.rng.randint(2, n - 1)
    words = ("one", "two", "three", "four", "five", "six")
    while True:
        marks = [ctx.pick((10, 15, 20, 25, 30, 35, 40)) for _ in range(n)]
        if len(set(marks)) >= n - 1:
            break
    examiner = ctx.person()
    room = ctx.pick(("Hall A", "Main Hall", "Room 1.02", "Lecture Theatre 3", "Sports Hall", "Room G.15"))
    aids = ctx.pick(
        ("a non-programmable calculator", "one handwritten A4 sheet of notes", "no aids", "a bilingual dictionary")
    )
    rows = [[f"Question {i + 1}", str(mk)] for i, mk in enumerate(marks)]
    css = (
        base_css(ctx, margin="20mm 20mm")
        + """
.c { text-align: center; }
.box { border: 2px solid #222; padding: 10px 14px; margin: 14px 0; }
.cand { display: flex; gap: 4px; } .cand span { border: 1px solid #333; width: 24px; height: 30px; display: inline-block; }
table.data { width: 45%; }
"""
    )
    body = f"""<div class="page"><div class="c"><h2>{e(inst)}</h2><h1>{e(course)} ({e(code)})</h1>
<div>{e(ctx.pick(("Final examination", "Resit examination", "Midterm examination")))}</div></div>
<div class="box">{
        field_rows(
            ctx,
            [
                ("Date", ctx.fmt_date(when)),
                ("Start", ctx.time(start)),
                ("Time allowed", _duration(minutes)),
                ("Room", room),
                ("Examiner", examiner),
            ],
        )
    }</div>
<p><b>Instructions.</b> Answer {words[answer - 1]} of the {words[n - 1]} questions. You may use {e(aids)}.
Write your candidate number, not your name, on every answer booklet. Do not turn over this page until told to do so.</p>
<h3>{label(ctx, "Marks")}</h3>{table(ctx, ["Question", "Marks"], rows, {1}, foot=[["Total", str(sum(marks))]])}
<p>Candidate number:</p><div class="cand">{"<span></span>" * 8}</div></div>"""
    r = ctx.rng
    i, j = ctx.sample(range(n), 2)
    uniq = [k for k in range(n) if marks.count(marks[k]) == 1]
    qs = [
        q(
            r.choice(("How much time do students have?", "How long does the exam last?", "What is the time allowed?")),
            _duration(minutes),
            "multi_token",
        ),
        q(
            r.choice(("How many questions must be answered?", "How many of the questions do candidates answer?")),
            [words[answer - 1], str(answer)],
            "prose_value",
            evidence=[f"Answer {words[answer - 1]} of the"],
        ),
        q("What may candidates use during the exam?", aids, "prose_value"),
        q("Who is the examiner?", examiner, "role"),
        q("On what date is the exam?", ctx.fmt_date(when), "role"),
        q("At what time does the exam start?", ctx.time(start), "role"),
        q("In which room is the exam held?", room, "entity_type"),
        q("What is the course code?", code, "entity_type"),
        q(f"How many marks is question {i + 1} worth?", str(marks[i]), "lookup", evidence=[f"Question {i + 1}"]),
        q(
            f"What are questions {i + 1} and {j + 1} worth together?",
            str(marks[i] + marks[j]),
            "arithmetic",
            "table",
            evidence=[f"Question {i + 1}", f"Question {j + 1}"],
        ),
        q("What is the total number of marks?", str(sum(marks)), "role"),
    ]
    if uniq:
        k = ctx.pick(uniq)
        qs.append(q(f"Which question is worth {marks[k]} marks?", [f"Question {k + 1}", str(k + 1)], "reverse_lookup"))
    return Document(page_html(css, body, "exam"), qs)


def exam_grid(ctx: Ctx) -> Document:
    """An exam sheet with a ruled header grid (module, examiner, date, duration as ``2 h 30 min``), candidate
    fields, numbered rules, and a points table with an empty 'achieved' column."""
    course = ctx.pick(COURSES)
    examiner, second = ctx.people(2)
    when = ctx.date()
    minutes = ctx.pick((60, 75, 90, 100, 120, 135, 150))
    h, mn = divmod(minutes, 60)
    dur = f"{h} h {mn} min" if mn else f"{h} h"
    tasks = ctx.rng.randint(4, 7)
    while True:
        pts = [ctx.pick((4, 6, 8, 10, 12, 14, 16, 20)) for _ in range(tasks)]
        if len(set(pts)) >= tasks - 1:
            break
    passmark = int(sum(pts) * ctx.pick((0.4, 0.5)))
    semester = ctx.pick(("Winter term", "Summer term")) + f" {ctx.rng.randint(2023, 2026)}"
    grid = table(
        ctx,
        [],
        [
            ["Module", course, "Semester", semester],
            ["Examiner", examiner, "Second examiner", second],
            ["Date", ctx.fmt_date(when), "Duration", dur],
        ],
        rules="grid",
        cls="data g",
    )
    rows = [[f"Task {i + 1}", str(p), ""] for i, p in enumerate(pts)]
    css = (
        base_css(ctx, margin="16mm 18mm")
        + """
table.g td:nth-child(odd) { font-weight: 700; background: #f3f3f3; width: 18%; }
.fields { display: grid; grid-template-columns: 1fr 1fr; gap: 14px 30px; margin: 14px 0; }
.fields div { border-bottom: 1px solid #333; padding-top: 14px; font-size: 0.85em; color: #444; }
"""
    )
    body = f"""<div class="page"><h1>Written examination</h1>{grid}
<div class="fields"><div>Name</div><div>Student ID</div><div>Programme</div><div>Seat</div></div>
<ol><li>Write your answers on the sheets provided.</li><li>The exam has {tasks} tasks worth {sum(pts)} points;
you pass with {passmark} points.</li><li>Phones must be switched off and stored in your bag.</li></ol>
{table(ctx, ["Task", "Points", "Achieved"], rows, {1})}</div>"""
    r = ctx.rng
    i, j = ctx.sample(range(tasks), 2)
    qs = [
        q(
            r.choice(("How long is the exam?", "What is the duration of the exam?", "How much time is given?")),
            dur,
            "multi_token",
        ),
        q("Who is the second examiner?", second, "role"),
        q(r.choice(("Who is the examiner?", "Who is the first examiner?")), examiner, "role"),
        q("Which module is examined?", course, "entity_type"),
        q("On what date is the exam?", ctx.fmt_date(when), "entity_type"),
        q(
            "How many points are needed to pass?",
            str(passmark),
            "prose_value",
            evidence=[f"pass with {passmark} points"],
        ),
        q(
            "How many points can be achieved in total?",
            str(sum(pts)),
            "prose_value",
            evidence=[f"worth {sum(pts)} points"],
        ),
        q(f"How many points is task {i + 1} worth?", str(pts[i]), "lookup", evidence=[f"Task {i + 1}"]),
        q(
            f"How many points are tasks {i + 1} and {j + 1} worth together?",
            str(pts[i] + pts[j]),
            "arithmetic",
            "table",
            evidence=[f"Task {i + 1}", f"Task {j + 1}"],
        ),
        q("Which semester is the exam in?", semester, "multi_token"),
    ]
    return Document(page_html(css, body, "exam"), qs)


SESSION_TITLES = (
    "Opening remarks",
    "Keynote: Learning from small data",
    "Coffee break",
    "Lunch",
    "Poster session",
    "Panel: Open science",
    "Sensors in agriculture",
    "Language models for archives",
    "Privacy by design",
    "Robots in warehouses",
    "Climate data pipelines",
    "Closing and awards",
    "Tutorial: Reproducible notebooks",
    "Networking reception",
    "Quantum sensing primer",
)


def schedule_conference(ctx: Ctx) -> Document:
    """A two-day conference programme: per day a dated heading and a table time / session / speaker / room."""
    s = ctx.style
    first = ctx.date()
    days = [first, first + dt.timedelta(days=1)]
    titles = ctx.sample([t for t in SESSION_TITLES if t not in ("Coffee break", "Lunch")], 8)
    speakers = _authors(ctx, 8)
    rooms = ctx.sample(("Room A", "Room B", "Auditorium", "Hall 2", "Salon Rouge", "Room 104"), 3)
    plan = []
    for d_i, day in enumerate(days):
        t = ctx.rng.randint(8, 9) * 60 + ctx.pick((0, 30))
        for k in range(4):
            idx = d_i * 4 + k
            plan.append((day, t, titles[idx], speakers[idx], ctx.pick(rooms)))
            t += ctx.pick((45, 60, 75, 90))
    tables = ""
    for day in days:
        rows = [[ctx.time(t), ti, sp, ro] for d, t, ti, sp, ro in plan if d == day]
        tables += f"<h3>{e(WEEKDAYS[day.weekday()])}, {e(ctx.fmt_date(day))}</h3>" + table(
            ctx, ["Time", "Session", "Speaker", "Room"], rows
        )
    event = f"{ctx.pick(('Workshop', 'Symposium', 'Summer School', 'Forum'))} on {ctx.pick(FIELDS)} {first.year}"
    venue = _affiliations(ctx, 1)[0]
    css = (
        base_css(ctx)
        + f"""
.hero {{ border-left: 8px solid {s.accent}; padding-left: 12px; margin-bottom: 10px; }}
"""
    )
    body = f"""<div class="page"><div class="hero"><h1>{e(event)}</h1><div>Programme · {e(venue[1])}, {e(venue[2])}</div></div>
{tables}<p style="font-size:0.9em">Registration opens 30 minutes before the first session. All talks are
{ctx.pick((20, 25, 30))} minutes plus questions.</p></div>"""
    r = ctx.rng
    a, b, c = ctx.sample(plan, 3)
    qs = [
        q(r.choice((f"Who gives the session '{a[2]}'?", f"Who is the speaker of '{a[2]}'?")), a[3], "schedule"),
        q(f"At what time does '{b[2]}' start?", ctx.time(b[1]), "schedule"),
        q(f"On which day is '{c[2]}'?", [ctx.fmt_date(c[0]), WEEKDAYS[c[0].weekday()]], "schedule"),
        q(
            f"What session starts at {ctx.time(a[1])} on {WEEKDAYS[a[0].weekday()]}?",
            a[2],
            "schedule",
            evidence=[ctx.time(a[1])],
        ),
        q(f"In which room is '{b[2]}'?", b[4], "lookup"),
        q(f"Which session does {c[3]} give?", c[2], "reverse_lookup"),
        q("Where does the event take place?", [venue[1], f"{venue[1]}, {venue[2]}"], "entity_type"),
        q("In which city does the event take place?", venue[2], "relation"),
        q("What is the name of the event?", event, "role"),
    ]
    return Document(page_html(css, body, "programme"), qs)


def schedule_timetable(ctx: Ctx) -> Document:
    """A weekly course timetable: a grid of time slots by weekdays, each filled cell a course and a room,
    and a legend table of courses with their lecturers."""
    slots = [8 * 60 + 120 * i for i in range(4)] if ctx.rng.random() < 0.5 else [9 * 60 + 90 * i for i in range(5)]
    courses = ctx.sample(COURSES, 6)
    lecturers = _authors(ctx, 6)
    rooms = [f"{ctx.pick('ABCDE')}{ctx.rng.randint(1, 4)}.{ctx.rng.randint(1, 30):02d}" for _ in range(6)]
    grid: dict[tuple[int, int], int] = {}
    cells = [(d, t) for d in range(5) for t in range(len(slots))]
    for k, cell in enumerate(ctx.sample(cells, 9)):
        grid[cell] = k % 6
    head = "".join(f"<th>{WEEKDAYS[d]}</th>" for d in range(5))
    body_rows = ""
    for t, start in enumerate(slots):
        tds = "".join(
            f"<td>{e(courses[grid[(d, t)]])}<br><small>{e(rooms[grid[(d, t)]])}</small></td>"
            if (d, t) in grid
            else "<td></td>"
            for d in range(5)
        )
        body_rows += f"<tr><th>{e(ctx.time(start))}</th>{tds}</tr>"
    legend = table(
        ctx, ["Course", "Lecturer", "Room"], [[courses[k], lecturers[k], rooms[k]] for k in range(6)], rules="rows"
    )
    term = f"{ctx.pick(('Autumn', 'Spring', 'Winter', 'Summer'))} term {ctx.rng.randint(2024, 2026)}"
    group = ctx.pick(("Group 1A", "Year 2, group B", "Cohort 2025", "Class 3C"))
    s = ctx.style
    css = (
        base_css(ctx, "297mm 210mm", "12mm 14mm")
        + f"""
table.tt {{ width: 100%; border-collapse: collapse; table-layout: fixed; }}
table.tt th, table.tt td {{ border: 1px solid #999; padding: 6px; height: 58px; vertical-align: top; }}
table.tt th {{ background: {s.accent}; color: #fff; }}
table.tt td {{ background: #fafafa; }}
"""
    )
    body = f"""<div class="page"><h1>Timetable · {e(group)} · {e(term)}</h1>
<table class="tt"><tr><th>Time</th>{head}</tr>{body_rows}</table><h3>Courses</h3>{legend}</div>"""
    r = ctx.rng
    (d, t), k = ctx.pick(list(grid.items()))
    once = [c for c in range(6) if list(grid.values()).count(c) == 1]
    qs = [
        q(
            f"Which course is on {WEEKDAYS[d]} at {ctx.time(slots[t])}?",
            courses[k],
            "schedule",
            evidence=[WEEKDAYS[d], ctx.time(slots[t])],
        ),
        q(r.choice((f"Who teaches {courses[k]}?", f"Who is the lecturer of {courses[k]}?")), lecturers[k], "lookup"),
        q(f"In which room is {courses[k]} taught?", rooms[k], "lookup"),
        q(f"Which course does {lecturers[(k + 1) % 6]} teach?", courses[(k + 1) % 6], "reverse_lookup"),
        q("Which term does the timetable cover?", term, "multi_token"),
        q("For which group is this timetable?", group, "entity_type"),
    ]
    if once:
        c = ctx.pick(once)
        (dd, tt) = next(cell for cell, v in grid.items() if v == c)
        qs.append(q(f"On which day is {courses[c]}?", WEEKDAYS[dd], "schedule", evidence=[courses[c]]))
        qs.append(q(f"At what time does {courses[c]} start?", ctx.time(slots[tt]), "schedule", evidence=[courses[c]]))
    return Document(page_html(css, body, "timetable"), qs, "297mm 210mm")


EVENTS = (
    "Team offsite",
    "Budget review",
    "Dentist",
    "Parents' evening",
    "Board meeting",
    "Product launch",
    "Fire drill",
    "Quarterly report due",
    "Sprint planning",
    "Company picnic",
    "Tax deadline",
    "Training day",
    "Client visit",
    "Holiday",
    "Conference talk",
    "Hackathon",
    "Audit",
    "Open day",
)


def calendar_month(ctx: Ctx) -> Document:
    """A month calendar: a week-per-row grid with day numbers and event labels in some cells, the month and
    year as heading, a notes box listing the events with times."""
    s = ctx.style
    year, month = ctx.rng.randint(2024, 2026), ctx.rng.randint(1, 12)
    monday_first = ctx.rng.random() < 0.6
    cal = calendar.Calendar(0 if monday_first else 6)
    weeks = cal.monthdayscalendar(year, month)
    ndays = calendar.monthrange(year, month)[1]
    days = sorted(ctx.sample(range(1, ndays + 1), 6))
    events = dict(zip(days, ctx.sample(EVENTS, 6)))
    times = {d: ctx.time(ctx.rng.randint(8, 17) * 60 + ctx.pick((0, 30))) for d in days}
    names = [WEEKDAYS[(i + (0 if monday_first else 6)) % 7] for i in range(7)]
    head = "".join(f"<th>{n}</th>" for n in names)
    rows = ""
    for wk in weeks:
        rows += (
            "<tr>"
            + "".join(
                "<td class=empty></td>"
                if dday == 0
                else f'<td><div class="dn">{dday}</div>{f"<div class=ev>{e(events[dday])}</div>" if dday in events else ""}</td>'
                for dday in wk
            )
            + "</tr>"
        )
    notes = "".join(f"<li>{dday} {MONTHS[month - 1]}: {e(events[dday])}, {e(times[dday])}</li>" for dday in days)
    css = (
        base_css(ctx, "297mm 210mm", "10mm 12mm")
        + f"""
table.cal {{ width: 100%; table-layout: fixed; border-collapse: collapse; }}
table.cal th {{ background: {s.accent}; color: #fff; padding: 4px; }}
table.cal td {{ border: 1px solid #bbb; height: 70px; vertical-align: top; padding: 3px 5px; }}
table.cal td.empty {{ background: #f0f0f0; }}
.dn {{ font-weight: 700; }} .ev {{ font-size: 0.85em; background: #fff3c4; margin-top: 4px; padding: 1px 3px; }}
.wrap {{ display: grid; grid-template-columns: 3.3fr 1fr; gap: 10mm; }}
"""
    )
    owner = ctx.person()
    body = f"""<div class="page"><h1>{MONTHS[month - 1]} {year}</h1><div class="wrap"><table class="cal"><tr>{head}</tr>{rows}</table>
<div><h3>Notes</h3><ul>{notes}</ul><p style="font-size:0.85em">Calendar of {e(owner)}</p></div></div></div>"""
    r = ctx.rng
    a, b = ctx.sample(days, 2)
    date_a = dt.date(year, month, a)
    qs = [
        q(
            r.choice((f"What is planned on {MONTHS[month - 1]} {a}?", f"What event is on {a} {MONTHS[month - 1]}?")),
            events[a],
            "schedule",
            evidence=[f"{a} {MONTHS[month - 1]}"],
        ),
        q(
            r.choice((f"On which date is the {events[b]}?", f"When is '{events[b]}'?")),
            [f"{b} {MONTHS[month - 1]}", f"{MONTHS[month - 1]} {b}", f"{b} {MONTHS[month - 1]} {year}", str(b)],
            "schedule",
        ),
        q(f"At what time is the {events[a]}?", times[a], "schedule"),
        q(
            f"On which weekday is the {events[a]}?",
            WEEKDAYS[date_a.weekday()],
            "schedule",
            evidence=[events[a], WEEKDAYS[date_a.weekday()]],
        ),
        q("Which month and year does the calendar show?", f"{MONTHS[month - 1]} {year}", "multi_token"),
        q("Whose calendar is this?", owner, "entity_type"),
        q(
            "How many events are listed in the notes?",
            str(len(days)),
            "arithmetic",
            "table",
            evidence=[events[d] for d in days],
        ),
    ]
    return Document(page_html(css, body, "calendar"), qs, "297mm 210mm")
