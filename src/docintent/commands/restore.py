"""``docintent restore``: run one or more restoration tools on an image and save the result."""

from __future__ import annotations

import argparse
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
        "--tool", "-t", action="append", metavar="NAME",
        help="tool to apply; repeat to chain tools in order (e.g. -t rotate_90 -t deshadowing)",
    )
    p.add_argument(
        "--auto", action="store_true",
        help="question-free: measure the damage, run the tool for the worst one, keep it only when the page "
        "reads better or the damage fell; repeat (for OCR pipelines)",
    )
    p.add_argument("-o", "--output", type=image_output_arg, help="output image path (default: IMAGE-restored.png beside the input)")
    p.add_argument("--page", type=page_arg, default=0, help="0-based page number for PDFs (default 0)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import time

    from ..errors import InputError
    from ..io import load_page, save_page
    from ..tools import get_tool
    from ._common import check_output_file

    if bool(args.tool) == bool(args.auto):
        raise InputError(args.image, "give either --auto or one or more --tool NAME")
    tools = [get_tool(name) for name in args.tool or []]  # unknown names fail before any work is done
    source = Path(args.image)
    output = Path(args.output) if args.output else source.with_name(f"{source.stem}-restored.png")
    check_output_file(output)
    page = load_page(args.image, page=args.page)
    print(f"{args.image}: {page.width}x{page.height}")
    if args.auto:
        from ..strategies.auto import restore_auto

        page, steps = restore_auto(page)
        for step in steps:
            print(f"  {step.tool:<14} {step.verdict:<9} {step.why}; {step.reason}  {step.seconds:.2f} s")
        if not steps:
            print("  no damage measured above its threshold: the page is saved as it is")
    for tool in tools:
        start = time.perf_counter()
        page = tool(page)
        print(f"  {page.ops[-1]:<32} {page.width}x{page.height}  {time.perf_counter() - start:.2f} s")
    save_page(page, output)  # whole or absent; a link is written through, a device never replaced
    print(f"saved {output}")
    return 0
