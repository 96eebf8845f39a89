"""Business prose with planted facts: paragraphs for letters, memos and reports, and questions on them."""

from __future__ import annotations

import numpy as np

from . import vocab as V
from .questions import QA, phrase

_FILLER = (
    "We appreciate the continued cooperation of every team involved in the {topic}.",
    "The figures below were reviewed by the {dept} department before publication.",
    "Please keep this document for your records and share it with the relevant staff.",
    "As discussed during our last meeting, several open points remain to be settled.",
    "Our priority for the coming months is to keep costs under control while improving service.",
    "The results so far are encouraging, although some delays were reported by our partners.",
    "Further details will be circulated once the review by the {dept} team is complete.",
    "We expect the changes to take effect gradually over the next two quarters.",
    "Feedback from customers has been largely positive, with a few requests for faster delivery.",
    "The attached schedule lists the responsibilities of each department.",
    "Staff members are reminded that all expenses must be approved in advance.",
    "This summary reflects information available at the time of writing.",
    "Thank you for your attention to this matter and for your prompt response.",
    "Any questions about the {topic} can be raised at the next team meeting.",
    "We have also updated the internal guidelines to reflect these decisions.",
    "The committee agreed that the current procedures are adequate for now.",
)

_ROOMS = ("Room 101", "Room 214", "Room 305", "Room 412", "Conference Room B", "Board Room", "Room 7A")
_REGIONS = ("Northern", "Southern", "Eastern", "Western", "Central", "Coastal")
_ITEMS = (
    "expense reports",
    "timesheets",
    "project proposals",
    "budget requests",
    "travel claims",
    "safety checklists",
    "vendor invoices",
)


def _time(rng: np.random.Generator) -> str:
    hour = int(rng.integers(8, 17))
    minute = int(rng.choice([0, 15, 30, 45]))
    suffix = "AM" if hour < 12 else "PM"
    return f"{(hour - 1) % 12 + 1}:{minute:02d} {suffix}"


def fact(rng: np.random.Generator, doc: str) -> tuple[str, list[QA]]:
    """One sentence carrying a checkable fact, and the questions whose answers are phrases in it."""
    kind = int(rng.integers(6))
    style = V.pick(rng, V.DATE_STYLES)
    if kind == 0:
        facility, (city, _, _) = V.pick(rng, V.FACILITIES), V.pick(rng, V.CITIES)
        d = V.date(rng, 2019, 2026)
        ds = V.format_date(d, style)
        s = f"The new {facility} in {city} will open on {ds}."
        return s, [
            QA(
                phrase(
                    rng,
                    (
                        "When will the new {f} open?",
                        "On what date does the new {f} open?",
                        "What is the opening date of the new {f}?",
                    ),
                    f=facility,
                ),
                V.date_answers(d, ds),
                "date",
                subset=doc,
                printed=True,
            ),
            QA(
                phrase(
                    rng,
                    (
                        "Where will the new {f} open?",
                        "In which city is the new {f} opening?",
                        "The new {f} will open in which city?",
                    ),
                    f=facility,
                ),
                (city,),
                "phrase",
                subset=doc,
                printed=True,
            ),
        ]
    if kind == 1:
        project = V.pick(rng, V.PROJECT_NAMES)
        value = float(rng.integers(5, 900)) * 1000.0
        printed = V.money(value, 0)
        s = f"The budget approved for {project} is {printed} for the current year."
        return s, [
            QA(
                phrase(
                    rng,
                    (
                        "What budget was approved for {p}?",
                        "How much money was approved for {p}?",
                        "What is the approved budget of {p}?",
                    ),
                    p=project,
                ),
                V.money_answers(value, printed, 0),
                "amount",
                subset=doc,
                printed=True,
            )
        ]
    if kind == 2:
        topic, room, t = V.pick(rng, V.TOPICS), V.pick(rng, _ROOMS), _time(rng)
        d = V.date(rng, 2019, 2026)
        ds = V.format_date(d, style)
        s = f"The {topic} meeting is scheduled for {ds} at {t} in {room}."
        return s, [
            QA(
                phrase(
                    rng,
                    (
                        "At what time is the {t} meeting?",
                        "What time does the {t} meeting start?",
                        "When, on the day, does the {t} meeting begin?",
                    ),
                    t=topic,
                ),
                (t, t.replace(" ", "").lower(), t.lower()),
                "phrase",
                subset=doc,
                printed=True,
            ),
            QA(
                phrase(
                    rng,
                    (
                        "Where will the {t} meeting be held?",
                        "In which room is the {t} meeting?",
                        "What is the location of the {t} meeting?",
                    ),
                    t=topic,
                ),
                (room,),
                "phrase",
                subset=doc,
                printed=True,
            ),
            QA(
                phrase(rng, ("On what date is the {t} meeting scheduled?", "When is the {t} meeting?"), t=topic),
                V.date_answers(d, ds),
                "date",
                subset=doc,
                printed=True,
            ),
        ]
    if kind == 3:
        name, dept = V.person(rng), V.pick(rng, V.DEPARTMENTS)
        s = f"Questions should be directed to {name} in the {dept} department."
        return s, [
            QA(
                phrase(
                    rng,
                    (
                        "Who should questions be directed to?",
                        "Whom should readers contact with questions?",
                        "Who is the contact person for questions?",
                    ),
                ),
                (name,),
                "name",
                subset=doc,
                printed=True,
            ),
            QA(
                phrase(
                    rng,
                    (
                        "Which department is the contact person in?",
                        "In which department does the contact person for questions work?",
                    ),
                ),
                (dept, f"{dept} department"),
                "phrase",
                subset=doc,
                printed=True,
            ),
        ]
    if kind == 4:
        region, pct = V.pick(rng, _REGIONS), int(rng.integers(2, 40))
        verb = V.pick(rng, ("rose", "fell"))
        s = f"Sales in the {region} region {verb} by {pct}% compared with the previous year."
        return s, [
            QA(
                phrase(
                    rng,
                    (
                        "By what percentage did sales in the {r} region change?",
                        "How much did sales in the {r} region {v} by, in percent?",
                        "What was the percentage change in sales in the {r} region?",
                    ),
                    r=region,
                    v="rise" if verb == "rose" else "fall",
                ),
                (f"{pct}%", str(pct), f"{pct} percent"),
                "phrase",
                subset=doc,
                printed=True,
            )
        ]
    items = V.pick(rng, _ITEMS)
    d = V.date(rng, 2019, 2026)
    ds = V.format_date(d, style)
    s = f"All {items} must be submitted no later than {ds}."
    return s, [
        QA(
            phrase(
                rng,
                ("What is the deadline for submitting {i}?", "By when must {i} be submitted?", "When are {i} due?"),
                i=items,
            ),
            V.date_answers(d, ds),
            "date",
            subset=doc,
            printed=True,
        )
    ]


def paragraphs(rng: np.random.Generator, doc: str, count: int, facts: int) -> tuple[list[str], list[QA]]:
    """``count`` paragraphs of 2-4 sentences with ``facts`` fact sentences spread among them."""
    paras: list[list[str]] = []
    for _ in range(count):
        sentences = [
            V.pick(rng, _FILLER).format(topic=V.pick(rng, V.TOPICS), dept=V.pick(rng, V.DEPARTMENTS))
            for _ in range(int(rng.integers(2, 4)))
        ]
        paras.append(sentences)
    qas: list[QA] = []
    used: set[str] = set()
    for _ in range(facts):
        sentence, qs = fact(rng, doc)
        if sentence.split()[1] in used:  # keep fact kinds distinct so questions stay unambiguous
            continue
        used.add(sentence.split()[1])
        target = paras[int(rng.integers(len(paras)))]
        target.insert(int(rng.integers(len(target) + 1)), sentence)
        qas.extend(qs)
    return [" ".join(p) for p in paras], qas
