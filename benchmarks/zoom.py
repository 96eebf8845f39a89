"""Zoom and evidence: table reading through the zoom tool, and evidence-first context over many pages.

Part 1, tables. Financial tables are rendered with PIL (``docintent.synth.table_images``: right-aligned figures,
``$``, accounting parentheses, percentages; plain, spanning-caption and two-line headers), placed on a larger
white page, and read with ``zoom`` (``type="table"``) on the table's box. Clean and mildly degraded (slight
perspective tilt, soft shadow, a little defocus, noise, JPEG), in DejaVu Sans 20 px with wide gutters and in
DejaVu Serif 16 px with tight columns (about one character between the widest neighbouring figures). Cell accuracy = cells whose text equals the
truth at the same (row, col) / all truth cells; "exact" = tables with every cell right.

Part 2, evidence. Multi-page documents are built from filler pages (a vocabulary that shares "total",
"amount", "due", "contract", "payment" with the questions), answer pages holding the asked fact, and, in half
the documents, a near-distractor page with the same field for another contract. ``collect_evidence`` marks
pages as relevant; page-level recall and precision are against the answer pages. Input tokens per context mode
(images: one token per 28x28 px after a 2048-px cap; text: ~4 characters per token) and the offline reader's
answer in each mode (single-field questions; ANLS against the gold value).

    python benchmarks/zoom.py                      # 4 x 12 tables, 8 documents of 6 pages
    python benchmarks/zoom.py --tables 6 --docs 3  # quick look

Prints the tables and writes benchmarks/results/zoom.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"

FIELDS = [
    ("total amount due", ["8,430.75 EUR", "12,904.10 EUR", "615.00 EUR", "3,277.48 EUR"]),
    ("renewal date", ["30 April 2025", "1 June 2026", "15 January 2025", "9 October 2027"]),
    ("account number", ["AC-55213", "AC-90871", "AC-31640", "AC-72094"]),
    ("contact person", ["Maria Olsen", "David Kerr", "Ana Ruiz", "Tom Becker"]),
]


def table_part(n: int, engine) -> dict:
    from docintent.page import Page
    from docintent.synth.table_images import cell_accuracy, mildly_degraded, render_table
    from docintent.tools.zoom import Zoom

    zoom = Zoom(engine=engine)
    styles = ("plain", "spanning", "stacked")
    out = {}
    conditions = {
        "clean": (False, {}),
        "degraded": (True, {}),
        "tight serif, clean": (False, {"serif": True, "column_em": 5.5, "font_px": 16}),
        "tight serif, degraded": (True, {"serif": True, "column_em": 5.5, "font_px": 16}),
    }
    for condition, (degraded, options) in conditions.items():
        accs, exact, header_ok, seconds = [], 0, 0, []
        per_style: dict[str, list[float]] = {s: [] for s in styles}
        for i in range(n):
            style = styles[i % 3]
            truth = render_table(1000 + i, style=style, **options)
            img = mildly_degraded(truth.image, seed=1000 + i) if degraded else truth.image
            h, w = img.shape[:2]
            page = np.full((h + 240, w + 160, 3), 255, np.uint8)
            page[120 : 120 + h, 80 : 80 + w] = img
            P = Page.from_array(page)
            bbox = [80 / P.width, 120 / P.height, (80 + w) / P.width, (120 + h) / P.height]
            t0 = time.perf_counter()
            ev = zoom.inspect(P, label="table", bbox=bbox, type="table")
            seconds.append(time.perf_counter() - t0)
            acc = cell_accuracy(ev.table.grid(), truth.grid)
            accs.append(acc)
            per_style[style].append(acc)
            exact += acc == 1.0
            header_ok += ev.table.header_rows == truth.header_rows
        out[condition] = {
            "tables": n,
            "cell_accuracy": statistics.mean(accs),
            "min_cell_accuracy": min(accs),
            "exact_tables": exact / n,
            "header_rows_right": header_ok / n,
            "seconds_per_table": statistics.median(seconds),
            "by_style": {s: statistics.mean(v) for s, v in per_style.items() if v},
        }
    return out


def _documents(n_docs: int, pages_per_doc: int, seed: int = 0):
    """(pages as arrays, question, answer pages (1-based), gold answer or None for two-field questions)."""
    from docintent.synth.render import render_text_lines, sentence

    rng = np.random.default_rng(seed)
    docs = []
    for d in range(n_docs):
        contract = int(rng.integers(1000, 9999))
        other = contract + int(rng.integers(1, 500))
        two = d % 2 == 1
        picks = rng.choice(len(FIELDS), size=2 if two else 1, replace=False)
        fields = [(FIELDS[i][0], str(rng.choice(FIELDS[i][1]))) for i in picks]
        slots = [int(x) for x in rng.choice(np.arange(1, pages_per_doc + 1), size=len(fields) + 1, replace=False)]
        facts = {slots[k]: f"The {name} for contract {contract} is {value}." for k, (name, value) in enumerate(fields)}
        distractor = slots[-1] if d % 4 in (0, 1) else None
        if distractor:
            name = fields[0][0]
            wrong = [v for v in dict(FIELDS)[name] if v != fields[0][1]][0]
            facts[distractor] = f"The {name} for contract {other} is {wrong}."
        pages = []
        for number in range(1, pages_per_doc + 1):
            lines = [sentence(rng, 7) for _ in range(6)]
            if number in facts:
                lines.insert(int(rng.integers(0, 6)), facts[number])
            pages.append(render_text_lines(lines, width=800, font_px=18))
        if two:
            question = f"What are the {fields[0][0]} and the {fields[1][0]} for contract {contract}?"
        else:
            question = f"What is the {fields[0][0]} for contract {contract}?"
        answer_pages = sorted(slots[: len(fields)])
        docs.append((pages, question, answer_pages, None if two else fields[0][1], distractor))
    return docs


def evidence_part(n_docs: int, pages_per_doc: int, engine, brain_kind: str) -> dict:
    from docintent.brains import get_brain
    from docintent.evaluation.metrics import anls
    from docintent.page import Page
    from docintent.retrieval.evidence import MODES, answer, collect_evidence, context

    brain = get_brain(brain_kind) if brain_kind != "none" else None
    tp = fp = fn = 0
    distractor_flagged = distractors = 0
    tokens = {m: [] for m in MODES}
    scores = {m: [] for m in MODES}
    seconds = {m: [] for m in MODES}
    find_seconds = []
    rows = []
    for pages, question, truth, gold, distractor in _documents(n_docs, pages_per_doc):
        P = [Page.from_array(p) for p in pages]
        t0 = time.perf_counter()
        found = collect_evidence(P, question, engine=engine)
        find_seconds.append(time.perf_counter() - t0)
        flagged = {d.number for d in found if d.relevant}
        tp += len(flagged & set(truth))
        fp += len(flagged - set(truth))
        fn += len(set(truth) - flagged)
        if distractor:
            distractors += 1
            distractor_flagged += distractor in flagged
        row = {"question": question, "answer_pages": truth, "flagged": sorted(flagged), "gold": gold}
        for mode in MODES:
            cost = context([d for d in found if d.relevant] if mode == "evidence+ocr" else found, mode)[2]
            tokens[mode].append(cost.total)
            # The offline reader reads only the image, so "page" and "page+ocr" give it the same input.
            if brain is not None and gold is not None and mode != "page+ocr":
                res = answer(found, question, brain, mode=mode)
                scores[mode].append(anls(res.answer.text, gold))
                seconds[mode].append(res.seconds)
                row[f"answer[{mode}]"] = res.answer.text
        if brain is not None and gold is not None:
            scores["page+ocr"].append(scores["page"][-1])
            seconds["page+ocr"].append(seconds["page"][-1])
        rows.append(row)
    return {
        "documents": n_docs,
        "pages_per_document": pages_per_doc,
        "answer_pages": tp + fn,
        "page_recall": tp / (tp + fn) if tp + fn else 0.0,
        "page_precision": tp / (tp + fp) if tp + fp else 0.0,
        "near_distractor_pages_flagged": f"{distractor_flagged}/{distractors}",
        "seconds_per_document_find": statistics.median(find_seconds),
        "tokens": {m: statistics.mean(v) for m, v in tokens.items()},
        "answer_anls": {m: (statistics.mean(v) if v else None) for m, v in scores.items()},
        "answer_seconds": {m: (statistics.median(v) if v else None) for m, v in seconds.items()},
        "answered_questions": len(scores["evidence+ocr"]),
        "brain": brain_kind,
        "rows": rows,
    }


def markdown(result: dict) -> str:
    t, e = result["tables"], result["evidence"]
    lines = [
        "# Zoom and evidence",
        "",
        f"Machine: {result['machine']}; date {result['date']}.",
        "",
        "## Table mode (`zoom`, type=table) on rendered financial tables",
        "",
        "| condition | tables | cell accuracy | min | exact tables | header rows right | s / table | plain | spanning | stacked |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for cond, r in t.items():
        st = r["by_style"]
        lines.append(
            f"| {cond} | {r['tables']} | {r['cell_accuracy']:.1%} | {r['min_cell_accuracy']:.1%} | {r['exact_tables']:.0%} | "
            f"{r['header_rows_right']:.0%} | {r['seconds_per_table']:.2f} | {st.get('plain', 0):.1%} | "
            f"{st.get('spanning', 0):.1%} | {st.get('stacked', 0):.1%} |"
        )
    lines += [
        "",
        "## Evidence over many pages",
        "",
        f"{e['documents']} documents x {e['pages_per_document']} pages, {e['answer_pages']} answer pages; "
        f"page-level recall **{e['page_recall']:.1%}**, precision **{e['page_precision']:.1%}**; near-distractor pages "
        f"(same field, another contract) flagged: {e['near_distractor_pages_flagged']}; finding evidence "
        f"{e['seconds_per_document_find']:.1f} s per document (median, OCR included).",
        "",
        f"| context | input tokens / question (mean) | vs page+ocr | {e['brain']} reader ANLS ({e['answered_questions']} single-field questions) | s / answer |",
        "|---|---|---|---|---|",
    ]
    base = e["tokens"]["page+ocr"]
    for mode, tok in e["tokens"].items():
        a = e["answer_anls"][mode]
        s = e["answer_seconds"][mode]
        lines.append(
            f"| {mode} | {tok:,.0f} | {tok / base:.0%} | {'-' if a is None else f'{a:.3f}'} | {'-' if s is None else f'{s:.2f}'} |"
        )
    lines += [
        "",
        "Tokens are estimates: images resized to at most 2048 px on the longest side, one token per 28x28 px "
        "(Qwen-VL rule); text ~4 characters per token. The offline reader reads only the image, so its `page` and "
        "`page+ocr` answers are the same run.",
    ]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=12, help="tables per condition")
    ap.add_argument("--docs", type=int, default=8, help="multi-page documents")
    ap.add_argument("--pages", type=int, default=6, help="pages per document")
    ap.add_argument("--brain", default="offline", help="brain for the answer step (offline, none)")
    args = ap.parse_args()
    # The answer step's reader must pay for its own OCR, not find it cached by an earlier run.
    os.environ["DOCINTENT_CACHE"] = "0"
    from docintent.ocr import get_engine

    engine = get_engine("rapidocr", cache=False)
    start = time.perf_counter()
    result = {
        "machine": f"{platform.machine()}, {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}",
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "tables": table_part(args.tables, engine),
        "evidence": evidence_part(args.docs, args.pages, engine, args.brain),
    }
    result["seconds"] = time.perf_counter() - start
    RESULTS.mkdir(exist_ok=True)
    md = markdown(result)
    (RESULTS / "zoom.md").write_text(md)
    (RESULTS / "zoom.json").write_text(json.dumps(result, indent=2))
    print(md)


if __name__ == "__main__":
    main()
