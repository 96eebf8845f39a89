"""Report plots keep a readable size however many degradations and strategies a run has."""

from __future__ import annotations

from pathlib import Path

import pytest
from PIL import Image

from docintent.evaluation.metrics import summarize
from docintent.evaluation.report import DegradationTable, StrategyRow, plot_degradations, plot_families

STRATEGIES = [
    "none",
    "docintent",
    "judge-fixed",
    "prompt-only",
    "pipeline-fixed",
    "agres",
    "judge-random",
    "pipeline-random",
]
DEGRADATIONS = [
    "perspective",
    "color_cast",
    "curl",
    "noise",
    "jpeg",
    "stain",
    "low_contrast",
    "motion_blur",
    "defocus",
    "shadow",
    "moire",
    "fold",
    "rotation_270",
    "rotation_90",
    "rotation_180",
    "(none recorded)",
]


def _size(path: Path) -> tuple[int, int]:
    with Image.open(path) as img:
        return img.size


@pytest.mark.parametrize("n_degradations, n_strategies", [(3, 2), (6, 4), (16, 8)])
def test_score_by_degradation_is_never_a_thin_strip(tmp_path, n_degradations, n_strategies):
    names, columns = DEGRADATIONS[:n_degradations], STRATEGIES[:n_strategies]
    table = DegradationTable(
        columns,
        names,
        {d: 10 + i for i, d in enumerate(names)},
        {d: {c: float((i * 7 + j * 13) % 100) for j, c in enumerate(columns)} for i, d in enumerate(names)},
    )
    path = tmp_path / "deg.png"
    plot_degradations(table, path)
    width, height = _size(path)
    # The report and the viewer show plots at up to ~1200 px wide: a wider image is shrunk, a flatter one
    # becomes a strip. The full benchmark (16 degradations x 8 strategies) was 6085 x 492 px before.
    assert width <= 1300 and height >= 300, (width, height)
    assert width / height <= 3.0


def test_score_by_family_with_every_strategy_fits_the_page(tmp_path):
    rows = []
    for k, strategy in enumerate(STRATEGIES):
        metric_rows = [
            {"task": t, "subset": t, "group": f"{t}{i}", "score": float((i + k) % 2)}
            for t in ("doc", "chart", "table")
            for i in range(4)
        ]
        rows.append(
            StrategyRow(
                "run",
                strategy,
                "offline",
                rows=12,
                errors=0,
                summary=summarize(metric_rows),
                avg_tools=1.0,
                median_seconds=1.0,
                tokens_per_sample=0.0,
            )
        )
    path = tmp_path / "fam.png"
    plot_families(rows, path)
    width, height = _size(path)
    assert width <= 1300 and height >= 300 and width / height <= 3.0, (width, height)
