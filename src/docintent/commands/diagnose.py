"""``docintent diagnose IMAGE``: the measured degradation signals of a page and what needs restoring."""

from __future__ import annotations

import argparse
import json

from ._common import add_pages_argument, region_arg

#: Shown under ``docintent diagnose --help``.
EXAMPLES = ("docintent diagnose photo.jpg",)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "diagnose",
        help="measure blur, shadow, warp, moire, appearance and orientation of a page (no model)",
        description="Print one severity in [0, 1] per degradation family, the families above their "
        "thresholds (most severe first), the rotation that makes the page upright, and the raw "
        "measurements behind the severities.",
    )
    p.add_argument("image")
    add_pages_argument(p, "page of a PDF, counted from 1 (default 1)")
    p.add_argument(
        "--region", type=region_arg, help="x0,y0,x1,y1 in [0,1] or 0-1000 integers: measure only this region"
    )
    p.add_argument("--json", action="store_true", help="print everything as JSON")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..perception.signals import Thresholds, measure, past_thresholds, severities
    from ._common import one_page

    page = one_page(args.image, args.pages)
    signals = measure(page, args.region)
    thresholds = Thresholds()
    measured = severities(page, args.region)
    found = past_thresholds(measured, thresholds)
    if args.json:
        print(
            json.dumps(
                {
                    "diagnosis": found,
                    "rotation": signals.rotation,
                    "severities": measured,
                    "thresholds": {f: thresholds.of(f) for f in measured},
                    "raw": dict(signals.raw),
                },
                indent=2,
            )
        )
        return 0
    for family, value in sorted(measured.items(), key=lambda kv: -kv[1]):
        mark = "*" if family in found else " "
        print(f"{mark} {family:<12} {value:.2f}  (threshold {thresholds.of(family):.2f})")
    print(f"diagnosis: {', '.join(found) or 'nothing to restore'}")
    if signals.rotation:
        print(f"upright with: {signals.rotation}")
    return 0
