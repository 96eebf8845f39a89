"""The prompts of the model brain, kept as package data files beside this module.

Each ``*.txt`` file is a :class:`string.Template` (``$name`` placeholders, so JSON braces need no escaping).
:data:`PROMPT_VERSION` is the release label plus a digest of every prompt file, so editing any prompt changes
the version that runs record in their manifest.

>>> render("answer", family="document", rules="(rules)").endswith('{"answer": "<your answer>"}\\nIf the evidence truly cannot be read, still give your best reading.')
True
>>> PROMPT_VERSION.startswith("1.")
True
>>> task_noun("doc"), answer_rules("chart").splitlines()[0]
('document', 'Answer format (chart questions):')
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from functools import lru_cache
from importlib import resources
from string import Template

from ...errors import ConfigError
from ...perception.degradations import degradation_list, degradation_names
from ...vocabulary import TASKS, get_task

#: Bump the release label when the protocol changes; the digest follows every wording change by itself.
PROMPT_RELEASE = "1.0"


class _Nouns(Mapping[str, str]):
    """Task name -> the noun prompts use for it, read from the task records (plug-in tasks included)."""

    def __getitem__(self, task: str) -> str:
        if task not in TASKS:
            raise KeyError(task)
        return TASKS[task].noun

    def __iter__(self) -> Iterator[str]:
        return iter(TASKS)

    def __len__(self) -> int:
        return len(TASKS)


#: Task -> the noun used in prompts (each :class:`~docintent.vocabulary.Task`'s ``noun``).
FAMILY: Mapping[str, str] = _Nouns()


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
    filled = {
        "degradation_list": degradation_list(),
        "degradation_names": degradation_names(),
        **{k: str(v) for k, v in values.items()},
    }
    try:
        return Template(template).substitute(**filled).strip()
    except KeyError as err:
        raise ConfigError(f"prompt {name!r} needs a value for ${err.args[0]}") from None


def answer_rules(task: str) -> str:
    """The answer-format rules of a task (its record's ``rules``: the prompt file it names, else the text itself);
    an unknown task names the valid ones."""
    rules = get_task(task).rules
    return (prompts().get(rules) or rules).strip()


def task_noun(task: str) -> str:
    """What prompts call the thing a question of ``task`` is about; "document" for a task nobody registered."""
    return TASKS[task].noun if task in TASKS else "document"


def task_rules(task: str) -> str:
    """:func:`answer_rules` of ``task``; the document rules for a task nobody registered."""
    return answer_rules(task if task in TASKS else "doc")
