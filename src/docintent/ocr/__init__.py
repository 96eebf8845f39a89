"""OCR engines behind one interface, with results cached by page hash + region + engine.

>>> from docintent.ocr import get_engine
>>> engine = get_engine()                     # RapidOCR, models from the wheel
>>> result = engine.read(page)                # doctest: +SKIP
>>> result.lines[0].text, result.lines[0].box # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from ..errors import UnknownComponentError
from ..settings import get_settings
from .base import OcrEngine, OcrLine, OcrResult, OcrWord
from .cache import OcrCache
from .engines import RapidOcrEngine, TesseractEngine
from .orientation import Orientation, detect_orientation
from .session import ReadingSession

ENGINES: dict[str, type[OcrEngine]] = {"rapidocr": RapidOcrEngine, "tesseract": TesseractEngine}

_instances: dict[tuple, OcrEngine] = {}


def get_engine(kind: str | None = None, *, cache: bool | None = None, **options: Any) -> OcrEngine:
    """A shared engine of ``kind`` ("rapidocr" default, or "tesseract"), built once per process and options.

    Results are cached on disk under ``DOCINTENT_CACHE_DIR/ocr`` unless ``cache=False`` or
    ``DOCINTENT_CACHE=0``.
    """
    settings = get_settings()
    kind = kind or settings.ocr_engine
    if kind not in ENGINES:
        raise UnknownComponentError("OCR engine", kind, list(ENGINES))
    use_cache = settings.cache if cache is None else cache
    key = (kind, use_cache, tuple(sorted(options.items())))
    engine = _instances.get(key)
    if engine is None:
        engine = ENGINES[kind](**options)
        engine.cache = OcrCache(settings.cache_dir / "ocr") if use_cache else None
        _instances[key] = engine
    return engine


__all__ = [
    "ENGINES",
    "OcrEngine",
    "OcrLine",
    "OcrResult",
    "OcrWord",
    "Orientation",
    "ReadingSession",
    "detect_orientation",
    "get_engine",
]
