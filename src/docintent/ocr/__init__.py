"""OCR engines behind one interface, with results cached by page hash + region + engine.

>>> from docintent.ocr import get_engine
>>> engine = get_engine()                     # RapidOCR, models from the wheel
>>> result = engine.read(page)                # doctest: +SKIP
>>> result.lines[0].text, result.lines[0].box # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from ..registry import Registry
from ..settings import get_settings
from .base import OcrEngine, OcrLine, OcrResult, OcrWord
from .cache import OcrCache
from .engines import RapidOcrEngine, TesseractEngine
from .orientation import Orientation, detect_orientation
from .session import ReadingSession

#: OCR engine kinds; plug-in engines join through the ``docintent.ocr_engines`` entry points.
ENGINES: Registry[OcrEngine] = Registry("OCR engine", group="docintent.ocr_engines")
ENGINES.register("rapidocr", RapidOcrEngine, description="PP-OCR detection + recognition from the rapidocr wheel")
ENGINES.register("tesseract", TesseractEngine, description="Tesseract 5 through tesserocr (docintent[tesseract])")

_instances: dict[tuple, OcrEngine] = {}


def get_engine(kind: str | None = None, *, cache: bool | None = None, **options: Any) -> OcrEngine:
    """A shared engine of ``kind`` ("rapidocr" default, or "tesseract"), built once per process and options.

    Results are cached on disk under ``DOCINTENT_CACHE_DIR/ocr`` unless ``cache=False`` or
    ``DOCINTENT_CACHE=0``.
    """
    settings = get_settings()
    kind = kind or settings.ocr_engine
    ENGINES.validate(kind, options)  # an unknown kind or option is refused before anything loads
    use_cache = settings.cache if cache is None else cache
    key = (kind, use_cache, tuple(sorted(options.items())))
    engine = _instances.get(key)
    if engine is None:
        engine = ENGINES.get(kind, **options)
        engine.cache = OcrCache(settings.cache_dir / "ocr") if use_cache else None
        _instances[key] = engine
    return engine


def forget_engines() -> None:
    """Forget the shared engines, so the next :func:`get_engine` builds them afresh with the settings of then (a
    new cache folder, caching switched off)."""
    _instances.clear()


__all__ = [
    "ENGINES",
    "OcrEngine",
    "OcrLine",
    "OcrResult",
    "OcrWord",
    "Orientation",
    "ReadingSession",
    "detect_orientation",
    "forget_engines",
    "get_engine",
]
