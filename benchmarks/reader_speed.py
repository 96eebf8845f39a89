"""How fast the scored reader chooses an answer, without OCR: candidates + features + scorer per question, and how
long the model takes to load.

    python benchmarks/reader_speed.py --corpus benchmarks/out/readerset/docs.jsonl --docs 200

Reads the first ``--docs`` documents of the corpus (their text-layer lines stand in for OCR lines), answers every
question of each with the ``scored`` and the ``rules`` readers, and prints and saves
(``benchmarks/results/reader_speed.json``) the median, p95 and max milliseconds per question, the model's load time
in a fresh process (median of 5), and the machine's load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
sys.path.insert(0, str(ROOT))

from docintent.reader.query import understand  # noqa: E402
from docintent.reader.readers import READERS  # noqa: E402
from train_reader import layout_of  # noqa: E402

LOAD = (
    "import time; t = time.perf_counter(); from docintent.reader.scorer import Scorer; Scorer.default(); "
    "print(time.perf_counter() - t)"
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", default=str(ROOT / "out" / "readerset" / "docs.jsonl"))
    ap.add_argument("--docs", type=int, default=200)
    args = ap.parse_args()
    docs = []
    with open(args.corpus, encoding="utf-8") as fh:
        for line in fh:
            docs.append(json.loads(line))
            if len(docs) >= args.docs:
                break
    loads = [
        float(subprocess.run([sys.executable, "-c", LOAD], capture_output=True, text=True, check=True).stdout)
        for _ in range(5)
    ]
    load_avg = os.getloadavg()
    out: dict = {
        "docs": len(docs),
        "load_average_before": [round(x, 2) for x in load_avg],
        "model_load_s_median": round(statistics.median(loads), 3),
    }
    for kind in ("scored", "rules"):
        reader = READERS.get(kind)
        times = []
        for d in docs:
            layout = layout_of(d, noisy=False)
            for q in d["questions"]:
                question = understand(q["question"], q.get("task", "doc"))
                start = time.perf_counter()
                reader.read(question, layout)
                times.append(1000 * (time.perf_counter() - start))
        times.sort()
        out[kind] = {
            "questions": len(times),
            "median_ms": round(statistics.median(times), 1),
            "p95_ms": round(times[int(0.95 * (len(times) - 1))], 1),
            "max_ms": round(times[-1], 1),
        }
    out["load_average_after"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(out, indent=1))
    (ROOT / "results").mkdir(exist_ok=True)
    (ROOT / "results" / "reader_speed.json").write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
