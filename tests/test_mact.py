"""MACT: the calculator, the offline reader's intents and plans, the orchestration with scripted roles, the
model brain's roles against the loopback server, the multi-step synthetic questions, and ``ask`` with knobs."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from docintent import Page
from docintent.brains import ScriptedBrain, get_brain
from docintent.brains.mllm import ModelBrain
from docintent.brains.offline.roles import make_plans
from docintent.brains.roles import Execution, Plan, PlanStep, Verdict
from docintent.errors import ConfigError
from docintent.reader.intent import parse_intent
from docintent.strategies import configured_strategy, get_strategy
from docintent.testing.fake_openai import FakeOpenAI, offered_tools, text, tool_call
from docintent.tools.calculator import CalculatorError, calculate


@pytest.fixture
def page():
    rng = np.random.default_rng(3)
    return Page.from_array(rng.integers(0, 255, (50, 70, 3), dtype=np.uint8), source="noise")


def steps_of(result, phase, action=None):
    return [s for s in result.trace if s.phase == phase and (action is None or s.action == action)]


def corrections(result):
    answer = steps_of(result, "answer")[-1]
    return answer.corrections


# -- the calculator ------------------------------------------------------------------------------------------


def test_calculator_does_arithmetic_on_read_numbers():
    assert calculate("27 - 24") == 3.0
    assert calculate("abs(24 - 27)") == 3.0
    assert calculate("avg(12.5, 7.5, 10)") == 10.0
    assert calculate("sum(1,234, 66)") == 1300.0  # a thousands separator stays inside its number
    assert calculate("-(2 + 3) * 4 / 2") == -10.0


@pytest.mark.parametrize(
    "expr, message",
    [
        ("__import__('os')", "unexpected character '_'"),
        ("().__class__", "unexpected character '.'"),
        ("open(1)", "unknown function 'open'"),
        ("2 ** 3", "unexpected '*'"),
        ("5 / (3 - 3)", "division by zero"),
        ("(1 + 2", "expected ')'"),
    ],
)
def test_calculator_refuses_anything_but_arithmetic(expr, message):
    with pytest.raises(CalculatorError, match=re.escape(message)):
        calculate(expr)


# -- intents and plans (offline) ----------------------------------------------------------------------------


def test_a_difference_question_plans_two_look_ups_and_a_subtraction_without_tools():
    intent = parse_intent("By how many points does Catalogue differ from Wholesale?", "chart")
    assert (intent.kind, intent.targets) == ("diff", ["Catalogue", "Wholesale"])
    plans = make_plans("By how many points does Catalogue differ from Wholesale?", "chart", 3)
    first = plans[0]
    assert [(s.op, s.args.get("target")) for s in first.steps] == [
        ("lookup", "Catalogue"),
        ("lookup", "Wholesale"),
        ("compute", None),
    ]
    assert first.steps[2].inputs == ("s1", "s2") and first.steps[2].expected == "number"
    assert [p.id for p in plans] == ["p1", "p2", "p3"] and plans[2].steps[0].op == "read"
    # a plan names operations, never tools
    assert not any("tool" in s.args for p in plans for s in p.steps)


@pytest.mark.parametrize(
    "question, task, kind, detail",
    [
        ("Which country has the second highest value?", "chart", "extreme", ("max", 2)),
        ("How many districts have Turnout (%) above 49?", "table", "count", ("above", 49.0)),
        ("What is the sum of Capital expenditures in 2008 and 2006?", "table", "sum", ["2008", "2006"]),
        ("What is the average of Peru and Egypt in 2020?", "chart", "avg", ["Peru", "Egypt"]),
        ("What is the total for Kenya across all years shown?", "chart", "sum", ["Kenya"]),
        ("What was the value in 2003?", "chart", "lookup", []),
    ],
)
def test_question_intents(question, task, kind, detail):
    intent = parse_intent(question, task)
    assert intent.kind == kind
    if kind == "extreme":
        assert (intent.order, intent.rank) == detail
    elif kind == "count":
        assert intent.condition == detail
    else:
        assert intent.targets == detail


def test_a_plan_mistake_moves_planning_to_the_next_alternative():
    q = "What is the combined Won of Springfield Harriers and Lexington Rovers?"
    first = make_plans(q, "table", 1)[0]
    again = make_plans(q, "table", 1, Verdict.flag_plan("'Lexington Rovers' is not among the labels"), tried=1)[0]
    assert first.steps[0].op == "lookup" and again.steps[0].op == "series"
    assert again.id == "p2" and "is not among the labels" in again.rationale


# -- the orchestration with scripted roles --------------------------------------------------------------------

TWO_STEPS = Plan(
    "p1",
    "diff",
    (
        PlanStep("s1", "read A", "number", op="lookup"),
        PlanStep("s2", "subtract", "number", inputs=("s1",), op="compute"),
    ),
)


def test_a_judge_that_flags_twice_then_accepts_makes_two_corrections(page):
    brain = ScriptedBrain(
        plans=[TWO_STEPS],
        executions=[
            Execution("", "reader", "24", value=24.0),
            Execution("", "calculator", "24", value=24.0),
            Execution("", "reader", "27", value=27.0),
            Execution("", "calculator", "3", value=3.0),
            Execution("", "calculator", "3", value=3.0),
        ],
        verdicts=[
            Verdict.flag_execution("s1", "a zoomed re-read gives 27, not 24"),
            Verdict.flag_execution("s2", "the subtraction is missing"),
            Verdict.ok(),
        ],
    )
    result = get_strategy("mact").run(page, "By how much does A differ from B?", "chart", brain)
    assert result.answer == "3"
    flagged = steps_of(result, "judge", "flagged")
    assert [s.mistake for s in flagged] == ["a zoomed re-read gives 27, not 24", "the subtraction is missing"]
    assert [c["before"] for c in corrections(result)] == ["24", "3"] and len(corrections(result)) == 2
    redone = steps_of(result, "execute", "reexecuted")
    assert [(s.step_id, s.candidate) for s in redone] == [("s1", 1), ("s2", 2)]
    assert steps_of(result, "judge")[-1].action == "accepted"


def test_nc_bounds_the_corrections(page):
    always = [Verdict.flag_plan("wrong operation")] * 6
    brain = ScriptedBrain(verdicts=always)
    result = get_strategy("mact", nc=1).run(page, "q?", "doc", brain)
    assert len(corrections(result)) == 1
    assert len(steps_of(result, "judge")) == 2
    assert [s.action for s in steps_of(result, "plan")] == ["planned", "replanned"]
    result = get_strategy("mact", nc=0).run(page, "q?", "doc", ScriptedBrain(verdicts=always))
    assert corrections(result) == [] and len(steps_of(result, "judge")) == 1


def test_ne_candidates_keep_the_most_confident_and_np_runs_every_plan(page):
    plan_b = Plan("p2", "lookup", (PlanStep("s1", "read", "number"),))
    brain = ScriptedBrain(
        plans=[[Plan("p1", "lookup", (PlanStep("s1", "read", "number"),)), plan_b]],
        executions=[
            Execution("", "reader", "7", value=7.0, confidence=0.4),
            Execution("", "zoom", "9", value=9.0, confidence=0.8),
            Execution("", "reader", "5", value=5.0, confidence=0.3),
            Execution("", "zoom", "5", value=5.0, confidence=0.2),
        ],
        verdicts=[Verdict.ok(), Verdict.ok()],
    )
    result = get_strategy("mact", np=2, ne=2).run(page, "q?", "doc", brain)
    assert result.answer == "9"
    assert {s.plan_id for s in steps_of(result, "execute", "executed")} == {"p1", "p2"}
    assert [s.candidate for s in steps_of(result, "execute", "selected")] == [1, 0]


def test_role_ablations_switch_the_judge_and_the_answer_role_off(page):
    brain = ScriptedBrain(verdicts=[Verdict.flag_plan("x")] * 3, final="42", conclusion="from the answer role")
    result = get_strategy("mact", roles="plan,execute").run(page, "q?", "doc", brain)
    assert result.answer == "42" and not steps_of(result, "judge")
    assert ("judge", page.hash) not in brain.calls and ("conclude", page.hash) not in brain.calls
    result = get_strategy("mact").run(page, "q?", "doc", ScriptedBrain(final="42", conclusion="from the answer role"))
    assert result.answer == "from the answer role"


def test_docintent_then_mact_reasons_over_the_kept_page(page):
    from docintent.brains import Answer, Keep, UseTool

    seen = []

    def execute(state, plan, step, results, candidate=0, feedback=None):
        seen.append(state.page.hash)
        return Execution(step.id, "reader", "ok", value="ok", confidence=0.9)

    brain = ScriptedBrain(decisions=[UseTool("rotate_90"), Answer("phase A answer")], reviews=[Keep("better")])
    brain.execute = execute
    result = get_strategy("docintent+mact").run(page, "q?", "doc", brain)
    assert result.tools_kept == ["rotate_90"] and result.answer == "ok"
    assert seen == [result.final_page.hash] and seen[0] != page.hash


def test_knobs_are_checked_and_named():
    with pytest.raises(ConfigError, match="option 'np'=0: input should be greater than or equal to 1"):
        get_strategy("mact", np=0)
    with pytest.raises(ConfigError, match="must include plan and execute"):
        get_strategy("mact", roles="judge,answer")
    assert configured_strategy("docintent+mact", ne=2).name == "docintent+mact[ne=2]"


# -- the offline reader's roles on a rendered chart ---------------------------------------------------------


@pytest.fixture(scope="module")
def pie_page():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 5), dpi=110)
    ax.pie(
        [27, 24, 31, 18],
        labels=["Catalogue", "Wholesale", "Online", "Phone"],
        autopct="%d%%",
        startangle=90,
        wedgeprops={"edgecolor": "white"},
    )
    ax.set_title("Sales by channel, 2021")
    fig.canvas.draw()
    image = np.asarray(fig.canvas.buffer_rgba())[..., :3].copy()
    plt.close(fig)
    return Page.from_array(image, source="pie")


def test_offline_mact_answers_the_pie_difference_that_a_single_reading_misses(pie_page):
    brain = get_brain("offline")
    question = "By how many percentage points does Catalogue differ from Wholesale?"
    result = get_strategy("mact").run(pie_page, question, "chart", brain)
    assert result.answer == "3"
    executed = steps_of(result, "execute", "executed")
    assert [s.output for s in executed] == ["27", "24", "3"]
    assert executed[2].tool == "calculator" and executed[2].args["expression"] == "abs(27 - 24)"
    judge = steps_of(result, "judge")[-1]
    assert judge.action == "accepted" and any("recomputed" in c for c in judge.checks)


# -- the model brain's roles against the loopback server ------------------------------------------------------

ROLE_TOOLS = {
    "planning agent": {"submit_plans"},
    "execution agent": {"record", "zoom", "read_table", "chart_values", "calculator"},
    "judgment agent": {"accept", "flag_plan", "flag_execution"},
    "answer agent": set(),
}


def role_of(body) -> str:
    system = str(body["messages"][0]["content"])
    return next(role for role in ROLE_TOOLS if role in system)


def model_script(judge_replies):
    judge_replies = list(judge_replies)

    def reply(body):
        role = role_of(body)
        if role == "planning agent":
            steps = [
                {"goal": "read Catalogue", "expected": "number"},
                {"goal": "read Wholesale", "expected": "number"},
                {"goal": "subtract", "expected": "number", "inputs": ["s1", "s2"]},
            ]
            return tool_call("submit_plans", plans=[{"steps": steps}])
        if role == "execution agent":
            step = re.search(r"Your step: (s\d)", str(body["messages"][1]["content"])).group(1)
            if step == "s3" and body["messages"][-1]["role"] == "user":
                return tool_call("calculator", expression="27 - 24")
            if step == "s3":
                return tool_call("record", output=body["messages"][-1]["content"].split("\n")[-1], confidence="high")
            return tool_call("record", output={"s1": "27", "s2": "24"}[step], confidence="high")
        if role == "judgment agent":
            return judge_replies.pop(0) if judge_replies else tool_call("accept")
        return text('{"answer": "3", "confidence": "high"}')

    return reply


def model_brain(server: FakeOpenAI) -> ModelBrain:
    return ModelBrain(base_url=server.base_url, model=server.model, backoff=0.0)


def test_each_role_request_carries_its_own_prompt_and_only_its_tools(page):
    with FakeOpenAI(model_script([])) as server:
        result = get_strategy("mact").run(
            page, "By how much does Catalogue differ from Wholesale?", "chart", model_brain(server)
        )
    assert result.answer == "3"
    requests = server.chat_requests
    assert [role_of(b) for b in requests] == ["planning agent"] + ["execution agent"] * 4 + [
        "judgment agent",
        "answer agent",
    ]
    for body in requests:
        assert set(offered_tools(body)) == ROLE_TOOLS[role_of(body)]
    calc = [s for s in steps_of(result, "execute") if s.step_id == "s3"][0]
    assert calc.output == "3" and calc.tool == "calculator"
    # tokens are accounted per role call
    assert all(s.prompt_tokens > 0 for s in result.trace if s.phase in ("plan", "judge", "answer"))
    assert result.prompt_tokens == sum(s.prompt_tokens for s in result.trace)


def test_model_judge_that_flags_twice_then_accepts_gives_two_corrections(page):
    flags = [
        tool_call("flag_execution", step_id="s1", mistake="Catalogue misread"),
        tool_call("flag_plan", mistake="wrong order"),
    ]
    with FakeOpenAI(model_script(flags)) as server:
        result = get_strategy("mact").run(
            page, "By how much does Catalogue differ from Wholesale?", "chart", model_brain(server)
        )
    fixes = corrections(result)
    assert [(c["target"], c["mistake"]) for c in fixes] == [("execution", "Catalogue misread"), ("plan", "wrong order")]
    assert [s.action for s in steps_of(result, "judge")] == ["flagged", "flagged", "accepted"]
    # the replanning request tells the planner what was wrong
    plans = [b for b in server.chat_requests if role_of(b) == "planning agent"]
    assert len(plans) == 2 and "wrong order" in plans[1]["messages"][0]["content"]


def test_model_nc_bounds_the_loop(page):
    always = [tool_call("flag_plan", mistake="still wrong")] * 10
    with FakeOpenAI(model_script(always)) as server:
        result = get_strategy("mact", nc=1).run(
            page, "By how much does Catalogue differ from Wholesale?", "chart", model_brain(server)
        )
    assert len(corrections(result)) == 1
    assert sum(role_of(b) == "judgment agent" for b in server.chat_requests) == 2


def test_a_malformed_role_reply_gets_the_phase_a_corrective_turn(page):
    script = model_script([])
    replies = iter([text("I would first read the two slices."), None])

    def reply(body):
        if role_of(body) == "planning agent":
            scripted = next(replies)
            if scripted is not None:
                return scripted
        return script(body)

    with FakeOpenAI(reply) as server:
        result = get_strategy("mact").run(
            page, "By how much does Catalogue differ from Wholesale?", "chart", model_brain(server)
        )
    first, second = server.chat_requests[:2]
    assert role_of(first) == role_of(second) == "planning agent"
    correction = second["messages"][-1]
    assert (
        correction["role"] == "user"
        and "Your reply could not be used: the reply contains no function call" in correction["content"]
    )
    assert "submit_plans" in correction["content"] and result.answer == "3"


# -- the multi-step synthetic questions ----------------------------------------------------------------------


def test_multistep_set_asks_multistep_questions_about_the_same_documents(tmp_path):
    from docintent.synth import generate

    plain = generate(
        tmp_path / "plain", n=2, seed=5, families=["table"], questions_per_document=2, workers=1, contact_sheet=False
    )
    multi = generate(
        tmp_path / "multi",
        n=2,
        seed=5,
        families=["table"],
        questions_per_document=2,
        workers=1,
        contact_sheet=False,
        multistep=True,
    )
    assert plain.samples == multi.samples == 8
    for name in ("clean/table-00000.png", "images/table-00000-c1.jpg", "images/table-00000-c4.jpg"):
        assert (tmp_path / "plain" / name).read_bytes() == (tmp_path / "multi" / name).read_bytes()
    rows = [json.loads(line) for line in (tmp_path / "multi" / "samples.jsonl").read_text().splitlines()]
    intents = {r["meta"]["intent"] for r in rows}
    assert intents <= {"difference", "sum", "average", "count", "second", "lookup", "value"}
    assert any(r["meta"].get("question", {}).get("multistep") for r in rows)
    assert json.loads((tmp_path / "multi" / "manifest.json").read_text())["multistep"] is True


# -- the command line ------------------------------------------------------------------------------------------


def test_ask_takes_strategy_options_and_shows_the_roles(pie_page, tmp_path, capsys):
    from docintent.cli import main
    from docintent.io import save_page

    image = tmp_path / "pie.png"
    save_page(pie_page, image)
    code = main(
        [
            "ask",
            str(image),
            "By how many percentage points does Catalogue differ from Wholesale?",
            "--task",
            "chart",
            "--strategy",
            "mact",
            "--strategy-opt",
            "np=2",
            "--strategy-opt",
            "nc=1",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0 and "answer: 3" in out
    # the roles in plain words: the plans with their goals, each execution with its tool and output
    assert re.search(r" \d\. planned p2: read every label", out)
    assert re.search(r" \d\. executed p1 s3 #0 with calculator -> '3'", out)


def test_ask_rejects_a_bad_knob_in_one_line(pie_page, tmp_path, capsys):
    from docintent.cli import main
    from docintent.io import save_page

    image = tmp_path / "pie.png"
    save_page(pie_page, image)
    code = main(["ask", str(image), "q?", "--strategy", "mact", "--strategy-opt", "ne=0"])
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "option 'ne'=0: input should be greater than or equal to 1" in err


@pytest.mark.slow  # generates the demo's documents and restores a page (a few minutes on two cores)
def test_the_demo_pie_difference_is_answered_by_docintent_then_mact(tmp_path):
    from docintent.demo import DEMO_STRATEGIES, pick_samples
    from docintent.evaluation.datasets import load_dataset
    from docintent.io import load_page
    from docintent.synth import generate

    generate(tmp_path, n=2, seed=7)
    sample = next(s for s in pick_samples(load_dataset(f"synth:{tmp_path}"), 6) if "differ from" in s.question)
    assert "Catalogue differ from Wholesale" in sample.question and sample.answers[0] == "3"
    result = get_strategy("docintent+mact").run(
        load_page(sample.image), sample.question, sample.task, get_brain("offline")
    )
    assert "docintent+mact" in DEMO_STRATEGIES and result.answer == "3"
