"""A question family (task) is one record in a registry: a plug-in task, registered for the length of a test, is
accepted by ``docintent ask``, listed in its ``--help``, taken by question files and the service, prompted to a
model with its own noun and answer rules, and scored by its own default metric; an unknown task is one line
naming the valid ones."""

from __future__ import annotations

import contextlib
import json
import re
import time

import pytest
from PIL import Image

from conftest import render_text_page
from docintent.cli import main
from docintent.errors import ConfigError, InputError, UnknownComponentError
from docintent.evaluation.metrics import METRICS, TASK_METRICS, Metric, score_row, summarize, summary_markdown
from docintent.vocabulary import BUILTIN, TASKS, Task, check_task, task_names

RULES = (
    "Answer format (receipt questions):\n- Give the amount with its currency symbol exactly as the receipt "
    'prints it (write "$12.50").\n- Never round an amount.'
)
RECEIPT = Task("receipt", "till receipt", RULES, metric="digits")


def _digits(text: str) -> str:
    return re.sub(r"\D", "", text)


#: A plug-in metric: the digits must agree, whatever surrounds them (ANLS would give "12.50" vs "$12.50" 0.83).
DIGITS = Metric(
    "digits",
    lambda p, a, s: float(any(_digits(p) == _digits(g) and _digits(g) for g in ([a] if isinstance(a, str) else a))),
    lambda score: score >= 1.0,
)


@contextlib.contextmanager
def receipt_task():
    with TASKS.scoped(RECEIPT.name, RECEIPT), METRICS.scoped(DIGITS.name, DIGITS):
        yield


@pytest.fixture
def receipt_png(tmp_path):
    path = tmp_path / "receipt.png"
    Image.fromarray(render_text_page(["Corner Cafe", "Total: $12.50"], size=26, width=600)).save(path)
    return path


def test_the_builtin_tasks_are_records_in_report_order_each_with_its_wilddoc_metric():
    assert task_names() == tuple(TASKS) == ("doc", "chart", "table") == tuple(t.name for t in BUILTIN)
    assert dict(TASK_METRICS) == {"doc": "anls", "chart": "relaxed_accuracy", "table": "table"}
    assert [TASKS[t].noun for t in TASKS] == ["document", "chart", "table"]
    assert all(TASKS.entry(t).builtin for t in TASKS)


def test_a_plugin_task_is_listed_and_accepted_by_ask_and_the_model_is_prompted_with_its_noun_and_rules(
    receipt_png, capsys
):
    from docintent.testing.fake_openai import FakeOpenAI, tool_call

    with receipt_task():
        assert main(["ask", "--help"]) == 0
        shown = " ".join(capsys.readouterr().out.split())
        assert "answer format family: doc, chart, table, receipt" in shown
        with FakeOpenAI([tool_call("answer", answer="$12.50", confidence="high")]) as server:
            code = main(
                [
                    "ask",
                    str(receipt_png),
                    "What is the total?",
                    "--task",
                    "receipt",
                    "--brain",
                    "openai",
                    "--base-url",
                    server.base_url,
                    "--model",
                    server.model,
                    "--json",
                ]
            )
            out = capsys.readouterr()
            assert code == 0, out.err
            (request,) = server.chat_requests
    assert json.loads(out.out)["answer"] == "$12.50"
    system = request["messages"][0]["content"]
    assert "about the till receipt shown in the image" in system and RULES in system
    assert "shortest span" not in system  # not the document rules
    assert "receipt" not in TASKS and main(["ask", str(receipt_png), "q?", "--task", "receipt"]) == 1  # scope ended


def test_the_answer_prompt_of_every_strategy_uses_the_task_record(receipt_png):
    from docintent.brains.mllm import ModelBrain
    from docintent.io import load_page
    from docintent.strategies import get_strategy
    from docintent.testing.fake_openai import FakeOpenAI, text

    page = load_page(receipt_png)
    with receipt_task(), FakeOpenAI([text('{"answer": "$12.50", "confidence": "high"}')]) as server:
        brain = ModelBrain(base_url=server.base_url, model=server.model, backoff=0.0)
        result = get_strategy("none").run(page, "What is the total?", "receipt", brain)
        (request,) = server.chat_requests
    assert result.answer == "$12.50"
    system = request["messages"][0]["content"]
    assert "about the till receipt shown in the image" in system and RULES in system


def test_a_plugin_task_is_scored_by_its_default_metric_unless_the_sample_names_another():
    rows = [
        dict(task="receipt", subset="cafe", group="q1", prediction="12.50", answers=["$12.50"]),
        dict(task="receipt", subset="cafe", group="q1", prediction="$12.50", answers=["$12.50"]),
    ]
    with receipt_task():
        assert TASK_METRICS["receipt"] == "digits"
        assert score_row("receipt", "cafe", "12.50", ["$12.50"]) == 1.0
        assert score_row("receipt", "cafe", "12.50", ["$12.50"], metric="anls") < 1.0
        summary = summarize(rows)
        table = summary_markdown(summary)
    assert summary.tasks["receipt"].score == 100.0 and summary.tasks["receipt"].consistency == 100.0
    assert "| receipt (digits) | 100.00 | 100.00 |" in table
    with pytest.raises(UnknownComponentError, match="unknown task 'receipt'"):
        score_row("receipt", "cafe", "12.50", ["$12.50"])


def test_question_files_and_the_service_take_a_plugin_task(tmp_path, receipt_png):
    from docintent.batch import read_questions

    questions = tmp_path / "questions.jsonl"
    questions.write_text(json.dumps({"question": "What is the total?", "task": "receipt"}) + "\n")
    with receipt_task():
        assert [q.task for q in read_questions(questions)] == ["receipt"]
    with pytest.raises(InputError, match=r"line 1: unknown task 'receipt'; valid tasks: doc, chart, table$"):
        read_questions(questions)

    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from docintent.brains import Answer, FunctionBrain
    from docintent.server import ServeConfig, create_app

    seen: list[str] = []

    def make():
        def decide(state):
            seen.append(state.task)
            return Answer("$12.50", 0.9, "read the total line")

        return FunctionBrain(decide=decide, answer=decide)

    config = ServeConfig(brains={"scripted": make}, default_brain="scripted", warm_up=False, workers=1)
    with receipt_task(), TestClient(create_app(config)) as client:
        assert "receipt" in client.get("/v1/config").json()["tasks"]
        form = {"question": "What is the total?", "task": "receipt", "strategy": "none"}
        posted = client.post("/v1/ask", files={"file": ("r.png", receipt_png.read_bytes(), "image/png")}, data=form)
        assert posted.status_code < 300, posted.text
        refused = client.post(
            "/v1/ask", files={"file": ("r.png", receipt_png.read_bytes(), "image/png")}, data={**form, "task": "recipt"}
        )
        assert refused.status_code == 400 and "receipt" in refused.text
        run_id = posted.json()["id"]
        deadline = time.monotonic() + 60
        while (run := client.get(f"/v1/runs/{run_id}").json())["status"] not in ("done", "failed", "timeout"):
            assert time.monotonic() < deadline, run
            time.sleep(0.02)
    assert run["status"] == "done" and seen == ["receipt"]


def test_an_unknown_task_is_refused_in_one_line_naming_the_valid_tasks(receipt_png, capsys):
    with receipt_task():
        with pytest.raises(ConfigError) as caught:
            check_task("recipt")
        assert str(caught.value) == (
            "unknown task 'recipt' (did you mean 'receipt'?); valid tasks: doc, chart, table, receipt"
        )
        code = main(["ask", str(receipt_png), "What is the total?", "--task", "recipt"])
        err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1, err
    assert "'doc', 'chart', 'table', 'receipt'" in err and "did you mean 'receipt'?" in err
    import docintent

    with pytest.raises(ConfigError, match=r"^unknown task 'video'; valid tasks: doc, chart, table$"):
        docintent.ask(str(receipt_png), "What is the total?", task="video")


def test_plugin_tasks_arrive_through_entry_points_and_never_replace_a_builtin(monkeypatch):
    from docintent import registry

    class _Point:
        def __init__(self, name, target):
            self.name, self.value, self._target = name, f"tests:{name}", target

        def load(self):
            return self._target

    points = [
        _Point("receipt", RECEIPT),
        _Point("doc", Task("doc", "letter", "rules", metric="anls")),
        _Point("broken", object()),
    ]
    monkeypatch.setattr(registry.metadata, "entry_points", lambda group: points if group == "docintent.tasks" else [])
    fresh = type(TASKS)("task", group="docintent.tasks", loader=lambda: [fresh.add(t) for t in BUILTIN])
    assert list(fresh) == ["doc", "chart", "table", "receipt"]
    assert fresh["doc"].noun == "document" and fresh.entry("receipt").origin.startswith("entry point 'receipt'")
    assert any("task 'doc' from entry point 'doc'" in r and "taken by built-in" in r for r in fresh.refused)
    assert any("'broken'" in r and "is not a docintent Task" in r for r in fresh.refused)


def test_a_task_record_is_checked_when_it_is_made():
    with pytest.raises(ConfigError, match="task name 'Receipt Questions'"):
        Task("Receipt Questions", "receipt", "rules", metric="anls")
    with pytest.raises(ConfigError, match="task 'receipt': metric must be non-empty text"):
        Task("receipt", "receipt", "rules", metric="")
    with pytest.raises(ConfigError, match="cannot be registered as 'till'"):
        with TASKS.scoped("till", RECEIPT):
            pass


def test_a_report_table_titles_a_plugin_task_by_its_name():
    from docintent.evaluation.report import StrategyRow, strategy_table

    rows = [
        dict(
            task="receipt",
            subset="cafe",
            group="q1",
            prediction="12.50",
            answers=["$12.50"],
            score=1.0,
            metric="digits",
        ),
        dict(task="doc", subset="letter", group="q2", prediction="May", answers=["May"], score=1.0),
    ]
    with receipt_task():
        header, cells = strategy_table(
            [
                StrategyRow(
                    "run",
                    "none",
                    "offline",
                    rows=2,
                    errors=0,
                    summary=summarize(rows),
                    avg_tools=1.0,
                    median_seconds=1.0,
                    tokens_per_sample=0.0,
                )
            ]
        )
    # the built-in family keeps its benchmark's name; a plug-in is titled by its own (a KeyError before)
    assert "DocVQA score" in header and "receipt score" in header
    assert cells[0][header.index("receipt score")] == "100.00"
