"""Typed answer spans read from page layouts, and Phase B's verdicts from its measurements.

Layouts are built from positioned lines as the OCR would return them (page fractions), so these tests check
the reading rules without running OCR; the real-page set in benchmarks/ measures them on photographed pages.
"""

from __future__ import annotations

import numpy as np
import pytest

from docintent.brains.offline import ReviewEvidence
from docintent.layout.lines import Item, Layout
from docintent.page import Box, Page
from docintent.reader.answer import solve
from docintent.reader.extract import Matcher, best_candidate
from docintent.reader.question import analyse
from docintent.reader.spans import (
    RULES,
    classify,
    find_dates,
    find_emails,
    find_postal_codes,
    find_streets,
    find_urls,
    is_name_line,
    span_candidates,
    trim_span,
)


def layout(*rows: tuple[str, float, float, float]) -> Layout:
    """Items from (text, x0, y0, x1) with a line height of 0.015."""
    return Layout([Item(t, Box(x0, y0, x1, y0 + 0.015), 0.95, i) for i, (t, x0, y0, x1) in enumerate(rows)])


PAGE = Page.from_array(np.full((40, 30, 3), 255, np.uint8))

TITLE = layout(
    ("The sankey package", 0.3, 0.09, 0.7),
    ("Draw Sankey diagrams via TikZ", 0.32, 0.12, 0.68),
    ("Paul Gaborit (paul.gaborit@gmail.com)", 0.3, 0.17, 0.7),
    ("v3.0.1-2022/02/04", 0.4, 0.21, 0.6),
    ("Abstract", 0.45, 0.24, 0.55),
    ("The sankey package provides macros and environments to build Sankey", 0.15, 0.26, 0.85),
    ("3.4 Upgrading from version 2.x . . . . . . . . . 5", 0.15, 0.4, 0.85),
)
TOC = layout(
    ("Table of Contents", 0.1, 0.05, 0.4),
    ("Preface . . . . . . . . . . . . . . . . . . . . 1", 0.1, 0.08, 0.9),
    ("Citing Octave in Publications. . . . . . . . . 5", 0.1, 0.1, 0.9),
    ("2 Getting Started. . . . . . . . . . . . . . . 15", 0.1, 0.12, 0.9),
    ("2.1 Invoking Octave from the Command Line . . . 15", 0.12, 0.14, 0.9),
    ("2.2 Quitting Octave . . . . . . . . . . . . . . 19", 0.12, 0.16, 0.9),
    ("2.3 Commands for Getting Help . . . . . . . . . 21", 0.12, 0.18, 0.9),
)
CARD = layout(
    ("C-a", 0.05, 0.3, 0.1),
    ("move to the start of the line", 0.15, 0.3, 0.45),
    ("C-e", 0.05, 0.32, 0.1),
    ("move to the end of the line", 0.15, 0.32, 0.45),
    ("pwd", 0.05, 0.34, 0.1),
    ("print working directory", 0.15, 0.34, 0.45),
)


def answer(question: str, lay: Layout) -> str:
    return solve(analyse(question), "doc", lay, PAGE).text


@pytest.mark.parametrize(
    "question,lay,expected",
    [
        ("What version of the sankey package is documented?", TITLE, "v3.0.1"),
        ("What is the date of this version?", TITLE, "2022/02/04"),
        ("What is the author's e-mail address?", TITLE, "paul.gaborit@gmail.com"),
        ("Who is the author of the sankey package?", TITLE, "Paul Gaborit"),
        ('On which page does the section "Quitting Octave" begin?', TOC, "19"),
        ('On which page does chapter 2 "Getting Started" begin?', TOC, "15"),
        ('On which page does the section "Citing Octave in Publications" begin?', TOC, "5"),
        ("What is the title of section 2.3?", TOC, "Commands for Getting Help"),
        ("Which key sequence moves the cursor to the start of the line?", CARD, "C-a"),
        ("What does the command pwd do?", CARD, "print working directory"),
    ],
)
def test_typed_span_is_the_answer_not_the_line(question, lay, expected):
    assert answer(question, lay) == expected


def test_postal_code_and_url_spans():
    lay = layout(
        ("Steven Douglas Cochran", 0.3, 0.1, 0.7),
        ("Carnegie-Mellon University, 5000 Forbes Avenue", 0.2, 0.13, 0.8),
        ("Pittsburgh, PA 15213-3890", 0.35, 0.16, 0.65),
        ("see https://github.com/cgnieder/chemmacros for the code", 0.1, 0.5, 0.9),
    )
    assert answer("What is the ZIP code of the author's address?", lay) == "15213-3890"
    assert answer("What is the URL of the repository?", lay) == "https://github.com/cgnieder/chemmacros"


def test_questions_that_want_no_typed_span_are_left_to_the_layout_readers():
    assert classify("Is the total above 100?") is None
    assert classify("What is the total amount due?") is None
    assert classify("Which version of hpstatement is documented?").subject == "hpstatement"


def test_connectives_are_trimmed_from_names():
    assert trim_span("and Ethan A Merritt and many others", "name") == "Ethan A Merritt"
    assert trim_span("(version 5.4", "version") == "version 5.4"


def evidence(**changes) -> ReviewEvidence:
    base = dict(
        tool="deshadowing",
        scope="evidence region",
        legibility_before=0.482,
        legibility_after=0.479,
        severity_before=0.8,
        severity_after=0.2,
        confidence_before=0.5,
        confidence_after=0.5,
        answer_before="x",
        answer_after="x",
        degradation="shadow",
    )
    base.update(changes)
    return ReviewEvidence(**base)


def test_review_keeps_a_restoration_that_removed_the_damage_and_read_as_well():
    # The deshadowed letter read a hair less confidently but the shadow is gone: a tie is not a loss.
    assert evidence().keep("evidence")
    assert not evidence().keep("legibility")


def test_review_rolls_back_when_the_answer_became_less_certain_or_the_text_read_worse():
    assert not evidence(confidence_after=0.3).keep("evidence")
    assert not evidence(legibility_after=0.40).keep("evidence")
    assert not evidence(severity_after=0.2, legibility_after=0.40).keep("evidence")
    assert evidence(severity_after=0.75, confidence_after=0.7).keep("evidence")


def test_a_change_within_measurement_noise_is_a_tie_decided_by_one_rule():
    # Severity 0.80 -> 0.75 is below its measured floor (0.115), legibility -0.6 % below 1.2 %: nothing moved.
    from docintent.brains.offline.review import NoiseFloors

    tie = evidence(severity_after=0.75)
    keep, why = tie.verdict("evidence")
    assert not keep and why.startswith("no change needed") and "floor 1.2 %" in why
    keep, why = tie.verdict("evidence", floors=NoiseFloors(tie="keep"))
    assert keep and "a tie is kept" in why
    assert "shadow severity 0.80 -> 0.20" in evidence().describe()


def test_issue_number_comes_from_the_masthead_not_the_paragraph():
    lay = layout(
        ("TUGboat, Volume 43 (2022), No. 2", 0.1, 0.03, 0.9),
        ("Typesetting tables", 0.3, 0.1, 0.7),
        ("As we reported in issue 1 of last year, the tabular environment has a long history of", 0.1, 0.3, 0.9),
    )
    assert answer("Which issue of the journal is this?", lay) == "2"
    assert answer("What volume of the journal is this?", lay) == "43"


@pytest.mark.parametrize(
    "line,expected",
    [
        ("v3.0.1-2022/02/04", ["2022/02/04"]),
        ("Uw brief van 13 januari 1988", ["13 januari 1988"]),
        ("Printed June 4, 2018", ["June 4, 2018"]),
        ("Nijmegen, 8 october 1989", ["8 october 1989"]),
        ("Version 5.4 organized by: Ethan A Merritt", []),
    ],
)
def test_date_finder_returns_the_date_not_the_line(line, expected):
    assert [span for _start, _end, span in find_dates(line)] == expected


def test_entity_finders_close_up_ocr_spacing_and_skip_years():
    assert find_emails("Paul Gaborit paul.gaborit @ gmail.com.") == ["paul.gaborit@gmail.com"]
    assert find_urls("Repository: https : //github.com/cgnieder/chemmacros.") == [
        "https://github.com/cgnieder/chemmacros"
    ]
    assert find_urls("mail gnuplot-info@lists.sourceforge.net") == []
    assert find_postal_codes("Toernooiveld, 6525 ED Nijmegen") == ["6525 ED"]
    assert find_postal_codes("Pittsburgh, PA 15213-3890") == ["15213-3890"]
    assert find_postal_codes("Copyright 2018 Jobst Hoffmann") == []
    assert find_streets("Ginsterweg 1, 52428 Jülich") == ["Ginsterweg 1"]
    assert find_streets("51 Franklin Street, Fifth Floor, Boston, MA 02110-1301") == ["51 Franklin Street, Fifth Floor"]


@pytest.mark.parametrize(
    "line,is_name",
    [
        ("Paulo Ney de Souza", True),
        ("Thomas Williams & Colin Kelley", True),
        ("Sergio C. de la Barrera", True),
        ("Quick Reference Card", False),
        ("The Octave Project Developers", False),
        ("Typesetting Chemical Formulae", False),
    ],
)
def test_name_line_rule(line, is_name):
    assert is_name_line(line) is is_name


def test_the_finders_decide_which_lines_are_names():
    """The typed-span step reads names through its finders: another name test changes the answer
    (this is how benchmarks/entities.py puts a library in the rule's place)."""
    lines = [("Paulo Ney de Souza", 0.14), ("Richard J. Fateman", 0.17), ("19th September 2004", 0.3)]
    book = Layout(
        [Item("The Maxima Book", Box(0.3, 0.06, 0.7, 0.1), 0.95, 0)]
        + [Item(t, Box(0.35, y, 0.65, y + 0.015), 0.95, i + 1) for i, (t, y) in enumerate(lines)]
    )
    question = "Who is the first author of the book?"
    matcher = Matcher(analyse(question), book)
    best = best_candidate(span_candidates(question, book, matcher))
    assert best is not None and best.text == "Paulo Ney de Souza"
    not_de_souza = RULES.__class__(name_line=lambda text: is_name_line(text) and "Souza" not in text)
    best = best_candidate(span_candidates(question, book, matcher, not_de_souza))
    assert best is not None and best.text == "Richard J. Fateman"
