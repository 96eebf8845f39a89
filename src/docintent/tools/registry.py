"""Find tools by name: the built-in ones plus third-party tools from the ``docintent.tools`` entry points.

A package adds a tool by declaring, in its ``pyproject.toml``::

    [project.entry-points."docintent.tools"]
    docres_deshadow = "my_package.tools:DocResDeshadow"

where the object is a :class:`~docintent.tools.base.Tool` subclass (or an instance). Its ``name`` is what
strategies and models call it by, and its ``degradation`` a registered family
(:mod:`docintent.perception.degradations`, which plug-in families join through their own entry points). A
plug-in tool with a built-in tool's name is refused, with a message naming both, and the built-in stays.

The built-in tools are the ``@register``-ed classes of the modules of this package: every module of
``docintent.tools`` is imported before the registry is first read, so a new built-in tool is its module and
nothing else (no list of modules to extend).
"""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

from ..errors import ConfigError
from ..perception.degradations import DEGRADATIONS
from ..registry import Registry
from ..vocabulary import INSPECTION
from .base import Tool


class _Shared:
    """A factory that returns one tool instance (tools are stateless; set-up happens once per instance)."""

    def __init__(self, tool: Tool) -> None:
        self.tool = tool

    def __call__(self) -> Tool:
        return self.tool


class ToolRegistry(Registry[Tool]):
    """Tools by name; each name is one shared instance."""

    def add(self, tool: type[Tool] | Tool, origin: str) -> Tool:
        instance = tool() if isinstance(tool, type) else tool
        if not isinstance(instance, Tool):
            raise ConfigError(f"{tool!r} ({origin}) is not a docintent Tool")
        existing = self._entries.get(instance.name)
        if existing is not None and type(existing.factory()) is type(instance):
            return existing.factory()  # the same tool class registered again (a module imported twice)
        _check_target(instance, origin)
        self.register(instance.name, _Shared(instance), origin=origin, description=instance.description)
        return instance

    def scoped(self, kind: str, factory: Any, options: Any = None, origin: str = "test") -> Any:
        """A tool registered for a ``with`` block (tests), checked as :meth:`add` checks it: a tool aimed at an
        unknown family is refused here too, not only when installed."""
        tool = factory if isinstance(factory, Tool) else factory() if callable(factory) else None
        if isinstance(tool, Tool):
            _check_target(tool, origin)
        return super().scoped(kind, factory, options, origin)

    def register_plugin(self, name: str, obj: Any, origin: str) -> None:
        self.add(obj, origin)


def _check_target(tool: Tool, origin: str) -> None:
    if tool.degradation != INSPECTION and tool.degradation not in DEGRADATIONS:
        raise ConfigError(
            f"tool {tool.name!r} ({origin}) targets the unknown degradation {tool.degradation!r}; "
            f"known: {', '.join(DEGRADATIONS.kinds() + [INSPECTION])}"
        )


def builtin_modules() -> list[str]:
    """The modules of ``docintent.tools``, by name: importing them registers the built-in tools."""
    package = importlib.import_module(__package__)
    return sorted(
        f"{__package__}.{m.name}" for m in pkgutil.iter_modules(package.__path__) if not m.name.startswith("_")
    )


def _load_builtin() -> None:
    for module in builtin_modules():
        importlib.import_module(module)


TOOLS = ToolRegistry("tool", group="docintent.tools", loader=_load_builtin)


def register(tool: type[Tool] | Tool) -> type[Tool] | Tool:
    """Register a tool class or instance under its name (usable as a class decorator). A tool whose class lives
    outside docintent counts as a plug-in: it may not take a built-in's name."""
    cls = tool if isinstance(tool, type) else type(tool)
    builtin = cls.__module__.startswith(__package__ + ".")
    TOOLS.add(tool, "built-in" if builtin else f"module {cls.__module__}")
    return tool


def get_tool(name: str) -> Tool:
    """The registered tool called ``name``; the error for an unknown name lists every valid one."""
    return TOOLS.get(name)


def is_builtin(tool: Tool) -> bool:
    """True for the tools docintent ships."""
    return TOOLS.entry(tool.name).builtin if tool.name in TOOLS else False


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
    tools = [TOOLS.get(kind) for kind in TOOLS.kinds()]
    if degradation is not None:
        tools = [t for t in tools if t.degradation == degradation]
    return sorted(tools, key=lambda t: t.name)


def restoration_tools() -> list[str]:
    """Names of every tool that changes pages (not inspection), sorted."""
    return [t.name for t in list_tools() if t.degradation != INSPECTION]
