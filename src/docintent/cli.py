"""The ``docintent`` command line: subcommands only, each defined in ``docintent.commands.<name>``.

A command module exposes ``register(subparsers)``, which adds its parser and sets ``func`` to a handler
``handler(args) -> int``. Handlers import heavy modules lazily so ``docintent --help`` stays fast.
"""

from __future__ import annotations

import argparse
import importlib
import logging
import pkgutil
import sys

from . import __version__, commands
from .errors import DocIntentError


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="docintent",
        description="Answer questions about damaged document images; restore only what blocks the answer.",
    )
    parser.add_argument("--version", action="version", version=f"docintent {__version__}")
    parser.add_argument("-v", "--verbose", action="count", default=0, help="more logging (-vv for debug)")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for info in sorted(pkgutil.iter_modules(commands.__path__), key=lambda m: m.name):
        if info.name.startswith("_"):
            continue
        module = importlib.import_module(f"{commands.__name__}.{info.name}")
        module.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=(logging.WARNING, logging.INFO, logging.DEBUG)[min(args.verbose, 2)],
        format="%(levelname)s %(name)s: %(message)s",
    )
    if not getattr(args, "func", None):
        parser.print_help()
        return 2
    try:
        return int(args.func(args) or 0)
    except DocIntentError as err:
        print(f"docintent {args.command}: error: {err}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
