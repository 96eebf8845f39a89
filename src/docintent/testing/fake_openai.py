"""A real OpenAI-compatible HTTP server on loopback that answers from a script: a test double for model brains.

It speaks the chat-completions protocol (``GET /v1/models``, ``POST /v1/chat/completions`` with ``usage``),
records every request, and can misbehave on purpose: HTTP 429 with ``Retry-After``, 5xx, a delay past the
client's timeout, plain-text tool calls, malformed arguments. Use it in your own tests::

    from docintent.testing.fake_openai import FakeOpenAI, tool_call
    with FakeOpenAI([tool_call("answer", answer="42", confidence="high")]) as server:
        brain = ModelBrain(base_url=server.base_url, model=server.model)
        ...
        assert server.chat_requests[0]["tools"][0]["function"]["name"] == "answer"

A script is a list of responses (served in order) or a function ``fn(request_body) -> response``. A response
is a JSON-ready dict:

==================================== ==============================================================
``{"tool": NAME, "arguments": {..}}`` a native tool call (``arguments`` may be a string: sent verbatim)
``{"content": TEXT}``                 a plain-text reply (tool calls written as text go here)
``{"status": 429, "retry_after": 1}`` an HTTP error, with a ``Retry-After`` header when given
``{"delay": SECONDS, ...}``           wait before replying (combine with any of the above)
``{"usage": {...}}``                  override the token counts reported
``{"tools": [[NAME, {..}], ...]}``    several native tool calls in one reply (parallel calls)
``{"finish_reason": "length"}``       override the finish reason (a reply cut by ``max_tokens``)
``{"raw": TEXT, "content_type": ..}`` send ``TEXT`` as the body with status 200 (an HTML page, broken JSON)
``{"choices": []}``                   a completion with an empty ``choices`` list
==================================== ==============================================================

The server can also imitate how real servers are configured (constructor keywords):

- ``max_images=N``: HTTP 400 "At most N image(s) may be provided in one request." (vLLM ``--limit-mm-per-prompt``);
- ``context_length=N``: HTTP 400 with vLLM's context-length message when the estimated prompt plus the
  requested ``max_tokens`` exceeds ``N``;
- ``truncate_at=N``: prompts longer than ``N`` tokens are cut silently and reported as ``N`` prompt tokens
  (Ollama's ``num_ctx``);
- ``tool_parser=False``: native tool calls come back written as ``<tool_call>`` text (vLLM without
  ``--enable-auto-tool-choice``);
- ``strict_arguments=True`` (default): like vLLM, the arguments of assistant tool calls sent back in the
  conversation are parsed, and invalid JSON is an HTTP 400.
- ``vision=True`` (default): the model reads images, so it answers the brain's image probe (a small image of
  ``Code: 4821``, :mod:`docintent.brains.probes`) with ``4821`` by itself, outside the script (and the tool
  probe with a call, or prose with ``drops_tools``). With
  ``vision=False`` it behaves as llama.cpp's server does with a text-only model: the image part is dropped
  without an error and the model answers the probe with a number it made up.
- ``slots=1``: like llama.cpp's server, at most one request is worked on at a time and the others wait in
  line; a request whose client gave up (timed out) is still worked to its end (its ``delay``), so a retry sent
  at once waits behind it.
- ``drops_tools=True``: like a chat template that renders no tools (llama-cpp-python without a forced
  ``tool_choice``), the ``tools`` of a request are ignored and the scripted reply's tool calls come back as plain
  prose (the arguments' values, no call); to a request without ``tools`` (functions described in the prompt)
  they come back as the JSON action the prompt asks for.

Probe requests are recorded in ``requests`` and ``probe_requests``, not in ``chat_requests``.

Prompt tokens are estimated by :func:`docintent.brains.tokens.request_tokens` (Qwen-VL rule for images,
4 characters per text token). From a shell::

    python -m docintent.testing.fake_openai --port 8011 --script replies.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import KW_ONLY, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from ..brains.probes import PROBE_ANSWER, PROBE_QUESTION, TOOL_PROBE_QUESTION
from ..brains.tokens import request_tokens, text_tokens

Response = dict[str, Any]
Script = Sequence[Response] | Callable[[dict[str, Any]], Response]


# -- building responses ---------------------------------------------------------------------------


def tool_call(name: str, content: str | None = None, **arguments: Any) -> Response:
    """A native tool call of ``name`` with ``arguments`` (and optional text before it)."""
    response: Response = {"tool": name, "arguments": arguments}
    if content is not None:
        response["content"] = content
    return response


def text(content: str) -> Response:
    """A plain-text reply with no tool call."""
    return {"content": content}


def text_tool_call(name: str, style: str = "tags", **arguments: Any) -> Response:
    """A tool call written as text, the way servers without a tool parser return it.

    ``style``: "tags" (``<tool_call>{...}</tool_call>``), "fenced" (a ```json block) or "json" (bare object).
    """
    payload = json.dumps({"name": name, "arguments": arguments})
    if style == "tags":
        return text(f"<tool_call>\n{payload}\n</tool_call>")
    if style == "fenced":
        return text(f"I will call a function.\n```json\n{payload}\n```")
    if style == "json":
        return text(payload)
    raise ValueError(f"unknown style {style!r}; use 'tags', 'fenced' or 'json'")


def http_error(status: int, retry_after: float | None = None, message: str | None = None) -> Response:
    """An HTTP error reply (e.g. 429 with ``Retry-After`` seconds, 500, 503)."""
    response: Response = {"status": status}
    if retry_after is not None:
        response["retry_after"] = retry_after
    if message:
        response["error"] = message
    return response


def delayed(seconds: float, response: Response) -> Response:
    """``response`` sent after ``seconds`` (longer than the client's timeout makes it time out)."""
    return {**response, "delay": seconds}


# -- reading requests -----------------------------------------------------------------------------


def offered_tools(body: dict[str, Any]) -> list[str]:
    """Names of the functions a chat request offers."""
    return [t["function"]["name"] for t in body.get("tools") or []]


def images(body: dict[str, Any]) -> list[str]:
    """Every image URL of a chat request, in message order."""
    urls = []
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, list):
            urls += [p["image_url"]["url"] for p in content if p.get("type") == "image_url"]
    return urls


def last_user_text(body: dict[str, Any]) -> str:
    """The text of the last user message of a chat request."""
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, str):
                return content
            return "\n".join(p.get("text", "") for p in content or [] if p.get("type") == "text")
    return ""


@dataclass
class RecordedRequest:
    """One HTTP request the server received (``body``: the decoded JSON or None; header names lower-case)."""

    method: str
    path: str
    headers: dict[str, str]
    _: KW_ONLY
    body: dict[str, Any] | None
    time: float


class _Server(ThreadingHTTPServer):
    # Runs with --concurrency 64 open that many connections at once; the default backlog of 5 would refuse
    # some of them where a real server (vLLM, SGLang) queues them.
    request_queue_size = 256


# -- the server -----------------------------------------------------------------------------------


class FakeOpenAI:
    """An OpenAI-compatible server on ``127.0.0.1`` (port 0 = any free port) answering from ``script``.

    ``models``: the model names ``/v1/models`` lists; a chat request for another model gets a 404 like vLLM's.
    ``requests``: every request received; ``chat_requests``: the bodies of chat-completions requests.
    """

    def __init__(
        self,
        script: Script = (),
        *,
        models: Iterable[str] = ("fake-vl",),
        host: str = "127.0.0.1",
        port: int = 0,
        api_key: str | None = None,
        max_images: int | None = None,
        context_length: int | None = None,
        truncate_at: int | None = None,
        tool_parser: bool = True,
        strict_arguments: bool = True,
        vision: bool = True,
        slots: int | None = None,
        drops_tools: bool = False,
    ) -> None:
        self.script = script if callable(script) else list(script)
        self.vision = vision
        self.drops_tools = drops_tools
        self._slots = threading.Semaphore(slots) if slots else None
        self.max_images = max_images
        self.context_length = context_length
        self.truncate_at = truncate_at
        self.tool_parser = tool_parser
        self.strict_arguments = strict_arguments
        self.models = list(models)
        self.api_key = api_key
        self.requests: list[RecordedRequest] = []
        self.served = 0
        self._lock = threading.Lock()
        self._ids = itertools.count(1)
        self._server = _Server((host, port), self._handler_class())
        self._server.daemon_threads = True  # a delayed reply must not hold up shutdown
        self._thread: threading.Thread | None = None

    # -- lifecycle ---------------------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._server.server_address[1]

    @property
    def base_url(self) -> str:
        """The URL to give a client, ending in ``/v1``."""
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def model(self) -> str:
        """The first model the server lists."""
        return self.models[0]

    def start(self) -> FakeOpenAI:
        if self._thread is None:
            self._thread = threading.Thread(target=self._server.serve_forever, name="fake-openai", daemon=True)
            self._thread.start()
        return self

    def stop(self) -> None:
        if self._thread is not None:
            self._server.shutdown()
            self._thread.join(timeout=5)
            self._thread = None
        self._server.server_close()

    def __enter__(self) -> FakeOpenAI:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def chat_requests(self) -> list[dict[str, Any]]:
        """Bodies of the chat-completions requests, in arrival order (image probes apart)."""
        return [
            r.body
            for r in self.requests
            if r.path.endswith("/chat/completions") and r.body is not None and not is_probe(r.body)
        ]

    @property
    def probe_requests(self) -> list[dict[str, Any]]:
        """Bodies of the image probes the brain sent (:func:`is_probe`)."""
        return [
            r.body
            for r in self.requests
            if r.path.endswith("/chat/completions") and r.body is not None and is_probe(r.body)
        ]

    # -- behaviour ---------------------------------------------------------------------------------

    def _next_response(self, body: dict[str, Any]) -> Response:
        with self._lock:
            index = self.served
            self.served += 1
        if callable(self.script):
            return self.script(body)
        if index < len(self.script):
            return self.script[index]
        return http_error(400, message=f"fake server script exhausted: it holds {len(self.script)} responses")

    def completion(self, body: dict[str, Any], response: Response) -> dict[str, Any]:
        """The chat-completion JSON for a scripted ``response`` to the request ``body``."""
        content = response.get("content")
        message: dict[str, Any] = {"role": "assistant", "content": content}
        completion_text = content or ""
        finish = "stop"
        calls = [(response["tool"], response.get("arguments", {}))] if "tool" in response else []
        calls += [(name, arguments) for name, arguments in response.get("tools", [])]
        for name, arguments in calls:
            raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
            if self.tool_parser:
                message.setdefault("tool_calls", []).append(
                    {"id": f"call_{next(self._ids)}", "type": "function", "function": {"name": name, "arguments": raw}}
                )
                finish = "tool_calls"
            else:  # no tool parser: the model's template text comes back as content
                written = f'<tool_call>\n{{"name": {json.dumps(name)}, "arguments": {raw}}}\n</tool_call>'
                message["content"] = completion_text = f"{completion_text}\n{written}".strip()
            completion_text += name + raw
        finish = response.get("finish_reason", finish)
        prompt = request_tokens(body).total
        if self.truncate_at is not None:
            prompt = min(prompt, self.truncate_at)
        usage = {"prompt_tokens": prompt, "completion_tokens": max(1, text_tokens(completion_text))}
        usage.update(response.get("usage", {}))
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        return {
            "id": f"chatcmpl-fake-{next(self._ids)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.model),
            "choices": []
            if response.get("choices") == []
            else [{"index": 0, "message": message, "finish_reason": finish, "logprobs": None}],
            "usage": usage,
        }

    def refusal(self, body: dict[str, Any]) -> str | None:
        """Why a server configured like this one would refuse ``body`` (HTTP 400), or None."""
        if self.strict_arguments:
            for message in body.get("messages", []):
                for call in message.get("tool_calls") or []:
                    try:
                        json.loads(call.get("function", {}).get("arguments") or "{}")
                    except json.JSONDecodeError as err:
                        return f"{err.msg}: line {err.lineno} column {err.colno} (char {err.pos})"
        count = len(images(body))
        if self.max_images is not None and count > self.max_images:
            return f"At most {self.max_images} image(s) may be provided in one request."
        if self.context_length is not None:
            prompt = request_tokens(body).total
            reply = int(body.get("max_tokens") or body.get("max_completion_tokens") or 0)
            if prompt + reply > self.context_length:
                return (
                    f"This model's maximum context length is {self.context_length} tokens. However, you requested "
                    f"{prompt + reply} tokens ({prompt} in the messages, {reply} in the completion). "
                    "Please reduce the length of the messages or completion."
                )
        return None

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            # The headers and the body go out in two writes; with Nagle's algorithm on, the second waits for
            # the client's delayed ACK of the first (40 ms on Linux), which would add 40 ms to every reply.
            disable_nagle_algorithm = True

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                pass

            def _send(
                self,
                status: int,
                payload: dict[str, Any] | str,
                headers: dict[str, str] | None = None,
                content_type: str = "application/json",
            ) -> None:
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                try:
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):  # the client gave up (timeout)
                    pass

            def _error(self, status: int, message: str, kind: str, headers: dict[str, str] | None = None) -> None:
                self._send(status, {"error": {"message": message, "type": kind, "code": status}}, headers)

            def _record(self, body: dict[str, Any] | None) -> None:
                with fake._lock:
                    headers = {k.lower(): v for k, v in self.headers.items()}
                    fake.requests.append(RecordedRequest(self.command, self.path, headers, body=body, time=time.time()))

            def _authorised(self) -> bool:
                if fake.api_key is None or self.headers.get("Authorization") == f"Bearer {fake.api_key}":
                    return True
                self._error(401, "Incorrect API key provided.", "invalid_request_error")
                return False

            def do_GET(self) -> None:
                self._record(None)
                if not self._authorised():
                    return
                if self.path.rstrip("/").endswith("/models"):
                    data = [
                        {"id": m, "object": "model", "created": 0, "owned_by": "docintent-fake"} for m in fake.models
                    ]
                    self._send(200, {"object": "list", "data": data})
                else:
                    self._error(404, f"no route {self.path}", "not_found")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except json.JSONDecodeError:
                    self._record(None)
                    self._error(400, "request body is not JSON", "invalid_request_error")
                    return
                self._record(body)
                if not self._authorised():
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._error(404, f"no route {self.path}", "not_found")
                    return
                if body.get("model") not in fake.models:
                    self._error(404, f"The model `{body.get('model')}` does not exist.", "NotFoundError")
                    return
                refusal = fake.refusal(body)
                if refusal is not None:  # the server refuses before the model sees anything: the script waits
                    self._error(400, refusal, "BadRequestError")
                    return
                if is_probe(body):  # the model's own answer to a probe, outside the script
                    if body.get("tools"):
                        answer = text("7") if fake.drops_tools else tool_call("record", value="7")
                    else:
                        answer = text(PROBE_ANSWER if fake.vision else "1234")
                    self._send(200, fake.completion(body, answer))
                    return
                slot = fake._slots
                if slot is not None:
                    slot.acquire()  # one request worked on at a time; the others wait in line
                try:
                    self._answer(body)
                finally:
                    if slot is not None:
                        slot.release()

            def _answer(self, body: dict[str, Any]) -> None:
                try:
                    response = fake._next_response(body)
                except Exception as err:  # a broken script function is reported to the client, not swallowed
                    self._error(500, f"fake server script failed: {type(err).__name__}: {err}", "server_error")
                    return
                if fake.drops_tools and ("tool" in response or "tools" in response):
                    calls = (
                        [(response["tool"], response.get("arguments", {}))] if "tool" in response else response["tools"]
                    )
                    rest = {k: v for k, v in response.items() if k not in ("tool", "tools", "arguments")}
                    if body.get("tools"):  # the template showed the model no tools: it answers in prose
                        prose = " ".join(str(v) for _, args in calls if isinstance(args, dict) for v in args.values())
                        response = {**rest, "content": prose or "I would look at the page."}
                    else:  # tools described in the prompt: the model writes the JSON action it was asked for
                        name, args = calls[0]
                        response = {**rest, "content": json.dumps({"name": name, "arguments": args})}
                if response.get("delay"):
                    time.sleep(float(response["delay"]))
                status = int(response.get("status", 200))
                if status != 200:
                    headers = {"Retry-After": str(response["retry_after"])} if "retry_after" in response else None
                    self._error(status, response.get("error", f"scripted HTTP {status}"), "scripted_error", headers)
                    return
                if "raw" in response:
                    self._send(200, str(response["raw"]), content_type=response.get("content_type", "text/html"))
                    return
                self._send(200, fake.completion(body, response))

        return Handler


def is_probe(body: dict[str, Any]) -> bool:
    """Whether a request is one of the brain's probes (:mod:`docintent.brains.probes`): one user message with the
    image probe's question and one image, or the tool probe's question."""
    messages = body.get("messages") or []
    if len(messages) != 1:
        return False
    if messages[0].get("content") == TOOL_PROBE_QUESTION:
        return True
    if not isinstance(messages[0].get("content"), list):
        return False
    parts = messages[0]["content"]
    return (
        any(p.get("type") == "text" and p.get("text") == PROBE_QUESTION for p in parts)
        and sum(p.get("type") == "image_url" for p in parts) == 1
    )


def main(argv: list[str] | None = None) -> int:
    """Serve a script file (a JSON list of responses) until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m docintent.testing.fake_openai", description=__doc__.split("\n")[0])
    parser.add_argument("--port", type=int, default=8011)
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--script", type=Path, required=True, help="JSON file: a list of responses, served in order")
    parser.add_argument("--model", action="append", help="model name to serve (repeatable; default fake-vl)")
    args = parser.parse_args(argv)
    script = json.loads(args.script.read_text(encoding="utf-8"))
    if not isinstance(script, list):
        parser.error(f"{args.script}: the script must be a JSON list of responses")
    server = FakeOpenAI(script, models=args.model or ["fake-vl"], host=args.host, port=args.port)
    print(
        f"fake OpenAI server at http://{args.host}:{server.port}/v1 serving {server.models} "
        f"({len(script)} scripted responses); Ctrl-C stops it",
        flush=True,
    )
    try:
        server._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
