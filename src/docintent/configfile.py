"""The ``docintent.toml`` config file: where it is looked up and what it may hold.

Only files a user can predict are read, and merged: the user's (``$XDG_CONFIG_HOME/docintent/docintent.toml``,
by default ``~/.config/docintent/docintent.toml``) and the project's, whose keys win. The project's file is the
first ``docintent.toml`` found from the current folder upward to the top of the project: the nearest folder
that holds ``.git`` or ``pyproject.toml``, never above the home folder. Outside a project only the current
folder's own file counts, so a ``docintent.toml`` left in a parent folder (a shared temporary folder, say) is
never read; ``docintent config show`` names it as ignored. A file found this way that another user owns, or
that others may write, is ignored too. ``docintent --config PATH`` or ``DOCINTENT_CONFIG=PATH`` reads that one
file instead, ``DOCINTENT_CONFIG=none`` no file. Environment variables win over both files, and a command's own
options over everything.

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

import logging
import os
import stat
import tomllib
from collections.abc import Mapping
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from .errors import ConfigError
from .redaction import register_options

log = logging.getLogger(__name__)

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
    """What the config files say, merged: the project file's keys win over the user file's.

    ``reasons`` says, file by file, why it was read; ``ignored`` lists the files seen but not read, each with
    the reason."""

    files: tuple[Path, ...] = ()
    settings: dict[str, FileValue] = field(default_factory=dict)
    profiles: dict[str, Profile] = field(default_factory=dict)
    _: KW_ONLY
    default_profile: FileValue | None = None
    reasons: tuple[str, ...] = ()
    ignored: tuple[tuple[Path, str], ...] = ()


#: The largest config file read (bytes); a config is a page of settings, never a data file.
MAX_CONFIG_BYTES = 1 << 20
#: How deeply tables and arrays may nest inside a config file (``[profiles.x]`` with an ``extra_body`` table of
#: lists is 4 levels).
MAX_CONFIG_DEPTH = 8
#: Files that mark the top of a project: the upward search for its ``docintent.toml`` stops at the first folder
#: that holds one of them.
PROJECT_MARKERS = (".git", "pyproject.toml")


def user_config_path(env: Mapping[str, str] | None = None, home: Path | None = None) -> Path:
    """``$XDG_CONFIG_HOME/docintent/docintent.toml``, else ``~/.config/docintent/docintent.toml``."""
    env = os.environ if env is None else env
    home = Path.home() if home is None else home
    base = Path(env["XDG_CONFIG_HOME"]) if env.get("XDG_CONFIG_HOME") else home / ".config"
    return base / "docintent" / CONFIG_NAME


def _is_project_root(folder: Path) -> bool:
    return any((folder / marker).exists() for marker in PROJECT_MARKERS)


def _shared_folder(folder: Path) -> bool:
    try:
        return bool(folder.stat().st_mode & stat.S_IWOTH)
    except OSError:
        return True


def _untrusted(path: Path) -> str | None:
    """Why a file found by looking (not named by the user) must not be read: another user owns it, or others
    may write it. None when it may be read."""
    try:
        info = path.stat()
    except OSError as err:
        return f"cannot be read ({err.strerror or err})"
    owner = getattr(os, "getuid", lambda: info.st_uid)()
    if info.st_uid not in (owner, 0):
        return f"owned by another user (uid {info.st_uid})"
    if info.st_mode & stat.S_IWOTH:
        return "any user may write it"
    return None


def _project_search(start: Path | None, home: Path | None) -> tuple[Path | None, str, list[tuple[Path, str]]]:
    """The project's file (or None), why it applies, and the files above the search that were left alone."""
    folder = (Path.cwd() if start is None else start).resolve()
    home = (Path.home() if home is None else home).resolve()
    chain = [folder, *folder.parents]
    if home in chain:
        chain = chain[: chain.index(home) + 1]  # never above the home folder
    shared = next((i for i, candidate in enumerate(chain[1:], 1) if _shared_folder(candidate)), None)
    if shared is not None:
        chain = chain[:shared]  # never into a folder every user may write (/tmp): anyone could plant a file there
    root = next((i for i, candidate in enumerate(chain) if _is_project_root(candidate)), None)
    searched = chain[: root + 1] if root is not None else chain[:1]
    found: Path | None = None
    why = ""
    for candidate in searched:
        if (candidate / CONFIG_NAME).is_file():
            found = candidate / CONFIG_NAME
            if candidate == folder:
                why = "in the current folder"
            else:
                top = chain[root] if root is not None else folder
                markers = " and ".join(m for m in PROJECT_MARKERS if (top / m).exists())
                why = f"the project's file (the project's top, {top}, holds {markers})"
            break
    limit = (
        f"above the project's top ({chain[root]})"
        if root is not None
        else "in a parent folder outside any project (no .git or pyproject.toml from the current folder up to it)"
    )
    ignored = [(c / CONFIG_NAME, f"not read: {limit}") for c in chain[len(searched) :] if (c / CONFIG_NAME).is_file()]
    return found, why, ignored


def project_config_path(start: Path | None = None, home: Path | None = None) -> Path | None:
    """The project's ``docintent.toml``: the first one from ``start`` (the current folder) upward to the
    nearest folder holding ``.git`` or ``pyproject.toml`` (never above ``home``); outside a project only
    ``start``'s own. None when there is none."""
    return _project_search(start, home)[0]


def find_config_files(
    env: Mapping[str, str] | None = None, start: Path | None = None, home: Path | None = None
) -> tuple[list[tuple[Path, str]], list[tuple[Path, str]]]:
    """The files to read, lowest priority first, each with why it is read; and the files seen and left
    alone, each with why (see the module docstring)."""
    env = os.environ if env is None else env
    named = env.get(CONFIG_ENV, "").strip()
    if named:
        if named.lower() == "none":
            return [], []
        path = Path(named).expanduser()
        if not path.is_file():
            problem = "not a regular file" if path.exists() else "no such config file"
            raise ConfigError(f"{path}: {problem} (named by {CONFIG_ENV} or --config)")
        return [(path, f"named by {CONFIG_ENV} or --config")], []
    chosen: list[tuple[Path, str]] = []
    ignored: list[tuple[Path, str]] = []
    user = user_config_path(env, home)
    project, why, above = _project_search(start, home)
    ignored += above
    for found, reason in ((user, "the user's config file"), (project, why)):
        if found is None or not found.is_file() or found.resolve() in [p.resolve() for p, _ in chosen]:
            continue
        distrust = _untrusted(found)
        if distrust:
            ignored.append((found, f"not read: {distrust}"))
            continue
        chosen.append((found, reason))
    return chosen, ignored


def config_paths(
    env: Mapping[str, str] | None = None, start: Path | None = None, home: Path | None = None
) -> list[Path]:
    """The files to read, lowest priority first (user, then project); only files that exist."""
    return [path for path, _ in find_config_files(env, start, home)[0]]


def _fail(path: Path, key: str, problem: str) -> ConfigError:
    return ConfigError(f"{path}: {key}: {problem}")


def _too_deep(value: Any, depth: int = 0) -> bool:
    if depth > MAX_CONFIG_DEPTH:
        return True
    if isinstance(value, dict):
        return any(_too_deep(v, depth + 1) for v in value.values())
    if isinstance(value, list):
        return any(_too_deep(v, depth + 1) for v in value)
    return False


def read_config_file(path: Path) -> Config:
    """Parse one file and check its shape (size, nesting, top-level keys, tables, each profile's ``kind``)."""
    try:
        with open(path, "rb") as fh:
            raw = fh.read(MAX_CONFIG_BYTES + 1)
        if len(raw) > MAX_CONFIG_BYTES:
            raise ConfigError(
                f"{path}: over {MAX_CONFIG_BYTES:,} bytes; a config file holds settings and profiles only"
            )
        data = tomllib.loads(raw.decode("utf-8-sig"))
    except tomllib.TOMLDecodeError as err:
        raise ConfigError(f"{path}: not valid TOML ({err})") from None
    except RecursionError:
        raise ConfigError(f"{path}: arrays or tables nested more than {MAX_CONFIG_DEPTH} levels deep") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot be read ({err})") from None
    if _too_deep(data):
        raise ConfigError(f"{path}: arrays or tables nested more than {MAX_CONFIG_DEPTH} levels deep")
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


def load_config(env: Mapping[str, str] | None = None, start: Path | None = None, home: Path | None = None) -> Config:
    """Read and merge the config files that apply here (see the module docstring)."""
    chosen, ignored = find_config_files(env, start, home)
    merged = Config(ignored=tuple(ignored))
    for path, reason in chosen:
        one = read_config_file(path)
        merged = Config(
            files=merged.files + one.files,
            settings={**merged.settings, **one.settings},
            profiles={**merged.profiles, **one.profiles},
            default_profile=one.default_profile or merged.default_profile,
            reasons=(*merged.reasons, reason),
            ignored=merged.ignored,
        )
    for path, reason in merged.ignored:
        log.info("%s: %s", path, reason)
    if merged.default_profile is not None and merged.default_profile.value not in merged.profiles:
        raise _fail(
            merged.default_profile.path,
            "default_profile",
            f"names no profile ({merged.default_profile.value!r}); profiles: {', '.join(merged.profiles) or 'none'}",
        )
    return merged
