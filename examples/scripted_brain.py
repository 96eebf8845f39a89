"""Test code that uses docintent without a model: a ScriptedBrain plays back the decisions you give it.

Written as the tests of your own code would be (plain asserts; pytest collects ``test_*`` functions too), it
shows when a scripted review is used: only after a tool that changed the page. A quarter turn always changes
it; deshadowing changes a shadowed page, and returns a clean page unchanged, which the trace records as
``no_change`` with no review and nothing rolled back. Run: python examples/scripted_brain.py
"""

from __future__ import annotations

import numpy as np

import docintent
from docintent.brains import Answer, Rollback, ScriptedBrain, UseTool
from docintent.page import Page
from docintent.synth.degrade import shadow
from docintent.synth.render import render_text_lines

CLEAN = Page.from_array(render_text_lines(["Total: 42", "Thank you"], width=600, font_px=28), source="clean")
SHADOWED = CLEAN.derive(shadow(CLEAN.pixels, np.random.default_rng(1), severity=0.8), "shadow")


def rollback_brain(tool: str) -> ScriptedBrain:
    """Run ``tool`` first, roll it back whatever it did, then answer "42"."""
    return ScriptedBrain(decisions=[UseTool(tool), Answer("42")], reviews=[Rollback("worse")])


def actions(result) -> list[tuple[str, str, str | None]]:
    return [(step.phase.value, step.action.value, step.tool) for step in result.trace]


def test_a_tool_that_changes_the_page_is_reviewed_and_rolled_back():
    result = docintent.ask(CLEAN, "What is the total?", brain=rollback_brain("rotate_90"))
    assert result.answer == "42"
    assert result.tools_rolled_back == ["rotate_90"] and result.tools_kept == []
    assert ("B", "rollback", "rotate_90") in actions(result)


def test_deshadowing_a_shadowed_page_is_reviewed_and_rolled_back():
    result = docintent.ask(SHADOWED, "What is the total?", brain=rollback_brain("deshadowing"))
    assert result.tools_rolled_back == ["deshadowing"]


def test_a_tool_with_nothing_to_fix_is_not_reviewed():
    result = docintent.ask(CLEAN, "What is the total?", brain=rollback_brain("deshadowing"))
    assert ("tool", "no_change", "deshadowing") in actions(result)
    assert result.tools_rolled_back == [] and result.answer == "42"


if __name__ == "__main__":
    for name, test in sorted(globals().items()):
        if name.startswith("test_"):
            test()
            print(f"ok  {name}")
