"""Broad question set: real-looking documents of many kinds with gold answers, photographed four ways.

Two sources of pages:

a. **Real born-digital PDFs** from Debian packages (``texlive-latex-recommended-doc``,
   ``texlive-science-doc``, ``texlive-lang-german``): a conference talk's title slide with superscript
   affiliations, a paper, a thesis title page, two letters, a working-time record, slides with a table, a
   manual page with a table (``REAL_PAGES``). Their questions (``broad_questions.jsonl`` beside this script)
   were written by hand from each page's text layer. None of these PDFs is one that
   ``benchmarks/realpages.py`` uses, and none comes from the packages kept for checks from outside
   (``texlive-latex-base-doc``, ``texlive-base``, ``r-doc-pdf``, ``texlive-publishers-doc``,
   ``texlive-latex-extra-doc``, ``texlive-pictures-doc``).
b. **Rendered documents** from 23 HTML/CSS layouts over 11 document types (``broadset.LAYOUTS``: invoices,
   receipts, bank and card statements, letters, application and registration forms, minutes, programmes /
   timetables / calendars, exam sheets, paper first pages, slides, reports with charts), filled with values
   from nine locales by ``Faker`` (names, organisations, addresses, amounts, dates in several formats, IDs,
   e-mails, phone numbers) and printed to PDF by headless Chromium. Fonts, colours, where labels sit and how
   tables are ruled are drawn per document. Their questions are written while the page is built, so the gold
   answers are known by construction.

Every page is rasterised from its PDF with pypdfium2 at ~2000 px, and every gold answer (or, for a computed
answer, every value it is computed from) is checked against the PDF's text layer: a question whose answer is
not on its page stops the build. Each question carries ``meta.family`` (relation, entity_type, role,
multi_token, lookup, reverse_lookup, schedule, arithmetic, chart, prose_value) and ``subset`` = the document
type, so results break down by type and by family.

Each page is captured four times (one ``group`` per question, WildDoc's structure) under four of five
conditions of the kinds WildDoc names; page *k* (in build order) leaves out condition *k mod 5*, so every
condition appears on 4/5 of the pages and ``meta.condition`` records which one each capture had:

- ``screen_moire``     the page shown on a monitor and photographed: moiré, a slight angle, a colour cast
- ``crumpled``         crumpled and smoothed out again, or folded, with uneven light
- ``distance_lowres``  taken from further away: the page small in a low-resolution frame, slightly blurred
- ``glare``            a lamp's hot spot washing out part of the page, uneven light
- ``rotated``          held sideways or upside down (90 / 180 / 270), on a desk at a slight angle

The split is by document and by layout (``data/broad_split.json``): all pages of one PDF and all documents of
one layout are on the same side; ``dev`` is for development, ``test`` is held out and only reported on.

    apt-get install chromium fonts-dejavu fonts-liberation fonts-noto-core \\
        texlive-latex-recommended-doc texlive-science-doc texlive-lang-german
    pip install -e '.[broad-bench]'
    python benchmarks/broad.py                 # builds benchmarks/out/broad/{dev,test}/ (about 3 minutes on 2 cores)
    python benchmarks/broad.py --check         # only renders and checks the gold answers
    python benchmarks/strategies.py --dataset benchmarks/out/broad/dev --strategies none,docintent ...

Writes ``samples.jsonl`` per split in the synthetic-set format (``meta.clean_image`` is the clean render) and
``manifest.json`` with the counts per split. Rebuilding gives identical images (everything is seeded).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from broadset import LAYOUTS  # noqa: E402  (benchmarks/ is on sys.path)
from broadset.common import LOCALE_NAMES, Ctx, Question  # noqa: E402
from realpages import norm_text, open_pdf  # noqa: E402

ROOT = Path(__file__).resolve().parent
QUESTIONS = ROOT / "broad_questions.jsonl"
SPLIT_FILE = ROOT / "data" / "broad_split.json"
DEFAULT_OUT = ROOT / "out" / "broad"
TL = "/usr/share/doc/texlive-doc/latex/"
RENDER_LONGEST = 2000
QUESTIONS_PER_PAGE = 4
TWICE = ("chart", "schedule")  # families a page may hold two questions of

#: page id -> (PDF path, 0-based page index, document type, document)
REAL_PAGES: dict[str, tuple[str, int, str, str]] = {
    "beamer-talk-title": (TL + "beamer/beamerexample-conference-talk.pdf", 0, "slides", "beamer-conference-talk"),
    "beamer-talk-model": (TL + "beamer/beamerexample-conference-talk.pdf", 3, "slides", "beamer-conference-talk"),
    "beamer-lecture": (TL + "beamer/beamerexample-lecture-print-version.pdf", 0, "slides", "beamer-lecture"),
    "seminar-slides": (TL + "seminar/semsamp1.pdf", 0, "slides", "seminar-semsamp1"),
    "revquantum-paper": (TL + "revquantum/example.pdf", 0, "paper", "revquantum-example"),
    "turnstile-paper": (TL + "turnstile/turnstile_article.pdf", 0, "paper", "turnstile-article"),
    "hepthesis-title": (TL + "hepthesis/example/example.pdf", 0, "paper", "hepthesis-example"),
    "koma-letter": (TL + "koma-script-examples/Kapitel-4/result/letter-23.pdf", 0, "letter", "koma-letter-23"),
    "koma-brief-din": (TL + "koma-script-examples/Anhang-C/result/briefDIN.pdf", 0, "letter", "koma-briefDIN"),
    "milog-timesheet": (TL + "milog/milog-example.pdf", 0, "form", "milog-example"),
    "booktabs-table": (TL + "booktabs/booktabs.pdf", 1, "report", "booktabs"),
}

#: capture condition -> ([(degradation, severity low, severity high)], rotations to draw from, longest side range)
CONDITIONS: dict[str, tuple[list[tuple[str, float, float]], tuple[int, ...], tuple[int, int]]] = {
    "screen_moire": (
        [
            ("moire", 0.35, 0.65),
            ("perspective", 0.15, 0.4),
            ("color_cast", 0.2, 0.5),
            ("noise", 0.1, 0.25),
            ("jpeg", 0.25, 0.45),
        ],
        (0,),
        (1700, 2000),
    ),
    "crumpled": ([("crumple", 0.55, 0.95), ("shadow", 0.15, 0.35), ("jpeg", 0.2, 0.4)], (0,), (1700, 2000)),
    "distance_lowres": ([("distance", 0.45, 0.85), ("noise", 0.1, 0.3), ("jpeg", 0.35, 0.6)], (0,), (1100, 1400)),
    "glare": ([("uneven_light", 0.3, 0.6), ("glare", 0.55, 0.95), ("jpeg", 0.2, 0.4)], (0,), (1700, 2000)),
    "rotated": ([("perspective", 0.15, 0.35), ("defocus", 0.1, 0.3), ("jpeg", 0.2, 0.4)], (90, 180, 270), (1700, 2000)),
}
CONDITION_NAMES = tuple(CONDITIONS)
CHROMIUM_FLAGS = (
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


# --- pages -----------------------------------------------------------------------------------------


def load_split() -> dict[str, dict[str, str]]:
    """The committed split: ``{"documents": {real document: split}, "layouts": {layout: split},
    "pages_per_layout": {split: n}}``."""
    split = json.loads(SPLIT_FILE.read_text())
    missing = sorted(
        ({d for *_, d in REAL_PAGES.values()} - set(split["documents"])) | (set(LAYOUTS) - set(split["layouts"]))
    )
    if missing:
        raise SystemExit(f"{SPLIT_FILE}: no split for {', '.join(missing)}")
    return split


def load_questions() -> list[dict]:
    """The hand-written questions of the real pages: id, page, question, answers, family (and task)."""
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    unknown = sorted({r["page"] for r in rows} - set(REAL_PAGES))
    if unknown:
        raise SystemExit(f"{QUESTIONS}: questions name unknown pages: {', '.join(unknown)}")
    return rows


def rendered_pages(split: dict) -> list[dict]:
    """Every rendered page of the set: id, layout, document type, split, seed and locale."""
    pages = []
    for layout, side in split["layouts"].items():
        for k in range(split["pages_per_layout"][side]):
            seed = zlib.crc32(f"{layout}/{k}".encode())
            pages.append(
                {
                    "page": f"{layout}-{k + 1}",
                    "layout": layout,
                    "doc_type": LAYOUTS[layout][0],
                    "split": side,
                    "seed": seed,
                    "locale": LOCALE_NAMES[(seed >> 3) % len(LOCALE_NAMES)],
                }
            )
    return pages


def print_to_pdf(html: str, pdf: Path) -> None:
    """Render one HTML document to ``pdf`` with headless Chromium (skipped when that exact HTML was printed
    already: the file's hash is kept beside it)."""
    digest = hashlib.sha256(html.encode()).hexdigest()
    stamp = pdf.with_suffix(".sha256")
    if pdf.exists() and stamp.exists() and stamp.read_text() == digest:
        return
    chromium = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if not chromium:
        raise SystemExit("chromium: not found; install Debian's chromium package")
    pdf.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="broad-chromium-") as tmp:
        src = Path(tmp) / "page.html"
        src.write_text(html, encoding="utf-8")
        cmd = [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={tmp}/profile", f"--print-to-pdf={pdf}", src.as_uri()]
        done = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if done.returncode != 0 or not pdf.exists():
        raise SystemExit(f"chromium failed on {pdf.name}: {done.stderr.strip()[-400:]}")
    stamp.write_text(digest)


def rasterise(path: str | Path, index: int, cache: Path, single: bool = False) -> tuple[np.ndarray, str]:
    """Page ``index`` of a PDF at ~RENDER_LONGEST px (RGB uint8) and its text layer; with ``single`` the PDF
    must have exactly one page (a rendered layout that overflows its page is a layout bug)."""
    doc = open_pdf(str(path), cache)
    if single and len(doc) != 1:
        raise SystemExit(f"{path}: {len(doc)} pages; the layout must fit on one page")
    page = doc[index]
    w, h = page.get_size()
    bitmap = page.render(scale=RENDER_LONGEST / max(w, h))
    image = np.ascontiguousarray(bitmap.to_numpy()[:, :, :3])
    if bitmap.mode in ("BGRA", "BGRX", "BGR"):  # pdfium's native order
        image = np.ascontiguousarray(image[:, :, ::-1])
    return image, page.get_textpage().get_text_range()


def choose_questions(pool: list[Question], seed: int, k: int, used: Counter) -> list[Question]:
    """``k`` questions of a page's pool: families not yet on the page and used least so far in the set first
    (ties drawn by ``seed``; chart and schedule questions, which only some layouts can ask, may come twice on
    a page), never two with the same wording."""
    rng = np.random.default_rng(seed)
    order = [pool[i] for i in rng.permutation(len(pool))]
    chosen: list[Question] = []
    while order and len(chosen) < k:
        on_page = Counter(x.family for x in chosen)
        best = min(order, key=lambda x: (on_page[x.family] > (1 if x.family in TWICE else 0), used[x.family]))
        order.remove(best)
        if best.question not in {x.question for x in chosen}:
            chosen.append(best)
            used[best.family] += 1
    return chosen


def check_on_page(page_id: str, text: str, questions: list[tuple[str, tuple[str, ...]]]) -> list[str]:
    """Questions (id, strings that must be shown) whose strings are not all on the page's text layer."""
    norm = norm_text(text)
    return [
        f"{qid}: {s!r} not on page {page_id}" for qid, shown in questions for s in shown if norm_text(s) not in norm
    ]


# --- captures --------------------------------------------------------------------------------------


def page_conditions(position: int) -> list[str]:
    """The conditions of captures 1-4 of the page at ``position``: all five but one, in a fixed order."""
    left_out = position % len(CONDITION_NAMES)
    return [c for i, c in enumerate(CONDITION_NAMES) if i != left_out]


def plan(page_id: str, capture: int, condition: str):
    """The capture plan of one page, capture number and condition (seeded by all three)."""
    from docintent.synth.capture import CapturePlan, Step

    steps, rotations, (lo_side, hi_side) = CONDITIONS[condition]
    rng = np.random.default_rng(zlib.crc32(f"{page_id}/{capture}/{condition}".encode()))
    drawn = []
    for name, lo, hi in steps:
        if name == "crumple" and rng.random() < 0.3:
            name = "fold"  # folded rather than crumpled: the other way paper gets creased
        drawn.append(Step(name, float(rng.uniform(lo, hi)), int(rng.integers(2**31))))
    rotation = int(rotations[int(rng.integers(len(rotations)))])
    return CapturePlan(tuple(drawn), rotation, int(rng.integers(lo_side, hi_side + 1)), int(rng.integers(2**31)))


# --- build -----------------------------------------------------------------------------------------


def build(out: Path, force: bool = False, check_only: bool = False) -> dict:
    """Render, check, capture and index every page; returns the manifest."""
    import cv2

    from docintent.synth.capture import apply

    started = time.time()
    split = load_split()
    real_rows = load_questions()
    pages: list[dict] = []
    problems: list[str] = []
    for page_id, (path, index, doc_type, document) in REAL_PAGES.items():
        if not Path(path).exists():
            raise SystemExit(f"{path}: missing; install the Debian packages named in this script's docstring")
        image, text = rasterise(path, index, out / "pdf")
        rows = [r for r in real_rows if r["page"] == page_id]
        problems += check_on_page(
            page_id, text, [(r["id"], tuple(r.get("evidence") or r["answers"][:1])) for r in rows]
        )
        pages.append(
            {
                "page": page_id,
                "layout": f"pdf:{document}",
                "doc_type": doc_type,
                "document": document,
                "split": split["documents"][document],
                "source": "debian-pdf",
                "origin": f"{path}#page={index + 1}",
                "image": image,
                "questions": [
                    {
                        "id": r["id"],
                        "question": r["question"],
                        "answers": r["answers"],
                        "family": r["family"],
                        "task": r.get("task", "doc"),
                    }
                    for r in rows
                ],
            }
        )
    used: Counter = Counter()
    for spec in rendered_pages(split):
        ctx = Ctx(spec["seed"], spec["locale"])
        doc = LAYOUTS[spec["layout"]][1](ctx)
        pdf = out / "pdf" / f"{spec['page']}.pdf"
        print_to_pdf(doc.html, pdf)
        image, text = rasterise(pdf, 0, out / "pdf", single=True)
        chosen = choose_questions(doc.questions, spec["seed"], QUESTIONS_PER_PAGE, used)
        ids = [f"{spec['page']}-q{i + 1}" for i in range(len(chosen))]
        problems += check_on_page(spec["page"], text, [(i, x.must_show()) for i, x in zip(ids, chosen)])
        pages.append(
            {
                **spec,
                "document": spec["page"],
                "source": "rendered-html",
                "origin": spec["layout"],
                "image": image,
                "questions": [
                    {"id": i, "question": x.question, "answers": list(x.answers), "family": x.family, "task": x.task}
                    for i, x in zip(ids, chosen)
                ],
            }
        )
        print(f"{spec['page']}: rendered ({spec['locale']})", flush=True)
    if problems:
        raise SystemExit("gold answers not found on their pages:\n  " + "\n  ".join(problems))
    if check_only:
        n = sum(len(p["questions"]) for p in pages)
        print(f"all gold answers of {n} questions on {len(pages)} pages found on their pages")
        return {}
    samples: dict[str, list[dict]] = {"dev": [], "test": []}
    for position, page in enumerate(pages):
        side = page["split"]
        images = out / side / "images"
        images.mkdir(parents=True, exist_ok=True)
        clean = images / f"{page['page']}-clean.png"
        render_hash = hashlib.sha256(page["image"].tobytes()).hexdigest()
        cv2.imwrite(str(clean), page["image"][:, :, ::-1])
        for capture, condition in enumerate(page_conditions(position), 1):
            capture_plan = plan(page["page"], capture, condition)
            path = images / f"{page['page']}-c{capture}.jpg"
            # a capture is redone when its page's render or its plan changed (the stamp records both)
            stamp = path.with_suffix(".stamp")
            key = hashlib.sha256((render_hash + json.dumps(capture_plan.to_meta())).encode()).hexdigest()
            if force or not path.exists() or not stamp.exists() or stamp.read_text() != key:
                captured, _ = apply(page["image"], capture_plan)
                cv2.imwrite(str(path), captured[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, 90])
                stamp.write_text(key)
            for qrow in page["questions"]:
                samples[side].append(
                    {
                        "id": f"{qrow['id']}-c{capture}",
                        "image": f"images/{path.name}",
                        "question": qrow["question"],
                        "answers": qrow["answers"],
                        "task": qrow["task"],
                        "subset": page["doc_type"],
                        "group": qrow["id"],
                        "capture": capture,
                        "degradations": list(capture_plan.names),
                        "meta": {
                            "condition": condition,
                            "family": qrow["family"],
                            "doc_type": page["doc_type"],
                            "layout": page["layout"],
                            "source": page["source"],
                            "origin": page["origin"],
                            "document": page["document"],
                            "page": page["page"],
                            "split": side,
                            "locale": page.get("locale"),
                            "clean_image": f"images/{clean.name}",
                            "capture_plan": capture_plan.to_meta(),
                        },
                    }
                )
        print(f"{page['page']}: captured", flush=True)
    for side, rows in samples.items():
        with open(out / side / "samples.jsonl", "w", encoding="utf-8") as f:
            # questions in a seeded shuffled order (captures of one question together), so that a run over
            # the first N samples (``docintent bench --limit``) covers every kind of page
            for row in sorted(rows, key=lambda r: (zlib.crc32(r["group"].encode()), r["group"], r["capture"])):
                f.write(json.dumps(row, ensure_ascii=False) + "\n")
    manifest = {"build_seconds": round(time.time() - started, 1), "splits": {}}
    for side in ("dev", "test"):
        mine = [p for p in pages if p["split"] == side]
        rows = samples[side]
        manifest["splits"][side] = {
            "pages": len(mine),
            "questions": sum(len(p["questions"]) for p in mine),
            "samples": len(rows),
            "pages_by_source": dict(Counter(p["source"] for p in mine)),
            "doc_types": dict(sorted(Counter(p["doc_type"] for p in mine).items())),
            "layouts": sorted({p["layout"] for p in mine}),
            "families": dict(sorted(Counter(r["meta"]["family"] for r in rows if r["capture"] == 1).items())),
            "tasks": dict(sorted(Counter(r["task"] for r in rows if r["capture"] == 1).items())),
            "conditions": dict(sorted(Counter(r["meta"]["condition"] for r in rows).items())),
            "locales": dict(sorted(Counter(p.get("locale") or "real" for p in mine).items())),
        }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--force", action="store_true", help="re-capture images even where their stamp is current")
    ap.add_argument("--check", action="store_true", help="only render and check the gold answers")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    manifest = build(Path(args.out), args.force, args.check)
    if manifest:
        print(
            json.dumps(
                {
                    s: {k: v for k, v in m.items() if k in ("pages", "questions", "samples")}
                    for s, m in manifest["splits"].items()
                },
                indent=1,
            )
        )
        print(f"built in {manifest['build_seconds']} s")


if __name__ == "__main__":
    main()
