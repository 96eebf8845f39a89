"""The provider-neutral model seam: retries, back-off, Retry-After, timeouts and the rate limit live in one
wrapper (docintent.brains.retrying.Retrying) that any ChatModel sits inside.

A model behind another API is a transport class written here, in the test, for a loopback server that speaks
an Anthropic-messages-like API (``POST /v1/messages``, ``content`` blocks, ``tool_use``, ``x-api-key``,
``{"type": "error", ...}`` bodies). Wrapped in Retrying it survives the quirky-server cases the OpenAI path
survives (a timeout, a 429 with Retry-After, 5xx), and gives up with the same words, because both paths run the
same rules: the cases below are written once and sent to both servers.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from conftest import render_text_page
from docintent.brains import Usage, ratelimit
from docintent.brains.chat import ChatModel, Reply
from docintent.brains.endpoint import Endpoint, OpenAIChat
from docintent.brains.retrying import Retrying, RetryPolicy, retry_after_seconds
from docintent.brains.toolcalls import ParsedCall
from docintent.errors import ConfigError, ModelEndpointError, ModelTimeout, RateLimited, TransientError
from docintent.page import Page
from docintent.testing.fake_openai import FakeOpenAI, delayed, http_error, text

MODEL = "fake-vl"  # the loopback OpenAI server's model; the messages server answers to the same name


# -- a server that speaks another API --------------------------------------------------------------------


class FakeMessagesApi:
    """A loopback server for an Anthropic-messages-like API. A script is a list of responses served in order,
    then ``then(body)`` for every later request. A response: ``{"text": T}``, ``{"tool": NAME, "input": {..}}``,
    ``{"status": N, "message": M, "retry_after": S}`` (an error body, with a ``retry-after`` header when given),
    and ``{"delay": S}`` beside any of them."""

    def __init__(self, script: list[dict[str, Any]], then: Any = None) -> None:
        self.script = list(script)
        self.then = then
        self.requests: list[tuple[float, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> FakeMessagesApi:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.requests.append((time.time(), body))
            if self.script:
                return self.script.pop(0)
        if self.then is None:
            return {"status": 500, "message": "the script is used up"}
        return self.then(body)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def _send(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("content-length") or 0)) or b"{}")
                if not self.path.endswith("/messages") or not self.headers.get("x-api-key"):
                    self._send(404, {"type": "error", "error": {"type": "not_found_error", "message": self.path}})
                    return
                response = fake._next(body)
                if response.get("delay"):
                    time.sleep(response["delay"])
                if "status" in response:
                    kinds = {429: "rate_limit_error", 529: "overloaded_error", 400: "invalid_request_error"}
                    error = {"type": kinds.get(response["status"], "api_error"), "message": response["message"]}
                    headers = {"retry-after": str(response["retry_after"])} if "retry_after" in response else None
                    self._send(response["status"], {"type": "error", "error": error}, headers)
                    return
                if "tool" in response:
                    content = [
                        {
                            "type": "tool_use",
                            "id": f"toolu_{len(fake.requests)}",
                            "name": response["tool"],
                            "input": response.get("input", {}),
                        }
                    ]
                    stop = "tool_use"
                else:
                    content, stop = [{"type": "text", "text": response["text"]}], "end_turn"
                words = sum(len(json.dumps(m)) for m in body.get("messages", [])) // 4
                self._send(
                    200,
                    {
                        "id": "msg_1",
                        "type": "message",
                        "role": "assistant",
                        "model": body.get("model"),
                        "content": content,
                        "stop_reason": stop,
                        "usage": {"input_tokens": words, "output_tokens": 5},
                    },
                )

        return Handler


# -- the transport for it, written by the user of docintent ----------------------------------------------


class MessagesChat:
    """One attempt per call at the messages API: docintent's messages translated to it and its answer back to a
    Reply; failures as docintent's own errors, so Retrying can retry them. No retry of its own."""

    def __init__(self, base_url: str, model: str = MODEL, *, timeout: float = 60.0) -> None:
        self.url = f"{base_url}/messages"
        self.model = self.configured_model = model
        self.where = f"{base_url} (model {model})"
        self.timeout = timeout
        self.usage = Usage()
        self.timeouts: list[float] = []  # what each attempt was given

    def chat(
        self,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None = None,
        *,
        max_tokens: int | None = None,
        timeout: float | None = None,
    ) -> Reply:
        timeout = self.timeout if timeout is None else timeout
        self.timeouts.append(timeout)
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": max_tokens or 1024,
            "messages": [_message(m) for m in messages if m["role"] != "system"],
        }
        system = "\n".join(_text(m["content"]) for m in messages if m["role"] == "system")
        if system:
            body["system"] = system
        if tools:
            body["tools"] = [
                {
                    "name": t["function"]["name"],
                    "description": t["function"].get("description", ""),
                    "input_schema": t["function"].get("parameters") or {"type": "object"},
                }
                for t in tools
            ]
        request = urllib.request.Request(
            self.url,
            data=json.dumps(body).encode(),
            method="POST",
            headers={"content-type": "application/json", "x-api-key": "test-key", "anthropic-version": "2023-06-01"},
        )
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                data = json.loads(response.read())
        except urllib.error.HTTPError as err:
            said = json.loads(err.read() or b"{}").get("error", {}).get("message", "")
            if err.code == 429:
                raise RateLimited(f"HTTP 429: {said}", retry_after=retry_after_seconds(err.headers)) from None
            if err.code >= 500:
                raise TransientError(f"HTTP {err.code}: {said}", retry_after=retry_after_seconds(err.headers)) from None
            raise ModelEndpointError(f"{self.where} refused the request (HTTP {err.code}): {said}") from None
        except TimeoutError:
            raise ModelTimeout(timeout) from None
        except urllib.error.URLError as err:
            if isinstance(err.reason, TimeoutError):
                raise ModelTimeout(timeout) from None
            raise ModelEndpointError(f"cannot reach {self.where}: {err.reason}") from None
        said = "".join(block["text"] for block in data["content"] if block["type"] == "text")
        calls = [
            ParsedCall(block["name"], block["input"], block["id"])
            for block in data["content"]
            if block["type"] == "tool_use"
        ]
        usage = Usage(data["usage"]["input_tokens"], data["usage"]["output_tokens"], 1)
        self.usage = self.usage + usage
        finish = {"tool_use": "tool_calls", "max_tokens": "length"}.get(data["stop_reason"], "stop")
        return Reply(said, said, calls, finish_reason=finish, usage=usage)

    def image_part(
        self,
        page: Page,
        max_side: int | None = None,
        *,
        max_pixels: int | None = None,
        fmt: str = "auto",
        quality: int = 90,
    ) -> dict[str, Any]:
        import base64

        from docintent.io import encode

        data, mime = encode(page, "png")
        return {
            "type": "image",
            "source": {"type": "base64", "media_type": mime, "data": base64.b64encode(data).decode()},
        }

    def served_models(self) -> list[str]:
        return [self.model]

    def close(self) -> None:
        pass


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")


def _message(message: dict[str, Any]) -> dict[str, Any]:
    """An OpenAI-style message as a messages-API one (text and image blocks, tool calls and their results)."""
    if message["role"] == "tool":
        return {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": message.get("tool_call_id"),
                    "content": _text(message["content"]),
                }
            ],
        }
    content = message.get("content") or ""
    blocks = (
        [{"type": "text", "text": content}]
        if isinstance(content, str)
        else [part for part in content if part.get("type") in ("text", "image")]
    )
    for call in message.get("tool_calls") or []:
        blocks.append(
            {
                "type": "tool_use",
                "id": call["id"],
                "name": call["function"]["name"],
                "input": json.loads(call["function"].get("arguments") or "{}"),
            }
        )
    return {"role": message["role"], "content": blocks}


# -- the same cases, sent to both APIs -------------------------------------------------------------------

TIMEOUT = 0.3  # each attempt's first timeout; a "timeout" step answers after 2 s, longer than 0.3 x 4
POLICY = {"max_retries": 2, "backoff": 0.25}
ANSWER = '{"answer": "4"}'
CASES: dict[str, list[tuple[Any, ...]]] = {
    "a timeout, then an answer": [("timeout",), ("answer",)],
    "a 429 with Retry-After, then an answer": [("status", 429, 0.5, "slow down"), ("answer",)],
    "5xx twice, then an answer": [("status", 503, None, "overloaded"), ("status", 500, None, "internal"), ("answer",)],
    "5xx every time": [("status", 502, None, "bad gateway")] * 3,
    "timeouts every time": [("timeout",)] * 3,
    "a refused request (400)": [("status", 400, None, "messages: field required"), ("answer",)],
}
#: (requests the server receives, the waits between attempts, how it ends: the reply or the final error)
EXPECTED: dict[str, tuple[int, list[float], str]] = {
    "a timeout, then an answer": (2, [0.3], ANSWER),  # waited out as long as the attempt had (its slot)
    "a 429 with Retry-After, then an answer": (2, [0.5], ANSWER),  # the server's wait, not the back-off
    "5xx twice, then an answer": (3, [0.25, 0.5], ANSWER),  # back-off 0.25, doubled
    "5xx every time": (3, [0.25, 0.5], "WHERE: gave up after 3 attempt(s); last: HTTP 502: bad gateway."),
    "timeouts every time": (
        3,
        [0.3, 0.6],
        "WHERE: gave up after 3 attempt(s); last: no reply within 1.2 s. Raise "
        "timeout (reasoning models and long replies need more) or check that the server is not "
        "stuck.",
    ),
    "a refused request (400)": (1, [], "refused"),
}


def _openai_script(steps: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    out = []
    for kind, *rest in steps:
        if kind == "answer":
            out.append(text(ANSWER))
        elif kind == "timeout":
            out.append(delayed(2.0, text("late")))
        else:
            status, retry_after, message = rest
            out.append(http_error(status, retry_after=retry_after, message=message))
    return out


def _messages_script(steps: list[tuple[Any, ...]]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for kind, *rest in steps:
        if kind == "answer":
            out.append({"text": ANSWER})
        elif kind == "timeout":
            out.append({"delay": 2.0, "text": "late"})
        else:
            status, retry_after, message = rest
            out.append({"status": status, "message": message, **({"retry_after": retry_after} if retry_after else {})})
    return out


def _outcome(model: Any, mode: str = "chat") -> str:
    messages = [{"role": "system", "content": "Answer in JSON."}, {"role": "user", "content": "What is the total?"}]
    try:
        if mode == "achat":
            reply = asyncio.run(model.achat(messages))
        else:
            reply = model.chat(messages)
    except ModelEndpointError as err:
        said = str(err).replace(model.where, "WHERE")
        return said if "gave up" in said else "refused"
    return reply.text


def _through_openai(steps: list[tuple[Any, ...]]) -> tuple[int, list[float], str]:
    waits: list[float] = []
    with FakeOpenAI(_openai_script(steps), models=[MODEL]) as server:
        endpoint = Endpoint(server.base_url, MODEL, timeout=TIMEOUT, sleep=waits.append, **POLICY)
        seen = _outcome(endpoint)
    return len(server.chat_requests), waits, seen


def _through_messages(steps: list[tuple[Any, ...]], mode: str = "chat") -> tuple[int, list[float], str]:
    waits: list[float] = []
    with FakeMessagesApi(_messages_script(steps)) as server:
        model = Retrying(MessagesChat(server.base_url, timeout=TIMEOUT), RetryPolicy(**POLICY), sleep=waits.append)
        seen = _outcome(model, mode)
    return len(server.requests), waits, seen


@pytest.mark.parametrize("case", list(CASES))
def test_a_brain_on_another_api_survives_what_the_openai_path_survives(case):
    requests, waits, seen = _through_messages(CASES[case])
    assert (requests, [round(w, 3) for w in waits], seen) == EXPECTED[case]
    # the OpenAI path, through the same rules, meets the same case the same way
    requests, waits, seen = _through_openai(CASES[case])
    assert (requests, [round(w, 3) for w in waits], seen) == EXPECTED[case]


@pytest.mark.parametrize("case", ["5xx twice, then an answer", "timeouts every time"])
def test_achat_follows_the_same_rules_for_a_transport_without_a_coroutine(case):
    requests, waits, seen = _through_messages(CASES[case], mode="achat")
    assert (requests, [round(w, 3) for w in waits], seen) == EXPECTED[case]


def test_each_attempt_after_a_timeout_is_given_twice_as_long_up_to_four_times_the_transports():
    with FakeMessagesApi([{"delay": 2.0, "text": "late"}] * 4) as server:
        inner = MessagesChat(server.base_url, timeout=0.2)
        model = Retrying(inner, RetryPolicy(max_retries=3, backoff=0.0), sleep=lambda s: None)
        with pytest.raises(ModelEndpointError, match=r"gave up after 4 attempt\(s\); last: no reply within 0.8 s"):
            model.chat([{"role": "user", "content": "q"}])
    assert inner.timeouts == [0.2, 0.4, 0.8, 0.8]


def test_a_429_on_another_api_pauses_the_runs_rate_limiter():
    limiter = ratelimit.RateLimiter(requests_per_minute=6000)
    ratelimit.install(limiter)
    try:
        with FakeMessagesApi([{"status": 429, "message": "slow down", "retry_after": 0.3}, {"text": ANSWER}]) as server:
            model = Retrying(MessagesChat(server.base_url), RetryPolicy(backoff=0.0))
            t0 = time.perf_counter()
            reply = model.chat([{"role": "user", "content": "q"}])
            elapsed = time.perf_counter() - t0
    finally:
        ratelimit.install(None)
    stats = limiter.stats()
    assert reply.text == ANSWER and stats.throttled == 1 and stats.requests == 2 and stats.slowdown == 2.0
    assert elapsed >= 0.28  # the run paused for the server's Retry-After


def test_a_model_brain_on_another_api_answers_through_a_timeout_a_429_and_a_5xx():
    import docintent
    from docintent.brains.mllm import ModelBrain

    def model(body: dict[str, Any]) -> dict[str, Any]:
        offered = [t["name"] for t in body.get("tools") or []]
        if "answer" in offered:
            return {"tool": "answer", "input": {"answer": "27", "confidence": "high"}}
        if "continue" in offered:
            return {"tool": "continue", "input": {}}
        return {"text": json.dumps({"answer": "27", "confidence": "high"})}

    quirks = [
        {"delay": 2.0, "text": "late"},
        {"status": 429, "message": "slow down", "retry_after": 1},
        {"status": 529, "message": "overloaded"},
    ]
    page = Page.from_array(render_text_page(["Catalogue 27", "Wholesale 24"], size=26, width=600))
    with FakeMessagesApi(quirks, then=model) as server:
        api = Retrying(MessagesChat(server.base_url, timeout=0.3), RetryPolicy(max_retries=4, backoff=0.05))
        assert isinstance(api, ChatModel)
        brain = ModelBrain(chat_model=api, context="image", native_tools=True)
        result = docintent.ask(page, "What is the value of Catalogue?", brain=brain)
    assert result.answer == "27" and result.error is None and result.prompt_tokens > 0
    times = [t for t, _ in server.requests]
    assert len(times) >= 4 and times[2] - times[1] >= 0.95  # the second attempt's Retry-After was honoured
    assert server.requests[3][1]["messages"] == server.requests[0][1]["messages"]  # the same request, sent again
    assert any(block["type"] == "image" for m in server.requests[0][1]["messages"] for block in m["content"])


def test_the_openai_transport_alone_never_retries():
    with FakeOpenAI([http_error(503, retry_after=2, message="busy"), text(ANSWER)], models=[MODEL]) as server:
        transport = OpenAIChat(server.base_url, MODEL)
        with pytest.raises(TransientError) as err:
            transport.chat([{"role": "user", "content": "q"}])
        assert len(server.chat_requests) == 1
    assert str(err.value) == "HTTP 503: busy" and err.value.retry_after == 2.0
    assert not isinstance(err.value, RateLimited) and isinstance(err.value, ModelEndpointError)
    assert isinstance(Endpoint(server.base_url, MODEL), Retrying)  # the endpoint is the transport, wrapped


def test_jitter_is_seeded_so_reruns_wait_the_same_and_requests_spread_out():
    policy = RetryPolicy(backoff=1.0, jitter=0.5, seed=7)
    waits = [policy.wait(attempt, key=11) for attempt in range(3)]
    assert waits == [policy.wait(attempt, key=11) for attempt in range(3)]  # the same request: the same waits
    assert all(0.5 * 2**a <= w <= 2**a for a, w in enumerate(waits))
    assert waits != [policy.wait(attempt, key=12) for attempt in range(3)]  # another request spreads out
    assert waits != [RetryPolicy(backoff=1.0, jitter=0.5, seed=8).wait(a, key=11) for a in range(3)]
    assert policy.wait(0, 3.0, key=11) == 3.0  # a server's Retry-After is honoured as given
    with pytest.raises(ConfigError, match="jitter must be between 0 and 1"):
        RetryPolicy(jitter=2.0)


def test_retry_after_reads_seconds_milliseconds_and_dates():
    import email.utils

    assert retry_after_seconds({"Retry-After": "3"}) == 3.0
    assert retry_after_seconds({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert 8.0 < retry_after_seconds({"retry-after": email.utils.formatdate(time.time() + 10, usegmt=True)}) <= 10.0
    assert retry_after_seconds({"retry-after": "soon"}) is None and retry_after_seconds(None) is None


def test_the_model_brain_refuses_endpoint_options_a_ready_chat_model_would_ignore():
    from docintent.brains.mllm import ModelBrain

    api = Retrying(MessagesChat("http://127.0.0.1:9/v1"))
    with pytest.raises(
        ConfigError,
        match=r"openai brain: max_retries, temperature configure the OpenAI endpoint, "
        r"which a ready chat_model replaces: .*RetryPolicy\(max_retries=\.\.\.\)",
    ):
        ModelBrain(chat_model=api, temperature=0.9, max_retries=0)
    with pytest.raises(ConfigError, match="openai brain: client configure the OpenAI endpoint"):
        ModelBrain(chat_model=api, client=object())
    brain = ModelBrain(chat_model=api, max_tokens=256, context="text", history="none")  # the brain's own policy
    assert brain.endpoint is api and brain.options.max_tokens == 256


def test_the_search_planner_takes_a_chat_model_on_another_api():
    from docintent.retrieval.planners import OpenAIPlanner

    script = [{"status": 429, "message": "slow down", "retry_after": 0.2}, {"text": '{"scores": {"page_000001": 0.8}}'}]
    with FakeMessagesApi(script) as server:
        planner = OpenAIPlanner(chat_model=Retrying(MessagesChat(server.base_url), RetryPolicy(backoff=0.0)))
        scores, usage = planner.judge("q", [("page_000001", "some text")], tools=None)
    assert scores == [0.8] and usage.calls == 1 and len(server.requests) == 2
    with pytest.raises(ConfigError, match="planner 'openai': max_retries, temperature configure the OpenAI endpoint"):
        OpenAIPlanner(chat_model=Retrying(MessagesChat(server.base_url)), max_retries=0, temperature=0.5)


def test_the_seam_loads_no_provider_client_and_the_document_facade_no_retrieval():
    import subprocess
    import sys

    code = (
        "import sys, docintent.document, docintent.brains.retrying, docintent.brains.chat; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('openai', 'httpx2') "
        "or m.startswith('docintent.retrieval') or m == 'docintent.brains.endpoint'))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]"
