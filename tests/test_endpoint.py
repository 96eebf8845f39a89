"""The one OpenAI-compatible client (docintent.brains.endpoint.Endpoint) and its users besides the model brain."""

from __future__ import annotations

import time

import pytest

from docintent.brains.endpoint import Endpoint, RequestRejected
from docintent.errors import ModelEndpointError
from docintent.retrieval.planners import OpenAIPlanner
from docintent.testing.fake_openai import FakeOpenAI, http_error, text, tool_call


def test_a_reply_carries_text_calls_finish_reason_and_usage():
    content = (
        '<think>maybe rotate first</think>\n<tool_call>\n{"name": "answer", "arguments": {"answer": "7"}}\n</tool_call>'
    )
    with FakeOpenAI([text(content), tool_call("rollback", reason="smeared")]) as server:
        endpoint = Endpoint(server.base_url, server.model, max_tokens=300)
        first = endpoint.chat([{"role": "user", "content": "q"}])
        second = endpoint.chat(
            [{"role": "user", "content": "q"}], [{"type": "function", "function": {"name": "rollback"}}]
        )
    assert first.reasoning == "maybe rotate first" and first.text.startswith("<tool_call>")
    assert [(c.name, c.arguments, c.native) for c in first.calls] == [("answer", {"answer": "7"}, False)]
    assert (second.calls[0].name, second.calls[0].arguments, second.finish_reason) == (
        "rollback",
        {"reason": "smeared"},
        "tool_calls",
    )
    assert first.usage.calls == 1 and endpoint.usage.calls == 2 and endpoint.usage.prompt_tokens > 0
    assert server.chat_requests[0]["max_tokens"] == 300 and server.chat_requests[0]["temperature"] == 0


def test_the_planner_honours_retry_after_through_the_endpoint():
    script = [http_error(429, retry_after=1), text('{"scores": {"page_000001": 0.8}}')]
    with FakeOpenAI(script, models=["tiny"]) as server:
        planner = OpenAIPlanner(model="tiny", base_url=server.base_url)
        t0 = time.perf_counter()
        scores, usage = planner.judge("q", [("page_000001", "some text")], tools=None)
        elapsed = time.perf_counter() - t0
    assert scores == [0.8] and usage.calls == 1 and elapsed >= 0.95
    assert len(server.chat_requests) == 2


def test_the_planner_reports_a_refused_request_with_its_fix():
    with FakeOpenAI(
        [http_error(400, message="At most 1 image(s) may be provided in one request.")], models=["tiny"]
    ) as server:
        planner = OpenAIPlanner(model="tiny", base_url=server.base_url)
        with pytest.raises(RequestRejected) as err:
            planner.judge("q", [("page_000001", "text")], tools=None)
    assert "--limit-mm-per-prompt" in str(err.value) and server.base_url in str(err.value)
    assert isinstance(err.value, ModelEndpointError)
