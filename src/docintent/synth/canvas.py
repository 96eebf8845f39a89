"""A small drawing surface for text documents: a white page, typeset text, rules and boxes."""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from .fonts import FontFace


class Canvas:
    """A white page of ``width`` x ``height`` pixels drawn with PIL, text set in one face at a time.

    >>> from docintent.synth.fonts import available_faces
    >>> c = Canvas(400, 200, available_faces()[0])
    >>> c.text(20, 20, "Total: $12.00", 24)[2] > 20
    True
    >>> c.to_array().shape
    (200, 400, 3)
    """

    def __init__(
        self,
        width: int,
        height: int,
        face: FontFace,
        paper: tuple[int, int, int] = (255, 255, 255),
        ink: tuple[int, int, int] = (20, 20, 20),
    ) -> None:
        self.width, self.height = int(width), int(height)
        self.face = face
        self.ink = ink
        self.image = Image.new("RGB", (self.width, self.height), paper)
        self.draw = ImageDraw.Draw(self.image)
        self.bottom = 0  # lowest text pixel drawn so far

    def text_width(self, text: str, size: int, bold: bool = False, face: FontFace | None = None) -> int:
        return int(round((face or self.face).font(size, bold).getlength(text)))

    def text(
        self,
        x: float,
        y: float,
        text: str,
        size: int,
        bold: bool = False,
        face: FontFace | None = None,
        fill: tuple[int, int, int] | None = None,
        anchor: str = "la",
    ) -> tuple[int, int, int, int]:
        """Draw one line with its top-left at (x, y) (or per PIL ``anchor``); returns its pixel box."""
        font = (face or self.face).font(size, bold)
        self.draw.text((x, y), text, font=font, fill=fill or self.ink, anchor=anchor)
        box = self.draw.textbbox((x, y), text, font=font, anchor=anchor)
        self.bottom = max(self.bottom, int(box[3]))
        return tuple(int(v) for v in box)  # type: ignore[return-value]

    def wrap(self, text: str, width: int, size: int, bold: bool = False) -> list[str]:
        """Greedy word wrap of ``text`` into lines no wider than ``width`` pixels."""
        font = self.face.font(size, bold)
        lines: list[str] = []
        line = ""
        for word in text.split():
            trial = f"{line} {word}" if line else word
            if font.getlength(trial) <= width or not line:
                line = trial
            else:
                lines.append(line)
                line = word
        if line:
            lines.append(line)
        return lines

    def paragraph(
        self, x: float, y: float, text: str, width: int, size: int, leading: float = 1.35, bold: bool = False
    ) -> float:
        """Draw wrapped text; returns the y just below the last line."""
        step = size * leading
        for line in self.wrap(text, width, size, bold):
            self.text(x, y, line, size, bold)
            y += step
        return y

    def line(
        self, x0: float, y0: float, x1: float, y1: float, width: int = 2, fill: tuple[int, int, int] | None = None
    ) -> None:
        self.draw.line([(x0, y0), (x1, y1)], fill=fill or self.ink, width=width)

    def rect(
        self,
        x0: float,
        y0: float,
        x1: float,
        y1: float,
        outline: tuple[int, int, int] | None = None,
        fill: tuple[int, int, int] | None = None,
        width: int = 2,
    ) -> None:
        self.draw.rectangle([x0, y0, x1, y1], outline=outline, fill=fill, width=width)

    def to_array(self) -> np.ndarray:
        """The page as an RGB uint8 array."""
        return np.asarray(self.image, dtype=np.uint8).copy()

    def finish(self, margin: int = 20) -> np.ndarray:
        """The page as an array; raises :class:`PageOverflow` when text ran past the bottom edge."""
        if self.bottom > self.image.height - margin:
            raise PageOverflow(f"text reaches y={self.bottom} on a page {self.image.height} px high")
        return self.to_array()


class PageOverflow(Exception):
    """The layout did not fit on the page; the caller draws another layout."""
