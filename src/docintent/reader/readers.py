"""The reader seam: ``read(question, layout, page) -> Choice``, one registry of readers.

Two built-in readers (:data:`READERS`):

- ``scored`` (default): every candidate source proposes (:mod:`~docintent.reader.candidates`), the trained
  scorer gives each candidate a probability (:mod:`~docintent.reader.scorer`), and the best one is the answer
  with the calibrated probability as its confidence; below ``abstain_below`` the reader abstains and says which
  field it looked for and which candidates it rejected;
- ``rules``: the rule cascade alone (:func:`~docintent.reader.answer.solve`), its raw confidence as it was.

A plug-in reader registers a factory that returns an object with the same ``read`` method.

>>> from docintent.layout.lines import Item, Layout
>>> from docintent.page import Box
>>> layout = Layout([Item("Invoice No: INV-2041", Box(0.1, 0.1, 0.4, 0.12), 0.99, 0),
...                  Item("Total: $1,250.00", Box(0.1, 0.5, 0.4, 0.52), 0.98, 1)])
>>> READERS.get("scored").read(understand("What is the invoice number?"), layout).answer
'INV-2041'
"""

from __future__ import annotations

import math
from dataclasses import KW_ONLY, dataclass, field
from typing import Annotated, Protocol

from pydantic import BaseModel, ConfigDict, Field

from ..layout.lines import Layout
from ..page import Box, Page
from ..registry import Registry
from .answer import format_answer
from .candidates import SOURCE_NAMES, AnswerCandidate, canonical, propose, rule_solution
from .extract import Matcher
from .features import featurise
from .query import Question, understand
from .ranges import part_of_range
from .scorer import Scorer
from .spans import trim_span
from .values import misread_date


@dataclass(frozen=True)
class RunnerUp:
    """A rejected candidate: its text, probability, source and box."""

    text: str
    probability: float
    source: str
    box: Box


@dataclass
class Choice:
    """What a reader chose: the answer (``""`` when it abstained), its confidence, the evidence region and the
    answer's own box, the source that proposed it, and the best rejected candidates."""

    answer: str
    confidence: float
    region: Box
    _: KW_ONLY
    source: str
    box: Box = Box.FULL
    runners_up: list[RunnerUp] = field(default_factory=list)
    abstained: bool = False
    looked_for: str = ""
    #: Where a review must re-read to judge a restoration (None: ``region``); an unsure reader does not know
    #: where its evidence is, so it asks for the whole page.
    evidence_region: Box | None = None


#: The rule cascade's raw confidence as a probability: the logistic fit of the offline brain's rules calibration
#: at no measured damage (``benchmarks/calibration.py fit``: bias -1.975, weight 5.567).
RULES_BIAS, RULES_WEIGHT = -1.975, 5.567


def rules_probability(raw: float, shift: float = 0.0) -> float:
    """The rule cascade's raw confidence mapped to the probability of being right (no damage measured), its
    log-odds moved by ``shift``."""
    return 1.0 / (1.0 + math.exp(-(RULES_BIAS + shift + RULES_WEIGHT * raw)))


#: How much less sure the scored reader is of an answer it leaves to the rule cascade, a question of a kind its
#: scorer was not trained on (a chart, a sum, a reverse look-up), in log-odds: the rules' calibration is shifted
#: by this. Those rules were written on the development layouts and calibrated there (on the broad set's development
#: pages its sums are right 76 % of the time at a mean probability of 0.85, its charts 100 % at 0.95), and nothing
#: measures them at run time on a layout they were not written on. Shifted, the surest rule answer is 0.84: below
#: the answer threshold (0.85), so Phase A looks for damage to restore, and a user who takes answers at 0.9 and
#: above never takes one unchecked. A shift, not a scale: Phase B compares differences of log-odds, which a shift
#: leaves as they were. A prior, not a fit: the value follows from the threshold, not from a held-out figure.
UNTRAINED_KIND_SHIFT = -1.9
#: Below this calibrated probability the scored reader's evidence region is the whole page: the best candidate
#: may be the wrong one, and a restoration judged only around it would miss the right one.
SURE_OF_REGION = 0.5
#: The most the scored reader is sure of an answer holding a date the calendar does not have ("2914/12/18",
#: "2023-15-15"): it is still the best reading of the asked field, so it stays the answer, but an OCR misreading
#: is never exactly right, so its confidence is at most even odds (a restoration that reads a real date is then
#: clearly surer).
MISREAD_DATE_CAP = 0.5


class Reader(Protocol):
    """What a reader does: choose an answer for a question on one page's layout."""

    def read(self, question: Question, layout: Layout, page: Page | None = None) -> Choice: ...


class RulesReader:
    """The rule cascade (:func:`~docintent.reader.answer.solve`): the first rule that fires answers."""

    name = "rules"

    def read(self, question: Question, layout: Layout, page: Page | None = None) -> Choice:
        sol = rule_solution(question, layout, page)
        return Choice(sol.text, sol.confidence, sol.region, source=sol.source, box=sol.region)


class ScoredReaderOptions(BaseModel):
    """Options of the ``scored`` reader."""

    model_config = ConfigDict(extra="forbid")

    abstain_below: Annotated[
        float,
        Field(
            ge=0.0,
            le=1.0,
            description=(
                "calibrated probability under which the reader abstains (answers nothing, names the runners-up)"
            ),
        ),
    ] = 0.0
    model: Annotated[str | None, Field(description="a scorer model file (default: the one shipped)")] = None
    sources: Annotated[
        tuple[str, ...] | None,
        Field(
            description=(
                f"candidate sources to run, of {', '.join(SOURCE_NAMES)} (default: those the model was trained with)"
            )
        ),
    ] = None


class ScoredReader:
    """Candidates from every source, chosen by the trained scorer (see the module docstring)."""

    name = "scored"
    Options = ScoredReaderOptions

    def __init__(
        self, abstain_below: float = 0.0, model: str | None = None, sources: tuple[str, ...] | None = None
    ) -> None:
        unknown = [s for s in sources or () if s not in SOURCE_NAMES]
        if unknown:
            raise ValueError(f"unknown candidate source {unknown[0]!r}; valid sources: {', '.join(SOURCE_NAMES)}")
        self.abstain_below = float(abstain_below)
        self.scorer = Scorer.load(model) if model else Scorer.default()
        # By default the sources the model was trained with (a source added since is weighed once it is retrained).
        trained = tuple(
            n
            for n in SOURCE_NAMES
            if f"src_{n}" in self.scorer.feature_names and (self.scorer.sources is None or n in self.scorer.sources)
        )
        self.sources = tuple(sources) if sources else trained

    def rank(self, question: Question, layout: Layout, page: Page | None = None) -> list[AnswerCandidate]:
        """Every candidate with its probability, best first (ties: the order the sources proposed them)."""
        return [c for c, _ in self._scored(question, layout, page)]

    def _scored(
        self, question: Question, layout: Layout, page: Page | None
    ) -> list[tuple[AnswerCandidate, list[float]]]:
        """:meth:`rank`'s candidates, each with its features."""
        layout = canonical(layout)
        cands = propose(question, layout, page, self.sources)
        if not cands:
            return []
        rows = featurise(question, layout, cands, Matcher(question.info, layout))
        for cand, p in zip(cands, self.scorer.probabilities(rows)):
            cand.probability = float(p)
        order = sorted(range(len(cands)), key=lambda i: (-round(cands[i].probability, 9), i))
        return [(cands[i], rows[i]) for i in order]

    def covers(self, question: Question) -> bool:
        """Whether the scorer was trained on questions of this kind: its task, the typed span it asks for and its
        shape (a reverse look-up that gives a number is not a question it saw when its corpus has none)."""
        shapes = self.scorer.shapes
        return (
            question.task in self.scorer.tasks
            and (not question.span_kind or question.span_kind in self.scorer.span_kinds)
            and (shapes is None or question.shape in shapes)
        )

    def read(self, question: Question, layout: Layout, page: Page | None = None) -> Choice:
        if not self.covers(question):
            # A kind of question the scorer never saw in training (a table of contents' page, a version, a
            # definition, a chart): the rule written for it answers, its confidence through the rules' calibration.
            ruled = RulesReader().read(question, layout, page)
            ruled.confidence = rules_probability(ruled.confidence, UNTRAINED_KIND_SHIFT) if ruled.answer else 0.0
            ruled.source = f"{ruled.source} (rules: a question kind the scorer was not trained on)"
            return ruled
        scored = self._scored(question, layout, page)
        if not scored:
            return Choice("", 0.0, Box.FULL, source="nothing readable", looked_for=question.field)
        ranked = [c for c, _ in scored]
        best = ranked[0]
        second = ranked[1].probability if len(ranked) > 1 else 0.0
        confidence = self.scorer.confidence(best.probability, second, self.scorer.floor(best.probability, scored[0][1]))
        if misread_date(best.text):
            confidence = min(confidence, MISREAD_DATE_CAP)
        runners = [RunnerUp(c.text, round(c.probability, 4), c.source, c.box(layout)) for c in ranked[1:4]]
        # The end of "01/03/2024 - 31/03/2024" when the question asks when the period ends: the scorer weighs both
        # dates alike, the range's structure says which one is asked for.
        chosen = best.text
        if question.part and best.anchor is not None:
            chosen = part_of_range(best.anchor.text, best.text, question.part) or best.text
        text = format_answer(trim_span(chosen, question.answer_type), question.info, question.task)
        if confidence < self.abstain_below:
            runners = [RunnerUp(best.text, round(best.probability, 4), best.source, best.box(layout))] + runners[:2]
            return Choice(
                "",
                confidence,
                Box.FULL,
                source="abstained",
                runners_up=runners,
                abstained=True,
                looked_for=question.field,
            )
        region = best.region(layout)
        return Choice(
            text,
            confidence,
            region,
            source=best.source,
            box=best.box(layout),
            runners_up=runners,
            looked_for=question.field,
            evidence_region=region if confidence >= SURE_OF_REGION else Box.FULL,
        )


#: The readers the offline brain can use (``--brain-opt reader=rules``); plug-ins arrive through the
#: ``docintent.readers`` entry-point group.
READERS: Registry = Registry("reader", group="docintent.readers")
READERS.register("scored", ScoredReader, description="candidates from every source, chosen by the trained scorer")
READERS.register("rules", RulesReader, description="the rule cascade alone (the first rule that fires answers)")

__all__ = ["READERS", "Choice", "Reader", "RulesReader", "RunnerUp", "ScoredReader", "understand"]
