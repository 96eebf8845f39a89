"""Secrets never leave the process: a planted endpoint password, API keys and the service token are searched for
in every artefact of real ``bench``, ``ask --trace``, ``serve`` and ``mcp`` runs against the fake OpenAI server,
and the redaction rules are pinned one by one."""

from __future__ import annotations

import base64
import json
import os
import select
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from docintent.redaction import RedactingFilter, redact, redact_data, register_secret
from docintent.testing.fake_openai import FakeOpenAI, offered_tools, tool_call
from process_helpers import make_dataset, png_bytes

TESTS = Path(__file__).resolve().parent
PASSWORD = "Pw9f3kQx@Zq8Lm4Rt"  # holds an '@'
API_KEY = "sk-plantedKey0123456789abcdef"
PLAIN_KEY = "hunter2hunter2-plain"
ENV_KEY = "envKey-7c0ffee-42xyz"
TOKEN = "tok-Planted-5e1a9c0ffee77"
FRAGMENTS = (
    "Pw9f3kQx",
    "Zq8Lm4Rt",
    "plantedKey0123",
    "hunter2hunter2",
    "envKey-7c0ffee",
    "Planted-5e1a9c",
    base64.b64encode(f"alice:{PASSWORD}".encode()).decode()[:16],
)


def _script(body):
    if "answer" in offered_tools(body):
        return tool_call("answer", answer="42", confidence="high")
    return {"content": '{"answer": "42"}'}


def _failing(body):
    return {"status": 503, "error": "overloaded"}


def _with_secret(url: str) -> str:
    return url.replace("http://", f"http://alice:{PASSWORD}@")


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCINTENT_", "OPENAI_"))}
    env.update(
        PYTHONPATH=os.pathsep.join([str(TESTS.parent / "src"), str(TESTS)]),
        DOCINTENT_THREADS="1",
        DOCINTENT_CACHE_DIR=str(tmp_path / "cache"),
    )
    env.update(extra)
    return env


def _run(args: list[str], env: dict[str, str], timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "docintent", *args], env=env, capture_output=True, text=True, timeout=timeout
    )


def _every_file(folder: Path) -> str:
    return "\n".join(
        p.read_bytes().decode("utf-8", "replace") for p in folder.rglob("*") if p.is_file() and not p.is_symlink()
    )


def _assert_no_secret(*texts: str) -> None:
    joined = "\n".join(texts)
    found = [f for f in FRAGMENTS if f in joined]
    assert not found, f"planted secrets {found} leaked"


def _model(url: str, *extra: str) -> list[str]:
    args = ["--brain", "openai", "--brain-opt", f"base_url={url}", "--brain-opt", "model=fake-vl"]
    for item in extra:
        args += ["--brain-opt", item]
    return args


# --- the rules -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("http://alice:pa@ss@host:8000/v1 down", "http://***@host:8000/v1 down"),
        ("http://user:pa/ss@host/v1", "http://***@host/v1"),
        ("http://host:8000/v1?mail=a@b.com", "http://host:8000/v1?mail=a@b.com"),
        (
            "docintent bench --brain-opt api_key=abc123 --api-key XyZ --token=t0k",
            "docintent bench --brain-opt api_key=*** --api-key *** --token=***",
        ),
        ("argv: ['docintent', 'doctor', '--api-key', 'XyZ']", "argv: ['docintent', 'doctor', '--api-key', '***']"),
        (
            '{"api_key": "abc", "max_tokens": 512, "token": null}',
            '{"api_key": "***", "max_tokens": 512, "token": null}',
        ),
        ("{'password': 'hunter'}", "{'password': '***'}"),
        ("Authorization: Bearer abc123def", "Authorization: ***"),
        ("sent Bearer 9f8e7d6c5b4a", "sent Bearer ***"),
        ("key sk-abcdefghijklmnopqrstuvwx", "key sk-***"),
        ("DOCINTENT_SERVE_TOKEN=abcdefgh1", "DOCINTENT_SERVE_TOKEN=***"),
        ("prompt_tokens=5 completion_tokens=7 --max-tokens 40", "prompt_tokens=5 completion_tokens=7 --max-tokens 40"),
        ("the basic checks passed", "the basic checks passed"),
        ('{"api_key": {"value": "***"}, "token": [1]}', '{"api_key": {"value": "***"}, "token": [1]}'),  # stays JSON
    ],
)
def test_redaction_rules(text, expected):
    assert redact(text) == expected


def test_blank_or_short_values_are_never_registered():
    for value in ("        ", "\t\n  \t  ", "abc", "------"):
        register_secret(value)
    text = json.dumps({"a": {"b": ["------", "abc"]}}, indent=8)
    assert redact(text) == text  # indentation and short words stay


def test_registered_secrets_are_masked_in_any_form():
    register_secret('s3cr3t-value"with-quote')
    assert redact('x s3cr3t-value"with-quote y') == "x *** y"
    assert redact(json.dumps({"note": 's3cr3t-value"with-quote'})) == '{"note": "***"}'
    assert redact_data({"api_key": "anything", "nested": ['s3cr3t-value"with-quote'], "n": 3}) == {
        "api_key": "***",
        "nested": ["***"],
        "n": 3,
    }


def test_the_logging_filter_keeps_arguments_positional():
    import logging

    record = logging.LogRecord("x", logging.WARNING, __file__, 1, "%s - %s %d", ("http://u:pw@h/v1", "ok", 3), None)
    assert RedactingFilter().filter(record)
    assert record.getMessage() == "http://***@h/v1 - ok 3"


# --- every artefact of real runs ------------------------------------------------------------------------------


def test_bench_ask_and_crash_report_write_no_secret(tmp_path):
    dataset = make_dataset(tmp_path / "data", 3)
    page = tmp_path / "page.png"
    page.write_bytes(png_bytes(64, 48, 220))
    outputs: list[str] = []
    with FakeOpenAI(_script) as good, FakeOpenAI(_failing) as bad:
        url, failing = _with_secret(good.base_url), _with_secret(bad.base_url)
        env = _env(tmp_path)
        # bench: the key among the brain options, the password in the URL
        done = _run(
            [
                "bench",
                "--dataset",
                f"jsonl:{dataset}",
                "--no-progress",
                "--out",
                str(tmp_path / "run"),
                *_model(url, f"api_key={PLAIN_KEY}"),
            ],
            env,
        )
        assert done.returncode == 0, done.stderr
        rows = [json.loads(x) for x in (tmp_path / "run" / "results.jsonl").read_text().splitlines()]
        assert [r["answer"] for r in rows] == ["42", "42", "42"]
        # the endpoint from the environment, failing: errors and retry warnings
        env_failing = _env(tmp_path, OPENAI_BASE_URL=failing, OPENAI_API_KEY=ENV_KEY)
        failed = _run(
            [
                "bench",
                "--dataset",
                f"jsonl:{dataset}",
                "--no-progress",
                "--out",
                str(tmp_path / "run2"),
                "--brain",
                "openai",
                "--brain-opt",
                "model=fake-vl",
                "--brain-opt",
                "max_retries=1",
                "--brain-opt",
                "backoff=0.01",
            ],
            env_failing,
        )
        assert failed.returncode == 0 and "retry 1 of 1" in failed.stderr
        # ask --trace and --json, working and failing
        asked = _run(
            [
                "ask",
                str(page),
                "What is the total?",
                "--strategy",
                "none",
                "--trace",
                str(tmp_path / "trace.json"),
                "--json",
                *_model(url, f"api_key={API_KEY}"),
            ],
            env,
        )
        assert asked.returncode == 0 and json.loads(asked.stdout)["answer"] == "42"
        refused = _run(
            [
                "ask",
                str(page),
                "What is the total?",
                "--strategy",
                "none",
                "--trace",
                str(tmp_path / "trace2.json"),
                *_model(failing, "max_retries=1", "backoff=0.01"),
            ],
            env,
        )
        assert refused.returncode == 1 and "http://***@127.0.0.1" in refused.stderr
        outputs += [
            done.stdout,
            done.stderr,
            failed.stdout,
            failed.stderr,
            asked.stdout,
            asked.stderr,
            refused.stdout,
            refused.stderr,
        ]
    # a crash report of a command given --api-key
    code = (
        "import sys; import docintent.commands.doctor as d; from docintent.cli import main\n"
        "d.run = lambda args: 1 / 0\n"
        f"sys.exit(main(['doctor', '--base-url', {url!r}, '--api-key', {API_KEY!r}]))"
    )
    crashed = subprocess.run(
        [sys.executable, "-c", code], env=_env(tmp_path), capture_output=True, text=True, timeout=60
    )
    report = Path(crashed.stderr.split("traceback written to ")[1].split()[0])
    assert "ZeroDivisionError" in report.read_text() and "--api-key" in report.read_text()
    outputs += [crashed.stdout, crashed.stderr]
    _assert_no_secret(*outputs, _every_file(tmp_path))


def test_a_bench_lock_file_holds_no_key_also_after_kill_9(tmp_path):
    dataset = make_dataset(tmp_path / "data", 20)
    out = tmp_path / "run"
    env = _env(tmp_path)
    with FakeOpenAI(lambda body: {**_script(body), "delay": 0.3}) as slow:
        model = _model(_with_secret(slow.base_url), f"api_key={PLAIN_KEY}")
        args = ["bench", "--dataset", f"jsonl:{dataset}", "--strategies", "none", "--no-progress", "--out", str(out)]
        first = subprocess.Popen(
            [sys.executable, "-m", "docintent", *args, *model],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 60
            while not (out / "results.jsonl").exists() or not (out / "results.jsonl").read_text():
                assert time.monotonic() < deadline and first.poll() is None, first.communicate()
                time.sleep(0.05)
            second = _run([*args, *model], env)
            assert second.returncode == 1 and "in use by" in second.stderr
            os.kill(first.pid, signal.SIGKILL)
            first.wait(timeout=30)
        finally:
            first.kill()
    lock = (out / ".docintent.lock").read_text()
    assert "bench" in lock and "api_key=***" in lock  # the holder's command, written down without its key
    _assert_no_secret(second.stdout, second.stderr, lock, _every_file(tmp_path))


def test_serve_bodies_events_and_logs_hold_no_secret(tmp_path):
    from server_helpers import free_port

    outputs: list[str] = []
    with FakeOpenAI(_script) as good:
        port = free_port()
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "docintent",
                "serve",
                "--host",
                "127.0.0.1",
                "--port",
                str(port),
                "--workers",
                "1",
                "--token",
                TOKEN,
                *_model(_with_secret(good.base_url), f"api_key={API_KEY}"),
            ],
            env=_env(tmp_path),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        base = f"http://127.0.0.1:{port}"

        def get(path: str, token: bool = True) -> bytes:
            request = urllib.request.Request(base + path, headers={"Authorization": f"Bearer {TOKEN}"} if token else {})
            with urllib.request.urlopen(request, timeout=20) as response:
                body = response.read()
            outputs.append(body.decode("utf-8", "replace"))
            return body

        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    open_health = json.loads(get("/v1/health", token=False))
                    break
                except OSError:
                    assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
                    time.sleep(0.2)
            health = json.loads(get("/v1/health"))
            boundary = "b0undary"
            body = (
                (
                    f'--{boundary}\r\nContent-Disposition: form-data; name="question"\r\n\r\nWhat is the total?\r\n'
                    f'--{boundary}\r\nContent-Disposition: form-data; name="brain"\r\n\r\nopenai\r\n'
                    f'--{boundary}\r\nContent-Disposition: form-data; name="strategy"\r\n\r\nnone\r\n'
                    f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="p.png"\r\n\r\n'
                ).encode()
                + png_bytes(64, 48, 220)
                + f"\r\n--{boundary}--\r\n".encode()
            )
            request = urllib.request.Request(
                base + "/v1/ask",
                data=body,
                headers={
                    "Authorization": f"Bearer {TOKEN}",
                    "Content-Type": f"multipart/form-data; boundary={boundary}",
                },
            )
            with urllib.request.urlopen(request, timeout=20) as response:
                run_id = json.loads(response.read())["id"]
            deadline = time.monotonic() + 60
            while (run := json.loads(get(f"/v1/runs/{run_id}")))["status"] not in ("done", "failed", "timeout"):
                assert time.monotonic() < deadline
                time.sleep(0.1)
            events = get(f"/v1/runs/{run_id}/events").decode()
            get(f"/v1/runs/{run_id}/trace.json")
        finally:
            proc.terminate()
            out, err = proc.communicate(timeout=30)
    assert set(open_health) == {"status", "version"}  # no token: nothing but whether it is up
    assert health["status"] == "ok" and health["model_endpoint"]["reachable"]  # a user:pass@ URL works
    assert health["model_endpoint"]["url"].startswith("http://***@127.0.0.1")
    assert run["answer"] == "42" and "event: done" in events
    _assert_no_secret(*outputs, out, err)


def test_mcp_replies_hold_no_secret(tmp_path):
    page = tmp_path / "page.png"
    page.write_bytes(png_bytes(64, 48, 220))
    replies: list[str] = []
    with FakeOpenAI(_failing) as bad:
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "docintent",
                "mcp",
                "--allow",
                str(tmp_path),
                *_model(_with_secret(bad.base_url), f"api_key={API_KEY}", "max_retries=1", "backoff=0.01"),
            ],
            env=_env(tmp_path),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        buffer = b""

        def call(message_id: int, method: str, params: dict) -> dict:
            nonlocal buffer
            proc.stdin.write(
                (json.dumps({"jsonrpc": "2.0", "id": message_id, "method": method, "params": params}) + "\n").encode()
            )
            proc.stdin.flush()
            deadline = time.monotonic() + 60
            while time.monotonic() < deadline:
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    replies.append(line.decode("utf-8", "replace"))
                    message = json.loads(line)
                    if message.get("id") == message_id:
                        return message
                if select.select([proc.stdout], [], [], 0.5)[0]:
                    buffer += os.read(proc.stdout.fileno(), 1 << 20)
            raise AssertionError(f"no reply to {method}")

        try:
            call(
                1,
                "initialize",
                {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "test", "version": "1"}},
            )
            proc.stdin.write(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}\n')
            proc.stdin.flush()
            answer = call(
                2,
                "tools/call",
                {
                    "name": "ask",
                    "arguments": {"question": "What is the total?", "image_path": str(page), "strategy": "none"},
                },
            )
        finally:
            proc.stdin.close()
            proc.wait(timeout=30)
            err = proc.stderr.read().decode("utf-8", "replace")
    text = answer["result"]["content"][0]["text"]
    assert answer["result"]["isError"] and "503" in text and "http://***@127.0.0.1" in text
    _assert_no_secret(*replies, err)
