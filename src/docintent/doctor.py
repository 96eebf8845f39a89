"""Check that an OpenAI-compatible endpoint can drive docintent, and say how to fix what cannot.

The checks send the requests ``docintent ask`` will send, with the run's settings: the endpoint answers
``/models``; the model is listed; it reads a number from an image; a **Phase A** request (the decide prompt,
the tools, a page at ``max_side``, the run's ``max_tokens``) comes back with a function call; a **Phase B**
request (the review prompt with two pages, the largest review ``ask`` sends) is accepted and answered.
Both phases also compare the prompt tokens the server reports with docintent's estimate, which catches a
server that silently truncates prompts. Every problem names one fix. ``docintent doctor`` prints them.

Any other registered brain, a plug-in's included, is checked by :func:`check_brain` the way ``ask`` would build
it (by name, with its options): a model brain on another API's chat model gets the same checks; a brain that is
no model brain is built and asked to read the code on a test page.

>>> from docintent.testing.fake_openai import FakeOpenAI, text, tool_call
>>> def model(body):
...     names = [t["function"]["name"] for t in body.get("tools") or []]
...     return tool_call(names[0]) if names else text("4821")
>>> with FakeOpenAI(model) as server:
...     checks = run_checks(server.base_url, server.model, max_side=512)
>>> [(c.name, c.status) for c in checks]
[('reachable', 'ok'), ('model', 'ok'), ('image input', 'ok'), ('tool calls', 'ok'), ('Phase A', 'ok'), ('Phase B', 'ok'), ('prompt length', 'ok')]
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .brains.base import State
from .brains.endpoint import Endpoint, RequestRejected
from .brains.mllm import ModelBrain
from .brains.probes import image_probe, tool_probe
from .brains.textcontext import text_messages
from .brains.tokens import data_url_size, request_tokens
from .errors import ModelEndpointError
from .io.encode import resize_longest
from .page import Box, Page
from .synth.render import render_page, render_text_lines

#: The one fix for each problem; a rejected request's fix comes from the endpoint (by what the server said).
FIXES = {
    "unreachable": "start the server and check host and port; the URL ends in /v1 (vLLM :8000/v1, SGLang :30000/v1, "
    "Ollama :11434/v1, llama.cpp :8080/v1)",
    "no model": "pass --model with one of the listed names",
    "model name": "pass --model exactly as listed (vLLM: the path or --served-model-name; Ollama: the tag, e.g. qwen2.5vl:7b)",
    "blind": "serve a vision-language model (Qwen2.5-VL, Qwen3-VL, InternVL, Gemma 3; Ollama: qwen2.5vl; llama.cpp: "
    "pass its --mmproj projector)",
    "tool parser": "start the server with its tool-call parser (vLLM --enable-auto-tool-choice --tool-call-parser "
    "hermes, SGLang --tool-call-parser qwen25, llama.cpp --jinja, Ollama: a model tagged 'tools'), or keep "
    "native_tools=false so functions are described in the prompt",
    "no call": "use an instruction-tuned model that follows function-calling prompts, with the server's tool-call "
    "parser on (vLLM --enable-auto-tool-choice --tool-call-parser hermes, llama.cpp --jinja)",
    "truncation": "raise the server's context length so the whole prompt is read (Ollama: OLLAMA_CONTEXT_LENGTH=32768 "
    "or num_ctx; llama.cpp -c; vLLM --max-model-len), or lower max_side",
    "cut reply": "raise max_tokens (reasoning models need 8192 or more): --max-tokens here, max_tokens=... for ask",
}


@dataclass
class Check:
    """One check: ``status`` "ok", "warn" or "fail", what was found, and how to fix it (one fix per problem)."""

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


def _rejected(name: str, err: ModelEndpointError) -> Check:
    """A failed request as a check: the error names its own fix (the endpoint's hint) or gets none."""
    text = str(err)
    if isinstance(err, RequestRejected):
        detail, _, hint = text.partition(f"{err.text}.")
        fix = hint.strip().rstrip(".")
        return Check(name, "fail", f"{detail}{err.text}", [fix] if fix else [])
    return Check(name, "fail", text)


def run_checks(
    base_url: str | None,
    model: str | None = None,
    api_key: str | None = None,
    *,
    max_side: int = 2048,
    max_tokens: int = 4096,
    timeout: float = 60.0,
    options: dict[str, Any] | None = None,
) -> list[Check]:
    """Run the checks against an endpoint and return them (stops after the first one that makes the rest moot).

    ``max_side`` / ``max_tokens`` / ``options`` (other :class:`~docintent.brains.mllm.ModelBrainOptions`) are
    the settings ``ask`` will run with, so the requests sent are the ones it will send.
    """
    # One retry unless the options say otherwise; the named arguments win over the same keys in ``options``.
    settings = {
        "max_retries": 1,
        **(options or {}),
        "base_url": base_url,
        "model": model,
        "api_key": api_key,
        "timeout": timeout,
        "max_side": max_side,
        "max_tokens": max_tokens,
    }
    brain = ModelBrain(**settings)
    try:
        return model_checks(brain, model)
    finally:
        brain.close()


def check_brain(kind: str, options: dict[str, Any] | None = None) -> list[Check]:
    """The checks of the brain registered as ``kind`` (a plug-in's included), built with ``options`` as ``ask``
    builds it: a model brain (on an OpenAI-compatible endpoint or another API's :class:`~docintent.brains.chat.
    ChatModel`) gets the model checks of :func:`model_checks`; any other brain is built and asked to read the
    number on a test page through the ``none`` strategy, which is what every strategy needs of it."""
    from .brains import BRAINS

    brain = BRAINS.get(kind, **(options or {}))  # an unknown kind or option: one line naming the valid ones
    try:
        if isinstance(brain, ModelBrain):
            return model_checks(brain, brain.endpoint.configured_model)
        return _answer_checks(kind, brain, BRAINS.entry(kind).origin)
    finally:
        close = getattr(brain, "close", None)
        if callable(close):
            close()


def _answer_checks(kind: str, brain: Any, origin: str) -> list[Check]:
    """A brain that is no model brain: it was built, and it answers a question about a page."""
    from .errors import DocIntentError
    from .strategies import get_strategy

    checks = [Check("brain", "ok", f"{kind} ({type(brain).__name__}, {origin}) built with its options")]
    try:
        result = get_strategy("none").run(_number_page(), "What is the code?", "doc", brain)
    except DocIntentError as err:
        checks.append(Check("answer", "fail", f"asked the code on a test page: {err}"))
        return checks
    if result.error:
        checks.append(Check("answer", "fail", f"asked the code on a test page: {result.error}"))
    elif "4821" in (result.answer or ""):
        checks.append(Check("answer", "ok", f"read the code on a test page: {result.answer!r}"))
    else:
        checks.append(Check("answer", "warn", f"asked the code on a test page (4821), it answered {result.answer!r}"))
    return checks


def model_checks(brain: ModelBrain, model: str | None = None) -> list[Check]:
    """The checks of a model brain as it is configured (see the module docstring), stopping after the first one
    that makes the rest moot; ``model``: the model name given (None: the only one the server lists)."""
    endpoint = brain.endpoint
    max_side = brain.max_side
    checks: list[Check] = []
    try:
        served = endpoint.served_models()
    except ModelEndpointError as err:
        checks.append(Check("reachable", "fail", str(err), [FIXES["unreachable"]]))
        return checks
    where = endpoint.public_url if isinstance(endpoint, Endpoint) else endpoint.where
    checks.append(Check("reachable", "ok", f"{where} lists {len(served)} model(s): {', '.join(served[:8]) or 'none'}"))
    if model is None:
        if len(served) != 1:
            checks.append(
                Check("model", "fail", f"no --model given and the server lists {len(served)}", [FIXES["no model"]])
            )
            return checks
        model = served[0]
        if isinstance(endpoint, Endpoint):
            endpoint.model = model
    if model in served or any(s.endswith("/" + model) for s in served):
        checks.append(Check("model", "ok", f"{model} is served"))
    else:
        checks.append(
            Check(
                "model",
                "warn",
                f"{model} is not among the listed models ({', '.join(served[:8])})",
                [FIXES["model name"]],
            )
        )

    try:
        sees, what = image_probe(brain)
    except ModelEndpointError as err:
        checks.append(_rejected("image input", err))
        return checks
    context = brain.options.context
    if sees:
        checks.append(Check("image input", "ok", f"{what}: pages are sent as images"))
    elif context == "image":
        checks.append(
            Check("image input", "warn", f"the model {what} instead of 4821 (context=image)", [FIXES["blind"]])
        )
    else:
        checks.append(
            Check(
                "image input",
                "ok",
                f"the model does not read images ({what}): pages are sent as "
                "their OCR text lines with boxes (context=text)",
            )
        )
    if brain.options.native_tools == "auto":
        native, what = tool_probe(brain)
        how = (
            "tools go in the API"
            if native
            else "tools are described in the prompt and answered as JSON actions (native_tools=false)"
        )
        checks.append(Check("tool calls", "ok", f"the server {what}: {how}"))

    page = _full_page(max_side)
    state = State(
        "What is the revenue in the table's first row?",
        "doc",
        page,
        original=page,
        available_tools=["rotate_90", "rotate_180", "rotate_270", "deshadowing"],
    )
    sizes: list[tuple[str, int, int]] = []  # (phase, estimated, reported) prompt tokens

    def send(name: str, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> Any:
        phase = {"Phase A": "decide", "Phase B": "review"}[name]
        tools = functions if brain.native_tools else None
        estimate = request_tokens({"messages": messages, "tools": tools or []}).total
        if not brain.sees_images():
            messages = text_messages(messages)
        try:  # the endpoint itself: the brain would retry a context overflow with smaller images
            reply = endpoint.chat(
                messages, tools, max_tokens=brain.budget(phase), **brain.request_extras(tools, functions, phase)
            )
        except ModelEndpointError as err:
            checks.append(_rejected(name, err))
            return None
        sizes.append((name, estimate, reply.usage.prompt_tokens))
        return reply

    shown = f"a {max(_sent(brain, page))}-px page" if brain.sees_images() else "the page's OCR text"
    messages, functions = brain.phase_a_request(state)
    reply = send("Phase A", messages, functions)
    dropped = reply is not None and brain.native_tools and brain.tools_dropped(reply)
    if dropped:  # the server ignored the tools: the request as the brain now sends it, JSON actions
        messages, functions = brain.phase_a_request(state)
        reply = send("Phase A", messages, functions)
    if reply is not None:
        offered = [f["function"]["name"] for f in functions]
        call = reply.call_for(offered)
        shape = f"{shown}, {len(functions)} functions, max_tokens={brain.budget('decide')}"
        if call is not None and dropped:
            checks.append(
                Check(
                    "Phase A",
                    "ok",
                    f"{shape}: the server drops the tools field, so they are "
                    f"described in the prompt; the model answered with the JSON action {call.name}",
                )
            )
        elif call is not None and not brain.native_tools:
            checks.append(
                Check(
                    "Phase A",
                    "ok",
                    f"{shape} described in the prompt: the model answered with the JSON action {call.name}",
                )
            )
        elif call is not None and call.native:
            checks.append(Check("Phase A", "ok", f"{shape}: native tool call {call.name}"))
        elif call is not None:
            checks.append(
                Check(
                    "Phase A",
                    "warn",
                    f"{shape}: tool calls come back only as text; docintent reads "
                    "them, but native calls are more reliable",
                    [FIXES["tool parser"]],
                )
            )
        elif reply.truncated:
            checks.append(
                Check(
                    "Phase A",
                    "fail",
                    f"{shape}: the reply was cut at max_tokens={brain.budget('decide')} before any call",
                    [FIXES["cut reply"]],
                )
            )
        else:
            checks.append(
                Check(
                    "Phase A",
                    "fail",
                    f"{shape}: no function call, native or as text (reply: {reply.text[:80]!r})",
                    [FIXES["no call"]],
                )
            )

    before, after = page, page.derive(page.pixels[:, ::-1].copy(), "doctor-mirror")
    shapes = []
    if brain.options.review == "region":
        table = Box(0.05, 0.4, 0.95, 0.55)  # where a table sits on the test page
        shapes.append(("region", brain.phase_b_request(state, before, after, tool="deshadowing", region=table)))
    shapes.append(("page", brain.phase_b_request(state, before, after, tool="rotate_90")))
    phase_b_ok = True
    for _kind, (messages, functions) in shapes:
        reply = send("Phase B", messages, functions)
        if reply is None:
            phase_b_ok = False
            break
        if reply.call_for(["continue", "rollback"]) is None and reply.truncated:
            checks.append(
                Check(
                    "Phase B",
                    "fail",
                    f"the review reply was cut at max_tokens={brain.budget('review')}",
                    [FIXES["cut reply"]],
                )
            )
            phase_b_ok = False
            break
    if phase_b_ok:
        images = {kind: _image_count(msgs) for kind, (msgs, _) in shapes}
        what = " and ".join(
            f"{kind} review ({n} images)" if brain.sees_images() else f"{kind} review (as OCR text)"
            for kind, n in images.items()
        )
        checks.append(Check("Phase B", "ok", f"{what} accepted and answered"))

    truncation = _truncation(sizes)
    if truncation:
        checks.append(Check("prompt length", "fail", truncation, [FIXES["truncation"]]))
    elif sizes:
        largest = max(sizes, key=lambda s: s[1])
        checks.append(
            Check(
                "prompt length",
                "ok",
                f"the largest request (~{largest[1]:,} tokens estimated) was "
                f"read whole ({largest[2]:,} prompt tokens reported)",
            )
        )
    return checks


def _sent(brain: Any, page: Page) -> tuple[int, int]:
    part = brain.endpoint.image_part(page, brain.max_side, max_pixels=brain.options.max_pixels)
    url = part.get("image_url", {}).get("url") if isinstance(part, dict) else None
    return (data_url_size(url) if url else None) or page.size  # another API's part may be no data URL


def _image_count(messages: list[dict[str, Any]]) -> int:
    parts = [p for m in messages if isinstance(m.get("content"), list) for p in m["content"]]
    return sum(1 for p in parts if p.get("type") == "image_url")


def _truncation(sizes: list[tuple[str, int, int]]) -> str | None:
    """Why the reported prompt tokens show a server cutting prompts, or None.

    Two requests whose estimated sizes differ by a fifth or more but that the server reports as the same
    number of prompt tokens were cut at that number (Ollama's num_ctx does this silently). Image tokens differ
    between models, so an absolute comparison with the estimate would mislead; this one does not.
    """
    reported = [s for s in sizes if s[2]]
    for i, (name_a, est_a, rep_a) in enumerate(reported):
        for name_b, est_b, rep_b in reported[i + 1 :]:
            if rep_a == rep_b and abs(est_a - est_b) >= 0.2 * max(est_a, est_b):
                return (
                    f"the server reported {rep_a:,} prompt tokens for both a {name_a} request (~{est_a:,} "
                    f"estimated) and a {name_b} request (~{est_b:,}): it truncates prompts at {rep_a:,} tokens, "
                    "so the model would not see the whole page and question"
                )
    return None


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


__all__ = ["Check", "FIXES", "check_brain", "format_checks", "healthy", "model_checks", "run_checks"]
