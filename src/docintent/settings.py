"""Settings read from ``DOCINTENT_*`` environment variables (and the conventional OPENAI_* ones).

>>> from docintent.settings import get_settings
>>> get_settings().max_side
2048
"""

from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path
from typing import Annotated

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "docintent"


class Settings(BaseSettings):
    """Process-wide defaults. Each field is overridden by ``DOCINTENT_<FIELD>``."""

    model_config = SettingsConfigDict(env_prefix="DOCINTENT_", extra="ignore")

    max_pixels: Annotated[
        int, Field(description="Refuse images that decode to more pixels than this (decompression-bomb guard).")
    ] = 200_000_000
    max_side: Annotated[int, Field(description="Longest side pages are resized to before model input.")] = 2048
    pdf_dpi: Annotated[int, Field(description="Resolution PDF pages are rendered at.")] = 150
    cache_dir: Annotated[Path, Field(description="Where OCR and perception results are cached on disk.")] = (
        _default_cache_dir()
    )
    cache: Annotated[bool, Field(description="Cache OCR results on disk (by page hash, region and engine).")] = True
    ocr_engine: Annotated[str, Field(description="Default OCR engine: 'rapidocr' or 'tesseract'.")] = "rapidocr"
    threads: Annotated[int, Field(description="Threads for ONNX inference (0 = library default).")] = 0

    base_url: Annotated[str | None, Field(description="OpenAI-compatible endpoint; falls back to OPENAI_BASE_URL.")] = None
    api_key: Annotated[str | None, Field(description="API key; falls back to OPENAI_API_KEY. Local servers need none.")] = None
    model: Annotated[str | None, Field(description="Model name served by the endpoint.")] = None

    def resolved_base_url(self) -> str | None:
        return self.base_url or os.environ.get("OPENAI_BASE_URL")

    def resolved_api_key(self) -> str | None:
        return self.api_key or os.environ.get("OPENAI_API_KEY")


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The settings of this process, read once from the environment."""
    return Settings()


_URL_CREDENTIALS = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^\s/@]+@")


def strip_url_credentials(text: str) -> str:
    """``text`` with the user and password of every URL in it replaced by ``***`` (for what gets recorded).

    >>> strip_url_credentials("cannot reach http://alice:secret@host:8000/v1")
    'cannot reach http://***@host:8000/v1'
    """
    return _URL_CREDENTIALS.sub(r"\1***@", text)
