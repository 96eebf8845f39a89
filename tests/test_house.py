"""The house's protocols and registries, as a user extending or misusing docintent meets them: MACT through the
service, brains that do not play MACT refused before any work, a plug-in degradation family with its own tool
offered by every strategy that restores, a plug-in that takes a built-in's name refused, every option typo one
line naming the valid options, and no module reaching into another's private names."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from conftest import REPO, render_text_page
from docintent.brains import Answer, FunctionBrain, ScriptedBrain, get_brain
from docintent.brains.roles import Execution, Plan, PlanStep, Verdict
from docintent.errors import ConfigError, UnknownComponentError
from docintent.page import Page
from docintent.strategies import get_strategy

PLUGINS = Path(__file__).parent / "plugins"


def _page() -> Page:
    return Page.from_array(render_text_page(["Catalogue 27", "Wholesale 24"], size=26, width=600))


def _mact_brain() -> ScriptedBrain:
    """A scripted brain that plays MACT: a plan of two steps, judged wrong once (re-planned), then accepted."""
    first = Plan(
        "p1",
        "diff",
        (
            PlanStep("s1", "read A", "number", op="lookup"),
            PlanStep("s2", "subtract", "number", inputs=("s1",), op="compute"),
        ),
    )
    second = Plan(
        "p2",
        "diff",
        (
            PlanStep("s1", "read every label", "series", op="series"),
            PlanStep("s2", "difference in the series", "number", inputs=("s1",), op="compute"),
        ),
    )
    return ScriptedBrain(
        plans=[first, second],
        executions=[
            Execution("", "reader", "24", value=24.0),
            Execution("", "calculator", "24", value=24.0),
            Execution("", "reader", "27, 24", value=[["A", 27], ["B", 24]]),
            Execution("", "calculator", "3", value=3.0),
        ],
        verdicts=[Verdict.flag_plan("the subtraction has only one input"), Verdict.ok(("recomputed 27 - 24",))],
        conclusion=Answer("3", 0.9, "the accepted plan's result"),
        final=Answer("no restoration needed", 0.95),
    )


def _roles(trace: list[dict]) -> list[tuple[str, str, str | None]]:
    return [
        (s["phase"], s["action"], s["data"].get("plan_id"))
        for s in trace
        if s["phase"] in ("plan", "execute", "judge", "answer")
    ]


@pytest.mark.parametrize("strategy", ["mact", "docintent+mact"])
def test_mact_through_the_service_plays_every_role_as_docintent_ask_does(strategy):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    import docintent
    from docintent.io import encode
    from docintent.server import ServeConfig, create_app

    page = _page()
    direct = docintent.ask(
        page, "By how much does Catalogue exceed Wholesale?", task="table", strategy=strategy, brain=_mact_brain()
    )
    expected = _roles([s.to_dict() for s in direct.trace])
    assert direct.answer == "3" and ("plan", "replanned", "p2") in expected and ("judge", "accepted", "p2") in expected

    config = ServeConfig(brains={"scripted": _mact_brain}, default_brain="scripted", warm_up=False)
    with TestClient(create_app(config)) as client:
        png, _ = encode(page, "png")
        reply = client.post(
            "/v1/ask",
            files={"file": ("t.png", png, "image/png")},
            data={"question": "By how much does Catalogue exceed Wholesale?", "task": "table", "strategy": strategy},
        )
        assert reply.status_code == 202, reply.text
        run_id = reply.json()["id"]
        deadline = time.monotonic() + 60
        while (run := client.get(f"/v1/runs/{run_id}").json())["status"] not in ("done", "failed", "timeout"):
            assert time.monotonic() < deadline
            time.sleep(0.02)
    assert run["status"] == "done" and run["answer"] == "3"
    assert _roles(run["trace"]) == expected


def test_a_mact_strategy_refuses_a_brain_that_does_not_play_the_roles_before_any_work():
    calls = []
    brain = FunctionBrain(answer=lambda state: calls.append("answer") or Answer("x"))
    with pytest.raises(ConfigError, match="needs a brain that plays the MACT roles .* FunctionMactBrain"):
        get_strategy("docintent+mact").run(_page(), "q?", "doc", brain)
    assert calls == []  # refused before the restoration loop asked anything


def test_function_mact_brain_needs_every_role():
    from docintent.brains import FunctionMactBrain

    with pytest.raises(ConfigError, match="missing: judge, conclude"):
        FunctionMactBrain(plan=lambda *a: [], execute=lambda *a: None, judge=None, conclude=None)


_PLUGIN_SCRIPT = r"""
import json, sys
import numpy as np
from docintent.brains import ScriptedBrain, Diagnosis, get_brain
from docintent.page import Page
from docintent.perception.degradations import families, names, parse_degradation
from docintent.strategies import get_strategy
from docintent.tools import TOOLS, get_tool, tools_for
from docintent.brains.prompts import render
from conftest import render_text_page

clean = render_text_page(["Invoice number: INV-2041", "Total amount due: $1,250.00"], size=28, width=700)
stamped = clean.copy()
stamped[20:110, 300:620] = (220, 30, 40)  # a red stamp over the right of the lines
page = Page.from_array(stamped)

def applied(result):
    return [s.tool for s in result.trace if s.phase == "tool" and s.action in ("applied", "no_change")]

out = {"families": list(names()), "tools_for": tools_for("stamp"),
       "records": [(d.name, d.order, d.measured, tools_for(d.name)) for d in families()], "parsed": parse_degradation("red stamp marks"),
       "prompt_names": "stamp" in render("diagnose"), "refused": TOOLS.refused,
       "deshadowing_module": type(get_tool("deshadowing")).__module__}
out["pipeline"] = applied(get_strategy("pipeline-fixed").run(page, "q?", "doc", ScriptedBrain(final="a")))
out["judge"] = applied(get_strategy("judge-fixed").run(page, "q?", "doc",
                                                       ScriptedBrain(diagnosis=Diagnosis(("stamp",)), final="a")))
offline = get_brain("offline", answer_threshold=1.0)
result = get_strategy("docintent", max_rounds=2).run(page, "What is the total amount due?", "doc", offline)
out["docintent"] = applied(result)
out["docintent_reason"] = next((s.reason for s in result.trace if s.phase == "A" and s.tool == "destamp"), "")
print(json.dumps(out))
"""


def test_a_plugin_degradation_family_and_its_tool_are_offered_by_every_restoring_strategy(tmp_path):
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(PLUGINS), str(Path(__file__).parent), os.environ.get("PYTHONPATH", "")]),
    }
    done = subprocess.run(
        [sys.executable, "-c", _PLUGIN_SCRIPT], capture_output=True, text=True, env=env, timeout=600, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.strip().splitlines()[-1])
    records = out["records"]
    # the plug-in family joins the families in the order its record gives (stamp: 45, between shadow and appearance)
    assert out["families"] == [name for name, *_ in records] and "stamp" in out["families"]
    assert [order for _, order, *_ in records] == sorted(order for _, order, *_ in records)
    stamp = out["families"].index("stamp")
    assert records[stamp][1:3] == [45, True]
    assert out["tools_for"] == ["destamp"] and out["parsed"] == "stamp" and out["prompt_names"]
    # the pipeline: one tool per measured family (its preferred tool), in the families' order, destamp in stamp's place
    assert out["pipeline"] == [tools[0] for _, _, measured, tools in records if measured and tools]
    assert "destamp" in out["pipeline"]
    assert out["judge"] == ["destamp"]
    assert out["docintent"][:1] == ["destamp"] and "stamp severity" in out["docintent_reason"]
    # the plug-in that took a built-in's name was refused, and the built-in stayed
    assert out["deshadowing_module"] == "docintent.tools.deshadow"
    assert any(
        "tool 'deshadowing' from entry point 'deshadowing' (docintent_stamp:Impostor) is refused: the name is "
        "taken by built-in" in r
        for r in out["refused"]
    )


class KeywordApi:
    """A model behind an API that is not OpenAI's: it takes one prompt string and returns one word. Translating
    the model brain's messages to it and its word back to a reply is this one class."""

    model = configured_model = "keyword-1"
    where = "keyword api (in-process)"

    def __init__(self) -> None:
        from docintent.brains import Usage

        self.usage = Usage()
        self.prompts: list[str] = []

    def _api(self, prompt: str) -> str:  # the "other API": a prompt in, a word out
        self.prompts.append(prompt)
        return "27" if "Catalogue" in prompt else "unknown"

    def chat(self, messages, tools=None, *, max_tokens=None):
        from docintent.brains import Usage
        from docintent.brains.endpoint import Reply
        from docintent.brains.toolcalls import ParsedCall

        prompt = "\n".join(
            part["text"]
            for m in messages
            for part in (m["content"] if isinstance(m["content"], list) else [{"type": "text", "text": m["content"]}])
            if part.get("type") == "text"
        )
        word = self._api(prompt)
        self.usage = self.usage + Usage(len(prompt.split()), 1, 1)
        if tools:
            call = ParsedCall("answer", {"answer": word, "confidence": "high"})
            return Reply("", "", [call], finish_reason="tool_calls", usage=Usage(len(prompt.split()), 1, 1))
        text = json.dumps({"answer": word, "confidence": "high"})
        return Reply(text, text, [], finish_reason="stop", usage=Usage(len(prompt.split()), 1, 1))

    def image_part(self, page, max_side=None, *, max_pixels=None, fmt="auto", quality=90):
        return {"type": "text", "text": f"[an image of {page.width}x{page.height} pixels]"}

    def served_models(self):
        return [self.model]

    def close(self):
        pass


def test_a_brain_on_another_api_is_one_class_given_to_the_model_brain():
    import docintent
    from docintent.brains.chat import ChatModel
    from docintent.brains.mllm import ModelBrain

    api = KeywordApi()
    assert isinstance(api, ChatModel)
    brain = ModelBrain(chat_model=api)
    result = docintent.ask(_page(), "What is the value of Catalogue?", brain=brain)
    assert result.answer == "27" and result.confidence == 0.9 and result.error is None
    assert result.prompt_tokens > 0 and any("Catalogue" in p for p in api.prompts)
    none = docintent.ask(_page(), "What is the value of Catalogue?", strategy="none", brain=ModelBrain(chat_model=api))
    assert none.answer == "27"


def test_a_strategy_with_new_control_flow_is_a_config_class_and_a_function():
    from typing import Literal

    from docintent.brains import Keep, UseTool
    from docintent.strategies import MODES, NAMED, Mode, StrategyConfig

    class TwiceConfig(StrategyConfig):
        mode: Literal["twice"] = "twice"
        tool: str = "rotate_90"

    def run_twice(run, config):
        """Run one tool twice in a row, reviewing each, then answer."""
        for _ in range(2):
            applied = run.apply(config.tool, {}, "twice")
            if applied.change is not None:
                verdict = run.brain.review(run.state, applied.change)
                (run.keep if isinstance(verdict, Keep) else run.rollback)(applied.change)
        return run.answer()

    with MODES.scoped("twice", Mode(TwiceConfig, run_twice)), NAMED.scoped("twice", lambda: TwiceConfig(name="twice")):
        brain = ScriptedBrain(decisions=[UseTool("never asked")], final="done")
        result = get_strategy("twice").run(_page(), "q?", "doc", brain)
        assert result.answer == "done" and result.tools_kept == ["rotate_90", "rotate_90"]
        assert [c[0] for c in brain.calls] == ["review", "review", "answer"]
        with pytest.raises(ConfigError, match=r"unknown option 'tol' \(did you mean 'tool'\?\); valid options: tool$"):
            get_strategy("twice", tol="x")


def test_a_dataset_with_a_new_metric_is_one_loader_and_one_metric(tmp_path):
    from docintent.evaluation.datasets import DATASETS
    from docintent.evaluation.metrics import METRICS, Metric
    from docintent.evaluation.runner import run_benchmark
    from docintent.io import save_page
    from docintent.sample import Sample

    image = tmp_path / "page.png"
    save_page(_page(), image)

    def load_words(path, cache_dir=None, allow_outside_paths=False):
        return [
            Sample(
                f"w{i}",
                str(image),
                "word?",
                answers=(gold,),
                task="doc",
                subset="words",
                group=f"w{i}",
                meta={"metric": "exact_fold"},
            )
            for i, gold in enumerate(("FORTY-TWO", "Forty-two!"))
        ]

    exact = Metric(
        "exact_fold",
        lambda p, a, s: float(any(p.strip().lower() == g.strip().lower() for g in a)),
        lambda score: score >= 1.0,
    )
    with DATASETS.scoped("words", load_words), METRICS.scoped("exact_fold", exact):
        from docintent.evaluation.datasets import load_dataset

        samples = load_dataset("words:anything")
        summary = run_benchmark(samples, ["none"], lambda: ScriptedBrain(final="forty-two"), tmp_path / "run")
        rows = [json.loads(line) for line in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
    # ANLS would give the second row partial credit; the dataset's own metric gives exact matches only
    assert [r["score"] for r in sorted(rows, key=lambda r: r["sample"]["id"])] == [1.0, 0.0]
    assert summary is not None


# -- every option typo: one line naming the valid options -------------------------------------------------


def test_each_registry_names_the_valid_options_or_kinds():
    from docintent.evaluation.datasets import load_dataset
    from docintent.evaluation.metrics import score_row
    from docintent.ocr import get_engine
    from docintent.perception import Thresholds
    from docintent.retrieval.planners import PLANNERS
    from docintent.tools import get_tool

    cases = [
        (
            lambda: get_brain("offline", answer_treshold=0.9),
            "unknown option 'answer_treshold' (did you mean 'answer_threshold'?); valid options: answer_threshold",
        ),
        (lambda: get_brain("offline", review_rule="strict"), "option 'review_rule'='strict'"),
        (lambda: get_brain("openai", base_url="http://127.0.0.1:9/v1", max_tokns=9), "unknown option 'max_tokns'"),
        (lambda: get_brain("telepathy"), "unknown brain 'telepathy'; valid brains: "),
        (lambda: get_strategy("mact", ne="many"), "option 'ne'='many': input should be a valid integer"),
        (lambda: get_strategy("none", max_rounds=3), "strategy 'none' (mode direct): unknown option 'max_rounds'"),
        (
            lambda: get_engine("rapidocr", det_sid=640),
            "OCR engine 'rapidocr': unknown option 'det_sid' (did you "
            "mean 'det_side'?); valid options: det_side, text_score",
        ),
        (lambda: get_engine("easyocr"), "unknown OCR engine 'easyocr'; valid OCR engines: rapidocr, tesseract"),
        (
            lambda: Thresholds(shdow=0.3),
            "unknown degradation 'shdow' (did you mean 'shadow'?); valid degradations: appearance",
        ),
        (
            lambda: get_tool("deshadow"),
            "unknown tool 'deshadow' (did you mean 'deshadowing'?); valid tools: appearance",
        ),
        (lambda: PLANNERS.get("offline", methd="bm25"), "planner 'offline': unknown option 'methd'"),
        (lambda: load_dataset("csv:x.csv"), "unknown kind 'csv'; valid kinds: synth, wilddoc, jsonl"),
        (lambda: score_row("doc", "", "a", ["a"], metric="bleu"), "unknown metric 'bleu'; valid metrics: anls"),
    ]
    for make, message in cases:
        with pytest.raises((ConfigError, UnknownComponentError, Exception)) as caught:
            make()
        text = str(caught.value)
        assert message in text and "\n" not in text, text


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--brain-opt", "answer_treshold=0.9"], "unknown option 'answer_treshold' (did you mean 'answer_threshold'?)"),
        (["--brain-opt", "review_rule=strict"], "option 'review_rule'='strict'"),
        (["--strategy-opt", "np=2"], "strategy 'docintent' (mode loop): unknown option 'np'; valid options: tools"),
        (["--strategy-opt", "max_rounds=lots"], "option 'max_rounds'='lots': input should be a valid integer"),
    ],
)
def test_option_typos_on_the_command_line_are_one_line_without_a_crash_file(
    tmp_path, argv, message, capsys, monkeypatch
):
    from docintent.cli import main
    from docintent.io import save_page

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    image = tmp_path / "page.png"
    save_page(_page(), image)
    code = main(["ask", str(image), "What is Catalogue?", *argv])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and message in err, err
    assert "unexpected error" not in err and not list(tmp_path.rglob("crash*"))


# -- nothing reaches into another module's private names ------------------------------------------------------


def _private_definitions(tree: ast.AST) -> set[str]:
    """Private names a module defines: functions, classes, methods and attributes it assigns."""
    names = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
            names.add(node.attr)
        elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.add(node.id)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return {n for n in names if n.startswith("_") and not n.startswith("__")}


def _private_uses(paths: list[Path]) -> list[str]:
    """Uses of a private name of another docintent module: ``from X import _name``, and ``obj._name`` where
    ``_name`` is defined only in other modules (a method or attribute of their classes)."""
    trees = {path: ast.parse(path.read_text(encoding="utf-8")) for path in paths}
    defined = {path: _private_definitions(tree) for path, tree in trees.items()}
    everywhere = set().union(*defined.values())
    found = []
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level > 0 or (node.module or "").startswith("docintent")):
                for alias in node.names:
                    if alias.name.startswith("_") and not alias.name.startswith("__") and alias.name != "_version":
                        found.append(f"{path.name}:{node.lineno}: imports {alias.name} from {node.module}")
            elif (
                isinstance(node, ast.Attribute)
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
                and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))
                and node.attr in everywhere
                and node.attr not in defined[path]
            ):
                found.append(f"{path.name}:{node.lineno}: uses {ast.unparse(node)}, private to another module")
    return found


def test_no_module_imports_or_calls_another_modules_private_names():
    sources = sorted((REPO / "src" / "docintent").rglob("*.py")) + sorted((REPO / "benchmarks").glob("*.py"))
    assert _private_uses(sources) == []


def test_records_with_many_fields_are_built_by_keyword():
    """A record (a dataclass) of five or more fields takes at most three arguments by position; the rest are named,
    so a call reads as what it sets and a field added or moved cannot silently shift the others."""
    import dataclasses
    import importlib
    import pkgutil

    import docintent

    offenders = []
    for info in pkgutil.walk_packages(docintent.__path__, "docintent."):
        if info.name.endswith("__main__"):
            continue
        try:
            module = importlib.import_module(info.name)
        except ImportError:  # a module of an extra not installed here (the service without FastAPI)
            continue
        for name, obj in vars(module).items():
            if not (isinstance(obj, type) and dataclasses.is_dataclass(obj) and obj.__module__ == info.name):
                continue
            fields = [f for f in dataclasses.fields(obj) if f.init]
            positional = [f.name for f in fields if not f.kw_only]
            if len(fields) >= 5 and len(positional) > 3:
                offenders.append(f"{info.name}.{name}: {len(positional)} positional of {len(fields)}")
    assert offenders == []
