"""On-disk and in-memory cache of OCR results, keyed by engine settings + page hash + region + scale."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections import OrderedDict
from pathlib import Path

from ..page import Box
from .base import OcrResult


class OcrCache:
    """JSON files under ``root/ab/abcdef….json`` plus a small in-memory LRU.

    Writes are atomic (temp file + rename), so concurrent worker processes can share one cache directory.
    """

    def __init__(self, root: Path | None, memory_items: int = 256) -> None:
        self.root = Path(root) if root else None
        self.memory_items = memory_items
        self._memory: OrderedDict[str, OcrResult] = OrderedDict()

    @staticmethod
    def key(engine_key: str, page_hash: str, region: Box | None, min_side: int) -> str:
        region_text = "full" if region is None else ",".join(f"{v:.5f}" for v in region.as_tuple())
        raw = f"{engine_key}|{page_hash}|{region_text}|{min_side}"
        return hashlib.blake2b(raw.encode(), digest_size=16).hexdigest()

    def _path(self, key: str) -> Path:
        assert self.root is not None
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str) -> OcrResult | None:
        hit = self._memory.get(key)
        if hit is not None:
            self._memory.move_to_end(key)
            return hit
        if self.root is None:
            return None
        path = self._path(key)
        try:
            with open(path, encoding="utf-8") as fh:
                result = OcrResult.from_dict(json.load(fh))
        except (OSError, ValueError, KeyError, TypeError):
            return None  # absent or a damaged entry: read again
        self._remember(key, result)
        return result

    def put(self, key: str, result: OcrResult) -> None:
        self._remember(key, result)
        if self.root is None:
            return
        path = self._path(key)
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump(result.to_dict(), fh)
            os.replace(tmp, path)
        except OSError:
            pass  # a read-only or full disk only costs speed, never the result

    def _remember(self, key: str, result: OcrResult) -> None:
        self._memory[key] = result
        self._memory.move_to_end(key)
        while len(self._memory) > self.memory_items:
            self._memory.popitem(last=False)
