"""The model path against a small local server of the kind llama.cpp runs (a text-only model, one slot, tools
that its chat format drops), imitated on loopback by docintent.testing.fake_openai with what the real
llama-cpp-python 0.3.36 server on Gemma 3 270M was measured to do (benchmarks/local_model.py).

Each test asserts what a user sees: the answer, what the model was sent, how many requests a timeout cost, the
error message.
"""

from __future__ import annotations

import time

import cv2
import pytest

from docintent.brains.mllm import PHASE_TOKENS, ModelBrain
from docintent.brains.probes import forget_probes
from docintent.page import Page
from docintent.strategies import get_strategy
from docintent.synth.render import render_text_lines
from docintent.testing.fake_openai import FakeOpenAI, delayed, http_error, images, text, tool_call


@pytest.fixture(autouse=True)
def _fresh_probes():
    forget_probes()
    yield
    forget_probes()


@pytest.fixture(scope="module")
def invoice() -> Page:
    pixels = render_text_lines(["INVOICE 2231", "Date: 4 March 2026", "Total due: $41.20"], width=520, font_px=28)
    return Page.from_array(pixels, source="invoice-lines")


def brain_for(server: FakeOpenAI, **options) -> ModelBrain:
    return ModelBrain(base_url=server.base_url, model=server.model, backoff=0.0, **options)


def ask(page, server, strategy="docintent", tools=("deshadowing",), **options):
    brain = brain_for(server, **options)
    chosen = get_strategy(strategy) if strategy == "none" else get_strategy(strategy, tools=tools)
    return chosen.run(page, "What is the total due?", "doc", brain), brain


def test_a_model_that_reads_no_images_is_found_out_once_and_shown_the_page_as_ocr_text(invoice):
    answer = tool_call("answer", answer="$41.20", confidence="high")
    with FakeOpenAI([answer, answer], vision=False) as server:
        first, brain = ask(invoice, server)
        second = get_strategy("docintent", tools=("deshadowing",)).run(invoice, "What is the total due?", "doc", brain)
    assert first.answer == second.answer == "$41.20"
    # one probe of each kind per server and model, not one per question
    assert len([p for p in server.probe_requests if images(p)]) == 1 and len(server.probe_requests) == 2
    request = server.chat_requests[0]
    assert images(request) == []
    contents = [m["content"] for m in request["messages"]]
    assert all(isinstance(c, str) for c in contents)  # some chat formats drop content given as parts
    assert [m["role"] for m in request["messages"]] == ["user"]  # and some drop system messages
    prompt = contents[0]
    assert "You cannot see the images" in prompt and "Total due" in prompt and "(c=" in prompt
    # the line holding the question's words comes first, before the page in reading order
    assert prompt.index("Total due") < prompt.index("All lines, in reading order")


def test_context_text_is_forced_without_a_probe(invoice):
    with FakeOpenAI([tool_call("answer", answer="$41.20", confidence="high")]) as server:
        result, _ = ask(invoice, server, context="text")
    assert result.answer == "$41.20" and images(server.chat_requests[0]) == []
    assert not any(images(p) for p in server.probe_requests)  # no image probe: only the tool probe


def test_a_vision_model_still_gets_the_image(invoice):
    with FakeOpenAI([tool_call("answer", answer="$41.20", confidence="high")]) as server:
        result, _ = ask(invoice, server)
    assert result.answer == "$41.20" and len(images(server.chat_requests[0])) == 1


def test_tools_the_server_drops_are_described_in_the_prompt_and_answered_as_json(invoice):
    with FakeOpenAI(
        [tool_call("answer", answer="$41.20", confidence="high")], vision=False, drops_tools=True
    ) as server:
        result, brain = ask(invoice, server)
    (probe,) = [p for p in server.probe_requests if p.get("tools")]  # found out once, not configured
    (request,) = server.chat_requests
    assert "tools" not in request and brain.native_tools is False
    assert '"name": "answer"' in request["messages"][-1]["content"]  # the functions, written in the prompt
    schema = request["response_format"]["schema"]  # a grammar on llama.cpp: the model can only name an offered function
    assert request["response_format"]["type"] == "json_object"
    assert [a["properties"]["name"]["const"] for a in schema["oneOf"]] == ["answer", "deshadowing"]
    answer = schema["oneOf"][0]["properties"]["arguments"]
    assert answer["required"] == ["answer", "confidence"] and answer["properties"]["answer"]["maxLength"] == 200
    assert result.answer == "$41.20"


def test_a_text_only_model_is_told_the_damage_it_cannot_see_and_its_restoration_is_applied_and_reviewed(invoice):
    upside_down = Page.from_array(cv2.rotate(invoice.pixels, cv2.ROTATE_180), source="invoice-upside-down")
    script = [
        tool_call("rotate_180"),
        tool_call("keep", reason="the lines read upright now"),
        tool_call("answer", answer="$41.20", confidence="high"),
    ]
    with FakeOpenAI(script, vision=False) as server:
        result, _ = ask(upside_down, server, tools=("rotate_180",))
    decide, review, _ = server.chat_requests
    # the model cannot see the page, so the measured damage comes with its lines, naming the tool that fixes it
    told = decide["messages"][0]["content"]
    assert "Measured on this image: the page is not upright (rotate_180 makes it upright)" in told
    # the review shows the page after the tool: upright now, by the same measurement
    assert "Measured on this image: upright" in review["messages"][-1]["content"]
    assert result.tools_kept == ["rotate_180"] and result.answer == "$41.20"


def test_the_damage_note_can_be_left_out(invoice):
    with FakeOpenAI([tool_call("answer", answer="$41.20", confidence="high")], vision=False) as server:
        ask(invoice, server, text_damage=False)
    assert "Measured on this image" not in server.chat_requests[0]["messages"][0]["content"]


def test_tools_dropped_after_all_are_found_out_from_the_reply(invoice):
    # the probe got a call (say a model that follows a one-function request) but a real request gets prose
    script = [
        {"content": "I would look at the last line first."},
        tool_call("answer", answer="$41.20", confidence="high"),
    ]
    with FakeOpenAI(script, vision=False) as server:
        result, brain = ask(invoice, server)
    first, second = server.chat_requests
    assert "tools" in first and "tools" not in second
    assert '"name": "answer"' in second["messages"][-1]["content"] and brain.native_tools is False
    assert result.answer == "$41.20"


def test_every_request_is_capped_at_what_its_phase_needs_and_stops_at_turn_ends(invoice):
    script = [
        tool_call("rotate_180"),
        tool_call("rollback", reason="upside down"),
        tool_call("answer", answer="$41.20", confidence="high"),
    ]
    with FakeOpenAI(script) as server:
        result, _ = ask(invoice, server, tools=("rotate_180",))
    decide, review, _ = server.chat_requests
    assert result.answer == "$41.20"
    assert (decide["max_tokens"], review["max_tokens"]) == (PHASE_TOKENS["decide"], PHASE_TOKENS["review"])
    assert "<end_of_turn>" in decide["stop"] and "<|im_end|>" in decide["stop"]


def test_a_runaway_reply_is_not_asked_again_with_more_room(invoice):
    runaway = {"content": "Total due Total due Total due", "finish_reason": "length"}
    with FakeOpenAI([runaway, text('{"answer": "$41.20"}')], tool_parser=True) as server:
        result, _ = ask(invoice, server, strategy="none", native_tools=False)
    # one request: a reply cut without reasoning ran away; twice the room would only run twice as long
    (request,) = server.chat_requests
    assert request["max_tokens"] == PHASE_TOKENS["answer"]
    assert result.error is None and server.served == 1


def test_a_timed_out_request_is_not_sent_again_while_a_one_slot_server_still_works_on_it(invoice):
    # the server needs 3 s for the first reply; the client gives up after 1 s. Sent again at once, the retries
    # would queue behind the abandoned request and time out too (what happened against llama.cpp).
    script = [
        delayed(3.0, tool_call("answer", answer="late", confidence="high")),
        tool_call("answer", answer="$41.20", confidence="high"),
    ]
    with FakeOpenAI(script, slots=1) as server:
        start = time.perf_counter()
        result, _ = ask(invoice, server, strategy="none", timeout=1.0, max_retries=4)
        seconds = time.perf_counter() - start
    posts = [
        r
        for r in server.requests
        if r.method == "POST" and r.body and r.body.get("messages") and not r.path.endswith("/models")
    ]
    answers = [r for r in posts if r.body not in server.probe_requests]
    assert result.error is None and result.answer == "$41.20"
    assert len(answers) == 2  # one retry, sent once the abandoned reply could have finished
    assert answers[1].time - answers[0].time >= 0.9 and seconds < 10


def test_a_request_the_server_refuses_with_http_500_is_not_retried(invoice):
    refusal = http_error(
        500,
        message="7 validation errors:\n  {'type': 'string_type', 'msg': 'Input should be a "
        "valid string', 'input': None}",
    )
    with FakeOpenAI([refusal] * 5) as server:
        result, _ = ask(invoice, server, strategy="none", max_retries=4)
    assert len(server.chat_requests) == 1
    assert "rejected the request (HTTP 500)" in result.error


def test_history_was_called_context_before(invoice, caplog):
    brain = ModelBrain(base_url="http://127.0.0.1:9/v1", model="m", context="full")
    assert (brain.options.history, brain.options.context) == ("full", "auto")
    assert "history=full" in caplog.text


def test_ask_names_the_endpoint_with_the_same_flags_as_doctor(invoice, tmp_path, capsys):
    from docintent.cli import main

    path = tmp_path / "invoice.png"
    cv2.imwrite(str(path), invoice.pixels[:, :, ::-1])
    with FakeOpenAI([tool_call("answer", answer="$41.20", confidence="high")], vision=False) as server:
        code = main(
            [
                "ask",
                str(path),
                "What is the total due?",
                "--strategy",
                "none",
                "--base-url",
                server.base_url,
                "--model",
                server.model,
            ]
        )
    out = capsys.readouterr().out
    assert code == 0 and "$41.20" in out


def test_a_flag_and_a_brain_option_that_disagree_are_refused_in_one_line(invoice, tmp_path, capsys):
    from docintent.cli import main

    path = tmp_path / "invoice.png"
    cv2.imwrite(str(path), invoice.pixels[:, :, ::-1])
    code = main(
        [
            "ask",
            str(path),
            "What is the total due?",
            "--base-url",
            "http://127.0.0.1:9/v1",
            "--brain-opt",
            "base_url=http://127.0.0.1:10/v1",
        ]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 1 and len(err) == 1
    assert "--base-url and --brain-opt base_url=... name different values" in err[0]


def test_serve_takes_the_endpoint_flags_and_offers_the_model_beside_the_offline_reader():
    from docintent.cli import build_parser
    from docintent.commands.serve import build_config

    with FakeOpenAI([]) as server:
        args = build_parser().parse_args(["serve", "--base-url", server.base_url, "--model", server.model])
        config = build_config(args)
    assert list(config.brains) == ["offline", "openai"] and config.default_brain == "offline"
    assert config.model_base_url == server.base_url


def test_a_registered_ocr_engine_drives_the_offline_reader_by_name(invoice):
    from docintent.brains import get_brain
    from docintent.errors import UnknownComponentError
    from docintent.ocr import ENGINES, forget_engines
    from docintent.ocr.base import OcrEngine

    class Fixed(OcrEngine):
        """Reads every page as one line at its middle: what the reader answers then comes from this engine."""

        name = "fixed-lines"

        def _read_array(self, rgb):
            h, w = rgb.shape[:2]
            quad = [[0.1 * w, 0.45 * h], [0.9 * w, 0.45 * h], [0.9 * w, 0.55 * h], [0.1 * w, 0.55 * h]]
            return [("Total due: $99.00", quad, 0.99, [])]

    with ENGINES.scoped("fixed-lines", Fixed):
        forget_engines()
        brain = get_brain("offline", engine="fixed-lines")
        result = get_strategy("none").run(invoice, "What is the total due?", "doc", brain)
        forget_engines()
    assert result.answer == "$99.00"
    with pytest.raises(UnknownComponentError, match="did you mean 'tesseract'"):
        get_brain("offline", engine="tesserac")


def test_serve_model_without_the_extra_names_the_install_command(monkeypatch, capsys):
    import sys

    from docintent.cli import main

    for name in ("llama_cpp", "llama_cpp.server", "llama_cpp.server.app", "llama_cpp.server.settings"):
        monkeypatch.setitem(sys.modules, name, None)  # as on a machine without docintent[local-llm]
    assert main(["serve-model", "--port", "8099"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "pip install 'docintent[local-llm]'" in err[0]


def test_the_local_server_is_given_gemmas_own_turn_layout():
    from docintent.localmodel import gemma_prompt

    prompt = gemma_prompt(
        [
            {"role": "system", "content": "Rules."},
            {"role": "user", "content": [{"type": "text", "text": "Question?"}]},
            {
                "role": "assistant",
                "content": "",
                "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "answer", "arguments": "{}"}}],
            },
            {"role": "tool", "tool_call_id": "c1", "content": "done"},
        ]
    )
    # <bos> first (without it the model repeats the prompt), the system text kept in the first user turn
    assert prompt.startswith("<bos><start_of_turn>user\nRules.\n\nQuestion?<end_of_turn>\n")
    assert '<start_of_turn>model\n{"name": "answer", "arguments": {}}<end_of_turn>' in prompt
    assert prompt.endswith("<start_of_turn>user\nResult: done<end_of_turn>\n<start_of_turn>model\n")


def test_json_replies_are_shaped_for_their_phase():
    brain = ModelBrain(base_url="http://127.0.0.1:9/v1", model="m", native_tools=False, context="text")
    answer = brain.request_extras(None, None, "answer")["response_format"]
    assert answer["schema"]["required"] == ["answer"]
    # a diagnosis is JSON of another shape: a JSON object is asked for, no answer schema forced on it
    assert brain.request_extras(None, None, "diagnose")["response_format"] == {"type": "json_object"}
