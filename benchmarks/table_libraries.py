"""Third-party table-structure recognisers against docintent's own, on the held-out tables of table_structure.py.

Every recogniser gets the same text: docintent's OCR words (``get_engine().read(page)``, cached on disk) are put
into each predicted cell whose box holds the word's centre, joined left to right within a visual line and top
to bottom across lines. So only the structure (which boxes are cells, in which row and column) differs between
the libraries, and the scores are those of ``benchmarks/table_structure.py`` (``score_cells``, ``relations``,
``_f1``): cell P / R / F1 (texts within normalised edit similarity 0.8, each box holding the other's centre)
and neighbour-relation F1, over the 60 pages of the split ``heldout`` of ``benchmarks/out/tableset``, clean or
"captured" (``table_structure.capture``, with the per-page seed ``table_structure.py run`` uses).

Libraries (``--library``):

- ``docintent``: :func:`docintent.layout.structure.page_structure`; the cells' own text is scored as well
  (``native_*``: the figures of ``table_structure.py run``), beside the same refilled text as the others.
- ``img2table`` (MIT, 2.0.0): ``Image(png_bytes).extract_tables(ocr=None, implicit_rows=True,
  borderless_tables=True)`` on the whole page; timed per page (the call alone, decoding included).
- ``nemotron`` (``nemotron-table-structure-v1`` 1.0.0, a YOLOX detector of cells, rows and columns): run on
  the gold table crop when its weights can be had; without them it records why it cannot run and times the
  network's forward pass with random weights (``--time-architecture``), which is what a table would cost.
  Measured here (2 cores): the wheel (1.0.0, 31 kB) holds no weights (``get_weights_path`` downloads
  ``weights.pth`` from the hub); the package imports torchvision without declaring it, and the registry's
  torchvision 0.28.0 is a CUDA build whose ops do not load on torch 2.13.0+cpu; one forward pass of the 54 M
  parameter network on a 1024 x 1024 table takes about 11-14 s. The scoring path (:class:`Nemotron`) has
  therefore never run: treat it as a sketch until weights and a CPU torchvision are at hand.

Set-up (each in its own virtual environment; nothing is installed into the system Python):

    # docintent: the project's own environment
    python benchmarks/table_libraries.py --library docintent --split heldout --condition clean

    # img2table requires opencv-contrib-python (the GUI contrib build); docintent requires
    # opencv-python-headless. Both land in the venv and share the one cv2/ folder, whose binary is that of the
    # last one installed, so reinstall the contrib build last (the headless binary lacks cv2.ximgproc, which
    # img2table's thresholding calls). The OCR versions are pinned to the project's so the OCR cache is hit.
    python -m venv /tmp/venv-i2t
    /tmp/venv-i2t/bin/pip install img2table==2.0.0
    /tmp/venv-i2t/bin/pip install -e . --no-deps
    /tmp/venv-i2t/bin/pip install numpy scipy opencv-python-headless pillow pypdfium2 pydantic pydantic-settings \
        rapidocr==3.10.0 onnxruntime==1.32.0 rapidfuzz matplotlib tqdm openai httpx2
    /tmp/venv-i2t/bin/pip install --force-reinstall --no-deps opencv-contrib-python==5.1.0.95
    /tmp/venv-i2t/bin/python benchmarks/table_libraries.py --library img2table --split heldout --condition clean

    # nemotron: torch's CPU build first (an unpinned torch brings the CUDA one), then the package
    python -m venv /tmp/venv-nemo
    /tmp/venv-nemo/bin/pip install "torch==2.13.0+cpu"
    /tmp/venv-nemo/bin/pip install nemotron-table-structure-v1==1.0.0
    /tmp/venv-nemo/bin/python benchmarks/table_libraries.py --library nemotron --time-architecture
    # (with a local weights.pth and a torchvision built for that torch, add --weights PATH, and docintent with
    # its dependencies as for img2table, to score it)

Figures are printed and merged into ``benchmarks/results/table_libraries.json`` under ``LIBRARY/SPLIT/CONDITION``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from statistics import median

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from table_structure import _f1, capture, relations, score_cells  # noqa: E402

RESULTS = HERE / "results"
# The Hugging Face hub is never contacted: huggingface_hub reads this when it is imported, so it is set first.
os.environ["HF_HUB_OFFLINE"] = "1"
OPENCV_DISTRIBUTIONS = (
    "opencv-python",
    "opencv-python-headless",
    "opencv-contrib-python",
    "opencv-contrib-python-headless",
)


def _version(name: str) -> str | None:
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def _rows(data: Path, split: str, limit: int) -> list[dict]:
    rows = [json.loads(line) for line in (data / "tables.jsonl").read_text(encoding="utf-8").splitlines()]
    rows = [r for r in rows if r["split"] == split]
    return rows[:limit] if limit else rows


def _page_image(data: Path, row: dict, n: int, condition: str):
    """The page as table_structure.py run sees it: (BGR image, scale of the gold boxes)."""
    import cv2

    img = cv2.imread(str(data / row["image"]), cv2.IMREAD_COLOR)
    if condition == "captured":
        return capture(img, seed=n + 7919 * len(row["id"]))
    return img, 1.0


def _gold(row: dict, scale: float) -> list[dict]:
    return [
        dict(
            c,
            text_box=[v * scale for v in c["text_box"]] if c["text_box"] else None,
            cell_box=[v * scale for v in c["cell_box"]],
        )
        for c in row["cells"]
    ]


def _words(ocr, width: int, height: int) -> list[tuple[str, tuple[float, float, float, float]]]:
    """Every OCR word (a line without words counts as one) with its box in pixels."""
    out = []
    for line in ocr.lines:
        for item in line.words or (line,):
            b = item.box
            out.append((item.text, (b.x0 * width, b.y0 * height, b.x1 * width, b.y1 * height)))
    return out


def fill_text(box, words) -> str:
    """The words whose centre lies in ``box``, left to right within a visual line, lines top to bottom."""
    inside = []
    for text, (x0, y0, x1, y1) in words:
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        if box[0] <= cx <= box[2] and box[1] <= cy <= box[3]:
            inside.append((cy, y1 - y0, x0, text))
    inside.sort()
    lines: list[list[tuple[float, str]]] = []
    last_cy, last_h = None, 0.0
    for cy, h, x0, text in inside:
        if last_cy is None or cy - last_cy > 0.5 * max(h, last_h):
            lines.append([])
            last_cy, last_h = cy, h
        lines[-1].append((x0, text))
    return " ".join(" ".join(t for _, t in sorted(line)) for line in lines)


class Tally:
    """Cell and relation counts summed over pages (and per style)."""

    def __init__(self) -> None:
        self.cells = [0, 0, 0]
        self.rel = [0, 0, 0]
        self.by_style: dict[str, list[list[int]]] = {}

    def add(self, style: str, tables: list[list[dict]], gold: list[dict]) -> None:
        pred = [c for t in tables for c in t]
        pred_rel: set = set()
        for t in tables:
            pred_rel |= relations(t)
        gold_rel = relations(gold)
        cells = score_cells(pred, gold)
        rel = (len(pred_rel & gold_rel), len(pred_rel), len(gold_rel))
        per = self.by_style.setdefault(style, [[0, 0, 0], [0, 0, 0]])
        for i in range(3):
            self.cells[i] += cells[i]
            self.rel[i] += rel[i]
            per[0][i] += cells[i]
            per[1][i] += rel[i]

    def figures(self, prefix: str = "") -> dict:
        return {
            f"{prefix}cell_precision_recall_f1": [round(v, 4) for v in _f1(*self.cells)],
            f"{prefix}relation_precision_recall_f1": [round(v, 4) for v in _f1(*self.rel)],
            f"{prefix}by_style": {
                s: {"cell_f1": round(_f1(*v[0])[2], 4), "relation_f1": round(_f1(*v[1])[2], 4)}
                for s, v in sorted(self.by_style.items())
            },
        }


# -- the recognisers: each gives a page's tables as lists of {row, col, colspan, box (pixels)} -------------------


def docintent_tables(ocr, page) -> list[list[dict]]:
    from docintent.layout.structure import page_structure

    w, h = page.width, page.height
    structure = page_structure(ocr, w, h, page=page)
    return [
        [
            {
                "row": c.row,
                "col": c.col,
                "colspan": c.colspan,
                "native_text": c.text,
                "box": (c.box.x0 * w, c.box.y0 * h, c.box.x1 * w, c.box.y1 * h),
            }
            for r in t.rows
            for c in r
        ]
        for t in structure.tables
    ]


def img2table_tables(png: bytes) -> list[list[dict]]:
    from img2table.document import Image

    tables = Image(src=png).extract_tables(ocr=None, implicit_rows=True, borderless_tables=True)
    out = []
    for table in tables:
        # a spanning cell is the same TableCell object at each grid position it covers
        places: dict[int, tuple[object, list[tuple[int, int]]]] = {}
        for r, (_, row) in enumerate(table.content.items()):
            for c, cell in enumerate(row):
                places.setdefault(id(cell), (cell, []))[1].append((r, c))
        cells = []
        for cell, pos in places.values():
            top = min(r for r, _ in pos)
            cols = sorted({c for r, c in pos if r == top})
            b = cell.bbox
            cells.append({"row": top, "col": cols[0], "colspan": len(cols), "box": (b.x1, b.y1, b.x2, b.y2)})
        out.append(cells)
    return out


def _nemotron_import():
    """(package, error): the package imports torchvision (for NMS) without declaring it."""
    try:
        import nemotron_table_structure_v1 as pkg
    except Exception as err:  # noqa: BLE001 - the reason is the result
        return None, f"{type(err).__name__}: {err}"
    return pkg, None


def _nemotron_weights(path: str | None) -> tuple[str | None, str | None]:
    """(weights path, error). The wheel ships no weights; they are fetched from the Hugging Face hub, which
    this benchmark never contacts (HF_HUB_OFFLINE=1): only a file already cached or given counts."""
    if path:
        return (path, None) if Path(path).is_file() else (None, f"no file {path}")
    try:
        from huggingface_hub import hf_hub_download

        return hf_hub_download(repo_id="nvidia/nemotron-table-structure-v1", filename="weights.pth"), None
    except Exception as err:  # noqa: BLE001
        return None, f"{type(err).__name__}: {err}"


def _files(name: str, pattern: str = "") -> list[list]:
    """[path, bytes] of the files a distribution installed (from its RECORD), those containing ``pattern``."""
    from importlib.metadata import distribution

    return [[str(f), f.size] for f in distribution(name).files or [] if f.size and pattern in str(f)]


def nemotron_architecture_seconds(repeats: int = 3) -> dict:
    """Seconds of one forward pass of the YOLOX network (random weights, 1024 x 1024 input, as the model
    resizes every table to), importing only the network modules."""
    import types

    import torch

    if "torchvision" not in sys.modules:
        try:
            import torchvision  # noqa: F401
        except Exception:  # noqa: BLE001 - only NMS needs it, and the forward pass has none
            sys.modules["torchvision"] = types.ModuleType("torchvision")
    from nemotron_table_structure_v1.table_structure_v1 import Exp

    exp = Exp()
    model = exp.get_model().eval()
    x = torch.rand(1, 3, *exp.size) * 255
    seconds = []
    with torch.inference_mode():
        for _ in range(repeats):
            t0 = time.perf_counter()
            model(x)
            seconds.append(time.perf_counter() - t0)
    return {
        "input": list(exp.size),
        "parameters_millions": round(sum(p.numel() for p in model.parameters()) / 1e6, 1),
        "torch_threads": torch.get_num_threads(),
        "forward_seconds": [round(s, 2) for s in seconds],
        "forward_seconds_median": round(median(seconds), 2),
    }


class Nemotron:
    """The detector on a table crop: cells (label 1) placed by the row (2) and column (3) boxes they overlap."""

    def __init__(self, weights: str) -> None:
        import torch
        from nemotron_table_structure_v1.model import YoloXWrapper
        from nemotron_table_structure_v1.table_structure_v1 import Exp

        exp = Exp()
        exp.device = "cpu"
        net = exp.get_model()
        net.load_state_dict(torch.load(weights, map_location="cpu", weights_only=False)["model"], strict=True)
        self.model = YoloXWrapper(net, exp).eval()
        self.threshold = exp.threshold

    def tables(self, rgb, box) -> list[list[dict]]:
        import numpy as np
        import torch

        x0, y0 = max(int(box[0]), 0), max(int(box[1]), 0)
        crop = np.ascontiguousarray(rgb[y0 : int(np.ceil(box[3])), x0 : int(np.ceil(box[2]))])
        h, w = crop.shape[:2]
        with torch.inference_mode():
            pred = self.model(self.model.preprocess(crop), np.array([[h, w]]))[0]
        keep = pred["scores"] > self.threshold
        boxes = (pred["boxes"][keep].numpy() * [w, h, w, h] + [x0, y0, x0, y0]).tolist()
        labels = pred["labels"][keep].numpy().astype(int).tolist()
        rows = sorted((b for b, lab in zip(boxes, labels) if lab == 2), key=lambda b: b[1] + b[3])
        cols = sorted((b for b, lab in zip(boxes, labels) if lab == 3), key=lambda b: b[0] + b[2])
        cells = []
        for b in (b for b, lab in zip(boxes, labels) if lab == 1):
            cy = (b[1] + b[3]) / 2
            r = min(range(len(rows)), key=lambda i: abs((rows[i][1] + rows[i][3]) / 2 - cy), default=0)
            spanned = [i for i, c in enumerate(cols) if b[0] <= (c[0] + c[2]) / 2 <= b[2]]
            if not spanned:
                cx = (b[0] + b[2]) / 2
                spanned = [min(range(len(cols)), key=lambda i: abs((cols[i][0] + cols[i][2]) / 2 - cx), default=0)]
            cells.append({"row": r, "col": spanned[0], "colspan": len(spanned), "box": tuple(b)})
        return [cells] if cells else []


# -- the run --------------------------------------------------------------------------------------------------


def _environment(library: str) -> dict:
    names = {
        "docintent": ["docintent", "rapidocr", "onnxruntime"],
        "img2table": ["img2table", "rapidocr", "onnxruntime"],
        "nemotron": ["nemotron-table-structure-v1", "torch", "torchvision", "huggingface-hub"],
    }[library]
    opencv = {n: v for n in OPENCV_DISTRIBUTIONS if (v := _version(n))}
    return {
        "versions": {n: _version(n) for n in names},
        "opencv_distributions": opencv,
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
    }


def run(args: argparse.Namespace) -> dict:
    figures: dict = {
        "library": args.library,
        "split": args.split,
        "condition": args.condition,
        **_environment(args.library),
    }
    nemo = None
    if args.library == "nemotron":
        pkg, import_error = _nemotron_import()
        figures["wheel_files"] = (
            _files("nemotron-table-structure-v1") if _version("nemotron-table-structure-v1") else None
        )
        if _version("torchvision"):  # the registry's torchvision is a CUDA build: its ops do not load on +cpu torch
            figures["torchvision_cuda_libraries"] = _files("torchvision", "cuda")
        weights, weights_error = _nemotron_weights(args.weights)
        if args.time_architecture:
            figures["architecture_timing"] = nemotron_architecture_seconds()
        blockers = [e for e in (import_error, weights_error) if e]
        if blockers:
            figures["status"] = "cannot run"
            figures["blockers"] = blockers
            return figures
        nemo = Nemotron(weights)

    import cv2

    from docintent.ocr import get_engine
    from docintent.page import Page

    data = Path(args.data)
    rows = _rows(data, args.split, args.limit)
    engine = get_engine()
    tally, native = Tally(), Tally()
    seconds: list[float] = []
    ocr_fresh = 0
    tables_found = 0
    for n, row in enumerate(rows):
        img, scale = _page_image(data, row, n, args.condition)
        rgb = cv2.cvtColor(img, cv2.COLOR_BGR2RGB)
        page = Page.from_array(rgb, source=row["id"])
        t0 = time.perf_counter()
        ocr = engine.read(page)
        ocr_fresh += time.perf_counter() - t0 > 0.5  # a cached read takes milliseconds
        gold = _gold(row, scale)
        if args.library == "docintent":
            t0 = time.perf_counter()
            tables = docintent_tables(ocr, page)
            seconds.append(time.perf_counter() - t0)
            native.add(row["style"], [[dict(c, text=c["native_text"]) for c in t] for t in tables], gold)
        elif args.library == "img2table":
            ok, png = cv2.imencode(".png", img)
            t0 = time.perf_counter()
            tables = img2table_tables(png.tobytes())
            seconds.append(time.perf_counter() - t0)
        else:
            t0 = time.perf_counter()
            tables = nemo.tables(rgb, [v * scale for v in row["table_box"]])
            seconds.append(time.perf_counter() - t0)
        words = _words(ocr, page.width, page.height)
        tables = [[dict(c, text=fill_text(c["box"], words)) for c in t] for t in tables]
        tally.add(row["style"], tables, gold)
        tables_found += bool(tables)
        if args.verbose:
            m, p, g = score_cells([c for t in tables for c in t], gold)
            print(
                f"{row['id']}: tables {len(tables)} cells {_f1(m, p, g)[2]:.3f} ({m}/{p}/{g}) {seconds[-1]:.2f} s",
                flush=True,
            )
    figures.update(
        {
            "status": "ran",
            "tables": len(rows),
            "tables_found": tables_found,
            "text": "docintent OCR words filled into each predicted cell box",
            **tally.figures(),
            "seconds_median": round(median(seconds), 4) if seconds else None,
            "seconds_per": "table crop" if args.library == "nemotron" else "page",
            "ocr_reads_not_cached": ocr_fresh,
        }
    )
    if args.library == "docintent":
        figures.update(native.figures("native_"))
    return figures


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--library", choices=("docintent", "img2table", "nemotron"), required=True)
    parser.add_argument("--data", default=str(HERE / "out" / "tableset"))
    parser.add_argument("--split", choices=("dev", "heldout"), default="heldout")
    parser.add_argument("--condition", choices=("clean", "captured"), default="clean")
    parser.add_argument("--limit", type=int, default=0)
    parser.add_argument("--weights", default=None, help="nemotron: a local weights.pth (the hub is never contacted)")
    parser.add_argument(
        "--time-architecture", action="store_true", help="nemotron: time the network's forward pass with random weights"
    )
    parser.add_argument("--no-save", action="store_true")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    figures = run(args)
    figures.update({"date": time.strftime("%Y-%m-%d"), "machine": platform.machine()})
    print(json.dumps(figures, indent=1))
    if not args.no_save and not args.limit:
        RESULTS.mkdir(exist_ok=True)
        path = RESULTS / "table_libraries.json"
        saved = json.loads(path.read_text()) if path.exists() else {}
        saved[f"{args.library}/{args.split}/{args.condition}"] = figures
        path.write_text(json.dumps(dict(sorted(saved.items())), indent=1) + "\n")


if __name__ == "__main__":
    main()
