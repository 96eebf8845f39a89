"""``docintent synth``: generate the synthetic wild-document benchmark."""

from __future__ import annotations

import argparse

from ._common import positive_int

#: Shown under ``docintent synth --help``.
EXAMPLES = ("docintent synth --out data/synth --n 20 --seed 1",)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "synth",
        help="generate a synthetic wild-document benchmark (documents, charts, tables; 4 captures each)",
        description="Render documents, charts and tables, write questions with accepted answers, and photograph "
        "each page under 4 capture conditions (perspective, curl, fold, shadow, blur, moire, "
        "rotation, noise, JPEG, colour cast...). Same seed, same bytes.",
    )
    p.add_argument("--out", required=True, help="output directory (created if missing)")
    p.add_argument("--n", type=positive_int, default=30, help="questions per family (default 30)")
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    p.add_argument(
        "--families",
        default="doc,chart,table",
        help="comma-separated families among doc, chart, table (default all three)",
    )
    p.add_argument(
        "--questions-per-document",
        type=positive_int,
        default=3,
        help="questions that share one document and its 4 captures (default 3)",
    )
    p.add_argument("--workers", type=positive_int, default=2, help="worker processes (default 2)")
    p.add_argument("--no-contact-sheet", action="store_true", help="skip contact_sheet.jpg")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..synth import generate

    summary = generate(
        args.out,
        n=args.n,
        seed=args.seed,
        families=args.families.split(","),
        questions_per_document=args.questions_per_document,
        workers=args.workers,
        contact_sheet=not args.no_contact_sheet,
    )
    print(
        f"wrote {summary.samples} samples ({summary.questions} questions x 4 captures) on "
        f"{summary.documents} documents, {summary.images} images, to {summary.out} "
        f"in {summary.seconds:.1f} s"
    )
    shares = ", ".join(f"{k} {v:.0%}" for k, v in sorted(summary.degradation_share.items(), key=lambda kv: -kv[1]))
    print(f"degradation share of images: {shares}")
    return 0
