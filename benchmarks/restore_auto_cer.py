"""Character error rate of RapidOCR and Tesseract on real-page captures: raw, after ``restore --auto``, after the pipeline.

For each capture of the chosen real pages (``benchmarks/realpages.py``; the held-out split by default) three
page states are read by both engines:

- ``raw``: the photograph as it is;
- ``auto``: after :func:`docintent.strategies.auto.restore_auto` (question-free: orientation, then the tool for
  the worst measured damage, kept only when the whole page reads better or the damage fell);
- ``pipeline``: the orientation fix (same classifier) then every restoration tool in the pipeline baseline's
  fixed order, all kept.

CER = Levenshtein distance / reference length, on lower-cased text with whitespace collapsed; the reference is
the page's PDF text layer. Reading order can differ from the text layer's (two columns, a rotated page read
before it is turned), which inflates every CER alike; compare the states, not the absolute figures.

    python benchmarks/restore_auto_cer.py --pages 4          # the first 4 held-out pages, 4 captures each

Writes benchmarks/results/restore_auto_cer.md and .json; resumable (rows in benchmarks/out/runs/restore-auto-cer).
"""

from __future__ import annotations

import argparse
import json
import re
import time
import unicodedata
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
STATES = ("raw", "auto", "pipeline")
ENGINES = ("rapidocr", "tesseract")


def normalise(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("\ufffe", "").replace("\u00ad", "")
    text = text.replace("’", "'").replace("“", '"').replace("”", '"').replace("–", "-").replace("—", "-")
    return re.sub(r"\s+", " ", text).strip().lower()


def cer(hypothesis: str, reference: str) -> float:
    from rapidfuzz.distance import Levenshtein

    ref = normalise(reference)
    return Levenshtein.distance(normalise(hypothesis), ref) / max(len(ref), 1)


def ocr_text(page, engine: str) -> str:
    from docintent.ocr import get_engine

    result = get_engine(engine).read(page)
    lines = sorted(result.lines, key=lambda l: (round(l.box.y0, 2), l.box.x0))
    return "\n".join(l.text for l in lines)


def pipeline(page):
    from docintent.ocr import detect_orientation
    from docintent.strategies import PIPELINE_ORDER
    from docintent.tools import get_tool

    orient = detect_orientation(page)
    if orient.fix and orient.confidence >= 0.6:
        page = get_tool(orient.fix).run(page)
    for name in PIPELINE_ORDER:
        page = get_tool(name).run(page)
    return page


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(ROOT / "out" / "realpages" / "test"))
    ap.add_argument("--pages", type=int, default=4, help="how many pages (each with its 4 captures)")
    ap.add_argument("--out", default=str(ROOT / "out" / "runs" / "restore-auto-cer"))
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()

    import sys

    sys.path.insert(0, str(ROOT))
    from docintent.io import load_page
    from docintent.strategies.auto import restore_auto
    from realpages import render  # noqa: E402  (the benchmark's own page renderer and text layers)

    rows_path = Path(args.out) / "rows.jsonl"
    rows_path.parent.mkdir(parents=True, exist_ok=True)
    done = {json.loads(l)["image"] for l in rows_path.read_text().splitlines()} if rows_path.exists() else set()
    samples = [json.loads(l) for l in (Path(args.dataset) / "samples.jsonl").read_text().splitlines() if l.strip()]
    pages: list[str] = []
    captures: dict[str, dict] = {}
    for s in samples:
        if s["meta"]["page"] not in pages:
            pages.append(s["meta"]["page"])
        captures.setdefault(s["image"], s)
    chosen = set(pages[: args.pages])
    if not args.report_only:
        with rows_path.open("a") as f:
            for image, s in captures.items():
                if s["meta"]["page"] not in chosen or image in done:
                    continue
                reference = render(s["meta"]["page"], Path(args.dataset).parent / "pdf")[1]
                raw = load_page(Path(args.dataset) / image)
                t0 = time.perf_counter()
                auto, steps = restore_auto(raw)
                auto_s = time.perf_counter() - t0
                piped = pipeline(raw)
                row = {"image": image, "page": s["meta"]["page"], "condition": s["meta"]["condition"],
                       "auto_steps": [f"{st.tool}:{st.verdict}" for st in steps], "auto_seconds": round(auto_s, 1)}
                for state, page in (("raw", raw), ("auto", auto), ("pipeline", piped)):
                    for engine in ENGINES:
                        row[f"{engine}/{state}"] = cer(ocr_text(page, engine), reference)
                f.write(json.dumps(row) + "\n")
                f.flush()
                print(json.dumps(row), flush=True)
    rows = [json.loads(l) for l in rows_path.read_text().splitlines() if l.strip()]
    by_condition: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_condition[r["condition"]].append(r)
    by_condition["all"] = rows
    lines = ["| capture condition | n | " + " | ".join(f"{e} {s}" for e in ENGINES for s in STATES) + " |",
             "|---|---:|" + "---:|" * (len(ENGINES) * len(STATES))]
    figures = {}
    for cond, rs in sorted(by_condition.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        means = {f"{e}/{s}": sum(r[f"{e}/{s}"] for r in rs) / len(rs) for e in ENGINES for s in STATES}
        figures[cond] = {"n": len(rs), **means}
        lines.append(f"| {cond} | {len(rs)} | " + " | ".join(f"{100 * means[f'{e}/{s}']:.1f}" for e in ENGINES for s in STATES) + " |")
    steps = "\n".join(f"- {r['image']}: {', '.join(r['auto_steps']) or 'no step'}" for r in rows)
    text = "\n".join(["# restore --auto: CER (%) of two OCR engines on real-page captures", "",
                      f"{len(rows)} captures of {len({r['page'] for r in rows})} held-out pages; reference: the PDF "
                      "text layer; lower is better.", "", *lines, "", "## Steps --auto took", "", steps, ""])
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "restore_auto_cer.md").write_text(text)
    (RESULTS / "restore_auto_cer.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
