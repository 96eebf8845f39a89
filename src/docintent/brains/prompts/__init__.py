"""The prompts of the model brain, kept as package data files beside this module.

Each ``*.txt`` file is a :class:`string.Template` (``$name`` placeholders, so JSON braces need no escaping).
:data:`PROMPT_VERSION` is the release label plus a digest of every prompt file, so editing any prompt changes
the version that runs record in their manifest.

>>> render("answer", family="document", rules="(rules)").endswith('{"answer": "<your answer>"}\\nIf the evidence truly cannot be read, still give your best reading.')
True
>>> PROMPT_VERSION.startswith("1.")
True
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from importlib import resources
from string import Template

from ...errors import ConfigError
from ...perception.degradations import degradation_list, degradation_names

#: Bump the release label when the protocol changes; the digest follows every wording change by itself.
PROMPT_RELEASE = "1.0"

#: Task -> the noun used in prompts.
FAMILY = {"doc": "document", "chart": "chart", "table": "table"}


def _files() -> dict[str, str]:
    root = resources.files(__package__)
    return {p.name[:-4]: p.read_text(encoding="utf-8") for p in root.iterdir() if p.name.endswith(".txt")}


@lru_cache(maxsize=1)
def prompts() -> dict[str, str]:
    """Every prompt template by name (file name without ``.txt``)."""
    return _files()


def _digest() -> str:
    h = hashlib.sha256()
    for name, text in sorted(prompts().items()):
        h.update(name.encode())
        h.update(text.encode())
    return h.hexdigest()[:8]


PROMPT_VERSION = f"{PROMPT_RELEASE}+{_digest()}"


def render(name: str, **values: object) -> str:
    """The prompt ``name`` with its ``$placeholders`` filled; a missing value is an error, not a blank.

    ``$degradation_list`` and ``$degradation_names`` are filled from the registered degradation families, so a
    plug-in family is named to the model like a built-in one."""
    try:
        template = prompts()[name]
    except KeyError:
        raise ConfigError(f"no prompt named {name!r}; prompts: {', '.join(sorted(prompts()))}") from None
    filled = {"degradation_list": degradation_list(), "degradation_names": degradation_names(),
              **{k: str(v) for k, v in values.items()}}
    try:
        return Template(template).substitute(**filled).strip()
    except KeyError as err:
        raise ConfigError(f"prompt {name!r} needs a value for ${err.args[0]}") from None


def answer_rules(task: str) -> str:
    """The answer-format rules of a task family ("doc", "chart" or "table")."""
    if task not in FAMILY:
        raise ConfigError(f"unknown task {task!r}; tasks: {', '.join(FAMILY)}")
    return prompts()[f"rules_{task}"].strip()
