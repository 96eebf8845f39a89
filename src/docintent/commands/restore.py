"""``docintent restore``: run one or more restoration tools on an image and save the result."""

from __future__ import annotations

import argparse
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "restore",
        help="apply restoration tools (deshadowing, deblurring, dewarping, ...) to an image",
        description="Apply restoration tools in the given order and save the restored page. "
        "`docintent tools` lists the tool names.",
    )
    p.add_argument("image", help="image or PDF file (first page unless --page)")
    p.add_argument(
        "--tool", "-t", action="append", required=True, metavar="NAME",
        help="tool to apply; repeat to chain tools in order (e.g. -t rotate_90 -t deshadowing)",
    )
    p.add_argument("-o", "--output", help="output image path (default: IMAGE-restored.png beside the input)")
    p.add_argument("--page", type=int, default=0, help="0-based page number for PDFs (default 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import time

    from ..io import load_page, save_page
    from ..tools import get_tool

    tools = [get_tool(name) for name in args.tool]  # unknown names fail before any work is done
    page = load_page(args.image, page=args.page)
    print(f"{args.image}: {page.width}x{page.height}")
    for tool in tools:
        start = time.perf_counter()
        page = tool(page)
        print(f"  {page.ops[-1]:<32} {page.width}x{page.height}  {time.perf_counter() - start:.2f} s")
    source = Path(args.image)
    output = Path(args.output) if args.output else source.with_name(f"{source.stem}-restored.png")
    save_page(page, output)
    print(f"saved {output}")
    return 0
