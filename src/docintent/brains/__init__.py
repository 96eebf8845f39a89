"""Brains: the decision makers behind strategies (model, offline reader, scripted test doubles)."""

from __future__ import annotations

import importlib
from typing import Any

from ..errors import UnknownComponentError
from .base import (
    TASKS,
    Answer,
    Brain,
    Decision,
    Diagnosis,
    Keep,
    Review,
    Rollback,
    State,
    Usage,
    UseTool,
)
from .scripted import FunctionBrain, ScriptedBrain

#: Brain kinds -> "module:Class" (imported lazily: the model brain pulls in the HTTP client).
BRAINS: dict[str, str] = {
    "offline": "docintent.brains.offline:OfflineReader",
    "openai": "docintent.brains.mllm:ModelBrain",
    "scripted": "docintent.brains.scripted:ScriptedBrain",
}


def get_brain(kind: str = "offline", **options: Any) -> Brain:
    """Build the brain of ``kind`` ("offline" default, "openai", "scripted") with ``options``."""
    try:
        target = BRAINS[kind]
    except KeyError:
        raise UnknownComponentError("brain", kind, list(BRAINS)) from None
    module_name, class_name = target.split(":")
    cls = getattr(importlib.import_module(module_name), class_name)
    return cls(**options)


__all__ = [
    "BRAINS",
    "TASKS",
    "Answer",
    "Brain",
    "Decision",
    "Diagnosis",
    "FunctionBrain",
    "Keep",
    "Review",
    "Rollback",
    "ScriptedBrain",
    "State",
    "Usage",
    "UseTool",
    "get_brain",
]
