"""Invoices, receipts and account statements: many amounts and dates of the same type in different roles."""

from __future__ import annotations

import datetime as dt

from .common import MONO, Ctx, Document, address_lines, base_css, e, field_rows, label, number, page_html, q, table

PRODUCTS = (
    "Consulting services",
    "Website maintenance",
    "Laser printer toner",
    "Office chairs",
    "Cloud storage plan",
    "Network switch",
    "Annual software licence",
    "Training workshop",
    "Translation of manuals",
    "Graphic design",
    "Server rack rental",
    "Data backup service",
    "Ergonomic keyboards",
    "Desk lamps",
    "Project management",
    "Security audit",
    "Copy paper (box)",
    "USB-C docking station",
    "Catering",
    "Travel expenses",
    "Monitor stands",
    "Wireless headsets",
    "Photography session",
    "Legal review",
)
GROCERIES = (
    "Whole milk 1L",
    "Sourdough bread",
    "Free-range eggs",
    "Bananas",
    "Cheddar cheese",
    "Olive oil",
    "Ground coffee",
    "Orange juice",
    "Basmati rice",
    "Tomatoes",
    "Greek yoghurt",
    "Pasta fusilli",
    "Apples",
    "Butter",
    "Dark chocolate",
    "Mineral water",
    "Chicken breast",
    "Spinach",
)
CAFE = (
    "Flat white",
    "Cappuccino",
    "Espresso",
    "Croissant",
    "Blueberry muffin",
    "Club sandwich",
    "Green tea",
    "Hot chocolate",
    "Bagel with cream cheese",
    "Avocado toast",
    "Iced latte",
    "Carrot cake",
)
SHOPS = ("Market", "Grocers", "Food Hall", "Supermarket", "Corner Store")


def _items(ctx: Ctx, names, n: int, qty_max: int, price_lo: float, price_hi: float) -> list[tuple[str, int, float]]:
    """``n`` lines of distinct items, quantities and unit prices, with distinct line totals."""
    while True:
        rows = [
            (name, ctx.rng.randint(1, qty_max), round(ctx.rng.uniform(price_lo, price_hi), 2))
            for name in ctx.sample(names, n)
        ]
        totals = [round(a * p, 2) for _, a, p in rows]
        if len(set(totals)) == n and len({a for _, a, _ in rows}) >= 2:
            return rows


def _invoice_data(ctx: Ctx) -> dict:
    vendor, customer = ctx.companies(2)
    contact = ctx.person()
    vcity, ccity = ctx.cities(2)
    issued = ctx.date()
    due = issued + dt.timedelta(days=ctx.pick((14, 21, 30, 45, 60)))
    items = _items(ctx, PRODUCTS, ctx.rng.randint(3, 5), 12, 15, 900)
    subtotal = round(sum(a * p for _, a, p in items), 2)
    rate = ctx.pick((5, 7, 10, 19, 20, 21, 22))
    tax = round(subtotal * rate / 100, 2)
    return {
        "vendor": vendor,
        "customer": customer,
        "contact": contact,
        "vcity": vcity,
        "ccity": ccity,
        "vaddr": address_lines(ctx, vendor, city=vcity)[0][1:],
        "caddr": address_lines(ctx, contact, customer, ccity)[0],
        "number": ctx.ident(ctx.pick(("INV", "RE", "F", "INV-" + str(issued.year))), ctx.rng.randint(4, 6)),
        "po": ctx.ident("PO", 5),
        "issued": issued,
        "due": due,
        "items": items,
        "subtotal": subtotal,
        "rate": rate,
        "tax": tax,
        "total": round(subtotal + tax, 2),
        "iban": ctx.fake.iban(),
        "vphone": ctx.phone(),
        "vemail": ctx.email(ctx.person(), ctx.domain(vendor)),
    }


def _invoice_questions(ctx: Ctx, d: dict) -> list:
    m, r = ctx.money, ctx.rng
    items = d["items"]
    a, b = ctx.sample(items, 2)
    qs = [
        q(
            r.choice(
                (
                    "What is the due date of this invoice?",
                    "By when must the invoice be paid?",
                    "What is the payment due date?",
                )
            ),
            ctx.fmt_date(d["due"]),
            "role",
        ),
        q(
            r.choice(("What is the invoice date?", "On what date was the invoice issued?")),
            ctx.fmt_date(d["issued"]),
            "role",
        ),
        q(
            r.choice(
                (
                    "What is the total amount due?",
                    "What is the grand total of the invoice?",
                    "How much has to be paid in total?",
                )
            ),
            ctx.amount_answers(d["total"]),
            "role",
        ),
        q(
            r.choice(("What is the subtotal before tax?", "What is the net amount of the invoice?")),
            ctx.amount_answers(d["subtotal"]),
            "role",
        ),
        q(r.choice(("How much tax is charged?", "What is the VAT amount?")), ctx.amount_answers(d["tax"]), "role"),
        q(
            r.choice(("Who is the customer?", "To which company is the invoice addressed?", "Who is billed?")),
            d["customer"],
            "role",
        ),
        q(
            r.choice(("Which company issued this invoice?", "Who is the vendor?", "Who is the invoice from?")),
            d["vendor"],
            "role",
        ),
        q(
            r.choice((f"In which city is {d['customer']} located?", "In which city is the customer based?")),
            d["ccity"],
            "relation",
        ),
        q(
            f"What is the unit price of {a[0].lower() if r.random() < 0.5 else a[0]}?",
            ctx.amount_answers(a[2]),
            "lookup",
            evidence=[m(a[2])],
        ),
        q(f"How many units of {a[0]} were invoiced?", str(a[1]), "lookup"),
        q(f"Which item has a line total of {m(round(b[1] * b[2], 2))}?", b[0], "reverse_lookup"),
        q(r.choice(("What is the invoice number?", "Which invoice number is given?")), d["number"], "entity_type"),
        q(
            f"What is the combined quantity of {a[0]} and {b[0]}?",
            str(a[1] + b[1]),
            "arithmetic",
            "table",
            evidence=[a[0], b[0]],
        ),
        q(
            "What is the tax rate?",
            [f"{d['rate']}%", f"{d['rate']} %", str(d["rate"])],
            "entity_type",
            evidence=[str(d["rate"])],
        ),
        q("What is the vendor's e-mail address?", d["vemail"], "entity_type"),
    ]
    return qs


def invoice_classic(ctx: Ctx) -> Document:
    """Letterhead on one side, bill-to block, ruled item table, totals block on the right, bank details."""
    d = _invoice_data(ctx)
    s = ctx.style
    m = ctx.money
    head_side = "left" if s.align == "left" else "right"
    rows = [[n, str(a), m(p), m(round(a * p, 2))] for n, a, p in d["items"]]
    totals = [("Subtotal", m(d["subtotal"])), (f"VAT {d['rate']}%", m(d["tax"])), ("Total due", m(d["total"]))]
    tot = "".join(
        f"<tr{' class=grand' if i == 2 else ''}><th>{label(ctx, k)}</th><td>{e(v)}</td></tr>"
        for i, (k, v) in enumerate(totals)
    )
    meta = field_rows(
        ctx,
        [
            ("Invoice no.", d["number"]),
            ("Invoice date", ctx.fmt_date(d["issued"])),
            ("Due date", ctx.fmt_date(d["due"])),
            ("Order ref.", d["po"]),
        ],
    )
    css = (
        base_css(ctx)
        + f"""
.lh {{ text-align: {head_side}; border-bottom: 3px solid {s.accent}; padding-bottom: 8px; margin-bottom: 18px; }}
.lh .name {{ font-size: 1.9em; font-weight: 700; color: {s.accent}; font-family: '{s.heading_font}'; }}
.lh .small {{ font-size: 0.85em; color: #555; }}
.top {{ display: flex; justify-content: space-between; gap: 30px; margin-bottom: 18px; }}
.billto .t {{ font-weight: 700; color: {s.accent}; margin-bottom: 3px; }}
.totals {{ margin-left: auto; margin-top: 10px; }}
.totals th {{ text-align: right; padding: 3px 14px; font-weight: 500; }}
.totals td {{ text-align: right; padding: 3px 0; min-width: 110px; }}
.totals tr.grand th, .totals tr.grand td {{ font-weight: 800; border-top: 2px solid #333; font-size: 1.1em; }}
.bank {{ margin-top: 40px; font-size: 0.9em; color: #333; }}
"""
    )
    body = f"""<div class="page">
<div class="lh"><div class="name">{e(d["vendor"])}</div>
<div class="small">{e(" · ".join(d["vaddr"]))}<br>Tel. {e(d["vphone"])} · {e(d["vemail"])}</div></div>
<h1>{label(ctx, "Invoice")}</h1>
<div class="top"><div class="billto"><div class="t">{label(ctx, "Bill to")}</div>{"<br>".join(e(x) for x in d["caddr"])}</div>
<div>{meta}</div></div>
{table(ctx, ["Description", "Qty", "Unit price", "Amount"], rows, {1, 2, 3})}
<table class="totals">{tot}</table>
<div class="bank">Please transfer the total amount by the due date to IBAN {e(d["iban"])}, quoting the invoice
number. Thank you for your business.</div></div>"""
    return Document(page_html(css, body, "invoice"), _invoice_questions(ctx, d))


def invoice_modern(ctx: Ctx) -> Document:
    """Coloured header band, sender and customer side by side with labels above, borderless item list with
    quantity written ``a x b``, totals in a tinted box, payment terms in prose."""
    d = _invoice_data(ctx)
    s = ctx.style
    m = ctx.money
    rows = [[f"{a} x {m(p)}", n, m(round(a * p, 2))] for n, a, p in d["items"]]
    css = (
        base_css(ctx, margin="0")
        + f"""
.band {{ background: {s.accent}; color: #fff; padding: 22px 17mm; display: flex; justify-content: space-between; }}
.band .big {{ font-size: 2.2em; font-weight: 800; letter-spacing: 0.08em; }}
.inner {{ padding: 14px 17mm; }}
.parties {{ display: grid; grid-template-columns: 1fr 1fr 1fr; gap: 18px; margin: 10px 0 18px 0; }}
.parties .l {{ font-size: 0.78em; text-transform: uppercase; color: {s.accent}; letter-spacing: 0.06em; }}
.box {{ background: #f1f3f6; padding: 10px 16px; width: 46%; margin-left: auto; }}
.box div {{ display: flex; justify-content: space-between; padding: 2px 0; }}
.box .g {{ font-weight: 800; font-size: 1.15em; border-top: 1px solid #999; margin-top: 4px; padding-top: 5px; }}
.terms {{ margin-top: 30px; font-size: 0.92em; }}
"""
    )
    body = f"""<div class="band"><div><div class="big">{label(ctx, "INVOICE")}</div>No. {e(d["number"])}</div>
<div style="text-align:right"><b>{e(d["vendor"])}</b><br>{"<br>".join(e(x) for x in d["vaddr"])}</div></div>
<div class="inner"><div class="parties">
<div><div class="l">Billed to</div>{"<br>".join(e(x) for x in d["caddr"])}</div>
<div><div class="l">Issued</div>{e(ctx.fmt_date(d["issued"]))}<div class="l" style="margin-top:8px">Payment due</div>{e(ctx.fmt_date(d["due"]))}</div>
<div><div class="l">Your reference</div>{e(d["po"])}<div class="l" style="margin-top:8px">Contact</div>{e(d["vemail"])}</div></div>
{table(ctx, ["Quantity", "Item", "Line total"], rows, {2}, rules="none" if s.rules == "grid" else s.rules)}
<div class="box"><div><span>Subtotal</span><span>{e(m(d["subtotal"]))}</span></div>
<div><span>Tax ({d["rate"]}%)</span><span>{e(m(d["tax"]))}</span></div>
<div class="g"><span>Amount due</span><span>{e(m(d["total"]))}</span></div></div>
<div class="terms">Payment terms: {(d["due"] - d["issued"]).days} days net. Bank: IBAN {e(d["iban"])}.
Late payments may incur interest at the statutory rate.</div></div>"""
    qs = _invoice_questions(ctx, d)
    n, a, p = ctx.pick(d["items"])
    qs.append(
        q(
            f"What quantity and unit price are given for {n}?",
            [f"{a} x {m(p)}", f"{a} x {m(p, symbol=False)}"],
            "multi_token",
        )
    )
    qs.append(
        q(
            "How many days are the payment terms?",
            str((d["due"] - d["issued"]).days),
            "prose_value",
            evidence=[f"{(d['due'] - d['issued']).days} days net"],
        )
    )
    return Document(page_html(css, body, "invoice"), qs)


def _receipt_data(ctx: Ctx, names, price_hi: float) -> dict:
    items = _items(ctx, names, ctx.rng.randint(4, 7), 3, 0.8, price_hi)
    subtotal = round(sum(a * p for _, a, p in items), 2)
    rate = ctx.pick((5, 7, 8, 10, 20))
    tax = round(subtotal * rate / (100 + rate), 2)  # prices include tax, as on most till receipts
    when = ctx.date()
    while True:
        card = f"{ctx.rng.randrange(10000):04d}"
        if card not in number(subtotal) and card[0] != "0":
            break
    return {
        "items": items,
        "subtotal": subtotal,
        "rate": rate,
        "tax": tax,
        "when": when,
        "card": card,
        "time": ctx.time(ctx.rng.randint(7 * 60, 21 * 60)),
        "receipt": ctx.ident("", 8),
        "cashier": ctx.person().split()[0],
        "city": ctx.city(),
        "phone": ctx.phone(),
    }


def _receipt_questions(ctx: Ctx, d: dict, total: float) -> list:
    r, m = ctx.rng, ctx.money
    a, b = ctx.sample(d["items"], 2)
    return [
        q(
            r.choice(("What is the total amount?", "How much was paid in total?", "What is the receipt total?")),
            ctx.amount_answers(total),
            "role",
        ),
        q(
            r.choice(("What are the last four digits of the card?", "Which card number digits are printed?")),
            d["card"],
            "role",
        ),
        q(
            r.choice(("How much tax is included?", "What is the tax amount on the receipt?")),
            ctx.amount_answers(d["tax"], symbol=False),
            "role",
        ),
        q(
            r.choice(("On what date was the purchase made?", "What is the date of the receipt?")),
            ctx.fmt_date(d["when"]),
            "entity_type",
        ),
        q("At what time was the purchase made?", d["time"], "entity_type"),
        q(f"How much did {a[0]} cost?", ctx.amount_answers(round(a[1] * a[2], 2), symbol=False), "lookup"),
        q(f"Which item cost {m(round(b[1] * b[2], 2), symbol=False)}?", b[0], "reverse_lookup"),
        q(
            f"What is the total price of {a[0]} and {b[0]} together?",
            [number(round(a[1] * a[2] + b[1] * b[2], 2)), m(round(a[1] * a[2] + b[1] * b[2], 2))],
            "arithmetic",
            "table",
            evidence=[a[0], b[0]],
        ),
        q("Who was the cashier?", d["cashier"], "entity_type"),
    ]


def receipt_till(ctx: Ctx) -> Document:
    """A narrow supermarket till receipt in a monospaced font, prices right-aligned, tax included, card slip."""
    shop = f"{ctx.fake.last_name()} {ctx.pick(SHOPS)}"
    d = _receipt_data(ctx, GROCERIES, 9.5)
    m = ctx.money
    total = d["subtotal"]
    lines = "".join(
        f"<tr><td>{e(n)}{f' {a} @ {m(p, symbol=False)}' if a > 1 else ''}</td>"
        f"<td class=r>{e(m(round(a * p, 2), symbol=False))}</td></tr>"
        for n, a, p in d["items"]
    )
    css = (
        base_css(ctx, "80mm 210mm", "7mm 6mm")
        + f"""
body {{ font-family: '{ctx.pick(MONO)}'; font-size: 13px; }}
.c {{ text-align: center; }} .r {{ text-align: right; }}
table {{ width: 100%; }} td {{ padding: 1px 0; vertical-align: top; }}
.sep {{ border-top: 1px dashed #333; margin: 6px 0; }}
.big td {{ font-size: 1.25em; font-weight: 700; }}
"""
    )
    body = f"""<div class="page"><div class="c"><b style="font-size:1.3em">{e(shop.upper())}</b><br>{e(ctx.street())}<br>
{e(d["city"])}<br>Tel {e(d["phone"])}</div><div class="sep"></div>
<table>{lines}</table><div class="sep"></div>
<table class="big"><tr><td>TOTAL</td><td class=r>{e(m(total))}</td></tr></table>
<table><tr><td>incl. VAT {d["rate"]}%</td><td class=r>{e(m(d["tax"], symbol=False))}</td></tr>
<tr><td>CARD ************{d["card"]}</td><td class=r>{e(m(total, symbol=False))}</td></tr></table>
<div class="sep"></div><div>{e(ctx.fmt_date(d["when"]))} {e(d["time"])}<br>Receipt {e(d["receipt"])}<br>
Cashier: {e(d["cashier"])}</div><div class="sep"></div><div class="c">Thank you for shopping with us!</div></div>"""
    qs = _receipt_questions(ctx, d, total)
    qs.append(q(r"Which shop issued this receipt?", shop.upper(), "entity_type"))
    return Document(page_html(css, body, "receipt"), qs, "80mm 210mm")


def receipt_cafe(ctx: Ctx) -> Document:
    """A café bill on a small page, proportional font, subtotal + service + tip + total, card payment line."""
    d = _receipt_data(ctx, CAFE, 14.0)
    m = ctx.money
    tip = round(ctx.rng.choice((1.0, 1.5, 2.0, 2.5, 3.0, 4.0)), 2)
    total = round(d["subtotal"] + tip, 2)
    name = f"Café {ctx.fake.last_name()}" if ctx.rng.random() < 0.5 else f"The {ctx.fake.last_name()} Kitchen"
    table_no = ctx.rng.randint(2, 40)
    guests = ctx.rng.randint(1, 6)
    lines = "".join(
        f"<tr><td>{a}</td><td>{e(n)}</td><td class=r>{e(m(round(a * p, 2), symbol=False))}</td></tr>"
        for n, a, p in d["items"]
    )
    css = (
        base_css(ctx, "100mm 190mm", "8mm 8mm")
        + """
.c { text-align: center; } .r { text-align: right; }
h2 { text-align: center; font-size: 1.6em; }
table { width: 100%; } td { padding: 2px 2px; }
.tot td { border-top: 1px solid #777; }
.grand td { font-weight: 800; font-size: 1.15em; border-top: 2px solid #000; }
.meta { display: flex; justify-content: space-between; font-size: 0.9em; margin: 8px 0; }
"""
    )
    body = f"""<div class="page"><h2>{e(name)}</h2><div class="c">{e(ctx.street())}, {e(d["city"])}</div>
<div class="meta"><span>Table {table_no}</span><span>Guests: {guests}</span><span>{e(ctx.fmt_date(d["when"]))}</span></div>
<div class="meta"><span>Server: {e(d["cashier"])}</span><span>{e(d["time"])}</span><span>Bill #{e(d["receipt"][:5])}</span></div>
<table>{lines}<tr class="tot"><td></td><td>Subtotal</td><td class=r>{e(m(d["subtotal"], symbol=False))}</td></tr>
<tr><td></td><td>of which tax ({d["rate"]}%)</td><td class=r>{e(m(d["tax"], symbol=False))}</td></tr>
<tr><td></td><td>Tip</td><td class=r>{e(m(tip, symbol=False))}</td></tr>
<tr class="grand"><td></td><td>Total</td><td class=r>{e(m(total))}</td></tr></table>
<p>Paid by card ending in {d["card"]}.<br>Approval code {e(ctx.ident("", 6))}</p>
<div class="c">Service is not included. We hope to see you again soon.</div></div>"""
    qs = _receipt_questions(ctx, d, total)
    qs.append(q("How much was the tip?", ctx.amount_answers(tip, symbol=False), "role"))
    qs.append(q("At which table were the guests seated?", str(table_no), "entity_type", evidence=[f"Table {table_no}"]))
    qs.append(q("What is the subtotal?", ctx.amount_answers(d["subtotal"], symbol=False), "role"))
    return Document(page_html(css, body, "receipt"), qs, "100mm 190mm")


TRANSACTIONS = (
    "Salary",
    "Rent",
    "Electricity",
    "Supermarket",
    "Mobile phone",
    "Insurance premium",
    "Pharmacy",
    "Fuel station",
    "Online shop",
    "Restaurant",
    "Cash withdrawal",
    "Gym membership",
    "Train tickets",
    "Interest",
    "Transfer to savings",
    "Book store",
    "Water bill",
    "Streaming service",
    "Hardware store",
)


def _transactions(ctx: Ctx, start: dt.date, opening: float, n: int) -> list[tuple[dt.date, str, float, float]]:
    """Dated transactions (credits positive) with the running balance, distinct descriptions and amounts."""
    names = ctx.sample(TRANSACTIONS, n)
    day = start
    balance = opening
    out = []
    used: set[float] = set()
    for name in names:
        day = day + dt.timedelta(days=ctx.rng.randint(1, 3))
        while True:
            amount = (
                round(ctx.rng.uniform(1800, 4200), 2)
                if name in ("Salary",)
                else (round(ctx.rng.uniform(5, 120), 2) if name == "Interest" else -round(ctx.rng.uniform(6, 950), 2))
            )
            if amount not in used:
                used.add(amount)
                break
        balance = round(balance + amount, 2)
        out.append((day, name, amount, balance))
    return out


def _statement_questions(ctx: Ctx, tx, opening: float, holder: str, account: str, bank: str) -> list:
    r, m = ctx.rng, ctx.money
    (d1, n1, a1, b1), (d2, n2, a2, b2) = ctx.sample(tx, 2)
    closing = tx[-1][3]
    debits = [t for t in tx if t[2] < 0]
    biggest = min(debits, key=lambda t: t[2])
    return [
        q(
            r.choice(("What is the closing balance?", "What is the balance at the end of the period?")),
            ctx.amount_answers(closing),
            "role",
        ),
        q(
            r.choice(("What is the opening balance?", "What was the balance at the start of the period?")),
            ctx.amount_answers(opening),
            "role",
        ),
        q(r.choice(("Who is the account holder?", "In whose name is the account?")), holder, "role"),
        q("What is the account number?", account, "entity_type"),
        q("Which bank issued this statement?", bank, "entity_type"),
        q(
            f"What was the amount of the {n1} transaction?",
            [m(abs(a1), symbol=False), m(a1, symbol=False), number(abs(a1))],
            "lookup",
            evidence=[m(abs(a1), symbol=False)],
        ),
        q(f"On which date was the {n2} transaction booked?", ctx.fmt_date(d2, ctx.tx_format), "lookup"),
        q(f"What was the balance after the {n1} transaction?", ctx.amount_answers(b1, symbol=False), "lookup"),
        q(f"Which transaction has an amount of {m(abs(a2), symbol=False)}?", n2, "reverse_lookup"),
        q(
            "Which transaction was the largest debit on the statement?",
            biggest[1],
            "arithmetic",
            "table",
            evidence=[biggest[1]],
        ),
        q(
            f"Is the {n1} amount larger than the {n2} amount? Answer yes or no.",
            "yes" if abs(a1) > abs(a2) else "no",
            "arithmetic",
            "table",
            evidence=[n1, n2],
        ),
    ]


def statement_bank(ctx: Ctx) -> Document:
    """A current-account statement: bank letterhead, holder address, account box, transactions with a
    running balance, opening / closing balance lines."""
    bank = f"{ctx.fake.last_name()} {ctx.pick(('Bank', 'Savings Bank', 'Credit Union', 'Bancorp', 'Sparkasse'))}"
    holder = ctx.person()
    addr, _ = address_lines(ctx, holder)
    start = ctx.date()
    opening = round(ctx.rng.uniform(300, 9000), 2)
    ctx.tx_format = ctx.pick(("%d.%m.%Y", "%d/%m", "%d %b", "%Y-%m-%d"))
    tx = _transactions(ctx, start, opening, ctx.rng.randint(7, 10))
    end = tx[-1][0] + dt.timedelta(days=2)
    account = ctx.ident("", 10, "")
    m = ctx.money
    two_cols = ctx.rng.random() < 0.5
    if two_cols:
        header = ["Date", "Description", "Debit", "Credit", "Balance"]
        rows = [
            [
                ctx.fmt_date(d, ctx.tx_format),
                n,
                m(-a, symbol=False) if a < 0 else "",
                m(a, symbol=False) if a > 0 else "",
                m(b, symbol=False),
            ]
            for d, n, a, b in tx
        ]
        numeric = {2, 3, 4}
    else:
        header = ["Date", "Details", "Amount", "Balance"]
        rows = [
            [ctx.fmt_date(d, ctx.tx_format), n, ("-" if a < 0 else "+") + m(abs(a), symbol=False), m(b, symbol=False)]
            for d, n, a, b in tx
        ]
        numeric = {2, 3}
    s = ctx.style
    css = (
        base_css(ctx)
        + f"""
.hd {{ display: flex; justify-content: space-between; align-items: flex-start; margin-bottom: 26px; }}
.logo {{ font-size: 1.7em; font-weight: 800; color: {s.accent}; font-family: '{s.heading_font}'; }}
.acct {{ border: 1px solid {s.accent}; padding: 8px 12px; min-width: 45%; }}
.bal {{ display: flex; justify-content: space-between; margin: 6px 0; font-weight: 600; }}
"""
    )
    body = f"""<div class="page"><div class="hd"><div><div class="logo">{e(bank)}</div>{e(ctx.street())}<br>
{e(ctx.city())}</div><div style="text-align:right">Customer service<br>{e(ctx.phone())}</div></div>
<div class="hd"><div>{"<br>".join(e(x) for x in addr)}</div><div class="acct"><h3>{label(ctx, "Account statement")}</h3>
{
        field_rows(
            ctx,
            [
                ("Account holder", holder),
                ("Account number", account),
                ("IBAN", ctx.fake.iban()),
                ("Period", f"{ctx.fmt_date(start)} - {ctx.fmt_date(end)}"),
            ],
        )
    }</div></div>
<div class="bal"><span>Opening balance</span><span>{e(m(opening))}</span></div>
{table(ctx, header, rows, numeric)}
<div class="bal"><span>Closing balance</span><span>{e(m(tx[-1][3]))}</span></div>
<p style="font-size:0.85em;color:#555">Please check this statement and report any discrepancy within 6 weeks.</p></div>"""
    qs = _statement_questions(ctx, tx, opening, holder, account, bank)
    qs.append(q("Within how many weeks must discrepancies be reported?", "6", "prose_value", evidence=["6 weeks"]))
    return Document(page_html(css, body, "statement"), qs)


def statement_card(ctx: Ctx) -> Document:
    """A credit-card statement: summary box (previous balance, payments, new balance, minimum payment, due
    date, credit limit) beside the cardholder block, then the transactions without a running balance."""
    bank = f"{ctx.fake.last_name()} {ctx.pick(('Card Services', 'Visa', 'Mastercard', 'Credit'))}"
    holder = ctx.person()
    addr, city = address_lines(ctx, holder)
    start = ctx.date()
    ctx.tx_format = ctx.pick(("%d %b", "%m/%d", "%d.%m."))
    tx = [t for t in _transactions(ctx, start, 0.0, 9) if t[1] not in ("Salary", "Interest")][:7]
    spent = round(-sum(a for _, _, a, _ in tx), 2)
    previous = round(ctx.rng.uniform(100, 2500), 2)
    payment = round(ctx.rng.uniform(50, previous), 2)
    new = round(previous - payment + spent, 2)
    minimum = round(max(25.0, new * 0.03), 2)
    due = tx[-1][0] + dt.timedelta(days=ctx.rng.randint(18, 25))
    closing_date = tx[-1][0] + dt.timedelta(days=1)
    limit = ctx.pick((3000, 5000, 7500, 10000, 12000))
    last4 = f"{ctx.rng.randrange(1000, 10000)}"
    m = ctx.money
    s = ctx.style
    rows = [[ctx.fmt_date(d, ctx.tx_format), n, m(-a, symbol=False)] for d, n, a, _ in tx]
    summary = [
        ("Previous balance", m(previous)),
        ("Payments received", "-" + m(payment)),
        ("New purchases", m(spent)),
        ("New balance", m(new)),
        ("Minimum payment", m(minimum)),
        ("Payment due date", ctx.fmt_date(due)),
        ("Credit limit", m(limit)),
    ]
    css = (
        base_css(ctx)
        + f"""
.top {{ display: grid; grid-template-columns: 1.1fr 1fr; gap: 24px; margin: 14px 0 20px 0; }}
.sum {{ background: #f4f1ea; border-left: 5px solid {s.accent}; padding: 10px 14px; }}
.sum table {{ width: 100%; }} .sum td {{ text-align: right; font-weight: 600; }}
.logo {{ font-size: 1.6em; font-weight: 800; color: {s.accent}; }}
"""
    )
    body = f"""<div class="page"><div class="logo">{e(bank)}</div><div>Card number **** **** **** {last4}</div>
<div class="top"><div>{"<br>".join(e(x) for x in addr)}<p>Statement date: {e(ctx.fmt_date(closing_date))}</p></div>
<div class="sum"><h3>{label(ctx, "Summary")}</h3>{field_rows(ctx, summary)}</div></div>
<h3>{label(ctx, "Transactions")}</h3>{table(ctx, ["Date", "Merchant", "Amount"], rows, {2})}
<p>If you pay the new balance in full by the payment due date, no interest is charged on purchases.
The interest rate on purchases is {ctx.rng.randint(14, 29)}.{ctx.rng.randint(0, 9)}% per year.</p></div>"""
    r = ctx.rng
    (d1, n1, a1, _), (d2, n2, a2, _) = ctx.sample(tx, 2)
    qs = [
        q(r.choice(("When is the payment due?", "What is the payment due date?")), ctx.fmt_date(due), "role"),
        q("What is the statement date?", ctx.fmt_date(closing_date), "role"),
        q(r.choice(("What is the new balance?", "What is the total balance owed?")), ctx.amount_answers(new), "role"),
        q("What is the minimum payment?", ctx.amount_answers(minimum), "role"),
        q("What is the previous balance?", ctx.amount_answers(previous), "role"),
        q("What is the credit limit?", ctx.amount_answers(limit), "role"),
        q("What are the last four digits of the card number?", last4, "role"),
        q("Who is the cardholder?", holder, "role"),
        q(f"In which city does {holder} live?", city, "relation"),
        q(f"How much was spent at {n1}?", [m(-a1, symbol=False), number(-a1)], "lookup"),
        q(f"On which date was the {n2} purchase?", ctx.fmt_date(d2, ctx.tx_format), "lookup"),
        q(f"Which merchant charged {m(-a2, symbol=False)}?", n2, "reverse_lookup"),
        q(
            f"What is the total of the {n1} and {n2} charges?",
            [number(round(-a1 - a2, 2)), m(round(-a1 - a2, 2))],
            "arithmetic",
            "table",
            evidence=[n1, n2],
        ),
    ]
    return Document(page_html(css, body, "card statement"), qs)
