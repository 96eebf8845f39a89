"""``docintent extract PAGE|PDF|DIR --out out.json``: every page as structure (blocks in reading order, tables
as cells, charts as data tables), each item with its page, box and confidence."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ._common import ENGINE_KINDS, add_pages_argument, add_progress_argument

#: Shown under ``docintent extract --help``.
EXAMPLES = (
    "docintent extract report.pdf --out report.json --tables report-tables/",
    "docintent extract scans/ --out scans.md",
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "extract",
        help="export every page as structure: blocks in reading order, tables as cells, charts as data tables, with "
        "boxes (JSON or Markdown)",
        description="Read every page of an image, a PDF or a folder of them into blocks in reading order "
        "(headings, paragraphs, list items, key-value pairs), tables as cells and charts as data tables (series, "
        "categories, each value with the box of its mark), each item with its page, box and confidence. A PDF page with a text layer is read from it; any other page is restored question-free first "
        "(a step is kept only when the page reads better) and read by OCR. The JSON follows the schema shipped as "
        "docintent/data/extract.schema.json. Running the same command again after a stop resumes.",
    )
    p.add_argument("target", help="an image, a PDF, a folder (searched recursively) or a quoted glob")
    p.add_argument(
        "--out", "-o", required=True, metavar="FILE", help="the output file (.json, or .md with --format md)"
    )
    p.add_argument(
        "--format",
        choices=("json", "md"),
        default=None,
        help="json (the schema) or md (Markdown); default: from the output's suffix, else json",
    )
    p.add_argument(
        "--tables", metavar="DIR", help="also write every table and every chart's data as a CSV file into DIR"
    )
    p.add_argument(
        "--no-restore", action="store_true", help="read the pages as they are (no question-free restoration)"
    )
    p.add_argument(
        "--engine",
        choices=ENGINE_KINDS,
        default=None,
        metavar="KIND",
        help="OCR engine for pages without a text layer: %(choices)s (default DOCINTENT_OCR_ENGINE, else rapidocr)",
    )
    add_pages_argument(p, "pages of each PDF, counted from 1 (default all)")
    add_progress_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..extraction import extract_to

    fmt = args.format or ("md" if Path(args.out).suffix.lower() in (".md", ".markdown") else "json")
    try:
        summary = extract_to(
            args.target,
            args.out,
            fmt=fmt,
            pages=args.pages,
            restore=not args.no_restore,
            engine=args.engine,
            tables_dir=args.tables,
            progress=False if args.no_progress else None,
        )
    except KeyboardInterrupt:
        print(
            f"docintent extract: interrupted; the pages read so far are kept beside {args.out}; run the same "
            "command again to resume",
            file=sys.stderr,
        )
        return 130
    print(
        f"{args.out}: {summary.pages} page(s) ({summary.new_pages} read now, {summary.skipped} already done, "
        f"{summary.failed} with errors) in {summary.seconds:.1f} s"
        + (f"; tables as CSV in {args.tables}" if args.tables else "")
    )
    if summary.failed:
        print(f'{summary.failed} page(s) could not be read; see "errors" in {args.out}', file=sys.stderr)
    return 0
