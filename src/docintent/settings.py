"""Settings read from ``DOCINTENT_*`` environment variables (and the conventional OPENAI_* ones), then from the
``[settings]`` table of the config files (:mod:`docintent.configfile`), then the defaults below.

An API key from the environment (``DOCINTENT_API_KEY``, ``OPENAI_API_KEY``) is sent only to an endpoint the user
named themselves: one from the environment (``DOCINTENT_BASE_URL``, ``OPENAI_BASE_URL``), one given on the
command line (``--brain-opt base_url=...``, ``--base-url``), or the default endpoint when none is named. An
endpoint that only a config file names (``base_url`` in a profile or in ``[settings]``) gets the key written in
a config file (``api_key`` beside it), or none: a ``docintent.toml`` cannot send the user's key elsewhere
(:func:`keep_environment_key_home`).

>>> from docintent.settings import get_settings
>>> get_settings().max_side
2048
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Annotated, Any

from pydantic import Field, PrivateAttr, ValidationError
from pydantic_settings import BaseSettings, SettingsConfigDict

from .configfile import Config, load_config
from .errors import ConfigError
from .redaction import MASK, is_secret_name, redact


def _default_cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "docintent"


class Settings(BaseSettings):
    """Process-wide defaults. Each field is overridden by ``DOCINTENT_<FIELD>``."""

    model_config = SettingsConfigDict(env_prefix="DOCINTENT_", extra="ignore")

    max_pixels: Annotated[
        int, Field(ge=1, description="Refuse images that decode to more pixels than this (decompression-bomb guard).")
    ] = 200_000_000
    max_side: Annotated[
        int, Field(ge=16, le=65_536, description="Longest side pages are resized to before model input.")
    ] = 2048
    pdf_dpi: Annotated[int, Field(ge=1, le=2400, description="Resolution PDF pages are rendered at.")] = 150
    office_timeout_s: Annotated[
        float,
        Field(
            gt=0,
            le=3600,
            description=(
                "Longest LibreOffice may take to convert an office document (DOCX, XLSX, ...) to PDF, in seconds."
            ),
        ),
    ] = 120.0
    cache_dir: Annotated[Path, Field(description="Where OCR and perception results are cached on disk.")] = (
        _default_cache_dir()
    )
    cache: Annotated[bool, Field(description="Cache OCR results on disk (by page hash, region and engine).")] = True
    ocr_engine: Annotated[str, Field(description="Default OCR engine: 'rapidocr' or 'tesseract'.")] = "rapidocr"
    threads: Annotated[int, Field(ge=0, le=1024, description="Threads for ONNX inference (0 = library default).")] = 0
    spin: Annotated[
        bool,
        Field(
            description=(
                "Let ONNX Runtime's idle threads spin-wait for work (its own default). Off, they sleep: the same results for "
                "less CPU on a busy or shared machine."
            )
        ),
    ] = False

    base_url: Annotated[str | None, Field(description="OpenAI-compatible endpoint; falls back to OPENAI_BASE_URL.")] = (
        None
    )
    api_key: Annotated[
        str | None, Field(description="API key; falls back to OPENAI_API_KEY. Local servers need none.")
    ] = None
    model: Annotated[str | None, Field(description="Model name served by the endpoint.")] = None

    #: The settings whose value came from a config file (see :func:`settings_from`).
    _from_file: frozenset[str] = PrivateAttr(default_factory=frozenset)

    def resolved_base_url(self) -> str | None:
        return self.base_url or os.environ.get("OPENAI_BASE_URL")

    def base_url_from_file(self) -> bool:
        """Whether the endpoint these settings name comes from a config file (not from the environment)."""
        return "base_url" in self._from_file and bool(self.base_url)

    def resolved_api_key(self) -> str | None:
        """The API key to send to :meth:`resolved_base_url`: a key from the environment only when that endpoint
        is not one a config file named (see the module docstring)."""
        if self.api_key and "api_key" in self._from_file:
            return self.api_key
        if self.base_url_from_file():
            return None
        return self.api_key or os.environ.get("OPENAI_API_KEY")


#: The conventional variables a setting falls back to when its DOCINTENT_ variable is not set.
FALLBACK_ENV = {"base_url": "OPENAI_BASE_URL", "api_key": "OPENAI_API_KEY"}


def _environment_names() -> set[str]:
    # pydantic-settings matches DOCINTENT_* names case-insensitively
    return {name.upper() for name in os.environ}


def settings_from(config: Config) -> Settings:
    """Settings from the environment, then ``config``'s ``[settings]``, then the defaults.

    A key the settings do not have, or a value of the wrong kind, is a :class:`ConfigError` naming the file, the
    key and the valid keys.
    """
    valid = list(Settings.model_fields)
    for key, item in config.settings.items():
        if key not in Settings.model_fields:
            raise ConfigError(f"{item.path}: settings.{key}: unknown key; valid keys in [settings]: {', '.join(valid)}")
    environment = _environment_names()
    from_file = {
        key: item.value for key, item in config.settings.items() if f"DOCINTENT_{key.upper()}" not in environment
    }
    try:
        settings = Settings(**from_file)
    except ValidationError as err:
        for problem in err.errors():
            key = str(problem["loc"][0]) if problem["loc"] else ""
            if key in from_file:
                raise ConfigError(
                    f"{config.settings[key].path}: settings.{key}: {problem['msg']} (got {from_file[key]!r})"
                ) from None
        # From the environment: one line naming the variable (the crash handler reads the settings too).
        raise ConfigError("; ".join(_setting_problem(e) for e in err.errors())) from None
    settings._from_file = frozenset(from_file)
    return settings


#: The environment variables that hold an API key, in the order they are read.
KEY_ENVIRONMENT = ("DOCINTENT_API_KEY", "OPENAI_API_KEY")
#: Sent instead of a key where none may be sent (servers that need no key take any).
NO_KEY = "no-key-needed"
#: Where :func:`keep_environment_key_home` says the key went.
KEY_WITHHELD = (
    "not sent: {var} goes only to an endpoint the environment or the command line names, "
    "not to one a config file names ({source}); write api_key beside that base_url"
)


def environment_key(env: Any = None) -> tuple[str, str] | None:
    """``(variable, key)`` of the API key the environment holds, or None."""
    env = os.environ if env is None else env
    return next(((name, env[name]) for name in KEY_ENVIRONMENT if env.get(name)), None)


def keep_environment_key_home(choice: Any, env: Any = None) -> Any:
    """``choice`` (a :class:`~docintent.brains.profiles.BrainChoice`) such that an API key from the environment
    is sent only where the module docstring says: when its ``base_url`` comes from a config file and no
    ``api_key`` option is given, the brain gets :data:`NO_KEY` instead of the environment's key. A ``base_url``
    given on the command line gets the environment's key even where ``[settings]`` names another endpoint."""
    from dataclasses import replace

    key = environment_key(env)
    if key is None or "api_key" in choice.options or "base_url" not in choice.options:
        return choice
    source = str(choice.sources.get("base_url", ""))
    options, sources = dict(choice.options), dict(choice.sources)
    if source == "command line":
        if get_settings().base_url_from_file():  # the brain would otherwise withhold it for [settings]' endpoint
            options["api_key"], sources["api_key"] = key[1], f"environment ({key[0]})"
        else:
            return choice
    elif source.startswith("environment"):
        return choice
    else:
        options["api_key"], sources["api_key"] = NO_KEY, KEY_WITHHELD.format(var=key[0], source=source)
    return replace(choice, options=options, sources=sources)


def _setting_problem(error: Any) -> str:
    """``DOCINTENT_NAME='value': problem`` for one validation error of a setting from the environment."""
    name = str(error["loc"][0]) if error.get("loc") else "?"
    value = error.get("input")
    kind = error.get("type", "")
    context = error.get("ctx") or {}
    if kind in ("greater_than_equal", "greater_than"):
        problem = f"must be at least {context.get('ge', context.get('gt'))}"
    elif kind in ("less_than_equal", "less_than"):
        problem = f"must be at most {context.get('le', context.get('lt'))}"
    elif kind.startswith("int_"):
        problem = "must be a whole number"
    elif kind.startswith("bool"):
        problem = "must be true or false (1/0, yes/no)"
    else:
        problem = str(error.get("msg", "invalid value"))
    shown = value if isinstance(value, str) else str(value)
    return f"DOCINTENT_{name.upper()}={shown!r}: {problem}"


@lru_cache(maxsize=1)
def get_settings() -> Settings:
    """The settings of this process, read once: the environment over the config files over the defaults.

    A value that is not valid is a :class:`~docintent.errors.ConfigError` naming its variable (or file and key):

    >>> import os; os.environ["DOCINTENT_PDF_DPI"] = "0"; get_settings.cache_clear()
    >>> get_settings()
    Traceback (most recent call last):
    ...
    docintent.errors.ConfigError: DOCINTENT_PDF_DPI='0': must be at least 1
    >>> del os.environ["DOCINTENT_PDF_DPI"]; get_settings.cache_clear()
    """
    return settings_from(load_config())


@dataclass(frozen=True)
class SettingSource:
    """One setting's effective value and where it came from: "default", a config file's path, or
    "environment (NAME)"."""

    name: str
    value: Any
    source: str


def settings_report(config: Config | None = None) -> list[SettingSource]:
    """Every setting with its effective value and its source, in declaration order (secrets shown as ``***``)."""
    config = load_config() if config is None else config
    settings = settings_from(config)
    environment = _environment_names()
    rows = []
    for name in Settings.model_fields:
        value: Any = getattr(settings, name)
        own = f"DOCINTENT_{name.upper()}"
        fallback = FALLBACK_ENV.get(name)
        if own in environment:
            source = f"environment ({own})"
        elif name in config.settings:
            source = str(config.settings[name].path)
        elif fallback and os.environ.get(fallback):
            value, source = os.environ[fallback], f"environment ({fallback})"
        else:
            source = "default"
        if name == "api_key" and source.startswith("environment") and settings.base_url_from_file():
            variable = source.removeprefix("environment (").rstrip(")")
            value, source = None, KEY_WITHHELD.format(var=variable, source=config.settings["base_url"].path)
        if is_secret_name(name) and value:
            value = MASK
        elif isinstance(value, str):
            value = redact(value)  # a base URL's credentials
        rows.append(SettingSource(name, value, source))
    return rows
