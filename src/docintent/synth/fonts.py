"""Fonts for synthetic documents: free system fonts when installed, matplotlib's bundled fonts always.

Debian's ``fonts-liberation``, ``fonts-freefont-ttf`` and ``fonts-urw-base35`` add Arial-, Times-, Courier-,
Helvetica- and Palatino-like faces. They are optional: a plain ``pip install`` still has the DejaVu and STIX
faces that ship inside matplotlib, so the generator always has sans, serif and monospace faces to draw from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from PIL import ImageFont

_SYSTEM_DIRS = ("/usr/share/fonts/truetype", "/usr/share/fonts/opentype", "/usr/local/share/fonts")

# (face name, style, regular file, bold file); files are looked up under the font directories above.
_SYSTEM_FACES = (
    ("Liberation Sans", "sans", "liberation/LiberationSans-Regular.ttf", "liberation/LiberationSans-Bold.ttf"),
    ("Liberation Serif", "serif", "liberation/LiberationSerif-Regular.ttf", "liberation/LiberationSerif-Bold.ttf"),
    ("Liberation Mono", "mono", "liberation/LiberationMono-Regular.ttf", "liberation/LiberationMono-Bold.ttf"),
    ("FreeSans", "sans", "freefont/FreeSans.ttf", "freefont/FreeSansBold.ttf"),
    ("FreeSerif", "serif", "freefont/FreeSerif.ttf", "freefont/FreeSerifBold.ttf"),
    ("FreeMono", "mono", "freefont/FreeMono.ttf", "freefont/FreeMonoBold.ttf"),
    ("Nimbus Sans", "sans", "urw-base35/NimbusSans-Regular.otf", "urw-base35/NimbusSans-Bold.otf"),
    ("Nimbus Roman", "serif", "urw-base35/NimbusRoman-Regular.otf", "urw-base35/NimbusRoman-Bold.otf"),
    ("P052", "serif", "urw-base35/P052-Roman.otf", "urw-base35/P052-Bold.otf"),
    ("URW Gothic", "sans", "urw-base35/URWGothic-Book.otf", "urw-base35/URWGothic-Demi.otf"),
)

_BUNDLED_FACES = (
    ("DejaVu Sans", "sans", "DejaVuSans.ttf", "DejaVuSans-Bold.ttf"),
    ("DejaVu Serif", "serif", "DejaVuSerif.ttf", "DejaVuSerif-Bold.ttf"),
    ("DejaVu Sans Mono", "mono", "DejaVuSansMono.ttf", "DejaVuSansMono-Bold.ttf"),
    ("STIX General", "serif", "STIXGeneral.ttf", "STIXGeneralBol.ttf"),
)


@dataclass(frozen=True)
class FontFace:
    """One typeface: a name, a style (``sans``, ``serif`` or ``mono``) and its regular and bold files."""

    name: str
    style: str
    regular: str
    bold: str

    def font(self, size: int, bold: bool = False) -> ImageFont.FreeTypeFont:
        """The face at ``size`` pixels (cached)."""
        return _load(self.bold if bold else self.regular, int(size))


@lru_cache(maxsize=512)
def _load(path: str, size: int) -> ImageFont.FreeTypeFont:
    return ImageFont.truetype(path, size)


def _find(relative: str, dirs: tuple[str, ...]) -> str | None:
    for d in dirs:
        p = Path(d) / relative
        if p.is_file():
            return str(p)
    return None


@lru_cache(maxsize=4)
def available_faces(include_system: bool = True) -> tuple[FontFace, ...]:
    """Every usable face: installed system faces (if ``include_system``) then matplotlib's bundled faces.

    A system face is used only when both its regular and bold files exist. Setting the environment variable
    ``DOCINTENT_SYNTH_BUNDLED_FONTS_ONLY=1`` ignores system fonts, which makes output independent of the
    machine's font packages.
    """
    import matplotlib

    faces: list[FontFace] = []
    if include_system and os.environ.get("DOCINTENT_SYNTH_BUNDLED_FONTS_ONLY", "") not in ("1", "true", "yes"):
        for name, style, reg, bold in _SYSTEM_FACES:
            r, b = _find(reg, _SYSTEM_DIRS), _find(bold, _SYSTEM_DIRS)
            if r and b:
                faces.append(FontFace(name, style, r, b))
    bundled = (str(Path(matplotlib.get_data_path()) / "fonts" / "ttf"),)
    for name, style, reg, bold in _BUNDLED_FACES:
        r, b = _find(reg, bundled), _find(bold, bundled)
        if r and b:
            faces.append(FontFace(name, style, r, b))
    return tuple(faces)


def faces_by_style(style: str | None = None) -> tuple[FontFace, ...]:
    """Faces of one style (``sans``/``serif``/``mono``), or all faces when ``style`` is None."""
    faces = available_faces()
    return faces if style is None else tuple(f for f in faces if f.style == style)
