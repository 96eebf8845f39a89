"""Split the generated TeX Live queries into development and test halves, by document.

Every query goes to the split of the document that holds its answer page, so no document contributes queries
to both halves (tuning on one page of a manual and scoring on the next page of it would leak its wording).
A document's split is fixed by a hash of its file name, not by anything about its queries:

    dev  if sha256(file name) is even in its last hex digit, else test

Writes ``benchmarks/data/texlive_split.json``: the rule, each document's split, and each query's split with
its document (query ids are those of ``benchmarks/build_corpus.py`` with its default seed, which are
reproducible; the document list lets a rebuilt corpus be checked against the recorded one).

    python benchmarks/split_queries.py --corpus benchmarks/out/texlive
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
from collections import Counter
from pathlib import Path

from docintent.evaluation.visdoc import load_annotations

OUT = Path(__file__).resolve().parent / "data" / "texlive_split.json"


def split_of(document: str) -> str:
    """'dev' or 'test' for a document path (by its file name only, so the install prefix does not matter)."""
    digest = hashlib.sha256(Path(document).name.encode("utf-8")).hexdigest()
    return "dev" if int(digest[-1], 16) % 2 == 0 else "test"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--corpus", default="benchmarks/out/texlive")
    ap.add_argument("--out", default=str(OUT))
    args = ap.parse_args()
    corpus = Path(args.corpus)
    doc_of = {}
    for line in (corpus / "pages.jsonl").read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        doc_of[row["page_id"]] = row["document"]
    gold = load_annotations(corpus)
    documents = sorted({Path(d).name for d in doc_of.values()})
    queries = {}
    for qid, ann in sorted(gold.items()):
        doc = doc_of[ann.answer_page_id]
        queries[qid] = {"split": split_of(doc), "document": Path(doc).name, "level": ann.level}
    counts = Counter((q["split"], q["level"]) for q in queries.values())
    data = {
        "rule": "dev if the last hex digit of sha256(PDF file name of the answer page's document) is even, else test",
        "corpus": "benchmarks/build_corpus.py --seed 0 --max-doc-pages 100",
        "counts": {f"{s} level {lv}": n for (s, lv), n in sorted(counts.items())},
        "documents": {d: split_of(d) for d in documents},
        "queries": queries,
    }
    Path(args.out).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    print(json.dumps(data["counts"]), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
