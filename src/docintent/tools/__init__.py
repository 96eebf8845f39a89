"""Restoration and inspection tools behind one interface, found by name through a registry."""

from .base import InspectionTool, Tool
from .registry import TOOLS, get_tool, is_builtin, list_tools, register, restoration_tools, tools_for

__all__ = [
    "TOOLS",
    "InspectionTool",
    "Tool",
    "get_tool",
    "is_builtin",
    "list_tools",
    "register",
    "restoration_tools",
    "tools_for",
]
