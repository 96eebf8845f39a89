"""Office documents (DOCX, PPTX, XLSX, ODT, ODS, ODP and the older DOC, PPT, XLS, RTF) read as PDFs.

An office document is converted to PDF by LibreOffice headless (``soffice --headless --convert-to pdf``, found
as ``soffice`` or ``libreoffice`` on ``PATH``), and its pages are then those of that PDF: ranked, rendered and
read as any PDF's. Each conversion is bounded in time (``DOCINTENT_OFFICE_TIMEOUT_S``, default 120 s; past it
LibreOffice is stopped and the error names the file) and runs with a LibreOffice profile of this process's own,
so a LibreOffice the user has open, or their settings, play no part. The PDF is kept under
``DOCINTENT_CACHE_DIR/office`` named by the SHA-256 of the document's bytes, so a document is converted once and
every later read of the same bytes gets the same PDF, hence the same pages (with ``DOCINTENT_CACHE=0`` in a
temporary folder for the life of the process).

Where LibreOffice is not installed, reading an office document is an
:class:`~docintent.errors.OfficeConversionError` naming the Debian package to install, and a folder walk names
the file as not read with that reason.

>>> pdf = office_pdf("minutes.docx")          # doctest: +SKIP
>>> pdf.name                                  # doctest: +SKIP
'3f1c…e2.pdf'
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import signal
import subprocess
import tempfile
import threading
from pathlib import Path

from ..errors import OfficeConversionError
from ..settings import get_settings

#: Office suffixes and the Debian package whose LibreOffice module converts them (each brings libreoffice-core,
#: which alone converts none of them).
OFFICE_PACKAGES = {
    ".docx": "libreoffice-writer",
    ".doc": "libreoffice-writer",
    ".odt": "libreoffice-writer",
    ".rtf": "libreoffice-writer",
    ".pptx": "libreoffice-impress",
    ".ppt": "libreoffice-impress",
    ".odp": "libreoffice-impress",
    ".xlsx": "libreoffice-calc",
    ".xls": "libreoffice-calc",
    ".ods": "libreoffice-calc",
}
OFFICE_SUFFIXES = tuple(OFFICE_PACKAGES)
#: The programs tried, in order, on ``PATH``.
CONVERTERS = ("soffice", "libreoffice")

_lock = threading.Lock()  # one conversion at a time per process: they share the process's LibreOffice profile
_scratch: dict[str, Path] = {}
_scratch_lock = threading.Lock()


def is_office_file(path: str | os.PathLike) -> bool:
    """Whether ``path`` names an office document (by its suffix)."""
    return Path(path).suffix.lower() in OFFICE_PACKAGES


def converter() -> str | None:
    """The LibreOffice program on ``PATH`` (``soffice``, else ``libreoffice``); None when neither is there."""
    return next((found for name in CONVERTERS if (found := shutil.which(name))), None)


def package_for(suffix: str) -> str:
    """The Debian package that converts documents of ``suffix`` (``libreoffice-writer`` for text documents)."""
    return OFFICE_PACKAGES.get(suffix.lower(), "libreoffice-writer")


def missing_reason(suffix: str, *, named: bool = True) -> str:
    """Why an office document of ``suffix`` cannot be read here: LibreOffice is missing, and what to install
    (``named``: starting with the suffix, as a folder summary names each reason)."""
    reason = (
        f"an office document, read by converting it to PDF with LibreOffice, which is not installed (no "
        f"soffice or libreoffice on PATH); on Debian or Ubuntu: sudo apt-get install {package_for(suffix)} "
        "(it brings libreoffice-core)"
    )
    return f"{suffix.lower()}: {reason}" if named else reason


def file_digest(path: Path) -> str:
    """SHA-256 of the file's bytes, in hex."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def office_pdf(path: str | os.PathLike, *, timeout_s: float | None = None) -> Path:
    """The PDF of the office document at ``path``: converted by LibreOffice on first use, then read from the
    cache by the document's content digest (see the module docstring). ``timeout_s``: the longest the
    conversion may take (default ``DOCINTENT_OFFICE_TIMEOUT_S``).

    Raises :class:`~docintent.errors.OfficeConversionError` naming the file when LibreOffice is not installed,
    cannot convert it, or takes too long."""
    source = Path(path)
    program = converter()
    if program is None:
        raise OfficeConversionError(source, missing_reason(source.suffix, named=False))
    settings = get_settings()
    limit = settings.office_timeout_s if timeout_s is None else timeout_s
    folder = settings.cache_dir / "office" if settings.cache else _scratch_folder("pdf")
    target = folder / f"{file_digest(source)}.pdf"
    if target.is_file():
        return target
    with _lock:
        if target.is_file():  # converted by another thread meanwhile
            return target
        folder.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="docintent-office-", dir=folder) as work:
            # A copy under a plain name: LibreOffice names its output after the input, and a name it would read
            # as an option or a URL (a leading dash, a colon) must not reach its command line.
            plain = Path(work) / f"document{source.suffix.lower()}"
            shutil.copyfile(source, plain)
            produced = _convert(program, plain, Path(work) / "out", limit, source)
            os.replace(produced, target)  # atomic: a reader sees the whole PDF or none
    return target


def _convert(program: str, document: Path, out: Path, timeout_s: float, shown: Path) -> Path:
    """Run LibreOffice headless on ``document`` into ``out``; the PDF it wrote (errors name ``shown``)."""
    profile = _scratch_folder("profile")
    command = [
        program,
        f"-env:UserInstallation={profile.as_uri()}",
        "--headless",
        "--norestore",
        "--nologo",
        "--nolockcheck",
        "--convert-to",
        "pdf",
        "--outdir",
        str(out),
        str(document),
    ]
    # A session of its own, so a timeout stops soffice.bin too, not only the launcher script in front of it.
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        start_new_session=True,
        env={**os.environ, "SAL_USE_VCLPLUGIN": "svp"},
    )
    try:
        output, _ = process.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        _stop(process)
        raise OfficeConversionError(
            shown,
            f"LibreOffice took longer than {timeout_s:g} s to convert it to PDF and "
            "was stopped (DOCINTENT_OFFICE_TIMEOUT_S sets the limit)",
        ) from None
    produced = out / f"{document.stem}.pdf"
    if process.returncode != 0 or not produced.is_file() or produced.stat().st_size == 0:
        said = " ".join(
            line.strip()
            for line in output.decode("utf-8", "replace").splitlines()
            if "javaldx" not in line and line.strip()
        )[-300:]
        raise OfficeConversionError(
            shown,
            f"LibreOffice could not convert it to PDF (exit status {process.returncode}"
            f"{': ' + said if said else ''}); a damaged file, or LibreOffice lacks the module for it: "
            f"sudo apt-get install {package_for(shown.suffix)}",
        )
    return produced


def _stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def _scratch_folder(kind: str) -> Path:
    """A folder of this process's own (its LibreOffice profile; converted PDFs when caching is off), removed
    when the process ends."""
    with _scratch_lock:
        folder = _scratch.get(kind)
        if folder is None or not folder.is_dir():
            folder = Path(tempfile.mkdtemp(prefix=f"docintent-office-{kind}-"))
            _scratch[kind] = folder
            atexit.register(shutil.rmtree, folder, True)
    return folder


__all__ = ["OFFICE_SUFFIXES", "converter", "is_office_file", "missing_reason", "office_pdf", "package_for"]
