"""``docintent restore``: run one or more restoration tools on an image and save the result; ``--auto`` on a
folder or glob restores every page question-free into an output folder, as a resumable batch."""

from __future__ import annotations

import argparse
from pathlib import Path

from ._common import RESTORATION_TOOLS, add_pages_argument, add_progress_argument, list_kinds, report_batch
from ._scale import add_executor_arguments

#: Shown under ``docintent restore --help``.
EXAMPLES = (
    "docintent restore photo.jpg --auto -o photo-restored.png",
    "docintent restore scans/ --auto -o restored/",
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "restore",
        help="apply restoration tools (deshadowing, deblurring, dewarping, ...) to an image, or --auto to a folder",
        description="Apply restoration tools in the given order and save the restored page. "
        "`docintent tools` lists the tool names. With --auto and a folder or glob, every page of every document "
        "is restored into the folder -o names (one image per page and a row per page in OUT/restore.jsonl; "
        "running the same command again resumes).",
    )
    p.add_argument("image", help="image or PDF file; with --auto also a folder (searched recursively) or a quoted glob")
    list_kinds(
        p.add_argument(
            "--tool",
            "-t",
            action="append",
            metavar="NAME",
            help="tool to apply, of %(kinds)s; repeat to chain tools in order (e.g. -t rotate_90 -t deshadowing)",
        ),
        kinds=RESTORATION_TOOLS,
    )
    p.add_argument(
        "--auto",
        action="store_true",
        help="question-free: measure the damage, run the tool for the worst one, keep it only when the page "
        "reads better or the damage fell; repeat (for OCR pipelines)",
    )
    p.add_argument(
        "-o",
        "--output",
        metavar="PATH",
        help="output image (default: IMAGE-restored.png beside the input); for a folder: the output folder",
    )
    add_pages_argument(
        p, "page of a PDF, counted from 1 (default 1); for a folder: the pages of each PDF (default all)"
    )
    p.add_argument("--retry-failed", action="store_true", help="folder: restore pages that ended with an error again")
    add_progress_argument(p)
    add_executor_arguments(p, workers=True, model_calls=False)
    p.set_defaults(func=run)


def _is_batch(target: str) -> bool:
    return Path(target).is_dir() or any(ch in target for ch in "*?[")


def run(args: argparse.Namespace) -> int:
    from ..errors import InputError

    if bool(args.tool) == bool(args.auto):
        raise InputError(args.image, "give either --auto or one or more --tool NAME")
    if _is_batch(args.image):
        if not args.auto:
            raise InputError(args.image, "a folder is restored with --auto (the tools are chosen per page)")
        return run_batch(args)
    if args.retry_failed or args.workers or args.executor == "ray":
        raise InputError(args.image, "--retry-failed, --workers and --executor are for restoring a folder")
    return run_one(args)


def run_one(args: argparse.Namespace) -> int:
    import time

    from ..document import Document
    from ..errors import InputError
    from ..evaluation.executors import Activity
    from ..io import save_page
    from ..tools import get_tool
    from ._common import check_output_file, image_output_arg

    tools = [get_tool(name) for name in args.tool or []]  # unknown names fail before any work is done
    source = Path(args.image)
    try:
        output = image_output_arg(args.output) if args.output else source.with_name(f"{source.stem}-restored.png")
    except argparse.ArgumentTypeError as err:
        raise InputError(f"-o {args.output}", str(err).split(": ", 1)[-1]) from None
    check_output_file(output)
    document = Document(args.image, pages=args.pages or "1")
    if len(document) != 1:
        raise InputError(
            args.image,
            f"--pages {args.pages} names {len(document)} pages; one image is written, so "
            "give one page (or restore a folder with --auto -o OUT/)",
        )
    page = document.page(document.numbers[0])
    where = f" page {document.numbers[0]}" if document.is_pdf else ""
    print(f"{args.image}{where}: {page.width}x{page.height}")
    if args.auto:
        from ..strategies.auto import restore_auto

        status = Activity(source.name, show=False if args.no_progress else None)
        count = 0

        def observe(before, after, step) -> None:
            nonlocal count
            count += 1
            status.say(f"step {count}: {step.tool} {'kept' if step.verdict == 'keep' else 'rolled back'}")

        try:
            page, steps = restore_auto(page, observe=observe)
        finally:
            status.close()
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


def run_batch(args: argparse.Namespace) -> int:
    from ..batch import RESTORE_ROWS, restore_batch
    from ..errors import InputError
    from ._common import check_output_folder, not_read_lines
    from ._scale import executor_from_args

    if not args.output:
        raise InputError(args.image, "restoring a folder needs an output folder: -o OUT/")
    check_output_folder(args.output)
    return report_batch(
        "restore",
        lambda: restore_batch(
            args.image,
            args.output,
            pages=args.pages,
            executor=executor_from_args(args),
            progress=False if args.no_progress else None,
            retry_failed=args.retry_failed,
        ),
        args.output,
        "pages restored",
        "page",
        lambda summary: (
            f"{args.output}: {summary.rows} pages ({summary.new_rows} new, {summary.skipped} already "
            f"done, {summary.retried} retried, {summary.failed} with errors) in {summary.seconds:.1f} s; "
            f"rows in {Path(args.output) / RESTORE_ROWS}" + not_read_lines(summary.not_read)
        ),
    )
