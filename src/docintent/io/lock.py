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
import errno
import json
import os
import socket
import stat
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from ..errors import FolderBusyError
from ..redaction import redact

LOCK_FILE = ".docintent.lock"


def _holder_text(info: dict[str, Any]) -> str:
    if not info:
        return "another process (it has not written its name yet)"
    parts = [f"pid {info.get('pid', '?')} on host {info.get('host', '?')}"]
    if info.get("started"):
        parts.append(f"since {info['started']}")
    if info.get("command"):
        parts.append(f"({redact(str(info['command']))[:120]})")
    return redact(" ".join(parts))


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

        from ..errors import InputError

        if self._fd is not None:
            return
        try:
            # Never through a link (someone else's file would be truncated) and never blocking on a pipe.
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
        except OSError as err:
            if err.errno in (errno.ELOOP, errno.ENXIO, errno.EISDIR):
                raise InputError(
                    self.path,
                    "is not a regular file (a link, a folder or a pipe); remove it so "
                    f"the {self.purpose} can be locked",
                ) from None
            raise
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            os.close(fd)
            raise InputError(self.path, f"is not a regular file; remove it so the {self.purpose} can be locked")
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            holder = _holder_text(read_holder(self.folder, self.name))
            target = (
                self.folder
                if self.name == LOCK_FILE
                else self.folder / self.name.removeprefix(".").removesuffix(".lock")
            )
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
            # Secrets of the command line (an API key among the brain options) are never written down.
            "command": redact(" ".join([Path(sys.argv[0]).name, *sys.argv[1:]])) if sys.argv and sys.argv[0] else "",
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


def output_target(path: str | os.PathLike) -> tuple[Path, str]:
    """Where a write to ``path`` really goes, and how: ``(target, "replace")`` for a regular file or a new one
    (links followed, so a symbolic link stays a link and its target gets the new content), ``(path,
    "through")`` for a character device or a named pipe that is written into as it is (``/dev/null``,
    ``/dev/stdout``). Anything else (a folder, a block device, a socket) is an
    :class:`~docintent.errors.InputError` naming ``path``; nothing is ever replaced by a regular file but a
    regular file."""
    from ..errors import InputError

    given = Path(path)
    try:
        mode = os.stat(given).st_mode  # follows links
    except FileNotFoundError:
        mode = None
    except NotADirectoryError:
        raise InputError(given, "cannot be written: a folder on its path is a file") from None
    if mode is None or stat.S_ISREG(mode):
        return Path(os.path.realpath(given)), "replace"
    if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode):
        return given, "through"
    if stat.S_ISDIR(mode):
        raise InputError(given, "is a folder; give a file name")
    kind = "block device" if stat.S_ISBLK(mode) else "socket" if stat.S_ISSOCK(mode) else "special file"
    raise InputError(given, f"is a {kind}; docintent writes only regular files, character devices and pipes")


def _write_through(path: Path, data: bytes) -> None:
    """Write into a character device or a pipe without creating or replacing anything; a pipe nobody reads
    is an error at once instead of a wait without end."""
    from ..errors import InputError

    try:
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as err:
        if err.errno == errno.ENXIO:
            raise InputError(path, "is a pipe that no process is reading") from None
        raise
    try:
        os.set_blocking(fd, True)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | os.PathLike, data: bytes) -> None:
    """Write ``data`` to ``path`` so a reader sees the old file or the new one, never half of one.

    The bytes go to a temporary file in the same folder, are flushed to disk, and the file is renamed over
    ``path`` (a rename within one file system is atomic). A symbolic link is followed (its target is
    replaced, the link stays), and a character device or pipe (``/dev/null``) is written into, never
    replaced (:func:`output_target`).
    """
    target, how = output_target(path)
    if how == "through":
        _write_through(target, data)
        return
    tmp = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    with contextlib.suppress(FileNotFoundError):
        tmp.unlink()  # left by a killed process of the same pid; created afresh below, never followed
    try:
        mode = stat.S_IMODE(os.stat(target).st_mode)
    except OSError:
        mode = 0o644
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise


def atomic_write_text(path: str | os.PathLike, text: str) -> None:
    """:func:`atomic_write_bytes` for UTF-8 text (a lone surrogate, which UTF-8 cannot hold, is written as its
    ``\\udXXX`` escape)."""
    atomic_write_bytes(path, text.encode("utf-8", "backslashreplace"))
