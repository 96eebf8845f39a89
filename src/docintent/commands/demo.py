"""``docintent demo``: damaged documents, five strategies, an HTML page of every step."""

from __future__ import annotations

import argparse

from ._common import add_progress_argument, positive_int

#: Shown under ``docintent demo --help``.
EXAMPLES = (
    "docintent demo",
    "docintent demo --out demo-run/",
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "demo", help="run none / pipeline / judge / docintent / docintent+mact on generated damaged documents"
    )
    p.add_argument(
        "--out",
        metavar="DIR",
        default=None,
        help="folder for index.html (default: a new temporary folder; its path is printed)",
    )
    p.add_argument("--count", type=positive_int, default=6, help="questions to run (default 6)")
    p.add_argument("--seed", type=int, default=7, help="seed of the generated documents")
    add_progress_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..demo import run_demo
    from ._common import check_output_folder

    if args.out is not None:
        check_output_folder(args.out)
    run_demo(args.out, count=args.count, seed=args.seed, progress=False if args.no_progress else None)
    return 0
