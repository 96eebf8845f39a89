"""Money documents of the reader corpus: invoice, receipt, purchase order, bank statement, utility bill,
payslip, price list / menu and delivery note. Each builder prints seeded values through a :class:`Sheet`
(registering their questions) and returns the page laid out by the template's arrangement."""

from __future__ import annotations

import datetime as dt

from broadset.common import address_lines, e

from .base import Sheet

GOODS = (
    "Steel brackets",
    "Cable ties (100)",
    "Printer paper A4",
    "LED panel 60x60",
    "Safety gloves",
    "Hex bolts M8",
    "Wall plugs",
    "Extension lead",
    "Label printer",
    "Packing tape",
    "Shelf unit",
    "Foam insert",
    "Microfibre cloths",
    "Hand sanitiser 5L",
    "Drill bits set",
    "Padlock",
    "Storage crate",
    "Whiteboard markers",
    "Solar lamp",
    "Coffee beans 1kg",
    "Filter cartridges",
    "Step ladder",
    "Paint roller",
    "Desk organiser",
)
SERVICES = (
    "Installation labour",
    "Site survey",
    "Software support",
    "Data migration",
    "Staff training",
    "Hosting (monthly)",
    "Design review",
    "On-call service",
    "Copywriting",
    "Audit preparation",
)
FOOD = (
    "Tomato soup",
    "Caesar salad",
    "Grilled salmon",
    "Mushroom risotto",
    "Beef burger",
    "Margherita pizza",
    "Falafel wrap",
    "Chicken curry",
    "Lemon tart",
    "Cheesecake",
    "Sparkling water",
    "House lemonade",
    "Pad thai",
    "Veggie lasagne",
    "Fish and chips",
    "Tiramisu",
    "Iced tea",
    "Onion rings",
    "Garden salad",
)
COLS = {
    "desc": {
        "en": ("Description", "Item", "Article"),
        "de": ("Beschreibung", "Artikel"),
        "fr": ("Désignation", "Article"),
        "es": ("Descripción", "Artículo"),
    },
    "qty": {
        "en": ("Qty", "Quantity", "Units"),
        "de": ("Menge", "Anz."),
        "fr": ("Qté", "Quantité"),
        "es": ("Cant.", "Cantidad"),
    },
    "unit": {
        "en": ("Unit price", "Price", "Rate"),
        "de": ("Einzelpreis", "E-Preis"),
        "fr": ("Prix unitaire",),
        "es": ("Precio unitario",),
    },
    "amount": {
        "en": ("Amount", "Line total", "Total"),
        "de": ("Betrag", "Gesamt"),
        "fr": ("Montant",),
        "es": ("Importe",),
    },
}
TITLES = {
    "invoice": {
        "en": ("Invoice", "Tax Invoice", "INVOICE"),
        "de": ("Rechnung",),
        "fr": ("Facture",),
        "es": ("Factura",),
    },
    "po": {
        "en": ("Purchase Order", "PURCHASE ORDER", "Order"),
        "de": ("Bestellung",),
        "fr": ("Bon de commande",),
        "es": ("Orden de compra",),
    },
    "delivery": {
        "en": ("Delivery Note", "Packing Slip", "Dispatch Note"),
        "de": ("Lieferschein",),
        "fr": ("Bon de livraison",),
        "es": ("Albarán",),
    },
    "receipt": {
        "en": ("Receipt", "Sales receipt", "RECEIPT"),
        "de": ("Kassenbon", "Quittung"),
        "fr": ("Ticket de caisse", "Reçu"),
        "es": ("Ticket", "Recibo"),
    },
}


def word(sh: Sheet, table: dict, key: str) -> str:
    """One synonym of ``key`` in the sheet's language."""
    opts = table[key].get(sh.k.lang) or table[key]["en"]
    return sh.rng.choice(opts)


def items(sh: Sheet, names, n: int, qmax: int, lo: float, hi: float) -> list[tuple[str, int, float]]:
    """``n`` distinct items with quantities and unit prices whose line totals differ."""
    while True:
        rows = [(x, sh.rng.randint(1, qmax), round(sh.rng.uniform(lo, hi), 2)) for x in sh.ctx.sample(names, n)]
        if len({round(a * p, 2) for _, a, p in rows}) == n and len({p for _, _, p in rows}) == n:
            return rows


def item_table(sh: Sheet, rows, ask_qty: str = "ordered", prices: bool = True) -> str:
    """A table of items (description, quantity, unit price, line total) and its cell questions."""
    c = sh.ctx
    hdr = [word(sh, COLS, "desc"), word(sh, COLS, "qty")] + (
        [word(sh, COLS, "unit"), word(sh, COLS, "amount")] if prices else []
    )
    body = [[n, str(a)] + ([c.money(p, False), c.money(round(a * p, 2), False)] if prices else []) for n, a, p in rows]
    for n, a, p in c.sample(rows, min(2, len(rows))):
        name = n.lower() if sh.rng.random() < 0.4 else n
        sh.ask(
            sh.rng.choice(
                (
                    f"How many {name} were {ask_qty}?",
                    f"What quantity of {name} is listed?",
                    f"How many units of {name} are there?",
                )
            ),
            str(a),
            "table_cell",
            "quantity",
        )
        if prices:
            sh.ask(
                sh.rng.choice(
                    (
                        f"What is the unit price of {name}?",
                        f"How much does one {name} cost?",
                        f"What is the price per unit for {name}?",
                    )
                ),
                c.amount_answers(p, False),
                "table_cell",
                "unit_price",
            )
            sh.ask(
                f"What is the line total for {name}?",
                c.amount_answers(round(a * p, 2), False),
                "table_cell",
                "line_total",
            )
    return sh.tbl(hdr, body, numeric={1, 2, 3})


def party(sh: Sheet, org: str, person: str | None = None, role: str = "", contact: bool = False):
    """An address block (with a role caption) and the city it names."""
    lines, city = address_lines(sh.ctx, person or org, org if person else None)
    if contact:
        lines.append(sh.ctx.phone())
    cap = f'<div class="kl">{e(role)}</div>' if role else ""
    return cap + sh.lines(lines), city, lines


def totals(sh: Sheet, net: float, rate: int, opt_vat: float = 0.0, generic: bool = True):
    """Subtotal / VAT / total fields; returns the HTML and the total."""
    c = sh.ctx
    vat = round(net * rate / 100, 2)
    total = round(net + vat, 2)
    pairs = [
        sh.fld("subtotal", c.money(net), c.amount_answers(net), "money"),
        sh.fld(
            "vat",
            f"{rate}%: {c.money(vat)}" if sh.rng.random() < 0.3 else c.money(vat),
            c.amount_answers(vat),
            "money",
            optional=opt_vat,
        ),
        sh.fld("total", c.money(total), c.amount_answers(total), "money", generic="total" if generic else None),
    ]
    if pairs[1] is None:
        total = net
        pairs[2] = (pairs[2][0], c.money(net))
        for q in sh.pool:
            if q.field == "total":
                q.answers = c.amount_answers(net)
    if pairs[1] and sh.rng.random() < 0.5:
        sh.ask(
            sh.rng.choice(("How much is the VAT?", "How much tax is charged?")),
            c.amount_answers(vat),
            "lookup",
            "vat",
            evidence=[c.money(vat)],
        )
    return sh.kv(pairs, "right" if sh.rng.random() < 0.5 else None), total


def _trade(sh: Sheet, title_key: str, number_key: str, names, arrangement: str):
    """Invoice, purchase order and delivery note share this body: two parties, a reference block, items."""
    c, r = sh.ctx, sh.rng
    seller, buyer = c.companies(2)
    contact = c.person()
    issued = c.date()
    title = word(sh, TITLES, title_key)
    num = c.ident(r.choice(("INV", "PO", "DN", "A", str(issued.year))), r.randint(4, 7), r.choice(("-", "/", "")))
    roles = {"invoice": ("From", "Bill to"), "po": ("Vendor", "Ship to"), "delivery": ("Shipper", "Deliver to")}
    sblk, scity, _ = party(sh, seller, role=roles[title_key][0] if r.random() < 0.5 else "", contact=True)
    bblk, bcity, _ = party(sh, buyer, contact, role=roles[title_key][1])
    if title_key == "po":
        seller, buyer, scity, bcity = buyer, seller, bcity, scity  # the buyer issues a purchase order
    sh.generic("sender", seller)
    sh.ask(r.choice((f"In which city is {buyer} located?", f"Where is {buyer} based?")), bcity, "relation", "city")
    sh.ask(
        r.choice((f"In which city is {seller}?", f"Which city is {seller}'s address in?")), scity, "relation", "city"
    )
    sh.ask(
        r.choice(("Who is the contact person at the customer?", f"Who is the contact at {buyer}?")),
        contact,
        "relation",
        "contact",
    )
    sh.generic("addressee", [buyer, contact] if title_key != "po" else [seller])
    rows = items(sh, names, r.randint(3, 6), 15, 3, 700)
    meta = [
        sh.fld(number_key, num, vtype="id"),
        sh.fld("invoice_date" if title_key == "invoice" else "date", c.fmt_date(issued), vtype="date", generic="date"),
    ]
    if title_key == "invoice":
        meta.append(
            sh.fld(
                "due_date", c.fmt_date(issued + dt.timedelta(days=r.choice((14, 30, 45)))), vtype="date", optional=0.3
            )
        )
        meta.append(sh.fld("order_number", c.ident("PO", 5), vtype="id", optional=0.5))
    else:
        meta.append(
            sh.fld(
                "delivery_date", c.fmt_date(issued + dt.timedelta(days=r.randint(2, 20))), vtype="date", optional=0.3
            )
        )
    meta.append(sh.fld("customer_number", c.ident("", r.randint(5, 8)), vtype="id", optional=0.4))
    blocks = {
        "head": f"<h1>{e(title)}</h1><div class='small'>{e(seller)}</div>",
        "parties": sblk + bblk,
        "meta": sh.kv(meta),
    }
    if title_key == "delivery":
        blocks["table"] = item_table(sh, rows, "delivered", prices=False)
        wt = f"{r.randint(2, 400)}.{r.randint(0, 9)} kg"
        blocks["totals"] = sh.kv(
            [
                sh.fld("tracking_number", c.ident(r.choice(("1Z", "JD", "TRK")), 10, ""), vtype="id", optional=0.3),
                sh.fld("weight", wt, [wt.replace(" ", "")]),
            ]
        )
        n_parcels = r.randint(2, 9)
        blocks["body"] = sh.para(
            f"The goods were packed in {n_parcels} parcels. Please check the delivery "
            "and report any damage within 48 hours."
        )
        sh.ask("In how many parcels were the goods packed?", str(n_parcels), "prose_value", "parcels")
        sh.missing("total", "money")
    else:
        blocks["table"] = item_table(sh, rows, "ordered" if title_key == "po" else "invoiced")
        net = round(sum(a * p for _, a, p in rows), 2)
        blocks["totals"], _ = totals(sh, net, r.choice((7, 10, 19, 20, 21)), 0.2)
        days = r.choice((10, 14, 30, 60))
        blocks["body"] = sh.para(
            f"Payment is due within {days} days of the date of this document. "
            f"{'Please quote the reference number with your payment.' if r.random() < 0.5 else ''}"
        )
        sh.ask(
            r.choice(("Within how many days is payment due?", "How many days does the buyer have to pay?")),
            [str(days), f"{days} days"],
            "prose_value",
            "payment_days",
        )
    notes = [
        sh.fld("iban", c.fake.iban(), vtype="id", entity="iban", optional=0.4),
        sh.fld("email", c.email(c.person(), c.domain(seller)), entity="email", optional=0.3),
    ]
    blocks["notes"] = sh.kv(notes, "colon")
    return sh.page(arrangement, blocks, header=f"{seller} · {title}", footer=seller)


def invoice(sh: Sheet, arrangement: str) -> str:
    return _trade(sh, "invoice", "invoice_number", GOODS + SERVICES, arrangement)


def purchase_order(sh: Sheet, arrangement: str) -> str:
    return _trade(sh, "po", "order_number", GOODS, arrangement)


def delivery_note(sh: Sheet, arrangement: str) -> str:
    return _trade(sh, "delivery", "reference", GOODS, arrangement)


def receipt(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    shop = c.company()
    lines, city = address_lines(c, shop)
    day = c.date()
    rows = items(sh, FOOD if r.random() < 0.5 else GOODS, r.randint(3, 7), 4, 1, 40)
    sh.generic("sender", shop)
    sh.ask(r.choice(("In which city is the shop?", f"Where is {shop} located?")), city, "relation", "city")
    meta = [
        sh.fld("date", c.fmt_date(day), vtype="date", generic="date"),
        sh.fld("time", c.time(r.randrange(7 * 60, 22 * 60))),
        sh.fld("cashier", c.person(), vtype="person", optional=0.3),
        sh.fld("reference", c.ident("", r.randint(4, 8)), vtype="id", optional=0.3),
    ]
    net = round(sum(a * p for _, a, p in rows), 2)
    tot, total = totals(sh, net, r.choice((7, 10, 19, 20)), 0.3)
    paid = r.choice(("Card", "Cash", "Visa", "Mastercard", "Contactless"))
    tot += sh.kv([sh.fld("payment_method", paid)])
    if paid == "Cash":
        given = float(int(total) + r.choice((1, 5, 10, 20)))
        change = round(given - total, 2)
        tot += f"<div>Cash {e(c.money(given))} · Change {e(c.money(change))}</div>"
        sh.ask("How much change was given?", c.amount_answers(change), "lookup", "change")
    sh.missing("due_date", "date")
    blocks = {
        "head": f"<h2>{e(shop)}</h2>" + sh.lines(lines[1:] + [c.phone()], "small"),
        "meta": sh.kv(meta),
        "table": item_table(sh, rows, "bought"),
        "totals": tot,
        "notes": sh.para(
            r.choice(
                (
                    "Thank you for your visit!",
                    "Please keep your receipt.",
                    "Returns accepted within 14 days with this receipt.",
                )
            )
        ),
    }
    return sh.page(arrangement, blocks, header=word(sh, TITLES, "receipt"))


def bank_statement(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    bank = c.company() + r.choice((" Bank", " Savings", " Credit Union"))
    holder = c.person()
    hblk, hcity, _ = party(sh, holder)
    start = c.date()
    end = start + dt.timedelta(days=29)
    bal = round(r.uniform(200, 9000), 2)
    opening = bal
    payees = c.sample(
        (
            "Grocery store",
            "Salary",
            "Electricity",
            "Rent",
            "Pharmacy",
            "Online shop",
            "Cash machine",
            "Restaurant",
            "Insurance",
            "Phone bill",
            "Refund",
            "Transfer from savings",
        ),
        r.randint(5, 9),
    )
    rows, days = [], sorted(r.sample(range(29), len(payees)))
    for p, d in zip(payees, days):
        amt = round(r.uniform(5, 1800), 2) * (1 if p in ("Salary", "Refund", "Transfer from savings") else -1)
        bal = round(bal + amt, 2)
        rows.append(
            [c.fmt_date(start + dt.timedelta(days=d), c.tx_format), p, c.money(amt, False), c.money(bal, False)]
        )
    for row in c.sample(rows, 2):
        sh.ask(
            r.choice(
                (f"What was the amount of the {row[1].lower()} transaction?", f"How much was the {row[1]} entry?")
            ),
            [row[2], row[2].lstrip("-")],
            "table_cell",
            "amount",
            [row[2]],
        )
        sh.ask(f"On what date was the {row[1].lower()} transaction?", row[0], "table_cell", "tx_date")
    sh.generic("addressee", holder)
    sh.generic("sender", bank)
    sh.ask(
        r.choice(("Where does the account holder live?", f"In which city does {holder} live?")),
        hcity,
        "relation",
        "city",
    )
    meta = [
        sh.fld("account_number", c.ident("", r.randint(8, 10)), vtype="id"),
        sh.fld("iban", c.fake.iban(), vtype="id", entity="iban", optional=0.4),
        sh.fld("period", f"{c.fmt_date(start)} – {c.fmt_date(end)}", [c.fmt_date(start)], ask=False),
        sh.fld("opening_balance", c.money(opening), c.amount_answers(opening), "money"),
        sh.fld("closing_balance", c.money(bal), c.amount_answers(bal), "money"),
    ]
    sh.ask("When does the statement period end?", c.fmt_date(end), "lookup", "period_end")
    sh.missing("due_date", "date")
    hdr = {
        "en": ["Date", "Description", "Amount", "Balance"],
        "de": ["Datum", "Buchungstext", "Betrag", "Saldo"],
        "fr": ["Date", "Libellé", "Montant", "Solde"],
        "es": ["Fecha", "Concepto", "Importe", "Saldo"],
    }[sh.k.lang]
    blocks = {
        "head": f"<h2>{e(bank)}</h2><h3>{e({'de': 'Kontoauszug', 'fr': 'Relevé de compte', 'es': 'Extracto'}.get(sh.k.lang, 'Account statement'))}</h3>",
        "parties": hblk,
        "meta": sh.kv(meta),
        "table": sh.tbl(hdr, rows, {2, 3}),
        "notes": sh.kv([sh.fld("phone", c.phone(), entity="phone", optional=0.4)], "colon"),
    }
    return sh.page(arrangement, blocks, header=bank, footer=bank)


def utility_bill(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    util = c.company() + r.choice((" Energy", " Water", " Power", " Gas & Electric"))
    cust = c.person()
    blk, city, _ = party(sh, cust)
    start = c.date()
    end = start + dt.timedelta(days=r.choice((30, 61, 91)))
    prev = r.randint(10000, 60000)
    used = r.randint(120, 2400)
    rate = round(r.uniform(0.12, 0.45), 4)
    standing = round(r.uniform(8, 30), 2)
    energy = round(used * rate, 2)
    unit = r.choice(("kWh", "m³"))
    rows = [
        ["Energy charge", f"{used} {unit}", c.money(rate, False), c.money(energy, False)],
        ["Standing charge", "1", c.money(standing, False), c.money(standing, False)],
    ]
    sh.ask("What is the standing charge?", c.amount_answers(standing, False), "table_cell", "standing_charge")
    meta = [
        sh.fld("customer_number", c.ident("", 8), vtype="id"),
        sh.fld("meter_number", c.ident("M", 7, ""), vtype="id", optional=0.3),
        sh.fld("invoice_date", c.fmt_date(end + dt.timedelta(days=3)), vtype="date", generic="date"),
        sh.fld("due_date", c.fmt_date(end + dt.timedelta(days=24)), vtype="date", optional=0.2),
        sh.fld("period", f"{c.fmt_date(start)} – {c.fmt_date(end)}", ask=False),
        sh.fld("consumption", f"{used} {unit}", [str(used)]),
    ]
    sh.ask(
        r.choice(("What was the previous meter reading?", "What was the meter reading at the start?")),
        str(prev),
        "lookup",
        "previous_reading",
    )
    readings = sh.kv([("Previous reading", str(prev)), ("Current reading", str(prev + used))], "colon")
    sh.ask("What was the current meter reading?", str(prev + used), "lookup", "current_reading")
    sh.generic("addressee", cust)
    sh.generic("sender", util)
    sh.ask(f"In which city does {cust} live?", city, "relation", "city")
    tot, _ = totals(sh, round(energy + standing, 2), r.choice((5, 7, 19, 20)), 0.1)
    blocks = {
        "head": f"<h2>{e(util)}</h2><div>{e(r.choice(('Your energy bill', 'Utility bill', 'Statement of charges')))}</div>",
        "parties": blk,
        "meta": sh.kv(meta),
        "table": sh.tbl(["Item", "Usage", "Rate", "Amount"], rows, {2, 3}),
        "totals": tot,
        "notes": readings
        + sh.kv([sh.fld("website", f"www.{c.domain(util)}", entity="website", optional=0.4)], "colon"),
    }
    return sh.page(arrangement, blocks, header=util, footer=util)


def payslip(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    employer = c.company()
    emp = c.person()
    day = c.date()
    base = round(r.uniform(1800, 7500), 2)
    extras = [
        (n, round(r.uniform(40, 600), 2))
        for n in c.sample(("Overtime", "Bonus", "Shift allowance", "Travel allowance", "Holiday pay"), r.randint(1, 3))
    ]
    deds = [
        (n, round(r.uniform(60, 900), 2))
        for n in c.sample(
            ("Income tax", "Social security", "Pension", "Health insurance", "Union fee"), r.randint(2, 4)
        )
    ]
    gross = round(base + sum(v for _, v in extras), 2)
    net = round(gross - sum(v for _, v in deds), 2)
    rows = (
        [["Basic salary", c.money(base, False), ""]]
        + [[n, c.money(v, False), ""] for n, v in extras]
        + [[n, "", c.money(v, False)] for n, v in deds]
    )
    for n, v in c.sample(extras + deds, 2):
        sh.ask(
            r.choice((f"How much is the {n.lower()}?", f"What amount is shown for {n.lower()}?")),
            c.amount_answers(v, False),
            "table_cell",
            "pay_item",
        )
    sh.ask("What is the basic salary?", c.amount_answers(base, False), "table_cell", "basic_salary")
    meta = [
        sh.fld("employee", emp, vtype="person", generic="addressee"),
        sh.fld("employee_id", c.ident("", r.randint(4, 7)), vtype="id", optional=0.25),
        sh.fld("pay_date", c.fmt_date(day), vtype="date", generic="date"),
        sh.fld("position", c.fake.job()[:30], optional=0.3),
        sh.fld("gross_pay", c.money(gross), c.amount_answers(gross), "money"),
        sh.fld("net_pay", c.money(net), c.amount_answers(net), "money"),
    ]
    sh.generic("sender", employer)
    sh.missing("vat", "money")
    blocks = {
        "head": f"<h2>{e(r.choice(('Payslip', 'Pay statement', 'Salary slip', 'Earnings statement')))}</h2>"
        f"<div>{e(employer)}</div>",
        "meta": sh.kv(meta),
        "table": sh.tbl(["Item", "Earnings", "Deductions"], rows, {1, 2}),
        "notes": sh.para("This statement is confidential."),
    }
    return sh.page(arrangement, blocks, header=employer, footer=employer)


def price_list(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    menu = r.random() < 0.5
    name = c.company() if not menu else f"{c.fake.last_name()}'s {r.choice(('Bistro', 'Kitchen', 'Café', 'Diner'))}"
    rows = [
        (n, round(r.uniform(2, 35) if menu else r.uniform(3, 400), 2))
        for n in c.sample(FOOD if menu else GOODS, r.randint(6, 11))
    ]
    parts = []
    if sh.tid == 3 or r.random() < 0.3:  # dotted menu lines instead of a table
        parts.append("".join(f"<div class='kvc'><div>{e(n)} ........ {e(c.money(p))}</div></div>" for n, p in rows))
    else:
        code = [f"{r.randint(100, 999)}" for _ in rows]
        parts.append(
            sh.tbl(
                ["Code", word(sh, COLS, "desc"), word(sh, COLS, "unit")],
                [[k, n, c.money(p)] for k, (n, p) in zip(code, rows)],
                {2},
            )
        )
    for n, p in c.sample(rows, 3):
        sh.ask(
            r.choice(
                (f"What is the price of {n.lower()}?", f"How much does {n} cost?", f"What does {n.lower()} cost?")
            ),
            c.amount_answers(p),
            "table_cell",
            "price",
        )
    cheapest = min(rows, key=lambda x: x[1])
    sh.ask("Which item is the cheapest?", cheapest[0], "relation", "cheapest", [cheapest[0]])
    title = (
        r.choice(("Menu", "Our menu", "Lunch menu"))
        if menu
        else r.choice(("Price list", "Product catalogue", "Trade prices"))
    )
    sh.generic("title", [title, f"{name} {title}"], [title])
    lines, city = address_lines(c, name)
    sh.ask(f"In which city is {name}?", city, "relation", "city")
    meta = [
        sh.fld("valid_from", c.fmt_date(c.date()), vtype="date", generic="date", optional=0.3),
        sh.fld("phone", c.phone(), entity="phone", optional=0.3),
    ]
    sh.missing("invoice_number", "id")
    blocks = {
        "head": f"<h1>{e(name)}</h1><h3>{e(title)}</h3>",
        "meta": sh.kv(meta),
        "table": "".join(parts),
        "parties": sh.lines(lines[1:], "small"),
        "notes": sh.para(r.choice(("All prices include VAT.", "Prices subject to change.", "Service not included."))),
    }
    return sh.page(arrangement, blocks, header=name)
