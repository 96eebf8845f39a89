"""The one Sample schema every dataset loader produces."""

from __future__ import annotations

from dataclasses import KW_ONLY, asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Sample:
    """One question on one captured image.

    ``task``: "doc" | "chart" | "table" (the metric family). ``subset``: finer split used by metrics and
    reports (WildDoc: "DocVQA", "ChartQA", "fintabnetqa", "vtabfact", "vwtq", "vwtq_syn"; synthetic sets:
    the document kind). ``group``: the id shared by the 4 captures of one question (consistency).
    ``degradations``: the recorded capture degradations: ground truth for analysis only, never shown to a brain.
    """

    id: str
    image: str
    question: str
    _: KW_ONLY
    answers: tuple[str, ...]
    task: str
    subset: str
    group: str
    capture: int = 1
    degradations: tuple[str, ...] = ()
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["answers"] = list(self.answers)
        d["degradations"] = list(self.degradations)
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Sample:
        return cls(
            id=str(d["id"]),
            image=str(d["image"]),
            question=str(d["question"]),
            answers=tuple(str(a) for a in d["answers"]),
            task=str(d["task"]),
            subset=str(d.get("subset", d["task"])),
            group=str(d.get("group", d["id"])),
            capture=int(d.get("capture", 1)),
            degradations=tuple(d.get("degradations", ())),
            meta=dict(d.get("meta", {})),
        )
