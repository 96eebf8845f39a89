"""Brain profiles: ``--profile NAME`` picks a brain kind and its options from the config files.

A profile (``[profiles.NAME]`` in ``docintent.toml``, see :mod:`docintent.configfile`) holds ``kind`` and any
option of that brain (``base_url``, ``model``, ``max_tokens``, ``timeout``, ...). What a command ends up using,
lowest priority first: the profile's options, the environment (``DOCINTENT_BASE_URL``, ``OPENAI_API_KEY``, ...;
the environment wins over the file), then the command's own ``--brain-opt``. With neither ``--profile`` nor
``--brain``, the file's ``default_profile`` applies.

>>> from docintent.configfile import Config, Profile
>>> from pathlib import Path
>>> config = Config(profiles={"fast": Profile("fast", "offline", {"answer_threshold": 0.9}, Path("docintent.toml"))})
>>> choice = choose_brain("fast", None, {}, config=config, env={})
>>> choice.kind, choice.options
('offline', {'answer_threshold': 0.9})
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

from ..configfile import Config, Profile, load_config
from ..errors import ConfigError
from ..redaction import MASK, is_secret_name, redact
from . import BRAINS

#: Brain options an environment variable also sets; where the variable is set, it wins over a profile's value.
ENV_OPTIONS: dict[str, tuple[str, ...]] = {
    "base_url": ("DOCINTENT_BASE_URL", "OPENAI_BASE_URL"),
    "api_key": ("DOCINTENT_API_KEY", "OPENAI_API_KEY"),
    "model": ("DOCINTENT_MODEL",),
    "max_side": ("DOCINTENT_MAX_SIDE",),
    "engine": ("DOCINTENT_OCR_ENGINE",),
}


@dataclass(frozen=True)
class BrainChoice:
    """The brain a command builds: its kind, its options, the profile they came from and each option's source."""

    kind: str
    options: dict[str, Any]
    profile: str | None = None
    _: KW_ONLY
    sources: dict[str, str] = field(default_factory=dict)
    #: Options of the profile that an environment variable overrides: option -> the variable's name.
    from_environment: dict[str, str] = field(default_factory=dict)


def option_names(kind: str) -> tuple[str, ...]:
    """The options a brain of ``kind`` accepts (what a profile may hold besides ``kind``)."""
    if kind not in BRAINS.kinds():
        raise ConfigError(f"unknown brain kind {kind!r}; valid: {', '.join(BRAINS.kinds_in_order())}")
    return tuple(name for name in BRAINS.entry(kind).options.model_fields if name != "kind")


def check_profile(profile: Profile) -> None:
    """Refuse a profile whose kind is unknown, that holds an option its brain does not take, or a value of the
    wrong kind: one :class:`ConfigError` naming the file, the key and the valid keys."""
    where = f"{profile.path}: profiles.{profile.name}"
    if profile.kind not in BRAINS.kinds():
        raise ConfigError(
            f"{where}.kind: unknown brain kind {profile.kind!r}; valid: {', '.join(BRAINS.kinds_in_order())}"
        )
    valid = option_names(profile.kind)
    for key in profile.options:
        if key not in valid:
            raise ConfigError(
                f"{where}.{key}: unknown option of the {profile.kind} brain; valid keys: kind, {', '.join(valid)}"
            )
    try:
        BRAINS.validate(profile.kind, profile.options)  # the values, as the brain will be built with them
    except ConfigError as err:
        raise ConfigError(f"{where}: {err}") from None


def choose_brain(
    profile: str | None,
    kind: str | None,
    options: Mapping[str, Any],
    *,
    config: Config | None = None,
    env: Mapping[str, str] | None = None,
) -> BrainChoice:
    """The brain a command builds from ``--profile`` (``profile``), ``--brain`` (``kind``) and ``--brain-opt``
    (``options``), with the config files and the environment (see the module docstring)."""
    config = load_config() if config is None else config
    env = os.environ if env is None else env
    for one in config.profiles.values():
        check_profile(one)
    name = profile
    if name is None and kind is None and config.default_profile is not None:
        name = config.default_profile.value
    if name is None:
        return BrainChoice(kind or "offline", dict(options), None, sources={k: "command line" for k in options})
    if name not in config.profiles:
        where = ", ".join(map(str, config.files)) or "no config file"
        raise ConfigError(
            f"--profile {name}: no such profile (in {where}); profiles: {', '.join(config.profiles) or 'none'}"
        )
    chosen = config.profiles[name]
    if kind is not None and kind != chosen.kind:
        raise ConfigError(f"--brain {kind} contradicts --profile {name}, a {chosen.kind} brain; give one of them")
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    from_environment: dict[str, str] = {}
    for key, value in chosen.options.items():
        overriding = [var for var in ENV_OPTIONS.get(key, ()) if env.get(var)]
        if overriding:
            sources[key] = f"environment ({overriding[0]})"  # the brain reads it from there
            from_environment[key] = overriding[0]
            continue
        merged[key] = value
        sources[key] = str(chosen.path)
    for key, value in options.items():
        merged[key] = value
        sources[key] = "command line"
    return BrainChoice(chosen.kind, merged, name, sources=sources, from_environment=from_environment)


def shown(key: str, value: Any) -> Any:
    """``value`` as it may be printed: secrets as ``***``, credentials in a URL masked
    (:mod:`docintent.redaction`)."""
    if is_secret_name(key) and value:
        return MASK
    return redact(value) if isinstance(value, str) else value
