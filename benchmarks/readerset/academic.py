"""Academic, travel and technical pages of the reader corpus: paper first page, conference programme, transport
timetable, exam sheet, product specification sheet and a report page with a results table."""

from __future__ import annotations

import datetime as dt

from broadset.common import e, prose

from .base import Sheet

FIELDS = (
    "graph neural networks",
    "soil moisture sensing",
    "urban heat islands",
    "protein folding",
    "low-power radios",
    "reading comprehension",
    "coastal erosion",
    "battery ageing",
    "crowd dynamics",
    "speech recognition",
    "microplastics",
    "supply chain risk",
    "wind turbine wakes",
    "sleep quality",
)
METHODS = (
    "A Scalable Approach to",
    "Revisiting",
    "Towards Robust",
    "Learning",
    "Measuring",
    "On the Limits of",
    "A Field Study of",
    "Efficient Estimation of",
)


def _title(sh: Sheet) -> str:
    return f"{sh.rng.choice(METHODS)} {sh.rng.choice(FIELDS).title()}"


def paper(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    title = _title(sh)
    authors = c.people(r.randint(2, 5))
    unis = [f"University of {x}" for x in c.cities(2)]
    sh.generic("title", title)
    sh.generic("author", authors[0])
    sh.ask(r.choice(("Who is the last author?", "Which author is listed last?")), authors[-1], "lookup", "last_author")
    sh.ask(f"Which institution is {authors[0]} affiliated with?", unis[0], "relation", "affiliation")
    sh.ask("How many authors does the paper have?", str(len(authors)), "relation", "author_count", [authors[-1]])
    n = r.randint(12, 900)
    gain = r.randint(3, 40)
    sh.ask(
        r.choice(("How many participants were studied?", "How many samples does the study use?")),
        str(n),
        "prose_value",
        "sample_size",
    )
    sh.ask(
        "By how much does the method improve?",
        [f"{gain}%", f"{gain} %", str(gain)],
        "prose_value",
        "improvement",
        [str(gain)],
    )
    meta = [
        sh.fld("doi", f"10.{r.randint(1000, 9999)}/{c.ident('', 7)}", vtype="id", optional=0.4),
        sh.fld("received", c.fmt_date(c.date()), vtype="date", generic="date", optional=0.4),
        sh.fld("keywords", ", ".join(c.sample(FIELDS, 3)), ask=False),
        sh.fld("email", c.email(authors[0], "uni.example"), entity="email", optional=0.4),
    ]
    sh.missing("total", "money")
    auth = ", ".join(f"{a}<sup>{1 + (i % 2)}</sup>" for i, a in enumerate(map(e, authors)))
    aff = "<br>".join(f"<sup>{i + 1}</sup>{e(u)}" for i, u in enumerate(unis))
    abstract = (
        f"We study {r.choice(FIELDS)} using data from {n} participants. {prose(c, 2)} Our method improves "
        f"accuracy by {gain}% over the baseline. {prose(c, 2)}"
    )
    body = (
        "<h3>Abstract</h3>"
        + sh.para(abstract)
        + "<h3>1 Introduction</h3>"
        + sh.para(prose(c, 6))
        + sh.para(prose(c, 5))
    )
    head = f"<h1>{e(title)}</h1><div>{auth}</div><div class='small'>{aff}</div>"
    return sh.page(
        arrangement,
        {"head": head, "meta": sh.kv(meta, "colon"), "body": body},
        header=r.choice(("Preprint", "Journal of Applied Studies", "Proceedings")),
        footer=f"{c.date().year}",
    )


def programme(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    conf = f"{r.choice(('International', 'European', 'Annual', 'Regional'))} Workshop on {r.choice(FIELDS).title()}"
    day = c.date()
    city = c.city()
    sh.generic("title", conf)
    sh.ask("Where does the event take place?", city, "lookup", "city")
    speakers = c.people(6)
    t = r.choice((8 * 60 + 30, 9 * 60))
    rows = []
    for s in speakers:
        rows.append([c.time(t), r.choice(FIELDS).capitalize(), s])
        t += r.choice((20, 30, 45))
    for row in c.sample(rows, 2):
        sh.ask(
            r.choice((f"When does {row[2]} speak?", f"At what time is the talk by {row[2]}?")),
            row[0],
            "table_cell",
            "talk_time",
        )
        sh.ask(f"Who speaks at {row[0]}?", row[2], "table_cell", "speaker")
    fee = round(r.uniform(40, 450), 0)
    meta = [
        sh.fld("date", c.fmt_date(day), vtype="date", generic="date"),
        sh.fld("location", f"{c.company()} Hall", optional=0.3),
        sh.fld("registration_fee", c.money(fee), c.amount_answers(fee), "money", optional=0.4),
        sh.fld("website", f"www.{c.domain(conf)}", entity="website", optional=0.4),
    ]
    chair = c.person()
    sh.ask("Who chairs the morning session?", chair, "prose_value", "chair")
    sh.missing("invoice_number", "id")
    return sh.page(
        arrangement,
        {
            "head": f"<h1>{e(conf)}</h1><h3>{e(city)}</h3>",
            "meta": sh.kv(meta),
            "table": sh.tbl(["Time", "Talk", "Speaker"], rows),
            "body": sh.para(f"The morning session is chaired by {chair}. {prose(c, 1)}"),
        },
        header="Programme",
        footer=conf,
    )


def timetable(sh: Sheet, arrangement: str) -> str:
    """A transport departure table: stops down the side, departures across."""
    c, r = sh.ctx, sh.rng
    stops = c.cities(r.randint(5, 7))
    runs = r.randint(4, 6)
    first = [r.randrange(5 * 60, 9 * 60, 5) + 75 * i for i in range(runs)]
    gaps = [r.randint(6, 25) for _ in stops]
    grid = []
    for j, s in enumerate(stops):
        grid.append([s] + [c.time(f + sum(gaps[:j])) for f in first])
    route = f"{r.choice(('Bus', 'Line', 'Route', 'Train'))} {r.randint(1, 99)}{r.choice(('', 'A', 'X'))}"
    sh.generic("title", [route], [route])
    k = r.randrange(runs)
    row = r.choice(grid[1:])
    sh.ask(f"When does departure {k + 1} reach {row[0]}?", row[k + 1], "table_cell", "time")
    sh.ask(f"At what time does the first service leave {grid[0][0]}?", grid[0][1], "table_cell", "first_departure")
    sh.ask("What is the last stop?", grid[-1][0], "relation", "last_stop")
    sh.ask("Where does the route start?", grid[0][0], "relation", "first_stop")
    meta = [
        sh.fld("route", route),
        sh.fld("operator", c.company(), vtype="org", optional=0.3),
        sh.fld("valid_from", c.fmt_date(c.date()), vtype="date", generic="date", optional=0.3),
        sh.fld("phone", c.phone(), entity="phone", optional=0.5),
    ]
    sh.missing("total", "money")
    hdr = ["Stop"] + [f"{i + 1}" for i in range(runs)]
    return sh.page(
        arrangement,
        {
            "head": f"<h1>{e(route)}</h1><div>{e(stops[0])} – {e(stops[-1])}</div>",
            "meta": sh.kv(meta),
            "table": sh.tbl(hdr, grid, set(range(1, runs + 1))),
            "notes": sh.para("Times are approximate. No service on public holidays."),
        },
    )


def exam_sheet(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    course = f"{r.choice(('Introduction to', 'Advanced', 'Applied', 'Foundations of'))} {r.choice(('Statistics', 'Chemistry', 'Economics', 'Algorithms', 'Mechanics', 'Linguistics'))}"
    marks = [r.choice((5, 8, 10, 12, 15, 20)) for _ in range(r.randint(4, 6))]
    meta = [
        sh.fld("course", course),
        sh.fld("examiner", c.person(), vtype="person"),
        sh.fld("date", c.fmt_date(c.date()), vtype="date", generic="date"),
        sh.fld("duration", f"{r.choice((60, 90, 120, 180))} minutes"),
        sh.fld("total_marks", str(sum(marks))),
        sh.fld("student_id", "__________", ask=False),
        sh.fld("location", f"Hall {r.randint(1, 9)}", optional=0.4),
    ]
    sh.generic("title", course)
    rows = [
        [f"Question {i + 1}", r.choice(("Short answer", "Proof", "Calculation", "Essay", "Multiple choice")), str(m)]
        for i, m in enumerate(marks)
    ]
    i = r.randrange(len(rows))
    sh.ask(f"How many marks is question {i + 1} worth?", rows[i][2], "table_cell", "marks")
    sh.ask("How many questions are there?", str(len(rows)), "relation", "question_count", [rows[-1][0]])
    sh.missing("invoice_number", "id")
    body = sh.para(
        f"Answer all questions. {r.choice(('Calculators are permitted.', 'No calculators allowed.'))} "
        "Write your student ID on every page."
    )
    return sh.page(
        arrangement,
        {
            "head": f"<h1>{e(course)}</h1><div>{e('Final examination')}</div>",
            "meta": sh.kv(meta),
            "table": sh.tbl(["", "Type", "Marks"], rows, {2}),
            "body": body,
        },
        header=f"University of {c.city()}",
    )


def spec_sheet(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    maker = c.company()
    prod = f"{r.choice(('Aero', 'Volt', 'Terra', 'Nova', 'Flux'))} {r.choice(('Pump', 'Drive', 'Sensor', 'Router', 'Heater', 'Lamp'))} {r.randint(100, 990)}"
    specs = [
        ("Weight", f"{r.uniform(0.2, 40):.1f} kg"),
        ("Power", f"{r.randint(5, 2400)} W"),
        ("Voltage", f"{r.choice((12, 24, 110, 230))} V"),
        ("Dimensions", f"{r.randint(50, 900)} x {r.randint(50, 900)} x {r.randint(20, 400)} mm"),
        ("Operating temperature", f"-{r.randint(5, 40)} to {r.randint(40, 85)} °C"),
        ("Protection class", f"IP{r.choice((44, 54, 65, 67))}"),
        ("Noise level", f"{r.randint(20, 80)} dB"),
    ]
    specs = c.sample(specs, r.randint(4, 7))
    for n, v in c.sample(specs, 3):
        sh.ask(
            r.choice(
                (
                    f"What is the {n.lower()}?",
                    f"What {n.lower()} does the {prod} have?",
                    f"Which {n.lower()} is specified?",
                )
            ),
            v,
            "table_cell",
            n.lower().replace(" ", "_"),
        )
    price = round(r.uniform(20, 3000), 2)
    meta = [
        sh.fld("model", c.ident(prod.split()[0][:2].upper(), 5), vtype="id"),
        sh.fld("price", c.money(price), c.amount_answers(price), "money", optional=0.4),
        sh.fld("warranty", f"{r.randint(1, 5)} years", optional=0.3),
        sh.fld("website", f"www.{c.domain(maker)}", entity="website", optional=0.4),
    ]
    sh.generic("title", [prod], [prod])
    sh.ask("Who makes the product?", maker, "lookup", "manufacturer")
    sh.missing("due_date", "date")
    return sh.page(
        arrangement,
        {
            "head": f"<h1>{e(prod)}</h1><div>{e(maker)}</div>",
            "meta": sh.kv(meta),
            "table": sh.tbl(["Specification", "Value"], [list(x) for x in specs]),
            "body": sh.para(prose(c, 3)),
        },
        header="Product data sheet",
        footer=maker,
    )


def report_table(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    org = c.company()
    regions = c.cities(r.randint(4, 6))
    years = [2020 + i for i in range(r.randint(2, 4))]
    vals = {(g, y): r.randint(100, 9999) for g in regions for y in years}
    rows = [[g] + [f"{vals[g, y]:,}" for y in years] for g in regions]
    g, y = r.choice(regions), r.choice(years)
    metric = r.choice(("Sales (units)", "Visitors", "Orders", "Members", "Incidents"))
    sh.ask(
        f"What was the {metric.split()[0].lower()} figure for {g} in {y}?",
        [f"{vals[g, y]:,}", str(vals[g, y])],
        "table_cell",
        "value",
    )
    best = max(regions, key=lambda x: vals[x, years[-1]])
    sh.ask(f"Which city had the highest value in {years[-1]}?", best, "relation", "max_row")
    title = f"{r.choice(('Quarterly', 'Annual', 'Regional'))} {metric.split()[0]} Report"
    sh.generic("title", title)
    pct = r.randint(2, 35)
    sh.ask("By what percentage did the total grow?", [f"{pct}%", str(pct)], "prose_value", "growth", [str(pct)])
    author = c.person()
    meta = [
        sh.fld("report_number", c.ident("R", 5), vtype="id", optional=0.3),
        sh.fld("prepared_by", author, vtype="person", generic="author"),
        sh.fld("date", c.fmt_date(c.date(dt.date(years[-1] + 1, 1, 1), 200)), vtype="date", generic="date"),
    ]
    sh.missing("iban", "id")
    body = sh.para(f"Overall, the total grew by {pct}% over the period. {prose(c, 3)}")
    return sh.page(
        arrangement,
        {
            "head": f"<h1>{e(title)}</h1><div>{e(org)}</div>",
            "meta": sh.kv(meta),
            "table": f"<div class='small'>Table 1. {e(metric)} by city</div>"
            + sh.tbl(["City"] + [str(y) for y in years], rows, set(range(1, 5))),
            "body": body,
        },
        header=org,
        footer="Confidential",
    )
