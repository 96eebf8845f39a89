"""``docintent ocr IMAGE``: read the text of a page (optionally a region) with an OCR engine."""

from __future__ import annotations

import argparse
import json

from ._common import ENGINE_KINDS, add_pages_argument, region_arg

#: Shown under ``docintent ocr --help``.
EXAMPLES = (
    "docintent ocr photo.jpg --upright",
    "docintent ocr report.pdf --pages 2 --json",
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ocr", help="read the text of an image or PDF page")
    p.add_argument("image")
    p.add_argument(
        "--engine",
        choices=ENGINE_KINDS,
        default=None,
        metavar="KIND",
        help="OCR engine: %(choices)s (default DOCINTENT_OCR_ENGINE, else rapidocr)",
    )
    add_pages_argument(p, "page of a PDF, counted from 1 (default 1)")
    p.add_argument("--region", type=region_arg, help="x0,y0,x1,y1 in [0,1] or 0-1000 integers: read only this region")
    p.add_argument("--upright", action="store_true", help="detect the page orientation and rotate it upright first")
    p.add_argument("--json", action="store_true", help="print lines, words, boxes and confidences as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..ocr import detect_orientation, get_engine
    from ..tools import get_tool
    from ._common import one_page

    page = one_page(args.image, args.pages)
    if args.upright:
        fix = detect_orientation(page).fix
        if fix:
            page = get_tool(fix).run(page)
    result = get_engine(args.engine).read(page, args.region)
    if args.json:
        data = result.to_dict()
        data["ops"] = list(page.ops)
        print(json.dumps(data, indent=2))
    else:
        print(result.text)
    return 0
