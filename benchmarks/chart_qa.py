"""Charts read as data tables and chart questions answered over them, on charts whose data is known.

    python benchmarks/chartset/build.py --out benchmarks/out/chartset          # the charts (see its README)
    python benchmarks/chart_qa.py --data benchmarks/out/chartset --split heldout --condition clean --save
    python benchmarks/chart_qa.py --split heldout --condition captured --save
    python benchmarks/chart_qa.py --split heldout --condition captured-restored --save

Each chart image (``clean``: the render; ``captured``: its seeded photo-like capture, read as it is, without
restoration; ``captured-restored``: the capture restored question-free first, as ``docintent extract`` does,
:func:`docintent.strategies.auto.restore_auto`, and read on the restored page) is read by the project's OCR and
:func:`docintent.reader.chart_table.read_chart`, and scored:

- **cell accuracy**: the share of gold cells (series x category) whose value was read within 5 % of the gold
  value (a category is matched by its name, a series by its name, or by position in a one-series chart); a gold
  cell the reader did not produce, or left unread, counts as wrong;
- **relaxed accuracy** of the chart questions (:func:`docintent.reader.chart_qa.answer`): a number within 5 %
  of the gold answer, a category or trend word equal after case and space folding, a count exact;
  reported over all charts and over the charts without printed values.

Figures are written to ``benchmarks/results/chart_qa.{md,json}`` (keyed by split and condition). The development
looks are the ones the chart reader was written on; report the held-out ones.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def _num(text: str) -> float | None:
    t = text.replace(",", "").replace("$", "").replace("%", "").strip()
    t = re.sub(r"\s*(kt|k|m)$", "", t, flags=re.I)
    try:
        return float(t)
    except ValueError:
        return None


def relaxed(pred: str, gold: str, kind: str) -> float:
    """1.0 when ``pred`` answers ``gold``: numbers within 5 % (counts exact), words equal after folding."""
    if kind in ("number", "count"):
        a, b = _num(pred), _num(gold)
        if a is None or b is None:
            return 0.0
        if kind == "count":
            return float(a == b)
        return float(abs(a - b) <= 0.05 * abs(b) + 1e-9)
    fold = lambda s: re.sub(r"[^a-z0-9]", "", s.lower())
    return float(fold(pred) == fold(gold) and bool(fold(gold)))


def _name_score(a: str, b: str) -> float:
    from rapidfuzz import fuzz

    return fuzz.ratio(a.lower().strip(), b.lower().strip())


def cell_accuracy(chart, gold: dict) -> tuple[int, int]:
    """(gold cells read within 5 %, gold cells) of one chart."""
    total = len(gold["series"]) * len(gold["categories"])
    if chart is None:
        return 0, total
    right = 0
    for s_i, s in enumerate(gold["series"]):
        if len(gold["series"]) == 1 and len(chart.series) == 1:
            series = chart.series[0]
        else:
            scored = [(_name_score(s, name), name) for name in chart.series]
            best = max(scored, default=(0.0, ""))
            series = best[1] if best[0] >= 70 else None
        for c_i, c in enumerate(gold["categories"]):
            g = gold["values"][s_i][c_i]
            scored = [(_name_score(c, name), name) for name in chart.categories]
            best = max(scored, default=(0.0, ""))
            if series is None or best[0] < 70:
                continue
            got = chart.value(series, best[1])
            if got is not None and got.value is not None and abs(got.value - g) <= 0.05 * abs(g) + 1e-9:
                right += 1
    return right, total


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="benchmarks/out/chartset")
    ap.add_argument("--split", choices=("dev", "heldout"), default="dev")
    ap.add_argument("--condition", choices=("clean", "captured", "captured-restored"), default="clean")
    ap.add_argument("--engine", default="rapidocr")
    ap.add_argument("--looks", default="", help="comma-separated looks (default: every look of the split)")
    ap.add_argument("--kinds", default="", help="comma-separated chart kinds (default all)")
    ap.add_argument("--limit", type=int, default=0)
    ap.add_argument("--save", action="store_true")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()

    import numpy as np
    from PIL import Image

    from docintent.layout.lines import Layout
    from docintent.ocr import get_engine
    from docintent.page import Page
    from docintent.reader.chart_qa import answer as chart_answer
    from docintent.reader.chart_table import read_chart

    data = Path(args.data)
    rows = [
        json.loads(line) for line in (data / "charts.jsonl").read_text(encoding="utf-8").splitlines() if line.strip()
    ]
    rows = [r for r in rows if r["split"] == args.split]
    if args.looks:
        rows = [r for r in rows if r["look"] in args.looks.split(",")]
    if args.kinds:
        rows = [r for r in rows if r["kind"] in args.kinds.split(",")]
    if args.limit:
        rows = rows[: args.limit]
    engine = get_engine(args.engine)
    cells = [0, 0]
    by_kind: dict[str, list[int]] = {}
    qa_all: list[float] = []
    qa_unlabelled: list[float] = []
    qa_op: dict[str, list[float]] = {}
    qa_kind: dict[str, list[float]] = {}
    misses: dict[str, int] = {}
    found = 0
    seconds: list[float] = []
    restore_seconds: list[float] = []
    restored_by: dict[str, int] = {}
    folder = "clean" if args.condition == "clean" else "captured"
    for row in rows:
        img = np.asarray(Image.open(data / folder / f"{row['id']}.png").convert("RGB"))
        page = Page.from_array(img, source=row["id"])
        if args.condition == "captured-restored":
            from docintent.strategies.auto import restore_auto

            t0 = time.perf_counter()
            page, steps = restore_auto(page, engine=args.engine)
            restore_seconds.append(time.perf_counter() - t0)
            for step in steps:
                if step.verdict == "keep":
                    restored_by[step.tool] = restored_by.get(step.tool, 0) + 1
        layout = Layout.from_ocr(engine.read(page))
        t0 = time.perf_counter()
        chart = read_chart(layout, page)
        seconds.append(time.perf_counter() - t0)
        found += chart is not None
        m, n = cell_accuracy(chart, row["table"])
        cells[0] += m
        cells[1] += n
        by_kind.setdefault(row["kind"], [0, 0])
        by_kind[row["kind"]][0] += m
        by_kind[row["kind"]][1] += n
        for q in row["questions"]:
            got = chart_answer(chart, q["question"]) if chart is not None else None
            score = relaxed(got.text if got else "", q["answer"], q["kind"])
            qa_all.append(score)
            if not row["labelled"]:
                qa_unlabelled.append(score)
            qa_op.setdefault(q["op"], []).append(score)
            qa_kind.setdefault(row["kind"], []).append(score)
            if score < 1:
                misses[q["op"]] = misses.get(q["op"], 0) + 1
            if args.verbose and score < 1:
                print(
                    f"  {row['id']} {q['op']}: {q['question']!r} gold {q['answer']!r} got {got.text if got else None!r}"
                )
        if args.verbose:
            print(
                f"{row['id']}: cells {m}/{n} chart {chart.kind if chart else None} "
                f"series {chart.series if chart else None} cats {len(chart.categories) if chart else 0}",
                flush=True,
            )

    def pct(v: list[float]) -> float:
        return round(100 * sum(v) / max(len(v), 1), 1)

    figures = {
        "split": args.split,
        "condition": args.condition,
        "engine": args.engine,
        "charts": len(rows),
        "styles": len({r["style"] for r in rows}),
        "charts_found": found,
        "cell_accuracy": round(100 * cells[0] / max(cells[1], 1), 1),
        "cells": cells[1],
        "cell_accuracy_by_kind": {k: round(100 * v[0] / max(v[1], 1), 1) for k, v in sorted(by_kind.items())},
        "qa_relaxed_accuracy": pct(qa_all),
        "qa_questions": len(qa_all),
        "qa_without_printed_values": pct(qa_unlabelled),
        "qa_questions_without_printed_values": len(qa_unlabelled),
        "qa_by_op": {k: pct(v) for k, v in sorted(qa_op.items())},
        "qa_by_kind": {k: pct(v) for k, v in sorted(qa_kind.items())},
        "read_seconds_median": round(float(np.median(seconds)), 3) if seconds else None,
        **(
            {
                "restore_seconds_median": round(float(np.median(restore_seconds)), 3),
                "restored_steps_kept": dict(sorted(restored_by.items())),
            }
            if restore_seconds
            else {}
        ),
        "date": time.strftime("%Y-%m-%d"),
        "machine": platform.machine(),
    }
    print(json.dumps(figures, indent=1))
    if args.save:
        RESULTS.mkdir(exist_ok=True)
        path = RESULTS / "chart_qa.json"
        saved = json.loads(path.read_text()) if path.exists() else {}
        saved[f"{args.split}/{args.condition}"] = figures
        path.write_text(json.dumps(saved, indent=1) + "\n")
        lines = [
            "# Charts read as data tables (benchmarks/chart_qa.py)",
            "",
            "| split | condition | charts (styles) | found | cell acc. | QA relaxed acc. | QA without printed values "
            "| s / chart (read) | s / chart (restore) |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for _key, f in sorted(saved.items()):
            lines.append(
                f"| {f['split']} | {f['condition']} | {f['charts']} ({f['styles']}) | {f['charts_found']} "
                f"| {f['cell_accuracy']} | {f['qa_relaxed_accuracy']} ({f['qa_questions']}) "
                f"| {f['qa_without_printed_values']} ({f['qa_questions_without_printed_values']}) "
                f"| {f['read_seconds_median']} | {f.get('restore_seconds_median', '-')} |"
            )
        (RESULTS / "chart_qa.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
