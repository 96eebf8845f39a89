"""One writer per folder: an exclusive lock file that names its holder.

A benchmark run folder and an index folder each have one writer at a time. The writer holds an
``fcntl.flock`` on ``FOLDER/.docintent.lock`` for as long as it works, and writes its pid, host, start time
and command into the file, so a second process is refused with a message that names the holder::

    runs/x: in use by pid 4242 on host gpu-3 since 2026-11-30T12:00:00+00:00 (docintent bench ...);
    wait for it to finish or choose another output folder

The kernel drops the lock when the holder exits for any reason (``kill -9`` included), so a crashed writer
never leaves a stale lock behind: the next process simply takes it. The file itself is left in place (removing
it would let two processes lock two different files of the same name).

>>> with folder_lock("runs/x", purpose="benchmark run"):    # doctest: +SKIP
...     ...                                                  # only this process writes runs/x
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import FolderBusyError

LOCK_FILE = ".docintent.lock"


def _holder_text(info: dict[str, Any]) -> str:
    if not info:
        return "another process (it has not written its name yet)"
    parts = [f"pid {info.get('pid', '?')} on host {info.get('host', '?')}"]
    if info.get("started"):
        parts.append(f"since {info['started']}")
    if info.get("command"):
        parts.append(f"({info['command'][:120]})")
    return " ".join(parts)


def read_holder(folder: str | os.PathLike, name: str = LOCK_FILE) -> dict[str, Any]:
    """What the lock file of ``folder`` says about its last holder ({} when there is none or it is unreadable)."""
    try:
        text = (Path(folder) / name).read_text(encoding="utf-8")
        info = json.loads(text) if text.strip() else {}
    except (OSError, ValueError):
        return {}
    return info if isinstance(info, dict) else {}


class FolderLock:
    """An exclusive, process-wide lock on a folder (see the module docstring). Not reentrant.

    ``name``: the lock file's name; one other than the default locks one output of the folder (a results file
    such as ``answers.jsonl`` locks ``.answers.jsonl.lock``), so outputs beside it stay free.
    """

    def __init__(self, folder: str | os.PathLike, *, purpose: str = "output folder", name: str = LOCK_FILE) -> None:
        self.folder = Path(folder)
        self.name = name
        self.path = self.folder / name
        self.purpose = purpose
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock or raise :class:`~docintent.errors.FolderBusyError` naming the process that holds it."""
        import fcntl

        if self._fd is not None:
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = _holder_text(read_holder(self.folder, self.name))
            target = self.folder if self.name == LOCK_FILE else self.folder / self.name.removeprefix(".").removesuffix(".lock")
            raise FolderBusyError(
                target,
                f"this {self.purpose} is in use by {holder}; wait for it to finish or choose another output folder",
            ) from None
        except BaseException:
            os.close(fd)
            raise
        info = {
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "started": datetime.now(UTC).isoformat(timespec="seconds"),
            "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]) if sys.argv and sys.argv[0] else "",
        }
        os.ftruncate(fd, 0)
        os.write(fd, (json.dumps(info) + "\n").encode("utf-8"))
        self._fd = fd

    def release(self) -> None:
        """Give the lock up (the holder's name is cleared first, so nobody is named after it left)."""
        if self._fd is None:
            return
        fd, self._fd = self._fd, None
        with contextlib.suppress(OSError):
            os.ftruncate(fd, 0)
        os.close(fd)  # closing the last descriptor drops the flock

    def __enter__(self) -> FolderLock:
        self.acquire()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release()


@contextlib.contextmanager
def folder_lock(folder: str | os.PathLike, *, purpose: str = "output folder") -> Iterator[FolderLock]:
    """Hold the lock of ``folder`` (created if missing) for the ``with`` block."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    lock = FolderLock(folder, purpose=purpose)
    lock.acquire()
    try:
        yield lock
    finally:
        lock.release()


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` so a reader sees the old file or the new one, never half of one.

    The bytes go to a temporary file in the same folder, are flushed to disk, and the file is renamed over
    ``path`` (a rename within one file system is atomic).
    """
    target = Path(path)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """:func:`atomic_write_bytes` for UTF-8 text."""
    atomic_write_bytes(path, text.encode("utf-8"))
