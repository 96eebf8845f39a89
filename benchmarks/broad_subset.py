"""One question per page of a broad split, all four captures: the part of the held-out split the strategy tables
are run on when the whole split would take too long (the whole test split is 157 questions x 4 captures).

Page k of the split (in build order) contributes its question k mod n (n: the page's questions), so the subset
covers the question families in proportion without choosing among them. Images are hard-linked (copied across file
systems), so the subset is a dataset folder of its own (nothing points outside it).

    python benchmarks/broad_subset.py --split benchmarks/out/broad/test --out benchmarks/out/broad/test-q1
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
from pathlib import Path


def subset(split: Path, out: Path) -> int:
    rows = [json.loads(line) for line in (split / "samples.jsonl").read_text().splitlines() if line.strip()]
    groups_of_page: dict[str, list[str]] = {}
    for row in rows:
        groups = groups_of_page.setdefault(row["meta"]["page"], [])
        if row["group"] not in groups:
            groups.append(row["group"])
    chosen = {groups[k % len(groups)] for k, groups in enumerate(groups_of_page.values())}
    if out.exists():
        shutil.rmtree(out)
    (out / "images").mkdir(parents=True)
    for image in (split / "images").iterdir():
        try:
            os.link(image, out / "images" / image.name)
        except OSError:  # another file system
            shutil.copy2(image, out / "images" / image.name)
    picked = [row for row in rows if row["group"] in chosen]
    (out / "samples.jsonl").write_text("".join(json.dumps(row) + "\n" for row in picked))
    return len(picked)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--split", default="benchmarks/out/broad/test")
    ap.add_argument("--out", default="benchmarks/out/broad/test-q1")
    args = ap.parse_args()
    print(f"{subset(Path(args.split), Path(args.out))} samples written to {args.out}")


if __name__ == "__main__":
    main()
