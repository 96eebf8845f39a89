"""What a reading strategy returns: the answer text, its confidence, where on the page it was read, and how."""

from __future__ import annotations

from dataclasses import dataclass

from ..page import Box


@dataclass
class Solution:
    """An answer read from a page: ``region`` is the evidence box, ``source`` names the rule that found it."""

    text: str
    confidence: float
    region: Box
    source: str
