"""Precision and recall of the measured degradation diagnosis against the synthetic set's recorded labels.

    python benchmarks/diagnosis.py [--n 45] [--cal-seed 101] [--held-seed 202] [--calibrate]

Generates two synthetic sets with ``docintent synth`` (a calibration split and a held-out split with another
seed; skipped when the folder already holds that set), measures every unique captured image once with
:func:`docintent.perception.measure` and scores :func:`docintent.perception.diagnose` per degradation family
at the default :class:`~docintent.perception.Thresholds`. The held-out figures are the ones to quote: the
thresholds were chosen on the calibration split. ``--calibrate`` also prints, per family, the threshold that
maximises F1 on the calibration split (to copy into the defaults by hand, never applied automatically).

The recorded labels map to families as: perspective/curl/fold -> warp, defocus/motion_blur -> blur,
shadow -> shadow, color_cast/low_contrast/stain -> appearance, moire -> moire, rotation_* -> orientation
(noise and jpeg belong to no tool family and are not scored, but they stay in the images).

Also checks two kinds of real or clean input: a real photographed page (``skimage.data.page``, uneven light)
and clean renders. Prints the tables and saves them to benchmarks/results/diagnosis.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from docintent.io import load_page
from docintent.page import Page
from docintent.perception import FAMILIES, Thresholds, measure

REPO = Path(__file__).resolve().parents[1]
RESULTS = REPO / "benchmarks" / "results"
OUT = REPO / "benchmarks" / "out" / "diagnosis"

LABEL_FAMILY = {
    "perspective": "warp",
    "curl": "warp",
    "fold": "warp",
    "defocus": "blur",
    "motion_blur": "blur",
    "shadow": "shadow",
    "color_cast": "appearance",
    "low_contrast": "appearance",
    "stain": "appearance",
    "moire": "moire",
    "rotation_90": "orientation",
    "rotation_180": "orientation",
    "rotation_270": "orientation",
}


def families_of(labels: list[str]) -> set[str]:
    """The tool families a list of recorded degradation labels amounts to."""
    return {LABEL_FAMILY[label] for label in labels if label in LABEL_FAMILY}


def ensure_set(folder: Path, n: int, seed: int) -> Path:
    """Generate the synthetic set into ``folder`` unless it already holds one made with ``seed``."""
    manifest = folder / "manifest.json"
    if manifest.exists() and json.loads(manifest.read_text()).get("seed") == seed:
        return folder
    subprocess.run(
        [
            sys.executable,
            "-m",
            "docintent",
            "synth",
            "--out",
            str(folder),
            "--n",
            str(n),
            "--seed",
            str(seed),
            "--workers",
            "1",
            "--no-contact-sheet",
        ],
        check=True,
    )
    return folder


def unique_images(folder: Path) -> list[tuple[str, list[str]]]:
    """(image path, recorded labels) for every distinct image in the set's samples.jsonl."""
    seen: dict[str, list[str]] = {}
    with open(folder / "samples.jsonl", encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            seen.setdefault(row["image"], list(row.get("degradations", [])))
    return sorted(seen.items())


def measure_set(folder: Path) -> list[dict]:
    """Severities, raw measurements and seconds for every unique image (cached beside the set)."""
    cache = folder / "perception.json"
    images = unique_images(folder)
    if cache.exists():
        rows = json.loads(cache.read_text())
        if [r["image"] for r in rows] == [i for i, _ in images]:
            return rows
    rows = []
    for k, (rel, labels) in enumerate(images):
        page = load_page(folder / rel)
        start = time.perf_counter()
        sig = measure(page)
        seconds = time.perf_counter() - start
        rows.append(
            {
                "image": rel,
                "labels": labels,
                "severities": sig.severities,
                "raw": dict(sig.raw),
                "seconds": seconds,
                "width": page.width,
                "height": page.height,
            }
        )
        if (k + 1) % 25 == 0:
            print(f"  {folder.name}: {k + 1}/{len(images)} images", flush=True)
    cache.write_text(json.dumps(rows))
    return rows


def score(rows: list[dict], thresholds: Thresholds) -> dict[str, dict]:
    """Per family: true/false positives, false negatives, precision = TP/(TP+FP), recall = TP/(TP+FN)."""
    out = {}
    for fam in FAMILIES:
        tp = fp = fn = 0
        for r in rows:
            truth = fam in families_of(r["labels"])
            said = r["severities"][fam] > thresholds.of(fam)
            tp += truth and said
            fp += said and not truth
            fn += truth and not said
        precision = tp / (tp + fp) if tp + fp else float("nan")
        recall = tp / (tp + fn) if tp + fn else float("nan")
        f1 = 2 * precision * recall / (precision + recall) if tp else 0.0
        out[fam] = {
            "positives": tp + fn,
            "tp": tp,
            "fp": fp,
            "fn": fn,
            "precision": precision,
            "recall": recall,
            "f1": f1,
        }
    return out


def recall_by_label(rows: list[dict], thresholds: Thresholds) -> dict[str, dict]:
    """Per recorded label: images carrying it and the share where its family was diagnosed."""
    out: dict[str, dict] = {}
    for label, fam in LABEL_FAMILY.items():
        hits = [r["severities"][fam] > thresholds.of(fam) for r in rows if label in r["labels"]]
        if hits:
            out[label] = {"family": fam, "images": len(hits), "recall": sum(hits) / len(hits)}
    return out


def timing(repeats: int = 5) -> dict[str, float]:
    """Milliseconds of measure() on a clean 2048-px render, orientation excluded and included: wall clock
    (best and median) and CPU time of this process (median; all threads), which a busy machine distorts less."""
    from docintent.perception import clear_cache
    from docintent.synth.render import render_page

    img = render_page(width=2048, seed=0)[0]
    out = {"size": f"{img.shape[1]}x{img.shape[0]}"}
    for with_orientation in (False, True):
        times, cpu = [], []
        measure(Page.from_array(img[:, ::-1]), orientation=with_orientation)  # warm-up (model load)
        for _k in range(repeats):
            page = Page.from_array(img)
            clear_cache()
            start, start_cpu = time.perf_counter(), time.process_time()
            measure(page, orientation=with_orientation)
            times.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
        key = "with_orientation" if with_orientation else "signals_only"
        out[key + "_best_ms"] = 1000 * min(times)
        out[key + "_median_ms"] = 1000 * float(np.median(times))
        out[key + "_cpu_ms"] = 1000 * float(np.median(cpu))
    return out


def _plain(value):
    """JSON without NaN: undefined precision/recall becomes null."""
    if isinstance(value, float) and value != value:
        return None
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def best_thresholds(rows: list[dict]) -> dict[str, float]:
    """Per family, the threshold in 0.05..0.95 that maximises F1 (ties: the higher threshold)."""
    best = {}
    for fam in FAMILIES:
        scores = []
        for t in np.arange(0.05, 0.96, 0.05):
            s = score(rows, Thresholds(**{fam: float(t)}))[fam]
            scores.append((round(s["f1"], 4), float(round(t, 2))))
        best[fam] = max(scores)[1]
    return best


def real_and_clean_checks() -> list[dict]:
    """diagnose() on a real photographed page and on clean renders (expected: shadow and/or appearance
    on the photo, nothing on the renders)."""
    import skimage.data

    from docintent.synth.documents import render as render_document
    from docintent.synth.render import render_page

    cases = [("skimage.data.page() (real photo, uneven light)", Page.from_array(skimage.data.page()))]
    for seed in range(3):
        cases.append((f"render_page(1200, seed={seed})", Page.from_array(render_page(width=1200, seed=seed)[0])))
    for kind in ("letter", "report"):
        try:
            doc = render_document(np.random.default_rng(7), kind).image
        except Exception as exc:  # a kind the generator does not offer: report it, do not fail the run
            print(f"  (skipped synth document kind {kind!r}: {exc})")
            continue
        cases.append((f"synth clean document ({kind})", Page.from_array(doc)))
    out = []
    for name, page in cases:
        sig = measure(page)
        out.append(
            {
                "case": name,
                "size": f"{page.width}x{page.height}",
                "diagnosis": sig.above(),
                "severities": {k: round(v, 2) for k, v in sig.severities.items()},
            }
        )
    return out


def fmt(x: float) -> str:
    return "–" if x != x else f"{x:.2f}"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=45, help="questions per family of each synthetic set")
    ap.add_argument("--cal-seed", type=int, default=101)
    ap.add_argument("--held-seed", type=int, default=202)
    ap.add_argument("--calibrate", action="store_true", help="print F1-optimal thresholds on the calibration split")
    args = ap.parse_args()

    thresholds = Thresholds()
    splits = {}
    for name, seed in (("calibration", args.cal_seed), ("held-out", args.held_seed)):
        folder = ensure_set(OUT / f"synth-{seed}-n{args.n}", args.n, seed)
        rows = measure_set(folder)
        splits[name] = {
            "seed": seed,
            "images": len(rows),
            "scores": score(rows, thresholds),
            "recall_by_label": recall_by_label(rows, thresholds),
            "median_ms": 1000 * float(np.median([r["seconds"] for r in rows])),
            "clean_images": sum(not families_of(r["labels"]) for r in rows),
        }
        if name == "calibration" and args.calibrate:
            splits[name]["f1_optimal_thresholds"] = best_thresholds(rows)
    checks = real_and_clean_checks()
    speed = timing()

    lines = [
        "# Degradation diagnosis from measured signals (no model)",
        "",
        f"`diagnose()` at the default thresholds ({', '.join(f'{f} {thresholds.of(f)}' for f in FAMILIES)}) "
        "against the labels recorded by `docintent synth`, one row per unique captured image "
        "(1600-2000 px, up to 3 degradations each plus noise/JPEG). Thresholds were chosen on the "
        "calibration split; quote the held-out split.",
        "",
    ]
    for name, split in splits.items():
        lines += [
            f"## {name} split (seed {split['seed']}, {split['images']} images, "
            f"{split['clean_images']} without a scored degradation)",
            "",
            "| degradation | labelled images | precision | recall | F1 | false positives |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        for fam, s in split["scores"].items():
            lines.append(
                f"| {fam} | {s['positives']} | {fmt(s['precision'])} | {fmt(s['recall'])} | "
                f"{fmt(s['f1'])} | {s['fp']} |"
            )
        lines += [
            "",
            "Recall per recorded label: "
            + ", ".join(f"{label} {v['recall']:.2f} ({v['images']})" for label, v in split["recall_by_label"].items())
            + ".",
            "",
        ]
        lines += [f"Median time of `measure()` per image (orientation included): {split['median_ms']:.0f} ms.", ""]
        if "f1_optimal_thresholds" in split:
            lines += [
                "F1-optimal thresholds on this split: "
                + ", ".join(f"{k} {v}" for k, v in split["f1_optimal_thresholds"].items()),
                "",
            ]
    lines += ["## Real photo and clean renders", "", "| input | size | diagnosis | severities |", "|---|---|---|---|"]
    for c in checks:
        sev = ", ".join(f"{k} {v:.2f}" for k, v in c["severities"].items() if v > 0)
        lines.append(f"| {c['case']} | {c['size']} | {', '.join(c['diagnosis']) or '(none)'} | {sev or '–'} |")
    lines += [
        "",
        "## Speed",
        "",
        f"`measure()` on a clean {speed['size']} render, wall clock best / median of 5 (CPU time, all "
        f"threads): signals only {speed['signals_only_best_ms']:.0f} / {speed['signals_only_median_ms']:.0f} ms "
        f"({speed['signals_only_cpu_ms']:.0f} ms CPU); with the orientation classifier "
        f"{speed['with_orientation_best_ms']:.0f} / {speed['with_orientation_median_ms']:.0f} ms "
        f"({speed['with_orientation_cpu_ms']:.0f} ms CPU).",
        "",
        f"Load average during the run: {os.getloadavg()[0]:.1f} (2-core machine shared with other jobs).",
        "",
    ]
    text = "\n".join(lines)
    print(text)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "diagnosis.md").write_text(text)
    (RESULTS / "diagnosis.json").write_text(
        json.dumps(
            _plain(
                {
                    "thresholds": {f: thresholds.of(f) for f in FAMILIES},
                    "splits": splits,
                    "checks": checks,
                    "speed": speed,
                    "label_family": LABEL_FAMILY,
                }
            ),
            indent=1,
        )
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
