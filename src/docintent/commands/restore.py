"""``docintent restore``: run one or more restoration tools on an image and save the result."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ._common import image_output_arg, page_arg


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
    p.add_argument("-o", "--output", type=image_output_arg, help="output image path (default: IMAGE-restored.png beside the input)")
    p.add_argument("--page", type=page_arg, default=0, help="0-based page number for PDFs (default 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import time

    from ..io import load_page, save_page
    from ..tools import get_tool
    from ._common import check_output_file

    tools = [get_tool(name) for name in args.tool]  # unknown names fail before any work is done
    source = Path(args.image)
    output = Path(args.output) if args.output else source.with_name(f"{source.stem}-restored.png")
    check_output_file(output)
    page = load_page(args.image, page=args.page)
    print(f"{args.image}: {page.width}x{page.height}")
    for tool in tools:
        start = time.perf_counter()
        page = tool(page)
        print(f"  {page.ops[-1]:<32} {page.width}x{page.height}  {time.perf_counter() - start:.2f} s")
    # Written beside the target and renamed over it: the output is whole or absent, never half an image.
    partial = output.with_name(f".{output.stem}.{os.getpid()}.partial{output.suffix}")
    try:
        save_page(page, partial)
        os.replace(partial, output)
    finally:
        partial.unlink(missing_ok=True)
    print(f"saved {output}")
    return 0
