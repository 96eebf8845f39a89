"""Real-page question set: born-digital manual pages from Debian documentation packages, photographed four ways.

The pages are title pages, copyright pages, tables of contents, reference cards, tables and a letter from
``octave-doc``, ``maxima-doc``, ``gnuplot-doc``, ``texlive-science-doc``, ``texlive-latex-recommended-doc`` and
``texlive-humanities-doc`` (not ``texlive-latex-base-doc`` or ``r-doc-pdf``, which are kept for outside checks
and the retrieval corpus). The questions (``realpages_questions.jsonl`` beside this script) were written from
each page's text layer and checked by reading the page; every gold answer is checked again here against the
text layer when the set is built (a question whose answer is not on its page stops the build).

Each page is rendered at ~2000 px and captured under four conditions unlike the synthetic set's random mix,
one per capture number (the WildDoc structure: four captures of one question share ``group``):

1. ``lowlight_motion``    dim, low-contrast light with a hand-shake motion blur, sensor noise, JPEG
2. ``shadow_perspective`` photographed at an angle on a desk with a hand / phone shadow across the page
3. ``rotated``            held sideways or upside down (90 / 180 / 270), slightly defocused, tinted light
4. ``curl_warp``          the sheet curls away from the table, a soft shadow, JPEG

The split is by document (all pages of one PDF on the same side), fixed in ``PAGES``: ``dev`` is for
development, ``test`` is held out and only reported on.

    apt-get install octave-doc maxima-doc gnuplot-doc texlive-science-doc texlive-latex-recommended-doc \\
        texlive-humanities-doc
    python benchmarks/realpages.py                       # builds benchmarks/out/realpages/{dev,test}/
    docintent bench --dataset synth:benchmarks/out/realpages/test --strategies none,docintent ...

Writes ``samples.jsonl`` per split in the synthetic-set format (``meta.clean_image`` is the clean render, so
``benchmarks/strategies.py --dataset`` also reports the reader's ceiling on clean pages).
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import shutil
import sys
import unicodedata
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
QUESTIONS = ROOT / "realpages_questions.jsonl"
DEFAULT_OUT = ROOT / "out" / "realpages"
TL = "/usr/share/doc/texlive-doc/"

#: page id -> (PDF path, 0-based page index, kind of page, document group, split)
PAGES: dict[str, tuple[str, int, str, str, str]] = {
    "octave-refcard-1": ("/usr/share/doc/octave/refcard-a4.pdf", 0, "refcard", "octave-refcard", "dev"),
    "octave-refcard-2": ("/usr/share/doc/octave/refcard-a4.pdf", 1, "refcard", "octave-refcard", "dev"),
    "octave-title": ("/usr/share/doc/octave/octave.pdf", 0, "title", "octave", "dev"),
    "octave-copyright": ("/usr/share/doc/octave/octave.pdf", 1, "copyright", "octave", "dev"),
    "octave-toc": ("/usr/share/doc/octave/octave.pdf", 2, "toc", "octave", "dev"),
    "liboctave-title": ("/usr/share/doc/octave/liboctave.pdf", 0, "title", "liboctave", "test"),
    "liboctave-copyright": ("/usr/share/doc/octave/liboctave.pdf", 1, "copyright", "liboctave", "test"),
    "gnuplot-title": ("/usr/share/doc/gnuplot/gnuplot.pdf", 0, "title", "gnuplot", "dev"),
    "gnuplot-toc": ("/usr/share/doc/gnuplot/gnuplot.pdf", 1, "toc", "gnuplot", "dev"),
    "maxima-title": ("/usr/share/doc/maxima-doc/maximabook-19-Sept-2004.pdf.gz", 0, "title", "maxima", "dev"),
    "maxima-toc": ("/usr/share/doc/maxima-doc/maximabook-19-Sept-2004.pdf.gz", 2, "toc", "maxima", "dev"),
    "ntg-letter": (TL + "latex/ntgclass/brief-sample.pdf", 0, "letter", "ntg-brief-sample", "dev"),
    "brief-title": (TL + "latex/ntgclass/brief.pdf", 0, "title", "ntg-brief", "test"),
    "siunitx-title": (TL + "latex/siunitx/siunitx.pdf", 0, "title", "siunitx", "dev"),
    "mhchem-title": (TL + "latex/mhchem/mhchem.pdf", 0, "title", "mhchem", "test"),
    "chemmacros-title": (TL + "latex/chemmacros/chemmacros-manual.pdf", 0, "title", "chemmacros", "dev"),
    "nicematrix-title": (TL + "latex/nicematrix/nicematrix.pdf", 0, "title", "nicematrix", "test"),
    "algorithm2e-title": (TL + "latex/algorithm2e/algorithm2e.pdf", 0, "title", "algorithm2e", "test"),
    "physics-title": (TL + "latex/physics/physics.pdf", 0, "title", "physics", "dev"),
    "sankey-title": (TL + "latex/sankey/sankey.pdf", 0, "title", "sankey", "dev"),
    "xcolor-title": (TL + "latex/xcolor/xcolor.pdf", 0, "title", "xcolor", "dev"),
    "xcolor-table": (TL + "latex/xcolor/xcolor.pdf", 9, "table", "xcolor", "dev"),
    "polyglossia-title": (TL + "latex/polyglossia/polyglossia.pdf", 0, "title", "polyglossia", "dev"),
    "pdfpages-title": (TL + "latex/pdfpages/pdfpages.pdf", 0, "title", "pdfpages", "test"),
    "ragged2e-title": (TL + "latex/ragged2e/ragged2e.pdf", 0, "title", "ragged2e", "test"),
    "setspace-title": (TL + "latex/setspace/setspace-doc.pdf", 0, "title", "setspace", "dev"),
    "hologo-title": (TL + "generic/hologo/hologo.pdf", 0, "title", "hologo", "test"),
    "unicode-math-title": (TL + "latex/unicode-math/unicode-math.pdf", 0, "title", "unicode-math", "dev"),
    "struktex-title": (TL + "latex/struktex/struktex.en.pdf", 0, "title", "struktex", "dev"),
    "siunits-title": (TL + "latex/siunits/SIunits.pdf", 0, "title", "siunits", "dev"),
    "siunits-history": (TL + "latex/siunits/SIunits.pdf", 4, "prose", "siunits", "dev"),
    "statistics-title": (TL + "latex/statistics/statistics.pdf", 0, "title", "statistics", "dev"),
    "thermodynamics-title": (TL + "latex/thermodynamics/thermodynamics.pdf", 0, "title", "thermodynamics", "test"),
    "bytefield-title": (TL + "latex/bytefield/bytefield.pdf", 0, "title", "bytefield", "test"),
    "cryptocode-title": (TL + "latex/cryptocode/cryptocode.pdf", 0, "title", "cryptocode", "test"),
    "xkeyval-title": (TL + "latex/xkeyval/xkeyval.pdf", 0, "title", "xkeyval", "dev"),
    "subfig-title": (TL + "latex/subfig/subfig.pdf", 0, "title", "subfig", "test"),
    "hepunits-table": (TL + "latex/hepunits/hepunits.pdf", 2, "table", "hepunits", "test"),
    "covington-title": (TL + "latex/covington/covington.pdf", 0, "title", "covington", "dev"),
    "dramatist-title": (TL + "latex/dramatist/dramatist.pdf", 0, "title", "dramatist", "test"),
    "poemscol-title": (TL + "latex/poemscol/poemscol.pdf", 0, "title", "poemscol", "dev"),
    "jura-title": (TL + "latex/jura/jura.pdf", 0, "title", "jura", "test"),
    "bibleref-title": (TL + "latex/bibleref/bibleref.pdf", 0, "title", "bibleref", "dev"),
    "linguex-title": (TL + "latex/linguex/linguex-doc.pdf", 0, "title", "linguex", "test"),
}

#: capture number -> (condition name, [(degradation, severity low, severity high)], rotations to draw from)
CONDITIONS: dict[int, tuple[str, list[tuple[str, float, float]], tuple[int, ...]]] = {
    1: (
        "lowlight_motion",
        [("low_contrast", 0.5, 0.8), ("motion_blur", 0.35, 0.65), ("noise", 0.2, 0.4), ("jpeg", 0.3, 0.6)],
        (0,),
    ),
    2: ("shadow_perspective", [("perspective", 0.4, 0.8), ("shadow", 0.55, 0.9), ("jpeg", 0.2, 0.4)], (0,)),
    3: ("rotated", [("color_cast", 0.3, 0.6), ("defocus", 0.15, 0.35), ("jpeg", 0.2, 0.4)], (90, 180, 270)),
    4: ("curl_warp", [("curl", 0.55, 0.9), ("shadow", 0.2, 0.4), ("jpeg", 0.2, 0.4)], (0,)),
}
RENDER_LONGEST = 2000


def norm_text(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).replace("\ufffe", "").replace("\u00ad", "")
    text = text.replace("’", "'").replace("“", '"').replace("”", '"').replace("–", "-").replace("—", "-")
    return re.sub(r"\s+", " ", text).strip().lower()


def open_pdf(path: str, cache: Path):
    import pypdfium2 as pdfium

    if path.endswith(".gz"):
        plain = cache / Path(path).name[:-3]
        if not plain.exists():
            cache.mkdir(parents=True, exist_ok=True)
            with gzip.open(path, "rb") as src, open(plain, "wb") as dst:
                shutil.copyfileobj(src, dst)
        path = str(plain)
    return pdfium.PdfDocument(path)


def load_questions() -> list[dict]:
    """The committed questions, one per line: id, page, question, answers."""
    rows = [json.loads(line) for line in QUESTIONS.read_text(encoding="utf-8").splitlines() if line.strip()]
    unknown = sorted({r["page"] for r in rows} - set(PAGES))
    if unknown:
        raise SystemExit(f"{QUESTIONS}: questions name unknown pages: {', '.join(unknown)}")
    return rows


def render(page_id: str, cache: Path) -> tuple[np.ndarray, str]:
    """The page rendered with its longest side ~RENDER_LONGEST px (RGB uint8) and its text layer."""
    path, index, *_ = PAGES[page_id]
    if not Path(path).exists() and not (path.endswith(".gz") and (cache / Path(path).name[:-3]).exists()):
        raise SystemExit(f"{path}: missing; install the Debian documentation packages named in this script's docstring")
    doc = open_pdf(path, cache)
    page = doc[index]
    w, h = page.get_size()
    bitmap = page.render(scale=RENDER_LONGEST / max(w, h))
    image = np.ascontiguousarray(bitmap.to_numpy()[:, :, :3])
    if bitmap.mode in ("BGRA", "BGRX", "BGR"):  # pdfium's native order
        image = np.ascontiguousarray(image[:, :, ::-1])
    return image, page.get_textpage().get_text_range()


def check_answers(rows: list[dict], texts: dict[str, str]) -> list[str]:
    """Questions whose first gold answer is not in their page's text layer (whitespace / quotes normalised)."""
    bad = []
    for r in rows:
        text = norm_text(texts[r["page"]])
        if not any(norm_text(a) in text for a in r["answers"][:1]):
            bad.append(f"{r['id']}: {r['answers'][0]!r} not on page {r['page']}")
    return bad


def plan(page_id: str, capture: int):
    """The capture plan of one page and capture number (seeded by both, so rebuilding gives the same images)."""
    import zlib

    from docintent.synth.capture import CapturePlan, Step

    name, steps, rotations = CONDITIONS[capture]
    rng = np.random.default_rng(zlib.crc32(f"{page_id}/{capture}".encode()))
    drawn = tuple(Step(d, float(rng.uniform(lo, hi)), int(rng.integers(2**31))) for d, lo, hi in steps)
    rotation = int(rotations[int(rng.integers(len(rotations)))])
    return name, CapturePlan(drawn, rotation, int(rng.integers(1700, 2001)), int(rng.integers(2**31)))


def build(out: Path, force: bool = False) -> dict[str, int]:
    """Render, capture and index every page; returns the number of samples per split."""
    import cv2

    from docintent.synth.capture import apply

    rows = load_questions()
    texts: dict[str, str] = {}
    meta: dict[str, dict] = {}
    for page_id in PAGES:
        # each split holds its own images (a dataset's images live inside its folder)
        images = out / PAGES[page_id][4] / "images"
        images.mkdir(parents=True, exist_ok=True)
        clean_path = images / f"{page_id}-clean.png"
        image, text = render(page_id, out / "pdf")
        texts[page_id] = text
        if force or not clean_path.exists():
            cv2.imwrite(str(clean_path), image[:, :, ::-1])
        for capture in CONDITIONS:
            name, capture_plan = plan(page_id, capture)
            path = images / f"{page_id}-c{capture}.jpg"
            if force or not path.exists():
                captured, info = apply(image, capture_plan)
                cv2.imwrite(str(path), captured[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, 92])
            meta[f"{page_id}/{capture}"] = {
                "condition": name,
                "degradations": list(capture_plan.names),
                "plan": capture_plan.to_meta(),
            }
        print(f"{page_id}: rendered and captured", flush=True)
    bad = check_answers(rows, texts)
    if bad:
        raise SystemExit("gold answers not found on their pages:\n  " + "\n  ".join(bad))
    counts: dict[str, int] = {}
    for split in ("dev", "test"):
        folder = out / split
        folder.mkdir(exist_ok=True)
        n = 0
        with open(folder / "samples.jsonl", "w", encoding="utf-8") as f:
            for r in rows:
                path, index, kind, document, page_split = PAGES[r["page"]]
                if page_split != split:
                    continue
                for capture in CONDITIONS:
                    m = meta[f"{r['page']}/{capture}"]
                    sample = {
                        "id": f"{r['id']}-c{capture}",
                        "image": f"images/{r['page']}-c{capture}.jpg",
                        "question": r["question"],
                        "answers": r["answers"],
                        "task": "doc",
                        "subset": kind,
                        "group": r["id"],
                        "capture": capture,
                        "degradations": m["degradations"],
                        "meta": {
                            "condition": m["condition"],
                            "page": r["page"],
                            "document": document,
                            "source": f"{path}#page={index + 1}",
                            "split": split,
                            "clean_image": f"images/{r['page']}-clean.png",
                            "capture_plan": m["plan"],
                        },
                    }
                    f.write(json.dumps(sample, ensure_ascii=False) + "\n")
                    n += 1
        counts[split] = n
    summary = {
        "pages": {s: sorted(p for p, v in PAGES.items() if v[4] == s) for s in ("dev", "test")},
        "questions": {s: sum(1 for r in rows if PAGES[r["page"]][4] == s) for s in ("dev", "test")},
        "samples": counts,
        "conditions": {c: v[0] for c, v in CONDITIONS.items()},
    }
    (out / "manifest.json").write_text(json.dumps(summary, indent=2))
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT))
    ap.add_argument("--force", action="store_true", help="re-render and re-capture images that exist")
    ap.add_argument("--check", action="store_true", help="only check the gold answers against the text layers")
    args = ap.parse_args()
    out = Path(args.out)
    if args.check:
        rows = load_questions()
        texts = {p: render(p, out / "pdf")[1] for p in PAGES}
        bad = check_answers(rows, texts)
        print("\n".join(bad) or f"all {len(rows)} gold answers found on their pages")
        sys.exit(1 if bad else 0)
    counts = build(out, args.force)
    print(json.dumps(counts))


if __name__ == "__main__":
    main()
