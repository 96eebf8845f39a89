"""``docintent doctor`` against loopback servers that imitate the ways a real server is set up wrong.

The doctor sends the requests ``ask`` will send (Phase A with a full page, Phase B with two or three images,
the run's ``max_tokens`` and ``max_side``); each test checks the verdict line and the one fix printed for it.
"""

from __future__ import annotations

import socket

from docintent.brains.mllm import PHASE_TOKENS
from docintent.brains.tokens import data_url_size
from docintent.testing.fake_openai import FakeOpenAI, http_error, images, last_user_text, offered_tools, text, tool_call


def model(body):
    """A well-behaved vision model: reads the test number, calls the offered functions."""
    tools = offered_tools(body) or [t for t in ("continue", "answer") if f'"{t}"' in last_user_text(body)]
    if "continue" in tools:
        return tool_call("continue")
    if "answer" in tools:
        return tool_call("answer", answer="ok", confidence="high")
    if images(body) and "number" in last_user_text(body):
        return text("4821")
    return text('{"answer": "ok"}')


def doctor(server, capsys, *extra) -> tuple[int, str]:
    from docintent.cli import main

    code = main(
        [
            "doctor",
            "--base-url",
            server.base_url,
            "--model",
            server.model,
            "--max-side",
            "1024",
            "--timeout",
            "5",
            *extra,
        ]
    )
    return code, capsys.readouterr().out


def run_doctor(argv: list[str], capsys) -> tuple[int, str]:
    from docintent.cli import main

    code = main(["doctor", "--timeout", "5", *argv])
    return code, capsys.readouterr().out


def fixes(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.strip().startswith("fix:")]


def test_a_healthy_server_is_usable_and_sees_the_run_shapes(capsys):
    with FakeOpenAI(model) as server:
        code, out = doctor(server, capsys, "--max-tokens", "2048")
    assert code == 0 and "result: usable (0 failed, 0 warning(s))" in out
    assert "[ ok ] Phase A" in out and "[ ok ] Phase B" in out and fixes(out) == []
    phase_a = next(b for b in server.chat_requests if "answer" in offered_tools(b))
    phase_b = next(b for b in server.chat_requests if "continue" in offered_tools(b))
    # the run's budgets: what each phase needs, within --max-tokens (not a probe's)
    assert (phase_a["max_tokens"], phase_b["max_tokens"]) == (PHASE_TOKENS["decide"], PHASE_TOKENS["review"])
    assert max(data_url_size(images(phase_a)[0])) == 1024  # the configured max_side
    assert len(images(phase_b)) >= 2


def test_tool_parser_off_is_a_warning_with_the_parser_fix(capsys):
    with FakeOpenAI(model, tool_parser=False) as server:
        code, out = doctor(server, capsys)
    assert code == 0
    assert "[warn] Phase A" in out and "only as text" in out
    (fix,) = fixes(out)
    assert "--tool-call-parser" in fix


def test_a_context_too_small_for_phase_b_fails_with_the_context_fix(capsys):
    # whole pages at 2048 px: Phase A is ~5,000 prompt tokens (one page), a whole-page review ~8,000 (two);
    # 4,096 more for the reply
    with FakeOpenAI(model, context_length=4096 + 6000) as server:
        code, out = doctor(
            server, capsys, "--max-side", "2048", "--brain-opt", "max_pixels=0", "--brain-opt", "phase_tokens=false"
        )
    assert code == 1 and "[ ok ] Phase A" in out and "[fail] Phase B" in out
    (fix,) = fixes(out)
    assert "max_side" in fix and "context" in fix and "max_tokens=4096" in fix


def test_a_one_image_server_fails_phase_b_with_the_image_limit_fix(capsys):
    with FakeOpenAI(model, max_images=1) as server:
        code, out = doctor(server, capsys)
    assert code == 1 and "[ ok ] Phase A" in out and "[fail] Phase B" in out
    (fix,) = fixes(out)
    assert "--limit-mm-per-prompt" in fix and "vision-language" not in out


def test_a_truncating_server_is_detected(capsys):
    with FakeOpenAI(model, truncate_at=4096) as server:  # Ollama's default num_ctx: the prompt is cut silently
        code, out = doctor(
            server, capsys, "--max-side", "2048", "--brain-opt", "max_pixels=0", "--brain-opt", "phase_tokens=false"
        )
    assert code == 1 and "truncat" in out
    (fix,) = fixes(out)
    assert "num_ctx" in fix or "context length" in fix


def test_an_unrelated_rejection_gets_its_own_fix_not_the_context_one(capsys):
    def no_zero_temperature(body):
        if body.get("temperature") == 0:
            return http_error(400, message="Unsupported value: 'temperature' does not support 0 with this model.")
        return model(body)

    with FakeOpenAI(no_zero_temperature) as server:
        code, out = doctor(server, capsys)
    assert code == 1
    assert "temperature=1" in out and "num_ctx" not in out and "--max-model-len" not in out


def test_doctor_reports_an_unreachable_endpoint_and_a_missing_model(capsys):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    code, out = run_doctor(["--base-url", f"http://127.0.0.1:{port}/v1", "--model", "m"], capsys)
    assert code == 1 and "[fail] reachable: cannot reach the model endpoint" in out and "/v1" in out
    with FakeOpenAI([], models=["a", "b"]) as server:
        code, out = run_doctor(["--base-url", server.base_url], capsys)
    assert code == 1 and "[fail] model: no --model given and the server lists 2" in out
