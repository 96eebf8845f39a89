"""Text documents like DocVQA's: forms, letters, invoices, receipts, reports and memos.

Each ``render_<kind>(rng)`` typesets one page with PIL in a randomly chosen face, size and layout, and
returns a :class:`~docintent.synth.questions.Document` whose questions ask for a field value, a date,
an amount, a name or a phrase printed on the page (plus a few counts that must be worked out).
"""

from __future__ import annotations

import numpy as np

from . import vocab as V
from .canvas import Canvas, PageOverflow
from .fonts import FontFace, faces_by_style
from .prose import paragraphs
from .questions import DOC_DATE, HOW_MUCH, LOOKUP, QA, WHEN, WHO, Document, phrase

PAGE_W, PAGE_H = 1240, 1754  # A4 at 150 dpi

KINDS = ("form", "letter", "invoice", "receipt", "report", "memo")


def _face(rng: np.random.Generator, styles: tuple[str, ...] = ("sans", "serif")) -> FontFace:
    pool = [f for s in styles for f in faces_by_style(s)]
    return V.pick(rng, pool)


def _ink(rng: np.random.Generator) -> tuple[int, int, int]:
    return V.pick(rng, ((20, 20, 20), (0, 0, 0), (30, 30, 60), (40, 35, 30)))


def _accent(rng: np.random.Generator) -> tuple[int, int, int]:
    return V.pick(rng, ((25, 60, 120), (120, 30, 30), (20, 90, 60), (60, 60, 60), (90, 40, 110)))


def render_form(rng: np.random.Generator) -> Document:
    """A filled-in form: labelled boxes in one or two columns, values typed in a second face."""
    face = _face(rng)
    value_face = _face(rng, ("mono", "sans", "serif"))
    c = Canvas(PAGE_W, PAGE_H, face, ink=_ink(rng))
    title, who, id_label = V.pick(
        rng,
        (
            ("Employee Registration Form", "employee", "Employee ID"),
            ("Insurance Claim Form", "claimant", "Policy Number"),
            ("Membership Application", "applicant", "Membership No."),
            ("Vehicle Service Request", "customer", "Order Number"),
            ("Patient Intake Form", "patient", "Patient ID"),
        ),
    )
    org = V.company(rng)
    m = int(rng.integers(80, 130))
    size = int(rng.integers(26, 33))
    y = m
    c.text(m, y, org, size + 4, bold=True, fill=_accent(rng))
    y += size * 2
    c.text(PAGE_W / 2, y, title.upper() if rng.random() < 0.5 else title, size + 14, bold=True, anchor="ma")
    y += size * 3.2
    name = V.person(rng)
    street, cityline = V.address(rng)
    dob = V.date(rng, 1950, 2004)
    signed = V.date(rng, 2016, 2025)
    style = V.pick(rng, V.DATE_STYLES)
    ident = f"{V.pick(rng, ('A', 'B', 'K', 'P', 'X'))}{int(rng.integers(100000, 999999))}"
    phone = V.phone(rng)
    mail = V.email(name, org)
    contact = V.person(rng)
    fields = [
        ("Full name", name, who, "name"),
        ("Date of birth", V.format_date(dob, style), f"{who}'s date of birth", "date"),
        (id_label, ident, id_label.replace("Membership No.", "membership number"), "field"),
        ("Street address", street, f"{who}'s street address", "field"),
        ("City / State / ZIP", cityline, "city, state and ZIP code", "field"),
        ("Telephone", phone, f"{who}'s telephone number", "field"),
        ("E-mail", mail, f"{who}'s e-mail address", "field"),
        ("Emergency contact", contact, "emergency contact", "name"),
        ("Date signed", V.format_date(signed, style), "date the form was signed", "date"),
    ]
    if who == "claimant":
        amount = float(rng.integers(100, 20000)) + float(rng.integers(0, 100)) / 100
        fields.insert(3, ("Amount claimed", V.money(amount), "amount claimed", "amount"))
    two_cols = rng.random() < 0.5
    col_w = (PAGE_W - 2 * m - (40 if two_cols else 0)) // (2 if two_cols else 1)
    box_h = int(size * 2.6)
    qas: list[QA] = []
    for i, (label, value, noun, intent) in enumerate(fields):
        col = i % 2 if two_cols else 0
        x = m + col * (col_w + 40)
        c.text(x, y, label, size - 4, bold=rng.random() < 0.3)
        c.rect(x, y + size, x + col_w, y + size + box_h, outline=(90, 90, 90), width=2)
        c.text(x + 12, y + size + box_h / 2, value, size + 2, face=value_face, anchor="lm")
        if not two_cols or col == 1:
            y += size + box_h + size
        if intent == "date":
            d = dob if label.startswith("Date of") else signed
            answers = V.date_answers(d, value)
            templates = WHEN
        elif intent == "name":
            answers, templates = (value,), WHO
        elif intent == "amount":
            answers, templates = V.money_answers(amount, value), HOW_MUCH
        else:
            answers, templates = (value,), LOOKUP
        qas.append(QA(phrase(rng, templates, noun=noun, doc="form"), answers, intent, subset="form", printed=True))
    if two_cols and len(fields) % 2:
        y += size + box_h + size
    y += size
    decl = (
        "I certify that the information given on this form is true and complete to the best of my "
        "knowledge, and I understand that false statements may lead to the rejection of this request."
    )
    y = c.paragraph(m, y, decl, PAGE_W - 2 * m, size - 3)
    c.text(m, y + size * 2, "Signature: ______________________", size - 2)
    content = {"title": title, "organisation": org, "fields": {f[0]: f[1] for f in fields}, "declaration": decl}
    return Document(
        "doc", "form", c.finish(), content=content, questions=qas, fonts=sorted({face.name, value_face.name})
    )


def _letterhead(c: Canvas, rng: np.random.Generator, org: str, m: int, size: int) -> float:
    street, cityline = V.address(rng)
    tel = V.phone(rng)
    accent = _accent(rng)
    centred = rng.random() < 0.5
    x, anchor = (PAGE_W / 2, "ma") if centred else (m, "la")
    y = m
    c.text(x, y, org, size + 16, bold=True, fill=accent, anchor=anchor)
    y += size * 2.4
    c.text(x, y, f"{street}, {cityline}  ·  Tel. {tel}", size - 4, anchor=anchor)
    y += size * 1.6
    c.line(m, y, PAGE_W - m, y, width=3, fill=accent)
    return y + size * 2


def render_letter(rng: np.random.Generator) -> Document:
    """A business letter: letterhead, date, recipient block, body with planted facts, signature."""
    face = _face(rng)
    c = Canvas(PAGE_W, PAGE_H, face, ink=_ink(rng))
    m, size = int(rng.integers(100, 150)), int(rng.integers(25, 31))
    org = V.company(rng)
    y = _letterhead(c, rng, org, m, size)
    d = V.date(rng)
    ds = V.format_date(d, V.pick(rng, ("long", "day_month", "abbrev")))
    c.text(m, y, ds, size)
    y += size * 2.5
    recipient, rtitle, rorg = V.person(rng), V.pick(rng, V.JOB_TITLES), V.company(rng)
    rstreet, rcity = V.address(rng)
    for line in (recipient, rtitle, rorg, rstreet, rcity):
        c.text(m, y, line, size)
        y += size * 1.35
    y += size
    subject = f"Re: {V.pick(rng, V.TOPICS).capitalize()}"
    c.text(m, y, subject, size, bold=True)
    y += size * 2
    salutation = f"Dear {V.pick(rng, ('Mr.', 'Ms.', 'Dr.'))} {recipient.split()[-1]},"
    c.text(m, y, salutation, size)
    y += size * 2
    paras, fact_qas = paragraphs(rng, "letter", int(rng.integers(3, 5)), 2)
    for p in paras:
        y = c.paragraph(m, y, p, PAGE_W - 2 * m, size) + size * 0.8
    signer, stitle = V.person(rng), V.pick(rng, V.JOB_TITLES)
    closing = V.pick(rng, ("Sincerely,", "Yours faithfully,", "Kind regards,", "Best regards,"))
    y += size
    c.text(m, y, closing, size)
    y += size * 4
    c.text(m, y, signer, size, bold=True)
    c.text(m, y + size * 1.4, stitle, size)
    qas = [
        QA(phrase(rng, DOC_DATE, doc="letter"), V.date_answers(d, ds), "date", subset="letter", printed=True),
        QA(
            phrase(
                rng,
                (
                    "Who signed the letter?",
                    "Who is the letter from?",
                    "Who wrote this letter?",
                    "What is the name of the person who signed the letter?",
                ),
            ),
            (signer,),
            "name",
            subset="letter",
            printed=True,
        ),
        QA(
            phrase(
                rng,
                (
                    "To whom is the letter addressed?",
                    "Who is the recipient of the letter?",
                    "Who is this letter written to?",
                ),
            ),
            (recipient,),
            "name",
            subset="letter",
            printed=True,
        ),
        QA(
            phrase(
                rng,
                (
                    "What is the title of the person who signed the letter?",
                    "What position does the sender of the letter hold?",
                    "What is the signer's job title?",
                ),
            ),
            (stitle,),
            "field",
            subset="letter",
            printed=True,
        ),
        QA(
            phrase(
                rng,
                (
                    "Which company sent this letter?",
                    "What organisation is the letter from?",
                    "What is the name of the company in the letterhead?",
                ),
            ),
            (org,),
            "field",
            subset="letter",
            printed=True,
        ),
        *fact_qas,
    ]
    content = {
        "organisation": org,
        "date": ds,
        "recipient": [recipient, rtitle, rorg, rstreet, rcity],
        "subject": subject,
        "paragraphs": paras,
        "signer": signer,
        "signer_title": stitle,
    }
    return Document("doc", "letter", c.finish(), content=content, questions=qas, fonts=[face.name])


def render_invoice(rng: np.random.Generator) -> Document:
    """An invoice: header, number and dates, bill-to block, item table, subtotal, tax and total."""
    face = _face(rng)
    c = Canvas(PAGE_W, PAGE_H, face, ink=_ink(rng))
    m, size = int(rng.integers(80, 120)), int(rng.integers(24, 29))
    org = V.company(rng)
    accent = _accent(rng)
    y = _letterhead(c, rng, org, m, size)
    c.text(PAGE_W - m, y, "INVOICE", size + 18, bold=True, fill=accent, anchor="ra")
    number = f"{V.pick(rng, ('INV', 'IN', 'No'))}-{int(rng.integers(2015, 2025))}-{int(rng.integers(1, 9999)):04d}"
    issued = V.date(rng, 2016, 2024)
    import datetime as _dt

    due = issued + _dt.timedelta(days=int(V.pick(rng, (14, 30, 45, 60))))
    style = V.pick(rng, V.DATE_STYLES)
    meta_rows = [
        ("Invoice No.", number),
        ("Invoice date", V.format_date(issued, style)),
        ("Due date", V.format_date(due, style)),
        ("Terms", f"Net {(due - issued).days}"),
    ]
    bill_name, bill_org = V.person(rng), V.company(rng)
    bstreet, bcity = V.address(rng)
    yb = y
    c.text(m, yb, "BILL TO", size - 2, bold=True, fill=accent)
    for line in (bill_name, bill_org, bstreet, bcity):
        yb += size * 1.4
        c.text(m, yb, line, size)
    ym = y + size * 3
    for label, value in meta_rows:
        c.text(PAGE_W - m - 420, ym, label, size, bold=True)
        c.text(PAGE_W - m, ym, value, size, anchor="ra")
        ym += size * 1.4
    y = max(yb, ym) + size * 3
    items = V.pick(rng, V.PRODUCTS, int(rng.integers(3, 8)))
    rows = []
    for desc in items:
        qty = int(rng.integers(1, 25))
        unit = float(rng.integers(2, 800)) + float(V.pick(rng, (0, 0, 0.5, 0.99, 0.25)))
        rows.append((desc, qty, unit, qty * unit))
    cols = [m, PAGE_W - m - 560, PAGE_W - m - 300, PAGE_W - m]
    c.rect(m, y - 8, PAGE_W - m, y + size * 1.6, fill=accent)
    for label, x, anchor in (
        ("Description", cols[0] + 10, "la"),
        ("Qty", cols[1], "ra"),
        ("Unit price", cols[2], "ra"),
        ("Amount", cols[3] - 10, "ra"),
    ):
        c.text(x, y, label, size, bold=True, fill=(255, 255, 255), anchor=anchor)
    y += size * 2.4
    for desc, qty, unit, amount in rows:
        c.text(cols[0] + 10, y, desc, size)
        c.text(cols[1], y, str(qty), size, anchor="ra")
        c.text(cols[2], y, V.money(unit), size, anchor="ra")
        c.text(cols[3] - 10, y, V.money(amount), size, anchor="ra")
        y += size * 1.5
        c.line(m, y - size * 0.3, PAGE_W - m, y - size * 0.3, width=1, fill=(170, 170, 170))
    subtotal = round(sum(r[3] for r in rows), 2)
    rate = float(V.pick(rng, (5.0, 6.0, 7.5, 8.0, 8.25, 10.0)))
    tax = round(subtotal * rate / 100, 2)
    total = round(subtotal + tax, 2)
    y += size
    for label, value, bold in (
        ("Subtotal", subtotal, False),
        (f"Tax ({rate:g}%)", tax, False),
        ("Total due", total, True),
    ):
        c.text(cols[2] - 40, y, label, size, bold=bold, anchor="ra")
        c.text(cols[3] - 10, y, V.money(value), size, bold=bold, anchor="ra")
        y += size * 1.6
    y += size * 2
    c.paragraph(
        m,
        y,
        f"Please pay within {(due - issued).days} days. Make cheques payable to {org}. Thank you for your business.",
        PAGE_W - 2 * m,
        size - 3,
    )
    pick_row = rows[int(rng.integers(len(rows)))]
    qas = [
        QA(
            phrase(rng, LOOKUP, noun="invoice number", doc="invoice"),
            (number,),
            "field",
            subset="invoice",
            printed=True,
        ),
        QA(
            phrase(rng, WHEN, noun="invoice date", doc="invoice"),
            V.date_answers(issued, meta_rows[1][1]),
            "date",
            subset="invoice",
            printed=True,
        ),
        QA(
            phrase(
                rng,
                (
                    "When is payment due?",
                    "What is the due date of the invoice?",
                    "By what date must the invoice be paid?",
                ),
            ),
            V.date_answers(due, meta_rows[2][1]),
            "date",
            subset="invoice",
            printed=True,
        ),
        QA(
            phrase(
                rng,
                HOW_MUCH + ("What is the total amount due?", "How much has to be paid in total?"),
                noun="total due",
                doc="invoice",
            ),
            V.money_answers(total, V.money(total)),
            "amount",
            subset="invoice",
            printed=True,
        ),
        QA(
            phrase(rng, HOW_MUCH, noun="tax amount", doc="invoice"),
            V.money_answers(tax, V.money(tax)),
            "amount",
            subset="invoice",
            printed=True,
        ),
        QA(
            phrase(rng, HOW_MUCH, noun="subtotal", doc="invoice"),
            V.money_answers(subtotal, V.money(subtotal)),
            "amount",
            subset="invoice",
            printed=True,
        ),
        QA(
            phrase(
                rng,
                (
                    "How many units of {d} were ordered?",
                    "What quantity of {d} is billed?",
                    "What is the quantity for {d}?",
                ),
                d=pick_row[0],
            ),
            (str(pick_row[1]),),
            "field",
            subset="invoice",
            printed=True,
        ),
        QA(
            phrase(
                rng,
                (
                    "What is the unit price of {d}?",
                    "How much does one {d} cost?",
                    "What price per unit is charged for {d}?",
                ),
                d=pick_row[0],
            ),
            V.money_answers(pick_row[2], V.money(pick_row[2])),
            "amount",
            subset="invoice",
            printed=True,
        ),
        QA(
            phrase(
                rng,
                (
                    "Which company is the invoice billed to?",
                    "Who is the customer on this invoice?",
                    "To which company is this invoice addressed?",
                ),
            ),
            (bill_org,),
            "name",
            subset="invoice",
            printed=True,
        ),
        QA(
            phrase(
                rng,
                (
                    "How many line items does the invoice list?",
                    "How many different items are billed?",
                    "How many products or services appear on the invoice?",
                ),
            ),
            (str(len(rows)),),
            "count",
            subset="invoice",
            printed=False,
        ),
    ]
    content = {
        "organisation": org,
        "meta": dict(meta_rows),
        "bill_to": [bill_name, bill_org, bstreet, bcity],
        "items": [{"description": d, "qty": q, "unit": u, "amount": round(a, 2)} for d, q, u, a in rows],
        "subtotal": subtotal,
        "tax_rate": rate,
        "tax": tax,
        "total": total,
    }
    return Document("doc", "invoice", c.finish(), content=content, questions=qas, fonts=[face.name])


def render_receipt(rng: np.random.Generator) -> Document:
    """A till receipt: narrow paper, store header, items with prices, totals and payment."""
    face = _face(rng, ("mono", "sans"))
    width, height = int(rng.integers(760, 900)), 1700
    c = Canvas(width, height, face, paper=(250, 249, 244), ink=_ink(rng))
    m, size = 50, int(rng.integers(24, 29))
    store = V.pick(rng, V.STORES)
    street, cityline = V.address(rng)
    y = m
    c.text(width / 2, y, store.upper(), size + 12, bold=True, anchor="ma")
    y += size * 2.2
    for line in (street, cityline, f"Tel. {V.phone(rng)}"):
        c.text(width / 2, y, line, size - 3, anchor="ma")
        y += size * 1.3
    d = V.date(rng, 2018, 2025)
    ds = V.format_date(d, V.pick(rng, ("short_us", "iso", "abbrev")))
    hour, minute = int(rng.integers(7, 22)), int(rng.integers(0, 60))
    t = f"{hour:02d}:{minute:02d}"
    y += size * 0.8
    c.text(m, y, ds, size)
    c.text(width - m, y, t, size, anchor="ra")
    y += size * 1.4
    c.text(m, y, f"Receipt #{int(rng.integers(10000, 99999))}", size - 2)
    y += size * 1.4
    c.line(m, y, width - m, y, width=2)
    y += size * 0.8
    items = V.pick(rng, V.GROCERIES, int(rng.integers(4, 11)))
    prices = [round(float(rng.integers(49, 1899)) / 100, 2) for _ in items]
    for item, price in zip(items, prices):
        c.text(m, y, item, size)
        c.text(width - m, y, f"{price:.2f}", size, anchor="ra")
        y += size * 1.35
    c.line(m, y + 4, width - m, y + 4, width=2)
    y += size
    subtotal = round(sum(prices), 2)
    tax = round(subtotal * 0.06, 2)
    total = round(subtotal + tax, 2)
    for label, value, bold in (("SUBTOTAL", subtotal, False), ("TAX 6%", tax, False), ("TOTAL", total, True)):
        c.text(m, y, label, size + (4 if bold else 0), bold=bold)
        c.text(width - m, y, f"{value:.2f}", size + (4 if bold else 0), bold=bold, anchor="ra")
        y += size * 1.5
    card = V.pick(rng, ("VISA", "MASTERCARD", "AMEX", "DEBIT"))
    last4 = f"{int(rng.integers(0, 10000)):04d}"
    c.text(m, y, f"{card} ************{last4}", size - 2)
    y += size * 2.4
    c.text(
        width / 2,
        y,
        V.pick(rng, ("THANK YOU FOR SHOPPING!", "PLEASE COME AGAIN", "HAVE A NICE DAY")),
        size - 2,
        anchor="ma",
    )
    idx = int(rng.integers(len(items)))
    qas = [
        QA(
            phrase(
                rng,
                (
                    "What is the total on the receipt?",
                    "How much was paid in total?",
                    "What was the total amount of the purchase?",
                    "What is the grand total?",
                ),
            ),
            V.money_answers(total, f"{total:.2f}"),
            "amount",
            subset="receipt",
            printed=True,
        ),
        QA(
            phrase(
                rng,
                ("What is the name of the store?", "Which shop issued this receipt?", "Where was this purchase made?"),
            ),
            (store.upper(), store),
            "name",
            subset="receipt",
            printed=True,
        ),
        QA(
            phrase(
                rng,
                (
                    "On what date was the purchase made?",
                    "What date is printed on the receipt?",
                    "When was this receipt issued?",
                ),
            ),
            V.date_answers(d, ds),
            "date",
            subset="receipt",
            printed=True,
        ),
        QA(
            phrase(rng, ("At what time was the purchase made?", "What time is shown on the receipt?")),
            (t,),
            "field",
            subset="receipt",
            printed=True,
        ),
        QA(
            phrase(
                rng,
                (
                    "How much did the {i} cost?",
                    "What was the price of {i}?",
                    "What is the price of the {i} on the receipt?",
                ),
                i=items[idx],
            ),
            V.money_answers(prices[idx], f"{prices[idx]:.2f}"),
            "amount",
            subset="receipt",
            printed=True,
        ),
        QA(
            phrase(rng, ("How much tax was charged?", "What is the tax amount?")),
            V.money_answers(tax, f"{tax:.2f}"),
            "amount",
            subset="receipt",
            printed=True,
        ),
        QA(
            phrase(
                rng,
                ("What are the last four digits of the card used?", "Which card number ending appears on the receipt?"),
            ),
            (last4,),
            "field",
            subset="receipt",
            printed=True,
        ),
        QA(
            phrase(rng, ("How many items were bought?", "How many different products are on the receipt?")),
            (str(len(items)),),
            "count",
            subset="receipt",
            printed=False,
        ),
    ]
    c.image = c.image.crop((0, 0, width, min(height, int(y + size * 2 + m))))
    content = {
        "store": store,
        "address": [street, cityline],
        "date": ds,
        "time": t,
        "items": dict(zip(items, prices)),
        "subtotal": subtotal,
        "tax": tax,
        "total": total,
        "card": f"{card} {last4}",
    }
    return Document("doc", "receipt", c.finish(), content=content, questions=qas, fonts=[face.name])


def render_report(rng: np.random.Generator) -> Document:
    """A short report: title block, numbered sections with paragraphs, a key-figures list."""
    face = _face(rng)
    heading_face = _face(rng, ("sans", "serif"))
    c = Canvas(PAGE_W, PAGE_H, face, ink=_ink(rng))
    m, size = int(rng.integers(100, 140)), int(rng.integers(23, 28))
    topic = V.pick(rng, V.TOPICS)
    year = int(rng.integers(2015, 2025))
    title = V.pick(rng, ("{t} report {y}", "Annual {t} review {y}", "{y} {t} summary")).format(t=topic, y=year)
    title = title[:1].upper() + title[1:]
    author, dept = V.person(rng), V.pick(rng, V.DEPARTMENTS)
    d = V.date(rng, year, year)
    ds = V.format_date(d, V.pick(rng, V.DATE_STYLES))
    y = m
    c.text(m, y, title, size + 16, bold=True, face=heading_face, fill=_accent(rng))
    y += size * 3
    c.text(m, y, f"Prepared by: {author}, {dept}", size)
    y += size * 1.5
    c.text(m, y, f"Date: {ds}", size)
    y += size * 2.5
    paras, fact_qas = paragraphs(rng, "report", 4, 3)
    headings = V.pick(rng, ("Summary", "Background", "Findings", "Discussion", "Recommendations", "Outlook"), 4)
    figures = [
        ("Total revenue", V.money(float(rng.integers(200, 9000)) * 1000, 0)),
        ("Employees", f"{int(rng.integers(20, 4000)):,}"),
        ("Sites", str(int(rng.integers(2, 40)))),
        ("Customer satisfaction", f"{rng.uniform(60, 98):.1f}%"),
    ]
    for i, (h, p) in enumerate(zip(headings, paras), 1):
        c.text(m, y, f"{i}. {h}", size + 4, bold=True, face=heading_face)
        y += size * 2
        y = c.paragraph(m, y, p, PAGE_W - 2 * m, size) + size
        if i == 2:
            c.text(m, y, "Key figures", size, bold=True)
            y += size * 1.6
            for label, value in figures:
                c.text(m + 30, y, f"•  {label}: {value}", size)
                y += size * 1.45
            y += size
    fig = figures[int(rng.integers(len(figures)))]
    fig_answers = (fig[1],)
    if fig[1].startswith("$"):
        fig_answers = V.money_answers(float(fig[1][1:].replace(",", "")), fig[1], 0)
    elif fig[1].endswith("%"):
        fig_answers = (fig[1], fig[1][:-1])
    elif "," in fig[1]:
        fig_answers = (fig[1], fig[1].replace(",", ""))
    qas = [
        QA(
            phrase(
                rng,
                (
                    "What is the title of the report?",
                    "What is this report called?",
                    "What title does the report carry?",
                ),
            ),
            (title,),
            "phrase",
            subset="report",
            printed=True,
        ),
        QA(
            phrase(
                rng, ("Who prepared the report?", "Who is the author of this report?", "Which person wrote the report?")
            ),
            (author,),
            "name",
            subset="report",
            printed=True,
        ),
        QA(
            phrase(rng, ("Which department prepared the report?", "What department is the author from?")),
            (dept,),
            "field",
            subset="report",
            printed=True,
        ),
        QA(phrase(rng, DOC_DATE, doc="report"), V.date_answers(d, ds), "date", subset="report", printed=True),
        QA(
            phrase(
                rng,
                (
                    "What figure is given for {f}?",
                    "According to the key figures, what is the {lf}?",
                    "What is the value listed for {f}?",
                ),
                f=fig[0],
                lf=fig[0].lower(),
            ),
            fig_answers,
            "field",
            subset="report",
            printed=True,
        ),
        *fact_qas,
    ]
    content = {
        "title": title,
        "author": author,
        "department": dept,
        "date": ds,
        "sections": dict(zip(headings, paras)),
        "key_figures": dict(figures),
    }
    return Document(
        "doc", "report", c.finish(), content=content, questions=qas, fonts=sorted({face.name, heading_face.name})
    )


def render_memo(rng: np.random.Generator) -> Document:
    """An internal memo: MEMORANDUM header, To / From / CC / Date / Subject block, body."""
    face = _face(rng, ("sans", "serif", "mono"))
    c = Canvas(PAGE_W, PAGE_H, face, ink=_ink(rng))
    m, size = int(rng.integers(100, 140)), int(rng.integers(25, 31))
    org = V.company(rng)
    y = m
    c.text(m, y, org, size, bold=True)
    y += size * 2.2
    c.text(m, y, V.pick(rng, ("MEMORANDUM", "Memorandum", "INTERNAL MEMO")), size + 18, bold=True)
    y += size * 3.2
    to, frm, cc = V.person(rng), V.person(rng), V.person(rng)
    to_dept, frm_dept = V.pick(rng, V.DEPARTMENTS, 2)
    d = V.date(rng)
    ds = V.format_date(d, V.pick(rng, V.DATE_STYLES))
    subject = V.pick(rng, V.TOPICS).capitalize() + V.pick(rng, ("", " update", " schedule", " next steps"))
    rows = [
        ("TO:", f"{to}, {to_dept}"),
        ("FROM:", f"{frm}, {frm_dept}"),
        ("CC:", cc),
        ("DATE:", ds),
        ("SUBJECT:", subject),
    ]
    for label, value in rows:
        c.text(m, y, label, size, bold=True)
        c.text(m + 190, y, value, size)
        y += size * 1.7
    c.line(m, y, PAGE_W - m, y, width=3)
    y += size * 1.5
    paras, fact_qas = paragraphs(rng, "memo", int(rng.integers(3, 5)), 2)
    for p in paras:
        y = c.paragraph(m, y, p, PAGE_W - 2 * m, size) + size * 0.8
    c.text(m, y + size, frm.split()[0][0] + "." + frm.split()[1][0] + ".", size)
    qas = [
        QA(
            phrase(rng, ("Who is the memo from?", "Who sent this memo?", "Who wrote the memo?")),
            (frm,),
            "name",
            subset="memo",
            printed=True,
        ),
        QA(
            phrase(rng, ("To whom is the memo addressed?", "Who is the memo for?", "Who receives this memo?")),
            (to,),
            "name",
            subset="memo",
            printed=True,
        ),
        QA(
            phrase(rng, ("Who is copied on the memo?", "Who is in CC?", "Which person receives a copy of the memo?")),
            (cc,),
            "name",
            subset="memo",
            printed=True,
        ),
        QA(
            phrase(
                rng,
                (
                    "What is the subject of the memo?",
                    "What is the memo about?",
                    "What subject line does the memo have?",
                ),
            ),
            (subject,),
            "phrase",
            subset="memo",
            printed=True,
        ),
        QA(phrase(rng, DOC_DATE, doc="memo"), V.date_answers(d, ds), "date", subset="memo", printed=True),
        QA(
            phrase(rng, ("Which department is the sender of the memo in?", "What department does the memo come from?")),
            (frm_dept,),
            "field",
            subset="memo",
            printed=True,
        ),
        *fact_qas,
    ]
    content = {"organisation": org, "header": dict(rows), "paragraphs": paras}
    return Document("doc", "memo", c.finish(), content=content, questions=qas, fonts=[face.name])


RENDERERS = {
    "form": render_form,
    "letter": render_letter,
    "invoice": render_invoice,
    "receipt": render_receipt,
    "report": render_report,
    "memo": render_memo,
}


def render(rng: np.random.Generator, kind: str | None = None) -> Document:
    """One document of ``kind`` (random kind when None)."""
    kind = kind or V.pick(rng, KINDS)
    for _ in range(20):
        try:
            return RENDERERS[kind](rng)
        except PageOverflow:
            continue  # the rng has moved on, so the next attempt draws a different layout
    raise RuntimeError(f"could not fit a {kind} on one page in 20 attempts")
