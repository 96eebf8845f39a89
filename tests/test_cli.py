"""End-to-end command-line checks and third-party tool loading through entry points."""

from __future__ import annotations

import json

import pytest
from PIL import Image

from conftest import render_text_page
from docintent.cli import main


@pytest.fixture
def invoice_png(tmp_path):
    lines = ["Invoice number: INV-2041", "Date: 12 March 2024", "Total amount due: $1,250.00"]
    path = tmp_path / "invoice.png"
    Image.fromarray(render_text_page(lines)).save(path)
    return path


def test_tools_command_lists_every_tool_with_its_degradation(capsys):
    assert main(["tools"]) == 0
    out = capsys.readouterr().out
    from docintent.tools import list_tools

    for tool in list_tools():
        assert f"{tool.name}  [{tool.degradation}]" in out
    assert main(["tools", "--json"]) == 0
    specs = json.loads(capsys.readouterr().out)
    assert {s["function"]["name"] for s in specs} >= {"dewarping", "rotate_180", "zoom"}
    assert all(s["type"] == "function" and s["function"]["parameters"]["type"] == "object" for s in specs)


def test_ask_command_prints_answer_steps_and_writes_trace_and_step_images(invoice_png, tmp_path, capsys):
    trace = tmp_path / "trace.json"
    steps = tmp_path / "steps"
    code = main(
        ["ask", str(invoice_png), "What is the total amount due?", "--trace", str(trace), "--save-steps", str(steps)]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert "answer: $1,250.00" in out and "steps:" in out
    data = json.loads(trace.read_text())
    assert data["answer"] == "$1,250.00" and data["strategy"] == "docintent" and data["trace"]
    # the input page (nothing needed restoring) and the same page with the answer's box drawn on it
    assert sorted(p.name for p in steps.iterdir()) == sorted(
        [f"00_{data['trace'][0]['before']}.png", "answer_page1.png"]
    )
    assert "page: 1   box: " in out and "evidence: " in out


def test_ask_command_names_a_missing_file(tmp_path, capsys):
    code = main(["ask", str(tmp_path / "nope.jpg"), "What?"])
    err = capsys.readouterr().err
    assert code == 1 and "nope.jpg: no such file" in err and "Traceback" not in err


def test_bench_with_the_openai_brain_against_a_loopback_server(tmp_path):
    from docintent.sample import Sample
    from docintent.testing.fake_openai import FakeOpenAI, tool_call

    image = tmp_path / "p.png"
    Image.fromarray(render_text_page(["Total: 42"])).save(image)
    rows = [
        Sample(
            f"s{i}", str(image), "What is the total?", answers=("42",), task="doc", subset="form", group=f"g{i}"
        ).to_dict()
        for i in range(2)
    ]
    dataset = tmp_path / "samples.jsonl"
    dataset.write_text("\n".join(json.dumps(r) for r in rows))
    script = [tool_call("answer", answer="42", confidence="high")] * 2
    with FakeOpenAI(script) as server:
        code = main(
            [
                "bench",
                "--dataset",
                f"jsonl:{dataset}",
                "--strategies",
                "docintent",
                "--brain",
                "openai",
                "--brain-opt",
                f"base_url={server.base_url}",
                "--brain-opt",
                "model=fake-vl",
                "--no-progress",
                "--out",
                str(tmp_path / "run"),
            ]
        )
        assert code == 0 and len(server.chat_requests) == 2
    results = [json.loads(l) for l in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    assert [(r["answer"], r["error"]) for r in results] == [("42", None), ("42", None)]
    assert all(r["result"]["prompt_tokens"] > 0 for r in results)


class _FakeEntryPoint:
    def __init__(self, name, target):
        self.name, self.value, self._target = name, f"tests:{name}", target

    def load(self):
        if isinstance(self._target, Exception):
            raise self._target
        return self._target


def test_third_party_tools_arrive_through_entry_points(monkeypatch, caplog):
    from docintent import registry
    from docintent.tools import Tool, get_tool, list_tools
    from docintent.tools import registry as tool_registry

    class Sharpen(Tool):
        name = "learned_sharpen"
        degradation = "blur"
        description = "A learned deblurring model (test plug-in)."

        def apply(self, page):
            return page.derive(page.pixels, self.name)

    class Impostor(Tool):
        name = "deblurring"
        degradation = "blur"
        description = "A plug-in that claims a built-in's name (test plug-in)."

        def apply(self, page):
            return page.derive(page.pixels, self.name)

    points = [
        _FakeEntryPoint("learned_sharpen", Sharpen),
        _FakeEntryPoint("broken", ImportError("no weights")),
        _FakeEntryPoint("deblurring", Impostor),
    ]
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: points if group == "docintent.tools" else [])
    fresh = tool_registry.ToolRegistry("tool", group="docintent.tools", loader=tool_registry._load_builtin)
    for name in tool_registry.TOOLS.kinds():  # the built-ins, as an installed docintent registers them
        entry = tool_registry.TOOLS.entry(name)
        fresh.register(name, entry.factory, origin=entry.origin)
    monkeypatch.setattr(tool_registry, "TOOLS", fresh)
    with caplog.at_level("WARNING"):
        assert get_tool("learned_sharpen").degradation == "blur"
    assert "could not load tool 'broken'" in caplog.text
    assert [t.name for t in list_tools("blur")] == ["deblurring", "learned_sharpen"]
    # the built-in stays; the plug-in that took its name is refused, with both named
    assert type(get_tool("deblurring")).__module__ == "docintent.tools.deblur"
    assert (
        "tool 'deblurring' from entry point 'deblurring' (tests:deblurring) is refused: the name is taken by built-in"
        in caplog.text
    )


def test_demo_picks_differently_damaged_captures_across_families():
    from docintent.demo import pick_samples
    from docintent.sample import Sample

    def s(i, task, *deg):
        return Sample(
            f"{task}-{i}",
            "x.png",
            "q?",
            answers=("a",),
            task=task,
            subset=task,
            group=f"{task}-g{i}",
            capture=1,
            degradations=deg,
        )

    samples = [
        s(0, "doc", "rotation_90"),
        s(1, "doc", "defocus"),
        s(2, "doc", "shadow", "noise", "jpeg"),
        s(0, "chart", "rotation_180"),
        s(1, "chart", "moire"),
        s(0, "table", "perspective"),
        s(1, "table"),
    ]
    picked = pick_samples(samples, 4)
    assert [p.task for p in picked] == ["doc", "chart", "table", "doc"]
    assert [p.id for p in picked] == ["doc-0", "chart-1", "table-0", "doc-1"]  # rotation, moire, warp, blur
    assert all(len(p.degradations) <= 2 and p.degradations for p in picked)
