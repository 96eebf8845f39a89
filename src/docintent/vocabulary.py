"""The names docintent speaks in, defined once: tasks, degradation families, tool kinds, rotation tools.

Which *tool* restores a degradation is not listed here: each tool declares its ``degradation`` and the
registry answers (:func:`docintent.tools.tools_for`), so a plug-in tool is offered wherever a built-in one is.

>>> from docintent.vocabulary import DEGRADATIONS, TASKS
>>> TASKS
('doc', 'chart', 'table')
>>> "shadow" in DEGRADATIONS
True
"""

from __future__ import annotations

from typing import Literal

from .errors import ConfigError

#: The question families of WildDoc (DocVQA, ChartQA, TableVQA), in report order.
TASKS: tuple[str, ...] = ("doc", "chart", "table")
Task = Literal["doc", "chart", "table"]

#: The degradation families of the DocIntent paper, in the order signals are reported.
DEGRADATIONS: tuple[str, ...] = ("orientation", "warp", "shadow", "blur", "appearance", "moire")
#: The kind of tools that change no page (zoom / OCR of a region): they gather evidence.
INSPECTION = "inspection"
#: What a tool may declare as its ``degradation``: a family, or inspection.
TOOL_KINDS: tuple[str, ...] = DEGRADATIONS + (INSPECTION,)

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
