"""Query-driven zoom and OCR (AgenticOCR's ``image_zoom_and_ocr``): read only the region a question needs.

The model names a region (``bbox`` in AgenticOCR's 0-1000 integers or as [0, 1] floats), how to turn it upright
(``angle``, counter-clockwise, applied after cropping) and what it holds (``type``). The tool crops, rotates,
upscales small crops, recognises the content and returns :class:`ZoomEvidence` whose every box refers to the
page that was inspected, so evidence can be drawn on the page it came from.

>>> from docintent.tools import get_tool
>>> from docintent.page import Page
>>> import numpy as np
>>> page = Page.from_array(np.full((100, 200), 255, dtype=np.uint8))
>>> ev = get_tool("zoom").inspect(page, label="corner", bbox=[0, 0, 500, 500], type="image")
>>> ev.crop.size, ev.box.to_1000()
((100, 50), (0, 0, 500, 500))
"""

from __future__ import annotations

import time
from dataclasses import KW_ONLY, dataclass, field
from typing import Any

import numpy as np

from ..errors import InvalidBoxError, MissingDependencyError, ToolError
from ..layout.table import reconstruct_table
from ..ocr import get_engine
from ..page import Box, Page
from .base import InspectionTool
from .registry import register

KINDS = ("region", "text", "table", "equation", "image")
#: Crops whose shorter side is below this many pixels are upscaled (at most 4x) before recognition.
MIN_SIDE = 160
#: Boxes narrower or lower than this many pixels on the page carry no readable content.
MIN_BOX_PX = 4

EQUATION_NOTE = "no formula recognition model is available offline; this is plain OCR text of the equation region"


def unrotate_box(box: Box, quarter_turns_ccw: int) -> Box:
    """Map a box found on an image turned ``quarter_turns_ccw`` x 90 degrees counter-clockwise back to the
    unturned image (all coordinates as [0, 1] fractions)."""
    k = quarter_turns_ccw % 4
    corners = [(box.x0, box.y0), (box.x1, box.y1)]
    if k == 0:
        pts = corners
    elif k == 1:  # turned CCW: (x, y) went to (y, 1 - x)
        pts = [(1 - v, u) for u, v in corners]
    elif k == 2:
        pts = [(1 - u, 1 - v) for u, v in corners]
    else:  # turned CW: (x, y) went to (1 - y, x)
        pts = [(v, 1 - u) for u, v in corners]
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return Box.clamped(min(xs), min(ys), max(xs), max(ys))


@dataclass(frozen=True)
class EvidenceLine:
    """One recognised text line; ``box`` on the inspected page."""

    text: str
    box: Box
    confidence: float


@dataclass(frozen=True)
class EvidenceBlock:
    """One layout block (region mode): its ``kind`` (text, title, table, figure, equation, ...), box on the
    inspected page, recognised lines and, for tables, the reconstructed table as Markdown."""

    kind: str
    box: Box
    score: float
    _: KW_ONLY
    lines: tuple[EvidenceLine, ...] = ()
    markdown: str = ""

    @property
    def text(self) -> str:
        return self.markdown or "\n".join(l.text for l in self.lines)


@dataclass(frozen=True)
class ZoomEvidence:
    """What one zoom found: the crop (upright), its box on the inspected page, and the recognition result."""

    label: str
    kind: str
    box: Box
    _: KW_ONLY
    angle: int
    crop: Page
    page_hash: str
    lines: tuple[EvidenceLine, ...] = ()
    blocks: tuple[EvidenceBlock, ...] = ()
    table: Any = None  # docintent.layout.table.Table in table mode
    markdown: str = ""
    html: str = ""
    note: str = ""
    seconds: float = 0.0
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def text(self) -> str:
        """The recognised content as text: the table's Markdown, the blocks, or the lines."""
        if self.markdown:
            return self.markdown
        if self.blocks:
            return "\n\n".join(f"[{b.kind}] {b.text}" for b in self.blocks if b.text)
        return "\n".join(l.text for l in self.lines)

    def summary(self, limit: int = 300) -> str:
        """One short paragraph for the trace: label, kind, box (0-1000), what was read."""
        head = f"{self.kind} {self.label!r} at {list(self.box.to_1000())}"
        if self.angle:
            head += f" turned {self.angle} ccw"
        if self.kind == "table" and self.table is not None:
            head += f": table {self.table.n_rows}x{self.table.n_cols}"
        elif self.blocks:
            head += f": {len(self.blocks)} blocks ({', '.join(b.kind for b in self.blocks[:6])})"
        elif self.kind != "image":
            head += f": {len(self.lines)} lines"
        body = " ".join(self.text.split())
        if len(body) > limit:
            body = body[: limit - 3] + "..."
        note = f" ({self.note})" if self.note else ""
        return f"{head}{note}" + (f" | {body}" if body else "")

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form (no pixels; the crop is named by its hash)."""
        return {
            "label": self.label,
            "type": self.kind,
            "bbox": list(self.box.to_1000()),
            "angle": self.angle,
            "crop": self.crop.hash,
            "page": self.page_hash,
            "lines": [
                {"text": l.text, "bbox": list(l.box.to_1000()), "confidence": round(l.confidence, 4)}
                for l in self.lines
            ],
            "blocks": [{"type": b.kind, "bbox": list(b.box.to_1000()), "text": b.text} for b in self.blocks],
            "markdown": self.markdown,
            "html": self.html,
            "note": self.note,
            "seconds": round(self.seconds, 3),
        }


@register
class Zoom(InspectionTool):
    """Crop a region, turn it upright, and read it: text lines, a table, layout blocks or an equation."""

    name = "zoom"
    degradation = "inspection"
    description = (
        "image_zoom_and_ocr: look closely at one region of the page and read it. Give the region as bbox "
        "[x0, y0, x1, y1] in 0-1000 page coordinates (or 0-1 fractions), the counter-clockwise angle (0, 90, "
        "180, 270) that makes its text upright, and its type: 'text' for lines of text, 'table' to get the "
        "table's rows and cells, 'region' to split a mixed area into layout blocks first, 'equation', or "
        "'image' to only crop. Use when the answer sits in small, rotated or crowded text. Returns the text "
        "with each line's box on the page."
    )
    parameters = {
        "type": "object",
        "properties": {
            "label": {"type": "string", "description": "what the region holds, in a few words"},
            "bbox": {
                "type": "array",
                "items": {"type": "number"},
                "minItems": 4,
                "maxItems": 4,
                "description": "[x0, y0, x1, y1]: 0-1000 integers, or fractions of the page in [0, 1]",
            },
            "angle": {
                "type": "integer",
                "enum": [0, 90, 180, 270],
                "description": "counter-clockwise turn applied after cropping",
            },
            "type": {"type": "string", "enum": list(KINDS), "description": "what to recognise in the region"},
        },
        "required": ["bbox"],
        "additionalProperties": False,
    }

    def __init__(self, engine: Any = None, min_side: int = MIN_SIDE) -> None:
        self._engine = engine
        self.min_side = min_side
        self._layout: Any = None

    @property
    def engine(self):
        """The OCR engine (the shared default engine unless one was given)."""
        if self._engine is None:
            self._engine = get_engine()
        return self._engine

    # -- the two entry points --------------------------------------------------------------------------

    def apply(self, page: Page, bbox: Any = None, angle: int = 0, label: str = "", type: str = "text") -> Page:
        """The upright crop as a Page whose provenance names the original page and the box."""
        box = self._box(page, bbox)
        return self._crop(page, box, angle, label)

    def inspect(self, page: Page, **args: Any) -> ZoomEvidence:
        """Crop, turn and recognise; see the module docstring. Raises :class:`InvalidBoxError` for a box
        that is malformed, lies outside the page or is too small to hold anything."""
        args = self.check_args(args)
        start = time.perf_counter()
        label = str(args.get("label", ""))
        angle = int(args.get("angle", 0))
        kind = args.get("type", "text")
        box = self._box(page, args.get("bbox"))
        crop = self._crop(page, box, angle, label)
        common = dict(label=label, kind=kind, box=box, angle=angle, crop=crop, page_hash=page.hash)
        if kind == "image":
            return ZoomEvidence(**common, seconds=time.perf_counter() - start)
        if kind == "region":
            blocks, lines = self._region(crop, box, angle)
            return ZoomEvidence(**common, lines=lines, blocks=blocks, seconds=time.perf_counter() - start)
        result = self.engine.read(crop, min_side=self.min_side)
        lines = tuple(self._line(l.text, l.box, l.confidence, box, angle) for l in result.lines)
        if kind == "table":
            # Reconstruct in the upright crop's frame (rows run horizontally there), then report page boxes.
            table = reconstruct_table(result, page_size=crop.size)
            return ZoomEvidence(
                **common,
                lines=lines,
                table=table,
                markdown=table.to_markdown(),
                html=table.to_html(),
                seconds=time.perf_counter() - start,
                meta={
                    "cell_boxes": [[list(self.to_page(c.box, box, angle).to_1000()) for c in row] for row in table.rows]
                },
            )
        note = EQUATION_NOTE if kind == "equation" else ""
        return ZoomEvidence(**common, lines=lines, note=note, seconds=time.perf_counter() - start)

    # -- helpers -----------------------------------------------------------------------------------------

    @staticmethod
    def to_page(crop_box: Box, region: Box, angle: int) -> Box:
        """Map a box on the upright crop back to the inspected page."""
        return unrotate_box(crop_box, angle // 90).within(region)

    def _line(self, text: str, crop_box: Box, conf: float, region: Box, angle: int) -> EvidenceLine:
        return EvidenceLine(text, self.to_page(crop_box, region, angle), float(conf))

    def _box(self, page: Page, bbox: Any) -> Box:
        if bbox is None:
            raise InvalidBoxError("bbox", "zoom needs a bbox [x0, y0, x1, y1] (0-1000 or 0-1)")
        if not isinstance(bbox, (list, tuple)) or len(bbox) != 4:
            raise InvalidBoxError(bbox, "a zoom bbox needs exactly 4 numbers [x0, y0, x1, y1]")
        try:
            vals = [float(v) for v in bbox]
        except (TypeError, ValueError):
            raise InvalidBoxError(bbox, "bbox coordinates must be numbers") from None
        if not all(np.isfinite(vals)):
            raise InvalidBoxError(bbox, "bbox coordinates must be finite numbers")
        # Models sometimes swap corners or run off the page; the region they mean is still clear.
        box = Box.from_model(vals)
        x0, y0, x1, y1 = box.to_pixels(page.width, page.height)
        if x1 - x0 < MIN_BOX_PX or y1 - y0 < MIN_BOX_PX:
            raise InvalidBoxError(
                bbox,
                f"region is {x1 - x0}x{y1 - y0} px on a {page.width}x{page.height} page; "
                f"need at least {MIN_BOX_PX}x{MIN_BOX_PX} px",
            )
        # Snap to whole pixels so boxes mapped back from the crop match the page exactly.
        return Box(x0 / page.width, y0 / page.height, x1 / page.width, y1 / page.height)

    @staticmethod
    def _crop(page: Page, box: Box, angle: int, label: str) -> Page:
        if angle % 90 or angle not in (0, 90, 180, 270):
            raise ToolError("zoom", f"angle must be 0, 90, 180 or 270 (counter-clockwise), got {angle!r}")
        x0, y0, x1, y1 = box.to_pixels(page.width, page.height)
        pixels = np.rot90(page.pixels[y0:y1, x0:x1], angle // 90)  # positive k turns counter-clockwise
        return page.derive(
            np.ascontiguousarray(pixels),
            f"zoom{list(box.to_1000())}@{angle}",
            crop_of=page.hash,
            crop_box=box.as_tuple(),
            crop_angle=angle,
            crop_label=label,
        )

    def _layout_engine(self):
        if self._layout is None:
            try:
                from rapid_layout import RapidLayout
            except ImportError as err:
                raise MissingDependencyError(
                    "rapid-layout", "layout", "zoom with type='region' (layout analysis)"
                ) from err
            import logging

            # rapid-layout logs every model load at INFO through its own per-module loggers.
            for name in list(logging.root.manager.loggerDict):
                if name.startswith("rapid_layout"):
                    logging.getLogger(name).setLevel(logging.WARNING)
            self._layout = RapidLayout()
        return self._layout

    def _region(
        self, crop: Page, region: Box, angle: int
    ) -> tuple[tuple[EvidenceBlock, ...], tuple[EvidenceLine, ...]]:
        """Layout blocks first, then the crop's OCR lines shared out to the block holding each line's centre;
        table blocks are reconstructed as tables. Lines in no block form a trailing 'text' block."""
        import cv2

        out = self._layout_engine()(cv2.cvtColor(crop.pixels, cv2.COLOR_RGB2BGR))
        result = self.engine.read(crop, min_side=self.min_side)
        raw_blocks = []
        if out.boxes is not None:
            for (bx0, by0, bx1, by1), name, score in zip(out.boxes, out.class_names, out.scores):
                try:
                    raw_blocks.append(
                        (str(name), Box.from_pixels((bx0, by0, bx1, by1), crop.width, crop.height), float(score))
                    )
                except InvalidBoxError:
                    continue  # a degenerate detection holds nothing to read
        # The layout model often proposes the same area twice under two labels: keep the more confident one.
        raw_blocks.sort(key=lambda b: -b[2])
        kept: list[tuple[str, Box, float]] = []
        for block in raw_blocks:
            if all(block[1].intersection_area(k[1]) < 0.5 * min(block[1].area, k[1].area) for k in kept):
                kept.append(block)
        raw_blocks = sorted(kept, key=lambda b: (round(b[1].y0, 2), b[1].x0))
        assigned: list[list] = [[] for _ in raw_blocks]
        loose = []
        for line in result.lines:
            cx, cy = line.box.center
            inside = [i for i, (_, b, _) in enumerate(raw_blocks) if b.x0 <= cx <= b.x1 and b.y0 <= cy <= b.y1]
            if inside:
                # the smallest block holding the line is the most specific one
                assigned[min(inside, key=lambda i: raw_blocks[i][1].area)].append(line)
            else:
                loose.append(line)
        blocks = []
        for (name, b, score), members in zip(raw_blocks, assigned):
            lines = tuple(self._line(l.text, l.box, l.confidence, region, angle) for l in members)
            markdown = ""
            if name == "table" and members:
                markdown = reconstruct_table(members, page_size=crop.size).to_markdown()
            blocks.append(EvidenceBlock(name, self.to_page(b, region, angle), score, lines=lines, markdown=markdown))
        if loose:
            lines = tuple(self._line(l.text, l.box, l.confidence, region, angle) for l in loose)
            union = lines[0].box
            for l in lines[1:]:
                union = union.union(l.box)
            blocks.append(EvidenceBlock("text", union, 0.0, lines=lines))
        all_lines = tuple(self._line(l.text, l.box, l.confidence, region, angle) for l in result.lines)
        return tuple(blocks), all_lines
