"""The model brain's options (:class:`ModelBrainOptions`): what it is shown of a page, what each request may carry,
how its endpoint is reached. Kept apart from the brain so the modules it is built from (the request link, the page
views, the messages) read the same options without importing the brain.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from ..errors import ConfigError
from .endpoint import DEFAULT_TIMEOUT

log = logging.getLogger(__name__)

#: Qwen-VL's recommended ``max_pixels`` (1280 tokens of 28x28 pixels): the default cap on each image.
DEFAULT_MAX_PIXELS = 1280 * 28 * 28


class ModelBrainOptions(BaseModel):
    """Options of :class:`ModelBrain`. Strings are converted (``"4096"`` -> 4096), so CLI values work as given."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["openai"] = "openai"
    model: str | None = Field(
        None, description="Model name; default DOCINTENT_MODEL, else the only model the server lists."
    )
    base_url: str | None = Field(
        None, description="Endpoint URL ending in /v1; default DOCINTENT_BASE_URL or OPENAI_BASE_URL."
    )
    api_key: str | None = Field(
        None, description="API key; default DOCINTENT_API_KEY or OPENAI_API_KEY; local servers need none."
    )
    history: Literal["text", "full", "none"] = Field(
        "text", description="What earlier steps each call carries: a text summary, the whole conversation, or none."
    )
    context: Literal["auto", "image", "text"] = Field(
        "auto",
        description="What the model is shown of a page: the image, or the OCR text lines with their boxes "
        "(for models that take no images); auto finds out with one small request the first time.",
    )
    text_tokens: int = Field(
        1500,
        ge=100,
        description="Token budget of one page's OCR text (context=text); the lines "
        "holding the question's words come first.",
    )
    text_damage: bool = Field(
        True,
        description="With the OCR text context, state under each page's lines the damage "
        "measured on its pixels (orientation, warp, blur, shadow, light, moire) and the tools that "
        "restore it: a model that cannot see the page has no other way to judge it.",
    )
    phase_tokens: bool = Field(
        True,
        description="Size each request's max_tokens to what its phase needs (at most "
        "max_tokens), so a runaway reply cannot hold a small server for minutes; a model that "
        "reasons before it answers gets max_tokens from its first reasoning reply on.",
    )
    json_replies: bool | Literal["auto"] = Field(
        "auto",
        description="Ask for a JSON object (response_format json_object, grammar-constrained on llama.cpp) "
        "when tools are described in the prompt; auto: unless the server refuses it once.",
    )
    stop: list[str] | None = Field(
        None,
        description="Stop sequences sent with every request (default: the chat-turn "
        "end markers some servers miss: <end_of_turn>, <|im_end|>, <|eot_id|>).",
    )
    temperature: float = Field(0.0, description="Sampling temperature (the paper decodes greedily).")
    top_p: float = Field(1.0, description="Nucleus sampling mass.")
    max_tokens: int = Field(4096, ge=1, description="Most output tokens per call.")
    max_tokens_param: Literal["max_tokens", "max_completion_tokens"] = Field(
        "max_tokens", description="Request field for max_tokens (OpenAI's reasoning models need max_completion_tokens)."
    )
    timeout: float = Field(
        DEFAULT_TIMEOUT,
        gt=0,
        description="Seconds to wait for one reply; a call that times out is retried "
        "like any transient failure (max_retries).",
    )
    max_retries: int = Field(4, ge=0, description="Retries after HTTP 429, 5xx or a timeout.")
    backoff: float = Field(
        1.0, ge=0, description="First retry wait in seconds (doubles each retry) when no Retry-After is given."
    )
    max_wait: float = Field(60.0, ge=0, description="Longest single wait between retries, Retry-After included.")
    max_side: int | None = Field(
        None, ge=28, description="Longest image side sent to the model; default DOCINTENT_MAX_SIDE (2048)."
    )
    max_pixels: int = Field(
        DEFAULT_MAX_PIXELS,
        ge=0,
        description="Cap on width x height of each image sent "
        "(default 1,003,520 = Qwen-VL's 1280 image tokens; 0: no cap, only max_side).",
    )
    review: Literal["region", "page"] = Field(
        "region", description="Phase B: crops of the evidence region + a thumbnail (region), or whole pages (page)."
    )
    thumbnail_side: int = Field(384, ge=28, description="Longest side of the page thumbnail a region review adds.")
    image_budget: int = Field(0, ge=0, description="Image tokens per sample (0: no budget); later images shrink first.")
    image_format: Literal["auto", "png", "jpeg"] = Field("auto", description="auto: PNG for line art, JPEG for photos.")
    jpeg_quality: int = Field(90, ge=1, le=100)
    native_tools: bool | Literal["auto"] = Field(
        "auto",
        description="Send tools in the API (true), describe them in the prompt as JSON actions (false), or "
        "auto: native until a reply shows the server dropped them, then JSON actions for the rest of the run.",
    )

    @model_validator(mode="before")
    @classmethod
    def _history_alias(cls, data: Any) -> Any:
        """``context=full`` / ``context=none`` (before ``context`` named the page's form) mean ``history=...``."""
        if isinstance(data, dict) and data.get("context") in ("full", "none") and "history" not in data:
            data = dict(data)
            data["history"] = data.pop("context")
            log.warning(
                "context=%s is now history=%s (context names what the model sees of a page: auto, image or text)",
                data["history"],
                data["history"],
            )
        return data

    price_in: float = Field(0.0, ge=0, description="$ per 1M prompt tokens (cost accounting).")
    price_out: float = Field(0.0, ge=0, description="$ per 1M completion tokens.")
    extra_body: dict[str, Any] | None = Field(
        None, description="Extra JSON fields for every request (server-specific)."
    )


#: Options only the OpenAI endpoint reads (its transport, its retries, what request_extras sends it): refused
#: beside a ready ``chat_model``, which would silently ignore them.
ENDPOINT_OPTIONS = frozenset(
    {
        "model",
        "base_url",
        "api_key",
        "temperature",
        "top_p",
        "max_tokens_param",
        "timeout",
        "max_retries",
        "backoff",
        "max_wait",
        "extra_body",
        "stop",
        "json_replies",
    }
)


def brain_options(options: ModelBrainOptions | None, overrides: dict[str, Any]) -> ModelBrainOptions:
    """``options`` with the constructor's keywords ``overrides`` on top, validated: a :class:`ConfigError` names
    an unknown option with the valid ones, or every invalid value (one line, for the command line)."""
    base = options.model_dump(exclude_unset=True) if options else {}
    unknown = set(overrides) - set(ModelBrainOptions.model_fields)
    if unknown:
        raise ConfigError(
            f"openai brain: unknown option(s) {sorted(unknown)}; valid: {', '.join(sorted(ModelBrainOptions.model_fields))}"
        )
    try:
        return ModelBrainOptions(**{**base, **overrides})
    except ValidationError as err:
        problems = "; ".join(f"{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in err.errors())
        raise ConfigError(f"openai brain: invalid option(s): {problems}") from None


__all__ = ["DEFAULT_MAX_PIXELS", "ENDPOINT_OPTIONS", "ModelBrainOptions", "brain_options"]
