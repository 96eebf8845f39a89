"""Plain questions on real PDFs: "What is the date?", "What is the title?", "Who is the author?" on the held-out
Debian pages of ``benchmarks/data/debian_generic.json`` (165 first pages from 19 packages; gold from each page's
text layer, built by ``benchmarks/debian_generic.py``). Nothing in the reader or its scorer was developed on them.

    python benchmarks/debian_generic.py --packages            # the Debian packages to install first
    python benchmarks/debian_generic.py --lines benchmarks/out/debian_generic/lines.jsonl \\
        --images benchmarks/out/debian_generic/images
    python benchmarks/generic_questions.py                    # both readers, text layer and OCR

Each question is answered by the ``scored`` and the ``rules`` readers twice: on the page's text layer (its lines
standing in for OCR lines) and on the rendered page through RapidOCR, as ``docintent ask --strategy none`` reads
it. An answer is right when its ANLS against the gold is above 0.5 (WildDoc's rule). Prints and saves
``benchmarks/results/generic_questions.{json,md}``: right per field and per page kind, and the answers given at
confidence >= 0.9 that are wrong.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from docintent.brains.offline.brain import RULES_CALIBRATION  # noqa: E402
from docintent.evaluation.metrics import anls  # noqa: E402
from docintent.io import load_page  # noqa: E402
from docintent.layout.lines import Layout  # noqa: E402
from docintent.ocr import get_engine  # noqa: E402
from docintent.reader.query import understand  # noqa: E402
from docintent.reader.readers import READERS  # noqa: E402
from train_reader import layout_of  # noqa: E402

OUT = ROOT / "out" / "debian_generic"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--lines", type=Path, default=OUT / "lines.jsonl")
    ap.add_argument("--images", type=Path, default=OUT / "images")
    ap.add_argument("--no-ocr", action="store_true", help="only the text layer")
    args = ap.parse_args()
    docs = [json.loads(line) for line in args.lines.read_text(encoding="utf-8").splitlines() if line.strip()]
    readers = {kind: READERS.get(kind) for kind in ("scored", "rules")}
    engine = get_engine()
    rows = []
    start = time.time()
    for n, doc in enumerate(docs, 1):
        layouts = {"text layer": layout_of(doc, noisy=False)}
        image = args.images / f"{doc['doc']}.png"
        if not args.no_ocr and image.exists():
            page = load_page(image)
            layouts["ocr"] = Layout.from_ocr(engine.read(page))
        for q in doc["questions"]:
            question = understand(q["question"])
            for where, layout in layouts.items():
                for kind, reader in readers.items():
                    choice = reader.read(question, layout)
                    score = anls(choice.answer, q["answers"])
                    # the rules' raw confidence as the offline brain reports it (calibrated, no damage measured)
                    confidence = (
                        RULES_CALIBRATION(choice.confidence, 0.0)
                        if kind == "rules" and RULES_CALIBRATION
                        else choice.confidence
                    )
                    rows.append(
                        {
                            "doc": doc["doc"],
                            "kind": doc["kind"],
                            "field": q["field"],
                            "where": where,
                            "reader": kind,
                            "question": q["question"],
                            "gold": q["answers"][0],
                            "answer": choice.answer,
                            "confidence": round(confidence, 4),
                            "right": score > 0.5,
                        }
                    )
        if n % 20 == 0:
            print(f"  {n}/{len(docs)} pages, {time.time() - start:.0f} s", file=sys.stderr, flush=True)

    def share(sel: list[dict]) -> str:
        return f"{100 * sum(r['right'] for r in sel) / max(len(sel), 1):.1f} ({len(sel)})"

    lines = [
        "# Plain questions on held-out Debian PDF pages",
        "",
        f"{len(docs)} pages, {len(rows) // 4 if not args.no_ocr else len(rows) // 2} question readings per "
        "reader; right = ANLS > 0.5; figures: % right (questions).",
        "",
    ]
    summary: dict = {}
    for where in ("text layer", "ocr"):
        sel = [r for r in rows if r["where"] == where]
        if not sel:
            continue
        lines += [f"## {where}", "", "| group | rules | scored |", "|---|---|---|"]
        groups: dict[str, list[dict]] = defaultdict(list)
        for r in sel:
            groups["all"].append(r)
            groups[f"field: {r['field']}"].append(r)
            groups[f"kind: {r['kind']}"].append(r)
        for name, members in groups.items():
            lines.append(
                f"| {name} | {share([r for r in members if r['reader'] == 'rules'])} | "
                f"{share([r for r in members if r['reader'] == 'scored'])} |"
            )
        for kind in ("rules", "scored"):
            mine = [r for r in sel if r["reader"] == kind]
            sure = [r for r in mine if r["confidence"] >= 0.9]
            wrong = [r for r in sure if not r["right"]]
            summary[f"{where}/{kind}"] = {
                "right": round(100 * sum(r["right"] for r in mine) / max(len(mine), 1), 1),
                "n": len(mine),
                "at_0.9": len(sure),
                "wrong_at_0.9": len(wrong),
            }
            lines.append(
                f"\n{kind}: {len(wrong)} of {len(sure)} answers at confidence >= 0.9 wrong"
                + ("" if kind == "scored" else " (the rules' confidence as the brain calibrates it)")
            )
        lines.append("")
    text = "\n".join(lines) + "\n"
    print(text)
    (ROOT / "results").mkdir(exist_ok=True)
    (ROOT / "results" / "generic_questions.md").write_text(text, encoding="utf-8")
    (ROOT / "results" / "generic_questions.json").write_text(
        json.dumps({"summary": summary, "rows": rows}, indent=1) + "\n", encoding="utf-8"
    )


if __name__ == "__main__":
    main()
