"""Phase A's answer confidence against correctness, and the calibration that corrects it.

The offline reader answers directly when its calibrated confidence reaches its threshold
(``OfflineReader.calibration``, ``answer_threshold``). A clear-looking reading of a blurred, warped or faded page
means something else than the same reading of a clean one, so the calibration maps the raw confidence and the
damage measured where the reader read to the probability of being right. This benchmark fits it and chooses the
threshold on development data, and reports calibration with and without it on held-out data.

``collect`` reads every sample once with the calibration off and records what the decision rests on: the
reader's raw confidence, where it read, and the measured damage (the worst degradation past its threshold, in
the evidence region or on the page, as the reader measures it; never the recorded labels). The benchmark, not the
brain, scores the answer against gold and, given ``--restored``, joins the score of the same sample after
restoration (from a ``judge-fixed`` run of the same dataset: every diagnosed degradation restored).

``fit`` fits the logistic calibration on collected development rows and simulates Phase A's decision for each
threshold (answer directly at or above it, otherwise restore) on the rows with a restored score.

    python benchmarks/calibration.py collect --dataset synth:benchmarks/out/synth-s101-n15 \
        --restored benchmarks/out/runs/dev-s101-base --out benchmarks/out/runs/calibration2-s101
    python benchmarks/calibration.py collect --dataset synth:benchmarks/out/realpages/dev --every 3 \
        --out benchmarks/out/runs/calibration2-realdev
    python benchmarks/calibration.py fit --rows benchmarks/out/runs/calibration2-s101/rows.jsonl \
        benchmarks/out/runs/calibration2-realdev/rows.jsonl

``fit-damage`` fits the scored reader's damage weight on collected development rows (its probability is
calibrated already; only the measured damage is fitted)::

    python benchmarks/calibration.py collect --dataset synth:benchmarks/out/realpages/dev --every 3 \
        --out benchmarks/out/runs/calibration-scored-realdev
    python benchmarks/calibration.py fit-damage --rows benchmarks/out/runs/calibration-scored-realdev/rows.jsonl

``evaluate`` compares raw and calibrated confidence on rows collected from held-out data (the synthetic seed
and the real-page test split the strategies are reported on), written to benchmarks/results/NAME.md and .json.

``report`` writes the calibration table (answer confidence in bins vs mean score) of finished strategy runs,
e.g. ``docintent`` runs made with the old and the new default, to benchmarks/results/NAME.md and .json.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
BINS = [(0.0, 0.2), (0.2, 0.4), (0.4, 0.6), (0.6, 0.8), (0.8, 1.01)]


def collect(args: argparse.Namespace) -> None:
    from docintent.brains.base import State
    from docintent.brains.offline import OfflineReader
    from docintent.evaluation.datasets import load_dataset
    from docintent.evaluation.metrics import score_row
    from docintent.io import load_page

    restored: dict[str, float] = {}
    for line in (Path(args.restored) / "results.jsonl").read_text().splitlines() if args.restored else []:
        row = json.loads(line)
        if row["strategy"] == "judge-fixed":
            restored[row["sample"]["id"]] = row["score"]
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows_path = out / "rows.jsonl"
    done = {json.loads(line)["id"] for line in rows_path.read_text().splitlines()} if rows_path.exists() else set()
    reader = OfflineReader(calibration=None)
    with rows_path.open("a") as f:
        for i, s in enumerate(load_dataset(args.dataset)):
            if s.id in done or (args.restored and s.id not in restored) or i % args.every:
                continue
            if args.clean and s.capture != 1:
                continue
            if args.clean and not s.meta.get("clean_image"):
                continue
            t0 = time.perf_counter()
            page = (
                load_page(s.image) if not args.clean else load_page(Path(s.image).parent.parent / s.meta["clean_image"])
            )
            state = State(question=s.question, task=s.task, page=page, original=page, available_tools=[])
            rotated = reader.orientation_fix(state, page) is not None
            reading = reader.read(state, page)
            excess, degradation = reader.worst_damage(state, page, reading.region)
            row = {
                "id": s.id,
                "task": s.task,
                "condition": "clean" if args.clean else s.meta.get("condition", ""),
                "confidence": reading.confidence,
                "source": reading.source,
                "excess": excess,
                "degradation": degradation,
                "turned": rotated,
                "score": score_row(s.task, s.subset, reading.answer, list(s.answers)),
                "restored_score": restored.get(s.id),
                "seconds": round(time.perf_counter() - t0, 2),
            }
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(
                f"{s.id}: conf {reading.confidence:.2f} excess {excess:.2f} ({degradation}) score {row['score']:.2f} "
                f"restored {row['restored_score']}",
                flush=True,
            )


def calibration_table(pairs: list[tuple[float, float]]) -> tuple[list[str], dict, float]:
    """(confidence, score) pairs -> markdown rows, figures per bin, expected calibration error (percent)."""
    lines = ["| confidence | n | mean score | exact |", "|---|---:|---:|---:|"]
    figures: dict = {}
    ece = 0.0
    for lo, hi in BINS:
        sel = [(c, s) for c, s in pairs if lo <= c < hi]
        if not sel:
            continue
        mean = statistics.fmean(s for _, s in sel)
        exact = sum(1 for _, s in sel if s >= 0.999) / len(sel)
        ece += len(sel) / len(pairs) * abs(statistics.fmean(c for c, _ in sel) - mean)
        label = f"{lo:.1f}-{min(hi, 1.0):.1f}"
        lines.append(f"| {label} | {len(sel)} | {100 * mean:.1f} | {100 * exact:.1f} |")
        figures[label] = {"n": len(sel), "score": mean, "exact": exact}
    return lines, figures, 100 * ece


def fit_logistic(x: list[list[float]], y: list[float], l2: float = 1e-3, steps: int = 50) -> list[float]:
    """Logistic regression (cross-entropy on soft labels in [0, 1]) by Newton's method; weights, bias first."""
    import numpy as np

    X = np.column_stack([np.ones(len(x)), np.asarray(x, dtype=float)])
    t = np.asarray(y, dtype=float)
    w = np.zeros(X.shape[1])
    for _ in range(steps):
        p = 1.0 / (1.0 + np.exp(-X @ w))
        grad = X.T @ (p - t) + l2 * w
        hess = (X * (p * (1 - p))[:, None]).T @ X + l2 * np.eye(len(w))
        w -= np.linalg.solve(hess, grad)
    return [float(v) for v in w]


def fit(args: argparse.Namespace) -> None:
    """Fit P(correct | raw confidence, damage excess) on development rows; choose the answer threshold."""
    import math

    rows = [json.loads(line) for path in args.rows for line in Path(path).read_text().splitlines() if line.strip()]
    usable = [r for r in rows if not r["turned"]]
    w = fit_logistic([[r["confidence"], r["excess"]] for r in usable], [r["score"] for r in usable])
    print(
        f"{len(usable)} direct readings from {len(args.rows)} row files; fit: bias {w[0]:.3f}, "
        f"confidence {w[1]:.3f}, damage {w[2]:.3f}"
    )

    def calibrated(r: dict) -> float:
        return 1.0 / (1.0 + math.exp(-(w[0] + w[1] * r["confidence"] + w[2] * r["excess"])))

    raw_lines, _, raw_ece = calibration_table([(r["confidence"], r["score"]) for r in usable])
    cal_lines, _, cal_ece = calibration_table([(calibrated(r), r["score"]) for r in usable])
    print(
        f"\nraw confidence (ECE {raw_ece:.1f})", *raw_lines, f"\ncalibrated (ECE {cal_ece:.1f})", *cal_lines, sep="\n"
    )
    decided = [r for r in rows if r.get("restored_score") is not None]
    if not decided:
        print("\nno row has a restored score (collect with --restored): no threshold simulation")
        return
    print(f"\nPhase A threshold on the calibrated confidence ({len(decided)} rows with a restored score)")
    print("| threshold | simulated score | direct answers |")
    print("|---:|---:|---:|")
    for tau in [0.4, 0.45, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8, 0.85, 0.9]:
        direct = [not r["turned"] and calibrated(r) >= tau for r in decided]
        score = statistics.fmean(r["score"] if d else r["restored_score"] for r, d in zip(decided, direct))
        print(f"| {tau:.2f} | {100 * score:.2f} | {sum(direct)} |")


def evaluate(args: argparse.Namespace) -> None:
    """Raw vs calibrated confidence (the reader's default calibration) on readings it was not fitted on."""
    from docintent.brains.offline import DEFAULT_CALIBRATION

    assert DEFAULT_CALIBRATION is not None
    sections, figures = [], {}
    for spec in args.rows:
        label, _, path = spec.partition("=")
        rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
        usable = [r for r in rows if not r["turned"]]
        entry: dict = {"n": len(usable)}
        for name, conf in (
            ("raw", lambda r: r["confidence"]),
            ("calibrated", lambda r: DEFAULT_CALIBRATION(r["confidence"], r["excess"])),
        ):
            lines, fig, ece = calibration_table([(conf(r), r["score"]) for r in usable])
            entry[name] = {"bins": fig, "ece": ece}
            sections += [
                f"**{label}, {name} confidence** ({len(usable)} readings of upright captures; expected "
                f"calibration error {ece:.1f} points)",
                "",
                *lines,
                "",
            ]
        damaged = [r for r in usable if r["excess"] > 0]
        if damaged:
            over = statistics.fmean(r["confidence"] - r["score"] for r in damaged)
            fixed = statistics.fmean(DEFAULT_CALIBRATION(r["confidence"], r["excess"]) - r["score"] for r in damaged)
            entry["damaged"] = {"n": len(damaged), "raw_overconfidence": over, "calibrated_overconfidence": fixed}
            sections += [
                f"Readings where damage was measured ({len(damaged)}): mean confidence minus score "
                f"{100 * over:+.1f} points raw, {100 * fixed:+.1f} calibrated.",
                "",
            ]
        figures[label] = entry
    c = DEFAULT_CALIBRATION
    text = "\n".join(
        [
            "# Calibration of the offline reader's answer confidence",
            "",
            f"Default calibration sigmoid({c.bias} + {c.confidence} x raw + {c.damage} x damage), fitted on development "
            "data only (synthetic seed 101; every third sample of the real-page dev split). Below: readings it was "
            "not fitted on (each capture read once, no restoration; mean score per confidence bin).",
            "",
            *sections,
        ]
    )
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(text + "\n")
    (RESULTS / f"{args.name}.json").write_text(json.dumps(figures, indent=2))


def report(args: argparse.Namespace) -> None:
    sections, figures = [], {}
    for spec in args.runs:
        label, _, path = spec.partition("=")
        pairs = []
        for line in (Path(path) / "results.jsonl").read_text().splitlines():
            row = json.loads(line)
            if row["strategy"] == args.strategy and row.get("result"):
                pairs.append((float(row["result"]["confidence"] or 0.0), float(row["score"])))
        lines, fig, ece = calibration_table(pairs)
        figures[label] = {"bins": fig, "ece": ece, "n": len(pairs)}
        sections += [f"**{label}** ({len(pairs)} answers; expected calibration error {ece:.1f} points)", "", *lines, ""]
    text = "\n".join([f"# Calibration of {args.strategy}'s final answer confidence", "", args.caption, "", *sections])
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(text + "\n")
    (RESULTS / f"{args.name}.json").write_text(json.dumps(figures, indent=2))


def fit_damage(args) -> None:
    """The scored reader's damage weight: ``sigmoid(logit(p) + damage x excess)`` fitted by maximum likelihood on
    collected development rows (right = score > 0.5). The probability's own weight stays 1 and no bias is fitted:
    the scorer is calibrated on clean and OCR-noised layouts already, and the captures hold no undamaged page to
    separate a bias from the damage with."""
    import numpy as np
    from scipy.optimize import minimize_scalar

    rows = [json.loads(line) for path in args.rows for line in Path(path).read_text().splitlines() if line.strip()]
    rows = [r for r in rows if r.get("confidence") is not None]
    p = np.clip(np.array([r["confidence"] for r in rows]), 1e-6, 1 - 1e-6)
    z0 = np.log(p / (1 - p))
    excess = np.array([r["excess"] for r in rows])
    right = np.array([r["score"] > 0.5 for r in rows], dtype=float)

    def nll(w: float) -> float:
        q = 1 / (1 + np.exp(-(z0 + w * excess)))
        return float(-np.sum(right * np.log(q + 1e-9) + (1 - right) * np.log(1 - q + 1e-9)))

    best = minimize_scalar(nll, bounds=(-10.0, 5.0), method="bounded")
    print(
        json.dumps(
            {
                "rows": len(rows),
                "damaged": int((excess > 0).sum()),
                "right": round(float(right.mean()), 3),
                "damage": round(float(best.x), 3),
            }
        )
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect")
    c.add_argument("--dataset", required=True)
    c.add_argument("--restored", help="run directory holding judge-fixed rows of the same dataset (for `fit`)")
    c.add_argument("--every", type=int, default=1, help="only every K-th sample (a subsample for slow pages)")
    c.add_argument(
        "--clean",
        action="store_true",
        help="read each question's clean render (``meta.clean_image``, capture 1 only) instead of its captures",
    )
    c.add_argument("--out", required=True)
    f = sub.add_parser("fit")
    f.add_argument("--rows", nargs="+", required=True)
    d = sub.add_parser("fit-damage", help="the scored reader's damage weight (see fit_damage)")
    d.add_argument("--rows", nargs="+", required=True)
    e = sub.add_parser("evaluate")
    e.add_argument("rows", nargs="+", help="LABEL=ROWS_JSONL from `collect` on held-out data")
    e.add_argument("--name", default="calibration")
    r = sub.add_parser("report")
    r.add_argument("runs", nargs="+", help="LABEL=RUN_DIR")
    r.add_argument("--strategy", default="docintent")
    r.add_argument("--name", default="calibration")
    r.add_argument("--caption", default="")
    args = ap.parse_args()
    {"collect": collect, "fit": fit, "fit-damage": fit_damage, "evaluate": evaluate, "report": report}[args.command](
        args
    )


if __name__ == "__main__":
    main()
