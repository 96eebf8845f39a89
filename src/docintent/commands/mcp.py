"""``docintent mcp``: restoration and evidence tools for agents, over the Model Context Protocol (stdio)."""

from __future__ import annotations

import argparse

from ._common import BRAIN_KINDS, add_endpoint_arguments, add_profile_argument, brain_kind, list_kinds

#: Shown under ``docintent mcp --help``.
EXAMPLES = ("docintent mcp --allow ~/scans",)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "mcp",
        help="Model Context Protocol server over stdio: ask, restore, diagnose, zoom, search",
        description="Serve docintent's tools to any MCP client over stdin/stdout. Images are passed as paths "
        "inside the allowed folders or as base64. Needs: pip install 'docintent[serve]'.",
    )
    p.add_argument(
        "--allow",
        action="append",
        metavar="DIR",
        help="folder whose files the tools may read and write (repeatable; default: the working directory)",
    )
    p.add_argument("--index", metavar="DIR", help="index made by `docintent index`: adds the search tool")
    list_kinds(
        p.add_argument(
            "--brain",
            type=brain_kind,
            default=None,
            metavar="KIND",
            help="brain of the ask tool: %(kinds)s (default offline)",
        ),
        kinds=BRAIN_KINDS,
    )
    p.add_argument("--brain-opt", action="append", metavar="KEY=VALUE", help="option of the brain, e.g. model=...")
    add_endpoint_arguments(p)
    add_profile_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import os

    from ..errors import MissingDependencyError
    from ._common import brain_choice

    try:
        from ..server.mcp import build_server
    except ImportError:
        raise MissingDependencyError("mcp", "serve", "docintent mcp") from None
    choice = brain_choice(args)
    server = build_server(
        args.allow or [os.getcwd()], index=args.index, brain=choice.kind, brain_options=choice.options
    )
    server.run("stdio")
    return 0
