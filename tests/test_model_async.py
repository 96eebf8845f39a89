"""Model requests on one event loop (``bench --concurrency N``): the same replies, errors, retries and rows as
the synchronous client, whatever the concurrency and the order in which replies come back.

Every test talks to the loopback server (docintent.testing.fake_openai) over real HTTP on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import socket
import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from docintent.brains import eventloop
from docintent.brains.endpoint import Endpoint, RequestRejected
from docintent.errors import ModelEndpointError
from docintent.evaluation.executors import LocalExecutor
from docintent.evaluation.runner import BrainFactory, read_results, run_benchmark
from docintent.sample import Sample
from docintent.testing.fake_openai import (
    FakeOpenAI,
    delayed,
    http_error,
    is_probe,
    last_user_text,
    offered_tools,
    text,
    tool_call,
)

MESSAGES = [{"role": "user", "content": "What is the total?"}]
MODES = ("sync", "loop", "achat")


def _ask(endpoint: Endpoint, mode: str, tools=None):
    """One request the way ``mode`` sends it: the synchronous client, ``chat`` on an installed event loop
    (what ``bench --concurrency`` does), or ``achat`` awaited by the caller's own loop."""
    if mode == "sync":
        return endpoint.chat(MESSAGES, tools)
    if mode == "achat":

        async def send():
            try:
                return await endpoint.achat(MESSAGES, tools)
            finally:
                await endpoint.aclose()

        return asyncio.run(send())
    loop = eventloop.EventLoop()
    eventloop.install(loop)
    try:
        return endpoint.chat(MESSAGES, tools)
    finally:
        eventloop.install(None)
        loop.close()


def _outcome(script, mode: str, **options) -> tuple:
    """What a user sees of one request against ``script``: the reply (or the error, the server's URL taken
    out so runs on different ports compare) and the number of requests the server received."""
    with FakeOpenAI(script) as server:
        endpoint = Endpoint(server.base_url, server.model, backoff=0.0, **options)
        try:
            reply = _ask(endpoint, mode, [{"type": "function", "function": {"name": "answer"}}])
            seen: tuple = (
                "reply",
                reply.content,
                reply.reasoning,
                [(c.name, c.arguments, c.native) for c in reply.calls],
                reply.finish_reason,
                reply.usage,
                endpoint.usage,
            )
        except ModelEndpointError as err:
            kind = err.kind if isinstance(err, RequestRejected) else None
            seen = ("error", type(err).__name__, kind, str(err).replace(server.base_url, "URL"))
    return seen, len(server.chat_requests)


def _raw_completion(message: dict, content_type: str = "application/json") -> dict:
    """A completion sent as the body of a reply, for fields the scripted server does not write itself."""
    body = {
        "id": "c1",
        "object": "chat.completion",
        "created": 0,
        "model": "fake-vl",
        "choices": [{"index": 0, "message": {"role": "assistant", **message}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 12, "completion_tokens": 3, "total_tokens": 15},
    }
    return {"raw": json.dumps(body), "content_type": content_type}


SCRIPTS = {
    "answer": [tool_call("answer", answer="42", confidence="high")],
    "reasoning beside the content": [
        _raw_completion({"content": '{"answer": "8"}', "reasoning_content": "the total row reads 8"})
    ],
    "JSON labelled as text": [_raw_completion({"content": "nine"}, content_type="text/plain")],
    "a tool call without id or arguments": [
        _raw_completion({"content": None, "tool_calls": [{"type": "function", "function": {"name": "answer"}}]})
    ],
    "JSON that is not a completion": [{"raw": json.dumps({"detail": "queue full"}), "content_type": "application/json"}]
    * 3,
    "429 then answer": [http_error(429, retry_after=0.2, message="slow down"), tool_call("answer", answer="1")],
    "5xx twice then answer": [http_error(503), http_error(500), text('{"answer": "2"}')],
    "refused (400)": [
        http_error(400, message="At most 1 image(s) may be provided in one request."),
        tool_call("answer", answer="never sent"),
    ],
    "not a completion, then answer": [
        {"raw": "<html>Sign in</html>", "content_type": "text/html"},
        {"choices": []},
        tool_call("answer", answer="3"),
    ],
    "5xx every time": [http_error(502, message="bad gateway")] * 3,
    "timeout twice then answer": [delayed(2, text("late")), delayed(2, text("late")), text('{"answer": "4"}')],
}


@pytest.mark.parametrize("name", list(SCRIPTS))
def test_the_async_client_follows_the_synchronous_rules(name):
    outcomes = {mode: _outcome(SCRIPTS[name], mode, timeout=0.4, max_retries=2) for mode in MODES}
    assert outcomes["loop"] == outcomes["sync"] and outcomes["achat"] == outcomes["sync"], outcomes
    seen, requests = outcomes["sync"]
    expected_requests = {
        "answer": 1,
        "reasoning beside the content": 1,
        "JSON labelled as text": 1,
        "a tool call without id or arguments": 1,
        "JSON that is not a completion": 3,
        "429 then answer": 2,
        "5xx twice then answer": 3,
        "refused (400)": 1,
        "not a completion, then answer": 3,
        "5xx every time": 3,
        "timeout twice then answer": 3,
    }
    assert requests == expected_requests[name]
    if name == "refused (400)":
        assert seen[:3] == ("error", "RequestRejected", "image_limit") and "--limit-mm-per-prompt" in seen[3]
    elif name == "5xx every time":
        assert "gave up after 3 attempt(s); last: HTTP 502: bad gateway" in seen[3]
    elif name == "JSON that is not a completion":
        assert seen[0] == "error" and "gave up after 3 attempt(s)" in seen[3], seen
    else:
        assert seen[0] == "reply"
    if name == "reasoning beside the content":
        assert seen[2] == "the total row reads 8"


def test_an_unreachable_server_is_the_same_error_on_both_paths():
    with socket.socket() as s:  # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    errors = []
    for mode in MODES:
        endpoint = Endpoint(f"http://127.0.0.1:{port}/v1", "m", timeout=2)
        with pytest.raises(ModelEndpointError) as err:
            _ask(endpoint, mode)
        errors.append(str(err.value))
    assert errors[0] == errors[1] == errors[2] and "cannot reach the model endpoint" in errors[0]


def test_retry_lines_on_the_event_loop_count_to_the_real_maximum(caplog):
    script = [delayed(2, text("late")), delayed(2, text("late")), text('{"answer": "5"}')]
    with caplog.at_level("WARNING", logger="docintent.brains.endpoint"):
        seen, requests = _outcome(script, "loop", timeout=0.3, max_retries=4)
    assert seen[0] == "reply" and '"5"' in seen[1] and requests == 3
    retries = [r.getMessage() for r in caplog.records if "retry" in r.getMessage()]
    assert ["retry 1 of 4" in retries[0], "retry 2 of 4" in retries[1], len(retries)] == [True, True, 2]


def test_a_429_on_the_loop_waits_for_retry_after():
    with FakeOpenAI([http_error(429, retry_after=1), text('{"answer": "6"}')]) as server:
        endpoint = Endpoint(server.base_url, server.model, backoff=0.0)
        t0 = time.perf_counter()
        reply = _ask(endpoint, "loop")
        elapsed = time.perf_counter() - t0
    first, second = [r.time for r in server.requests if r.method == "POST"]
    assert '"6"' in reply.content and second - first >= 0.95 and elapsed >= 0.95


# --- whole runs: the same rows whatever the path, the concurrency and the order replies arrive in -------------


def _samples(folder: Path, n: int) -> list[Sample]:
    out = []
    for i in range(n):
        img = np.full((90, 260, 3), 250, np.uint8)
        img[:, :130] = 170  # a shadow over the left half, so restorations change the page
        cv2.putText(img, f"item {i}", (10, 60), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 0), 2)
        path = folder / f"p{i}.png"
        cv2.imwrite(str(path), img)
        out.append(
            Sample(
                id=f"s{i}",
                image=str(path),
                question=f"what is item {i}?",
                answers=(str(i if i % 3 else 0),),
                task="doc",
                subset="DocVQA",
                group=f"g{i}",
                capture=1,
            )
        )
    return out


def _scripted(body: dict) -> dict:
    """Decisions that depend on the request alone, with delays that shuffle the order replies come back in."""
    said = last_user_text(body)
    number = int(said.rsplit("item ", 1)[-1].split("?")[0]) if "item " in said else 0
    time.sleep(0.005 * (int(hashlib.md5(said.encode()).hexdigest(), 16) % 7))
    tools = offered_tools(body)
    if "continue" in tools:
        return tool_call("continue") if number % 2 else tool_call("rollback", reason="the digits got fainter")
    restorations = [t for t in tools if t != "answer"]
    if restorations and number % 3 != 1 and "Earlier steps" not in said:
        return tool_call(restorations[number % len(restorations)], region=[0.0, 0.0, 0.8, 1.0])
    if not tools:  # the answer prompt (strategy none) asks for JSON
        return text(json.dumps({"answer": str(number), "confidence": "high"}))
    return tool_call("answer", answer=str(number), confidence="medium")


def _rows(folder: Path) -> dict:
    out = {}
    for r in read_results(folder):
        result = r.get("result") or {}
        steps = [
            (s["phase"], s["action"], s["tool"], s["reason"], s["before"], s["after"], s["prompt_tokens"], s["data"])
            for s in result.get("trace", [])
        ]
        out[(r["sample"]["id"], r["strategy"])] = (
            r["answer"],
            r["score"],
            r["error"],
            steps,
            result.get("prompt_tokens"),
            result.get("completion_tokens"),
            result.get("final_page"),
        )
    return out


def test_rows_are_the_same_on_both_paths_at_any_concurrency(tmp_path):
    samples = _samples(tmp_path, 9)
    runs = {
        "sync, 1 in flight": LocalExecutor(concurrency=1),
        "sync threads, 4 in flight": LocalExecutor(concurrency=4, async_calls=False),
        "event loop, 1 in flight": LocalExecutor(concurrency=1, async_calls=True),
        "event loop, 3 in flight": LocalExecutor(concurrency=3),
        "event loop, 8 in flight": LocalExecutor(concurrency=8),
        "event loop, 2 processes x 3 in flight": LocalExecutor(workers=2, concurrency=3),
    }
    rows = {}
    with FakeOpenAI(_scripted) as server:
        factory = BrainFactory("openai", {"base_url": server.base_url, "model": server.model})
        for name, executor in runs.items():
            folder = tmp_path / name.replace(" ", "_").replace(",", "")
            summary = run_benchmark(samples, ["none", "docintent"], factory, folder, progress=False, executor=executor)
            assert summary.new_rows == 18 and summary.failed == 0, name
            rows[name] = _rows(folder)
            calls = json.loads((folder / "manifest.json").read_text())["config"]["executor"]["model_calls"]
            assert calls == ("sync" if name.startswith("sync") else "async")
    reference = rows.pop("sync, 1 in flight")
    actions = {step[1] for row in reference.values() for step in row[3]}
    assert {"use_tool", "keep", "rollback"} <= actions, actions  # the runs compare decisions of every kind
    for name, got in rows.items():
        assert got == reference, name
    assert not [t for t in threading.enumerate() if t.name == "docintent-model-requests"]  # every loop stopped


def test_the_event_loop_keeps_n_requests_in_flight(tmp_path):
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def slow(body):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.2)
        with lock:
            state["now"] -= 1
        return text(json.dumps({"answer": last_user_text(body).rsplit(" ", 1)[-1].rstrip("?")}))

    samples = _samples(tmp_path, 17)
    with FakeOpenAI(slow) as server:
        factory = BrainFactory("openai", {"base_url": server.base_url, "model": server.model})
        t0 = time.perf_counter()
        summary = run_benchmark(
            samples, ["none"], factory, tmp_path / "run", progress=False, executor=LocalExecutor(concurrency=8)
        )
        elapsed = time.perf_counter() - t0
    assert summary.new_rows == 17 and summary.failed == 0
    assert state["peak"] == 8
    assert elapsed < 17 * 0.2 / 2  # serially it would take 3.4 s


def test_the_requests_per_minute_budget_holds_on_the_event_loop(tmp_path):
    from docintent.evaluation.executors import RateLimit

    samples = _samples(tmp_path, 30)
    with FakeOpenAI(lambda body: text('{"answer": "1"}')) as server:
        factory = BrainFactory("openai", {"base_url": server.base_url, "model": server.model})
        summary = run_benchmark(
            samples,
            ["none"],
            factory,
            tmp_path / "run",
            progress=False,
            executor=LocalExecutor(concurrency=8, rate_limit=RateLimit(requests_per_minute=600)),
        )
    times = sorted(r.time for r in server.requests if r.method == "POST" and not is_probe(r.body))
    assert summary.new_rows == 30 and len(times) == 30
    # 10 a second, a second's budget at once: 30 requests span at least 29 x 0.1 - 1 = 1.9 s of slots (the
    # first may be sent a little after its own slot, hence the margin); unlimited they take a few ms each.
    assert times[-1] - times[0] >= 1.5
