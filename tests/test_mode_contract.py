"""A mode's contract: its config declares the run settings it uses, a misnamed knob is refused, and a mode that
reviews does it through ``Run.review`` (one ReviewStep, the page kept or rolled back)."""

from __future__ import annotations

from typing import ClassVar, Literal

import numpy as np
import pytest

from docintent import Page
from docintent.brains import Answer, Keep, Rollback, ScriptedBrain
from docintent.errors import ConfigError, UnknownComponentError
from docintent.strategies import (
    CONFIGS,
    MODES,
    NAMED,
    Mode,
    RunSettings,
    StrategyConfig,
    ToolboxConfig,
    get_strategy,
)
from docintent.tools import restoration_tools
from docintent.trace import Action, AnswerStep, Phase, ReviewStep, ToolStep


@pytest.fixture
def page():
    rng = np.random.default_rng(3)
    return Page.from_array(rng.integers(0, 255, (30, 20, 3), dtype=np.uint8), source="noise")


class SettingsConfig(ToolboxConfig):
    """A plug-in mode that declares the rounds, the seed and the toolbox."""

    mode: Literal["settings-echo"] = "settings-echo"
    uses: ClassVar[tuple[str, ...]] = ("tools", "max_rounds", "seed")
    max_rounds: int = 2
    seed: int = 0


def run_settings_echo(run, config):
    """Answer with what the run was given: the rounds, the seed's random draw and the toolbox."""
    answer = Answer(f"{run.state.max_rounds}|{run.rng().random():.6f}|{','.join(run.state.available_tools)}")
    run.record_answer(answer, 0.0)
    return answer


class PlainConfig(StrategyConfig):
    """A plug-in mode that declares no run setting."""

    mode: Literal["plain-echo"] = "plain-echo"


class ReviewOnceConfig(StrategyConfig):
    mode: Literal["review-once"] = "review-once"
    tool: str = "rotate_90"


def run_review_once(run, config):
    """Run one tool, review it through the run, then answer from the page the review left."""
    applied = run.apply(config.tool, {}, "try it once")
    if applied.change is not None:
        run.review(applied.change)
    return run.answer()


@pytest.fixture
def plugins():
    with (
        MODES.scoped("settings-echo", Mode(SettingsConfig, run_settings_echo)),
        NAMED.scoped("settings-echo", lambda: SettingsConfig(name="settings-echo")),
        MODES.scoped("plain-echo", Mode(PlainConfig, run_settings_echo)),
        NAMED.scoped("plain-echo", lambda: PlainConfig(name="plain-echo")),
        MODES.scoped("review-once", Mode(ReviewOnceConfig, run_review_once)),
        NAMED.scoped("review-once", lambda: ReviewOnceConfig(name="review-once")),
    ):
        yield


# -- run settings ---------------------------------------------------------------------------------------


def test_a_plugin_mode_gets_the_run_settings_its_config_declares(page, plugins):
    result = get_strategy("settings-echo", max_rounds=4, seed=7, tools="rotate_90+rotate_180").run(
        page, "q?", "doc", ScriptedBrain()
    )
    rounds, draw, tools = result.answer.split("|")
    assert rounds == "4" and tools == "rotate_90,rotate_180"
    same_seed = get_strategy("settings-echo", seed=7).run(page, "q?", "doc", ScriptedBrain())
    other_seed = get_strategy("settings-echo", seed=8).run(page, "q?", "doc", ScriptedBrain())
    assert same_seed.answer.split("|")[1] == draw != other_seed.answer.split("|")[1]
    assert [s.phase for s in result.trace] == [Phase.ANSWER]


def test_a_plugin_mode_that_declares_no_setting_runs_with_the_defaults(page, plugins):
    assert PlainConfig(name="x").run_settings() == RunSettings()
    result = get_strategy("plain-echo").run(page, "q?", "doc", ScriptedBrain())
    rounds, _, tools = result.answer.split("|")
    assert rounds == "10" and tools.split(",") == restoration_tools()


def test_a_declared_toolbox_is_checked_before_any_work(page, plugins):
    brain = ScriptedBrain()
    with pytest.raises(UnknownComponentError, match="no-such-tool"):
        get_strategy("settings-echo", tools="no-such-tool").run(page, "q?", "doc", brain)
    assert brain.calls == []


def test_the_built_in_configs_declare_what_they_use():
    declared = {name: config.uses for name, config in CONFIGS.items()}
    assert (
        declared.items()
        >= {
            "direct": (),
            "pipeline": ("tools", "seed"),
            "judge": ("tools", "seed"),
            "loop": ("tools", "max_rounds", "inspection"),
            "page": ("max_rounds",),
            "mact": ("tools", "max_rounds"),
        }.items()
    )
    assert get_strategy("docintent", max_rounds=3, tools="rotate_90").settings == RunSettings(3, 0, ("rotate_90",))


# -- misnamed knobs -------------------------------------------------------------------------------------


def test_a_misnamed_run_setting_is_refused_when_the_config_is_defined():
    with pytest.raises(
        ConfigError,
        match=r"^Rounds\.uses: 'max_round' is not a run setting \(did you mean "
        r"'max_rounds'\?\); run settings: max_rounds, seed, tools, inspection$",
    ):

        class Rounds(StrategyConfig):
            mode: Literal["rounds"] = "rounds"
            uses: ClassVar[tuple[str, ...]] = ("max_round",)
            max_round: int = 3


def test_a_knob_named_as_a_run_setting_but_not_declared_is_refused():
    with pytest.raises(
        ConfigError,
        match=r"^Quiet has knob 'seed', a run setting it does not declare: "
        r"add 'seed' to Quiet\.uses$",
    ):

        class Quiet(StrategyConfig):
            mode: Literal["quiet"] = "quiet"
            seed: int = 1


def test_a_declared_run_setting_without_its_knob_is_refused():
    with pytest.raises(ConfigError, match=r"^Empty\.uses declares run setting 'seed' but Empty has no knob 'seed'$"):

        class Empty(StrategyConfig):
            mode: Literal["empty"] = "empty"
            uses: ClassVar[tuple[str, ...]] = ("seed",)


def test_a_misnamed_option_is_refused_in_one_line_naming_it(plugins):
    with pytest.raises(ConfigError) as err:
        get_strategy("settings-echo", max_round=3)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith(
        "strategy 'settings-echo' (mode settings-echo): unknown option 'max_round' (did you mean 'max_rounds'?)"
    )
    with pytest.raises(ConfigError, match=r"unknown option 'rounds'"):
        SettingsConfig(name="x", rounds=3)


# -- Run.review ------------------------------------------------------------------------------------------


def _review(result):
    return [s for s in result.trace if isinstance(s, ReviewStep)]


def test_a_plugin_mode_reviewing_through_the_run_rolls_back_on_rollback(page, plugins):
    brain = ScriptedBrain(reviews=[Rollback("worse", measurements={"score": 0.2})], final="done")
    result = get_strategy("review-once").run(page, "q?", "doc", brain)
    assert result.answer == "done"
    assert [(type(s), s.action) for s in result.trace] == [
        (ToolStep, Action.APPLIED),
        (ReviewStep, Action.ROLLBACK),
        (AnswerStep, Action.ANSWER),
    ]
    (review,) = _review(result)
    assert (review.tool, review.reason, review.measurements) == ("rotate_90", "worse", {"score": 0.2})
    assert review.before == page.hash and review.after != page.hash
    assert result.final_page.hash == page.hash and result.trace[-1].before == page.hash
    assert result.tools_rolled_back == ["rotate_90"] and result.tools_kept == []
    assert [c[0] for c in brain.calls] == ["review", "answer"]


def test_a_plugin_mode_reviewing_through_the_run_keeps_on_keep(page, plugins):
    result = get_strategy("review-once").run(page, "q?", "doc", ScriptedBrain(reviews=[Keep("clearer")], final="ok"))
    (review,) = _review(result)
    assert (review.action, review.reason) == (Action.KEEP, "clearer")
    assert result.answer == "ok" and result.final_page.hash == review.after != page.hash
    assert result.trace[-1].before == review.after
    assert result.tools_kept == ["rotate_90"] and result.tools_rolled_back == []


def test_a_review_that_is_neither_keep_nor_rollback_is_refused(page, plugins):
    with pytest.raises(TypeError, match=r"ScriptedBrain\.review returned 'yes', expected Keep or Rollback"):
        get_strategy("review-once").run(page, "q?", "doc", ScriptedBrain(reviews=["yes"]))


# -- registration -----------------------------------------------------------------------------------------


def test_every_built_in_mode_is_registered_once_under_its_configs_mode():
    for name, config in CONFIGS.items():
        mode = MODES.get(name)
        assert mode.config is config and mode.name == name
    assert [n for n in MODES.kinds_in_order() if n in CONFIGS] == list(CONFIGS)
