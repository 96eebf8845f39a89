"""Multi-page evidence on the hand-written TeX Live questions: which pages of a document get flagged.

Each direct question of ``benchmarks/data/texlive_questions.jsonl`` is asked of its own document (the PDF of
its gold page); a page is correct when it is a gold page of that question in that document. Reported: mean
page recall and precision, and how many questions got no page flagged, for lexical matching and for lexical
fused with passage embeddings (MiniLM), on the same questions. Documents are limited by ``--max-pages``
(``--max-pages-fused`` for the fused run, whose embeddings cost ~0.5 s a passage on two busy cores).

Also the time per page of the evidence step with the PDF text layer and with OCR (RapidOCR, cache off) on
the first pages of LaTeX News issue 30, and that issue's "month and year" question.

    python benchmarks/evidence_pages.py
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from docintent.io import load_document, page_count
from docintent.page import Box
from docintent.retrieval.evidence import collect_evidence, text_layer

HERE = Path(__file__).resolve().parent


def pdf_paths() -> dict[str, Path]:
    out = subprocess.run(["dpkg", "-L", "texlive-latex-base-doc"], capture_output=True, text=True).stdout.split()
    return {Path(p).name: Path(p) for p in out if p.endswith(".pdf")}


def score(flagged: set[int], gold: set[int]) -> tuple[float, float | None]:
    recall = len(flagged & gold) / len(gold)
    precision = len(flagged & gold) / len(flagged) if flagged else None
    return recall, precision


def run(questions, paths, max_pages: int, dense) -> dict:
    recalls, precisions, none, seconds, pages_done = [], [], 0, 0.0, 0
    for q in questions:
        doc = q["gold"][0]["document"]
        n = page_count(paths[doc])
        if n > max_pages:
            continue
        gold = {g["page"] for g in q["gold"] if g["document"] == doc}
        numbers = list(range(1, n + 1))
        pages = load_document(paths[doc], pages=[i - 1 for i in numbers])
        t0 = time.perf_counter()
        texts = text_layer(paths[doc], pages, numbers)
        found = collect_evidence(pages, q["question"], numbers=numbers, texts=texts, dense=dense)
        seconds += time.perf_counter() - t0
        pages_done += n
        flagged = {d.number for d in found if d.relevant}
        r, p = score(flagged, gold)
        recalls.append(r)
        if p is None:
            none += 1
        else:
            precisions.append(p)
    return {
        "questions": len(recalls),
        "pages": pages_done,
        "recall": round(100 * float(np.mean(recalls)), 1) if recalls else None,
        "precision": round(100 * float(np.mean(precisions)), 1) if precisions else None,
        "no_page_flagged": none,
        "seconds_per_page": round(seconds / max(pages_done, 1), 3),
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--max-pages", type=int, default=20)
    ap.add_argument("--max-pages-fused", type=int, default=6)
    ap.add_argument("--ocr-pages", type=int, default=2)
    args = ap.parse_args()
    os.environ["DOCINTENT_CACHE"] = "0"
    paths = pdf_paths()
    questions = [json.loads(x) for x in (HERE / "data" / "texlive_questions.jsonl").read_text().splitlines()]
    direct = [q for q in questions if q["kind"] == "direct"]
    from docintent.retrieval.passages import load_sentence_model

    model = load_sentence_model()
    res = {
        "lexical": run(direct, paths, args.max_pages, None),
        f"lexical, documents <= {args.max_pages_fused} pages": run(direct, paths, args.max_pages_fused, None),
        f"fused, documents <= {args.max_pages_fused} pages": run(direct, paths, args.max_pages_fused, model),
    }
    # Time per page: text layer vs OCR, same pages, same question.
    news = paths["ltnews30.pdf"]
    question = "In which month and year was this issue of LaTeX News published?"
    numbers = list(range(1, args.ocr_pages + 1))
    pages = load_document(news, pages=[i - 1 for i in numbers])
    t0 = time.perf_counter()
    with_layer = collect_evidence(pages, question, numbers=numbers, texts=text_layer(news, pages, numbers))
    layer_s = (time.perf_counter() - t0) / len(pages)
    from docintent.ocr import get_engine

    engine = get_engine("rapidocr", cache=False)
    engine.read(pages[0].crop(Box(0.0, 0.0, 0.3, 0.1)))  # loads the model before the timing
    t0 = time.perf_counter()
    with_ocr = collect_evidence(pages, question, numbers=numbers, engine=engine)
    ocr_s = (time.perf_counter() - t0) / len(pages)
    all_four = list(range(1, 5))
    four = load_document(news, pages=[i - 1 for i in all_four])
    month = collect_evidence(four, question, numbers=all_four, texts=text_layer(news, four, all_four))
    res["speed"] = {
        "pages": len(pages),
        "text_layer_s_per_page": round(layer_s, 3),
        "ocr_s_per_page": round(ocr_s, 2),
        "flagged_text_layer": [d.number for d in with_layer if d.relevant],
        "flagged_ocr": [d.number for d in with_ocr if d.relevant],
        "load_average": round(os.getloadavg()[0], 1),
    }
    res["latex_news_30_month_and_year"] = {
        "flagged": [d.number for d in month if d.relevant],
        "evidence": [i.evidence for d in month for i in d.items],
    }
    out = HERE / "results" / "evidence_pages.json"
    out.write_text(json.dumps(res, indent=2), encoding="utf-8")
    lines = [
        "# Evidence pages on the hand-written TeX Live questions",
        "",
        "Direct questions asked of their own document; percent (mean over questions; precision over questions "
        "with a flagged page). Text layer for every page (these PDFs have one).",
        "",
        "| matching | questions | pages | page recall | page precision | no page flagged | s/page |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for name, r in res.items():
        if name in ("speed", "latex_news_30_month_and_year"):
            continue
        lines.append(
            f"| {name} | {r['questions']} | {r['pages']} | {r['recall']} | {r['precision']} | {r['no_page_flagged']} | {r['seconds_per_page']} |"
        )
    s = res["speed"]
    m = res["latex_news_30_month_and_year"]
    lines += [
        "",
        f"Evidence step per page (LaTeX News 30, first {s['pages']} pages, load average {s['load_average']}): "
        f"text layer {s['text_layer_s_per_page']} s, RapidOCR {s['ocr_s_per_page']} s (cache off, model loaded before timing).",
        f'"{question}" on the 4-page issue: flagged pages {m["flagged"] or "none"}; evidence {m["evidence"]}.',
    ]
    md = "\n".join(lines) + "\n"
    (HERE / "results" / "evidence_pages.md").write_text(md, encoding="utf-8")
    print(md)
    return 0


if __name__ == "__main__":
    sys.exit(main())
