"""What a cold first page costs: one full page read in a fresh process with every cache off, and where its CPU
seconds go (importing, building the networks, detection, recognition line by line, the orientation check).

    python benchmarks/first_page.py                      # 8 pages x (spinning threads, sleeping threads)
    python benchmarks/first_page.py --pages 4 --threads 1

Each page is read in its own new Python process (``DOCINTENT_CACHE=0``), as ``docintent ocr PAGE`` reads it:
the process pays for its imports and for building the ONNX sessions once, then detects the page's lines and
recognises each line alone. The pages are the held-out real-page split's clean renders (A4 at 2000 px on the
long side) and one capture of each. Every page is read under each ``--spin`` condition in turn (ONNX Runtime's
thread spinning on, its default, and off, docintent's default), in alternating order, so load drift favours
neither. CPU seconds are the process's own (all threads), so they are comparable across load; wall seconds are
not. The load average is sampled around every read.

The breakdown also gives recognition's cost per line and per 1,000 pixels of network input width (a line crop
is scaled to the recognition network's 48-px height, so a long line of small text costs in proportion to its
length), which is what sets a page's cost apart from figures quoted for short lines.

Prints the table and writes ``benchmarks/results/first_page.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
SPLIT = ROOT / "benchmarks" / "out" / "realpages" / "test"

#: The child: one cold read of one page, timed by part, printed as one JSON line.
CHILD = r"""
import json, sys, time
c_start, w_start = time.process_time(), time.perf_counter()
import numpy as np
from docintent.io import load_page
from docintent.ocr import detect_orientation, get_engine
from docintent.ocr.engines import RapidOcrEngine
c_import = time.process_time()
parts = {"sessions": 0.0, "detection": 0.0, "recognition": 0.0}
widths = []

def timed(name, fn):
    def wrapper(*args, **kwargs):
        c = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            parts[name] += time.process_time() - c
    return wrapper

engine = get_engine("rapidocr")
rapid = engine.load()
# RapidOCR builds its sessions on first use: build them here, timed apart ("model load apart").
c = time.process_time()
rapid._load_det_model() if hasattr(rapid, "_load_det_model") else None
recogniser = rapid._load_rec_model()
parts["sessions"] = time.process_time() - c
RapidOcrEngine.detect_lines = timed("detection", RapidOcrEngine.detect_lines)
original_one = RapidOcrEngine._recognise_one

def one(engine_, recogniser_, bgr, quad):
    _, height, min_width = recogniser_.rec_image_shape
    widths.append(max(min_width, int(np.ceil(height * bgr.shape[1] / max(1, bgr.shape[0])))))
    return original_one(engine_, recogniser_, bgr, quad)

RapidOcrEngine._recognise_one = staticmethod(one)
RapidOcrEngine.recognize_lines = timed("recognition", RapidOcrEngine.recognize_lines)
page = load_page(sys.argv[1])
c_read, w_read = time.process_time(), time.perf_counter()
result = engine.read(page)
read_cpu, read_wall = time.process_time() - c_read, time.perf_counter() - w_read
c = time.process_time()
orientation = detect_orientation(page)
orientation_cpu = time.process_time() - c
print(json.dumps({"import_cpu": c_import - c_start, "sessions_cpu": parts["sessions"], "read_cpu": read_cpu,
                  "read_wall": read_wall, "detection_cpu": parts["detection"], "recognition_cpu": parts["recognition"],
                  "orientation_cpu": orientation_cpu, "lines": len(result.lines), "rec_width": int(sum(widths)),
                  "size": list(page.size), "process_cpu": time.process_time() - c_start,
                  "process_wall": time.perf_counter() - w_start, "text": result.text[:80]}))
"""


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _pages(count: int) -> list[Path]:
    rows = [json.loads(line) for line in (SPLIT / "samples.jsonl").read_text().splitlines() if line.strip()]
    clean, captures, seen = [], [], set()
    for row in rows:
        page = row["meta"]["page"]
        if page in seen:
            continue
        seen.add(page)
        clean.append(SPLIT / row["meta"]["clean_image"])
        captures.append(SPLIT / row["image"])
    half = max(1, count // 2)
    return clean[:half] + captures[: count - half]


def _read(page: Path, spin: bool, threads: int | None) -> dict[str, Any]:
    env = {**os.environ, "DOCINTENT_CACHE": "0", "DOCINTENT_SPIN": "1" if spin else "0"}
    if threads is not None:
        env["DOCINTENT_THREADS"] = str(threads)
    before = _load()
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(page)], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode:
        raise SystemExit(f"{page}: the read failed: {done.stderr.strip().splitlines()[-1:]}")
    row = json.loads(done.stdout.strip().splitlines()[-1])
    row.update(page=page.name, spin=spin, load_before=before, load_after=_load())
    return row


def _median(rows: list[dict[str, Any]], key: str) -> float:
    return round(statistics.median(r[key] for r in rows), 3)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--pages", type=int, default=8, help="pages to read (half clean renders, half captures)")
    ap.add_argument("--threads", type=int, default=None, help="DOCINTENT_THREADS for the reads (default: unset)")
    ap.add_argument("--label", default="", help="suffix of the results files")
    args = ap.parse_args(argv)
    pages = _pages(args.pages)
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for i, page in enumerate(pages):
        for spin in (True, False) if i % 2 == 0 else (False, True):
            row = _read(page, spin, args.threads)
            rows.append(row)
            print(
                f"  {page.name} spin={'on' if spin else 'off'}: read {row['read_cpu']:.2f} CPU-s "
                f"(detection {row['detection_cpu']:.2f}, recognition {row['recognition_cpu']:.2f} for "
                f"{row['lines']} lines), wall {row['read_wall']:.1f} s, load {row['load_after']}",
                flush=True,
            )
    summary = {}
    for spin in (True, False):
        group = [r for r in rows if r["spin"] is spin]
        rec_per_line = [1000 * r["recognition_cpu"] / max(1, r["lines"]) for r in group]
        rec_per_kpx = [1000 * r["recognition_cpu"] / max(1, r["rec_width"] / 1000) for r in group]
        summary["on" if spin else "off"] = {
            "reads": len(group),
            "read_cpu_median": _median(group, "read_cpu"),
            "read_cpu_max": round(max(r["read_cpu"] for r in group), 3),
            "read_wall_median": _median(group, "read_wall"),
            "detection_cpu_median": _median(group, "detection_cpu"),
            "recognition_cpu_median": _median(group, "recognition_cpu"),
            "orientation_cpu_median": _median(group, "orientation_cpu"),
            "import_cpu_median": _median(group, "import_cpu"),
            "sessions_cpu_median": _median(group, "sessions_cpu"),
            "process_cpu_median": _median(group, "process_cpu"),
            "lines_median": statistics.median(r["lines"] for r in group),
            "recognition_ms_per_line_median": round(statistics.median(rec_per_line), 1),
            "recognition_ms_per_1000px_median": round(statistics.median(rec_per_kpx), 1),
            "rec_width_per_line_median": round(statistics.median(r["rec_width"] / max(1, r["lines"]) for r in group)),
        }
    ratio = [
        a["read_cpu"] / b["read_cpu"]
        for a in rows
        if a["spin"]
        for b in rows
        if not b["spin"] and b["page"] == a["page"]
    ]
    loads = [r["load_after"] for r in rows]
    out = {
        "date": time.strftime("%Y-%m-%d %H:%M"),
        "machine": f"{platform.machine()}, {os.cpu_count()} cores",
        "threads": args.threads,
        "pages": [p.name for p in pages],
        "seconds": round(time.perf_counter() - started, 1),
        "load_median": statistics.median(loads),
        "load_min": min(loads),
        "load_max": max(loads),
        "spin_over_sleep_cpu_median": round(statistics.median(ratio), 3),
        "summary": summary,
        "rows": rows,
    }
    name = f"first_page{'_' + args.label if args.label else ''}"
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / f"{name}.json").write_text(json.dumps(out, indent=1) + "\n")
    md = _markdown(out)
    (RESULTS / f"{name}.md").write_text(md)
    print(md)
    return 0


def _markdown(out: dict[str, Any]) -> str:
    s = out["summary"]
    lines = [
        "# A cold first page (benchmarks/first_page.py)",
        "",
        f"{len(out['pages'])} pages (held-out real-page split: clean A4 renders at 2000 px and captures), each read "
        f"in a fresh process with caches off, under each condition; DOCINTENT_THREADS="
        f"{out['threads'] if out['threads'] is not None else 'unset'}; {out['date']}; {out['machine']}; load average "
        f"median {out['load_median']} (min {out['load_min']}, max {out['load_max']}).",
        "",
        "| CPU seconds, median per page | threads spin (ONNX Runtime's default) | threads sleep (docintent's default) |",
        "|---|---:|---:|",
    ]
    rows = [
        ("full-page read (model load apart)", "read_cpu_median"),
        ("  detection", "detection_cpu_median"),
        ("  recognition", "recognition_cpu_median"),
        ("orientation check", "orientation_cpu_median"),
        ("imports (once per process)", "import_cpu_median"),
        ("building the networks (once per process)", "sessions_cpu_median"),
        ("whole process", "process_cpu_median"),
        ("read, wall seconds (load-dependent)", "read_wall_median"),
        ("lines per page", "lines_median"),
        ("recognition CPU ms per line", "recognition_ms_per_line_median"),
        ("recognition input width per line (px at height 48)", "rec_width_per_line_median"),
        ("recognition CPU ms per 1,000 px of input width", "recognition_ms_per_1000px_median"),
    ]
    for label, key in rows:
        lines.append(f"| {label} | {s['on'][key]} | {s['off'][key]} |")
    lines += ["", f"Per page, spinning over sleeping read CPU: median {out['spin_over_sleep_cpu_median']}x.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
