"""The names docintent speaks in, defined once: tasks, the inspection tool kind, rotation tools.

The degradation families are records in a registry (:mod:`docintent.perception.degradations`), so a plug-in
family is known wherever a built-in one is; which *tool* restores a family is not listed anywhere either: each
tool declares its ``degradation`` and the tool registry answers (:func:`docintent.tools.tools_for`).

>>> from docintent.vocabulary import TASKS
>>> TASKS
('doc', 'chart', 'table')
"""

from __future__ import annotations

from typing import Literal

from .errors import ConfigError

#: The question families of WildDoc (DocVQA, ChartQA, TableVQA), in report order.
TASKS: tuple[str, ...] = ("doc", "chart", "table")
Task = Literal["doc", "chart", "table"]

#: The kind of tools that change no page (zoom / OCR of a region): they gather evidence.
INSPECTION = "inspection"

#: The lossless rotation tools, named by the clockwise turn they apply.
ROTATION_TOOLS: tuple[str, ...] = ("rotate_90", "rotate_180", "rotate_270")


def check_task(task: str) -> str:
    """``task`` if it is one of :data:`TASKS`, else a :class:`~docintent.errors.ConfigError` listing them.

    >>> check_task("chart")
    'chart'
    """
    if task not in TASKS:
        raise ConfigError(f"task {task!r} is not one of {', '.join(TASKS)}")
    return task


#: The longest question docintent takes, in characters (a page's question is a sentence or a few; the service
#: has its own, lower cap). Longer ones are refused before any work, everywhere a question enters.
MAX_QUESTION_CHARS = 10_000


def check_question(question: object) -> str:
    """``question`` if it is non-empty text of at most :data:`MAX_QUESTION_CHARS` characters, else a
    :class:`~docintent.errors.ConfigError` saying which rule it breaks.

    >>> check_question("What is the total?")
    'What is the total?'
    """
    if not isinstance(question, str):
        raise ConfigError(f"the question must be text, got {type(question).__name__}")
    if not question.strip():
        raise ConfigError("the question is empty")
    if len(question) > MAX_QUESTION_CHARS:
        raise ConfigError(f"the question is {len(question):,} characters long; at most {MAX_QUESTION_CHARS:,} are taken")
    return question
