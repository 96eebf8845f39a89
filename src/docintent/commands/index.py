"""``docintent index``: build (or resume) a page index of PDFs and images for retrieval."""

from __future__ import annotations

import argparse
import sys

from ._common import ENGINE_KINDS, add_progress_argument, dpi_arg
from ._scale import add_executor_arguments, executor_from_args

#: Shown under ``docintent index --help``.
EXAMPLES = ("docintent index docs/*.pdf --out index/",)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "index",
        help="index the pages of PDFs/images for `docintent search` (resumes an interrupted build)",
        description="Render and read every page (PDF text layer, OCR where there is none), give each an opaque "
        "shuffled handle, and write text, provenance and a BM25 index under --out. Re-running the same command "
        "resumes an interrupted build without redoing finished pages.",
    )
    p.add_argument("inputs", nargs="+", help="PDF or image files, or directories searched recursively")
    p.add_argument("--out", required=True, help="index directory to create or resume")
    p.add_argument(
        "--text",
        choices=["auto", "pdf", "ocr"],
        default="auto",
        help="page text source (default: auto = text layer, OCR when missing)",
    )
    p.add_argument(
        "--ocr-engine",
        choices=ENGINE_KINDS,
        default=None,
        metavar="KIND",
        help="OCR engine for pages without text: %(choices)s (default: DOCINTENT_OCR_ENGINE, else rapidocr)",
    )
    p.add_argument(
        "--images",
        choices=["lazy", "jpeg"],
        default="lazy",
        help="re-render page images on demand (default) or store JPEGs",
    )
    p.add_argument("--dpi", type=dpi_arg, default=144, help="PDF rendering resolution (default 144)")
    p.add_argument("--seed", type=int, default=0, help="seed of the handle shuffle")
    p.add_argument("--overwrite", action="store_true", help="discard an existing index in --out")
    p.add_argument("--dense", action="store_true", help="also compute dense embeddings (needs docintent[dense])")
    add_progress_argument(p)
    add_executor_arguments(p, workers=True, model_calls=False)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..retrieval import PageIndex, build_index

    try:
        report = build_index(
            args.inputs,
            args.out,
            dpi=args.dpi,
            text=args.text,
            ocr=args.ocr_engine,
            images=args.images,
            seed=args.seed,
            overwrite=args.overwrite,
            progress=False if args.no_progress else None,
            # The default reads pages here, one after another, as before executors existed.
            executor=executor_from_args(args) if args.executor == "ray" or (args.workers or 1) > 1 else None,
        )
    except KeyboardInterrupt:
        print(
            f"docintent index: interrupted; the pages read so far are saved in {args.out}; "
            "run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    sources = ", ".join(f"{k}: {v}" for k, v in sorted(report.pages_by_source.items())) or "none"
    print(
        f"{args.out}: {report.pages_total} pages ({report.pages_done_before} already done, "
        f"{report.pages_processed} processed in {report.seconds:.1f} s; text from {sources})"
    )
    for skipped in report.skipped_files:
        print(f"docintent index: skipped {skipped}", file=sys.stderr)
    if args.dense:
        from ..retrieval import DenseRetriever

        index = PageIndex.open(args.out)
        _ = DenseRetriever(index).passages.embeddings  # reading them builds and stores the passage embeddings
        print(f"{args.out}: dense embeddings ready")
    return 0
