"""The orchestration with the scripted brain: rollback, round bound, review-only Phase B, failures, baselines."""

from __future__ import annotations

import numpy as np
import pytest

from docintent import Page
from docintent.brains import Answer, Diagnosis, FunctionBrain, Keep, Rollback, ScriptedBrain, UseTool
from docintent.errors import ConfigError, UnknownComponentError
from docintent.strategies import STRATEGIES, get_strategy, pipeline_tools
from docintent.tools import TOOLS, Tool, get_tool, register, restoration_tools


def builtin_pipeline() -> list[str]:
    """The pipeline baseline's tools as the records define them: one tool per measured family, in the families'
    order (read from the registries, so a new built-in family with its tool joins without editing a list)."""
    return pipeline_tools(restoration_tools())


@pytest.fixture
def page():
    rng = np.random.default_rng(1)
    return Page.from_array(rng.integers(0, 255, (60, 40, 3), dtype=np.uint8), source="noise")


class Explode(Tool):
    name = "explode"
    degradation = "appearance"
    description = "A tool that always fails (for tests)."

    def apply(self, page):
        raise RuntimeError("kaboom")


@pytest.fixture
def exploding_tool():
    register(Explode)
    yield "explode"
    TOOLS.unregister("explode")


def applied(result):
    return [s.tool for s in result.trace if s.phase == "tool" and s.action in ("applied", "no_change")]


def test_rollback_restores_exactly_the_previous_page_and_disables_the_tool(page):
    brain = ScriptedBrain(
        decisions=[UseTool("rotate_90"), UseTool("rotate_90"), UseTool("rotate_180"), Answer("done")],
        reviews=[Rollback("worse"), Keep("better")],
    )
    result = get_strategy("docintent").run(page, "q?", "doc", brain)
    assert result.answer == "done"
    assert result.tools_rolled_back == ["rotate_90"] and result.tools_kept == ["rotate_180"]
    # the second request for rotate_90 was refused: the tool had left the available list
    assert [(s.phase, s.action, s.tool) for s in result.trace][3:5] == [
        ("A", "use_tool", "rotate_90"),
        ("tool", "skipped", "rotate_90"),
    ]
    rollback = next(s for s in result.trace if s.action == "rollback")
    assert rollback.before == page.hash
    # after the rollback the next tool ran on the original page object
    second = [s for s in result.trace if s.phase == "tool" and s.action == "applied"][1]
    assert second.before == page.hash
    assert np.array_equal(result.final_page.pixels, np.rot90(page.pixels, 2))


def test_rollback_hands_back_the_same_page_object(page):
    seen = []
    brain = FunctionBrain(
        decide=lambda s: (seen.append(s.page), UseTool("rotate_90"))[1] if len(seen) < 2 else Answer(str(s.page.hash)),
        review=lambda s, change: Rollback("no"),
    )
    result = get_strategy("docintent").run(page, "q?", "doc", brain)
    assert seen[1] is page and result.final_page is page
    assert result.answer == page.hash


def test_rounds_are_bounded_by_T(page):
    brain = FunctionBrain(
        decide=lambda s: UseTool("rotate_90"), review=lambda s, change: Keep(), answer=lambda s: Answer("final")
    )
    result = get_strategy("docintent", max_rounds=3).run(page, "q?", "doc", brain)
    assert result.answer == "final"
    assert sum(1 for s in result.trace if s.phase == "A") == 3
    assert applied(result) == ["rotate_90"] * 3
    assert result.trace[-1].phase == "answer"


def test_phase_b_never_answers(page):
    brain = FunctionBrain(decide=lambda s: UseTool("rotate_90"), review=lambda s, change: Answer("sneaky"))
    with pytest.raises(TypeError, match="expected Keep or Rollback"):
        get_strategy("docintent").run(page, "q?", "doc", brain)


def test_failing_tool_counts_as_rollback_and_the_run_goes_on(page, exploding_tool):
    brain = ScriptedBrain(decisions=[UseTool("explode"), UseTool("rotate_180")], final=Answer("still here"))
    result = get_strategy("docintent", tools=("explode", "rotate_180")).run(page, "q?", "doc", brain)
    assert result.answer == "still here" and result.error is None
    failed = next(s for s in result.trace if s.action == "failed")
    assert failed.tool == "explode" and "RuntimeError: kaboom" in failed.reason
    assert result.tools_rolled_back == ["explode"] and result.tools_kept == ["rotate_180"]
    # no review of a failed tool: the only review is for rotate_180
    assert [c[0] for c in brain.calls].count("review") == 1


def test_same_tool_never_runs_twice_on_the_same_page_state(page):
    # rotate_90 then rotate_270 returns to the original page state, where rotate_90 already ran: the third call
    # is refused (agres keeps every tool, so nothing else would stop it from running again).
    brain = ScriptedBrain(decisions=[UseTool("rotate_90"), UseTool("rotate_270"), UseTool("rotate_90"), Answer("a")])
    result = get_strategy("agres", tools=("rotate_90", "rotate_270")).run(page, "q?", "doc", brain)
    assert [(s.tool, s.action) for s in result.trace if s.phase == "tool"] == [
        ("rotate_90", "applied"),
        ("rotate_270", "applied"),
        ("rotate_90", "skipped"),
    ]
    assert result.final_page.hash == page.hash and result.tools_kept == ["rotate_90", "rotate_270"]
    # A different tool on that state still runs.
    brain = ScriptedBrain(decisions=[UseTool("rotate_90"), UseTool("rotate_270"), UseTool("rotate_180"), Answer("a")])
    result = get_strategy("agres", tools=("rotate_90", "rotate_270", "rotate_180")).run(page, "q?", "doc", brain)
    assert applied(result) == ["rotate_90", "rotate_270", "rotate_180"]


def test_default_T_is_ten_rounds(page):
    assert STRATEGIES["docintent"].max_rounds == 10 and get_strategy("docintent").config.max_rounds == 10
    brain = FunctionBrain(decide=lambda s: UseTool("inspect_nothing"))  # never answers, never runs a tool
    result = get_strategy("docintent").run(page, "q?", "doc", brain)
    assert sum(1 for s in result.trace if s.phase == "A") == 10


def test_agres_has_no_phase_b(page):
    brain = ScriptedBrain(decisions=[UseTool("rotate_90"), Answer("a")], reviews=[Rollback("would roll back")])
    result = get_strategy("agres").run(page, "q?", "doc", brain)
    assert "review" not in [c[0] for c in brain.calls]
    assert result.tools_kept == ["rotate_90"]


def test_prompt_only_offers_no_tools(page):
    offered = []
    brain = FunctionBrain(decide=lambda s: (offered.append(list(s.available_tools)), Answer("x"))[1])
    result = get_strategy("prompt-only").run(page, "q?", "doc", brain)
    assert offered == [[]] and result.answer == "x" and result.tools_used == 0


def test_none_answers_directly(page):
    brain = ScriptedBrain(decisions=[UseTool("rotate_90")], final="direct")
    result = get_strategy("none").run(page, "q?", "doc", brain)
    assert result.answer == "direct" and brain.calls == [("answer", page.hash)] and result.tools_used == 0


def test_pipeline_fixed_applies_every_restoration_tool_in_order(page):
    from docintent.perception.degradations import restorable
    from docintent.tools import tools_for

    order = builtin_pipeline()
    # one tool per measured family (each family's preferred tool), in the families' pipeline order
    assert [get_tool(name).degradation for name in order] == [d.name for d in restorable() if tools_for(d.name)]
    assert order == [tools_for(get_tool(name).degradation)[0] for name in order] and len(set(order)) == len(order)
    result = get_strategy("pipeline-fixed").run(page, "q?", "doc", ScriptedBrain(final="p"))
    assert applied(result) == order
    assert result.tools_used == len(order) and result.answer == "p"


def test_pipeline_random_is_a_seeded_permutation(page):
    a = applied(get_strategy("pipeline-random", seed=3).run(page, "q?", "doc", ScriptedBrain()))
    b = applied(get_strategy("pipeline-random", seed=3).run(page, "q?", "doc", ScriptedBrain()))
    assert a == b and sorted(a) == sorted(builtin_pipeline())
    orders = {
        tuple(applied(get_strategy("pipeline-random", seed=s).run(page, "q?", "doc", ScriptedBrain())))
        for s in range(6)
    }
    assert len(orders) > 1


def test_judge_fixed_applies_only_diagnosed_tools_in_the_fixed_order(page):
    brain = ScriptedBrain(diagnosis=Diagnosis(("shadow", "orientation", "blur"), rotation="rotate_270"), final="j")
    result = get_strategy("judge-fixed").run(page, "q?", "doc", brain)
    assert applied(result) == ["rotate_270", "deblurring", "deshadowing"]
    diag = next(s for s in result.trace if s.phase == "diagnose")
    assert diag.degradations == ["shadow", "orientation", "blur"]
    assert diag.to_dict()["data"]["degradations"] == ["shadow", "orientation", "blur"]  # the stored row as before


def test_judge_random_uses_the_same_tools(page):
    brain = ScriptedBrain(diagnosis=Diagnosis(("shadow", "warp", "moire", "appearance")))
    tools = applied(get_strategy("judge-random", seed=1).run(page, "q?", "doc", brain))
    assert sorted(tools) == ["appearance", "demoire", "deshadowing", "dewarping"]


def test_unknown_strategy_lists_valid_ones():
    with pytest.raises(
        UnknownComponentError, match="valid strategies: agres, docintent, docintent\\+mact, judge-fixed"
    ):
        get_strategy("magic")
    with pytest.raises(ConfigError, match="unknown option"):
        get_strategy("docintent", rounds=3)
    assert set(STRATEGIES) >= {  # the paper's strategies (more may be registered)
        "none",
        "pipeline-fixed",
        "pipeline-random",
        "judge-fixed",
        "judge-random",
        "prompt-only",
        "agres",
        "docintent",
        "mact",
        "docintent+mact",
    }


def test_trace_records_hashes_seconds_and_tokens(page):
    from docintent.brains import Usage

    brain = ScriptedBrain(
        decisions=[UseTool("rotate_90", usage=Usage(100, 5, 1))],
        reviews=[Keep(usage=Usage(50, 2, 1))],
        final=Answer("a", usage=Usage(10, 1, 1)),
    )
    result = get_strategy("docintent", max_rounds=1).run(page, "q?", "doc", brain)
    assert (result.prompt_tokens, result.completion_tokens) == (160, 8)
    tool_step = next(s for s in result.trace if s.phase == "tool")
    assert tool_step.before == page.hash and tool_step.after == result.final_page.hash and tool_step.seconds >= 0
    d = result.to_dict()
    assert d["tools_used"] == 1 and d["trace"][0]["phase"] == "A"


class Identity(Tool):
    name = "identity"
    degradation = "appearance"
    description = "Returns the page unchanged (a restoration that finds nothing to fix)."

    def apply(self, page):
        return Page.from_array(page.pixels.copy(), source=page.source)


@pytest.fixture
def identity_tool():
    register(Identity)
    yield "identity"
    TOOLS.unregister("identity")


def test_a_tool_that_changes_no_pixel_is_neither_reviewed_nor_rolled_back(page, identity_tool):
    brain = ScriptedBrain(decisions=[UseTool("identity"), Answer("done")], reviews=[Rollback("would roll back")])
    result = get_strategy("docintent", tools=("identity", "rotate_90")).run(page, "q?", "doc", brain)
    assert "review" not in [c[0] for c in brain.calls]  # nothing to compare: the page state did not change
    step = next(s for s in result.trace if s.tool == "identity" and s.phase == "tool")
    assert step.action == "no_change" and step.before == step.after == page.hash
    assert result.tools_kept == [] and result.tools_rolled_back == [] and result.tools_used == 1
    assert result.final_page is page


def test_a_skipped_repeat_is_not_counted_as_a_rollback(page):
    # rotate_90 four times returns to the original page state, where rotate_90 already ran: it is skipped.
    brain = FunctionBrain(decide=lambda s: UseTool("rotate_90"), review=lambda s, change: Keep("fine"))
    result = get_strategy("docintent", max_rounds=5, tools=("rotate_90",)).run(page, "q?", "doc", brain)
    assert [s.action for s in result.trace if s.phase == "tool"] == ["applied"] * 4 + ["skipped"]
    assert result.tools_kept == ["rotate_90"] * 4 and result.tools_rolled_back == []


class PluginDeshadow(Tool):
    # Defined outside docintent.tools, as an entry-point tool would be.
    name = "plugin_deshadow"
    degradation = "shadow"
    description = "A third-party shadow remover (for tests): flattens the page to its median grey."

    def apply(self, page):
        return Page.from_array(np.full_like(page.pixels, int(np.median(page.pixels))), source=page.source)


@pytest.fixture
def plugin_tool():
    register(PluginDeshadow)
    yield "plugin_deshadow"
    TOOLS.unregister("plugin_deshadow")


def test_a_plugin_tool_for_a_degradation_is_offered_and_preferred_everywhere(page, plugin_tool):
    from docintent.tools import tools_for

    assert tools_for("shadow") == ["plugin_deshadow", "deshadowing"]
    # The judge maps the diagnosed degradation to the plug-in, not to the built-in deshadowing.
    brain = ScriptedBrain(diagnosis=Diagnosis(("shadow",)), final="a")
    result = get_strategy("judge-fixed").run(page, "q?", "doc", brain)
    assert applied(result) == ["plugin_deshadow"]
    # The loop offers it beside the built-in tools.
    seen = []
    brain = FunctionBrain(decide=lambda s: seen.append(list(s.available_tools)) or Answer("a"))
    get_strategy("docintent").run(page, "q?", "doc", brain)
    assert "plugin_deshadow" in seen[0] and "deshadowing" in seen[0]
    # The pipeline runs the family's preferred tool, the plug-in, in the deshadowing's place.
    result = get_strategy("pipeline-fixed").run(page, "q?", "doc", ScriptedBrain(final="p"))
    TOOLS.unregister("plugin_deshadow")
    without = builtin_pipeline()
    register(PluginDeshadow)
    assert "deshadowing" in without
    assert applied(result) == ["plugin_deshadow" if name == "deshadowing" else name for name in without]
