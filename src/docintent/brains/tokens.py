"""Estimate how many tokens a chat-completions request sends, without the model's tokenizer.

Images follow the Qwen-VL rule: the image is resized so its longest side is at most ``max_side`` and both
sides are rounded to multiples of 28 pixels; every 28x28 block is one token. Text is estimated at one token
per 4 characters (the usual figure for English with BPE tokenizers). Tool schemas count as text.

>>> image_tokens(2048, 2048)
5329
>>> image_tokens(800, 600)
609
>>> text_tokens("x" * 400)
100
"""

from __future__ import annotations

import base64
import io
import json
import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

#: Pixels per image token side (Qwen2-VL / Qwen2.5-VL: 14-px patches merged 2x2).
PATCH = 28
CHARS_PER_TOKEN = 4.0


def image_tokens(width: int, height: int, max_side: int = 2048) -> int:
    """Tokens of a ``width`` x ``height`` image by the Qwen-VL rule after capping the longest side."""
    scale = min(1.0, max_side / max(width, height))
    w = max(PATCH, round(width * scale / PATCH) * PATCH)
    h = max(PATCH, round(height * scale / PATCH) * PATCH)
    return (w // PATCH) * (h // PATCH)


def text_tokens(text: str) -> int:
    """Tokens of ``text`` at :data:`CHARS_PER_TOKEN` characters per token (rounded up)."""
    return math.ceil(len(text) / CHARS_PER_TOKEN) if text else 0


def data_url_size(url: str) -> tuple[int, int] | None:
    """(width, height) of a ``data:image/...;base64,`` URL (reads the header only), None for other URLs."""
    if not url.startswith("data:") or "," not in url:
        return None
    from PIL import Image

    try:
        with Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1]))) as img:
            return img.size
    except Exception:  # not an image the estimate can measure; the server would reject it anyway
        return None


@dataclass(frozen=True)
class RequestTokens:
    """Estimated tokens of one request: text (messages + tool schemas) and images, and the image count."""

    text: int
    images: int
    image_count: int

    @property
    def total(self) -> int:
        return self.text + self.images


def request_tokens(
    body: dict[str, Any], max_side: int = 2048, size_of: Callable[[str], tuple[int, int] | None] = data_url_size
) -> RequestTokens:
    """Estimate the prompt tokens of a chat-completions request body (messages and tools). ``size_of``: the
    (width, height) of an image URL (default: read from a data URL's header)."""
    chars = 0
    img_tokens = 0
    count = 0
    for message in body.get("messages", []):
        content = message.get("content")
        if isinstance(content, str):
            chars += len(content)
        elif isinstance(content, list):
            for part in content:
                if part.get("type") == "text":
                    chars += len(part.get("text", ""))
                elif part.get("type") == "image_url":
                    url = part.get("image_url", {}).get("url", "")
                    size = size_of(url)
                    count += 1
                    if size:
                        img_tokens += image_tokens(*size, max_side=max_side)
        for call in message.get("tool_calls") or []:
            chars += len(json.dumps(call.get("function", {})))
    if body.get("tools"):
        chars += len(json.dumps(body["tools"]))
    return RequestTokens(math.ceil(chars / CHARS_PER_TOKEN), img_tokens, count)
