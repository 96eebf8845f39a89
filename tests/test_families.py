"""Degradation families are records: each built-in family is one :class:`Degradation` with its own measure, and
everything else (the measured signals, the thresholds, the pipeline, the tools offered) is read from the records.

These tests assert properties of the records and the tools, never a list or a count of families or tools, so a
new built-in family (one record and its tool module) passes them unchanged; the last one adds a family the way
a plug-in does, scoped, and follows it everywhere without touching any other list.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from conftest import render_text_page
from docintent.brains import Answer, Diagnosis, FunctionBrain, ScriptedBrain
from docintent.cli import main
from docintent.page import Box, Page
from docintent.perception import FAMILIES, analysis, measure
from docintent.perception.degradations import (
    BUILTIN,
    DEGRADATIONS,
    Degradation,
    Thresholds,
    degradation_list,
    families,
    get_degradation,
    names,
    parse_degradation,
    restorable,
)
from docintent.perception.service import Perception
from docintent.strategies import get_strategy, pipeline_tools
from docintent.tools import TOOLS, Tool, is_builtin, list_tools, restoration_tools, tools_for
from docintent.vocabulary import INSPECTION


def applied(result) -> list[str]:
    return [s.tool for s in result.trace if s.phase == "tool" and s.action in ("applied", "no_change")]


def test_every_family_is_one_valid_record():
    records = families()
    assert len({d.name for d in records}) == len(records)
    assert [d.order for d in records] == sorted(d.order for d in records)  # families() is in pipeline order
    for record in records:
        assert 0.0 <= record.threshold <= 1.0, record
        assert Thresholds().of(record.name) == record.threshold  # the default threshold is the record's
        assert record.wording and record.plain and parse_degradation(record.name) == record.name
        assert record.measure is not None, record  # every built-in family measures itself
    assert {d.name for d in BUILTIN} <= set(names())


def test_one_builtin_tool_per_measured_family_and_the_pipeline_runs_them_in_order():
    builtin = [t for t in list_tools() if is_builtin(t) and t.degradation != INSPECTION]
    for tool in builtin:
        assert tool.degradation in names(), tool.name  # every tool restores a registered family
    for record in BUILTIN:
        own = [t.name for t in builtin if t.degradation == record.name]
        assert own, f"built-in family {record.name!r} has no built-in tool"
        if record.measured:
            assert len(own) == 1, own  # one tool per measured family
        else:
            assert not get_degradation(record.name).measured  # orientation: judged, turned by its rotations
    order = pipeline_tools(restoration_tools())
    assert order == [tools_for(d.name)[0] for d in restorable() if tools_for(d.name)]
    assert [TOOLS.get(name).degradation for name in order] == [d.name for d in restorable()]


def test_every_builtin_family_is_measured_in_one_pass_of_the_page(monkeypatch):
    calls = []
    real = analysis._analyse
    monkeypatch.setattr(
        analysis, "_analyse", lambda page, orientation: calls.append(orientation) or real(page, orientation)
    )
    analysis.clear_cache()
    page = Page.from_array(render_text_page(["One pass over the page", "serves every family"], width=500))
    signals = measure(page, orientation=False)
    assert list(signals.severities) == list(FAMILIES)  # the built-ins measured over the shared analysis
    for record in BUILTIN:
        if record.measured:
            assert record.measure(page, None) == signals.severities[record.name] == getattr(signals, record.name)
    assert calls == [False]  # one analysis, whichever family asked first
    with pytest.raises(AttributeError, match="families"):
        signals.not_a_family  # noqa: B018


# -- a new family: one record and its tool, nothing else ---------------------------------------------------------


def _blue(pixels: np.ndarray) -> np.ndarray:
    rgb = pixels.astype(np.int16)
    return (rgb[..., 2] > 150) & (rgb[..., 2] - rgb[..., 0] > 80) & (rgb[..., 2] - rgb[..., 1] > 80)


def scribble_severity(page: Page, region: Box | None = None) -> float:
    """Share of strongly blue pixels (a ballpoint scribble), scaled so a tenth of the page is severity 1."""
    target = page if region is None else page.crop(region)
    return float(min(1.0, _blue(target.pixels).mean() * 10.0))


SCRIBBLE = Degradation(
    "scribble",
    "blue pen scribbles over the text",
    ("scribbl", "pen mark"),
    measure=scribble_severity,
    threshold=0.2,
    order=35,
    plain="pen marks cover the text",
)


class Describble(Tool):
    name = "describble"
    degradation = "scribble"
    description = "Remove blue pen scribbles over the text (turns strongly blue pixels to paper white)."

    def apply(self, page: Page) -> Page:
        pixels = page.pixels.copy()
        pixels[_blue(pixels)] = 255
        return page.derive(pixels, self.name)


def test_a_new_family_is_one_record_measured_diagnosed_and_offered_with_its_tool(tmp_path, capsys):
    pixels = render_text_page(["Invoice number: INV-2041", "Total amount due: $1,250.00"], size=28, width=700).copy()
    pixels[20:100, 300:600] = (30, 40, 220)  # blue scribbles over the right of the lines
    page = Page.from_array(pixels)
    path = tmp_path / "scribbled.png"
    Image.fromarray(pixels).save(path)
    before = list(names())
    tool = Describble()
    with DEGRADATIONS.scoped("scribble", lambda: SCRIBBLE), TOOLS.scoped("describble", lambda: tool):
        # a family among the families, where its record's order puts it
        listed = list(names())
        assert "scribble" in listed and [n for n in listed if n != "scribble"] == before
        assert [d.order for d in families()] == sorted(d.order for d in families())
        assert parse_degradation("blue scribbles") == "scribble" and "- scribble: blue pen" in degradation_list()
        # measured, and reported above its threshold by the service every brain reads and by `docintent diagnose`
        severities = Perception().severities(page)
        assert severities["scribble"] > SCRIBBLE.threshold
        assert "scribble" in [name for name, _ in Perception().above(page)]
        assert main(["diagnose", str(path), "--json"]) == 0
        report = json.loads(capsys.readouterr().out)
        assert "scribble" in report["diagnosis"] and report["thresholds"]["scribble"] == SCRIBBLE.threshold
        # offered with its tool: the tool map, the pipeline (in the family's place), the judge and the loop
        assert tools_for("scribble") == ["describble"]
        order = pipeline_tools(restoration_tools())
        assert [TOOLS.get(name).degradation for name in order] == [d.name for d in restorable()]
        assert "describble" in order
        judge = get_strategy("judge-fixed").run(page, "q?", "doc", ScriptedBrain(diagnosis=Diagnosis(("scribble",))))
        assert applied(judge) == ["describble"]
        seen: list[list[str]] = []
        brain = FunctionBrain(decide=lambda s: seen.append(list(s.available_tools)) or Answer("a"))
        get_strategy("docintent").run(page, "q?", "doc", brain)
        assert "describble" in seen[0]
    assert list(names()) == before and "describble" not in TOOLS  # nothing left behind by the scope


def test_a_tool_scoped_for_a_test_is_checked_like_an_installed_one():
    """A tool aimed at a family nobody registered is refused by ``TOOLS.scoped`` with the same line an installed
    plug-in gets, naming the family and the known ones."""
    from docintent.errors import ConfigError
    from docintent.tools.base import Tool
    from docintent.tools.registry import TOOLS

    class Unstamp(Tool):
        name = "unstamp"
        degradation = "stamps"
        description = "removes stamps"

        def apply(self, page, **kwargs):
            return page

    with pytest.raises(ConfigError, match=r"tool 'unstamp' \(test\) targets the unknown degradation 'stamps'; known: "):
        with TOOLS.scoped("unstamp", lambda: Unstamp()):
            pass
    assert "unstamp" not in TOOLS.kinds()
