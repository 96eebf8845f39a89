"""The names docintent speaks in, defined once: tasks, the inspection tool kind, rotation tools.

The degradation families are records in a registry (:mod:`docintent.perception.degradations`), so a plug-in
family is known wherever a built-in one is; which *tool* restores a family is not listed anywhere either: each
tool declares its ``degradation`` and the tool registry answers (:func:`docintent.tools.tools_for`).

The question families (tasks) are records too: a :class:`Task` names what prompts call the thing asked about,
the answer-format rules a model is given and the metric a row is scored by unless its sample names another.
:data:`TASKS` is their registry; it iterates as the registered names, in registration order, so it stands
wherever the tuple of names once stood. A plug-in task arrives through the ``docintent.tasks`` entry-point group
(or :func:`register_task`) and is then accepted by ``ask``, question files, the service and MCP, prompted with
its own noun and rules, and scored by its own metric.

>>> from docintent.vocabulary import TASKS
>>> tuple(TASKS)
('doc', 'chart', 'table')
>>> TASKS["chart"].noun, TASKS["chart"].metric
('chart', 'relaxed_accuracy')
>>> check_task("chrt")
Traceback (most recent call last):
...
docintent.errors.ConfigError: unknown task 'chrt' (did you mean 'chart'?); valid tasks: doc, chart, table
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import KW_ONLY, dataclass
from typing import Any

from .errors import ConfigError, did_you_mean
from .registry import Registry

_TASK_NAME = re.compile(r"[a-z][a-z0-9_-]*")


@dataclass(frozen=True)
class Task:
    """One question family.

    ``name``: what questions, samples and ``--task`` say ("doc"); ``noun``: what prompts call the thing asked
    about ("document": "Answer one question about the document shown in the image"); ``rules``: the
    answer-format rules a model is given, as text, or the name of a prompt file of the model brain
    (``"rules_doc"`` is ``brains/prompts/rules_doc.txt``); ``metric``: the name of the metric a row of this task
    is scored by when its sample names none (a :data:`docintent.evaluation.metrics.METRICS` kind); ``title``:
    how tables and reports name its figures (the benchmark's name, "DocVQA"; default: the task's name).
    """

    name: str
    noun: str
    rules: str
    _: KW_ONLY
    metric: str
    title: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not _TASK_NAME.fullmatch(self.name):
            raise ConfigError(f"task name {self.name!r} must be lower-case letters, digits, '_' or '-'")
        for field_name in ("noun", "rules", "metric"):
            value = getattr(self, field_name)
            if not isinstance(value, str) or not value.strip():
                raise ConfigError(f"task {self.name!r}: {field_name} must be non-empty text, got {value!r}")
        if not isinstance(self.title, str):
            raise ConfigError(f"task {self.name!r}: title must be text, got {self.title!r}")
        if not self.title.strip():
            object.__setattr__(self, "title", self.name)

    def __call__(self) -> Task:  # a registry builds components; a task is a record, so it builds itself
        return self


class _TaskRegistry(Registry[Task]):
    """The tasks; iterates as their names in registration order, ``TASKS[name]`` is the record."""

    def register_plugin(self, name: str, obj: Any, origin: str) -> None:
        record = obj if isinstance(obj, Task) else obj() if callable(obj) else obj
        if not isinstance(record, Task):
            raise ConfigError(f"task plug-in {name!r} ({origin}) is not a docintent Task")
        self.add(record, origin)

    def add(self, record: Task, origin: str = "built-in") -> None:
        """Register ``record`` under its name."""
        self.register(record.name, record, origin=origin, description=record.noun)

    def register(
        self, kind: str, factory: Any, options: Any = None, *, origin: str = "built-in", description: str = ""
    ) -> None:
        if isinstance(factory, Task) and factory.name != kind:  # ``TASKS.scoped(name, record)`` names it twice
            raise ConfigError(f"task {factory.name!r} cannot be registered as {kind!r}: a task is known by its name")
        super().register(kind, factory, options, origin=origin, description=description)

    def __iter__(self) -> Iterator[str]:
        return iter(self.kinds_in_order())

    def __len__(self) -> int:
        return len(self.kinds_in_order())

    def __getitem__(self, name: str) -> Task:
        return self.entry(name).factory()  # a record takes no options: nothing to validate on every look-up

    def __repr__(self) -> str:
        return f"TASKS{tuple(self)!r}"


#: The question families of WildDoc (DocVQA, ChartQA, TableVQA), in report order, each with its WildDoc metric.
BUILTIN: tuple[Task, ...] = (
    Task("doc", "document", "rules_doc", metric="anls", title="DocVQA"),
    Task("chart", "chart", "rules_chart", metric="relaxed_accuracy", title="ChartQA"),
    Task("table", "table", "rules_table", metric="table", title="TableVQA"),
)


def _load_builtins() -> None:
    for record in BUILTIN:
        TASKS.add(record)


#: Every task, built-in and plug-in (entry-point group ``docintent.tasks``).
TASKS = _TaskRegistry("task", group="docintent.tasks", loader=_load_builtins)


def task_names() -> tuple[str, ...]:
    """The names of every task, in registration order (built-ins first)."""
    return tuple(TASKS)


def get_task(name: str) -> Task:
    """The task called ``name``; an unknown name is :func:`check_task`'s one line."""
    return TASKS[check_task(name)]


def register_task(record: Task, origin: str = "register_task") -> None:
    """Register a task from code (a plug-in package usually declares a ``docintent.tasks`` entry point); a name
    taken by a built-in or another plug-in is refused."""
    TASKS.add(record, origin)


#: The kind of tools that change no page (zoom / OCR of a region): they gather evidence.
INSPECTION = "inspection"

#: The lossless rotation tools, named by the clockwise turn they apply.
ROTATION_TOOLS: tuple[str, ...] = ("rotate_90", "rotate_180", "rotate_270")


def check_task(task: str) -> str:
    """``task`` if it is a registered task, else a :class:`~docintent.errors.ConfigError` naming them.

    >>> check_task("chart")
    'chart'
    """
    if not isinstance(task, str) or task not in TASKS:
        names = task_names()
        raise ConfigError(f"unknown task {task!r}{did_you_mean(task, names)}; valid tasks: {', '.join(names)}")
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
        raise ConfigError(
            f"the question is {len(question):,} characters long; at most {MAX_QUESTION_CHARS:,} are taken"
        )
    return question
