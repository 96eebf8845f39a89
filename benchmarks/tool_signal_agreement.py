"""Do the tools agree with the signals that select them? Deblurring and dewarping may decline a page
(``deblurring:sharp``, ``dewarping:none``); each decline while the signal that would have chosen the tool is
above its threshold is a restoration round spent for nothing (the tool runs, Phase B compares two identical
pages).

For every distinct capture of a set (2048 px, as ``ask`` sees it) this measures the page's blur and warp
severities and runs both tools, then counts the four cases per family: signal high / low x tool acts /
declines, with the recorded capture degradations beside them (analysis only: nothing here is shown to a brain).

    python benchmarks/tool_signal_agreement.py --dataset synth:benchmarks/out/synth-s1-n12

Prints the table and writes ``benchmarks/results/tool_signal_agreement[_<label>].{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ["DOCINTENT_CACHE"] = "0"

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))

FAMILIES = {"blur": ("deblurring", ("defocus", "motion_blur")), "warp": ("dewarping", ("perspective", "curl", "fold"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="synth:benchmarks/out/synth-s1-n12")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--label", default="")
    args = parser.parse_args()

    from docintent.io import load_page, resize_longest
    from docintent.perception import Thresholds, signals
    from docintent.tools import get_tool
    from strategy_time import _datasets

    seen, captures = set(), []
    for s in _datasets().load_dataset(args.dataset):
        if s.image not in seen:
            seen.add(s.image)
            captures.append(s)
    if args.limit:
        captures = captures[: args.limit]
    thresholds = Thresholds()
    rows = []
    for i, s in enumerate(captures):
        page = resize_longest(load_page(s.image), 2048, upscale=True)
        measured = signals.measure(page, orientation=False)
        row = {"image": s.image, "degradations": list(s.degradations)}
        for family, (tool, _) in FAMILIES.items():
            after = get_tool(tool)(page)
            row[family] = {
                "severity": float(measured.severities[family]),
                "high": float(measured.severities[family]) > thresholds.of(family),
                "declined": after.hash == page.hash,
                "op": after.ops[-1],
            }
        rows.append(row)
        print(i + 1, s.image, {f: (round(row[f]["severity"], 2), row[f]["op"]) for f in FAMILIES}, flush=True)

    md = [
        f"{len(rows)} distinct captures of `{args.dataset}` at 2048 px. 'recorded' = the capture has one of the "
        "family's degradations.",
        "",
        "| family (tool) | signal high, tool declines | signal high, tool acts | signal low, tool declines | "
        "signal low, tool acts | declines among recorded | acts among not recorded |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for family, (tool, labels) in FAMILIES.items():
        cells = {(h, d): 0 for h in (True, False) for d in (True, False)}
        rec_decl = rec = notrec_act = notrec = 0
        for r in rows:
            f = r[family]
            cells[(f["high"], f["declined"])] += 1
            recorded = any(d in labels for d in r["degradations"])
            rec += recorded
            rec_decl += recorded and f["declined"]
            notrec += not recorded
            notrec_act += (not recorded) and not f["declined"]
        md.append(
            f"| {family} ({tool}) | {cells[(True, True)]} | {cells[(True, False)]} | {cells[(False, True)]} | "
            f"{cells[(False, False)]} | {rec_decl} / {rec} | {notrec_act} / {notrec} |"
        )
    table = "\n".join(md)
    print(table)
    RESULTS.mkdir(exist_ok=True)
    stem = "tool_signal_agreement" + (f"_{args.label}" if args.label else "")
    (RESULTS / f"{stem}.md").write_text(table + "\n")
    (RESULTS / f"{stem}.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
