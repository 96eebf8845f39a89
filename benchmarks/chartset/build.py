"""Build the chart set: every style of :mod:`chartset`, clean and captured, with gold data tables and questions.

    python benchmarks/chartset/build.py --out benchmarks/out/chartset --n 1 --n-heldout 2 --seed 0

Writes ``OUT/clean/<id>.png``, ``OUT/captured/<id>.png`` and ``OUT/charts.jsonl`` (one row per chart: id, split,
style, look, kind, renderer, labelled, title, the data table, the pixel box of every mark on the clean image,
the questions with their answers, and the capture plan). See benchmarks/chartset/README.md.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from chartset import LOOKS, STYLES, make  # noqa: E402
from chartset import mpl as mpl_path  # noqa: E402
from chartset import svg as svg_path  # noqa: E402

DPR = 1.5
#: Degradations a captured chart draws from (two or three of them, mild to medium), as a phone photo of a screen
#: or a printout would have them.
CAPTURE_POOL = (
    "perspective",
    "shadow",
    "uneven_light",
    "defocus",
    "motion_blur",
    "noise",
    "low_contrast",
    "color_cast",
)


def capture_plan(chart_id: str, seed: int):
    """The seeded capture plan of one chart: 2-3 degradations of severity 0.2-0.55 and a JPEG save."""
    from docintent.synth.capture import ORDER, CapturePlan, Step

    rng = np.random.default_rng([seed, *map(ord, chart_id)])
    k = int(rng.integers(2, 4))
    names: list[str] = []
    while len(names) < k:
        name = str(rng.choice(CAPTURE_POOL))
        if name not in names and not ({name} | set(names)) >= {"defocus", "motion_blur"}:
            names.append(name)
    steps = [Step(n, float(rng.uniform(0.2, 0.55)), int(rng.integers(2**31))) for n in names]
    steps.append(Step("jpeg", float(rng.uniform(0.3, 0.6)), int(rng.integers(2**31))))
    order = list(ORDER) + ["uneven_light"]
    steps.sort(key=lambda s: order.index(s.name) if s.name in order else len(order))
    return CapturePlan(tuple(steps), 0, int(rng.integers(1300, 1700)), int(rng.integers(2**31)))


def main() -> None:
    from PIL import Image

    from docintent.synth.capture import apply

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="benchmarks/out/chartset")
    ap.add_argument("--n", type=int, default=1, help="charts per development style")
    ap.add_argument("--n-heldout", type=int, default=2, help="charts per held-out style")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--styles", default="", help="comma-separated look names to build (default all)")
    args = ap.parse_args()
    out = Path(args.out)
    for sub in ("clean", "captured"):
        (out / sub).mkdir(parents=True, exist_ok=True)
    styles = [s for s in STYLES if not args.styles or s.look in args.styles.split(",")]
    driver = None
    rows = []
    try:
        with tempfile.TemporaryDirectory() as tmp:
            for style in styles:
                n = args.n_heldout if style.split == "heldout" else args.n
                for i in range(n):
                    spec = make(args.seed, i, style)
                    if style.renderer == "mpl":
                        img, boxes = mpl_path.render(spec)
                    else:
                        if driver is None:
                            driver = _driver()
                        page, css_boxes = svg_path.render(spec)
                        src = Path(tmp) / "c.html"
                        src.write_text(page, encoding="utf-8")
                        driver.set_window_size(svg_path.WIDTH + 60, svg_path.HEIGHT + 200)
                        driver.get(src.as_uri())
                        shot = Path(tmp) / "c.png"
                        driver.find_element("id", "chart").screenshot(str(shot))
                        img = np.asarray(Image.open(shot).convert("RGB"), dtype=np.uint8).copy()
                        boxes = {k: [round(v * DPR, 1) for v in b] for k, b in css_boxes.items()}
                    Image.fromarray(img).save(out / "clean" / f"{spec.id}.png")
                    plan = capture_plan(spec.id, args.seed)
                    shot_img, _meta = apply(img, plan)
                    Image.fromarray(shot_img).save(out / "captured" / f"{spec.id}.png")
                    rows.append(
                        {
                            "id": spec.id,
                            "split": style.split,
                            "style": style.name,
                            "look": style.look,
                            "kind": style.kind,
                            "renderer": style.renderer,
                            "labelled": style.labelled,
                            "title": spec.title,
                            "fmt": spec.fmt,
                            "table": spec.table(),
                            "mark_boxes": boxes,
                            "size": [int(img.shape[1]), int(img.shape[0])],
                            "questions": spec.questions,
                            "capture": plan.to_meta(),
                        }
                    )
                print(f"{style.name}: {n}", flush=True)
    finally:
        if driver is not None:
            driver.quit()
    index = out / "charts.jsonl"
    if args.styles and index.exists():  # a partial build replaces the rows of the looks it built
        built = {r["look"] for r in rows}
        kept = [json.loads(line) for line in index.read_text(encoding="utf-8").splitlines() if line.strip()]
        rows = [r for r in kept if r["look"] not in built and r["look"] in LOOKS] + rows
    with open(index, "w", encoding="utf-8") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    n_styles = len({r["style"] for r in rows})
    print(f"{len(rows)} charts in {n_styles} styles ({sum(r['split'] == 'heldout' for r in rows)} held out) in {out}")


def _driver():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    for flag in (
        "--headless=new",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--force-device-scale-factor={DPR}",
    ):
        options.add_argument(flag)
    return webdriver.Chrome(options=options, service=Service(executable_path="/usr/bin/chromedriver"))


if __name__ == "__main__":
    main()
