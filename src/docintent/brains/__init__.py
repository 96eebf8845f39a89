"""Brains: the decision makers behind strategies (model, offline reader, scripted test doubles).

Every brain is a :class:`Restorer` (decide, review, diagnose, answer); brains that reason in steps also play the
:class:`MactRoles` (plan, execute, judge, conclude). Brains are built by kind through :data:`BRAINS`, a registry
whose options are validated before anything is built; plug-in brains join through the ``docintent.brains``
entry points.

>>> get_brain("offline", answer_treshold=0.9)
Traceback (most recent call last):
...
docintent.errors.ConfigError: brain 'offline': unknown option 'answer_treshold' (did you mean 'answer_threshold'?); valid options: answer_threshold, calibration, engine, keep_margin, noise_floors, orientation_confidence, photometric_threshold, reader, review_rule, severity_threshold
"""

from __future__ import annotations

from typing import Any

from ..registry import Registry
from .base import TASKS, Brain, MactRoles, Restorer, State, plays_mact, require_mact
from .decisions import Answer, Change, Decision, Diagnosis, Keep, Review, Rollback, Usage, UseTool
from .scripted import FunctionBrain, FunctionMactBrain, ScriptedBrain

#: Brain kinds. The model brain is imported on first use (it pulls in the HTTP client).
BRAINS: Registry[Restorer] = Registry("brain", group="docintent.brains")
BRAINS.register(
    "offline",
    "docintent.brains.offline:OfflineReader",
    description="reads with OCR and decides with measured image signals; no model, no network",
)
BRAINS.register("openai", "docintent.brains.mllm:ModelBrain", description="any OpenAI-compatible multimodal endpoint")
BRAINS.register(
    "scripted", "docintent.brains.scripted:ScriptedBrain", description="replays scripted decisions (a test double)"
)


def get_brain(kind: str = "offline", **options: Any) -> Restorer:
    """Build the brain of ``kind`` ("offline" default, "openai", "scripted", or a plug-in) with ``options``;
    an unknown kind lists the valid ones, an unknown or ill-typed option names the valid options."""
    return BRAINS.get(kind, **options)


__all__ = [
    "BRAINS",
    "TASKS",
    "Answer",
    "Brain",
    "Change",
    "Decision",
    "Diagnosis",
    "FunctionBrain",
    "FunctionMactBrain",
    "Keep",
    "MactRoles",
    "Restorer",
    "Review",
    "Rollback",
    "ScriptedBrain",
    "State",
    "Usage",
    "UseTool",
    "get_brain",
    "plays_mact",
    "require_mact",
]
