"""The ``docintent.toml`` config file: where it is looked up and what it may hold.

Two files are read, when they exist, and merged: the user's (``$XDG_CONFIG_HOME/docintent/docintent.toml``, by
default ``~/.config/docintent/docintent.toml``) and the project's (the first ``docintent.toml`` found from the
current folder upward, stopping at the top of a git checkout or at the home folder), whose keys win.
``DOCINTENT_CONFIG=PATH`` reads that one file instead, ``DOCINTENT_CONFIG=none`` no file. Environment variables
win over both files, and a command's own options over everything.

A file has three parts, all optional::

    default_profile = "local"

    [settings]                 # any DOCINTENT_* setting, by its name in lower case
    cache_dir = "/data/docintent-cache"
    threads = 1

    [profiles.local]           # a named brain: its kind and its options
    kind = "openai"
    base_url = "http://localhost:8000/v1"
    model = "Qwen/Qwen2.5-VL-7B-Instruct"
    max_tokens = 16384
    timeout = 300

The settings' names and values are checked by :mod:`docintent.settings`, the profiles' options by the brain they
name (:mod:`docintent.brains.profiles`). This module reads the files and checks their shape; a problem is one
:class:`~docintent.errors.ConfigError` naming the file, the key and the keys that are valid there.

>>> import tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "docintent.toml").write_text('[settings]\\nthreads = 1\\n[profiles.fast]\\nkind = "offline"\\n')
>>> config = load_config(env={"DOCINTENT_CONFIG": str(folder / "docintent.toml")})
>>> config.settings["threads"].value, config.profiles["fast"].kind
(1, 'offline')
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .redaction import register_options

#: The file name looked up in the project folders and the user config folder.
CONFIG_NAME = "docintent.toml"
#: Keys a file may hold at its top level.
TOP_LEVEL_KEYS = ("default_profile", "settings", "profiles")
#: The environment variable that names the one file to read (or ``none``).
CONFIG_ENV = "DOCINTENT_CONFIG"


@dataclass(frozen=True)
class FileValue:
    """A value read from a config file, with the file it came from."""

    value: Any
    path: Path


@dataclass(frozen=True)
class Profile:
    """A named brain: ``kind`` ("openai", "offline", ...) and its options, as the file gave them."""

    name: str
    kind: str
    options: dict[str, Any]
    path: Path


@dataclass(frozen=True)
class Config:
    """What the config files say, merged: the project file's keys win over the user file's."""

    files: tuple[Path, ...] = ()
    settings: dict[str, FileValue] = field(default_factory=dict)
    profiles: dict[str, Profile] = field(default_factory=dict)
    default_profile: FileValue | None = None


def user_config_path(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """``$XDG_CONFIG_HOME/docintent/docintent.toml``, else ``~/.config/docintent/docintent.toml``."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    return base / "docintent" / CONFIG_NAME


def project_config_path(start: Path | None = None, home: Path | None = None) -> Path | None:
    """The first ``docintent.toml`` from ``start`` (the current folder) upward, stopping after the folder that
    holds ``.git`` or at ``home``; None when there is none."""
    folder = (Path.cwd() if start is None else start).resolve()
    home = (Path.home() if home is None else home).resolve()
    for candidate in (folder, *folder.parents):
        if (candidate / CONFIG_NAME).is_file():
            return candidate / CONFIG_NAME
        if (candidate / ".git").exists() or candidate == home:
            return None
    return None


def config_paths(
    env: Mapping[str, str] | None = None, start: Path | None = None, home: Path | None = None
) -> list[Path]:
    """The files to read, lowest priority first (user, then project); only files that exist."""
    env = os.environ if env is None else env
    named = env.get(CONFIG_ENV, "").strip()
    if named:
        if named.lower() == "none":
            return []
        path = Path(named).expanduser()
        if not path.is_file():
            raise ConfigError(f"{path}: no such config file (named by {CONFIG_ENV})")
        return [path]
    paths = [user_config_path(env, home)]
    project = project_config_path(start, home)
    if project is not None:
        paths.append(project)
    unique: list[Path] = []
    for path in paths:
        if path.is_file() and path.resolve() not in [p.resolve() for p in unique]:
            unique.append(path)
    return unique


def _fail(path: Path, key: str, problem: str) -> ConfigError:
    return ConfigError(f"{path}: {key}: {problem}")


def read_config_file(path: Path) -> Config:
    """Parse one file and check its shape (top-level keys, tables, each profile's ``kind``)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML ({err})") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot be read ({err})") from None
    for key in data:
        if key not in TOP_LEVEL_KEYS:
            raise _fail(path, key, f"unknown key; valid keys at the top level: {', '.join(TOP_LEVEL_KEYS)}")
    default = data.get("default_profile")
    if default is not None and not isinstance(default, str):
        raise _fail(path, "default_profile", f"must be a profile name (a string), got {default!r}")
    settings = data.get("settings", {})
    if not isinstance(settings, dict):
        raise _fail(path, "settings", "must be a table ([settings])")
    profiles_table = data.get("profiles", {})
    if not isinstance(profiles_table, dict):
        raise _fail(path, "profiles", "must hold tables ([profiles.NAME])")
    profiles: dict[str, Profile] = {}
    for name, table in profiles_table.items():
        if not isinstance(table, dict):
            raise _fail(path, f"profiles.{name}", "must be a table ([profiles.NAME] with kind and brain options)")
        kind = table.get("kind", "openai")
        if not isinstance(kind, str):
            raise _fail(path, f"profiles.{name}.kind", f"must be a brain kind (a string), got {kind!r}")
        options = {k: v for k, v in table.items() if k != "kind"}
        register_options(options)  # a key or URL password written in a profile is masked wherever it reappears
        profiles[name] = Profile(name, kind, options, path)
    register_options(settings)
    return Config(
        files=(path,),
        settings={k: FileValue(v, path) for k, v in settings.items()},
        profiles=profiles,
        default_profile=FileValue(default, path) if default is not None else None,
    )


def load_config(
    env: Mapping[str, str] | None = None, start: Path | None = None, home: Path | None = None
) -> Config:
    """Read and merge the config files that apply here (see the module docstring)."""
    merged = Config()
    for path in config_paths(env, start, home):
        one = read_config_file(path)
        merged = Config(
            files=merged.files + one.files,
            settings={**merged.settings, **one.settings},
            profiles={**merged.profiles, **one.profiles},
            default_profile=one.default_profile or merged.default_profile,
        )
    if merged.default_profile is not None and merged.default_profile.value not in merged.profiles:
        raise _fail(
            merged.default_profile.path, "default_profile",
            f"names no profile ({merged.default_profile.value!r}); profiles: {', '.join(merged.profiles) or 'none'}",
        )
    return merged
