"""Restoration and inspection tools behind one interface, found by name through a registry."""

from .base import DEGRADATIONS, Tool
from .registry import get_tool, list_tools, register

__all__ = ["DEGRADATIONS", "Tool", "get_tool", "list_tools", "register"]
