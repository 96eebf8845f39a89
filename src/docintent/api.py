"""One call for the common case: ``docintent.ask(image, question)``."""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from .brains import Brain, get_brain
from .errors import ConfigError
from .io import load_page
from .page import Page
from .strategies import OnStep, Result, ShouldStop, get_strategy
from .vocabulary import check_task


def as_page(image: Page | np.ndarray | str | os.PathLike) -> Page:
    """A Page from a Page, an RGB/grayscale array, or an image/PDF path (first page); anything else is a
    :class:`~docintent.errors.ConfigError` saying what it got."""
    if isinstance(image, Page):
        return image
    if isinstance(image, np.ndarray):
        return Page.from_array(image, source="<array>")
    if isinstance(image, (str, os.PathLike)) and not isinstance(image, bytes):
        return load_page(image)
    raise ConfigError(f"the image must be a Page, a numpy array or a file path, got {type(image).__name__} "
                      "(for encoded bytes use docintent.io.load_bytes)")


def ask(
    image: Page | np.ndarray | str | os.PathLike,
    question: str,
    task: str = "doc",
    strategy: str = "docintent",
    brain: Brain | str | None = None,
    *,
    on_step: OnStep | None = None,
    should_stop: ShouldStop | None = None,
    **strategy_options: Any,
) -> Result:
    """Answer ``question`` about ``image``, restoring only what blocks the answer.

    ``task`` picks the answer format ("doc", "chart" or "table"); ``strategy`` one of
    :data:`docintent.strategies.STRATEGIES`; ``brain`` a Brain, a kind ("offline", "openai") or None for
    the offline reader. ``on_step(step, run)`` hears of every step as it is recorded; ``should_stop()`` is asked
    after every step (True ends the run with no answer). The Result carries the answer, confidence, tools kept
    and rolled back, the trace, seconds and tokens.

    >>> import docintent
    >>> result = docintent.ask("invoice.jpg", "What is the total amount due?")   # doctest: +SKIP
    >>> result.answer, result.tools_kept                                         # doctest: +SKIP
    ('$1,250.00', ['deshadowing'])
    """
    check_task(task)
    if not isinstance(question, str):
        raise ConfigError(f"the question must be text, got {type(question).__name__}")
    if not question.strip():
        raise ConfigError("the question is empty")
    page = as_page(image)
    chosen = get_strategy(strategy, **strategy_options)
    own_brain = not isinstance(brain, Brain)
    the_brain = brain if isinstance(brain, Brain) else get_brain(brain or "offline")
    try:
        return chosen.run(page, question, task, the_brain, on_step=on_step, should_stop=should_stop)
    finally:
        if own_brain:
            the_brain.close()
