"""Build the reader's training corpus: synthetic born-digital pages (benchmarks/readerset/) with OCR-like lines
taken from their PDF text layer and questions whose gold answers are known by construction.

    python benchmarks/reader_corpus.py --out benchmarks/out/readerset --docs 6000 --seed 0

Documents are rendered in batches (one HTML with one ``<section>`` per page, printed by headless Chromium to
one PDF); every page's text layer is read with pypdfium2 into lines, and a question whose gold answer (or
evidence) is not on the page's visible text is dropped and counted. Writes ``docs.jsonl`` (one page a line,
byte-identical for the same seed and toolchain) and ``manifest.json`` (counts, seed, versions, sha256).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from multiprocessing import Pool
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from readerset import CSS, FAMILIES, KINDS, family_order, make  # noqa: E402  (benchmarks/ is on sys.path)
from readerset.textlayer import ocr_lines, printing_stack, shows  # noqa: E402

FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-pdf-header-footer",
    "--disable-extensions",
    "--hide-scrollbars",
)
BATCH = 150


def chromium() -> str:
    exe = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not exe:
        raise SystemExit("chromium: not found; apt-get install chromium fonts-dejavu fonts-liberation fonts-noto-core")
    return exe


def render(html: str, tmp: Path) -> Path:
    """Print ``html`` to a PDF in ``tmp`` with headless Chromium."""
    src, pdf = tmp / "batch.html", tmp / "batch.pdf"
    src.write_text(html, encoding="utf-8")
    cmd = [chromium(), *FLAGS, f"--user-data-dir={tmp}/profile", f"--print-to-pdf={pdf}", src.as_uri()]
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
    if done.returncode != 0 or not pdf.exists():
        raise RuntimeError(f"chromium failed: {done.stderr.strip()[-400:]}")
    return pdf


def batch(job: tuple[int, int, list[str], str | None, int]) -> tuple[list[dict], Counter]:
    """Build, render and read documents ``start..start+len(families)-1``; returns their records and drop counts."""
    import pypdfium2 as pdfium

    seed, start, fams, images, n_images = job
    docs = [make(seed, start + i, f) for i, f in enumerate(fams)]
    html = (
        f'<!DOCTYPE html><html><head><meta charset="utf-8"><style>{CSS}</style></head><body>'
        + "".join(d["html"] for d in docs)
        + "</body></html>"
    )
    drops: Counter = Counter()
    out = []
    with tempfile.TemporaryDirectory(prefix="readerset-") as tmp:
        pdf = pdfium.PdfDocument(str(render(html, Path(tmp))))
        if len(pdf) != len(docs):
            raise RuntimeError(f"batch at {start}: {len(pdf)} pages for {len(docs)} documents (a page overflowed)")
        for i, d in enumerate(docs):
            page = pdf[i]
            lines, text = ocr_lines(page)
            on_page = shows(lines, text)
            idx = start + i
            if images and idx < n_images:
                w, h = page.get_size()
                page.render(scale=1600 / max(w, h)).to_pil().save(Path(images) / f"{idx:06d}.png")
            qs = []
            for j, q in enumerate(d["questions"]):
                if not all(on_page(s) for s in q.shown()):
                    drops[q.family] += 1
                    continue
                qs.append(
                    {
                        "id": f"{idx:06d}-{j}",
                        "question": q.question,
                        "answers": q.answers,
                        "family": q.family,
                        "field": q.field,
                    }
                )
            out.append(
                {
                    "doc": f"rs{idx:06d}",
                    "kind": d["kind"],
                    "family": d["family"],
                    "variant": d["variant"],
                    "locale": d["locale"],
                    "lines": lines,
                    "questions": qs,
                }
            )
            page.close()
        pdf.close()
    return out, drops


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out" / "readerset")
    ap.add_argument("--docs", type=int, default=6000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--images", type=Path, default=None, help="write PNGs (~1600 px) of the first --n-images docs")
    ap.add_argument("--n-images", type=int, default=10)
    a = ap.parse_args()
    t0 = time.time()
    a.out.mkdir(parents=True, exist_ok=True)
    if a.images:
        a.images.mkdir(parents=True, exist_ok=True)
    fams = family_order(a.seed, a.docs)
    jobs = [
        (a.seed, s, fams[s : s + BATCH], str(a.images) if a.images else None, a.n_images)
        for s in range(0, a.docs, BATCH)
    ]
    drops: Counter = Counter()
    kinds: Counter = Counter()
    families: Counter = Counter()
    qfam: Counter = Counter()
    variants: set[str] = set()
    n_q = 0
    target = a.out / "docs.jsonl"
    with open(target, "w", encoding="utf-8") as fh, Pool(a.workers) as pool:
        for k, (recs, dr) in enumerate(pool.imap(batch, jobs)):
            drops.update(dr)
            for rec in recs:
                fh.write(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")
                kinds[rec["kind"]] += 1
                families[rec["family"]] += 1
                variants.add(rec["variant"])
                qfam.update(q["family"] for q in rec["questions"])
                n_q += len(rec["questions"])
            print(
                f"batch {k + 1}/{len(jobs)}: {sum(kinds.values())} docs, {n_q} questions, {time.time() - t0:.0f} s",
                flush=True,
            )
    import faker

    secs = time.time() - t0
    n = sum(kinds.values())
    manifest = {
        "seed": a.seed,
        "docs": n,
        "questions": n_q,
        "questions_per_family": dict(sorted(qfam.items())),
        "dropped_questions": dict(sorted(drops.items())),
        "dropped_total": sum(drops.values()),
        "kinds": dict(sorted(kinds.items())),
        "families": dict(sorted(families.items())),
        "n_kinds": len(KINDS),
        "n_families": len(FAMILIES),
        "n_variants": len(variants),
        "faker_version": faker.VERSION,
        "printing": printing_stack(),
        "sha256": hashlib.sha256(target.read_bytes()).hexdigest(),
        "generation_seconds": round(secs, 1),
        "seconds_per_100_docs": round(100 * secs / max(n, 1), 2),
    }
    (a.out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(json.dumps({k: v for k, v in manifest.items() if k not in ("families",)}, indent=1))


if __name__ == "__main__":
    main()
