"""Tools run on clean born-digital renders: a page with nothing to restore should run no tool.

    python benchmarks/clean_tools.py --split test            # held-out: real-page test renders + held-out tables
    python benchmarks/clean_tools.py --split dev             # the renders thresholds may be chosen on

Pages: the clean renders of the real-page split (``benchmarks/out/realpages/<split>``, one question each, the
first of its page) and, for ``test``, the clean held-out table pages of ``benchmarks/table_structure.py build``
(one table question each; ``dev``: the development table styles). Each is asked with the ``docintent``
strategy and the offline reader; the figure is tools run per page (a tool that ran counts, kept or rolled back)
and the degradations the diagnosis named. Writes ``benchmarks/results/clean_tools_<split>.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"


def pages(split: str, limit: int) -> list[tuple[str, str, str, str]]:
    """(name, image path, question, task) of each clean page."""
    out: list[tuple[str, str, str, str]] = []
    real = ROOT / "out" / "realpages" / split
    seen: set[str] = set()
    for line in (real / "samples.jsonl").read_text(encoding="utf-8").splitlines():
        s = json.loads(line)
        clean = s["meta"].get("clean_image")
        if clean and clean not in seen:
            seen.add(clean)
            out.append((f"real:{s['meta']['page']}", str(real / clean), s["question"], s["task"]))
    tables = ROOT / "out" / "tableset" / "tables.jsonl"
    if tables.exists():
        want = "heldout" if split == "test" else "dev"
        for line in tables.read_text(encoding="utf-8").splitlines():
            t = json.loads(line)
            if t["split"] == want and int(t["id"].rsplit("-", 1)[1]) % 3 == 0:
                out.append(
                    (f"table:{t['id']}", str(tables.parent / t["image"]), t["questions"][0]["question"], "table")
                )
    return out[:limit] if limit else out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--split", choices=("dev", "test"), default="test")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    import docintent

    rows = []
    t0 = time.perf_counter()
    for name, image, question, task in pages(args.split, args.limit):
        result = docintent.ask(image, question, task=task, strategy="docintent")
        diagnosed = [s.reason for s in result.trace if str(s.phase) == "A" and s.tool]
        rows.append(
            {
                "page": name,
                "tools_used": result.tools_used,
                "kept": list(result.tools_kept),
                "rolled_back": list(result.tools_rolled_back),
                "tools": [s.tool for s in result.trace if str(s.phase) == "tool" and s.tool],
                "why": diagnosed[:3],
            }
        )
        if args.verbose:
            print(name, rows[-1]["tools"], rows[-1]["kept"], flush=True)
    n = len(rows)
    tools = Counter(t for r in rows for t in r["tools"])
    figures = {
        "split": args.split,
        "pages": n,
        "tools_per_page": round(sum(r["tools_used"] for r in rows) / max(n, 1), 3),
        "pages_with_a_tool": sum(1 for r in rows if r["tools_used"]),
        "kept_per_page": round(sum(len(r["kept"]) for r in rows) / max(n, 1), 3),
        "tools": dict(tools.most_common()),
        "seconds": round(time.perf_counter() - t0, 1),
        "load": round(os.getloadavg()[0], 2),
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "rows": rows,
    }
    print(json.dumps({k: v for k, v in figures.items() if k != "rows"}, indent=1))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"clean_tools_{args.split}.json").write_text(json.dumps(figures, indent=1) + "\n")
    md = [
        f"# Tools run on clean renders ({args.split}; benchmarks/clean_tools.py)",
        "",
        f"{figures['date']}, load {figures['load']}: {n} pages, {figures['tools_per_page']} tools run per page, "
        f"{figures['pages_with_a_tool']} pages with a tool, {figures['kept_per_page']} kept per page.",
        "",
        "| tool | runs |",
        "|---|---:|",
    ] + [f"| {t} | {c} |" for t, c in tools.most_common()]
    (RESULTS / f"clean_tools_{args.split}.md").write_text("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
