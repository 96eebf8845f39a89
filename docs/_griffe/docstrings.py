"""A griffe extension that lets the API reference render the project's docstrings as they are written.

The docstrings follow the standard library's habits: interactive examples (``>>>``) anywhere in the text and
Sphinx roles such as ``:func:`name```. Markdown would turn the examples into nested block quotes and show the
roles literally, so before rendering, each run of example lines becomes a fenced ``pycon`` block (without its
doctest flags) and each role becomes inline code.
"""

from __future__ import annotations

import re
from typing import Any

import griffe

_DIRECTIVE = re.compile(r"\s*#\s*doctest:.*$")
_ROLE = re.compile(r":(?:py:)?(?:func|class|meth|mod|data|attr|exc|obj|const)+:`~?([^`]+)`")


def _fence_examples(text: str) -> str:
    out: list[str] = []
    lines = text.splitlines()
    i = 0
    in_fence = False
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith("```"):
            in_fence = not in_fence
        if not in_fence and line.lstrip().startswith(">>>"):
            indent = line[: len(line) - len(line.lstrip())]
            block = []
            while i < len(lines) and lines[i].strip() and lines[i].startswith(indent):
                block.append(_DIRECTIVE.sub("", lines[i][len(indent):]))  # doctest flags are for the test runner
                i += 1
            if out and out[-1].strip():
                out.append("")
            out.extend([indent + "```pycon", *(indent + b for b in block), indent + "```", ""])
            continue
        out.append(line)
        i += 1
    return "\n".join(out)


class ProjectDocstrings(griffe.Extension):
    """Fence interactive examples and turn Sphinx roles into inline code in every docstring."""

    def on_object(self, *, obj: griffe.Object, **kwargs: Any) -> None:
        if obj.docstring is not None:
            obj.docstring.value = _fence_examples(_ROLE.sub(r"`\1`", obj.docstring.value))
