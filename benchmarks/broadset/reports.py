"""Report pages with charts (value labels, legends) and the data tables printed beside them."""

from __future__ import annotations

from . import charts
from .common import Ctx, Document, base_css, e, label, number, page_html, prose, q, table

REGIONS = ("North", "South", "East", "West", "Central", "Coastal", "Alpine", "Metro")
PRODUCTS = ("Hardware", "Software", "Services", "Training", "Support", "Licences", "Consulting")
SOURCES = ("Wind", "Solar", "Hydro", "Gas", "Coal", "Biomass", "Nuclear")


def report_chart(ctx: Ctx) -> Document:
    """A quarterly-report page: heading, prose with two figures, a grouped bar chart of two years with value
    labels and a legend, and the same numbers in a table beside it with a totals row."""
    s = ctx.style
    org = ctx.company()
    cats = ctx.sample(REGIONS, ctx.rng.randint(4, 5))
    y1 = ctx.rng.randint(2019, 2023)
    years = (str(y1), str(y1 + 1))
    while True:
        a = [round(ctx.rng.uniform(10, 95), 1) for _ in cats]
        b = [round(v * ctx.rng.uniform(0.7, 1.4), 1) for v in a]
        if len(set(a + b)) == 2 * len(cats) and max(b) < 140:
            break
    unit = ctx.pick(("million", "thousand units", "GWh"))
    colours = ctx.pick(charts.PALETTES)
    chart = charts.bar_chart(
        cats,
        [(years[0], a), (years[1], b)],
        colours,
        width=430,
        height=300,
        decimals=1,
        title=f"Sales by region ({unit})",
        font=s.font,
        horizontal=ctx.rng.random() < 0.3,
    )
    rows = [[c, f"{x:.1f}", f"{y:.1f}"] for c, x, y in zip(cats, a, b)]
    tot_a, tot_b = round(sum(a), 1), round(sum(b), 1)
    staff = ctx.rng.randint(40, 4000)
    growth = round(100 * (tot_b - tot_a) / tot_a, 1)
    side = ctx.rng.random() < 0.5
    tbl = table(ctx, ["Region", *years], rows, {1, 2}, foot=[["Total", f"{tot_a:.1f}", f"{tot_b:.1f}"]])
    layout = (
        f'<div style="display:flex;gap:8mm;align-items:flex-start"><div>{chart}</div><div style="flex:1">{tbl}</div></div>'
        if side
        else f"<div>{chart}</div>{tbl}"
    )
    css = (
        base_css(ctx)
        + f"""
.hdr {{ display: flex; justify-content: space-between; border-bottom: 1px solid {s.accent}; margin-bottom: 10px; font-size: 0.9em; }}
"""
    )
    body = f"""<div class="page"><div class="hdr"><span>{e(org)}</span><span>Annual report {years[1]}</span></div>
<h1>{label(ctx, "3. Regional performance")}</h1>
<p>Total sales reached {tot_b:.1f} {e(unit)} in {years[1]}, a change of {growth:+.1f}% on {years[0]}. The company
employed {staff:,} people at the end of the year. Figure 2 shows the sales of each region; Table 4 lists the
same figures.</p>{layout}<p>{e(prose(ctx, 4))}</p>
<p style="font-size:0.85em">Figures are unaudited and rounded to one decimal.</p></div>"""
    r = ctx.rng
    i, j = ctx.sample(range(len(cats)), 2)
    best = cats[b.index(max(b))]
    qs = [
        q(
            r.choice(
                (
                    f"What were the sales of {cats[i]} in {years[1]}?",
                    f"What value does the chart show for {cats[i]} in {years[1]}?",
                )
            ),
            f"{b[i]:.1f}",
            "chart",
            "chart",
        ),
        q(f"What were the sales of {cats[j]} in {years[0]}?", f"{a[j]:.1f}", "chart", "chart"),
        q(f"Which region had the highest sales in {years[1]}?", best, "chart", "chart"),
        q(
            f"By how much did the sales of {cats[i]} change from {years[0]} to {years[1]}?",
            [f"{b[i] - a[i]:.1f}", f"{abs(b[i] - a[i]):.1f}"],
            "chart",
            "chart",
            evidence=[f"{a[i]:.1f}", f"{b[i]:.1f}"],
        ),
        q(f"What is the total for {years[0]}?", f"{tot_a:.1f}", "lookup"),
        q(f"Which region had sales of {a[i]:.1f} in {years[0]}?", cats[i], "reverse_lookup"),
        q(
            f"What are the combined {years[1]} sales of {cats[i]} and {cats[j]}?",
            f"{b[i] + b[j]:.1f}",
            "arithmetic",
            "table",
            evidence=[cats[i], cats[j]],
        ),
        q(
            f"Were the {years[1]} sales of {cats[i]} higher than those of {cats[j]}? Answer yes or no.",
            "yes" if b[i] > b[j] else "no",
            "arithmetic",
            "table",
            evidence=[cats[i], cats[j]],
        ),
        q("How many people did the company employ at the end of the year?", [f"{staff:,}", str(staff)], "prose_value"),
        q(
            "By what percentage did total sales change?",
            [f"{growth:+.1f}%", f"{growth:.1f}%", f"{growth:.1f}"],
            "prose_value",
        ),
        q("Which company is this report from?", org, "entity_type"),
    ]
    return Document(page_html(css, body, "report"), qs)


def report_kpi(ctx: Ctx) -> Document:
    """A dashboard-like report page: KPI tiles, a line chart of two series over five years with labelled
    points, a pie chart with a percentage legend, and a short table."""
    s = ctx.style
    org = ctx.company()
    years = [str(y) for y in range(ctx.rng.randint(2017, 2020), 2026)][:5]
    names = ctx.sample(("Revenue", "Costs", "Orders", "Visitors", "Members", "Downloads"), 2)
    while True:
        s1 = [round(ctx.rng.uniform(20, 80), 1) for _ in years]
        s2 = [round(ctx.rng.uniform(10, 70), 1) for _ in years]
        if len(set(s1 + s2)) == 10:
            break
    colours = ctx.pick(charts.PALETTES)
    line = charts.line_chart(
        years,
        [(names[0], s1), (names[1], s2)],
        colours,
        width=400,
        height=270,
        title=f"{names[0]} and {names[1]} (millions)",
        font=s.font,
    )
    parts = ctx.sample(ctx.pick((PRODUCTS, SOURCES)), 4)
    shares = charts.shares(ctx.rng, 4)
    pie = charts.pie_chart(
        parts, shares, colours[2:] + colours[:2], size=220, title="Share of total", font=s.font, legend_right=False
    )
    kpis = [
        ("Customers", f"{ctx.rng.randint(1000, 90000):,}"),
        ("Satisfaction", f"{ctx.rng.randint(60, 98)}%"),
        ("Sites", str(ctx.rng.randint(3, 60))),
    ]
    tiles = "".join(
        f'<div class="tile"><div class="v">{e(v)}</div><div class="k">{label(ctx, k)}</div></div>' for k, v in kpis
    )
    team = ctx.people(3)
    roles = ("Chief Executive", "Finance Director", "Head of Operations")
    css = (
        base_css(ctx, margin="14mm 15mm")
        + f"""
.tiles {{ display: flex; gap: 12px; margin: 8px 0 14px 0; }}
.tile {{ flex: 1; background: {s.accent}; color: #fff; padding: 8px 12px; border-radius: 6px; }}
.tile .v {{ font-size: 1.6em; font-weight: 800; }} .tile .k {{ font-size: 0.85em; }}
.row {{ display: flex; gap: 6mm; align-items: flex-start; }}
"""
    )
    body = f"""<div class="page"><h1>{e(org)} — {label(ctx, "key figures")} {years[-1]}</h1><div class="tiles">{tiles}</div>
<div class="row"><div>{line}</div><div>{pie}</div></div>
<h3>{label(ctx, "Management")}</h3>{table(ctx, ["Name", "Role"], [[n, r] for n, r in zip(team, roles)], rules="rows")}
<p style="font-size:0.85em">{e(names[0])} and {e(names[1])} in millions; the pie chart shows the share of each
segment in {years[-1]}.</p><h3>{label(ctx, "Outlook")}</h3><p>{e(prose(ctx, 5))}</p></div>"""
    r = ctx.rng
    i, j = ctx.sample(range(5), 2)
    k = ctx.rng.randrange(4)
    top = parts[shares.index(max(shares))]
    kk, kv = ctx.pick(kpis)
    p = ctx.rng.randrange(3)
    qs = [
        q(f"What was the value of {names[0]} in {years[i]}?", f"{s1[i]:.1f}", "chart", "chart"),
        q(f"What was {names[1]} in {years[j]}?", f"{s2[j]:.1f}", "chart", "chart"),
        q(f"In which year was {names[0]} highest?", years[s1.index(max(s1))], "chart", "chart"),
        q(f"What share does {parts[k]} have in the pie chart?", [f"{shares[k]}%", str(shares[k])], "chart", "chart"),
        q("Which segment has the largest share?", top, "chart", "chart"),
        q(
            f"What is the difference between {names[0]} and {names[1]} in {years[i]}?",
            [number(abs(s1[i] - s2[i]), 1, ".", ",")],
            "chart",
            "chart",
            evidence=[f"{s1[i]:.1f}", f"{s2[i]:.1f}"],
        ),
        q(
            r.choice((f"What is the number of {kk.lower()}?", f"What figure is given for {kk.lower()}?")),
            kv,
            "lookup",
            evidence=[kv],
        ),
        q(f"Who is the {roles[p]}?", team[p], "lookup"),
        q(f"What is {team[(p + 1) % 3]}'s role?", roles[(p + 1) % 3], "reverse_lookup"),
        q("Which organisation's figures are shown?", org, "entity_type"),
    ]
    return Document(page_html(css, body, "report"), qs)
