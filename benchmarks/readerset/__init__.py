"""Synthetic training pages for the reader's candidate scorer: 20 document kinds, each with five templates
(a layout family is ``<kind>-t<n>``), every document drawing its own style knobs, with questions whose gold
answers are known by construction. :func:`make` builds one document; ``benchmarks/reader_corpus.py`` renders
and checks them."""

from __future__ import annotations

import random
from collections.abc import Callable

from broadset.common import LOCALE_NAMES, Ctx

from . import academic, money, office
from .base import CSS, Q, Sheet

#: kind -> (builder, the arrangements of its templates t1 .. t5)
KINDS: dict[str, tuple[Callable[[Sheet, str], str], tuple[str, ...]]] = {
    "invoice": (money.invoice, ("split", "ledger", "framed", "sidebar", "footmeta")),
    "receipt": (money.receipt, ("centered", "stack", "memo", "rightrail", "inline")),
    "purchase_order": (money.purchase_order, ("ledger", "cards", "stack", "footmeta", "hero")),
    "delivery_note": (money.delivery_note, ("framed", "split", "banner", "inline", "sidebar")),
    "bank_statement": (money.bank_statement, ("banner", "split", "cards", "hero", "rightrail")),
    "utility_bill": (money.utility_bill, ("cards", "ledger", "stack", "sidebar", "footmeta")),
    "payslip": (money.payslip, ("framed", "cards", "ledger", "rightrail", "inline")),
    "price_list": (money.price_list, ("centered", "banner", "stack", "footmeta", "hero")),
    "letter": (office.letter, ("stack", "ledger", "banner", "inline", "sidebar")),
    "memo": (office.memo, ("memo", "framed", "stack", "hero", "rightrail")),
    "minutes": (office.minutes, ("stack", "banner", "cards", "sidebar", "footmeta")),
    "application_form": (office.application_form, ("framed", "banner", "split", "rightrail", "inline")),
    "certificate": (office.certificate, ("centered", "framed", "banner", "footmeta", "hero")),
    "cv": (office.cv, ("stack", "split", "cards", "inline", "sidebar")),
    "paper": (academic.paper, ("centered", "stack", "banner", "hero", "rightrail")),
    "programme": (academic.programme, ("banner", "centered", "cards", "sidebar", "footmeta")),
    "timetable": (academic.timetable, ("stack", "framed", "ledger", "rightrail", "inline")),
    "exam_sheet": (academic.exam_sheet, ("framed", "cards", "ledger", "footmeta", "hero")),
    "spec_sheet": (academic.spec_sheet, ("split", "banner", "cards", "inline", "sidebar")),
    "report_table": (academic.report_table, ("stack", "ledger", "framed", "hero", "rightrail")),
}
FAMILIES = tuple(f"{k}-t{i + 1}" for k, (_, arrangements) in KINDS.items() for i in range(len(arrangements)))
#: how many questions of each family a page keeps at most (look-ups fill the rest)
CAPS = {"generic": 2, "table_cell": 2, "relation": 2, "entity_type": 1, "prose_value": 1, "unanswerable": 1}


def doc_seed(seed: int, index: int) -> int:
    """The seed of document ``index`` of a corpus built with ``seed``."""
    return (seed * 1_000_003 + index * 7919 + 17) % (2**31)


def family_order(seed: int, n: int) -> list[str]:
    """Families of documents 0..n-1: each run of len(FAMILIES) documents covers every family once."""
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < n:
        block = list(FAMILIES)
        rng.shuffle(block)
        out.extend(block)
    return out[:n]


def make(seed: int, index: int, family: str) -> dict:
    """One document: its ``<section>`` HTML, metadata and chosen questions (not yet checked on the page)."""
    kind, tid = family.rsplit("-t", 1)
    s = doc_seed(seed, index)
    ctx = Ctx(s, LOCALE_NAMES[s % len(LOCALE_NAMES)])
    sheet = Sheet(ctx, kind, int(tid))
    build, arrangements = KINDS[kind]
    html = build(sheet, arrangements[int(tid) - 1])
    if ctx.rng.random() < 0.5:
        sheet.foreign()
    return {
        "html": html,
        "kind": kind,
        "family": family,
        "variant": sheet.k.digest(family),
        "locale": ctx.locale,
        "questions": choose(sheet),
    }


def _words(text: str) -> int:
    return len(text.split())


def choose(sheet: Sheet) -> list[Q]:
    """8-10 questions of the page's pool: capped numbers of each family (drawn at random), look-ups for the
    rest, one look-up turned into an "at most N words" question now and then; never the same wording twice,
    never two unanswerable ones."""
    r = sheet.rng
    pool = list(sheet.pool)
    r.shuffle(pool)
    want = r.randint(8, 10)
    taken: list[Q] = []
    seen: set[str] = set()
    count: dict[str, int] = {}
    for q in pool:
        cap = CAPS.get(q.family, 99)
        if q.question in seen or count.get(q.family, 0) >= cap:
            continue
        if q.family == "unanswerable" and q.field in sheet.keys:
            continue
        taken.append(q)
        seen.add(q.question)
        count[q.family] = count.get(q.family, 0) + 1
    rest = [q for q in taken if q.family == "lookup"]
    keep = [q for q in taken if q.family != "lookup"][: max(want - 2, 4)]
    keep += rest[: max(0, want - len(keep))]
    spare = [q for q in pool if q.family == "lookup" and q not in keep and q.answers]
    if spare and r.random() < 0.6:
        q = spare[0]
        n = max(_words(q.answers[0]), 1) + r.randint(0, 3)
        w = "word" if n == 1 else "words"
        text = r.choice(
            (
                f"{q.question} Answer in at most {n} {w}.",
                f"In at most {n} {w}: {q.question}",
                f"{q.question} (no more than {n} {w})",
            )
        )
        keep.append(Q(text, q.answers, "limit", q.field, q.evidence))
    r.shuffle(keep)
    return keep


__all__ = ["CSS", "FAMILIES", "KINDS", "choose", "doc_seed", "family_order", "make"]
