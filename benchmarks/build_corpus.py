"""Build the TeX Live documentation retrieval corpus: a page index plus a VisDocAgentBench-format query set.

Source: the PDFs of the Debian package ``texlive-latex-base-doc`` (269 PDFs, 8,002 pages), installed with

    apt-get update && apt-get install -y --no-install-recommends texlive-latex-base-doc

(the script runs this itself when it is root and the PDFs are missing). To keep the benchmark affordable on
two shared cores, documents longer than ``--max-doc-pages`` (default 100) are left out: the two kernel source
listings alone are 2,800 pages of code.

Queries (nothing is copied from the page text; the recipes are deterministic given ``--seed``):

- **direct (level 1)**: from a PDF bookmark (section title) whose words really appear on the page it points
  to, is unique in the corpus and has at least two distinctive words. The title loses its number, its words
  are replaced through a small synonym table (at least one must change, e.g. "Defining Colours" ->
  "declaring hues"), and it is wrapped in a question template. Target: the bookmarked page.
- **one-bridge (level 2)**: target = the first page of the documentation of package P; support = a section
  page of *another* document that names P as a package ("P package", "package P", ``\\usepackage{P}``) and
  no other package of the corpus. The query describes only the support section (paraphrased title) and asks
  for "the package named/mentioned/referred to in" it, so the target is found only through the support page.

Outputs under ``--out``: ``index/`` (docintent index, text layer), ``queries.jsonl``,
``evaluator_annotations.jsonl``, ``pages.jsonl``, ``corpus.json`` (sizes and the document list).

    python benchmarks/build_corpus.py --out benchmarks/out/texlive
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np

from docintent.evaluation.visdoc import write_jsonl
from docintent.retrieval import PageIndex, build_index
from docintent.retrieval.planners import bridge_terms
from docintent.retrieval.text import tokenize

DEBIAN_PACKAGE = "texlive-latex-base-doc"

GENERIC_TITLES = {
    "introduction",
    "contents",
    "index",
    "references",
    "bibliography",
    "acknowledgements",
    "acknowledgments",
    "change history",
    "implementation",
    "usage",
    "options",
    "the code",
    "code",
    "overview",
    "history",
    "examples",
    "example",
    "license",
    "copyright",
    "version history",
    "changes",
    "todo",
    "bugs",
    "summary",
    "abstract",
    "preface",
    "conclusion",
    "package options",
    "the package",
    "documentation",
    "user interface",
    "interface",
    "the implementation",
    "the documentation",
    "identification",
    "initialization",
    "declarations",
}
GENERIC_WORDS = set("the a an of and or in on for to with by its new package packages latex tex macro macros".split())

# Paraphrase table: each word maps to wording a reader might use instead (first choice is used).
SYNONYMS = {
    "defining": "declaring",
    "define": "declare",
    "definition": "declaration",
    "definitions": "declarations",
    "using": "working with",
    "use": "employing",
    "usage": "how to employ",
    "options": "settings",
    "option": "setting",
    "commands": "instructions",
    "command": "instruction",
    "fonts": "typefaces",
    "font": "typeface",
    "selection": "choosing",
    "selecting": "choosing",
    "select": "choose",
    "tables": "tabular material",
    "table": "tabular",
    "figures": "illustrations",
    "figure": "illustration",
    "including": "inserting",
    "include": "insert",
    "inclusion": "insertion",
    "problems": "issues",
    "problem": "issue",
    "errors": "mistakes",
    "error": "mistake",
    "numbers": "numerals",
    "numbering": "enumeration",
    "references": "cross-links",
    "reference": "cross-link",
    "referencing": "cross-linking",
    "rotation": "turning",
    "rotating": "turning",
    "scaling": "resizing",
    "colours": "hues",
    "colour": "hue",
    "colors": "hues",
    "color": "hue",
    "environments": "blocks",
    "environment": "block",
    "equations": "formulas",
    "equation": "formula",
    "mathematics": "maths",
    "math": "maths",
    "mathematical": "maths",
    "lists": "enumerations",
    "list": "enumeration",
    "description": "explanation",
    "examples": "samples",
    "example": "sample",
    "interface": "API",
    "spacing": "gaps",
    "space": "gap",
    "margins": "borders",
    "margin": "border",
    "footnotes": "notes at the foot",
    "footnote": "note at the foot",
    "citations": "citing sources",
    "citation": "citing a source",
    "counters": "counting registers",
    "counter": "counting register",
    "boxes": "frames",
    "box": "frame",
    "lines": "rows of text",
    "line": "row of text",
    "breaking": "splitting",
    "breaks": "splits",
    "break": "split",
    "alignment": "lining up",
    "aligned": "lined up",
    "arrays": "matrices",
    "array": "matrix",
    "loading": "activating",
    "load": "activate",
    "hooks": "callbacks",
    "hook": "callback",
    "keys": "parameters",
    "key": "parameter",
    "values": "settings",
    "value": "setting",
    "default": "standard",
    "defaults": "presets",
    "changes": "modifications",
    "change": "modification",
    "compatibility": "backward support",
    "encodings": "character sets",
    "encoding": "character set",
    "languages": "tongues",
    "language": "tongue",
    "input": "source",
    "output": "result",
    "symbols": "glyphs",
    "symbol": "glyph",
    "length": "extent",
    "lengths": "extents",
    "sections": "parts",
    "section": "part",
    "titles": "headings",
    "title": "heading",
    "headings": "titles",
    "heading": "title",
    "multiple": "several",
    "simple": "basic",
    "advanced": "sophisticated",
    "special": "particular",
    "specific": "particular",
    "general": "overall",
    "support": "handling",
    "handling": "treatment",
    "processing": "treatment",
    "checking": "verifying",
    "check": "verify",
    "writing": "composing",
    "write": "compose",
    "files": "documents",
    "file": "document",
    "text": "prose",
    "document": "paper",
    "documents": "papers",
    "pages": "sheets",
    "page": "sheet",
    "style": "look",
    "styles": "looks",
    "layout": "arrangement",
    "size": "dimension",
    "sizes": "dimensions",
    "creating": "making",
    "create": "make",
    "new": "fresh",
    "additional": "extra",
    "miscellaneous": "assorted",
    "various": "assorted",
    "known": "recognised",
    "restrictions": "limitations",
    "limitations": "restrictions",
    "features": "capabilities",
    "feature": "capability",
    "parameters": "arguments",
    "parameter": "argument",
    "arguments": "parameters",
    "argument": "parameter",
    "internal": "inner",
    "internals": "inner workings",
    "user": "author",
    "users": "authors",
    "version": "release",
    "versions": "releases",
    "driver": "back end",
    "drivers": "back ends",
    "graphics": "pictures",
    "images": "pictures",
    "image": "picture",
    "floats": "floating objects",
    "float": "floating object",
    "positioning": "placement",
    "placement": "positioning",
    "vertical": "up-down",
    "horizontal": "left-right",
    "character": "glyph",
    "characters": "glyphs",
    "mode": "state",
    "modes": "states",
    "setting": "configuration",
    "settings": "configuration",
    "configuration": "set-up",
    "customization": "tailoring",
    "customizing": "tailoring",
    "customising": "tailoring",
    "storing": "saving",
    "store": "save",
    "printing": "typesetting",
    "print": "typeset",
    "display": "show",
    "displayed": "shown",
    "dates": "days",
    "date": "day",
    "time": "clock",
    "names": "labels",
    "name": "label",
    "basic": "elementary",
    "main": "principal",
    "short": "brief",
    "long": "lengthy",
    "old": "legacy",
    "obsolete": "outdated",
    "deprecated": "outdated",
    "extensions": "add-ons",
    "extension": "add-on",
}
L1_TEMPLATES = (
    "Where is {p} explained?",
    "Which page covers {p}?",
    "Find the page about {p}.",
    "I need the part of the manuals that describes {p}.",
    "Show me the documentation of {p}.",
    "What does the documentation say about {p}?",
)
L2_TEMPLATES = (
    "Which page opens the documentation of the package named in the section about {p}?",
    "Find the first page of the manual for the package mentioned in the part on {p}.",
    "Show the title page of the package referred to in the section on {p}.",
    "Where does the documentation start for the package that is named in the discussion of {p}?",
)


def ensure_pdfs() -> list[Path]:
    """The package's PDFs, installing the package first when possible."""

    def listed() -> list[Path]:
        out = subprocess.run(["dpkg", "-L", DEBIAN_PACKAGE], capture_output=True, text=True)
        return sorted(Path(p) for p in out.stdout.split() if p.endswith(".pdf") and Path(p).is_file())

    pdfs = listed() if shutil.which("dpkg") else []
    if pdfs:
        return pdfs
    if shutil.which("apt-get") and os.geteuid() == 0:
        print(f"installing {DEBIAN_PACKAGE} with apt-get ...", file=sys.stderr)
        subprocess.run(["apt-get", "update"], check=True, stdout=subprocess.DEVNULL)
        subprocess.run(
            ["apt-get", "install", "-y", "--no-install-recommends", DEBIAN_PACKAGE],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        pdfs = listed()
    if not pdfs:
        sys.exit(f"no PDFs found; install them with: apt-get install -y --no-install-recommends {DEBIAN_PACKAGE}")
    return pdfs


def clean_title(title: str) -> str:
    title = re.sub(r"^\s*(?:[A-Z]|\d+)(?:\.\d+)*\.?\s+", "", title.strip())  # "3.1 ", "A.2 "
    title = re.sub(r"\\[A-Za-z]+\s*", "", title)  # stray TeX in bookmarks
    return " ".join(title.replace("\x00", "").split()).strip(" .:")


def paraphrase(title: str) -> str | None:
    """Title words through :data:`SYNONYMS`, lower-cased; None when no word could be changed."""
    words = re.findall(r"[A-Za-z0-9][A-Za-z0-9'+-]*|\S", title)
    changed = 0
    out = []
    for w in words:
        sub = SYNONYMS.get(w.lower())
        if sub:
            out.append(sub)
            changed += 1
        else:
            out.append(w if w.isupper() or any(c.isupper() for c in w[1:]) else w.lower())
    if not changed:
        return None
    text = " ".join(out)
    return re.sub(r"\s+([,.;:)])", r"\1", text).replace("( ", "(")


def distinctive(title: str) -> list[str]:
    return [t for t in tokenize(title) if t not in GENERIC_WORDS and len(t) > 2]


def topic_of(path: Path) -> str:
    parts = path.parts
    try:
        return "/".join(parts[parts.index("texlive-doc") + 1 : parts.index("texlive-doc") + 3])
    except ValueError:
        return path.parent.name


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default="benchmarks/out/texlive")
    ap.add_argument("--max-doc-pages", type=int, default=100)
    ap.add_argument("--l1", type=int, default=240, help="direct queries to keep")
    ap.add_argument("--l2", type=int, default=120, help="one-bridge queries to keep")
    ap.add_argument("--per-doc", type=int, default=5, help="at most this many direct queries per document")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    import pypdfium2 as pdfium

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    all_pdfs = ensure_pdfs()
    docs: list[Path] = []
    for p in all_pdfs:
        pdf = pdfium.PdfDocument(str(p))
        if len(pdf) <= args.max_doc_pages:
            docs.append(p)
        pdf.close()
    print(f"{len(docs)} of {len(all_pdfs)} PDFs have at most {args.max_doc_pages} pages", file=sys.stderr)

    t0 = time.perf_counter()
    report = build_index(docs, out / "index", text="pdf", seed=args.seed)
    build_s = time.perf_counter() - t0
    index = PageIndex.open(out / "index")
    records = index.records()
    by_loc = {(Path(r.doc_path), r.page_no): r for r in records}
    write_jsonl(
        out / "pages.jsonl", ({"page_id": r.handle, "document": r.doc_path, "page": r.page_no + 1} for r in records)
    )

    # --- section bookmarks whose titles really are on the page they point to --------------------------
    sections: list[dict] = []
    for path in docs:
        pdf = pdfium.PdfDocument(str(path))
        try:
            for item in pdf.get_toc():
                dest = item.get_dest()
                if dest is None or dest.get_index() is None:
                    continue
                title = clean_title(item.get_title())
                rec = by_loc.get((path.resolve(), dest.get_index()))
                if rec is None or not title:
                    continue
                words = distinctive(title)
                page_terms = set(tokenize(rec.text))
                if words and sum(w in page_terms for w in words) / len(words) >= 0.8:
                    sections.append({"title": title, "handle": rec.handle, "doc": path, "page_no": dest.get_index()})
        finally:
            pdf.close()
    title_count = Counter(s["title"].lower() for s in sections)

    def usable(s: dict) -> bool:
        t = s["title"].lower()
        return title_count[t] == 1 and t not in GENERIC_TITLES and len(distinctive(s["title"])) >= 2 and len(t) <= 70

    pool = [s for s in sections if usable(s)]
    print(f"{len(sections)} bookmarks on their pages, {len(pool)} unique and distinctive", file=sys.stderr)

    queries, annotations = [], []

    # --- level 1: paraphrased section titles ------------------------------------------------------------
    per_doc: Counter = Counter()
    order = rng.permutation(len(pool))
    used_handles: set[str] = set()
    for i in order:
        s = pool[int(i)]
        para = paraphrase(s["title"])
        if para is None or s["handle"] in used_handles or per_doc[s["doc"]] >= args.per_doc:
            continue
        if set(tokenize(para)) == set(tokenize(s["title"])):
            continue  # the synonyms happened to stem back to the same terms
        text = L1_TEMPLATES[int(rng.integers(len(L1_TEMPLATES)))].format(p=para)
        qid = f"q{len(queries) + 1:04d}"
        queries.append({"query_id": qid, "query": text, "topic_id": topic_of(s["doc"])})
        annotations.append(
            {
                "query_id": qid,
                "answer_page_id": s["handle"],
                "level": 1,
                "support_page_ids": [],
                "topic_id": topic_of(s["doc"]),
                "recipe": {"bookmark": s["title"]},
            }
        )
        per_doc[s["doc"]] += 1
        used_handles.add(s["handle"])
        if len(queries) >= args.l1:
            break
    n_l1 = len(queries)

    # --- level 2: the package named in another document's section -----------------------------------------
    packages: dict[str, Path] = {}
    for path in docs:
        name = path.stem.lower()
        first = by_loc.get((path.resolve(), 0))
        if first is not None and re.search(rf"\b{re.escape(name)}\b", first.text.lower()) and len(name) > 2:
            packages.setdefault(name, path)
    l2_pool = []
    for s in pool:
        rec = by_loc[(s["doc"].resolve(), s["page_no"])]
        named = {t for t in bridge_terms(rec.text, ["package"]) if t in packages}
        named = {t for t in named if packages[t] != s["doc"]}
        if len(named) != 1:
            continue
        (name,) = named
        if name in s["title"].lower() or name in tokenize(s["title"]):
            continue
        target = by_loc[(packages[name].resolve(), 0)]
        l2_pool.append((s, name, target))
    print(f"{len(packages)} package documents, {len(l2_pool)} sections naming exactly one of them", file=sys.stderr)
    per_target: Counter = Counter()
    for i in rng.permutation(len(l2_pool)):
        s, name, target = l2_pool[int(i)]
        para = paraphrase(s["title"])
        if para is None or per_target[name] >= 4:
            continue
        text = L2_TEMPLATES[int(rng.integers(len(L2_TEMPLATES)))].format(p=para)
        qid = f"q{len(queries) + 1:04d}"
        queries.append({"query_id": qid, "query": text, "topic_id": topic_of(packages[name])})
        annotations.append(
            {
                "query_id": qid,
                "answer_page_id": target.handle,
                "level": 2,
                "support_page_ids": [s["handle"]],
                "topic_id": topic_of(packages[name]),
                "recipe": {"bookmark": s["title"], "bridge": name},
            }
        )
        per_target[name] += 1
        if len(queries) - n_l1 >= args.l2:
            break

    write_jsonl(out / "queries.jsonl", queries)
    write_jsonl(out / "evaluator_annotations.jsonl", annotations)
    corpus = {
        "source": DEBIAN_PACKAGE,
        "pdfs_available": len(all_pdfs),
        "documents": len(docs),
        "pages": len(index),
        "max_doc_pages": args.max_doc_pages,
        "build_seconds": round(build_s, 2),
        "pages_per_minute_text_layer": round(report.pages_per_minute, 1),
        "queries": {"direct": n_l1, "one-bridge": len(queries) - n_l1},
        "documents_list": [str(p) for p in docs],
    }
    (out / "corpus.json").write_text(json.dumps(corpus, indent=2), encoding="utf-8")
    print(json.dumps({k: v for k, v in corpus.items() if k != "documents_list"}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
