"""Time per page of ``docintent extract``: a 20-page born-digital PDF (text layer), the same pages as images (OCR,
no restoration) and a folder of 10 captures (question-free restoration, then OCR).

    python benchmarks/extract_speed.py --pdf /usr/share/doc/gnuplot/gnuplot.pdf --captures benchmarks/out/extract_captures

The captures are made from the held-out table pages of ``benchmarks/table_structure.py build`` (scaled, blurred,
unevenly lit, noised, JPEG) when the folder does not exist. Each case runs with the OCR cache off, so every
page is read; seconds are wall-clock medians per page on this machine, with the load average beside them.
Writes ``benchmarks/results/extract_speed.{json,md}``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from statistics import median

sys.path.insert(0, str(Path(__file__).resolve().parent))

RESULTS = Path(__file__).resolve().parent / "results"


def _captures(folder: Path, tables: Path) -> None:
    import cv2

    from table_structure import capture

    folder.mkdir(parents=True, exist_ok=True)
    rows = [json.loads(line) for line in (tables / "tables.jsonl").read_text().splitlines()]
    rows = [r for r in rows if r["split"] == "heldout"][::6][:10]
    for n, row in enumerate(rows):
        img, _ = capture(cv2.imread(str(tables / row["image"])), seed=1000 + n)
        cv2.imwrite(str(folder / f"capture-{n:02d}.jpg"), img)


def _case(name: str, target: str, pages: str | None, restore: bool, workdir: Path) -> dict:
    from docintent.extraction import extract_to

    out = workdir / f"{name}.json"
    t0 = time.perf_counter()
    cpu0 = time.process_time()
    summary = extract_to(target, out, pages=pages, restore=restore, progress=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    data = json.loads(out.read_text())
    per_page = [p["seconds"] for d in data["documents"] for p in d["pages"]]
    blocks = sum(len(p["blocks"]) for d in data["documents"] for p in d["pages"])
    tables = sum(len(p["tables"]) for d in data["documents"] for p in d["pages"])
    restored = sum(1 for d in data["documents"] for p in d["pages"] if p["restored"])
    return {
        "case": name,
        "pages": summary.pages,
        "failed": summary.failed,
        "wall_s": round(wall, 2),
        "cpu_s": round(cpu, 2),
        "median_s_per_page": round(median(per_page), 3) if per_page else None,
        "blocks": blocks,
        "tables": tables,
        "pages_restored": restored,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pdf", default="/usr/share/doc/gnuplot/gnuplot.pdf")
    parser.add_argument("--pages", default="1-20")
    parser.add_argument("--captures", default="benchmarks/out/extract_captures")
    parser.add_argument("--tables", default="benchmarks/out/tableset")
    args = parser.parse_args()
    os.environ["DOCINTENT_CACHE"] = "0"
    captures = Path(args.captures)
    if not captures.exists():
        _captures(captures, Path(args.tables))
    from docintent.document import Document
    from docintent.io import save_page

    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        images = work / "pdf-as-images"
        images.mkdir()
        doc = Document(args.pdf, pages="1-5")
        for n in doc.numbers:
            save_page(doc.page(n), images / f"page-{n:02d}.png")
        cases = [
            _case("pdf-text-layer", args.pdf, args.pages, True, work),
            _case("pdf-pages-as-images-ocr", str(images), None, False, work),
            _case("captures-restore-ocr", str(captures), None, True, work),
        ]
    figures = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "load_before": round(load, 2),
        "load_after": round(os.getloadavg()[0], 2),
        "pdf": args.pdf,
        "cases": cases,
    }
    print(json.dumps(figures, indent=1))
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "extract_speed.json").write_text(json.dumps(figures, indent=1) + "\n")
    lines = [
        "# docintent extract: time per page (benchmarks/extract_speed.py)",
        "",
        f"{figures['date']}, load {figures['load_before']} -> {figures['load_after']}, OCR cache off.",
        "",
        "| case | pages | failed | wall s | CPU s | median s / page | blocks | tables | pages restored |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c in cases:
        lines.append(
            f"| {c['case']} | {c['pages']} | {c['failed']} | {c['wall_s']} | {c['cpu_s']} | {c['median_s_per_page']} "
            f"| {c['blocks']} | {c['tables']} | {c['pages_restored']} |"
        )
    (RESULTS / "extract_speed.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
