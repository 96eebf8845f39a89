"""The one interface every restoration or inspection tool implements.

A tool is a class with a ``name``, the ``degradation`` it targets, a ``description`` written for a model,
a JSON schema of its arguments (``parameters``), and ``run(page, **args) -> Page``. Subclasses are checked
when they are defined, so a malformed tool fails at import, not in the middle of a benchmark.

>>> from docintent.tools import get_tool
>>> from docintent.page import Page
>>> import numpy as np
>>> page = Page.from_array(np.arange(6, dtype=np.uint8).reshape(2, 3))
>>> get_tool("rotate_90")(page).size
(2, 3)
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from typing import Any, ClassVar, Protocol, runtime_checkable

from ..errors import ToolError
from ..page import Box, Page
from ..vocabulary import INSPECTION

_NAME_RE = re.compile(r"^[a-z][a-z0-9_]*$")


class Tool(ABC):
    """Base class of restoration tools. Instances are stateless and deterministic.

    Subclasses set the class attributes and implement :meth:`apply`; callers use :meth:`run` (or call the
    tool), which validates arguments, never mutates the input and returns a new :class:`Page` whose
    provenance records the tool.
    """

    name: ClassVar[str]
    degradation: ClassVar[str]
    description: ClassVar[str]
    parameters: ClassVar[dict[str, Any]] = {"type": "object", "properties": {}, "additionalProperties": False}
    #: Set ``abstract = True`` in a shared intermediate base class to skip the definition checks.
    abstract: ClassVar[bool] = False
    #: True for tools that only rotate/flip pixels (no resampling).
    lossless: ClassVar[bool] = False
    #: True for tools that move content (rotation, dewarping): a region found on the page before them does not
    #: lie at the same place after them, and their effect is judged on the whole page.
    geometric: ClassVar[bool] = False
    #: Seconds one run may be expected to take on a 2048-px page on an idle machine. Each run's trace step
    #: records it beside the seconds observed, to compare with; it is never a limit, since nothing a tool
    #: decides may depend on time (a deadline would make its output depend on the machine's load).
    budget_s: ClassVar[float | None] = None
    #: The most of each kind of work one run does, whatever the page shows (candidates tried, peaks notched,
    #: the side the tool analyses the page at): each run's ``work`` (``page.meta["work"]``, in its trace step)
    #: stays within these.
    work_bounds: ClassVar[dict[str, int]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.__dict__.get("abstract", False):
            return  # an intermediate base that fills in shared behaviour, not a tool itself
        for attr in ("name", "degradation", "description"):
            if not isinstance(getattr(cls, attr, None), str) or not getattr(cls, attr):
                raise TypeError(f"tool class {cls.__name__} must define a non-empty str {attr!r}")
        if not _NAME_RE.match(cls.name):
            raise TypeError(f"tool name {cls.name!r} must be lower_snake_case")
        # Whether the family exists is checked when the tool is registered: plug-in families load then too.
        schema = cls.parameters
        if not (
            isinstance(schema, dict)
            and schema.get("type") == "object"
            and isinstance(schema.get("properties", {}), dict)
        ):
            raise TypeError(f"tool {cls.name!r}: parameters must be a JSON schema of type 'object'")

    def setup(self) -> None:
        """Load expensive resources (models, tables). Called once, lazily, before the first run."""

    def map_region(self, region: Box, before: Page, after: Page) -> Box | None:
        """Where ``region`` of ``before`` lies on ``after`` (this tool's output), or None when the tool cannot
        say (the region must then be found again by reading ``after``). A tool that moves no content leaves
        every region where it was; a geometric tool that knows its transform (a rotation) maps it."""
        return None if self.geometric else region

    def unmap_region(self, region: Box, before: Page, after: Page) -> Box | None:
        """Where ``region`` of ``after`` (this tool's output) lies on ``before``, or None when the tool cannot
        say. Used to place an answer read on a restored page on the page as it was captured."""
        return None if self.geometric else region

    @abstractmethod
    def apply(self, page: Page, **args: Any) -> Page:
        """Return the restored page. ``args`` are already checked against :attr:`parameters`."""

    def run(self, page: Page, **args: Any) -> Page:
        """Run the tool on ``page`` and return a new Page; raise :class:`ToolError` on bad arguments."""
        if not getattr(self, "_is_set_up", False):
            self.setup()
            self._is_set_up = True
        checked = self.check_args(args)
        result = self.apply(page, **checked)
        if not isinstance(result, Page):
            raise ToolError(self.name, f"returned {type(result).__name__}, expected a Page")
        return result

    __call__ = run

    def check_args(self, args: dict[str, Any]) -> dict[str, Any]:
        """Validate ``args`` against the schema's properties, required list and simple types/enums."""
        props: dict[str, Any] = self.parameters.get("properties", {})
        unknown = set(args) - set(props)
        if unknown and self.parameters.get("additionalProperties", False) is False:
            raise ToolError(self.name, f"unknown argument(s) {sorted(unknown)}; accepted: {sorted(props) or 'none'}")
        for req in self.parameters.get("required", []):
            if req not in args:
                raise ToolError(self.name, f"missing required argument {req!r}")
        out = {}
        for key, value in args.items():
            spec = props.get(key, {})
            if "enum" in spec and value not in spec["enum"]:
                raise ToolError(self.name, f"argument {key!r} must be one of {spec['enum']}, got {value!r}")
            kind = spec.get("type")
            if (
                kind == "number"
                and not isinstance(value, (int, float))
                or kind == "integer"
                and not isinstance(value, int)
            ):
                raise ToolError(self.name, f"argument {key!r} must be a {kind}, got {value!r}")
            if kind in ("number", "integer"):
                if "minimum" in spec and value < spec["minimum"] or "maximum" in spec and value > spec["maximum"]:
                    raise ToolError(
                        self.name, f"argument {key!r}={value!r} outside [{spec.get('minimum')}, {spec.get('maximum')}]"
                    )
            out[key] = value
        return out

    def spec(self) -> dict[str, Any]:
        """The OpenAI function-calling description of this tool."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.parameters},
        }

    def __repr__(self) -> str:
        return f"<Tool {self.name} ({self.degradation})>"


@runtime_checkable
class Evidence(Protocol):
    """What an inspection tool found: the hash of the page it inspected, the box it read on that page, and a
    one-line summary for traces and a model's context."""

    @property
    def page_hash(self) -> str: ...

    @property
    def box(self) -> Box: ...

    def summary(self) -> str: ...


class InspectionTool(Tool):
    """A tool that changes no page: :meth:`inspect` returns evidence (text, a table, a crop) with its box.

    Strategies run inspection tools without a Phase B review, since no page state changes.
    """

    abstract = True
    degradation = INSPECTION

    @abstractmethod
    def inspect(self, page: Page, **args: Any) -> Any:
        """Evidence read from ``page`` (``args`` unchecked: call :meth:`check_args` first)."""
