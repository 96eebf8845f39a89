"""Held-out generic questions over real born-digital PDF pages from Debian documentation packages.

The questions are the plain ones a new user asks of any document: "What is the date?", "What is the
title?", "Who is the author?". The pages are first pages (or the title page, when the first page is blank)
of PDFs shipped in Debian documentation packages: package manuals, articles, beamer slides, KOMA-Script and
other letters, posters, CV templates, theses. None of them comes from the packages kept for outside checks
(``EXCLUDED_PACKAGES``) and none is a PDF that ``benchmarks/realpages.py`` or ``benchmarks/broad.py`` uses.

Gold answers come from the PDF's text layer only (pypdfium2) and are checked automatically:

* title: the ``/Title`` metadata when it is printed in large type in the top part of the page, and/or the
  largest-font line(s) near the top of the page;
* author: the ``/Author`` metadata, or the line under the title when it looks like person names;
* date: a date printed on the page (ISO, ``2019/03/03``, ``03.03.2019``, ``March 3, 2019``, ``3 March
  2019``, ``16. Februar 2018``, ``March 2019`` ...); the topmost one in the upper part of the page is the
  main date, and any other dates on the page are listed in the question's ``note``.

Every answer must occur verbatim (whitespace / case / quote-normalised) in the page's text layer. A page only
gets the questions whose gold could be established. ``overrides`` in the JSON file is a hand-written table
(page id -> fields to drop / answers to set, with a reason) that ``--build`` reads back and applies.

    apt-get install -y --no-install-recommends $(python benchmarks/debian_generic.py --packages)
    python benchmarks/debian_generic.py --build              # writes benchmarks/data/debian_generic.json
    python benchmarks/debian_generic.py --lines out.jsonl    # text-layer lines as OCR-like lines
    python benchmarks/debian_generic.py --images out/png     # ~2000 px renders for an OCR run
    python benchmarks/debian_generic.py --show ID [ID ...]   # a page's text layer and its gold
"""

from __future__ import annotations

import argparse
import gzip
import hashlib
import json
import re
import statistics
import subprocess
import sys
import time
import unicodedata
from pathlib import Path

ROOT = Path(__file__).resolve().parent
DATA = ROOT / "data" / "debian_generic.json"
DOC = "/usr/share/doc/"
RENDER_LONGEST = 2000

#: packages scanned for PDFs (``--build``); the ones the chosen pages come from are recorded in the JSON
SOURCE_PACKAGES = (
    "texlive-latex-recommended-doc",
    "texlive-science-doc",
    "texlive-humanities-doc",
    "texlive-fonts-extra-doc",
    "texlive-fonts-recommended-doc",
    "texlive-metapost-doc",
    "texlive-lang-german",
    "texlive-lang-english",
    "texlive-lang-french",
    "texlive-lang-european",
    "texlive-lang-spanish",
    "texlive-lang-italian",
    "texlive-lang-polish",
    "texlive-lang-czechslovak",
    "texlive-lang-portuguese",
    "texlive-lang-cyrillic",
    "texlive-lang-other",
    "texlive-games",
    "texlive-music",
    "texlive-bibtex-extra",
    "texlive-plain-generic",
    "octave-doc",
    "maxima-doc",
    "gnuplot-doc",
)
#: kept for checks from outside: never a source of pages, even when installed as a dependency
EXCLUDED_PACKAGES = (
    "texlive-latex-base-doc",
    "texlive-base",
    "r-doc-pdf",
    "texlive-publishers-doc",
    "texlive-latex-extra-doc",
    "texlive-pictures-doc",
)
#: other benchmarks whose PDFs this set must not reuse
OTHER_SETS = ("realpages.py", "broad.py")
#: at most this many PDFs per project directory (default 2); a few directories hold many distinct examples
GROUP_CAP = {
    "koma-script-examples": 14,
    "sciposter": 3,
    "math-into-latex-4": 4,
    "translation-europecv-de": 4,
    "latex-brochure": 2,
    "beamer": 3,
}
TARGET_PAGES = 165
QUESTIONS = {"date": "What is the date?", "title": "What is the title?", "author": "Who is the author?"}

# ----------------------------------------------------------------------------------------------- text


SPACING_ACCENTS = {
    "´": "\u0301",
    "`": "\u0300",
    "¨": "\u0308",
    "ˆ": "\u0302",
    "˜": "\u0303",
    "ˇ": "\u030c",
    "˘": "\u0306",
    "˝": "\u030b",
    "˚": "\u030a",
    "¯": "\u0304",
    "˙": "\u0307",
    "¸": "\u0327",
}


def fix_accents(text: str) -> str:
    """TeX's OT1 text layer puts a spacing accent before its letter ("Math´ematique"): compose them."""

    def compose(m: re.Match) -> str:
        base = {"ı": "i", "ȷ": "j"}.get(m.group(2), m.group(2))
        return unicodedata.normalize("NFC", base + SPACING_ACCENTS[m.group(1)])

    text = re.sub(r"(?<!`)(`)([AEIOUaeiouı])", compose, text)
    return re.sub(r"([´¨ˆ˜ˇ˘˝˚¯˙¸])([A-Za-zıȷ])", compose, text)


def norm(text: str) -> str:
    """Whitespace / case / quote / dash / ligature-normalised text for verbatim checks."""
    text = unicodedata.normalize("NFKC", fix_accents(text))
    text = text.replace("\ufffe", "").replace("\u00ad", "").replace("\x02", "")
    for a, b in (
        ("’", "'"),
        ("‘", "'"),
        ("“", '"'),
        ("”", '"'),
        ("„", '"'),
        ("–", "-"),
        ("—", "-"),
        ("‐", "-"),
        ("‑", "-"),
        ("−", "-"),
        ("``", '"'),
        ("''", '"'),
    ):
        text = text.replace(a, b)
    return re.sub(r"\s+", " ", text).strip().lower()


def on_page(answer: str, page_norm: str) -> bool:
    a = norm(answer)
    if not a:
        return False
    return a in page_norm or a in page_norm.replace("- ", "-")


def open_pdf(path: str):
    import pypdfium2 as pdfium

    if path.endswith(".gz"):
        return pdfium.PdfDocument(gzip.decompress(Path(path).read_bytes()))
    return pdfium.PdfDocument(path)


class Page:
    """One page's text layer: normalised text, char-level visual lines, metadata."""

    def __init__(self, path: str, index: int, doc=None):
        import pypdfium2.raw as raw

        doc = doc or open_pdf(path)
        self.path, self.index, self.n_pages = path, index, len(doc)
        self.meta = {k: (v or "").strip() for k, v in doc.get_metadata_dict().items()}
        page = doc[index]
        self.rotation = page.get_rotation()
        x0, y0, x1, y1 = page.get_cropbox()
        self.box = (x0, y0, x1, y1)
        self.width, self.height = x1 - x0, y1 - y0
        tp = page.get_textpage()
        self.text = tp.get_text_range()
        self.norm = norm(self.text)
        chars = []
        high = 0
        for i in range(tp.count_chars()):
            code = raw.FPDFText_GetUnicode(tp.raw, i)
            if 0xD800 <= code < 0xDC00:  # UTF-16 surrogate pair: pdfium reports the two halves as two chars
                high = code
                continue
            if 0xDC00 <= code < 0xE000:
                code, high = (0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)) if high else 0, 0
            ch = chr(code) if code else ""
            if ch in ("\r", "\n"):
                chars.append(None)  # pdfium's line break
                continue
            if not ch or ch in "\ufffe\x02":
                continue
            generated = raw.FPDFText_IsGenerated(tp.raw, i) == 1
            if ch.isspace():
                chars.append((" ", None, 0.0))
                continue
            if generated:
                continue
            left, bottom, right, top = tp.get_charbox(i, loose=True)
            chars.append((ch, (left, bottom, right, top), raw.FPDFText_GetFontSize(tp.raw, i)))
        self.lines = self._lines(chars)
        sizes = [s for ln in self.lines for s in [ln["fontsize"]] * len(ln["text"])]
        self.body = statistics.median(sizes) if sizes else 0.0

    def _lines(self, chars: list) -> list[dict]:
        """Group chars into visual lines; split a line at gaps wider than 1.5 x its height."""
        raw_lines: list[list] = [[]]
        for c in chars:
            if c is None:
                raw_lines.append([])
            else:
                raw_lines[-1].append(c)
        segments: list[list] = []
        for line in raw_lines:
            boxed = [c for c in line if c[1] is not None]
            if not boxed:
                continue
            height = statistics.median(c[1][3] - c[1][1] for c in boxed) or 1.0
            current: list = []
            last = None
            for c in line:
                if c[1] is None:
                    if current:
                        current.append(c)
                    continue
                if last is not None:
                    gap = c[1][0] - last[2]
                    mid, last_mid = (c[1][1] + c[1][3]) / 2, (last[1] + last[3]) / 2
                    if gap > 1.5 * height or gap < -height or abs(mid - last_mid) > 0.6 * height:
                        segments.append(current)
                        current = []
                current.append(c)
                last = c[1]
            if current:
                segments.append(current)
        x0, y0, _, y1 = self.box
        out = []
        for seg in segments:
            text = fix_accents(re.sub(r"\s+", " ", "".join(c[0] for c in seg)).strip())
            boxed = [c for c in seg if c[1] is not None]
            if not text or not boxed:
                continue
            left = min(c[1][0] for c in boxed)
            right = max(c[1][2] for c in boxed)
            bottom = min(c[1][1] for c in boxed)
            top = max(c[1][3] for c in boxed)
            out.append(
                {
                    "text": text,
                    "box": [
                        (left - x0) / self.width,
                        (y1 - top) / self.height,
                        (right - x0) / self.width,
                        (y1 - bottom) / self.height,
                    ],
                    "fontsize": statistics.median(c[2] for c in boxed),
                    "height": statistics.median(c[1][3] - c[1][1] for c in boxed) / self.height,
                }
            )
        out.sort(key=lambda ln: (round(ln["box"][1], 3), ln["box"][0]))
        return out

    def ocr_lines(self) -> list[dict]:
        def clip(v: float) -> float:
            return round(min(1.0, max(0.0, v)), 5)

        return [
            {"text": ln["text"], "box": [clip(v) for v in ln["box"]], "confidence": 1.0, "size": round(ln["height"], 5)}
            for ln in self.lines
        ]


# ----------------------------------------------------------------------------------------------- gold

MONTHS = (
    "January|February|March|April|May|June|July|August|September|October|November|December|"
    "Jan|Feb|Mar|Apr|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec|"
    "Januar|Jänner|Februar|März|Mai|Juni|Juli|Oktober|Dezember|"
    "janvier|février|mars|avril|mai|juin|juillet|août|septembre|octobre|novembre|décembre|"
    "enero|febrero|marzo|abril|mayo|junio|julio|agosto|septiembre|octubre|noviembre|diciembre|"
    "gennaio|febbraio|aprile|maggio|giugno|luglio|settembre|ottobre|dicembre"
)
YEAR = r"(?:19[89]\d|20[0-3]\d)"
DATE_PATTERNS = (  # (regex, full date?)
    (rf"(?<![\d/.-]){YEAR}([-/.])(0?[1-9]|1[0-2])\1(0?[1-9]|[12]\d|3[01])(?![\d/])", True),
    (rf"(?<![\d.])(0?[1-9]|[12]\d|3[01])\.\s?(0?[1-9]|1[0-2])\.\s?{YEAR}(?!\d)", True),
    (rf"(?<![\d/])(0?[1-9]|[12]\d|3[01])/(0?[1-9]|1[0-2])/{YEAR}(?!\d)", True),
    (rf"\b(?:{MONTHS})\.?\s+(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th)?,?\s+{YEAR}\b", True),
    (
        rf"(?<![\d.])(?:[12]\d|3[01]|0?[1-9])(?:st|nd|rd|th|er|\.|º)?\s+(?:de\s+|of\s+)?(?:{MONTHS})\.?,?\s+"
        rf"(?:de\s+)?{YEAR}\b",
        True,
    ),
    (rf"\b(?:{MONTHS})\.?,?\s+(?:de\s+)?{YEAR}\b", False),
)
DATE_RES = [(re.compile(p, re.IGNORECASE), full) for p, full in DATE_PATTERNS]


def find_dates(text: str) -> list[tuple[int, int, str, bool]]:
    """Non-overlapping date strings in ``text``: (start, end, string, full date?), longest patterns first."""
    found: list[tuple[int, int, str, bool]] = []
    for rx, full in DATE_RES:
        for m in rx.finditer(text):
            s, e = m.span()
            if any(s < fe and fs < e for fs, fe, _, _ in found):
                continue
            word = m.group(0)
            if not full and re.match(r"(?i)(may|mar|mai)\b", word) and not word[0].isupper():
                continue  # "may 2019" in running text is rarely a date
            found.append((s, e, word, full))
    return sorted(found)


DATE_CUE = re.compile(r"(?i)(version|v\d|revis|updated|date|datum|stand|printed|release|rev\.|le |den |, )")


def page_dates(page: Page) -> list[dict]:
    """Dates printed as dates (alone on a short line, or after a cue such as "Version" or "Ort, den")."""
    out = []
    for ln in page.lines:
        for _, _, word, full in find_dates(ln["text"]):
            text = ln["text"]
            if len(text) > 70 and len(word) < 0.4 * len(text) and not DATE_CUE.search(text):
                continue  # running text or a bibliography entry
            if not full and ln["box"][1] > 0.45:
                continue
            if on_page(word, page.norm):
                out.append({"date": word, "full": full, "y": ln["box"][1], "x": ln["box"][0], "line": ln["text"]})
    return out


def choose_date(page: Page, kind: str) -> tuple[str, str | None] | None:
    dates = page_dates(page)
    if not dates:
        return None
    top = [d for d in dates if d["y"] < 0.7] or dates
    if kind == "letter":  # the letter's own date: alone on its line or after the place ("Musterheim, 29. ...")
        top = [d for d in top if d["full"]] or top
        own = [
            d
            for d in top
            if norm(d["line"]) == norm(d["date"])
            or re.fullmatch(r"[^\W\d][\w .-]*,\s+(den\s+|le\s+|am\s+)?" + re.escape(d["date"]), d["line"])
        ]
        top = own or top
    best = min(top, key=lambda d: (round(d["y"], 2), not d["full"], d["x"]))
    others = sorted({d["date"] for d in dates if norm(d["date"]) != norm(best["date"])})
    note = f"other dates on the page: {'; '.join(others)}" if others else None
    return best["date"], note


BAD_TITLE = re.compile(r"(?i)(\.(tex|dvi|dtx|ltx|pdf|ps)$|^untitled|^microsoft word|^title$|^\W*$|^\d+$)")


def title_block(page: Page) -> tuple[str, list[dict]] | None:
    """The largest-font line(s) in the upper half of the page."""
    top = [ln for ln in page.lines if ln["box"][1] < 0.5 and sum(ch.isalpha() for ch in ln["text"]) >= 3]
    if not top or not page.body:
        return None
    biggest = max(ln["fontsize"] for ln in top)
    if biggest < 1.2 * page.body:
        return None
    block = [ln for ln in top if ln["fontsize"] >= 0.92 * biggest]
    block.sort(key=lambda ln: (ln["box"][1], ln["box"][0]))
    chosen = [block[0]]
    for ln in block[1:]:
        prev = chosen[-1]
        gap = ln["box"][1] - prev["box"][3]
        if gap < 1.2 * prev["height"]:
            chosen.append(ln)
        else:
            break
    text = " ".join(ln["text"] for ln in chosen).strip()
    if on_page(text, page.norm):
        return text, chosen
    text = chosen[0]["text"]
    return (text, chosen[:1]) if on_page(text, page.norm) else None


def clean_title(text: str) -> str:
    text = fix_accents(re.sub(r"\s+", " ", text))
    return re.sub(r"[\s*∗†‡§¶⋆⁎¹²³]+$", "", text).strip()


NOT_TITLE = re.compile(
    r"(?i)^(\d+(\.\d+)*\s|chapter\b|part\b|page\b|(table of )?contents$|index$|introduction$|abstract$|"
    r"implementation$|glossary$|abbreviations$|bibliography$|references$|preface$|overview$|summary$|notes$|"
    r"inhalt(sverzeichnis)?$|einleitung$|table des matières$|sommaire$|education$|experience$|publications$|"
    r"warning$|contact$)"
)
DANGLING = re.compile(r"(?i)\b(for|of|and|the|with|to|in|a|an|on|by|de|du|des|für|und|der|die|das|pour|et|la|le)$")


def good_title(text: str) -> bool:
    if not 3 <= len(text) <= 160 or BAD_TITLE.search(text) or NOT_TITLE.search(text) or DANGLING.search(text):
        return False
    if re.search(r"[\x00-\x1f\x7f-\x9f\ue000-\uf8ff\ufffd]", text) or text.count("[") != text.count("]"):
        return False  # a font without a usable text layer
    if re.fullmatch(r"p .* q", text) or looks_like_names(text):
        return False
    odd = sum(not (ch.isalnum() or ch.isspace() or ch in ".,:;-–—'’()&!?/+") for ch in text)
    return bool(re.search(r"[^\W\d_]{3,}", text)) and odd <= 0.1 * len(text)


def choose_title(page: Page, kind: str) -> tuple[list[str], list[dict]] | None:
    block = title_block(page)
    meta = clean_title(page.meta.get("Title", ""))
    answers: list[str] = []
    lines: list[dict] = []
    if block:
        text, lines = block
        text = clean_title(text)
        if good_title(text) and not find_dates(text) == [(0, len(text), text, True)]:
            answers.append(text)
            first = clean_title(lines[0]["text"])
            if len(lines) > 1 and good_title(first) and len(first.split()) >= 2 and norm(first) != norm(text):
                answers.append(first)
        else:
            lines = []
    if meta and good_title(meta) and on_page(meta, page.norm):
        large = norm(
            " ".join(ln["text"] for ln in page.lines if ln["box"][1] < 0.6 and ln["fontsize"] >= 1.1 * page.body)
        )
        if answers and (norm(meta) in norm(answers[0]) or norm(answers[0]) in norm(meta)):
            if all(norm(meta) != norm(a) for a in answers):
                answers.append(meta)
        elif not answers and norm(meta) in large:
            answers.append(meta)
    if kind == "letter" and not meta:
        return None  # a letter's largest type is its letterhead, not a title
    return (answers, lines) if answers else None


NAME_TOKEN = r"(?:[A-ZÀ-ÖØ-Þ][\w'’.-]*\.?|[A-Z]\.)"
PARTICLE = r"(?:van|von|der|den|de|la|le|du|di|da|dos|del|ten|zu)"
NAME = re.compile(rf"^{NAME_TOKEN}(?:\s+(?:{PARTICLE}\s+)*{NAME_TOKEN}){{1,4}}$")
NOT_NAME = set(
    """the a an package manual user users guide documentation version release reference introduction
abstract contents university universität université institute institut department school college laboratory
team project group society foundation inc ltd corporation latex tex draft chapter part table figure example
examples style class font fonts macro macros bibliography index edition copyright free software new letter
sample test date dear sir madam this for and with of in on to is are by from all rights reserved overview
tutorial short long notes note lecture slides talk preface summary package. bundle options option file files
list lists page pages beamer koma script koma-script ctan tug dante mathematics physics computer science
research centre center press series volume issue journal proceedings conference workshop symposium
revised updated traduzione translated abteilung fakultät lehrstuhl universidade universidad università federal national straße street road avenue""".split()
)


def looks_like_names(text: str) -> list[str] | None:
    text = re.sub(r"\S+@\S+|https?://\S+|<[^>]*>|\([^)]*\)", " ", text)
    text = re.sub(r"[*∗†‡§¶\d]+(?=\s|,|$)", "", text)
    text = re.sub(r"(?i)^\s*(by|von|par|de|author:|autor:|auteur\s*:)\s+", "", text).strip(" ,;")
    parts = [p.strip(" ,;") for p in re.split(r",|;|\s+and\s+|\s+&\s+|\s+und\s+|\s+et\s+|\s+e\s+|\s+y\s+", text)]
    parts = [p for p in parts if p]
    if not parts or len(parts) > 5:
        return None
    for p in parts:
        if not NAME.match(p) or any(t.lower().strip(".") in NOT_NAME for t in p.split()):
            return None
        if any(re.search(r"(?i)(tion|sion|ment|ness|ical|ional|ics|ology|ities|glyphs|ware)$", t) for t in p.split()):
            return None
        if not any(len(t.strip(".")) >= 3 for t in p.split()):
            return None
    return parts


def split_authors(text: str) -> list[str]:
    text = re.sub(r"<[^>]*>|\([^)]*\)|\S+@\S+", " ", text)
    return [p.strip(" ,;") for p in re.split(r",|;|\s+and\s+|\s+&\s+|\\and", text) if p.strip(" ,;")]


def choose_author(page: Page, title_lines: list[dict]) -> tuple[list[str], str | None] | None:
    meta = re.sub(r"\s+", " ", page.meta.get("Author", "")).strip()
    if meta and len(meta) >= 4 and not re.search(r"(?i)^(unknown|anonymous|author|me|user|root)$", meta):
        cleaned = re.sub(r"\s*(<[^>]*>|\S+@\S+)\s*", " ", meta).strip(" ,;")
        for cand in (cleaned, meta):
            if on_page(cand, page.norm) and sum(ch.isalpha() for ch in cand) >= 4:
                return [cand], None
        parts = split_authors(cleaned)
        if len(parts) > 1 and all(len(p) >= 4 and on_page(p, page.norm) for p in parts):
            return parts, "several authors; each name is an accepted answer"
    if not title_lines:
        return None
    bottom = max(ln["box"][3] for ln in title_lines)
    below = [ln for ln in page.lines if ln["box"][1] >= bottom - 0.002 and ln["box"][1] < 0.75]
    below.sort(key=lambda ln: (ln["box"][1], ln["box"][0]))
    for ln in below[:4]:
        names = looks_like_names(ln["text"])
        if names:
            full = ln["text"] if len(names) > 1 else names[0]
            full = re.sub(r"[*∗†‡§¶\d]+$", "", full).strip(" ,")
            if len(names) == 1 and on_page(names[0], page.norm):
                return [names[0]], None
            ok = [n for n in names if on_page(n, page.norm)]
            if len(ok) == len(names):
                return ok, "several authors; each name is an accepted answer"
    return None


def classify(path: str, page: Page) -> str:
    p = path.lower()
    name = Path(p).name
    if re.search(r"poster", p) and "manual" not in name:
        return "poster"
    if re.search(r"(^|[^a-z])(cv|resume|curriculum)([^a-z]|$)|cv_template", name) or "europecv-de/beispiele" in p:
        return "cv"
    if re.search(r"(^|[^a-z])(exam([^p]|$)|exsheets?\b|worksheet|quiz)", name):
        return "exam"
    if (
        "koma-script-examples" in p
        and re.search(r"letter|brief", name)
        or re.search(r"scrlttr|lettre|brief-|dinbrief", name)
    ):
        return "letter"
    if page.width > page.height * 1.15 and page.width < 800 or re.search(r"beamer|slides?|talk|sshow", name):
        return "slides"
    if re.search(r"thesis|dissert|these", name):
        return "thesis"
    if (
        re.search(r"article|paper|journal", name)
        or re.search(r"example|sample|test|demo", name)
        and re.search(r"\babstract\b|\bzusammenfassung\b|\brésumé\b", page.norm[:3000])
    ):
        return "article"
    if re.search(r"cheat|sheet|card", name):
        return "other"
    if page.width > 1000 and page.height > 1000:
        return "poster"
    return "manual"


def gold(page: Page, kind: str) -> list[dict]:
    qs = []
    title = choose_title(page, kind)
    title_lines: list[dict] = []
    if title:
        answers, title_lines = title
        qs.append({"question": QUESTIONS["title"], "answers": answers, "field": "title"})
    author = choose_author(page, title_lines)
    if author:
        answers, note = author
        if not (title and norm(answers[0]) == norm(title[0][0])):
            q = {"question": QUESTIONS["author"], "answers": answers, "field": "author"}
            if note:
                q["note"] = note
            qs.append(q)
    date = choose_date(page, kind)
    if date:
        q = {"question": QUESTIONS["date"], "answers": [date[0]], "field": "date"}
        if date[1]:
            q["note"] = date[1]
        qs.append(q)
    order = {"date": 0, "title": 1, "author": 2}
    return sorted(qs, key=lambda q: order[q["field"]])


# ----------------------------------------------------------------------------------------------- build


def dpkg(*args: str) -> str:
    done = subprocess.run(["dpkg-query", *args], capture_output=True, text=True, check=False)
    return done.stdout if done.returncode == 0 else ""


def package_pdfs(package: str) -> list[str]:
    return sorted(
        f
        for f in dpkg("-L", package).splitlines()
        if f.startswith(DOC) and f.endswith((".pdf", ".pdf.gz")) and Path(f).is_file()
    )


def used_elsewhere() -> set[str]:
    """The PDFs ``realpages.py`` and ``broad.py`` use (read from their page tables)."""
    used: set[str] = set()
    for name in OTHER_SETS:
        src = (ROOT / name).read_text(encoding="utf-8")
        tl = dict(re.findall(r'^(TL)\s*=\s*"([^"]+)"', src, re.MULTILINE))
        for base, rel in re.findall(r'\((TL\s*\+\s*)?"([^"]+\.pdf(?:\.gz)?)"', src):
            used.add((tl.get("TL", "") + rel) if base else rel)
    return used


def page_id(path: str, index: int) -> str:
    rel = path.removeprefix(DOC).removeprefix("texlive-doc/")
    rel = re.sub(r"\.pdf(\.gz)?$", "", rel)
    return re.sub(r"[^A-Za-z0-9]+", "-", rel).strip("-").lower() + f"-p{index}"


def group_of(path: str) -> str:
    parts = path.removeprefix(DOC).split("/")
    return parts[2] if parts[0] == "texlive-doc" and len(parts) > 3 else parts[0]


def installed_version(package: str) -> str:
    return dpkg("-W", "-f", "${Version}", package).strip()


def build() -> None:
    old = json.loads(DATA.read_text(encoding="utf-8")) if DATA.exists() else {}
    overrides: dict = old.get("overrides", {})
    excluded = set()
    for pkg in EXCLUDED_PACKAGES:
        excluded.update(package_pdfs(pkg))
    excluded |= used_elsewhere()
    missing = [p for p in SOURCE_PACKAGES if not installed_version(p)]
    if missing:
        print("not installed (skipped):", " ".join(missing), file=sys.stderr)
    candidates = []
    seen: set[str] = set()
    t0 = time.time()
    for pkg in SOURCE_PACKAGES:
        for path in package_pdfs(pkg):
            if path in excluded or path in seen or re.search(r"refcard|-crop\.pdf|logo", path):
                continue
            seen.add(path)
            try:
                doc = open_pdf(path)
                index = 0
                page = Page(path, 0, doc)
                if len(page.norm) < 40 and len(doc) > 1:
                    index = 1
                    page = Page(path, 1, doc)
            except Exception as exc:  # noqa: BLE001 - a broken PDF is skipped, not fatal
                print(f"skip {path}: {exc}", file=sys.stderr)
                continue
            if page.rotation or len(page.norm) < 40:
                continue
            kind = classify(path, page)
            pid = page_id(path, index)
            qs = gold(page, kind)
            ov = overrides.get(pid, {})
            if ov.get("drop_page"):
                continue
            qs = [q for q in qs if q["field"] not in ov.get("drop", [])]
            for field, answers in ov.get("set", {}).items():
                bad = [a for a in answers if not on_page(a, page.norm)]
                if bad:
                    raise SystemExit(f"override for {pid}: {bad} not on the page's text layer")
                qs = [q for q in qs if q["field"] != field]
                qs.append({"question": QUESTIONS[field], "answers": answers, "field": field})
            qs.sort(key=lambda q: ("date", "title", "author").index(q["field"]))
            if ov.get("kind"):
                kind = ov["kind"]
            for q in qs:
                for a in q["answers"]:
                    assert on_page(a, page.norm), (pid, a)
            if qs:
                candidates.append(
                    {"id": pid, "package": pkg, "pdf": path, "page": index, "kind": kind, "questions": qs}
                )
    print(f"scanned {len(seen)} PDFs in {time.time() - t0:.0f}s, {len(candidates)} with gold", file=sys.stderr)
    chosen = select(candidates)
    packages = {p: installed_version(p) for p in sorted({c["package"] for c in chosen})}
    out = {
        "about": "generic questions over real Debian documentation PDF pages; see benchmarks/debian_generic.py",
        "packages": packages,
        "overrides": overrides,
        "pages": chosen,
    }
    DATA.parent.mkdir(parents=True, exist_ok=True)
    DATA.write_text(json.dumps(out, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    summary(out)


def select(candidates: list[dict]) -> list[dict]:
    """Rarer kinds first, then articles, then manuals, each by number of questions (ties broken by a hash of
    the path, which spreads the pick over the packages); at most GROUP_CAP PDFs per project directory."""
    rank = {"article": 1, "manual": 2}
    quota = {"article": 30}

    def key(c: dict) -> tuple:
        return (rank.get(c["kind"], 0), -len(c["questions"]), hashlib.sha256(c["pdf"].encode()).hexdigest())

    taken: dict[str, int] = {}
    per_kind: dict[str, int] = {}
    chosen = []
    for c in sorted(candidates, key=key):
        g = group_of(c["pdf"])
        if taken.get(g, 0) >= GROUP_CAP.get(g, 2) or per_kind.get(c["kind"], 0) >= quota.get(c["kind"], 10**6):
            continue
        if c["kind"] in rank and len(c["questions"]) < 2:
            continue
        taken[g] = taken.get(g, 0) + 1
        per_kind[c["kind"]] = per_kind.get(c["kind"], 0) + 1
        chosen.append(c)
        if len(chosen) >= TARGET_PAGES:
            break
    return sorted(chosen, key=lambda c: c["id"])


def summary(data: dict) -> None:
    pages = data["pages"]
    fields: dict[str, int] = {}
    kinds: dict[str, int] = {}
    for p in pages:
        kinds[p["kind"]] = kinds.get(p["kind"], 0) + 1
        for q in p["questions"]:
            fields[q["field"]] = fields.get(q["field"], 0) + 1
    print(
        f"{len(pages)} pages from {len({p['pdf'] for p in pages})} PDFs in {len(data['packages'])} packages; "
        f"{sum(fields.values())} questions {fields}; kinds {dict(sorted(kinds.items()))}"
    )


# ----------------------------------------------------------------------------------------------- outputs


def load() -> dict:
    data = json.loads(DATA.read_text(encoding="utf-8"))
    missing = sorted({p["package"] for p in data["pages"] if not Path(p["pdf"]).exists()})
    if missing:
        raise SystemExit(
            "PDFs missing; install the packages they come from:\n"
            f"    apt-get install -y --no-install-recommends {' '.join(missing)}"
        )
    return data


def write_lines(out: Path) -> None:
    data = load()
    t0 = time.time()
    out.parent.mkdir(parents=True, exist_ok=True)
    with out.open("w", encoding="utf-8") as fh:
        for p in data["pages"]:
            page = Page(p["pdf"], p["page"])
            for q in p["questions"]:
                if not any(on_page(a, page.norm) for a in q["answers"]):
                    print(f"warning: {p['id']} {q['field']} gold no longer on the page", file=sys.stderr)
            questions = [
                {
                    "id": f"{p['id']}-{q['field']}",
                    "question": q["question"],
                    "answers": q["answers"],
                    "family": "generic",
                    "field": q["field"],
                }
                for q in p["questions"]
            ]
            fh.write(
                json.dumps(
                    {
                        "doc": p["id"],
                        "kind": p["kind"],
                        "family": "debian-" + p["package"],
                        "lines": page.ocr_lines(),
                        "questions": questions,
                    },
                    ensure_ascii=False,
                )
                + "\n"
            )
    print(f"wrote {len(data['pages'])} pages to {out} in {time.time() - t0:.1f}s")


def write_images(out: Path) -> None:
    data = load()
    out.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    for p in data["pages"]:
        doc = open_pdf(p["pdf"])
        page = doc[p["page"]]
        scale = RENDER_LONGEST / max(page.get_size())
        page.render(scale=scale).to_pil().convert("RGB").save(out / f"{p['id']}.png")
    print(f"rendered {len(data['pages'])} pages to {out} in {time.time() - t0:.1f}s")


def show(ids: list[str]) -> None:
    data = load()
    by_id = {p["id"]: p for p in data["pages"]}
    for pid in ids:
        p = by_id[pid]
        page = Page(p["pdf"], p["page"])
        print(
            f"=== {pid} [{p['kind']}] {p['pdf']} p{p['page']}  meta Title={page.meta.get('Title')!r} "
            f"Author={page.meta.get('Author')!r}"
        )
        for ln in page.lines[:40]:
            print(f"  {ln['box'][1]:.2f} {ln['fontsize']:5.1f}  {ln['text'][:110]}")
        for q in p["questions"]:
            print(f"  -> {q['field']}: {q['answers']}" + (f"  ({q['note']})" if q.get("note") else ""))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", action="store_true", help=f"choose pages and gold, write {DATA}")
    ap.add_argument("--lines", type=Path, help="write text-layer lines as OCR-like lines (JSONL)")
    ap.add_argument("--images", type=Path, help="render each page at ~2000 px to PNG in this folder")
    ap.add_argument("--show", nargs="+", help="print the text layer and gold of these page ids")
    ap.add_argument("--packages", action="store_true", help="print the packages the set needs")
    args = ap.parse_args()
    if args.build:
        build()
    if args.packages:
        data = json.loads(DATA.read_text(encoding="utf-8"))
        print(" ".join(data["packages"]))
    if args.lines:
        write_lines(args.lines)
    if args.images:
        write_images(args.images)
    if args.show:
        show(args.show)
    if not (args.build or args.lines or args.images or args.show or args.packages):
        summary(load())


if __name__ == "__main__":
    main()
