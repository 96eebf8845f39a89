"""The document reader: question analysis, typed spans, tables, charts and answers read from OCR geometry.

No brain, no strategy: the offline brain decides with it, MACT's roles execute through it, and anything that
needs an answer read off a page can use it directly.

>>> from docintent.reader import analyse
>>> analyse("What is the total amount due?").answer_type
'money'
"""

from .answer import format_answer, solve
from .intent import Intent, parse_intent
from .points import Point, chart_points, table_points
from .question import GENERIC_WORDS, QuestionInfo, analyse, content_words
from .reading import QuestionReader, Reading
from .solution import Solution

__all__ = [
    "GENERIC_WORDS",
    "Intent",
    "Point",
    "QuestionInfo",
    "QuestionReader",
    "Reading",
    "Solution",
    "analyse",
    "chart_points",
    "content_words",
    "format_answer",
    "parse_intent",
    "solve",
    "table_points",
]
