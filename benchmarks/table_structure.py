"""Table structure on pages whose cells are known: cell-level F1 (text and position) and table QA.

    python benchmarks/table_structure.py build --out benchmarks/out/tableset --n 12 --seed 0
    python benchmarks/table_structure.py run --data benchmarks/out/tableset --split heldout --condition clean

``build`` renders every style of :mod:`tableset` (benchmarks/tableset/) in headless Chromium through Selenium,
takes a screenshot of each page and reads every cell's grid position, its text and the box of that text from the
DOM (a Range over the cell's text), so the truth is what the browser drew. ``run`` reads each page with the
project's OCR (``clean``: the screenshot; ``captured``: the screenshot scaled to 70 %, blurred, unevenly lit,
noised and JPEG-compressed with a per-page seed), builds the page's structure with
:func:`docintent.layout.structure.page_structure` and scores it:

- a predicted cell matches a gold cell when their texts agree (normalised edit similarity >= 0.8, case and
  spaces ignored) and each box holds the other's centre; cell F1 over the non-empty cells of every table on
  the page (a table not found costs its recall);
- neighbour-relation F1 (ICDAR 2013 style): pairs of horizontally or vertically adjacent non-empty cells, each
  cell named by its text, so a row or column split or merged wrongly costs relations even when the texts are
  right;
- table QA (``--qa``): the table questions answered by :func:`docintent.reader.table_qa.answer`, relaxed
  accuracy (numbers within 5 %, texts by ANLS >= 0.5 counted as its score).

Figures are written to ``benchmarks/results/table_structure.{md,json}`` (appended per split and condition).
The development styles are the ones the table code was tuned on; report the held-out ones.
"""

from __future__ import annotations

import argparse
import json
import platform
import re
import sys
import time
from pathlib import Path
from statistics import median

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from tableset import DEV_STYLES, HELDOUT_STYLES, make  # noqa: E402

RESULTS = Path(__file__).resolve().parent / "results"

_GOLD_JS = r"""
const dpr = window.devicePixelRatio;
const t = document.getElementById('t');
const rect = r => [r.left * dpr, r.top * dpr, r.right * dpr, r.bottom * dpr];
const cells = []; const taken = {};
let r = 0;
for (const tr of t.rows) {
  let c = 0;
  for (const cell of tr.cells) {
    while (taken[r + ',' + c]) c++;
    const span = cell.colSpan || 1;
    for (let k = 0; k < span; k++) taken[r + ',' + (c + k)] = 1;
    const range = document.createRange(); range.selectNodeContents(cell);
    const text = cell.innerText.replace(/\s+/g, ' ').trim();
    cells.push({row: r, col: c, colspan: span, header: cell.tagName === 'TH', text: text,
                text_box: text ? rect(range.getBoundingClientRect()) : null, cell_box: rect(cell.getBoundingClientRect())});
    c += span;
  }
  r++;
}
return {cells: cells, table_box: rect(t.getBoundingClientRect()),
        width: Math.ceil(document.documentElement.scrollWidth * dpr), height: Math.ceil(document.documentElement.scrollHeight * dpr)};
"""


def build(args: argparse.Namespace) -> None:
    import tempfile

    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    out = Path(args.out)
    (out / "pages").mkdir(parents=True, exist_ok=True)
    options = webdriver.ChromeOptions()
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        "--force-device-scale-factor=1.5",
    ):
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(executable_path="/usr/bin/chromedriver"))
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for style in DEV_STYLES + HELDOUT_STYLES:
                for i in range(args.n):
                    spec = make(args.seed, i, style)
                    src = Path(tmp) / "t.html"
                    src.write_text(spec.html(), encoding="utf-8")
                    driver.set_window_size(900, 1400)
                    driver.get(src.as_uri())
                    gold = driver.execute_script(_GOLD_JS)
                    h = int(gold["height"] / 1.5) + 10
                    driver.set_window_size(900, max(h, 400))
                    gold = driver.execute_script(_GOLD_JS)
                    name = f"{style}-{i:03d}.png"
                    driver.save_screenshot(str(out / "pages" / name))
                    split = "dev" if style in DEV_STYLES else "heldout"
                    rows.append(
                        {
                            "id": f"{style}-{i:03d}",
                            "split": split,
                            "style": style,
                            "kind": spec.kind,
                            "font": spec.font,
                            "image": f"pages/{name}",
                            "header_rows": len(spec.header),
                            "cells": gold["cells"],
                            "table_box": gold["table_box"],
                            "questions": spec.questions,
                        }
                    )
    finally:
        driver.quit()
    with open(out / "tables.jsonl", "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} tables in {out}")


def capture(img: np.ndarray, seed: int) -> tuple[np.ndarray, float]:
    """A photometric capture of ``img`` (geometry kept up to a uniform scale, returned)."""
    import cv2

    rng = np.random.default_rng(seed)
    scale = 0.7
    out = cv2.resize(img, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA).astype(np.float32)
    out = cv2.GaussianBlur(out, (0, 0), float(rng.uniform(0.6, 1.1)))
    h, w = out.shape[:2]
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    angle = rng.uniform(0, 2 * np.pi)
    ramp = np.cos(angle) * xx / w + np.sin(angle) * yy / h
    ramp = (ramp - ramp.min()) / max(float(np.ptp(ramp)), 1e-6)
    out *= (1.0 - float(rng.uniform(0.25, 0.45)) * ramp)[..., None]
    out += rng.normal(0, float(rng.uniform(4, 9)), out.shape)
    out = np.clip(out, 0, 255).astype(np.uint8)
    ok, enc = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, int(rng.integers(40, 65))])
    return cv2.imdecode(enc, cv2.IMREAD_COLOR), scale


def _norm(text: str) -> str:
    return re.sub(r"\s+", "", text).lower()


def _similar(a: str, b: str) -> float:
    from rapidfuzz.distance import Levenshtein

    a, b = _norm(a), _norm(b)
    if not a and not b:
        return 1.0
    return 1.0 - Levenshtein.distance(a, b) / max(len(a), len(b))


def _inside(point: tuple[float, float], box) -> bool:
    return box[0] <= point[0] <= box[2] and box[1] <= point[1] <= box[3]


def _centre(box) -> tuple[float, float]:
    return ((box[0] + box[2]) / 2, (box[1] + box[3]) / 2)


def score_cells(pred: list[dict], gold: list[dict]) -> tuple[int, int, int]:
    """(matched, predicted, gold) non-empty cells; boxes in the same pixel frame."""
    gold = [g for g in gold if g["text"]]
    pred = [p for p in pred if p["text"]]
    used: set[int] = set()
    matched = 0
    for p in pred:
        best, best_sim = None, 0.8
        for j, g in enumerate(gold):
            if j in used:
                continue
            box = g["text_box"]
            if not (_inside(_centre(p["box"]), g["cell_box"]) and _inside(_centre(box), _grow(p["box"], 4))):
                continue
            sim = _similar(p["text"], g["text"])
            if sim >= best_sim:
                best, best_sim = j, sim
        if best is not None:
            used.add(best)
            matched += 1
    return matched, len(pred), len(gold)


def _grow(box, px: float):
    return (box[0] - px, box[1] - px, box[2] + px, box[3] + px)


def relations(cells: list[dict]) -> set[tuple[str, str, str]]:
    """Adjacency relations between non-empty cells: (text, text, 'h' | 'v') for each nearest right / below."""
    grid: dict[tuple[int, int], dict] = {}
    for c in cells:
        for k in range(c.get("colspan", 1)):
            grid[(c["row"], c["col"] + k)] = c
    n_rows = max((r for r, _ in grid), default=-1) + 1
    n_cols = max((c for _, c in grid), default=-1) + 1
    out: set[tuple[str, str, str]] = set()
    for (r, c), cell in grid.items():
        if not cell["text"]:
            continue
        for cc in range(c + 1, n_cols):
            other = grid.get((r, cc))
            if other is not None and other is not cell and other["text"]:
                out.add((_norm(cell["text"]), _norm(other["text"]), "h"))
                break
        for rr in range(r + 1, n_rows):
            other = grid.get((rr, c))
            if other is not None and other is not cell and other["text"]:
                out.add((_norm(cell["text"]), _norm(other["text"]), "v"))
                break
    return out


def _f1(m: int, p: int, g: int) -> tuple[float, float, float]:
    prec = m / p if p else 0.0
    rec = m / g if g else 0.0
    return prec, rec, (2 * prec * rec / (prec + rec) if prec + rec else 0.0)


def _qa_score(pred: str, gold: str) -> float:
    from docintent.evaluation.metrics import anls

    def num(t: str) -> float | None:
        t = t.replace(",", "").replace("$", "").replace("%", "").strip()
        neg = t.startswith("(") and t.endswith(")")
        try:
            v = float(t.strip("()"))
        except ValueError:
            return None
        return -v if neg else v

    a, b = num(pred), num(gold)
    if b is not None and a is not None:
        return 1.0 if abs(a - b) <= 0.05 * max(abs(b), 1e-9) else 0.0
    return anls(pred, [gold])


def run(args: argparse.Namespace) -> None:
    import cv2

    from docintent.layout.structure import page_structure
    from docintent.ocr import get_engine
    from docintent.page import Page
    from docintent.reader.table_qa import answer as table_answer

    data = Path(args.data)
    rows = [json.loads(line) for line in (data / "tables.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["split"] == args.split]
    if args.styles:
        rows = [r for r in rows if r["style"] in args.styles.split(",")]
    if args.limit:
        rows = rows[: args.limit]
    engine = get_engine(args.engine)
    totals = {"cells": [0, 0, 0], "relations": [0, 0, 0]}
    by_style: dict[str, dict[str, list[int]]] = {}
    qa: dict[str, list[float]] = {}
    found = 0
    seconds: list[float] = []
    for n, row in enumerate(rows):
        img = cv2.imread(str(data / row["image"]), cv2.IMREAD_COLOR)
        scale = 1.0
        if args.condition == "captured":
            img, scale = capture(img, seed=hash(row["id"]) & 0xFFFF if False else n + 7919 * len(row["id"]))
        page = Page.from_array(cv2.cvtColor(img, cv2.COLOR_BGR2RGB), source=row["id"])
        ocr = engine.read(page)
        t0 = time.perf_counter()
        structure = page_structure(ocr, page.width, page.height, page=page)
        seconds.append(time.perf_counter() - t0)
        w, h = page.width, page.height
        gold = [
            dict(
                c,
                text_box=[v * scale for v in c["text_box"]] if c["text_box"] else None,
                cell_box=[v * scale for v in c["cell_box"]],
            )
            for c in row["cells"]
        ]
        pred: list[dict] = []
        pred_rel: set = set()
        for table in structure.tables:
            cells = [
                {
                    "text": c.text,
                    "row": c.row,
                    "col": c.col,
                    "colspan": c.colspan,
                    "box": (c.box.x0 * w, c.box.y0 * h, c.box.x1 * w, c.box.y1 * h),
                }
                for r in table.rows
                for c in r
            ]
            pred += cells
            pred_rel |= relations(cells)
        found += bool(structure.tables)
        m, p, g = score_cells(pred, gold)
        gold_rel = relations(gold)
        rel = (len(pred_rel & gold_rel), len(pred_rel), len(gold_rel))
        for key, val in (("cells", (m, p, g)), ("relations", rel)):
            for i in range(3):
                totals[key][i] += val[i]
                by_style.setdefault(row["style"], {"cells": [0, 0, 0], "relations": [0, 0, 0]})[key][i] += val[i]
        if args.qa:
            for q in row["questions"]:
                got = table_answer(structure.tables, q["question"])
                score = _qa_score(got.text if got else "", q["answer"])
                qa.setdefault(q["op"], []).append(score)
                if args.verbose and score < 1:
                    print(f"  qa {q['op']}: {q['question']!r} gold {q['answer']!r} got {got.text if got else None!r}")
        if args.verbose:
            print(
                f"{row['id']}: cells {_f1(m, p, g)[2]:.3f} ({m}/{p}/{g}) relations {_f1(*rel)[2]:.3f} "
                f"tables {len(structure.tables)}",
                flush=True,
            )
    figures = {
        "split": args.split,
        "condition": args.condition,
        "engine": args.engine,
        "tables": len(rows),
        "tables_found": found,
        "cell_precision_recall_f1": [round(v, 4) for v in _f1(*totals["cells"])],
        "relation_precision_recall_f1": [round(v, 4) for v in _f1(*totals["relations"])],
        "by_style": {
            s: {"cell_f1": round(_f1(*v["cells"])[2], 4), "relation_f1": round(_f1(*v["relations"])[2], 4)}
            for s, v in sorted(by_style.items())
        },
        "structure_seconds_median": round(median(seconds), 4) if seconds else None,
        "date": time.strftime("%Y-%m-%d"),
        "machine": platform.machine(),
    }
    if args.qa:
        every = [v for vs in qa.values() for v in vs]
        figures["qa_relaxed_accuracy"] = round(100 * sum(every) / max(len(every), 1), 2)
        figures["qa_questions"] = len(every)
        figures["qa_by_op"] = {k: round(100 * sum(v) / len(v), 1) for k, v in sorted(qa.items())}
    print(json.dumps(figures, indent=1))
    if args.save:
        RESULTS.mkdir(exist_ok=True)
        path = RESULTS / "table_structure.json"
        saved = json.loads(path.read_text()) if path.exists() else {}
        saved[f"{args.split}/{args.condition}"] = figures
        path.write_text(json.dumps(saved, indent=1) + "\n")
        lines = [
            "# Table structure on rendered tables (benchmarks/table_structure.py)",
            "",
            "| split | condition | tables | found | cell P / R / F1 | relation F1 | QA relaxed acc. | s / page (structure) |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for _key, f in sorted(saved.items()):
            p, r, f1 = f["cell_precision_recall_f1"]
            lines.append(
                f"| {f['split']} | {f['condition']} | {f['tables']} | {f['tables_found']} | {p:.3f} / {r:.3f} / {f1:.3f} "
                f"| {f['relation_precision_recall_f1'][2]:.3f} | {f.get('qa_relaxed_accuracy', '-')} "
                f"| {f['structure_seconds_median']} |"
            )
        (RESULTS / "table_structure.md").write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build")
    b.add_argument("--out", default="benchmarks/out/tableset")
    b.add_argument("--n", type=int, default=12)
    b.add_argument("--seed", type=int, default=0)
    r = sub.add_parser("run")
    r.add_argument("--data", default="benchmarks/out/tableset")
    r.add_argument("--split", choices=("dev", "heldout"), default="dev")
    r.add_argument("--condition", choices=("clean", "captured"), default="clean")
    r.add_argument("--engine", default="rapidocr")
    r.add_argument("--styles", default="")
    r.add_argument("--limit", type=int, default=0)
    r.add_argument("--qa", action="store_true")
    r.add_argument("--save", action="store_true")
    r.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    build(args) if args.command == "build" else run(args)


if __name__ == "__main__":
    main()
