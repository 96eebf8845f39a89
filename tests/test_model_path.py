"""The model path against servers that misbehave the way real ones do (loopback docintent.testing.fake_openai).

Each test reproduces one way a real server (vLLM, Ollama, llama.cpp, hosted reasoning models, proxies) breaks
a run, and asserts what the user sees: the answer, the trace, the error message and its fix.
"""

from __future__ import annotations

import json
import time

import numpy as np
import pytest

from docintent.brains.base import State
from docintent.brains.endpoint import Endpoint, RequestRejected
from docintent.brains.mllm import ModelBrain
from docintent.brains.tokens import data_url_size, image_tokens
from docintent.errors import ModelEndpointError
from docintent.page import Page
from docintent.strategies import get_strategy
from docintent.testing.fake_openai import (
    FakeOpenAI,
    delayed,
    http_error,
    images,
    offered_tools,
    text,
    tool_call,
)

ROTATIONS = ("rotate_90", "rotate_180", "rotate_270")


@pytest.fixture
def page() -> Page:
    img = np.full((60, 90, 3), 255, dtype=np.uint8)
    img[10:14, 8:80] = 0
    img[24:28, 8:60] = 0
    img[40:44, 8:70] = (30, 60, 200)
    return Page.from_array(img, source="test-page")


@pytest.fixture
def document() -> Page:
    """A 600x800 page with dark bars (lines of text) and a grey gradient (shadow) so restorations change it."""
    img = np.full((800, 600, 3), 250, dtype=np.uint8)
    img[:, :, :] = (np.linspace(170, 250, 600)[None, :, None]).astype(np.uint8)
    for y in range(60, 760, 40):
        img[y : y + 12, 50:550] = 20
    return Page.from_array(img, source="document")


def brain_for(server: FakeOpenAI, **options) -> ModelBrain:
    return ModelBrain(base_url=server.base_url, model=server.model, backoff=0.0, **options)


def run(page, server, question="What is the total?", strategy="docintent", tools=ROTATIONS, **options):
    brain = brain_for(server, **options)
    return get_strategy(strategy, tools=tools).run(page, question, "doc", brain), brain


# -- 1. a malformed call is not replayed verbatim ------------------------------------------------------


def test_a_malformed_call_is_not_replayed_to_a_server_that_reparses_arguments(page):
    # vLLM re-parses the arguments of replayed assistant calls and answers 400 on invalid JSON
    script = [
        {"tool": "answer", "arguments": '{"answer": "12", "confidence": "high",}'},
        tool_call("answer", answer="12", confidence="high"),
    ]
    with FakeOpenAI(script, strict_arguments=True) as server:
        result, _ = run(page, server)
    assert result.error is None and result.answer == "12"
    second = server.chat_requests[1]
    for message in second["messages"]:
        for call in message.get("tool_calls") or []:
            json.loads(call["function"]["arguments"])  # every replayed call is valid JSON
    assert "not valid JSON" in json.dumps(second["messages"][-1])  # the model still learns what was wrong


# -- 2. one endpoint error mid-run does not throw the work away ----------------------------------------


def test_a_review_the_server_refuses_counts_as_a_rollback_and_the_run_answers(page):
    script = [tool_call("rotate_90"), tool_call("answer", answer="42", confidence="medium")]
    with FakeOpenAI(script, max_images=1) as server:  # vLLM started with --limit-mm-per-prompt image=1
        result, _ = run(page, server, review="page")
    assert result.error is None and result.answer == "42"
    assert result.tools_rolled_back == ["rotate_90"] and result.final_page is page
    step = next(s for s in result.trace if s.phase == "B")
    assert step.action == "rollback"
    assert "review could not be sent" in step.reason and "--limit-mm-per-prompt" in step.reason


def test_a_context_overflow_retries_once_with_smaller_images():
    img = np.full((1600, 1200, 3), 240, dtype=np.uint8)
    img[:, :600] = 180  # a shadow over the left half
    img[100:1500:50, 100:1100] = 20
    large = Page.from_array(img, source="large")
    # room for Phase A's one page (~2,450 image tokens) and ~1,500 text tokens, not for Phase B's two pages
    context = 4096 + image_tokens(1200, 1600) + 1500
    script = [tool_call("deshadowing"), tool_call("continue"), tool_call("answer", answer="7", confidence="high")]
    with FakeOpenAI(script, context_length=context) as server:
        result, _ = run(large, server, tools=("deshadowing",), review="page", max_pixels=0, phase_tokens=False)
    assert result.error is None and result.answer == "7" and result.tools_kept == ["deshadowing"]
    b_first, b_again = server.chat_requests[1], server.chat_requests[2]
    assert offered_tools(b_first) == offered_tools(b_again) == ["continue", "rollback"]
    big, small = data_url_size(images(b_first)[0]), data_url_size(images(b_again)[0])
    assert big == (1200, 1600) and small == (600, 800)


# -- 3. replies that are not chat completions --------------------------------------------------------


def test_an_html_page_with_status_200_is_retried_then_named(page):
    html = {"raw": "<html><body>Sign in to the gateway</body></html>", "content_type": "text/html"}
    with FakeOpenAI([html, tool_call("answer", answer="9", confidence="high")]) as server:
        result, _ = run(page, server)
    assert result.answer == "9" and len(server.chat_requests) == 2
    with FakeOpenAI([html] * 3) as server:
        result, _ = run(page, server, max_retries=2)
    assert result.answer == "" and len(server.chat_requests) == 3
    assert "not a chat completion" in result.error and "Sign in" in result.error and "/v1" in result.error


def test_a_body_that_is_not_json_and_an_empty_choices_list_are_retried(page):
    script = [
        {"raw": "{not json", "content_type": "application/json"},
        {"choices": []},
        tool_call("answer", answer="5", confidence="high"),
    ]
    with FakeOpenAI(script) as server:
        result, _ = run(page, server)
    assert result.answer == "5" and len(server.chat_requests) == 3


def test_a_body_that_is_not_json_reaches_the_command_line_as_one_line(page, tmp_path, capsys):
    from docintent.cli import main
    from docintent.io import save_page

    image = tmp_path / "page.png"
    save_page(page, image)
    with FakeOpenAI([{"raw": "{not json", "content_type": "application/json"}] * 5) as server:
        code = main(
            [
                "ask",
                str(image),
                "q?",
                "--brain",
                "openai",
                "--brain-opt",
                f"base_url={server.base_url}",
                "--brain-opt",
                "max_retries=1",
                "--brain-opt",
                "backoff=0",
            ]
        )
    captured = capsys.readouterr()
    assert code == 1 and "Traceback" not in captured.err and "JSONDecodeError" not in captured.err + captured.out
    assert "not JSON" in captured.err + captured.out


# -- 5. reasoning text is not a call -------------------------------------------------------------------


def test_a_json_example_inside_reasoning_does_not_run(page):
    # Qwen3 templates open <think> in the prompt, so the content holds only the closing tag
    content = (
        'The page might be sideways; a call like {"name": "rotate_90", "arguments": {}} would turn it. '
        'But the text reads fine.</think>\n{"name": "answer", "arguments": '
        '{"answer": "1,250", "confidence": "high"}}'
    )
    with FakeOpenAI([text(content)]) as server:
        result, _ = run(page, server)
    assert result.answer == "1,250" and result.tools_used == 0


def test_a_call_naming_an_offered_function_wins_over_an_unknown_one(page):
    content = (
        '{"name": "think_harder", "arguments": {}}\n'
        '{"name": "answer", "arguments": {"answer": "B", "confidence": "low"}}'
    )
    with FakeOpenAI([text(content)]) as server:
        result, _ = run(page, server)
    assert result.answer == "B" and len(server.chat_requests) == 1


# -- 6. negation in text verdicts ------------------------------------------------------------------------


def test_a_text_verdict_reads_negation(page):
    script = [
        tool_call("rotate_180"),
        text("Nothing is worse, no need to roll back. Verdict: continue."),
        text("still no call"),
        tool_call("answer", answer="ok", confidence="high"),
    ]
    with FakeOpenAI(script) as server:
        result, _ = run(page, server)
    assert result.tools_kept == ["rotate_180"] and result.tools_rolled_back == []


def test_a_text_verdict_that_rolls_back_still_rolls_back(page):
    script = [
        tool_call("rotate_180"),
        text("The digits are worse now, I would not continue."),
        text("roll back"),
        tool_call("answer", answer="ok", confidence="high"),
    ]
    with FakeOpenAI(script) as server:
        result, _ = run(page, server)
    assert result.tools_rolled_back == ["rotate_180"]


# -- 7. finish_reason -----------------------------------------------------------------------------------


def test_a_reply_cut_by_max_tokens_is_asked_again_with_more_room(page):
    cut = {"content": "<think>The total row is at the bottom, the digits are", "finish_reason": "length"}
    with FakeOpenAI([cut, tool_call("answer", answer="3", confidence="high")]) as server:
        result, _ = run(page, server, max_tokens=256)
    first, second = server.chat_requests
    assert first["max_tokens"] == 256 and second["max_tokens"] == 512
    assert result.answer == "3"


def test_a_reply_cut_twice_tells_the_user_to_raise_max_tokens(page):
    cut = {"content": "<think>Let me look at every cell in turn", "finish_reason": "length"}
    with FakeOpenAI([cut, cut, text('{"answer": "4"}')]) as server:
        result, _ = run(page, server, max_tokens=256)
    assert result.answer == "4"
    assert "max_tokens" in result.trace[-1].reason and "raise" in result.trace[-1].reason


# -- 8. hints ---------------------------------------------------------------------------------------------

VLLM_CONTEXT = (
    "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens "
    "(4904 in the messages, 4096 in the completion). Please reduce the length of the messages or completion."
)


@pytest.mark.parametrize(
    "message, wanted, unwanted",
    [
        (VLLM_CONTEXT, ["max_tokens=4096", "max_side", "--max-model-len"], ["vision-language"]),
        (
            "At most 1 image(s) may be provided in one request.",
            ["--limit-mm-per-prompt"],
            ["vision-language", "context"],
        ),
        (
            "Unsupported value: 'temperature' does not support 0 with this model. Only the default (1) value is supported.",
            ["temperature=1"],
            ["context", "vision-language"],
        ),
    ],
)
def test_each_rejection_names_its_own_fix(page, message, wanted, unwanted):
    with FakeOpenAI([http_error(400, message=message)]) as server:
        result, _ = run(page, server, phase_tokens=False)  # every request reserves max_tokens=4096
    assert result.answer == ""
    for word in wanted:
        assert word in result.error
    for word in unwanted:
        assert word not in result.error
    assert ".." not in result.error


def test_rejections_are_typed_for_callers(page):
    with FakeOpenAI([http_error(400, message="At most 1 image(s) may be provided in one request.")]) as server:
        endpoint = Endpoint(server.base_url, server.model)
        with pytest.raises(RequestRejected) as err:
            endpoint.chat([{"role": "user", "content": "hi"}])
    assert err.value.kind == "image_limit" and err.value.status == 400


# -- 9. a tool that changed nothing is not reviewed -----------------------------------------------------


def test_a_tool_that_changes_nothing_is_not_reviewed_nor_kept():
    symmetric = Page.from_array(np.full((40, 40), 255, dtype=np.uint8))  # rotate_180 gives the same pixels
    script = [tool_call("rotate_180"), tool_call("answer", answer="x", confidence="low")]
    with FakeOpenAI(script) as server:
        result, _ = run(symmetric, server)
    assert [offered_tools(b)[0] for b in server.chat_requests] == ["answer", "answer"]  # no Phase B request
    assert result.tools_kept == [] and result.tools_rolled_back == []
    assert result.answer == "x"


def test_a_skipped_repeat_is_not_a_rollback():
    symmetric = Page.from_array(np.full((40, 40), 255, dtype=np.uint8))
    script = [tool_call("rotate_180"), tool_call("rotate_180"), tool_call("answer", answer="x", confidence="low")]
    with FakeOpenAI(script) as server:
        result, _ = run(symmetric, server)
    assert result.tools_rolled_back == [] and result.tools_kept == [] and result.answer == "x"


# -- 10. prose answers, parallel calls, a hung call ------------------------------------------------------


def test_a_prose_answer_that_quotes_the_answer_returns_the_quote(page):
    with FakeOpenAI([text('Looking at the table, the total shown in the last row is "1,250", in dollars.')]) as server:
        answer = brain_for(server).answer(State("What is the total?", "doc", page, original=page, available_tools=[]))
    assert answer.text == "1,250"


def test_parallel_tool_calls_are_not_dropped_silently(page):
    def two_calls(body):
        if "continue" in offered_tools(body):
            return tool_call("continue")
        if len(body["messages"]) > 2 or "rotate_270" not in offered_tools(body):
            return tool_call("answer", answer="z", confidence="low")
        return {"tools": [("rotate_90", {}), ("rotate_270", {})]}

    with FakeOpenAI(two_calls) as server:
        result, _ = run(page, server)
    use = next(s for s in result.trace if s.action == "use_tool")
    assert use.tool == "rotate_90" and "rotate_270" in use.reason


def test_a_server_that_times_out_twice_then_answers_is_answered_and_the_log_counts_right(
    page, tmp_path, capsys, caplog
):
    from docintent.cli import main
    from docintent.io import save_page

    image = tmp_path / "page.png"
    save_page(page, image)
    late = delayed(2, tool_call("answer", answer="late", confidence="high"))
    script = [late, late, tool_call("answer", answer="42", confidence="high")]
    with caplog.at_level("WARNING", logger="docintent.brains.endpoint"), FakeOpenAI(script) as server:
        code = main(
            [
                "ask",
                str(image),
                "What is the total?",
                "--brain",
                "openai",
                "--brain-opt",
                f"base_url={server.base_url}",
                "--brain-opt",
                "timeout=0.3",
                "--brain-opt",
                "backoff=0",
            ]
        )
    out = capsys.readouterr().out
    assert code == 0 and "42" in out
    assert len(server.chat_requests) == 3
    retries = [r.getMessage() for r in caplog.records if "retry" in r.getMessage()]
    assert len(retries) == 2
    assert "no reply within 0.3 s; retry 1 of 4" in retries[0] and "retry 2 of 4" in retries[1]


def test_a_hung_call_is_retried_like_any_transient_failure_and_the_message_counts_every_attempt(page, caplog):
    with (
        caplog.at_level("WARNING", logger="docintent.brains.endpoint"),
        FakeOpenAI([delayed(3, tool_call("answer", answer="late"))] * 6) as server,
    ):
        t0 = time.perf_counter()
        result, _ = run(page, server, timeout=0.3, max_retries=2)
        elapsed = time.perf_counter() - t0
    # 3 attempts of 0.3, 0.6 and 1.2 s, each retry after as long as the abandoned attempt had (its slot): 3 s in
    # all; the replies (3 s each, 9 s) are never waited for. The bound is loose for a loaded machine.
    assert len(server.chat_requests) == 3 and elapsed < 6.5
    assert "gave up after 3 attempt(s)" in result.error and "no reply within 1.2 s" in result.error
    assert "timeout" in result.error
    retries = [r.getMessage() for r in caplog.records if "retry" in r.getMessage()]
    assert [m.split("; ")[-1].split(" in ")[0] for m in retries] == ["retry 1 of 2", "retry 2 of 2"]


def test_the_default_timeout_is_a_minute():
    brain = ModelBrain(base_url="http://localhost:1/v1", model="m")
    assert brain.endpoint.timeout == 60.0


# -- region-aware Phase B and the image budget ------------------------------------------------------------


def test_phase_b_sends_crops_of_the_evidence_region_and_a_thumbnail(document):
    script = [
        tool_call("deshadowing", region=[0.1, 0.05, 0.6, 0.2]),
        tool_call("continue"),
        tool_call("answer", answer="7", confidence="high"),
    ]
    with FakeOpenAI(script) as server:
        result, _ = run(document, server, tools=("deshadowing",))
    assert result.tools_kept == ["deshadowing"] and result.answer == "7"
    b = server.chat_requests[1]
    before, after, thumb = [data_url_size(u) for u in images(b)]
    assert before == after and before[0] < 600 and before[1] < 300  # the region with a margin, not the page
    assert max(thumb) <= 384
    assert "region" in json.dumps(b["messages"][-1]).lower()


def test_the_whole_page_review_stays_available(document):
    script = [
        tool_call("deshadowing", region=[0.1, 0.05, 0.6, 0.2]),
        tool_call("continue"),
        tool_call("answer", answer="7", confidence="high"),
    ]
    with FakeOpenAI(script) as server:
        run(document, server, tools=("deshadowing",), review="page")
    assert [data_url_size(u) for u in images(server.chat_requests[1])] == [(600, 800), (600, 800)]


def test_the_region_argument_is_offered_and_never_reaches_the_tool(document):
    script = [
        tool_call("deshadowing", region=[0, 0, 1, 0.5]),
        tool_call("continue"),
        tool_call("answer", answer="7", confidence="high"),
    ]
    with FakeOpenAI(script) as server:
        result, _ = run(document, server, tools=("deshadowing",))
    spec = server.chat_requests[0]["tools"][1]["function"]
    assert spec["name"] == "deshadowing" and "region" in spec["parameters"]["properties"]
    applied = next(s for s in result.trace if s.phase == "tool")
    assert applied.action == "applied" and "region" not in applied.data.get("args", {})


def test_an_image_budget_downsizes_later_images_first(document):
    script = [tool_call("deshadowing"), tool_call("continue"), tool_call("answer", answer="7", confidence="high")]
    with FakeOpenAI(script) as server:
        run(document, server, tools=("deshadowing",), review="page", image_budget=1300)
    sizes = [data_url_size(u) for body in server.chat_requests for u in images(body)]
    tokens = [image_tokens(*s) for s in sizes]
    assert len(sizes) == 4 and sizes[0] == (600, 800)  # the first page (609 tokens) fits half the budget
    assert tokens[0] > tokens[1] > tokens[2] > tokens[3] and sum(tokens) <= 1300


def test_tokens_per_phase_are_recorded_in_the_result(page):
    script = [
        {**tool_call("rotate_90"), "usage": {"prompt_tokens": 1000, "completion_tokens": 20}},
        {**tool_call("continue"), "usage": {"prompt_tokens": 700, "completion_tokens": 5}},
        {
            **tool_call("answer", answer="5", confidence="high"),
            "usage": {"prompt_tokens": 900, "completion_tokens": 30},
        },
    ]
    with FakeOpenAI(script) as server:
        result, _ = run(page, server)
    row = result.to_dict()
    assert row["prompt_tokens"] == 2600
    assert row["tokens_by_phase"]["A"] == {"prompt": 1900, "completion": 50}
    assert row["tokens_by_phase"]["B"] == {"prompt": 700, "completion": 5}


def test_endpoint_errors_are_model_endpoint_errors(page):
    with FakeOpenAI([http_error(400, message="bad things")]) as server:
        with pytest.raises(ModelEndpointError, match="bad things"):
            Endpoint(server.base_url, server.model).chat([{"role": "user", "content": "hi"}])


def test_a_region_a_zoom_read_is_reviewed_when_phase_a_named_none(document):
    from docintent.page import Box
    from docintent.tools.zoom import ZoomEvidence

    brain = ModelBrain(base_url="http://localhost:1/v1", model="m", context="image", native_tools=True)
    box = Box(0.1, 0.1, 0.5, 0.3)
    zoom = ZoomEvidence("total row", "text", box, angle=0, crop=document, page_hash=document.hash)
    state = State(
        "What is the total?", "doc", document, original=document, available_tools=["deshadowing"], evidence=[zoom]
    )
    after = document.derive(np.ascontiguousarray(255 - document.pixels), "invert")
    messages, functions = brain.phase_b_request(state, document, after, tool="deshadowing")
    sizes = [data_url_size(part["image_url"]["url"]) for part in messages[-1]["content"] if part["type"] == "image_url"]
    # the zoomed box with a margin of a tenth of its size each side (at least 2 % of the page): 288 x 192 px
    assert len(sizes) == 3 and sizes[0] == sizes[1] == (288, 192) and max(sizes[2]) == 384
    assert "[0.1, 0.1, 0.5, 0.3]" in messages[-1]["content"][0]["text"]
