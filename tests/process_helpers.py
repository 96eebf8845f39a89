"""Slow writers for the tests that start real processes (locks, kills, Ctrl-C).

Run as a script, it starts one of them in its own process::

    python tests/process_helpers.py cli bench ... --brain slow --brain-opt delay=0.3 ...
    python tests/process_helpers.py index INPUT OUT SECONDS_PER_PAGE MARKER_DIR

``cli`` runs the real ``docintent`` command line with one more brain kind, ``slow`` (answers "42" after
``delay`` seconds; registered at import, so spawned workers know it too). ``index`` runs the real index build with
an OCR engine that sleeps per page and leaves a marker file for every page it has read.
"""

from __future__ import annotations

import json
import sys
import time
import zlib
from pathlib import Path

from docintent.brains import BRAINS, Answer, ScriptedBrain


class SlowBrain(ScriptedBrain):
    """A scripted brain that answers "42" after ``delay`` seconds."""

    name = "slow"

    def __init__(self, delay: float = 0.2) -> None:
        super().__init__(final="42")
        self.delay = delay

    def answer(self, state):
        time.sleep(self.delay)
        return Answer("42")

    def decide(self, state):
        return self.answer(state)


if "slow" not in BRAINS:
    BRAINS.register("slow", "process_helpers:SlowBrain", origin="tests")


class SlowOcr:
    """An OCR stand-in: sleeps, records a marker per page read, returns a fixed text."""

    name = "slow"

    def __init__(self, seconds: float, markers: Path) -> None:
        self.seconds = seconds
        self.markers = Path(markers)
        self.count = 0

    def read(self, page, region=None):
        time.sleep(self.seconds)
        self.count += 1
        (self.markers / f"read_{self.count:04d}").touch()

        class _Result:
            text = f"page text {page.hash} invoice total"

        return _Result()


def png_bytes(width: int = 24, height: int = 16, value: int = 128) -> bytes:
    """A grey PNG written by hand."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    raw = b"".join(b"\0" + bytes([value]) * width for _ in range(height))
    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 0, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def make_dataset(folder: Path, count: int, *, broken: tuple[int, ...] = ()) -> Path:
    """``count`` samples over tiny distinct PNGs in ``folder``; the ones in ``broken`` are truncated files."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(count):
        data = png_bytes(value=(10 + 7 * i) % 250)
        (folder / f"img{i}.png").write_bytes(data[:30] if i in broken else data)
        rows.append({"id": f"s{i:03d}", "image": f"img{i}.png", "question": "q?", "answers": ["42"], "task": "doc"})
    path = folder / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def main(argv: list[str]) -> int:
    if argv[0] == "cli":
        from docintent.cli import main as cli_main

        return cli_main(argv[1:])
    if argv[0] == "index":
        from docintent.retrieval import build_index

        source, out, seconds, markers = argv[1], argv[2], float(argv[3]), Path(argv[4])
        report = build_index([source], out, text="ocr", ocr=SlowOcr(seconds, markers), progress=False)
        print(f"pages {report.pages_total} processed {report.pages_processed}")
        return 0
    raise SystemExit(f"unknown helper {argv[0]!r}")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
