"""Find tools by name: the built-in ones plus third-party tools from the ``docintent.tools`` entry points.

A package adds a tool by declaring, in its ``pyproject.toml``::

    [project.entry-points."docintent.tools"]
    docres_deshadow = "my_package.tools:DocResDeshadow"

where the object is a :class:`~docintent.tools.base.Tool` subclass (or an instance). Its ``name`` is what
strategies and models call it by; a third-party tool with a built-in tool's name replaces it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable
from importlib import metadata

from ..errors import UnknownComponentError
from .base import Tool

log = logging.getLogger(__name__)

#: Modules of ``docintent.tools`` whose import registers the built-in tools.
BUILTIN_MODULES: tuple[str, ...] = ("rotate", "deshadow", "appearance", "demoire", "deblur", "dewarp", "zoom")

_REGISTRY: dict[str, Tool] = {}
_loaded_entry_points = False


def register(tool: type[Tool] | Tool) -> type[Tool] | Tool:
    """Register a tool class or instance under its name (usable as a class decorator)."""
    instance = tool() if isinstance(tool, type) else tool
    if not isinstance(instance, Tool):
        raise TypeError(f"{tool!r} is not a docintent Tool")
    _REGISTRY[instance.name] = instance
    return tool


def _load_builtin() -> None:
    # Importing a module registers its tools.
    import importlib

    for module in BUILTIN_MODULES:
        importlib.import_module(f"{__package__}.{module}")


def _load_entry_points() -> None:
    global _loaded_entry_points
    if _loaded_entry_points:
        return
    _loaded_entry_points = True
    for ep in metadata.entry_points(group="docintent.tools"):
        try:
            register(ep.load())
        except Exception as err:  # a broken plug-in must not break the built-in tools
            log.warning("could not load docintent tool %r from %s: %s", ep.name, ep.value, err)


_loaded_builtin = False


def _ensure_loaded() -> None:
    # A flag, not "is the registry empty": a tool registered before first use must not hide the built-ins.
    global _loaded_builtin
    if not _loaded_builtin:
        _loaded_builtin = True
        _load_builtin()
    _load_entry_points()


def get_tool(name: str) -> Tool:
    """The registered tool called ``name``; the error for an unknown name lists every valid one."""
    _ensure_loaded()
    try:
        return _REGISTRY[name]
    except KeyError:
        raise UnknownComponentError("tool", name, list(_REGISTRY)) from None


def is_builtin(tool: Tool) -> bool:
    """True for the tools docintent ships (their class lives in ``docintent.tools``)."""
    return type(tool).__module__.startswith(__package__ + ".")


def tools_for(degradation: str) -> list[str]:
    """Names of the registered tools that restore ``degradation``, plug-ins first, then the built-ins by name.

    This is the one degradation -> tool map: strategies and brains ask it, so a tool installed through the
    ``docintent.tools`` entry points is offered wherever a built-in tool for the same degradation is.

    >>> tools_for("shadow")[-1]
    'deshadowing'
    """
    found = list_tools(degradation)
    return [t.name for t in found if not is_builtin(t)] + [t.name for t in found if is_builtin(t)]


def list_tools(degradation: str | None = None) -> list[Tool]:
    """All registered tools (optionally only those targeting ``degradation``), sorted by name."""
    _ensure_loaded()
    tools: Iterable[Tool] = _REGISTRY.values()
    if degradation is not None:
        tools = (t for t in tools if t.degradation == degradation)
    return sorted(tools, key=lambda t: t.name)
