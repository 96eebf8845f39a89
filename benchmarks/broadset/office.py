"""Letters, forms and meeting minutes: who wrote to whom, when and about what; labelled fields; decisions."""

from __future__ import annotations

import datetime as dt

from .common import Ctx, Document, address_lines, base_css, e, field_rows, label, page_html, q, table

SUBJECTS = (
    "Renewal of the maintenance contract",
    "Change of delivery address",
    "Invitation to the annual meeting",
    "Confirmation of your appointment",
    "Request for a quotation",
    "Complaint about order",
    "Termination of the lease agreement",
    "Offer of employment",
    "Reminder: outstanding payment",
    "Application for a research grant",
    "Update on the building works",
    "Revised opening hours",
)
ROLES = (
    "Head of Procurement",
    "Managing Director",
    "Customer Relations Manager",
    "Office Manager",
    "Director of Finance",
    "Project Coordinator",
    "Chief Operating Officer",
    "Senior Legal Counsel",
)
CLOSINGS = ("Yours sincerely,", "Kind regards,", "Best regards,", "Yours faithfully,", "With best wishes,")


def _letter_data(ctx: Ctx) -> dict:
    sender, recipient = ctx.people(2)
    sorg, rorg = ctx.companies(2)
    scity, rcity = ctx.cities(2)
    when = ctx.date()
    deadline = when + dt.timedelta(days=ctx.rng.randint(10, 40))
    subject = ctx.pick(SUBJECTS)
    ref = ctx.ident(ctx.pick(("Ref", "Our ref.", "File")), 5, " ")
    amount = round(ctx.rng.uniform(400, 25000), 2)
    return {
        "sender": sender,
        "recipient": recipient,
        "sorg": sorg,
        "rorg": rorg,
        "scity": scity,
        "rcity": rcity,
        "saddr": address_lines(ctx, sender, sorg, scity)[0][2:],
        "raddr": address_lines(ctx, recipient, rorg, rcity)[0],
        "when": when,
        "deadline": deadline,
        "subject": subject,
        "ref": ref,
        "role": ctx.pick(ROLES),
        "amount": amount,
        "phone": ctx.phone(),
        "email": ctx.email(sender, ctx.domain(sorg)),
        "closing": ctx.pick(CLOSINGS),
    }


def _letter_body(ctx: Ctx, d: dict) -> str:
    m = ctx.money(d["amount"])
    first = d["recipient"].split()[-1]
    return (
        f"<p>Dear {e(ctx.pick(('Mr', 'Ms', 'Dr')))} {e(first)},</p>"
        f"<p>Thank you for your letter of last month concerning the matter above. After reviewing the "
        f"documents with our team, we are pleased to confirm that {e(d['sorg'])} will proceed as discussed. "
        f"The agreed amount of {e(m)} will be settled in two instalments.</p>"
        f"<p>We kindly ask you to return the signed copy no later than {e(ctx.fmt_date(d['deadline']))}. "
        f"Should you have any questions, please call me on {e(d['phone'])} or write to {e(d['email'])}.</p>"
        f"<p>We look forward to continuing our cooperation.</p>"
    )


def _letter_questions(ctx: Ctx, d: dict) -> list:
    r = ctx.rng
    return [
        q(
            r.choice(("Who is the letter from?", "Who wrote this letter?", "Who signed the letter?")),
            d["sender"],
            "role",
        ),
        q(
            r.choice(("Who is the letter addressed to?", "To whom is this letter written?", "Who is the recipient?")),
            d["recipient"],
            "role",
        ),
        q(
            r.choice(("What is the date of the letter?", "When was the letter written?")),
            ctx.fmt_date(d["when"]),
            "role",
        ),
        q(r.choice(("What is the subject of the letter?", "What is the letter about?")), d["subject"], "role"),
        q(
            r.choice(("By what date must the signed copy be returned?", "What is the deadline for the signed copy?")),
            ctx.fmt_date(d["deadline"]),
            "role",
        ),
        q(f"Which organisation does {d['recipient']} work for?", d["rorg"], "relation"),
        q(f"What is the position of {d['sender']}?", d["role"], "relation"),
        q("In which city is the recipient's organisation located?", d["rcity"], "relation"),
        q("Which organisation sent the letter?", d["sorg"], "entity_type"),
        q("What amount was agreed?", ctx.amount_answers(d["amount"]), "prose_value"),
        q("What phone number does the writer give?", d["phone"], "entity_type"),
        q("What is the reference of the letter?", d["ref"], "entity_type"),
    ]


def letter_block(ctx: Ctx) -> Document:
    """Business letter in block format: centred or aligned letterhead with a rule, date, inside address,
    bold subject line, body, closing with signature, name and position."""
    d = _letter_data(ctx)
    s = ctx.style
    css = (
        base_css(ctx, margin="18mm 22mm")
        + f"""
.lh {{ text-align: {"center" if s.align == "left" else "right"}; border-bottom: 1px solid {s.accent}; padding-bottom: 6px; }}
.lh .n {{ font-size: 1.7em; color: {s.accent}; font-family: '{s.heading_font}'; font-variant: small-caps; }}
.lh .a {{ font-size: 0.85em; color: #444; }}
.date {{ margin: 26px 0 18px 0; }}
.subj {{ font-weight: 700; margin: 18px 0; }}
.sig {{ margin-top: 14px; }} .sig .s {{ font-family: 'DejaVu Serif'; font-style: italic; font-size: 1.4em;
color: #223; margin: 6px 0 2px 0; }}
.foot {{ margin-top: 40px; font-size: 0.8em; color: #666; border-top: 1px solid #ccc; padding-top: 4px; }}
"""
    )
    body = f"""<div class="page"><div class="lh"><div class="n">{e(d["sorg"])}</div>
<div class="a">{e(" | ".join(d["saddr"]))} | {e(d["phone"])}</div></div>
<div class="date">{e(d["scity"])}, {e(ctx.fmt_date(d["when"]))}</div>
<div>{"<br>".join(e(x) for x in d["raddr"])}</div>
<div class="subj">{label(ctx, "Subject")}: {e(d["subject"])}</div><div>{e(d["ref"])}</div>
{_letter_body(ctx, d)}<div class="sig">{e(d["closing"])}<div class="s">{e(d["sender"])}</div>
<div>{e(d["sender"])}</div><div>{e(d["role"])}</div></div>
<div class="foot">{e(d["sorg"])} · Registered office: {e(d["scity"])} · {e(d["email"])}</div></div>"""
    return Document(page_html(css, body, "letter"), _letter_questions(ctx, d))


def letter_modern(ctx: Ctx) -> Document:
    """Letter with the sender column in a right-hand margin (name, position, contacts), the recipient in a
    window block, reference / date fields in a row, ``Re:`` subject, signature block without a printed role."""
    d = _letter_data(ctx)
    s = ctx.style
    css = (
        base_css(ctx, margin="14mm 16mm")
        + f"""
.wrap {{ display: grid; grid-template-columns: 1fr 52mm; gap: 10mm; }}
.side {{ font-size: 0.82em; color: #333; border-left: 3px solid {s.accent}; padding-left: 8px; }}
.side .org {{ font-weight: 800; font-size: 1.25em; color: {s.accent}; margin-bottom: 10px; }}
.side .k {{ color: #777; font-size: 0.9em; margin-top: 8px; }}
.win {{ margin-top: 22mm; min-height: 32mm; }}
.win .ret {{ font-size: 0.7em; color: #666; border-bottom: 1px solid #aaa; margin-bottom: 4px; }}
.refs {{ display: flex; gap: 26px; font-size: 0.9em; margin: 10px 0 20px 0; }}
.refs span b {{ display: block; font-size: 0.8em; color: #777; font-weight: 400; }}
.re {{ font-weight: 700; margin-bottom: 12px; }}
"""
    )
    body = f"""<div class="page"><div class="wrap"><div>
<div class="win"><div class="ret">{e(d["sorg"])}, {e(", ".join(d["saddr"]))}</div>{"<br>".join(e(x) for x in d["raddr"])}</div>
<div class="refs"><span><b>Your letter</b>{e(ctx.fmt_date(d["when"] - dt.timedelta(days=ctx.rng.randint(12, 40))))}</span>
<span><b>Our reference</b>{e(d["ref"])}</span><span><b>Date</b>{e(ctx.fmt_date(d["when"]))}</span></div>
<div class="re">Re: {e(d["subject"])}</div>{_letter_body(ctx, d)}
<p>{e(d["closing"])}</p><p style="margin-top:28px">{e(d["sender"])}</p></div>
<div class="side"><div class="org">{e(d["sorg"])}</div>{"<br>".join(e(x) for x in d["saddr"])}
<div class="k">Contact</div>{e(d["sender"])}<br>{e(d["role"])}<div class="k">Phone</div>{e(d["phone"])}
<div class="k">E-mail</div>{e(d["email"])}</div></div></div>"""
    qs = _letter_questions(ctx, d)
    qs = [x for x in qs if "reference" not in x.question] + [
        q("What is the reference number given under 'Our reference'?", d["ref"], "role")
    ]
    return Document(page_html(css, body, "letter"), qs)


DEPARTMENTS = (
    "Human Resources",
    "Research and Development",
    "Marketing",
    "Finance",
    "Customer Support",
    "Logistics",
    "Legal Affairs",
    "Information Technology",
    "Quality Assurance",
    "Public Relations",
)
PROGRAMMES = (
    "MSc Data Science",
    "BA International Relations",
    "MSc Mechanical Engineering",
    "LLM European Law",
    "BSc Nursing",
    "MA Linguistics",
    "MBA",
    "PhD Chemistry",
    "BSc Computer Science",
    "MA Art History",
)


def form_application(ctx: Ctx) -> Document:
    """A job application form: boxed fields with labels above the filled-in values, tick boxes, a
    declaration and a signature line with date."""
    s = ctx.style
    name = ctx.person()
    birth = ctx.date(dt.date(1965, 1, 1), 365 * 35)
    addr, city = address_lines(ctx, name)
    dept = ctx.pick(DEPARTMENTS)
    other = [x for x in DEPARTMENTS if x != dept]
    position = ctx.pick(
        (
            "Junior Analyst",
            "Team Assistant",
            "Software Developer",
            "Accountant",
            "Lab Technician",
            "Sales Representative",
            "Data Engineer",
            "HR Officer",
        )
    )
    start = ctx.date(dt.date(2024, 1, 1), 400)
    salary = ctx.rng.randrange(32, 90) * 1000
    notice = ctx.pick(("one month", "two months", "three months", "six weeks", "four weeks"))
    signed = ctx.date(dt.date(2023, 6, 1), 200)
    ref = ctx.ident("APP", 6)
    employer = ctx.company()
    email = ctx.email(name)
    phone = ctx.phone()
    boxes = [
        ("Surname", name.split()[-1]),
        ("First name(s)", " ".join(name.split()[:-1])),
        ("Date of birth", ctx.fmt_date(birth)),
        ("Nationality", ctx.country),
        ("Street and number", ctx.street()),
        ("Town / city", city),
        ("E-mail", email),
        ("Telephone", phone),
        ("Position applied for", position),
        ("Department", dept),
        ("Earliest start date", ctx.fmt_date(start)),
        ("Expected annual salary", ctx.money(salary)),
        ("Current employer", employer),
        ("Notice period", notice),
    ]
    cells = "".join(
        f'<div class="f"><div class="fl">{label(ctx, k)}</div><div class="fv">{e(v)}</div></div>' for k, v in boxes
    )
    ticks = "".join(
        f'<span class="tick">{"&#9746;" if ok else "&#9744;"} {e(t)}</span>'
        for t, ok in (("Full time", ctx.rng.random() < 0.7), ("Part time", False), ("Remote", ctx.rng.random() < 0.4))
    )
    css = (
        base_css(ctx)
        + f"""
.hdr {{ display: flex; justify-content: space-between; border-bottom: 2px solid {s.accent}; margin-bottom: 12px; }}
.grid {{ display: grid; grid-template-columns: 1fr 1fr; gap: 0; border: 1px solid #555; }}
.f {{ border: 1px solid #999; padding: 3px 7px 5px 7px; min-height: 44px; }}
.fl {{ font-size: 0.72em; color: {s.accent}; text-transform: uppercase; letter-spacing: 0.04em; }}
.fv {{ font-family: '{ctx.pick(("DejaVu Sans Mono", "Liberation Mono", "DejaVu Sans"))}'; color: #123c8c; font-size: 1.05em; }}
.sec {{ background: {s.accent}; color: #fff; padding: 3px 8px; margin-top: 12px; font-weight: 700; }}
.tick {{ margin-right: 24px; }}
.decl {{ font-size: 0.9em; margin-top: 10px; }}
.sigline {{ display: flex; gap: 40px; margin-top: 20px; }} .sigline div {{ border-top: 1px solid #000; width: 45%; padding-top: 3px; }}
"""
    )
    org = ctx.company()
    body = f"""<div class="page"><div class="hdr"><h2>{e(org)}</h2><div>Application form<br>Ref. {e(ref)}</div></div>
<div class="sec">{label(ctx, "1. Personal details and position")}</div><div class="grid">{cells}</div>
<div class="sec">{label(ctx, "2. Working arrangement")}</div><p>{ticks}</p>
<div class="decl">Applications for departments other than the one named above (for example {e(other[0])} or
{e(other[1])}) must be made on a separate form. The covering letter must not exceed
{ctx.pick((1, 2))} page(s) and references are requested only after the interview.</div>
<div class="sigline"><div>Date: {e(ctx.fmt_date(signed))}</div><div>Signature: {e(name)}</div></div></div>"""
    r = ctx.rng
    qs = [
        q(
            r.choice(("Which department does the applicant want to join?", "For which department is the application?")),
            dept,
            "role",
        ),
        q(
            r.choice(("What is the applicant's name?", "Who filled in this form?")),
            [name, f"{name.split()[-1]}"],
            "role",
            evidence=[name.split()[-1]],
        ),
        q("What is the applicant's date of birth?", ctx.fmt_date(birth), "role"),
        q("Which position is applied for?", position, "role"),
        q(r.choice(("What is the earliest start date?", "When can the applicant start?")), ctx.fmt_date(start), "role"),
        q("On what date was the form signed?", ctx.fmt_date(signed), "role"),
        q("What salary does the applicant expect?", ctx.amount_answers(salary), "lookup"),
        q("What is the applicant's notice period?", notice, "multi_token"),
        q("Who is the applicant's current employer?", employer, "entity_type"),
        q("In which town does the applicant live?", city, "entity_type"),
        q("What is the applicant's e-mail address?", email, "entity_type"),
        q("What is the reference number of the form?", ref, "entity_type"),
    ]
    return Document(page_html(css, body, "application form"), qs)


def form_registration(ctx: Ctx) -> Document:
    """A course / event registration form: two-column table with labels in the left column and values on
    dotted lines, a fee table, and conditions in prose with numbers."""
    s = ctx.style
    name = ctx.person()
    org = ctx.company()
    prog = ctx.pick(PROGRAMMES)
    inst = f"University of {ctx.city()}" if ctx.rng.random() < 0.5 else f"{ctx.city()} Institute of Technology"
    regno = ctx.ident("", 7)
    sem = (
        ctx.pick(("Winter semester", "Summer semester", "Autumn term", "Spring term"))
        + f" {ctx.rng.randint(2024, 2026)}"
    )
    fees = [
        ("Registration fee", ctx.rng.randint(40, 120)),
        ("Tuition", ctx.rng.randint(600, 4000)),
        ("Library card", ctx.rng.randint(10, 40)),
        ("Student union", ctx.rng.randint(20, 90)),
    ]
    total = sum(v for _, v in fees)
    birth = ctx.date(dt.date(1990, 1, 1), 365 * 14)
    supervisor = ctx.person()
    mode = ctx.pick(("full-time", "part-time"))
    deadline = ctx.date(dt.date(2024, 3, 1), 300)
    credits = ctx.pick((30, 60, 90, 120, 180))
    pairs = [
        ("Family name", name.split()[-1]),
        ("Given name", " ".join(name.split()[:-1])),
        ("Date of birth", ctx.fmt_date(birth)),
        ("Registration number", regno),
        ("Programme", prog),
        ("Study mode", mode),
        ("Semester", sem),
        ("Academic supervisor", supervisor),
        ("Sponsor", org),
        ("E-mail", ctx.email(name)),
    ]
    side = s.label_side
    rows = "".join(
        f'<tr><td class="l" style="text-align:{"right" if side == "right" else "left"}">{label(ctx, k)}</td>'
        f'<td class="v">{e(v)}</td></tr>'
        for k, v in pairs
    )
    fee_rows = [[k, ctx.money(v)] for k, v in fees]
    css = (
        base_css(ctx)
        + """
.title { text-align: center; margin-bottom: 4px; }
.sub { text-align: center; color: #555; margin-bottom: 16px; }
table.reg { width: 100%; } table.reg td { padding: 5px 6px; }
table.reg td.l { width: 36%; color: #333; font-weight: 600; }
table.reg td.v { border-bottom: 1px dotted #555; font-family: 'DejaVu Sans Mono'; }
.cond { font-size: 0.9em; margin-top: 14px; }
"""
    )
    body = f"""<div class="page"><h1 class="title">{e(inst)}</h1><div class="sub">Registration form · {e(sem)}</div>
<table class="reg">{rows}</table><h3>{label(ctx, "Fees")}</h3>
{table(ctx, ["Item", "Amount"], fee_rows, {1}, foot=[["Total", ctx.money(total)]])}
<div class="cond">Registration closes on {e(ctx.fmt_date(deadline))}. The programme comprises {credits} credits.
A student may take at most {ctx.rng.randint(4, 7)} modules per semester; late registration costs an additional
{e(ctx.money(ctx.rng.randint(15, 60)))}.</div></div>"""
    r = ctx.rng
    fee = ctx.pick(fees[:3])
    qs = [
        q(
            r.choice(("Which programme is the student registering for?", "What programme is named on the form?")),
            prog,
            "role",
        ),
        q("Who is the academic supervisor?", supervisor, "role"),
        q("What is the student's family name?", name.split()[-1], "role"),
        q("What is the registration number?", regno, "entity_type"),
        q("Which organisation sponsors the student?", org, "entity_type"),
        q("Which institution is the registration for?", inst, "entity_type"),
        q(f"How much is the {fee[0].lower()}?", ctx.amount_answers(fee[1]), "lookup"),
        q(f"Which fee amounts to {ctx.money(fee[1])}?", fee[0], "reverse_lookup"),
        q("What is the total of all fees?", ctx.amount_answers(total), "role"),
        q(
            f"What is the sum of the {fees[0][0].lower()} and the {fees[2][0].lower()}?",
            [str(fees[0][1] + fees[2][1]), ctx.money(fees[0][1] + fees[2][1])],
            "arithmetic",
            "table",
            evidence=[fees[0][0], fees[2][0]],
        ),
        q(
            "How many credits does the programme comprise?",
            str(credits),
            "prose_value",
            evidence=[f"{credits} credits"],
        ),
        q("When does registration close?", ctx.fmt_date(deadline), "prose_value"),
        q("For which semester is the registration?", sem, "multi_token"),
    ]
    return Document(page_html(css, body, "registration form"), qs)


TOPICS = (
    "Budget for next year",
    "Office relocation",
    "New website",
    "Staff training plan",
    "Safety inspection",
    "Supplier contracts",
    "Summer party",
    "IT security policy",
    "Recruitment",
    "Customer survey results",
    "Quarterly sales figures",
    "Parking arrangements",
    "Sustainability goals",
    "Archive digitisation",
)


def minutes_meeting(ctx: Ctx) -> Document:
    """Minutes of a team meeting: a header block (date, time, place, chair, minute taker), attendees and
    apologies, numbered agenda items with discussion and decisions, an action table (action, owner, due)."""
    s = ctx.style
    org = ctx.company()
    people = ctx.people(7)
    chair, taker = people[0], people[1]
    apologies = people[5:7]
    when = ctx.date()
    start = ctx.rng.randint(8, 15) * 60 + ctx.pick((0, 15, 30))
    length = ctx.rng.randint(50, 150)
    room = ctx.pick(("Room 2.14", "Board room", "Meeting room B", "Conference room 3", "Online (video call)"))
    topics = ctx.sample(TOPICS, 4)
    owners = ctx.sample(people[:5], 3)
    dues = sorted({when + dt.timedelta(days=ctx.rng.randint(5, 60)) for _ in range(3)})
    while len(dues) < 3:
        dues.append(dues[-1] + dt.timedelta(days=3))
    actions = [(f"Prepare a proposal on {topics[i].lower()}", owners[i], dues[i]) for i in range(3)]
    amount = ctx.rng.randrange(5, 90) * 1000
    nxt = when + dt.timedelta(days=ctx.pick((14, 21, 28, 35)))
    items = "".join(
        f"<li><b>{e(t)}</b>. {e(ctx.pick(people[:5]).split()[0])} presented the current state. "
        + (
            f"The team agreed a budget of {e(ctx.money(amount))}."
            if i == 1
            else "Discussion followed; no objections were raised."
        )
        + "</li>"
        for i, t in enumerate(topics)
    )
    act_rows = [[a, o, ctx.fmt_date(d)] for a, o, d in actions]
    header = field_rows(
        ctx,
        [
            ("Date", ctx.fmt_date(when)),
            ("Time", f"{ctx.time(start)} - {ctx.time(start + length)}"),
            ("Location", room),
            ("Chair", chair),
            ("Minutes", taker),
        ],
    )
    css = (
        base_css(ctx)
        + f"""
.t {{ border-bottom: 2px solid {s.accent}; margin-bottom: 10px; }}
ol li {{ margin-bottom: 6px; }}
"""
    )
    body = f"""<div class="page"><div class="t"><h1>Minutes of the team meeting</h1><div>{e(org)}</div></div>
{header}<p><b>Present:</b> {e(", ".join(people[:5]))}<br><b>Apologies:</b> {e(", ".join(apologies))}</p>
<h3>{label(ctx, "Agenda and discussion")}</h3><ol>{items}</ol>
<h3>{label(ctx, "Actions")}</h3>{table(ctx, ["Action", "Owner", "Due"], act_rows)}
<p>The meeting closed at {e(ctx.time(start + length))}. Next meeting: {e(ctx.fmt_date(nxt))}.</p></div>"""
    r = ctx.rng
    a = ctx.pick(actions)
    b = ctx.pick([x for x in actions if x != a])
    qs = [
        q(r.choice(("Who chaired the meeting?", "Who was the chair?")), chair, "role"),
        q(r.choice(("Who took the minutes?", "Who wrote these minutes?")), taker, "role"),
        q("On what date was the meeting held?", ctx.fmt_date(when), "role"),
        q("When is the next meeting?", ctx.fmt_date(nxt), "role"),
        q("Where did the meeting take place?", room, "entity_type"),
        q(f"Who is responsible for the action '{a[0]}'?", a[1], "lookup"),
        q(f"By when must {b[1]} complete their action?", ctx.fmt_date(b[2]), "lookup"),
        q(f"Which action is due on {ctx.fmt_date(a[2])}?", a[0], "reverse_lookup"),
        q(
            "Who sent apologies?",
            [", ".join(apologies), " and ".join(apologies)],
            "entity_type",
            evidence=[", ".join(apologies)],
        ),
        q("What budget did the team agree?", ctx.amount_answers(amount), "prose_value"),
        q(
            "From what time to what time did the meeting run?",
            f"{ctx.time(start)} - {ctx.time(start + length)}",
            "multi_token",
        ),
        q("At what time did the meeting close?", ctx.time(start + length), "prose_value"),
        q("How many people were present?", str(5), "arithmetic", "table", evidence=people[:5]),
    ]
    return Document(page_html(css, body, "minutes"), qs)


def minutes_board(ctx: Ctx) -> Document:
    """Minutes of a board / association meeting: a header table with rules, quorum statement, numbered
    resolutions each with votes for / against / abstentions, and the signatures of chair and secretary."""
    assoc = f"{ctx.city()} {ctx.pick(('Rowing Club', 'Historical Society', 'Housing Cooperative', 'Chamber Choir', 'Tennis Association', 'Allotment Society'))}"
    chair, sec, treas = ctx.people(3)
    when = ctx.date()
    members = ctx.rng.randint(18, 60)
    present = ctx.rng.randint(10, members)
    while True:
        res = []
        for title in ctx.sample(
            (
                "Approval of the annual accounts",
                "Increase of the membership fee",
                "Election of the treasurer",
                "Purchase of new equipment",
                "Amendment of the statutes",
                "Appointment of the auditors",
                "Budget for the anniversary event",
            ),
            3,
        ):
            yes = ctx.rng.randint(present // 3, present)
            no = ctx.rng.randint(0, present - yes)
            res.append((title, yes, no, present - yes - no))
        if len({r[1] for r in res}) == 3:
            break
    fee_old = ctx.rng.randint(30, 80)
    fee_new = fee_old + ctx.pick((5, 10, 15, 20))
    start = ctx.rng.randint(17, 20) * 60 + ctx.pick((0, 30))
    rows = [
        [f"{i + 1}. {t}", str(y), str(n), str(a), "carried" if y > n else "rejected"]
        for i, (t, y, n, a) in enumerate(res)
    ]
    head = table(
        ctx,
        [],
        [
            ["Meeting", "Annual general meeting"],
            ["Date", ctx.fmt_date(when)],
            ["Opened", ctx.time(start)],
            ["Chair", chair],
            ["Secretary", sec],
        ],
        rules="grid",
        cls="data hd",
    )
    css = (
        base_css(ctx)
        + """
table.hd { width: 70%; } table.hd td:first-child { font-weight: 700; width: 30%; background: #f0f0f0; }
.sigs { display: flex; justify-content: space-between; margin-top: 40px; }
.sigs div { border-top: 1px solid #333; width: 40%; padding-top: 4px; text-align: center; }
"""
    )
    body = f"""<div class="page"><h1>{e(assoc)}</h1><h3>Minutes of the annual general meeting</h3>{head}
<p>Of the {members} members, {present} were present, so the meeting had a quorum. The treasurer, {e(treas)},
presented the accounts. The membership fee will rise from {e(ctx.money(fee_old))} to {e(ctx.money(fee_new))}
per year if resolution 2 is carried.</p>
<h3>{label(ctx, "Resolutions")}</h3>{table(ctx, ["Resolution", "For", "Against", "Abstentions", "Result"], rows, {1, 2, 3})}
<div class="sigs"><div>{e(chair)}<br>Chair</div><div>{e(sec)}<br>Secretary</div></div></div>"""
    r = ctx.rng
    t, y, n, a = ctx.pick(res)
    t2, y2, n2, a2 = ctx.pick([x for x in res if x[0] != t])
    qs = [
        q(r.choice(("Who chaired the meeting?", "Who was the chair of the annual general meeting?")), chair, "role"),
        q("Who is the secretary?", sec, "role"),
        q("Who is the treasurer?", treas, "relation"),
        q("On what date was the meeting?", ctx.fmt_date(when), "role"),
        q("How many members were present?", str(present), "prose_value", evidence=[f"{present} were present"]),
        q(
            "How many members does the association have?",
            str(members),
            "prose_value",
            evidence=[f"Of the {members} members"],
        ),
        q(f"How many votes for did '{t}' receive?", str(y), "lookup", evidence=[t]),
        q(f"How many members voted against '{t2}'?", str(n2), "lookup", evidence=[t2]),
        q(f"Which resolution received {y} votes for?", [t, f"{res.index((t, y, n, a)) + 1}. {t}"], "reverse_lookup"),
        q(
            f"How many votes in total (for, against and abstentions) were cast on '{t}'?",
            str(y + n + a),
            "arithmetic",
            "table",
            evidence=[t],
        ),
        q(f"Was '{t2}' carried? Answer yes or no.", "yes" if y2 > n2 else "no", "arithmetic", "table", evidence=[t2]),
        q("What will the new membership fee be?", ctx.amount_answers(fee_new), "prose_value"),
        q("What is the name of the association?", assoc, "entity_type"),
    ]
    return Document(page_html(css, body, "board minutes"), qs)
