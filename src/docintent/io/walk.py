"""Folder walks that end: by real path, each file once, links into loops cut, pipes and devices never opened.

:func:`walk_folder` is the one walk every command that searches a folder uses (``ask DIR``, ``restore`` of a
folder, ``index``). It lists the real entries of a folder first and follows the links it met afterwards, each
only to a file or folder not reached yet, so a link to ``.`` or to a parent is cut and a file reached through
two names is read once, under its real name. Pipes, sockets and devices are named with a reason and never
opened (opening a pipe waits for a writer). The walk is bounded: at most :data:`MAX_WALK_DEPTH` folders deep,
at most :data:`MAX_WALK_ENTRIES` entries (more is an :class:`~docintent.errors.InputError`).

>>> walk = walk_folder(Path("scans"), MAX_WALK_DEPTH, None, suffixes=(".png", ".pdf"))   # doctest: +SKIP
>>> walk.documents, walk.skipped                                                          # doctest: +SKIP
(['scans/a.png', 'scans/sub/b.pdf'], [('scans/notes.tsv', '.tsv: not a document type docintent reads')])
"""

from __future__ import annotations

import fnmatch
import os
import stat
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from .office import OFFICE_SUFFIXES, converter, missing_reason

#: The deepest folder a walk enters, counted from the folder named, and the most entries it looks at.
MAX_WALK_DEPTH = 32
MAX_WALK_ENTRIES = 200_000


@dataclass(frozen=True)
class DocumentWalk:
    """What a walk found: the ``documents`` to read (each file once, in name order) and every file it left
    alone, ``skipped``: ``(path, reason)`` pairs in the order met."""

    documents: list[str]
    skipped: list[tuple[str, str]]


def unread_reason(suffix: str) -> str:
    """Why a file of this suffix is left alone, in the words of a folder summary. An office document is left
    alone where LibreOffice, which converts it to PDF, is not installed (the reason names the package), or by a
    walk that reads PDFs and images only."""
    suffix = suffix.lower()
    if suffix in OFFICE_SUFFIXES:
        if converter() is None:
            return missing_reason(suffix)
        return (
            f"{suffix}: an office document; this command reads PDFs and images - convert it to PDF first "
            "(soffice --headless --convert-to pdf FILE)"
        )
    return f"{suffix or 'no suffix'}: not a document type docintent reads"


def skip_reason(mode: int) -> str | None:
    """Why a file of this ``st_mode`` is never opened (None for a regular file or a folder)."""
    from .load import not_regular_reason

    if stat.S_ISREG(mode) or stat.S_ISDIR(mode):
        return None
    return not_regular_reason(mode)


def pattern_matches(parts: Sequence[str], pattern: Sequence[str]) -> bool:
    """Whether the path ``parts`` match the glob ``pattern`` parts (``**`` is any number of folders; ``*`` and
    ``?`` do not match a leading dot, as in a shell)."""
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(
            pattern_matches(parts[i:], rest)
            for i in range(len(parts) + 1)
            if all(not p.startswith(".") for p in parts[:i])
        )
    if not parts or (parts[0].startswith(".") and not head.startswith(".")):
        return False
    return fnmatch.fnmatchcase(parts[0], head) and pattern_matches(parts[1:], rest)


def walk_folder(
    base: Path, depth: int, matches: Callable[[Sequence[str]], bool] | None, suffixes: Sequence[str] | None
) -> DocumentWalk:
    """Walk ``base`` (see the module docstring) to ``depth`` folders below it: real entries first, then the links met, each followed only
    to what was not reached yet. ``matches(parts)`` picks files by their path under ``base`` (glob patterns);
    otherwise files are picked by suffix."""
    seen_files: dict[tuple[int, int], str] = {}
    seen_folders: dict[tuple[int, int], str] = {}
    documents: list[str] = []
    skipped: list[tuple[str, str]] = []
    links: list[tuple[Path, tuple[str, ...]]] = []
    entries = 0

    def consider_file(path: Path, rel: tuple[str, ...], info: os.stat_result) -> None:
        if matches is not None and not matches(rel):
            return
        identity = (info.st_dev, info.st_ino)
        if identity in seen_files:
            skipped.append((str(path), f"the same file as {seen_files[identity]}"))
            return
        if suffixes is not None and path.suffix.lower() not in suffixes:
            skipped.append((str(path), unread_reason(path.suffix)))
            return
        seen_files[identity] = str(path)
        documents.append(str(path))

    def visit(folder: Path, rel: tuple[str, ...]) -> None:
        nonlocal entries
        stack = [(folder, rel)]
        while stack:
            here, here_rel = stack.pop()
            try:
                names = sorted(os.listdir(here))
            except OSError as err:
                skipped.append((str(here), f"cannot be listed ({err.strerror or err})"))
                continue
            folders = []
            for name in names:
                entries += 1
                if entries > MAX_WALK_ENTRIES:
                    raise InputError(
                        base,
                        f"holds more than {MAX_WALK_ENTRIES:,} files and folders; ask about a "
                        "smaller folder or a narrower pattern",
                    )
                path, child_rel = here / name, (*here_rel, name)
                try:
                    info = os.lstat(path)
                except OSError as err:
                    skipped.append((str(path), f"cannot be read ({err.strerror or err})"))
                    continue
                if stat.S_ISLNK(info.st_mode):
                    links.append((path, child_rel))
                elif stat.S_ISDIR(info.st_mode):
                    folders.append((path, child_rel, info))
                elif skip_reason(info.st_mode):
                    if matches is None or matches(child_rel):
                        skipped.append((str(path), skip_reason(info.st_mode) or ""))
                else:
                    consider_file(path, child_rel, info)
            for path, child_rel, info in reversed(folders):
                enter(path, child_rel, info, stack)

    def enter(path: Path, rel: tuple[str, ...], info: os.stat_result, stack: list) -> None:
        identity = (info.st_dev, info.st_ino)
        if identity in seen_folders:
            skipped.append(
                (str(path), f"a link to a folder already walked ({seen_folders[identity]}); not walked again")
            )
            return
        if len(rel) > depth:
            if depth >= MAX_WALK_DEPTH:
                skipped.append((str(path), f"deeper than {MAX_WALK_DEPTH} folders; not walked"))
            return
        seen_folders[identity] = str(path)
        stack.append((path, rel))

    root_info = os.stat(base)
    seen_folders[(root_info.st_dev, root_info.st_ino)] = str(base)
    visit(base, ())
    while links:
        path, rel = links.pop(0)
        try:
            info = os.stat(path)
        except OSError:
            if matches is None or matches(rel):
                skipped.append((str(path), "a broken link (what it points to does not exist)"))
            continue
        if stat.S_ISDIR(info.st_mode):
            pending: list[tuple[Path, tuple[str, ...]]] = []
            enter(path, rel, info, pending)
            if pending:
                visit(*pending[0])
        elif skip_reason(info.st_mode):
            if matches is None or matches(rel):
                skipped.append((str(path), f"a link to {skip_reason(info.st_mode)}"))
        else:
            consider_file(path, rel, info)
    return DocumentWalk(sorted(documents), skipped)
