"""Question records and varied phrasing for the synthetic set."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import numpy as np


@dataclass(frozen=True)
class QA:
    """One question about one clean document.

    ``answers``: accepted answers, the one printed on the page first. ``intent``: what the question asks for
    (``field``, ``date``, ``amount``, ``name``, ``phrase``, ``value``, ``extreme``, ``difference``,
    ``count``, ``lookup``, ``compare``, ``fact``). ``printed``: True when ``answers[0]`` appears verbatim on
    the clean page (look-ups), False when it must be computed or estimated (counts, differences, values
    read off an unlabelled chart axis, true/false claims).
    """

    question: str
    answers: tuple[str, ...]
    intent: str
    _: KW_ONLY
    subset: str
    printed: bool
    meta: dict[str, Any] = field(default_factory=dict)


def phrase(rng: np.random.Generator, templates: Sequence[str], **slots: str) -> str:
    """One of ``templates`` (chosen by ``rng``) filled with ``slots``; the first letter is capitalised."""
    text = templates[int(rng.integers(len(templates)))].format(**slots)
    return text[:1].upper() + text[1:]


def choose(rng: np.random.Generator, candidates: Sequence[QA], k: int) -> list[QA]:
    """Up to ``k`` questions, preferring different intents so one document does not ask the same thing twice."""
    order = [candidates[int(i)] for i in rng.permutation(len(candidates))]
    chosen: list[QA] = []
    seen: set[str] = set()
    for qa in order:  # first pass: one per intent
        if len(chosen) < k and qa.intent not in seen:
            chosen.append(qa)
            seen.add(qa.intent)
    for qa in order:
        if len(chosen) < k and qa not in chosen:
            chosen.append(qa)
    return chosen


# Generic look-up phrasings: {noun} is e.g. "invoice number", {doc} e.g. "invoice".
LOOKUP = (
    "What is the {noun}?",
    "What is the {noun} on this {doc}?",
    "According to the {doc}, what is the {noun}?",
    "What {noun} is given on the {doc}?",
    "Can you tell me the {noun}?",
    "Which {noun} does the {doc} show?",
    "Read the {noun} from the {doc}.",
    "What is listed as the {noun}?",
)

WHEN = (
    "What is the {noun}?",
    "According to the {doc}, what is the {noun}?",
    "What date is given as the {noun}?",
    "Which date is shown for the {noun}?",
    "What is the {noun} on the {doc}?",
    "What does the {doc} give as the {noun}?",
)

WHO = (
    "Who is the {noun}?",
    "What is the name of the {noun}?",
    "Which person is named as the {noun}?",
    "According to the {doc}, who is the {noun}?",
    "Whose name appears as the {noun}?",
)

DOC_DATE = (
    "What is the date of the {doc}?",
    "When was the {doc} written?",
    "What date does the {doc} carry?",
    "On what date was the {doc} issued?",
    "Which date is printed on the {doc}?",
)

HOW_MUCH = (
    "What is the {noun}?",
    "How much is the {noun}?",
    "What amount is shown as the {noun}?",
    "According to the {doc}, what is the {noun}?",
    "How much does the {doc} give as the {noun}?",
)


@dataclass
class Document:
    """One clean synthetic document: the rendered page, its content and the questions about it.

    ``family``: ``doc`` | ``chart`` | ``table``. ``kind``: the document kind (``invoice``, ``bar``,
    ``financial``...). ``content``: the clean content as plain data, for debugging and analysis only.
    """

    family: str
    kind: str
    image: np.ndarray
    _: KW_ONLY
    content: dict[str, Any]
    questions: list[QA]
    fonts: list[str]
