"""The ``docintent`` command line: subcommands only, each defined in ``docintent.commands.<name>``.

A command module exposes ``register(subparsers)``, which adds its parser and sets ``func`` to a handler
``handler(args) -> int``. Handlers import heavy modules lazily so ``docintent --help`` stays fast.

Failures reach the user as one line on standard error naming the input and the problem, with exit status 1:
bad arguments (checked while parsing), docintent's own errors, and the operating system's (a file that cannot
be read or written). Anything else is a bug: one line says what happened and where its full traceback was
written; ``--debug`` prints the traceback instead. Ctrl-C exits with status 130.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import logging
import os
import pkgutil
import re
import sqlite3
import sys
import tempfile
import traceback
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, NoReturn

from . import __version__, commands
from .errors import DocIntentError, nearest
from .redaction import RedactingFilter, RedactingStream, redact, redact_values, register_argv, register_environment


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (no usage block) with exit status 1, whose help is printed
    with only secret values masked (its option names and forms such as ``Bearer TOKEN`` are not secrets), and
    whose mistyped options and choices get a "did you mean"."""

    def error(self, message: str) -> NoReturn:
        _say(f"{self.prog}: error: {_suggest(self, message)} (see {self.prog} --help)")
        sys.exit(1)

    def _print_message(self, message: str, file: Any = None) -> None:
        if not message:
            return
        stream = file if file is not None else sys.stderr
        inner = getattr(stream, "inner", stream)  # past the pattern rules of the redacting stream
        inner.write(redact_values(message))
        with contextlib.suppress(Exception):
            inner.flush()


def _suggest(parser: argparse.ArgumentParser, message: str) -> str:
    """``message`` with the nearest valid option or choice for a mistyped one."""
    unknown = re.match(r"unrecognized arguments: (\S+)", message)
    if unknown and unknown.group(1).startswith("-"):
        word = unknown.group(1).split("=", 1)[0]
        options = [o for a in parser._actions for o in a.option_strings]
        for sub in parser._actions:
            if isinstance(sub, argparse._SubParsersAction):
                options += [o for p in sub.choices.values() for a in p._actions for o in a.option_strings]
        close = nearest(word, options)
        if close:
            return f"{message}; did you mean {close}?"
    choice = re.search(r"invalid choice: '([^']*)' \(choose from (.+)\)", message)
    if choice:
        valid = [c.strip(" '") for c in choice.group(2).split(",")]
        close = nearest(choice.group(1), valid)
        if close:
            return f"{message}; did you mean {close!r}?"
    return message


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="docintent",
        description="Answer questions about damaged document images; restore only what blocks the answer.",
    )
    parser.add_argument("--version", action="version", version=f"docintent {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    parser.add_argument("--debug", action="store_true", help="print the full traceback of an unexpected error")
    parser.add_argument(
        "--config",
        metavar="FILE",
        help="read this docintent.toml and no other (as DOCINTENT_CONFIG; 'none': no config file)",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
        helps = {a.dest: a.help for a in sub._choices_actions}
        name = info.name.replace("_", "-")  # serve_model.py registers serve-model
        _describe(sub.choices.get(name), helps.get(name), getattr(module, "EXAMPLES", ()))
    return parser


def _describe(parser: argparse.ArgumentParser | None, help_text: str | None, examples: tuple[str, ...]) -> None:
    """Every subcommand's ``--help`` says what it does (its one-line help when it has no longer description)
    and shows its examples."""
    if parser is None:
        return
    if not parser.description and help_text:
        parser.description = help_text[:1].upper() + help_text[1:] + "."
    if examples and not parser.epilog:
        parser.epilog = "examples:\n" + "\n".join(f"  {e}" for e in examples)
        parser.formatter_class = argparse.RawDescriptionHelpFormatter


def _say(message: str) -> None:
    """One line on standard error, with secrets removed (:func:`docintent.redaction.redact`)."""
    line = " ".join(redact(str(message)).split())
    print(line, file=sys.stderr, flush=True)


def _os_error_text(err: OSError) -> str:
    """``PATH: problem`` for an operating-system error, naming the file it is about."""
    problem = err.strerror or str(err) or type(err).__name__
    names = [n for n in (err.filename, err.filename2) if n is not None]
    return f"{' -> '.join(map(str, names))}: {problem}" if names else problem


def _crash_folders() -> list[Path]:
    """Where crash reports may go: the cache's ``crashes`` folder, then the temporary folder. Never raises:
    the settings themselves may be what is broken."""
    folders = []
    try:
        from .settings import get_settings

        folders.append(Path(get_settings().cache_dir) / "crashes")
    except Exception:  # noqa: BLE001 - a bad DOCINTENT_* variable must not stop the report being written
        pass
    return [*folders, Path(tempfile.gettempdir())]


def _write_crash_report(command: str | None, argv: list[str]) -> Path | None:
    """Write the current exception's traceback to a new file and return its path (None if nowhere is
    writable). Secrets are removed from it; it is created afresh (never through a link someone left there)."""
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%S")
    text = f"docintent {__version__} {command or ''}\nargv: {argv!r}\n\n{traceback.format_exc()}"
    data = redact(text).encode("utf-8")
    for folder in _crash_folders():
        try:
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / f"docintent-crash-{stamp}-{os.getpid()}.txt"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            return path
        except OSError:
            continue
    return None


def main(argv: list[str] | None = None) -> int:
    """Run the command line ``argv`` (default ``sys.argv[1:]``) and return its exit status.

    Everything it prints and logs passes through :func:`docintent.redaction.redact`; the secrets of the
    command line and of the environment are registered first, so they are masked in any form."""
    argv = list(sys.argv[1:] if argv is None else argv)
    register_environment()
    register_argv(argv)
    out, err = RedactingStream(sys.stdout), RedactingStream(sys.stderr)
    sys.stdout, sys.stderr = out, err
    try:
        return _main(argv)
    finally:
        for wrapper in (out, err):
            with contextlib.suppress(Exception):
                wrapper.flush()
        # A stream the command replaced (the closed pipe of `docintent ... | head`) stays replaced.
        if sys.stdout is out:
            sys.stdout = out.inner
        if sys.stderr is err:
            sys.stderr = err.inner


def _log_handler() -> logging.Handler:
    """The standard-error handler of the command line's log lines, which are redacted before formatting."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    handler.addFilter(RedactingFilter())
    return handler


def _use_config(path: str) -> None:
    """``--config FILE``: that file alone, for this process and the worker processes it starts."""
    from .configfile import CONFIG_ENV
    from .settings import get_settings

    os.environ[CONFIG_ENV] = path or "none"
    get_settings.cache_clear()


def _main(argv: list[str]) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as stop:  # --help, --version, or a refused argument (already reported in one line)
        return stop.code if isinstance(stop.code, int) else 1
    logging.basicConfig(
        level=(logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)], handlers=[_log_handler()]
    )
    if args.config is not None:
        _use_config(args.config)
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    where = f"docintent {args.command}"
    try:
        return int(args.func(args) or 0)
    except DocIntentError as err:
        _say(f"{where}: error: {err}")
        return 1
    except KeyboardInterrupt:
        _say(f"{where}: interrupted")
        return 130
    except BrokenPipeError:  # the reader of our output went away (`docintent ... | head`)
        with contextlib.suppress(OSError):
            sys.stdout = open(os.devnull, "w")  # noqa: SIM115 - keeps the interpreter's final flush quiet
        return 1
    except OSError as err:
        _say(f"{where}: error: {_os_error_text(err)}")
        return 1
    except sqlite3.DatabaseError as err:
        _say(f"{where}: error: a database file is damaged or is not a docintent file ({err})")
        return 1
    except Exception as err:  # noqa: BLE001 - the last line of defence: a bug, reported without a traceback
        if args.debug:
            traceback.print_exc()
            return 1
        report = _write_crash_report(args.command, ["docintent", *argv])
        written = f"full traceback written to {report}" if report else "no file could be written for its traceback"
        _say(f"{where}: unexpected error: {type(err).__name__}: {err}; {written} (--debug prints it)")
        return 1


if __name__ == "__main__":
    sys.exit(main())
