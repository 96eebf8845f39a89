"""Pages, brains, benchmark runs and a live server shared by the service, browser and MCP tests."""

from __future__ import annotations

import contextlib
import io
import json
import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from conftest import render_text_page

LINES = ["Invoice number: INV-2041", "Date: 12 March 2024", "Total amount due: $1,250.00"]
ANSWER = "$1,250.00"


def damaged_page(width: int = 640) -> np.ndarray:
    """A small invoice photographed under a shadow falling across it and slightly out of focus."""
    import cv2

    clean = render_text_page(LINES, size=24, width=width)
    shade = np.linspace(1.0, 0.42, clean.shape[1])[None, :, None]
    dark = (clean.astype(np.float64) * shade).astype(np.uint8)
    return cv2.GaussianBlur(dark, (3, 3), 0.8)


def png_bytes(array: np.ndarray) -> bytes:
    from PIL import Image

    buf = io.BytesIO()
    Image.fromarray(array).save(buf, "PNG")
    return buf.getvalue()


def scripted_factory(answer: str = ANSWER, delay: float = 0.0, gate: threading.Event | None = None):
    """Brains that run deshadowing (kept), then deblurring (rolled back), then answer ``answer``.

    ``delay`` seconds pass in every decision; ``gate`` (when given) must be set before the first decision.
    """
    from docintent.brains import Answer, FunctionBrain, Keep, Rollback, UseTool

    def make():
        decisions = [
            UseTool("deshadowing", "a shadow darkens the right half"),
            UseTool("deblurring", "the strokes are soft"),
        ]
        reviews = [Keep("the total reads more clearly"), Rollback("sharpening added ringing around the digits")]

        def decide(state):
            if gate is not None:
                gate.wait(30)
            time.sleep(delay)
            return decisions.pop(0) if decisions else Answer(answer, 0.9, "read the total line")

        return FunctionBrain(
            decide=decide,
            review=lambda state, change: reviews.pop(0),
            answer=lambda state: Answer(answer, 0.9, "read the total line"),
        )

    return make


# strategy -> per sample (score, tools used, seconds)
FIGURES = {
    "none": [(1, 0, 1.0), (0, 0, 1.5), (0, 0, 2.0), (1, 0, 1.0)],
    "pipeline-fixed": [(1, 5, 4.0), (0, 5, 4.0), (1, 5, 4.0), (0, 5, 4.0)],
    "docintent": [(1, 1, 2.0), (1, 2, 3.0), (0, 1, 2.0), (1, 0, 1.0)],
    "agres": [(1, 2, 2.0), (0, 2, 2.0), (0, 3, 2.0), (1, 1, 1.0)],
}
SAMPLES = [("s1", "doc", ["shadow"]), ("s2", "doc", ["blur", "shadow"]), ("s3", "chart", ["warp"]), ("s4", "chart", [])]


def make_benchmark_run(root: Path, name: str = "offline-synth") -> Path:
    """A benchmark run directory as ``docintent bench`` writes it (results.jsonl and manifest.json)."""
    import cv2

    run = root / name
    run.mkdir(parents=True)
    rows = []
    for strategy, figures in FIGURES.items():
        for (sid, task, degradations), (score, tools, seconds) in zip(SAMPLES, figures):
            image = run / "images" / f"{sid}.png"
            if not image.exists():
                image.parent.mkdir(parents=True, exist_ok=True)
                cv2.imwrite(str(image), damaged_page(320))
            rows.append(
                {
                    "sample": {
                        "id": sid,
                        "image": str(image),
                        "question": f"What is the total of {sid}?",
                        "answers": ["1250"],
                        "task": task,
                        "subset": "DocVQA" if task == "doc" else "ChartQA",
                        "group": sid,
                        "capture": 1,
                        "degradations": degradations,
                        "meta": {},
                    },
                    "strategy": strategy,
                    "brain": "offline",
                    "answer": "1250" if score else "125",
                    "score": float(score),
                    "correct": bool(score),
                    "seconds": seconds,
                    "error": None,
                    "result": {"tools_used": tools, "prompt_tokens": 0, "completion_tokens": 0, "trace": []},
                }
            )
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (run / "manifest.json").write_text(json.dumps({"brain": "offline", "seed": 7, "config": {"dataset": "synth:test"}}))
    return run


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def live_server(config) -> Iterator[str]:
    """Run the service with uvicorn on a free local port in a thread; yields its base URL."""
    import uvicorn

    from docintent.server import create_app

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
