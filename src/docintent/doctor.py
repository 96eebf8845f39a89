"""Check that an OpenAI-compatible endpoint can drive docintent, and say how to fix what cannot.

Five checks, in order: the endpoint answers ``/models``; the model is listed; it accepts an image (and reads
a number from it); it returns native tool calls (or only calls written as text, which docintent parses);
its context holds our Phase A prompt with a full-size page image. ``docintent doctor`` prints them.

>>> from docintent.testing.fake_openai import FakeOpenAI, text, tool_call
>>> with FakeOpenAI([text("4821"), tool_call("answer", answer="ok", confidence="high"), text("{}")]) as server:
...     checks = run_checks(server.base_url, server.model)
>>> [c.status for c in checks]
['ok', 'ok', 'ok', 'ok', 'ok']
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .brains.base import State
from .brains.mllm import ANSWER_FUNCTION, ModelBrain
from .brains.tokens import request_tokens
from .errors import ModelEndpointError
from .io.encode import resize_longest
from .page import Page
from .synth.render import render_page, render_text_lines

#: What to change on each kind of server when tool calls only come back as text (or not at all).
TOOL_FIXES = [
    "vLLM: start with --enable-auto-tool-choice --tool-call-parser hermes (Qwen2.5-VL; Qwen3-VL: hermes too, "
    "InternVL: internlm), plus --chat-template if the model's template lacks tools",
    "SGLang: start with --tool-call-parser qwen25 (Qwen) or the parser of your model family",
    "llama.cpp server: start with --jinja (and --chat-template-file if the GGUF's template lacks tools)",
    "Ollama: use a model whose tag lists 'tools' (ollama show MODEL); otherwise docintent's text fallback is used",
    "or run docintent with --brain-opt native_tools=false: functions are described in the prompt and read from text",
]
CONTEXT_FIXES = [
    "vLLM: --max-model-len 32768 (and --limit-mm-per-prompt '{\"image\": 4}' for Phase B's two images and the full context)",
    "SGLang: --context-length 32768",
    "llama.cpp server: -c 32768 (per slot: divide by --parallel)",
    "Ollama: raise num_ctx (OLLAMA_CONTEXT_LENGTH=32768 for the server, or PARAMETER num_ctx 32768 in a Modelfile)",
    "or send smaller images: --brain-opt max_side=1024 or max_pixels=1000000",
]
IMAGE_FIXES = [
    "serve a vision-language model (Qwen2.5-VL, Qwen3-VL, InternVL, Gemma 3, llava; Ollama: qwen2.5vl)",
    "llama.cpp server: pass the projector with --mmproj FILE",
    "vLLM: check --limit-mm-per-prompt allows images",
]


@dataclass
class Check:
    """One check: ``status`` "ok", "warn" or "fail", what was found, and how to fix it."""

    name: str
    status: str
    detail: str
    fixes: list[str] = field(default_factory=list)


def _number_page() -> Page:
    return Page.from_array(render_text_lines(["Code: 4821"], width=360, font_px=40), source="doctor-number")


def _full_page(max_side: int) -> Page:
    # A small render scaled up: the image costs the model the same tokens and the check stays quick.
    img, _ = render_page(width=600, seed=0)
    return resize_longest(Page.from_array(img, source="doctor-page"), max_side, upscale=True)


def run_checks(base_url: str | None, model: str | None = None, api_key: str | None = None, *,
               max_side: int = 2048, timeout: float = 120.0) -> list[Check]:
    """Run the checks against an endpoint and return them (stops after the first one that makes the rest moot)."""

    brain = ModelBrain(base_url=base_url, model=model, api_key=api_key, max_retries=1, timeout=timeout,
                       max_side=max_side, max_tokens=64)
    checks: list[Check] = []
    try:
        served = brain.served_models()
    except ModelEndpointError as err:
        checks.append(Check("reachable", "fail", str(err), [
            "start the server and check host and port; the URL ends in /v1 (vLLM :8000/v1, SGLang :30000/v1, "
            "Ollama :11434/v1, llama.cpp :8080/v1)"]))
        return checks
    checks.append(Check("reachable", "ok", f"{brain.base_url} lists {len(served)} model(s): {', '.join(served[:8]) or 'none'}"))

    if model is None:
        if len(served) != 1:
            checks.append(Check("model", "fail", f"no --model given and the server lists {len(served)}",
                                ["pass --model with one of the listed names"]))
            return checks
        model = served[0]
        brain.endpoint.model = model
    if model in served or any(s.endswith("/" + model) for s in served):
        checks.append(Check("model", "ok", f"{model} is served"))
    else:
        checks.append(Check("model", "warn", f"{model} is not among the listed models ({', '.join(served[:8])})", [
            "pass --model exactly as listed (vLLM: the path or --served-model-name; Ollama: the tag, e.g. qwen2.5vl:7b)"]))

    number = _number_page()
    question = "What number is written in the image? Reply with the number only."
    try:
        reply = brain.chat([{"role": "user", "content": [{"type": "text", "text": question}, brain.image_part(number)]}]).text
        if "4821" in reply:
            checks.append(Check("image input", "ok", "read 4821 from a test image"))
        else:
            checks.append(Check("image input", "warn", f"accepted an image but read {reply[:60]!r} instead of 4821",
                                ["the model may not see images: " + IMAGE_FIXES[0]]))
    except ModelEndpointError as err:
        checks.append(Check("image input", "fail", str(err), IMAGE_FIXES))
        return checks

    try:
        message = brain.chat([{"role": "user", "content": "Call the function answer with answer='ok' and confidence='high'."}],
                             [ANSWER_FUNCTION])
        calls = message.calls
        if calls and calls[0].native:
            checks.append(Check("tool calls", "ok", "native tool calls"))
        elif calls:
            checks.append(Check("tool calls", "warn", "tool calls come back only as text; docintent parses them, "
                                "but native calls are more reliable", TOOL_FIXES))
        else:
            content = message.content[:80]
            checks.append(Check("tool calls", "fail", f"no tool call, native or as text (reply: {content!r})", TOOL_FIXES))
    except ModelEndpointError as err:
        checks.append(Check("tool calls", "fail", str(err), TOOL_FIXES))

    page = _full_page(max_side)
    state = State("What is the title of this page?", "doc", page, page, ["rotate_90", "rotate_180", "rotate_270"])
    try:
        messages, functions = brain.phase_a_request(state)
        usage = brain.chat(messages, functions).usage
        estimate = request_tokens({"messages": messages, "tools": functions}, max_side=max_side).total
        reported = usage.prompt_tokens
        side = max(resize_longest(page, max_side).size)
        if reported and reported < 0.5 * estimate:
            checks.append(Check("context", "warn", f"Phase A with a {side}-px page reported {reported:,} prompt tokens, "
                                f"far below the ~{estimate:,} estimated: the server may truncate the prompt", CONTEXT_FIXES))
        else:
            checks.append(Check("context", "ok", f"Phase A with a {side}-px page fits "
                                f"({reported:,} prompt tokens reported, ~{estimate:,} estimated)"))
    except ModelEndpointError as err:
        checks.append(Check("context", "fail", str(err), CONTEXT_FIXES))
    finally:
        brain.close()
    return checks


def format_checks(checks: list[Check]) -> str:
    """The checks as the lines ``docintent doctor`` prints, ending with a one-line verdict."""
    lines = []
    for check in checks:
        lines.append(f"[{check.status:^4}] {check.name}: {check.detail}")
        lines += [f"       fix: {fix}" for fix in check.fixes]
    fails = sum(c.status == "fail" for c in checks)
    warns = sum(c.status == "warn" for c in checks)
    verdict = "not usable" if fails else "usable"
    lines.append(f"result: {verdict} ({fails} failed, {warns} warning(s))")
    return "\n".join(lines)


def healthy(checks: list[Check]) -> bool:
    """True when no check failed."""
    return not any(c.status == "fail" for c in checks) and bool(checks)


__all__ = ["Check", "format_checks", "healthy", "run_checks"]
