"""Regions survive every tool: random sequences of tools - the registered ones and a plug-in geometric tool that
moves content and changes the page's size - on random pages, under every strategy, never raise and never fail a
step. Every region the run carries from one page state to another is mapped through the tool's transform or
found again by reading; no box outside the page is ever built.

Default: a few examples (the suite stays fast). The long profile runs 2,000:
``HYPOTHESIS_PROFILE=long python -m pytest tests/test_regions_property.py -p no:cacheprovider``.
"""

from __future__ import annotations

import os

import numpy as np
import pytest

pytest.importorskip("hypothesis", reason="the property tests need hypothesis (pip install 'docintent[test]')")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from conftest import render_text_page  # noqa: E402
from docintent.brains import Answer, Change, Diagnosis, MactRoles, Restorer, State, UseTool, get_brain  # noqa: E402
from docintent.page import Box, Page  # noqa: E402
from docintent.perception.degradations import names as family_names  # noqa: E402
from docintent.strategies import STRATEGIES, get_strategy  # noqa: E402
from docintent.synth import degrade  # noqa: E402
from docintent.tools import TOOLS, Tool, restoration_tools  # noqa: E402
from docintent.trace import Action  # noqa: E402

LONG = os.environ.get("HYPOTHESIS_PROFILE") == "long"


class ShiftCrop(Tool):
    """A plug-in geometric tool: crops a margin off two sides and pads the other two, so content moves and the
    page changes size. It does not say how it moved content (no ``map_region``): regions must be found again."""

    name = "shift_crop"
    degradation = "warp"
    geometric = True
    description = "Move the page content (test plug-in)."

    def apply(self, page: Page) -> Page:
        h, w = page.height, page.width
        dy, dx = max(1, h // 7), max(1, w // 5)
        cut = page.pixels[dy:, : max(1, w - dx)]
        padded = np.pad(cut, ((0, dy // 2), (dx // 3, 0), (0, 0)), constant_values=255)
        return page.derive(padded, self.name)


@pytest.fixture(scope="module", autouse=True)
def _shift_crop_tool():
    with TOOLS.scoped("shift_crop", lambda: ShiftCrop(), origin="tests"):
        yield


class RandomTools(Restorer, MactRoles):
    """Decides the drawn tool sequence (with drawn regions), then lets the offline reader decide; reviews,
    diagnoses, answers and plays MACT as the offline reader does."""

    name = "random-tools"

    def __init__(self, tools: list[str], regions: list[Box | None], diagnosis: tuple[str, ...]) -> None:
        self.reader = get_brain("offline")
        self.tools = list(tools)
        self.regions = list(regions)
        self.diagnosis = diagnosis

    def decide(self, state: State):
        if self.tools:
            name = self.tools.pop(0)
            region = self.regions.pop(0) if self.regions else None
            return UseTool(name, "drawn", region=region) if name in state.available_tools else self.reader.decide(state)
        return self.reader.decide(state)

    def review(self, state: State, change: Change):
        if change.region is not None:  # the mapped region, when there is one, lies on the new page
            assert change.region_after is None or 0.0 <= change.region_after.x0 < change.region_after.x1 <= 1.0
        return self.reader.review(state, change)

    def diagnose(self, state: State) -> Diagnosis:
        found = self.reader.diagnose(state)
        return Diagnosis(tuple(dict.fromkeys(self.diagnosis + found.degradations)), found.rotation)

    def answer(self, state: State) -> Answer:
        return self.reader.answer(state)

    def plan(self, *args, **kwargs):
        return self.reader.plan(*args, **kwargs)

    def execute(self, *args, **kwargs):
        return self.reader.execute(*args, **kwargs)

    def judge(self, *args, **kwargs):
        return self.reader.judge(*args, **kwargs)

    def conclude(self, *args, **kwargs):
        return self.reader.conclude(*args, **kwargs)


LINES = [
    "Invoice number: INV-2041",
    "Date: 12 March 2024",
    "Total amount due: $1,250.00",
    "Customer: Ada Lovelace",
    "Item 1 Widgets 24",
    "Item 2 Gadgets 17",
]
QUESTIONS = [
    ("What is the total amount due?", "doc"),
    ("What is the invoice number?", "doc"),
    ("Which item has the higher count?", "table"),
    ("What is the difference between Widgets and Gadgets?", "chart"),
]
DAMAGE = ("none", "curl", "perspective", "shadow", "motion_blur", "moire", "rotate90", "rotate180")


@st.composite
def pages(draw) -> Page:
    lines = draw(st.lists(st.sampled_from(LINES), min_size=1, max_size=5, unique=True))
    width = draw(st.integers(260, 620))
    image = render_text_page(lines, size=draw(st.integers(14, 26)), width=width, margin=draw(st.integers(4, 40)))
    rng = np.random.default_rng(draw(st.integers(0, 2**16)))
    for kind in draw(st.lists(st.sampled_from(DAMAGE), max_size=2)):
        if kind == "rotate90":
            image = np.ascontiguousarray(np.rot90(image, 1))
        elif kind == "rotate180":
            image = np.ascontiguousarray(np.rot90(image, 2))
        elif kind != "none":
            image = getattr(degrade, kind)(image, rng, draw(st.floats(0.2, 0.9)))
    return Page.from_array(image)


boxes = st.one_of(
    st.none(),
    st.tuples(st.floats(0, 0.8), st.floats(0, 0.8), st.floats(0.05, 0.2), st.floats(0.05, 0.2)).map(
        lambda t: Box(t[0], t[1], t[0] + t[2], t[1] + t[3])
    ),
)


@settings(
    max_examples=2000 if LONG else 6,
    deadline=None,
    derandomize=not LONG,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(
    page=pages(),
    question=st.sampled_from(QUESTIONS),
    strategy=st.sampled_from(sorted(STRATEGIES)),
    tools=st.lists(st.sampled_from(sorted(restoration_tools()) + ["shift_crop"]), max_size=5),
    regions=st.lists(boxes, max_size=5),
    diagnosis=st.lists(st.sampled_from(list(family_names())), max_size=3, unique=True),
)
def test_random_tool_sequences_never_raise_under_any_strategy(page, question, strategy, tools, regions, diagnosis):
    brain = RandomTools(tools, regions, tuple(diagnosis))
    options = {"max_rounds": 4} if "max_rounds" in STRATEGIES[strategy].knobs() else {}
    result = get_strategy(strategy, **options).run(page, question[0], question[1], brain)
    assert result.error is None, result.error
    failed = [s for s in result.trace if s.action == Action.FAILED]
    assert failed == [], [s.reason for s in failed]
    assert result.final_page is not None
