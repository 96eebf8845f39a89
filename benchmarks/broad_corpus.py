"""More training pages for the reader's scorer, from the broad set's development layouts.

The scorer's own corpus (``reader_corpus.py``) holds 20 document kinds; the broad set (``broad.py``) draws pages
of kinds it lacks (programmes, timetables, calendars, exam covers, slides, minutes, receipts, forms, reports).
This script prints fresh documents of the broad set's **development** layouts only (``data/broad_split.json``),
with seeds the broad set never uses, reads each page's PDF text layer into OCR-like lines, and writes them in the
corpus format, so ``train_reader.py`` can take them as a second corpus::

    python benchmarks/broad_corpus.py --out benchmarks/out/broadcorpus --per-layout 60     # ~18 min on 2 cores
    python benchmarks/train_reader.py --seed 0    # this corpus and reader_corpus.py's, by default

``--side test --out benchmarks/out/broadcorpus-test --per-layout 20`` prints the evaluation pages of
``benchmarks/results/reader_models_broadcorpus_test.md``; ``--first 20`` with it prints the next 20 pages of each
test layout (``broadcorpus-test2``), a fresh draw for judging a change after the first draw has been read.

Every document's kind is ``broad-<document type>`` and its family ``broad-<layout>``: a kind of its own, so the
corpus's own split of families into train / calibration / test is unchanged, and with fewer than three families a
kind is dealt wholly to training. Training pages come from the development layouts only; ``--side test`` prints the
test layouts, with other seeds again, for a held-out evaluation corpus and nothing else. Questions that are computed (arithmetic),
reverse look-ups and chart questions are left out: the scorer does not answer those shapes. A question whose
answer is not on the page's text layer is dropped and counted.

Writes ``docs.jsonl`` (every document is seeded: the same records for the same arguments and toolchain) and
``manifest.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
import zlib
from collections import Counter
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from broad import load_split, print_to_pdf  # noqa: E402  (benchmarks/ is on sys.path)
from broadset import LAYOUTS  # noqa: E402
from broadset.common import LOCALE_NAMES, Ctx  # noqa: E402
from readerset.textlayer import ocr_lines, printing_stack, shows  # noqa: E402

ROOT = Path(__file__).resolve().parent
#: question families of the broad set the scorer is not asked (computed answers, reverse look-ups, charts)
LEFT_OUT = ("arithmetic", "reverse_lookup", "chart")


def seed_of(side: str, layout: str, k: int) -> int:
    """Document ``k``'s seed: never one the broad set itself draws (``zlib.crc32(f"{layout}/{k}")``)."""
    return zlib.crc32(f"corpus-{side}:{layout}/{k}".encode())


def one(job: tuple[str, str, int]) -> tuple[dict | None, Counter]:
    """Build, print and read document ``k`` of ``layout``; ``None`` when it does not fit one page."""
    import pypdfium2 as pdfium

    side, layout, k = job
    seed = seed_of(side, layout, k)
    locale = LOCALE_NAMES[(seed >> 3) % len(LOCALE_NAMES)]
    doc_type, builder = LAYOUTS[layout]
    doc = builder(Ctx(seed, locale))
    drops: Counter = Counter()
    with tempfile.TemporaryDirectory(prefix="broadcorpus-") as tmp:
        pdf_path = Path(tmp) / "page.pdf"
        print_to_pdf(doc.html, pdf_path)
        pdf = pdfium.PdfDocument(str(pdf_path))
        if len(pdf) != 1:
            pdf.close()
            drops["overflowed pages"] += 1
            return None, drops
        page = pdf[0]
        lines, text = ocr_lines(page)
        page.close()
        pdf.close()
    on_page = shows(lines, text)
    ident = f"bc-{side}-{layout}-{k:04d}"
    questions = []
    for j, q in enumerate(doc.questions):
        if q.task != "doc" or q.family in LEFT_OUT:
            continue
        if not all(on_page(s) for s in q.must_show()):
            drops[q.family] += 1
            continue
        questions.append(
            {"id": f"{ident}-{j}", "question": q.question, "answers": list(q.answers), "family": q.family, "field": ""}
        )
    rec = {
        "doc": ident,
        "kind": f"broad-{doc_type}",
        "family": f"broad-{layout}",
        "variant": hashlib.sha256(f"{layout}/{seed}".encode()).hexdigest()[:12],
        "locale": locale,
        "lines": lines,
        "questions": questions,
    }
    return rec, drops


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "out" / "broadcorpus")
    ap.add_argument("--per-layout", type=int, default=60)
    ap.add_argument("--side", choices=("dev", "test"), default="dev", help="whose layouts to print (test: evaluation)")
    ap.add_argument(
        "--first",
        type=int,
        default=0,
        help="number of the first document of each layout (a later start is a fresh draw: --side test --first 20 "
        "prints pages no earlier test read has seen)",
    )
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    t0 = time.time()
    layouts = sorted(name for name, side in load_split()["layouts"].items() if side == a.side)
    jobs = [(a.side, layout, k) for k in range(a.first, a.first + a.per_layout) for layout in layouts]
    a.out.mkdir(parents=True, exist_ok=True)
    target = a.out / "docs.jsonl"
    drops: Counter = Counter()
    families: Counter = Counter()
    qfam: Counter = Counter()
    n_docs = n_q = 0
    with open(target, "w", encoding="utf-8") as fh, Pool(a.workers) as pool:
        for n, (rec, dr) in enumerate(pool.imap(one, jobs, chunksize=4), 1):
            drops.update(dr)
            if rec is None:
                continue
            fh.write(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")
            n_docs += 1
            n_q += len(rec["questions"])
            families[rec["family"]] += 1
            qfam.update(q["family"] for q in rec["questions"])
            if n % 100 == 0:
                print(f"{n}/{len(jobs)} documents, {n_q} questions, {time.time() - t0:.0f} s", flush=True)
    secs = time.time() - t0
    manifest = {
        "side": a.side,
        "per_layout": a.per_layout,
        "first": a.first,
        "docs": n_docs,
        "questions": n_q,
        "questions_per_family": dict(sorted(qfam.items())),
        "dropped": dict(sorted(drops.items())),
        "families": dict(sorted(families.items())),
        "left_out_question_families": list(LEFT_OUT),
        "printing": printing_stack(),
        "sha256": hashlib.sha256(target.read_bytes()).hexdigest(),
        "generation_seconds": round(secs, 1),
    }
    (a.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(json.dumps(manifest, indent=1))


if __name__ == "__main__":
    main()
