"""One call for the common case: ``docintent.ask(document, question)``, a page or a whole document."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from .brains import Brain, get_brain
from .document import Document, PageSelection, as_document, page_spans
from .errors import ConfigError, DocIntentError
from .io import load_page
from .page import Page
from .strategies import OnStep, Result, RunStopped, ShouldStop, Strategy, get_strategy
from .trace import Action, LocateStep, Phase
from .vocabulary import check_question, check_task

#: Pages of a document read at most, in the locator's order, before the answer is given up (``max_pages``).
MAX_PAGES = 3
#: Located pages a locate step lists (a long document's ranking is cut here).
RANKING_SHOWN = 10


def as_page(image: Page | np.ndarray | str | os.PathLike) -> Page:
    """A Page from a Page, an RGB/grayscale array, or an image/PDF path (first page); anything else is a
    :class:`~docintent.errors.ConfigError` saying what it got."""
    if isinstance(image, Page):
        return image
    if isinstance(image, np.ndarray):
        return Page.from_array(image, source="<array>")
    if isinstance(image, (str, os.PathLike)) and not isinstance(image, bytes):
        return load_page(image)
    raise ConfigError(
        f"the image must be a Page, a numpy array or a file path, got {type(image).__name__} "
        "(for encoded bytes use docintent.io.load_bytes)"
    )


def ask(
    image: Document | Page | np.ndarray | str | os.PathLike | bytes,
    question: str,
    task: str = "doc",
    strategy: str = "docintent",
    brain: Brain | str | None = None,
    *,
    pages: PageSelection = None,
    max_pages: int = MAX_PAGES,
    on_step: OnStep | None = None,
    should_stop: ShouldStop | None = None,
    on_locate: Callable[[int, int], None] | None = None,
    **strategy_options: Any,
) -> Result:
    """Answer ``question`` about ``image``, restoring only what blocks the answer.

    ``image``: a page (a :class:`Page`, an RGB/grayscale array, an image file) or a whole document (a PDF's path
    or bytes, a :class:`~docintent.document.Document`). On a document with more than one page, the evidence
    locator ranks the pages (text layer first, OCR where a page has none) and the best ones are read in that
    order, at most ``max_pages`` of them, until one gives an answer; only the pages read are restored, and the
    Result says which page answered (``result.page``, 1-based). ``pages``: the pages to consider, e.g. ``"2-5"``
    or ``[2, 3]`` (1-based; default: all).

    ``task`` picks the answer format: "doc", "chart", "table" or a plug-in task (:data:`docintent.vocabulary.TASKS`);
    ``strategy`` one of :data:`docintent.strategies.STRATEGIES`; ``brain`` a Brain, a kind ("offline", "openai")
    or None for the offline reader. ``on_step(step, run)`` hears of every step as it is recorded;
    ``should_stop()`` is asked after every step (True ends the run with no answer); ``on_locate(done, total)``
    hears of each page whose text the locator has read. The Result carries the answer, confidence, where it
    came from (``result.provenance``: page, box, evidence lines), tools kept and rolled back, the trace, seconds
    and tokens.

    >>> import docintent
    >>> result = docintent.ask("invoice.jpg", "What is the total amount due?")   # doctest: +SKIP
    >>> result.answer, result.page, result.tools_kept                            # doctest: +SKIP
    ('$1,250.00', 1, ['deshadowing'])
    >>> docintent.ask("report.pdf", "What was the net income in 2023?").page     # doctest: +SKIP
    4
    """
    check_task(task)
    check_question(question)
    if isinstance(max_pages, bool) or not isinstance(max_pages, int) or max_pages < 1:
        raise ConfigError(f"max_pages must be a whole number of at least 1, got {max_pages!r}")
    document = as_document(image, pages=pages)
    chosen = get_strategy(strategy, **strategy_options)
    own_brain = not isinstance(brain, Brain)
    the_brain = brain if isinstance(brain, Brain) else get_brain(brain or "offline")
    try:
        return read_document(
            document,
            question,
            task,
            chosen,
            the_brain,
            max_pages=max_pages,
            on_step=on_step,
            should_stop=should_stop,
            on_locate=on_locate,
        )
    finally:
        if own_brain:
            the_brain.close()


def read_document(
    document: Document,
    question: str,
    task: str,
    strategy: Strategy,
    brain: Brain,
    *,
    max_pages: int = MAX_PAGES,
    on_step: OnStep | None = None,
    should_stop: ShouldStop | None = None,
    on_locate: Callable[[int, int], None] | None = None,
) -> Result:
    """Run ``strategy`` on the pages of ``document`` the locator picks, best first, until one answers (see
    :func:`ask`). The Result is the answering page's (its tools, its provenance with the page number), with the
    trace of every page read, each page's part opened by a locate step saying why it was read."""
    start = time.perf_counter()
    if len(document) == 1:
        number = document.numbers[0]
        result = strategy.run(document.page(number), question, task, brain, on_step=on_step, should_stop=should_stop)
        return replace(result, provenance=replace(result.provenance, page=number))
    total = len(document)
    done = 0

    def located(number: int) -> None:
        nonlocal done
        done += 1
        if on_locate is not None:  # out of the pages read to rank them (a long scan's OCR budget, not its length)
            on_locate(done, document.ranking_reads)
        stop = should_stop() if should_stop is not None else False
        if stop:
            raise RunStopped(stop if isinstance(stop, str) else "the run was stopped before it finished")

    try:
        ranking = document.locate(question, on_page=located)
    except RunStopped as err:
        error = f"{type(err).__name__}: {err}"
        return Result(answer="", strategy=strategy.name, error=error, seconds=time.perf_counter() - start)
    located_in = time.perf_counter() - start
    shown = [c.to_dict() for c in ranking[:RANKING_SHOWN]]
    results: list[Result] = []
    previous: int | None = None
    for choice in ranking[:max_pages]:
        if document.unread.get(choice.number, "").startswith("cannot be read"):
            continue  # a damaged page: the others are still read
        try:
            page = document.page(choice.number)
        except DocIntentError as err:
            document.unread[choice.number] = f"cannot be read: {err}"
            continue
        why = LocateStep(
            Phase.LOCATE,
            Action.LOCATED,
            None,
            reason="",
            before=page.hash,
            page=choice.number,
            considered=total,
            seconds=located_in if previous is None else 0.0,
            ranking=shown if previous is None else [],
            previous=previous,
            unranked=(len(document.past_budget) or None) if previous is None else None,
        )
        if previous is None:
            why.reason = "pages ranked by how well their text matches the question: " + ", ".join(
                f"page {c['page']} ({c['relevance']:.2f})" for c in shown
            )
            if document.past_budget:
                skipped = len(document.past_budget)
                why.reason += (
                    f"; {skipped} page{'s' if skipped != 1 else ''} without a text layer "
                    f"({page_spans(document.past_budget)}) past the OCR budget of {document.ocr_budget} "
                    "pages were not read and are ranked last (choose the pages to consider to read them)"
                )
        else:
            why.reason = f"page {previous} gave no answer"
        result = strategy.run(page, question, task, brain, on_step=on_step, should_stop=should_stop, preface=[why])
        results.append(replace(result, provenance=replace(result.provenance, page=choice.number)))
        if result.answer or result.error:
            break
        previous = choice.number
    return _merged(results, time.perf_counter() - start)


def _merged(results: list[Result], seconds: float) -> Result:
    """One Result of the pages read: the answering page's (or, when none answered, the most relevant page's),
    with every page's steps, page states, tokens and work."""
    final = next((r for r in results if r.answer or r.error), results[0])
    pages: dict[str, Page] = {}
    work: dict[str, int] = {}
    for r in results:
        pages.update(r.pages)
        for key, value in r.work.items():
            work[key] = work.get(key, 0) + value
    return replace(
        final,
        trace=[step for r in results for step in r.trace],
        pages=pages,
        seconds=seconds,
        prompt_tokens=sum(r.prompt_tokens for r in results),
        completion_tokens=sum(r.completion_tokens for r in results),
        work=work,
    )


__all__ = ["MAX_PAGES", "as_page", "ask", "read_document"]
