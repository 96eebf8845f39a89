"""Character error rate of RapidOCR and Tesseract on real-page captures: raw, after ``restore --auto``, after the pipeline.

For each capture of the chosen real pages (``benchmarks/realpages.py``; four captures per page) these page
states are read by both engines:

- ``raw``: the photograph as it is;
- ``auto``: after :func:`docintent.strategies.auto.restore_auto` (question-free: orientation, then the tool for
  the worst measured damage, kept only when the whole page reads better or the damage fell), judged by RapidOCR
  (the default); ``auto-tesseract`` (not measured unless named in ``--states``) is judged by Tesseract;
- ``pipeline``: the orientation fix (same classifier) then every restoration tool in the pipeline baseline's
  fixed order, all kept.

CER = Levenshtein distance / reference length, on lower-cased text with whitespace collapsed; the reference is
the page's PDF text layer. Reading order can differ from the text layer's (two columns, a rotated page read
before it is turned), which inflates every CER alike; compare the states, not the absolute figures.

    python benchmarks/restore_auto_cer.py --split dev --pages 9      # develop: the first 9 dev pages
    python benchmarks/restore_auto_cer.py --split test               # report: every held-out page

Resumable: one row per capture and page state in ``benchmarks/out/runs/restore-auto-cer-<split>/rows.jsonl``;
``--trace`` also records, for every step ``--auto`` took, both engines' CER of the page with and without the
step (what keeping or rolling it back would have cost). ``--split test`` writes
``benchmarks/results/restore_auto_cer.md`` and ``.json``; other splits print their tables only.
Time ``--auto`` with ``DOCINTENT_CACHE=0`` (the OCR disk cache would otherwise answer repeated reads).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import time
import unicodedata
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
ENGINES = ("rapidocr", "tesseract")
#: page state -> how it is made; "auto-tesseract" is --auto judged by the engine its column reads with.
STATES = ("raw", "auto", "auto-tesseract", "pipeline")
DEFAULT_STATES = ("raw", "auto", "pipeline")


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


def cers(page, reference: str) -> dict[str, float]:
    return {engine: round(cer(ocr_text(page, engine), reference), 5) for engine in ENGINES}


def pipeline(page):
    from docintent.ocr import detect_orientation
    from docintent.strategies import pipeline_tools
    from docintent.tools import get_tool, restoration_tools

    orient = detect_orientation(page)
    if orient.fix and orient.confidence >= 0.6:
        page = get_tool(orient.fix).run(page)
    for name in pipeline_tools(restoration_tools()):
        page = get_tool(name).run(page)
    return page


def run_state(state: str, raw, reference: str, trace: bool) -> dict:
    """One page state of one capture: both engines' CER, and for the auto states the steps and seconds."""
    from docintent.strategies.auto import restore_auto

    if state == "raw":
        return {"cer": cers(raw, reference)}
    if state == "pipeline":
        return {"cer": cers(pipeline(raw), reference)}
    observed: list[dict] = []

    def observe(before, after, step) -> None:
        if trace:
            observed.append(
                {
                    "tool": step.tool,
                    "verdict": step.verdict,
                    "before": cers(before, reference),
                    "after": cers(after, reference),
                }
            )

    engine = "tesseract" if state == "auto-tesseract" else None
    t0 = time.perf_counter()
    page, steps = restore_auto(raw, engine=engine, observe=observe if trace else None)
    seconds = time.perf_counter() - t0
    row = {
        "cer": cers(page, reference),
        "seconds": round(seconds, 1),
        "steps": [f"{s.tool}:{s.verdict}" for s in steps],
        "step_seconds": [round(s.seconds, 1) for s in steps],
        "reasons": [f"{s.why}; {s.reason}" for s in steps],
    }
    if trace:
        row["trace"] = observed
    return row


def select(dataset: Path, pages: str | None) -> list[dict]:
    """The captures of the chosen pages (a count from the start of the split, or names), in dataset order."""
    samples = [json.loads(l) for l in (dataset / "samples.jsonl").read_text().splitlines() if l.strip()]
    order: list[str] = []
    captures: dict[str, dict] = {}
    for s in samples:
        if s["meta"]["page"] not in order:
            order.append(s["meta"]["page"])
        captures.setdefault(s["image"], s)
    if pages is None:
        chosen = set(order)
    elif pages.isdigit():
        chosen = set(order[: int(pages)])
    else:
        chosen = set(pages.split(","))
    return [s for s in captures.values() if s["meta"]["page"] in chosen]


def table(rows: list[dict], states: tuple[str, ...]) -> tuple[list[str], dict]:
    """Mean CER per capture condition (and all) for each engine and state, over captures with every state."""
    by_image: dict[str, dict] = defaultdict(dict)
    for r in rows:
        by_image[r["image"]][r["state"]] = r
    complete = {i: s for i, s in by_image.items() if all(st in s for st in states)}
    by_condition: dict[str, list[dict]] = defaultdict(list)
    for states_of in complete.values():
        by_condition[next(iter(states_of.values()))["condition"]].append(states_of)
    by_condition["all"] = list(complete.values())
    columns = [(e, s) for e in ENGINES for s in states]
    lines = [
        "| capture condition | n | " + " | ".join(f"{e} {s}" for e, s in columns) + " |",
        "|---|---:|" + "---:|" * len(columns),
    ]
    figures = {}
    for cond, group in sorted(by_condition.items(), key=lambda kv: (kv[0] == "all", kv[0])):
        if not group:
            continue
        means = {f"{e}/{s}": statistics.fmean(g[s]["cer"][e] for g in group) for e, s in columns}
        figures[cond] = {"n": len(group), **{k: round(100 * v, 2) for k, v in means.items()}}
        lines.append(
            f"| {cond} | {len(group)} | " + " | ".join(f"{100 * means[f'{e}/{s}']:.1f}" for e, s in columns) + " |"
        )
    return lines, figures


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", choices=("dev", "test"), default="test")
    ap.add_argument(
        "--pages",
        help="how many pages from the start of the split, or page names, comma-separated "
        "(default: every page of the split)",
    )
    ap.add_argument(
        "--states",
        default=",".join(DEFAULT_STATES),
        help=f"page states to measure, some of {','.join(STATES)} (default {','.join(DEFAULT_STATES)})",
    )
    ap.add_argument("--trace", action="store_true", help="record both engines' CER with and without every --auto step")
    ap.add_argument("--out", help="rows folder (default benchmarks/out/runs/restore-auto-cer-<split>)")
    ap.add_argument("--redo", default="", help="page states to measure again (e.g. auto after changing --auto)")
    ap.add_argument("--report-only", action="store_true")
    args = ap.parse_args()

    import sys

    sys.path.insert(0, str(ROOT))
    from docintent.io import load_page
    from realpages import render  # noqa: E402  (the benchmark's own page renderer and text layers)

    dataset = ROOT / "out" / "realpages" / args.split
    states = tuple(s for s in args.states.split(",") if s)
    unknown = set(states) - set(STATES)
    if unknown:
        raise SystemExit(f"--states: unknown {', '.join(sorted(unknown))}; expected some of {', '.join(STATES)}")
    if not (dataset / "samples.jsonl").exists():
        raise SystemExit(f"{dataset}: no samples.jsonl; build it with python benchmarks/realpages.py")
    rows_path = Path(args.out or ROOT / "out" / "runs" / f"restore-auto-cer-{args.split}") / "rows.jsonl"
    rows_path.parent.mkdir(parents=True, exist_ok=True)
    redo = set(args.redo.split(",")) - {""}
    rows = [json.loads(l) for l in rows_path.read_text().splitlines() if l.strip()] if rows_path.exists() else []
    if redo:
        rows = [r for r in rows if r["state"] not in redo]
        rows_path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    captures = select(dataset, args.pages)
    chosen = {s["image"] for s in captures}
    done = {(r["image"], r["state"]) for r in rows}
    if not args.report_only:
        with rows_path.open("a") as f:
            for s in captures:
                todo = [st for st in states if (s["image"], st) not in done]
                if not todo:
                    continue
                reference = render(s["meta"]["page"], dataset.parent / "pdf")[1]
                raw = load_page(dataset / s["image"])
                for state in todo:
                    row = {
                        "image": s["image"],
                        "page": s["meta"]["page"],
                        "condition": s["meta"]["condition"],
                        "state": state,
                        **run_state(state, raw, reference, args.trace),
                    }
                    rows.append(row)
                    f.write(json.dumps(row) + "\n")
                    f.flush()
                    print(json.dumps({k: v for k, v in row.items() if k not in ("reasons", "trace")}), flush=True)
    rows = [r for r in rows if r["image"] in chosen]
    lines, figures = table(rows, states)
    seconds = {st: sorted(r["seconds"] for r in rows if r["state"] == st and "seconds" in r) for st in states}
    timing = [
        f"- `{st}`: median {statistics.median(v):.1f} s per capture (n={len(v)}, max {v[-1]:.1f} s)"
        for st, v in seconds.items()
        if v
    ]
    pages = sorted({r["page"] for r in rows})
    steps = "\n".join(
        f"- {r['image']} ({r['state']}): {', '.join(r['steps']) or 'no step'}"
        for r in rows
        if r["state"].startswith("auto")
    )
    load = os.getloadavg()
    dev_block: list[str] = []
    dev_rows = ROOT / "out" / "runs" / "restore-auto-cer-dev" / "rows.jsonl"
    if args.split == "test" and dev_rows.exists():
        dev = [json.loads(l) for l in dev_rows.read_text().splitlines() if l.strip()]
        dev_lines, dev_figures = table(dev, DEFAULT_STATES)
        dev_pages = sorted({r["page"] for r in dev})
        dev_block = [
            "## Development split (the rules of --auto were chosen here)",
            "",
            f"{dev_figures.get('all', {}).get('n', 0)} captures of {len(dev_pages)} dev pages "
            f"({', '.join(dev_pages)}):",
            "",
            *dev_lines,
            "",
        ]
        figures = {"test": figures, "dev": dev_figures}
    else:
        figures = {args.split: figures}
    n = figures.get(args.split, {}).get("all", {}).get("n", 0)
    text = "\n".join(
        [
            "# restore --auto: CER (%) of two OCR engines on real-page captures",
            "",
            f"Split `{args.split}`: {n} captures of {len(pages)} pages "
            f"({', '.join(pages)}); reference: the PDF text layer; lower is better.",
            "",
            *lines,
            "",
            "## Seconds per capture",
            "",
            *timing,
            f"- load average at the end of the run: {load[0]:.2f} / {load[1]:.2f} / {load[2]:.2f} (1 / 5 / 15 min)",
            "",
            *dev_block,
            "## Steps --auto took",
            "",
            steps,
            "",
        ]
    )
    print(text)
    if args.split == "test" and not args.pages:
        RESULTS.mkdir(exist_ok=True)
        (RESULTS / "restore_auto_cer.md").write_text(text)
        (RESULTS / "restore_auto_cer.json").write_text(
            json.dumps(
                {
                    "pages": pages,
                    "cer_percent": figures,
                    "seconds_median": {st: statistics.median(v) for st, v in seconds.items() if v},
                },
                indent=2,
            )
        )


if __name__ == "__main__":
    main()
