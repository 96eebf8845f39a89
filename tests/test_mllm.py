"""The model brain against a real loopback OpenAI-compatible server (docintent.testing.fake_openai)."""

from __future__ import annotations

import socket
import time

import numpy as np
import pytest

from docintent.brains import get_brain
from docintent.brains.base import State
from docintent.brains.mllm import PHASE_TOKENS, ModelBrain
from docintent.brains.tokens import data_url_size
from docintent.errors import ConfigError, ModelEndpointError
from docintent.page import Page
from docintent.settings import get_settings
from docintent.strategies import get_strategy
from docintent.testing.fake_openai import (
    FakeOpenAI,
    delayed,
    http_error,
    images,
    is_probe,
    last_user_text,
    offered_tools,
    text,
    text_tool_call,
    tool_call,
)

ROTATIONS = ("rotate_90", "rotate_180", "rotate_270")


@pytest.fixture
def page() -> Page:
    """A small landscape page with dark bars (text stand-ins) so rotations change its shape."""
    img = np.full((60, 90, 3), 255, dtype=np.uint8)
    img[10:14, 8:80] = 0
    img[24:28, 8:60] = 0
    img[40:44, 8:70] = (30, 60, 200)
    return Page.from_array(img, source="test-page")


def brain_for(server: FakeOpenAI, **options) -> ModelBrain:
    return ModelBrain(base_url=server.base_url, model=server.model, backoff=0.0, **options)


def run(page, server, question="What is the total?", task="doc", strategy="docintent", tools=ROTATIONS, **options):
    brain = brain_for(server, **options)
    return get_strategy(strategy, tools=tools).run(page, question, task, brain), brain


def roles(body) -> list[str]:
    return [m["role"] for m in body["messages"]]


# -- Phase A / Phase B requests ---------------------------------------------------------------------


def test_phase_a_offers_answer_and_available_tools_with_the_current_image(page):
    with FakeOpenAI([tool_call("answer", answer="1,250", confidence="high", reasoning="total row is sharp")]) as server:
        result, _ = run(page, server, tools=("rotate_90", "rotate_180"))
    assert result.answer == "1,250" and result.confidence == 0.9
    (request,) = server.chat_requests
    assert offered_tools(request) == ["answer", "rotate_90", "rotate_180"]
    assert roles(request) == ["system", "user"]
    assert data_url_size(images(request)[0]) == (90, 60)
    assert "What is the total?" in last_user_text(request)
    assert "shortest span" in request["messages"][0]["content"]  # document answer-format rules
    assert request["temperature"] == 0 and request["top_p"] == 1 and request["max_tokens"] == PHASE_TOKENS["decide"]


def test_rollback_disables_the_tool_and_phase_b_sees_before_and_after(page):
    script = [
        tool_call("rotate_90", content="The page lies on its side."),
        tool_call("rollback", reason="the rotated text is upside down"),
        tool_call("answer", answer="42", confidence="medium"),
    ]
    with FakeOpenAI(script) as server:
        result, _ = run(page, server, tools=("rotate_90", "rotate_180"))
    a1, b1, a2 = server.chat_requests
    assert offered_tools(a1) == ["answer", "rotate_90", "rotate_180"]
    assert offered_tools(b1) == ["continue", "rollback"]
    assert [data_url_size(u) for u in images(b1)] == [(90, 60), (60, 90)]  # before, after
    assert "BEFORE" in str(b1["messages"][-1]["content"]) and "rotate_90" in last_user_text(b1)
    assert offered_tools(a2) == ["answer", "rotate_180"]  # the rolled-back tool is no longer offered
    assert data_url_size(images(a2)[-1]) == (90, 60)  # Phase A continues from the page before the tool
    assert result.answer == "42"
    assert result.tools_rolled_back == ["rotate_90"] and result.tools_kept == []
    assert result.final_page is page
    rollback = next(s for s in result.trace if s.action == "rollback")
    assert rollback.reason == "the rotated text is upside down"
    use = next(s for s in result.trace if s.action == "use_tool")
    assert use.reason == "The page lies on its side."


def test_keep_continues_from_the_restored_page(page):
    script = [tool_call("rotate_180"), tool_call("continue"), tool_call("answer", answer="ok", confidence="low")]
    with FakeOpenAI(script) as server:
        result, _ = run(page, server)
    assert result.tools_kept == ["rotate_180"] and result.answer == "ok" and result.confidence == 0.3
    assert np.array_equal(result.final_page.pixels, page.pixels[::-1, ::-1])


# -- context strategies -----------------------------------------------------------------------------

CONTEXT_SCRIPT = [
    tool_call("rotate_90", content="sideways"),
    tool_call("continue"),
    tool_call("answer", answer="7", confidence="high"),
]


@pytest.mark.parametrize("context", ["none", "text", "full"])
def test_context_strategies_send_what_they_promise(page, context):
    with FakeOpenAI(CONTEXT_SCRIPT) as server:
        result, brain = run(page, server, history=context)
    a1, b1, a2 = server.chat_requests
    assert result.answer == "7"
    assert len(images(a1)) == 1 and len(images(b1)) == (3 if context == "full" else 2)
    if context == "none":
        assert roles(a2) == ["system", "user"] and len(images(a2)) == 1
        assert "Earlier steps" not in last_user_text(a2)
    elif context == "text":
        assert roles(a2) == ["system", "user"] and len(images(a2)) == 1
        assert "Earlier steps" in last_user_text(a2)
        assert "you called rotate_90" in last_user_text(a2) and "kept the result of rotate_90" in last_user_text(a2)
        assert "Earlier steps" in last_user_text(b1)
    else:
        assert roles(b1) == ["system", "user", "assistant", "tool", "user"]
        assert roles(a2) == ["system", "user", "assistant", "tool", "user", "assistant", "tool", "user"]
        assert len(images(a2)) == 4  # A1 page, B1 before+after, A2 page
        calls = [m["tool_calls"][0]["id"] for m in a2["messages"] if m["role"] == "assistant"]
        answers = [m["tool_call_id"] for m in a2["messages"] if m["role"] == "tool"]
        assert calls == answers
        assert "kept" in a2["messages"][6]["content"]
    assert result.prompt_tokens == brain.usage.prompt_tokens > 0


def test_text_context_sends_fewer_tokens_than_full(page):
    totals = {}
    for context in ("text", "full"):
        with FakeOpenAI(CONTEXT_SCRIPT) as server:
            result, _ = run(page, server, context=context)
        totals[context] = result.prompt_tokens
    assert 0 < totals["text"] < totals["full"]


# -- robustness -------------------------------------------------------------------------------------


@pytest.mark.parametrize("style", ["tags", "fenced", "json"])
def test_tool_calls_written_as_text_are_parsed(page, style):
    script = [
        text_tool_call("rotate_180", style=style),
        text_tool_call("continue", style=style),
        text_tool_call("answer", style=style, answer="Net income", confidence="high"),
    ]
    with FakeOpenAI(script) as server:
        result, _ = run(page, server, history="full")
    assert result.tools_kept == ["rotate_180"] and result.answer == "Net income"
    a2 = server.chat_requests[2]
    # a text call has no id to answer, so the outcome comes back as user text
    assert roles(a2) == ["system", "user", "assistant", "user", "assistant", "user"]
    assert "rotate_180 was applied" in str(a2["messages"][3]["content"])


def test_a_bare_answer_object_is_an_answer(page):
    with FakeOpenAI([text('{"answer": "2019", "confidence": "high"}')]) as server:
        result, _ = run(page, server)
    assert result.answer == "2019" and len(server.chat_requests) == 1


def test_malformed_arguments_get_one_corrective_message(page):
    script = [
        {"tool": "answer", "arguments": '{"answer": "12", "confidence": '},
        tool_call("answer", answer="12", confidence="high"),
    ]
    with FakeOpenAI(script) as server:
        result, _ = run(page, server)
    first, second = server.chat_requests
    correction = second["messages"][-1]
    assert correction["role"] == "user" and "not valid JSON" in correction["content"]
    # the malformed call goes back as text: servers that re-parse replayed arguments would refuse it
    replayed = second["messages"][-2]
    assert "tool_calls" not in replayed and '{"answer": "12", "confidence": ' in replayed["content"]
    assert result.answer == "12" and result.confidence == 0.9


def test_two_unusable_replies_end_in_a_forced_answer(page):
    script = [tool_call("dewarp_everything"), tool_call("rotate_45"), text('```json\n{"answer": "Total due"}\n```')]
    with FakeOpenAI(script) as server:
        result, _ = run(page, server)
    a1, a1_again, forced = server.chat_requests
    assert "'dewarp_everything' is not an offered function" in a1_again["messages"][-1]["content"]
    assert "tools" not in forced and '{"answer"' in forced["messages"][0]["content"]  # baseline JSON prompt
    assert result.answer == "Total due"
    assert "forced answer" in result.trace[-1].reason and "rotate_45" in result.trace[-1].reason


def test_a_server_that_never_calls_a_tool_still_ends_with_an_answer(page):
    with FakeOpenAI(lambda body: text("Answer: 3.75")) as server:
        result, _ = run(page, server)
    assert result.answer == "3.75" and result.error is None
    assert len(server.chat_requests) == 3  # the question, one corrective message, the forced answer


def test_the_loop_never_exceeds_t_rounds(page):
    def always_restore(body):
        tools = offered_tools(body)
        if "continue" in tools:
            return tool_call("continue")
        if tools:
            return tool_call(tools[1])
        return text('{"answer": "out of rounds"}')

    with FakeOpenAI(always_restore) as server:
        brain = brain_for(server)
        result = get_strategy("docintent", tools=ROTATIONS, max_rounds=3).run(page, "q?", "doc", brain)
    assert len(server.chat_requests) == 3 * 2 + 1
    assert "last round" in last_user_text(server.chat_requests[4])
    assert result.answer == "out of rounds" and result.tools_used == 3


def test_429_with_retry_after_is_honoured_then_succeeds(page):
    script = [
        http_error(429, retry_after=1, message="rate limited"),
        tool_call("answer", answer="9", confidence="high"),
    ]
    with FakeOpenAI(script) as server:
        t0 = time.perf_counter()
        result, _ = run(page, server)  # backoff=0: only the Retry-After header makes it wait
        elapsed = time.perf_counter() - t0
    first, second = [r for r in server.requests if r.method == "POST" and not is_probe(r.body)]
    assert result.answer == "9"
    assert second.time - first.time >= 0.95 and elapsed >= 0.95


def test_5xx_is_retried_and_the_sdk_does_not_retry_on_its_own(page):
    with FakeOpenAI([http_error(503), http_error(500), tool_call("answer", answer="x", confidence="low")]) as server:
        result, _ = run(page, server, max_retries=2)
    assert result.answer == "x" and len(server.chat_requests) == 3
    with FakeOpenAI([http_error(503), tool_call("answer", answer="x", confidence="low")]) as server:
        result, _ = run(page, server, max_retries=0)
    assert len(server.chat_requests) == 1  # exactly one request: no hidden SDK retry
    assert result.answer == "" and "HTTP 503" in result.error and server.base_url in result.error


def test_a_timeout_is_retried_then_reported_as_an_empty_answer(page):
    script = [delayed(3, tool_call("answer", answer="late", confidence="high"))] * 2
    with FakeOpenAI(script) as server:
        t0 = time.perf_counter()
        result, _ = run(page, server, timeout=0.3, max_retries=1)
        elapsed = time.perf_counter() - t0
    # Each scripted reply takes 3 s, so waiting for either would take >= 3 s and both >= 6 s; the client waits
    # 0.3 s, then as long again for the abandoned reply's slot, then 0.6 s (doubled). The bound is generous
    # because a loaded 2-core machine can add seconds of scheduling delay, not because the client is slow.
    assert len(server.chat_requests) == 2 and elapsed < 5.5
    assert result.answer == ""
    assert "no reply within 0.6 s" in result.error and "gave up after 2 attempt(s)" in result.error
    assert result.trace[-1].action == "failed"


def test_unreachable_endpoint_is_one_clear_error(page):
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    brain = ModelBrain(base_url=f"http://127.0.0.1:{port}/v1", model="qwen-vl", timeout=2)
    with pytest.raises(ModelEndpointError) as err:
        brain.answer(State("q?", "doc", page, original=page, available_tools=[]))
    assert f"http://127.0.0.1:{port}/v1" in str(err.value) and "qwen-vl" in str(err.value)


def test_unknown_model_names_the_served_ones(page):
    with FakeOpenAI([], models=["Qwen2.5-VL-7B"]) as server:
        brain = ModelBrain(base_url=server.base_url, model="qwen2.5-vl")
        result = get_strategy("docintent", tools=ROTATIONS).run(page, "q?", "doc", brain)
    assert result.answer == ""
    assert f"model 'qwen2.5-vl' is not served at {server.base_url}; it serves: Qwen2.5-VL-7B" in result.error


def test_the_only_served_model_is_used_when_none_is_configured(page):
    with FakeOpenAI([text('{"answer": "A"}')], models=["only-one"]) as server:
        brain = ModelBrain(base_url=server.base_url)
        answer = brain.answer(State("q?", "doc", page, original=page, available_tools=[]))
    assert answer.text == "A" and server.chat_requests[0]["model"] == "only-one"


# -- accounting, options, baselines -----------------------------------------------------------------


def test_token_totals_and_cost_come_from_the_servers_usage(page):
    script = [
        {**tool_call("rotate_90"), "usage": {"prompt_tokens": 1000, "completion_tokens": 20}},
        {**tool_call("continue"), "usage": {"prompt_tokens": 2000, "completion_tokens": 5}},
        {
            **tool_call("answer", answer="5", confidence="high"),
            "usage": {"prompt_tokens": 1500, "completion_tokens": 30},
        },
    ]
    with FakeOpenAI(script) as server:
        result, brain = run(page, server, price_in=2.0, price_out=10.0)
    assert (result.prompt_tokens, result.completion_tokens) == (4500, 55)
    assert [s.prompt_tokens for s in result.trace if s.phase in ("A", "B")] == [1000, 2000, 1500]
    assert brain.usage.calls == 3
    assert brain.cost == pytest.approx((4500 * 2.0 + 55 * 10.0) / 1e6)


def test_options_arrive_as_strings_from_the_command_line(page):
    with FakeOpenAI([text('{"answer": "B"}')]) as server:
        brain = get_brain(
            "openai",
            base_url=server.base_url,
            model=server.model,
            max_tokens="512",
            temperature="0.2",
            max_side="48",
            image_format="png",
            history="none",
            phase_tokens="false",
        )
        brain.answer(State("q?", "chart", page, original=page, available_tools=[]))
    (request,) = server.chat_requests
    assert request["max_tokens"] == 512 and request["temperature"] == 0.2
    assert data_url_size(images(request)[0]) == (48, 32)
    assert images(request)[0].startswith("data:image/png")
    assert "digits only" in request["messages"][0]["content"]  # chart answer-format rules


def test_unknown_or_invalid_options_list_the_valid_ones():
    with pytest.raises(ConfigError, match="unknown option.*'contxt'.*valid:.*context"):
        ModelBrain(base_url="http://localhost:1/v1", contxt="full")
    with pytest.raises(ConfigError, match="context"):
        ModelBrain(base_url="http://localhost:1/v1", context="everything")


def test_endpoint_comes_from_openai_environment_and_a_placeholder_key(page, monkeypatch):
    with FakeOpenAI([text('{"answer": "C"}')]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.delenv("OPENAI_API_KEY", raising=False)
        monkeypatch.delenv("DOCINTENT_API_KEY", raising=False)
        monkeypatch.delenv("DOCINTENT_BASE_URL", raising=False)
        get_settings.cache_clear()
        try:
            brain = ModelBrain(model=server.model)
            assert brain.answer(State("q?", "doc", page, original=page, available_tools=[])).text == "C"
        finally:
            get_settings.cache_clear()
    assert server.requests[-1].headers["authorization"] == "Bearer no-key-needed"


def test_missing_endpoint_says_how_to_set_one(monkeypatch):
    for name in ("OPENAI_BASE_URL", "DOCINTENT_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    get_settings.cache_clear()
    try:
        with pytest.raises(ConfigError, match="DOCINTENT_BASE_URL or OPENAI_BASE_URL"):
            ModelBrain(model="m")
    finally:
        get_settings.cache_clear()


def test_max_pixels_caps_each_image(page):
    with FakeOpenAI([text('{"answer": "D"}')]) as server:
        brain_for(server, max_pixels=1000).answer(State("q?", "doc", page, original=page, available_tools=[]))
    w, h = data_url_size(images(server.chat_requests[0])[0])
    assert w * h <= 1000 and w > h


def test_text_tool_mode_describes_functions_in_the_prompt(page):
    script = [
        text('{"name": "rotate_180", "arguments": {}}'),
        text("rollback, the text is mirrored"),
        text("I still need a function"),
        text('{"answer": "E"}'),
    ]
    with FakeOpenAI(script) as server:
        result, _ = run(page, server, native_tools=False)
    a1 = server.chat_requests[0]
    assert "tools" not in a1 and '"name": "rotate_180"' in last_user_text(a1)
    assert result.tools_rolled_back == ["rotate_180"]  # verdict read from the text after the corrective reply
    assert result.answer == "E"


def test_table_claims_and_diagnosis_for_the_judge_baseline(page):
    diagnosis = text('```json\n{"degradations": ["Rotation", "motion blur", "glare"], "rotation": "rotate_270"}\n```')
    with FakeOpenAI([diagnosis, text('{"answer": "True"}')]) as server:
        result, _ = run(page, server, question="The 2019 revenue exceeds 2018.", task="table", strategy="judge-fixed")
    diag, answer = server.chat_requests
    assert "tools" not in diag and "rotate_270" in diag["messages"][0]["content"]
    assert "True or False" in answer["messages"][0]["content"]
    step = result.trace[0]
    assert (step.degradations, step.rotation) == (["orientation", "blur"], "rotate_270")
    assert step.to_dict()["data"] == {"degradations": ["orientation", "blur"], "rotation": "rotate_270"}
    assert result.tools_kept == ["rotate_270"] and result.answer == "True"
    assert data_url_size(images(answer)[0]) == (60, 90)  # the answer sees the rotated page


def test_prompt_version_is_exposed(page):
    brain = ModelBrain(base_url="http://localhost:1/v1", model="m")
    from docintent.brains.prompts import PROMPT_VERSION

    assert brain.prompt_version == PROMPT_VERSION and PROMPT_VERSION.startswith("1.0+")


# -- command line ---------------------------------------------------------------------------------


def test_ask_command_with_the_openai_brain(page, tmp_path, capsys):
    from docintent.cli import main
    from docintent.io import save_page

    image = tmp_path / "page.png"
    save_page(page, image)
    script = [
        tool_call("rotate_180", content="upside down"),
        tool_call("continue"),
        tool_call("answer", answer="Invoice 7", confidence="high"),
    ]
    with FakeOpenAI(script) as server:
        code = main(
            [
                "ask",
                str(image),
                "Which invoice?",
                "--brain",
                "openai",
                "--brain-opt",
                f"base_url={server.base_url}",
                "--brain-opt",
                "model=fake-vl",
                "--brain-opt",
                "context=full",
                "--brain-opt",
                "max_side=64",
            ]
        )
    out = capsys.readouterr().out
    assert code == 0
    assert "answer: Invoice 7" in out and "kept: rotate_180" in out
    assert "tokens: " in out
    assert data_url_size(images(server.chat_requests[0])[0]) == (64, 43)


def test_fake_server_runs_from_a_shell_with_a_script_file(page, tmp_path, capsys):
    import json
    import re
    import subprocess
    import sys

    from docintent.cli import main
    from docintent.io import save_page

    script = tmp_path / "replies.json"
    script.write_text(json.dumps([tool_call("answer", answer="from the shell", confidence="medium")]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "docintent.testing.fake_openai", "--port", "0", "--script", str(script)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        line = proc.stdout.readline()
        base_url = re.search(r"(http://\S+/v1)", line).group(1)
        image = tmp_path / "page.png"
        save_page(page, image)
        code = main(["ask", str(image), "q?", "--brain", "openai", "--brain-opt", f"base_url={base_url}"])
    finally:
        proc.terminate()
        proc.wait(timeout=10)
    assert code == 0 and "answer: from the shell" in capsys.readouterr().out


def test_reasoning_models_get_max_completion_tokens(page):
    with FakeOpenAI([text('{"answer": "F"}')]) as server:
        brain_for(server, max_tokens_param="max_completion_tokens", max_tokens=900, phase_tokens=False).answer(
            State("q?", "doc", page, original=page, available_tools=[])
        )
    (request,) = server.chat_requests
    assert request["max_completion_tokens"] == 900 and "max_tokens" not in request


def test_retry_wait_reads_retry_after_forms():
    import email.utils

    class Err:
        def __init__(self, headers):
            self.response = type("R", (), {"headers": headers})()

    brain = ModelBrain(base_url="http://localhost:1/v1", model="m", backoff=0.5, max_wait=30)
    assert brain.endpoint.retry_wait(Err({"retry-after": "3"}), 0) == 3.0
    assert brain.endpoint.retry_wait(Err({"retry-after-ms": "250"}), 0) == 0.25
    later = email.utils.formatdate(time.time() + 10, usegmt=True)
    assert 8.0 < brain.endpoint.retry_wait(Err({"retry-after": later}), 0) <= 10.0
    assert brain.endpoint.retry_wait(Err({"retry-after": "3600"}), 0) == 30.0  # capped by max_wait
    assert brain.endpoint.retry_wait(Err({}), 2) == 2.0  # backoff 0.5 doubled twice
