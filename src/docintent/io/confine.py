"""Paths that are data: a path read from a run folder, a manifest, a row or a request is used only inside its folder.

A path string found in a file (a row's step folder, a page name, a sample's image) or sent by a client is
resolved (links followed, ``..`` taken, relative paths taken from the folder) and used only when its real path
lies inside the real path of the folder it belongs to; anything else - not text, empty, holding a NUL
character, leading out through ``..``, an absolute path elsewhere or a link pointing out - is no path at all.
Files are also refused unless they are regular files (a pipe would wait for a writer, a device never ends).

>>> within("runs/a", "steps/s1__none")          # doctest: +SKIP
PosixPath('/home/me/runs/a/steps/s1__none')
>>> within("runs/a", "../../etc") is None       # doctest: +SKIP
True
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from ..errors import DatasetError


def within(root: str | os.PathLike, path: object) -> Path | None:
    """The real path of ``path`` (a relative one taken from ``root``) when it lies inside the real path of
    ``root`` (or is that folder); None for anything else."""
    if not isinstance(path, str) or not path or "\x00" in path:
        return None
    try:
        base = Path(os.path.realpath(root))
        target = Path(os.path.realpath(base / path))
    except (OSError, ValueError):
        return None
    return target if target.is_relative_to(base) else None


def regular_file_within(root: str | os.PathLike, path: object, *, max_bytes: int | None = None) -> Path | None:
    """:func:`within`, for a regular file (of at most ``max_bytes``) only."""
    target = within(root, path)
    if target is None:
        return None
    try:
        info = os.stat(target)
    except (OSError, ValueError):
        return None
    if not stat.S_ISREG(info.st_mode) or (max_bytes is not None and info.st_size > max_bytes):
        return None
    return target


def run_file(folder: str | os.PathLike, name: str, *, max_bytes: int | None = None) -> Path | None:
    """The file ``name`` of a run folder, by its real path: None when there is none; a
    :class:`~docintent.errors.DatasetError` naming it when it is a link out of the folder, not a regular file
    or larger than ``max_bytes``."""
    path = Path(folder) / name
    if not os.path.lexists(path):
        return None
    target = within(folder, name)
    if target is None:
        raise DatasetError(
            f"{path}: a link out of the run folder {os.path.realpath(folder)}; a run's files are "
            "read only from inside it"
        )
    try:
        info = os.stat(target)
    except OSError as err:
        raise DatasetError(f"{path}: cannot be read ({err.strerror or err})") from None
    if not stat.S_ISREG(info.st_mode):
        raise DatasetError(f"{path}: not a regular file")
    if max_bytes is not None and info.st_size > max_bytes:
        raise DatasetError(f"{path}: {info.st_size:,} bytes, more than a run's {name} may hold ({max_bytes:,})")
    return target


__all__ = ["regular_file_within", "run_file", "within"]
