"""ONNX Runtime session options shared by every network docintent runs (detection, recognition, orientation).

ONNX Runtime's thread pool spins: a thread that runs out of work busy-waits for the next operator instead of
sleeping. On an idle machine that saves a few microseconds per operator; on a busy or shared one the spinning
threads take CPU from the threads that have work, and the CPU a page costs grows with the machine's load
(``benchmarks/first_page.py``: one page with two threads at load 6 took 8.7 CPU-s spinning and 5.8 sleeping, the
same lines read). docintent's sessions sleep unless the ``spin`` setting (``DOCINTENT_SPIN=1``) asks otherwise.
Results do not depend on it.
"""

from __future__ import annotations

import functools
from typing import Any

from ..settings import get_settings

#: The session config entries that stop a session's threads from spinning.
NO_SPIN = {"session.intra_op.allow_spinning": "0", "session.inter_op.allow_spinning": "0"}


def configure(options: Any) -> Any:
    """``options`` (an ``onnxruntime.SessionOptions``) with the threads set by the ``threads`` setting and their
    spinning by ``spin``; returned for chaining."""
    threads = get_settings().threads
    if threads:
        options.intra_op_num_threads = threads
    return _spinning(options)


def _spinning(options: Any) -> Any:
    """``options`` with its threads' spinning set by the ``spin`` setting (off: :data:`NO_SPIN`)."""
    if not get_settings().spin:
        for key, value in NO_SPIN.items():
            options.add_session_config_entry(key, value)
    return options


def configure_rapidocr() -> None:
    """Make RapidOCR's sessions (built lazily, inside the library, on first use) take :func:`configure`'s
    spinning rule: its session-options builder is wrapped once per process. A RapidOCR without that builder is
    left as it is (its sessions then spin, as before)."""
    try:
        from rapidocr.inference_engine.onnxruntime import main as ort_main
    except ImportError:  # pragma: no cover - core dependency
        return
    session = getattr(ort_main, "OrtInferSession", None)
    builder = getattr(session, "_init_sess_opts", None)
    if builder is None or getattr(builder, "_docintent", False):
        return

    @functools.wraps(builder)
    def build(cfg: Any) -> Any:
        return _spinning(builder(cfg))

    build._docintent = True  # type: ignore[attr-defined]
    session._init_sess_opts = staticmethod(build)  # type: ignore[union-attr]


__all__ = ["NO_SPIN", "configure", "configure_rapidocr"]
