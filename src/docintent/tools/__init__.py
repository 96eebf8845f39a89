"""Restoration and inspection tools behind one interface, found by name through a registry."""

from .base import DEGRADATIONS, InspectionTool, Tool
from .registry import get_tool, is_builtin, list_tools, register, tools_for

__all__ = ["DEGRADATIONS", "InspectionTool", "Tool", "get_tool", "is_builtin", "list_tools", "register", "tools_for"]
