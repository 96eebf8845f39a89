"""The noise floor of every quantity Phase B compares: how much it moves when nothing about the content changes.

Phase B keeps or rolls back a restoration by comparing quantities measured on the page before and after it: the
legibility of the evidence (region and whole page), the answer's raw confidence, and the severity of the
degradation the tool targets. A difference smaller than what re-measuring the *same* content gives is noise, not
evidence. This script re-measures page states under perturbations that leave the content as it is:

- ``shift``: the page moved by a few pixels (1-3 px, edge pixels repeated) - another crop of the same photo;
- ``jpeg95``: the page re-encoded as a JPEG at quality 95;
- ``order``: the text lines recognised in the reverse order (a check: recognition is per line, so this is 0).

Page states: development captures (the real-page dev split and synthetic seed 101) and the page after each tool
the offline reader would consider for them (reviews compare restored pages too). Every measurement uses a fresh
reader; the perturbed page is measured in the evidence region found on the unperturbed one, as a review
measures the page after a tool in the region found on the page before it.

Floors: the 95th percentile of the absolute difference over every page state and perturbation (legibility
relative to its value). Written to benchmarks/results/<name>.{json,md} (``--name``, default noise_floor). The
defaults of :class:`docintent.brains.offline.review.NoiseFloors` are these figures: legibility, confidence and
severity from a 21-state run with the rule reader (``noise_floor.md``), the answer rule's probability floor from a
55-state run with the scored reader (``noise_floor_scored.md``).

    python benchmarks/noise_floor.py --states 60 --out benchmarks/out/runs/noise-floor-v3 --name noise_floor_scored
    python benchmarks/noise_floor.py --report-only --out benchmarks/out/runs/noise-floor-v3 --name noise_floor_scored
"""

from __future__ import annotations

import argparse
import io
import json
import os
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
PERTURBATIONS = ("shift", "jpeg95", "order")


def perturb(page, kind: str, rng: np.random.Generator):
    """``page`` with its content unchanged: shifted by a few pixels, or re-encoded as a JPEG at quality 95."""
    from PIL import Image

    from docintent.page import Page

    if kind == "shift":
        dx, dy = (int(v) for v in rng.integers(1, 4, size=2))
        pixels = np.pad(page.pixels, ((dy, 0), (dx, 0), (0, 0)), mode="edge")[: page.height, : page.width]
        return Page.from_array(pixels, source=f"{page.source}+shift")
    if kind == "jpeg95":
        buffer = io.BytesIO()
        Image.fromarray(page.pixels).save(buffer, "JPEG", quality=95)
        return Page.from_array(
            np.asarray(Image.open(io.BytesIO(buffer.getvalue())).convert("RGB")), source=f"{page.source}+jpeg95"
        )
    return page


def line_order_difference(page) -> float:
    """The largest change of a line's confidence when the page's lines are recognised in the reverse order."""
    from docintent.ocr import get_engine

    engine = get_engine(cache=False)
    quads = list(engine.detect_lines(page.pixels))
    crops = [engine.crop_line(page.pixels, q) for q in quads]
    forward = engine.recognize_lines(crops, quads)
    backward = engine.recognize_lines(crops[::-1], quads[::-1])[::-1]
    return max((abs(a[1] - b[1]) for a, b in zip(forward, backward)), default=0.0)


def measure(page, question: str, task: str, tool: str | None, region=None) -> dict:
    """The quantities Phase B compares, measured on ``page`` by a fresh reader: in the evidence region it finds
    (``region`` None), or in ``region`` - as a review measures the page after a tool in the region found on the
    page before it."""
    from docintent.brains import State, get_brain
    from docintent.page import Box
    from docintent.tools import get_tool

    reader = get_brain("offline", calibration=None)
    state = State(question, task, page, original=page, available_tools=[])
    qreader = reader.question_reader(state)
    reading = qreader.read(page)
    if region is None:
        region = reading.region
    out: dict[str, float | None] = {
        "legibility_page": qreader.legibility(page, None),
        "legibility_region": qreader.legibility(page, region) if region != Box.FULL else None,
        "confidence": reading.confidence,
        "answer": reading.answer,
    }
    degradation = get_tool(tool).degradation if tool else None
    severities = reader.perception.severities(page, None if region == Box.FULL else region)
    out["severity"] = severities.get(degradation) if degradation in severities else None
    out["region"] = list(region.as_tuple())
    return out


def page_states(limit: int, seed: int) -> list[tuple[str, object, str, str, str | None]]:
    """(id, page, question, task, tool) for development captures and their restorations."""
    from docintent.brains import State, get_brain
    from docintent.evaluation.datasets import load_dataset
    from docintent.io import load_page
    from docintent.tools import get_tool, tools_for

    sources = []
    real = ROOT / "out" / "realpages" / "dev"
    if (real / "samples.jsonl").exists():
        sources.append(load_dataset(f"synth:{real}"))
    synth = ROOT / "out" / "synth-s101"
    if not (synth / "samples.jsonl").exists():
        from docintent.synth import generate

        generate(synth, n=8, seed=101)
    sources.append(load_dataset(f"synth:{synth}"))
    rng = np.random.default_rng(seed)
    picked = []
    for samples in sources:
        order = rng.permutation(len(samples))[: max(1, limit // (2 * len(sources)))]
        picked += [samples[int(i)] for i in order]
    reader = get_brain("offline", calibration=None)
    states = []
    for sample in picked:
        page = load_page(sample.image)
        fix = reader.orientation_fix(State(sample.question, sample.task, page, original=page, available_tools=[]), page)
        if fix:
            page = get_tool(fix).run(page)
        states.append((sample.id, page, sample.question, sample.task, None))
        found = reader.perception.above(page)
        if found:
            tool = next(iter(tools_for(found[0][0])), None)
            if tool:
                restored = get_tool(tool).run(page)
                states.append((f"{sample.id}+{tool}", restored, sample.question, sample.task, tool))
    return states[:limit]


#: The quantities whose floors are reported; ``confidence_log_odds`` is the confidence on the log-odds scale the
#: "answer" review rule compares (:func:`docintent.brains.offline.review.log_odds`).
QUANTITIES = ("legibility_page", "legibility_region", "confidence", "confidence_log_odds", "severity")


def _value(side: dict, quantity: str) -> float | None:
    from docintent.brains.offline.review import log_odds

    if quantity == "confidence_log_odds":
        return None if side.get("confidence") is None else log_odds(side["confidence"])
    return side.get(quantity)


def difference(row: dict, quantity: str) -> float | None:
    """|perturbed - base| of ``quantity`` in ``row`` (legibility relative to the base value); None when either
    side did not measure it."""
    a, b = _value(row["base"], quantity), _value(row["perturbed"], quantity)
    if a is None or b is None:
        return None
    d = abs(b - a)
    return d / max(a, 1e-6) if quantity.startswith("legibility") else d


def floors(rows: list[dict]) -> dict[str, dict[str, float]]:
    """Per quantity: the 95th percentile (and median, max) of |difference| over the perturbations that change
    pixels (shift, jpeg95; ``order`` is a check that must give 0, and would only dilute the percentile);
    legibility relative to the unperturbed value."""
    out = {}
    physical = [r for r in rows if r["perturbation"] != "order"]
    for quantity in QUANTITIES:
        diffs = [d for d in (difference(r, quantity) for r in physical) if d is not None]
        if diffs:
            arr = np.array(diffs)
            out[quantity] = {
                "n": len(arr),
                "median": float(np.median(arr)),
                "p95": float(np.percentile(arr, 95)),
                "max": float(arr.max()),
                "zero_share": float(np.mean(arr == 0)),
            }
    by_kind = {}
    for kind in PERTURBATIONS:
        rows_k = [r for r in rows if r["perturbation"] == kind]
        by_kind[kind] = floors_flat(rows_k)
    return {"all": out, "by_perturbation": by_kind}


def floors_flat(rows: list[dict]) -> dict[str, float]:
    """Per quantity: the 95th percentile of |difference| over ``rows``."""
    out = {}
    for quantity in QUANTITIES:
        diffs = [d for d in (difference(r, quantity) for r in rows) if d is not None]
        if diffs:
            out[quantity] = float(np.percentile(diffs, 95))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--states", type=int, default=60, help="page states measured (captures and restorations)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=str(ROOT / "out" / "runs" / "noise-floor"))
    ap.add_argument("--report-only", action="store_true", help="write the report from the rows measured so far")
    ap.add_argument("--name", default="noise_floor", help="base name of the result files")
    args = ap.parse_args()
    os.environ.setdefault("DOCINTENT_CACHE", "0")  # every measurement reads afresh
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows_path = out_dir / "rows.jsonl"
    rows = [json.loads(line) for line in rows_path.read_text().splitlines()] if rows_path.exists() else []
    done = {(r["state"], r["perturbation"]) for r in rows}
    rng = np.random.default_rng(args.seed)
    t0 = time.time()
    states = [] if args.report_only else page_states(args.states, args.seed)
    with rows_path.open("a") as f:
        for state_id, page, question, task, tool in states:
            if all((state_id, k) in done for k in PERTURBATIONS):
                continue
            base = measure(page, question, task, tool)
            for kind in PERTURBATIONS:
                if (state_id, kind) in done:
                    continue
                if kind == "order":
                    # the same reading, but with the confidence a line would have when read in the other order
                    perturbed = {**base, "confidence": base["confidence"] + line_order_difference(page)}
                else:
                    from docintent.page import Box

                    region = Box(*base["region"])
                    perturbed = measure(perturb(page, kind, rng), question, task, tool, region)
                row = {"state": state_id, "perturbation": kind, "tool": tool, "base": base, "perturbed": perturbed}
                rows.append(row)
                f.write(json.dumps(row) + "\n")
                f.flush()
            print(f"{state_id}: measured ({time.time() - t0:.0f} s)", flush=True)
    result = floors(rows)
    load = os.getloadavg()[0]
    lines = [
        "# Noise floors of Phase B's quantities",
        "",
        f"{len({r['state'] for r in rows})} page states (development captures of the real-page dev split and "
        f"synthetic seed 101, and their restorations), {len(rows)} re-measurements; load {load:.1f}. The "
        "floor pools the perturbations that change pixels (shift, jpeg95); the perturbed page is measured in "
        "the evidence region found on the unperturbed one.",
        "",
        "| quantity | n | median abs diff | p95 (the floor) | max | share exactly 0 |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for q, v in result["all"].items():
        unit = " (relative)" if q.startswith("legibility") else ""
        lines.append(
            f"| {q}{unit} | {v['n']} | {v['median']:.4f} | {v['p95']:.4f} | {v['max']:.4f} | "
            f"{100 * v['zero_share']:.0f} % |"
        )
    lines += [
        "",
        "p95 per perturbation:",
        "",
        "| perturbation | " + " | ".join(result["all"]) + " |",
        "|---|" + "---:|" * len(result["all"]),
    ]
    for kind, v in result["by_perturbation"].items():
        lines.append(f"| {kind} | " + " | ".join(f"{v.get(q, float('nan')):.4f}" for q in result["all"]) + " |")
    from docintent.brains.offline.review import log_odds

    answered = [r for r in rows if r["perturbation"] != "order" and "answer" in r["base"]]
    flips = [r for r in answered if r["base"]["answer"] != r["perturbed"]["answer"]]
    rises = [log_odds(r["perturbed"]["confidence"]) - log_odds(r["base"]["confidence"]) for r in flips]
    top = max(rises, default=0.0)
    result["answer_changed"] = {"n": len(answered), "changed": len(flips), "largest_log_odds_rise": top}
    lines += [
        "",
        "`confidence` is the reader's probability of its answer (the scored reader's, the quantity the `answer` "
        "review rule compares); `confidence_log_odds` is the same on the log-odds scale, the rule's floor. The "
        f"answer itself changed in {len(flips)} of {len(answered)} re-measurements; its log-odds rose by at most "
        f"{top:.2f} when it did (the rule's margin for a changed answer must exceed that).",
    ]
    text = "\n".join(lines)
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(text + "\n")
    (RESULTS / f"{args.name}.json").write_text(
        json.dumps({**result, "states": len({r["state"] for r in rows}), "rows": len(rows), "load": load}, indent=2)
    )


if __name__ == "__main__":
    main()
