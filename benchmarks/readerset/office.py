"""Office documents of the reader corpus: letter, memo, meeting minutes, application form, certificate and CV."""

from __future__ import annotations

import datetime as dt

from broadset.common import address_lines, e, prose

from .base import Sheet

TOPICS = (
    "the renewal of the maintenance contract",
    "the office relocation",
    "the annual budget review",
    "the new travel policy",
    "the software rollout",
    "the customer survey results",
    "the safety inspection",
    "the recruitment plan",
    "the supplier agreement",
    "the training programme",
)


def letter(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    sender, org = c.person(), c.company()
    to, to_org = c.person(), c.company() if r.random() < 0.6 else None
    slines, scity = address_lines(c, org)
    tlines, tcity = address_lines(c, to, to_org)
    day = c.date()
    topic = r.choice(TOPICS)
    meet = day + dt.timedelta(days=r.randint(5, 40))
    room = f"Room {r.randint(100, 699)}"
    sh.generic("sender", [sender, org])
    sh.generic("addressee", [to] + ([to_org] if to_org else []))
    sh.ask(r.choice(("Who is the letter addressed to?", "To whom is this letter written?")), to, "lookup", "addressee")
    sh.ask(r.choice(("Who signed the letter?", "Who wrote the letter?")), sender, "lookup", "signatory")
    sh.ask(
        r.choice((f"In which city is {to_org or to}?", "In which city does the recipient live?")),
        tcity,
        "relation",
        "city",
    )
    sh.ask(f"In which city is {org} located?", scity, "relation", "city")
    sh.ask(
        r.choice(("When will the meeting take place?", "On which date is the proposed meeting?")),
        c.fmt_date(meet),
        "prose_value",
        "meeting_date",
    )
    sh.ask("Where will the meeting be held?", room, "prose_value", "meeting_room")
    subj = f"{r.choice(('Regarding', 'Re:', 'Concerning'))} {topic}"
    meta = [
        sh.fld("date", c.fmt_date(day), vtype="date", generic="date"),
        sh.fld("reference", c.ident(r.choice(("REF", "AZ", "L")), 5), vtype="id", optional=0.5),
        sh.fld("phone", c.phone(), entity="phone", optional=0.4),
        sh.fld("email", c.email(sender, c.domain(org)), entity="email", optional=0.4),
    ]
    sh.ask("What is the letter about?", [topic, subj], "lookup", "subject", [topic])
    sh.missing("invoice_number", "id")
    body = (
        sh.para(f"Dear {to.split()[0] if r.random() < 0.5 else to},")
        + sh.para(f"I am writing to you about {topic}. {prose(c, 2)}")
        + sh.para(f"I suggest that we meet on {c.fmt_date(meet)} in {room} to discuss the next steps. {prose(c, 1)}")
        + sh.para(prose(c, r.randint(1, 3)))
    )
    sign = sh.lines(
        [r.choice(("Yours sincerely,", "Kind regards,", "Best regards,")), "", sender, c.fake.job()[:32], org], "sig"
    )
    blocks = {
        "head": sh.lines(slines, "small"),
        "parties": sh.lines(tlines),
        "meta": sh.kv(meta),
        "body": f"<h3>{e(subj)}</h3>" + body,
        "sign": sign,
    }
    return sh.page(arrangement, blocks, header=org, footer=org)


def memo(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    org = c.company()
    frm, to, cc = c.people(3)
    topic = r.choice(TOPICS)
    day = c.date()
    deadline = day + dt.timedelta(days=r.randint(3, 30))
    meta = [
        sh.fld("to", to, vtype="person", generic="addressee"),
        sh.fld("from", frm, vtype="person", generic="sender"),
        sh.fld("cc", cc, vtype="person", optional=0.4),
        sh.fld("date", c.fmt_date(day), vtype="date", generic="date"),
        sh.fld("subject", topic[0].upper() + topic[1:], [topic]),
    ]
    sh.ask(r.choice(("Who wrote the memo?", "Who is the memo from?")), frm, "lookup", "sender")
    sh.ask(
        r.choice(("By when must feedback be sent?", "What is the deadline for comments?")),
        c.fmt_date(deadline),
        "prose_value",
        "deadline",
    )
    n = r.randint(3, 40)
    sh.ask("How many staff are affected?", str(n), "prose_value", "staff_count")
    sh.missing("total", "money")
    body = (
        sh.para(f"This memo concerns {topic}. {prose(c, 2)}")
        + sh.para(f"The change affects {n} members of staff. Please send your comments by {c.fmt_date(deadline)}.")
        + sh.para(prose(c, 2))
    )
    head = f"<h1>{e(r.choice(('MEMORANDUM', 'Memo', 'Internal memo', 'Interoffice Memorandum')))}</h1>"
    return sh.page(
        arrangement,
        {"head": head, "meta": sh.kv(meta), "body": body, "notes": f"<div class='small'>{e(org)}</div>"},
        header=org,
        footer="Internal",
    )


def minutes(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    org = c.company()
    people = c.people(r.randint(4, 7))
    chair, sec = people[0], people[1]
    day = c.date()
    nxt = day + dt.timedelta(days=r.choice((7, 14, 28)))
    group = r.choice(
        ("Project steering group", "Staff committee", "Board of directors", "Works council", "Editorial team")
    )
    meta = [
        sh.fld("date", c.fmt_date(day), vtype="date", generic="date"),
        sh.fld("time", c.time(r.randrange(8 * 60, 17 * 60, 15))),
        sh.fld("location", f"{r.choice(('Room', 'Hall', 'Suite'))} {r.randint(1, 40)}{r.choice('ABC')}"),
        sh.fld("chair", chair, vtype="person"),
        sh.fld("minute_taker", sec, vtype="person", optional=0.3),
        sh.fld("next_meeting", c.fmt_date(nxt), vtype="date", optional=0.3),
    ]
    sh.ask("Who chaired the meeting?", chair, "relation", "chair")
    items = c.sample(
        (
            "Budget",
            "Staffing",
            "IT systems",
            "Health and safety",
            "Marketing plan",
            "Premises",
            "Any other business",
            "Customer feedback",
        ),
        4,
    )
    owners = c.sample(people, 4)
    dues = [c.fmt_date(day + dt.timedelta(days=r.randint(5, 50))) for _ in items]
    rows = [[str(i + 1), t, o, d] for i, (t, o, d) in enumerate(zip(items, owners, dues))]
    for row in c.sample(rows, 2):
        sh.ask(
            r.choice((f"Who is responsible for the {row[1].lower()} action?", f"Who owns the item {row[1]}?")),
            row[2],
            "table_cell",
            "owner",
        )
        sh.ask(f"When is the {row[1].lower()} action due?", row[3], "table_cell", "action_due")
    sh.ask("How many people attended?", str(len(people)), "relation", "attendee_count", [people[-1]])
    title = f"Minutes of the {group} meeting"
    sh.generic("title", [title, group], [group])
    sh.missing("total", "money")
    body = f"<div><b>Present:</b> {e(', '.join(people))}</div>" + sh.para(prose(c, 3))
    return sh.page(
        arrangement,
        {
            "head": f"<h2>{e(title)}</h2><div>{e(org)}</div>",
            "meta": sh.kv(meta),
            "body": body,
            "table": sh.tbl(["#", "Item", "Action owner", "Due"], rows),
        },
        header=org,
        footer=org,
    )


def application_form(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    org = c.company()
    name = c.person()
    lines, city = address_lines(c, name)
    born = dt.date(r.randint(1960, 2004), r.randint(1, 12), r.randint(1, 28))
    signed = c.date()
    meta = [
        sh.fld("application_number", c.ident("APP", 6), vtype="id", optional=0.3),
        sh.fld("applicant", name, vtype="person"),
        sh.fld("birth_date", c.fmt_date(born), vtype="date", optional=0.3),
        sh.fld("nationality", c.country, optional=0.4),
        sh.fld("address", ", ".join(lines[1:]), [city], ask=False),
        sh.fld("phone", c.phone(), entity="phone"),
        sh.fld("email", c.email(name), entity="email", optional=0.3),
        sh.fld("position", c.fake.job()[:34]),
        sh.fld("start_date", c.fmt_date(c.date(signed, 120)), vtype="date", optional=0.3),
    ]
    sh.ask(r.choice(("In which city does the applicant live?", f"Where does {name} live?")), city, "relation", "city")
    sh.generic("sender", name)
    sh.generic("addressee", org)
    sig = sh.kv(
        [sh.fld("signature_date", c.fmt_date(signed), vtype="date", generic="date"), ("Signature", "________________")]
    )
    ticks = c.sample(("Full-time", "Part-time", "Remote", "On-site", "Fixed-term"), 2)
    sh.ask("Which working arrangement is ticked?", ticks[0], "lookup", "arrangement")
    box = f"<div>☒ {e(ticks[0])} &nbsp; ☐ {e(ticks[1])}</div>"
    sh.missing("total", "money")
    title = r.choice(("Application form", "Job application", "Application for employment"))
    sh.generic("title", [title], [title])
    return sh.page(
        arrangement,
        {
            "head": f"<h2>{e(title)}</h2><div>{e(org)}</div>",
            "meta": sh.kv(meta),
            "notes": box,
            "sign": sig,
            "body": sh.para("Please complete all fields in block capitals."),
        },
        header=org,
        footer=f"Form {r.randint(10, 99)}",
    )


def certificate(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    org = c.company() + r.choice((" Academy", " Institute", " Training Centre", ""))
    who, signer = c.people(2)
    course = r.choice(
        (
            "First Aid at Work",
            "Project Management Essentials",
            "Advanced Excel",
            "Food Hygiene",
            "Data Protection Basics",
            "Forklift Operation",
            "Public Speaking",
            "Fire Safety",
        )
    )
    day = c.date()
    hours = r.randint(6, 120)
    title = r.choice(("Certificate of Completion", "Certificate of Achievement", "Certificate of Attendance"))
    sh.generic("title", [title], [title])
    sh.ask(
        r.choice(("Who received the certificate?", "To whom is the certificate awarded?")), who, "lookup", "recipient"
    )
    sh.ask(
        r.choice(("Which course was completed?", "What course is the certificate for?")),
        course,
        "prose_value",
        "course",
    )
    sh.ask("How many hours did the course last?", [str(hours), f"{hours} hours"], "prose_value", "hours")
    sh.ask("Who signed the certificate?", signer, "lookup", "signatory")
    meta = [
        sh.fld("certificate_number", c.ident("C", 7), vtype="id", optional=0.3),
        sh.fld("date", c.fmt_date(day), vtype="date", generic="date"),
        sh.fld("grade", r.choice(("Pass", "Merit", "Distinction", "Excellent")), optional=0.4),
        sh.fld("valid_until", c.fmt_date(day + dt.timedelta(days=365 * r.randint(1, 3))), vtype="date", optional=0.4),
    ]
    sh.generic("sender", org)
    sh.missing("invoice_number", "id")
    body = f"<div>This is to certify that</div><h1>{e(who)}</h1>" + sh.para(
        f"has successfully completed the course {course} ({hours} hours)."
    )
    return sh.page(
        arrangement,
        {
            "head": f"<h1>{e(title)}</h1><div>{e(org)}</div>",
            "body": body,
            "meta": sh.kv(meta),
            "sign": sh.lines(["________________", signer, "Director"], "sig"),
        },
    )


def cv(sh: Sheet, arrangement: str) -> str:
    c, r = sh.ctx, sh.rng
    name = c.person()
    lines, city = address_lines(c, name)
    jobs = []
    year = r.randint(2000, 2012)
    for org in c.companies(3):
        y2 = year + r.randint(1, 5)
        jobs.append([f"{year}–{y2}", c.fake.job()[:30], org])
        year = y2
    jobs.reverse()
    sh.ask(
        r.choice(("Who is the CV about?", "Whose résumé is this?", "What is the candidate's name?")),
        name,
        "lookup",
        "name",
    )
    sh.generic("author", name)
    sh.ask("Where does the candidate live?", city, "relation", "city")
    job = r.choice(jobs)
    sh.ask(
        r.choice((f"Which role did the candidate hold at {job[2]}?", f"What was the job title at {job[2]}?")),
        job[1],
        "table_cell",
        "role",
    )
    sh.ask(f"When did the candidate work at {job[2]}?", job[0], "table_cell", "years")
    sh.ask("What is the candidate's current employer?", jobs[0][2], "relation", "employer")
    uni = f"University of {c.city()}"
    deg = r.choice(("BSc Computer Science", "MA History", "BA Economics", "MSc Physics", "BEng Civil Engineering"))
    sh.ask("Which degree does the candidate hold?", deg, "lookup", "degree")
    sh.ask("Where did the candidate study?", uni, "relation", "university")
    meta = [
        sh.fld("phone", c.phone(), entity="phone"),
        sh.fld("email", c.email(name), entity="email"),
        sh.fld(
            "birth_date",
            c.fmt_date(dt.date(r.randint(1970, 2000), r.randint(1, 12), r.randint(1, 28))),
            vtype="date",
            optional=0.5,
        ),
        sh.fld("nationality", c.country, optional=0.5),
    ]
    langs = ", ".join(c.sample(("English", "German", "French", "Spanish", "Italian", "Dutch", "Polish"), 3))
    sh.missing("invoice_number", "id")
    title = r.choice(("Curriculum Vitae", "Résumé", "CV"))
    blocks = {
        "head": f"<h1>{e(name)}</h1><div>{e(title)}</div>",
        "parties": sh.lines(lines[1:], "small"),
        "meta": sh.kv(meta),
        "table": "<h3>Experience</h3>" + sh.tbl(["Years", "Role", "Employer"], jobs),
        "body": f"<h3>Education</h3><div>{e(deg)}, {e(uni)}</div><h3>Profile</h3>" + sh.para(prose(c, 2)),
        "notes": f"<div><b>Languages:</b> {e(langs)}</div>",
    }
    return sh.page(arrangement, blocks)
