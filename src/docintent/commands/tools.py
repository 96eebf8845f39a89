"""``docintent tools``: list the registered tools."""

from __future__ import annotations

import argparse
import json
import textwrap

#: Shown under ``docintent tools --help``.
EXAMPLES = ("docintent tools",)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("tools", help="list restoration and inspection tools with their descriptions")
    p.add_argument("--json", action="store_true", help="print the OpenAI function specs as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..tools import list_tools

    tools = list_tools()
    if args.json:
        print(json.dumps([t.spec() for t in tools], indent=2))
        return 0
    for tool in tools:
        print(f"{tool.name}  [{tool.degradation}]")
        print(textwrap.indent(textwrap.fill(tool.description, 96), "    "))
    return 0
