"""Reports of benchmark runs: Markdown and a self-contained HTML page with tables, plots and failures.

Tables follow the layout of the DocIntent paper's results tables: one line per strategy (and run), per
subtask score and consistency (WildDoc rules, :mod:`docintent.evaluation.metrics`), their average, the mean
number of tools run per sample ("Avg. Tools"), the median seconds per sample and the tokens per sample.
Table 1 holds the baselines and DocIntent, Table 2 the ablations (with DocIntent again for reference).
A breakdown by recorded capture degradation shows which damage each strategy copes with.

Example::

    >>> from docintent.evaluation.report import load_run, write_report
    >>> paths = write_report([load_run("runs/offline")], "reports/offline")   # doctest: +SKIP
    >>> paths["markdown"]                                                      # doctest: +SKIP
    PosixPath('reports/offline/report.md')
"""

from __future__ import annotations

import html
import json
import math
import os
import re
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from ..errors import DatasetError
from ..io.confine import regular_file_within, within
from ..io.lock import atomic_write_text
from ..redaction import redact
from ..trace import Action, Phase
from ..vocabulary import TASKS
from .harm import harm_markdown, harm_table, harmed_samples
from .metrics import METRICS, TASK_METRICS, Summary, row_metric, summarize
from .runner import RESULTS_FILE, read_manifest, read_results, reproducibility_differences, sample_digest


def family_title(task: str) -> str:
    """The column title of ``task``: its record's title (the benchmark's name for the built-in ones, "DocVQA"), or
    the name itself for a task no longer registered."""
    return TASKS[task].title if task in TASKS else task


#: Strategies reported in Table 2 (ablations); everything else goes to Table 1.
ABLATIONS = ("prompt-only", "agres", "pipeline-random", "judge-random")
#: Label of samples with no recorded degradation in the breakdown.
CLEAN = "(none recorded)"
MAX_FAILURES = 6


# --- loading ---------------------------------------------------------------------------------------


@dataclass
class Run:
    """One run directory: its rows (last per key), its manifest and a label for tables."""

    path: Path
    label: str
    rows: list[dict[str, Any]]
    manifest: dict[str, Any] = field(default_factory=dict)


def load_run(path: str | os.PathLike, label: str | None = None) -> Run:
    """Read a run directory (or its ``results.jsonl``)."""
    p = Path(path)
    directory = p.parent if p.name == RESULTS_FILE else p
    if not os.path.lexists(directory / RESULTS_FILE):  # a link is read only when it stays inside (read_results)
        raise DatasetError(f"{directory}: not a run directory (no {RESULTS_FILE})")
    rows = read_results(directory)
    for row in rows:
        _check_row(row, directory / RESULTS_FILE)
    return Run(directory, label or directory.name, rows, read_manifest(directory) or {})


#: Fields of a row (and of its ``result``) that hold numbers, when present.
_ROW_NUMBERS = ("score", "seconds")
_RESULT_NUMBERS = ("prompt_tokens", "completion_tokens", "tools_used", "confidence", "seconds")


def _is_figure(value: Any) -> bool:
    return value is None or (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value))


def _check_row(row: dict[str, Any], file: Path) -> None:
    """Refuse a row a report cannot be made of (text where a number belongs, no sample), naming it."""
    sample = row.get("sample")
    where = f"{file}: the row of sample {str((sample or {}).get('id', '?'))!r}, strategy {str(row.get('strategy'))!r}"
    if not isinstance(sample, dict) or not all(k in sample for k in ("id", "task")):
        raise DatasetError(f"{where}: 'sample' must be an object with 'id' and 'task'")
    for name, value in (
        ("sample.id", sample["id"]),
        ("sample.task", sample["task"]),
        ("strategy", row.get("strategy")),
    ):
        if isinstance(value, bool) or not isinstance(value, (str, int)):
            raise DatasetError(f"{where}: {name!r} must be text, got {type(value).__name__}")
    result = row.get("result")
    if result is not None and not isinstance(result, dict):
        raise DatasetError(f"{where}: 'result' must be an object, got {type(result).__name__}")
    for name, value in [
        *((n, row.get(n)) for n in _ROW_NUMBERS),
        *((n, (result or {}).get(n)) for n in _RESULT_NUMBERS),
    ]:
        if not _is_figure(value):
            raise DatasetError(f"{where}: {name!r} must be a number, got {value!r}"[:300])


def _unique_labels(runs: Sequence[Run]) -> None:
    labels = [r.label for r in runs]
    for run in runs:
        if labels.count(run.label) > 1:
            run.label = f"{run.path.parent.name}/{run.path.name}"


# --- the strategy table ----------------------------------------------------------------------------


@dataclass
class StrategyRow:
    """The figures of one strategy in one run."""

    run: str
    strategy: str
    brain: str
    _: KW_ONLY
    rows: int
    errors: int
    summary: Summary | None
    avg_tools: float
    median_seconds: float
    tokens_per_sample: float

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "strategy": self.strategy,
            "brain": self.brain,
            "rows": self.rows,
            "errors": self.errors,
            "summary": self.summary.to_dict() if self.summary else None,
            "avg_tools": self.avg_tools,
            "median_seconds": self.median_seconds,
            "tokens_per_sample": self.tokens_per_sample,
        }


def _metric_row(row: dict[str, Any]) -> dict[str, Any]:
    sample = row["sample"]
    return {
        "task": sample["task"],
        "subset": sample.get("subset") or sample["task"],
        "group": sample.get("group") or sample["id"],
        "score": float(row.get("score") or 0.0),
        "metric": row_metric(sample),
    }


def _metrics(rows: Sequence[StrategyRow], task: str) -> list[str]:
    """The titles of the metrics other than the task's default that rows of ``task`` were scored with."""
    found = {r.summary.tasks[task].metric for r in rows if r.summary and task in r.summary.tasks}
    return sorted(METRICS.get(m).label() or m for m in found if m and m != TASK_METRICS.get(task))


def _tokens(row: dict[str, Any]) -> int:
    result = row.get("result") or {}
    return int(result.get("prompt_tokens") or 0) + int(result.get("completion_tokens") or 0)


def _tools(row: dict[str, Any]) -> int:
    return int((row.get("result") or {}).get("tools_used") or 0)


def strategy_rows(runs: Sequence[tuple[str, Sequence[dict[str, Any]]]]) -> list[StrategyRow]:
    """One :class:`StrategyRow` per (run label, strategy), strategies in the order they first appear.

    Rows that failed count with score 0 (a sample without an answer is wrong), 0 tools and 0 tokens.
    """
    out = []
    for label, rows in runs:
        by_strategy: dict[str, list[dict[str, Any]]] = {}
        for row in rows:
            by_strategy.setdefault(row["strategy"], []).append(row)
        for strategy, items in by_strategy.items():
            brains = sorted({str(r.get("brain")) for r in items})
            out.append(
                StrategyRow(
                    run=label,
                    strategy=strategy,
                    brain=", ".join(brains),
                    rows=len(items),
                    errors=sum(1 for r in items if r.get("error")),
                    summary=summarize([_metric_row(r) for r in items]),
                    avg_tools=statistics.fmean(_tools(r) for r in items),
                    median_seconds=statistics.median(float(r.get("seconds") or 0.0) for r in items),
                    tokens_per_sample=statistics.fmean(_tokens(r) for r in items),
                )
            )
    return out


def _families(rows: Sequence[StrategyRow]) -> list[str]:
    present = {t for r in rows if r.summary for t in r.summary.tasks}
    return [t for t in TASKS if t in present]


def _fmt(value: float | None, digits: int = 2) -> str:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "–"
    return f"{value:.{digits}f}"


def strategy_table(rows: Sequence[StrategyRow]) -> tuple[list[str], list[list[str]]]:
    """Header and cells of a results table (see the module docstring for the columns)."""
    families = _families(rows)
    many_runs = len({r.run for r in rows}) > 1
    header = (["run"] if many_runs else []) + ["strategy"]
    for fam in families:
        own = _metrics(rows, fam)
        title = f"{family_title(fam)} ({', '.join(own)})" if own else family_title(fam)
        header += [f"{title} score", f"{title} cons."]
    header += ["Avg. score", "Avg. cons.", "Avg. Tools", "median s / sample", "tokens / sample", "rows", "errors"]
    cells = []
    for r in rows:
        line = ([r.run] if many_runs else []) + [r.strategy]
        for fam in families:
            split = r.summary.tasks.get(fam) if r.summary else None
            line += [_fmt(split.score if split else None), _fmt(split.consistency if split else None)]
        line += [
            _fmt(r.summary.average_score if r.summary else None),
            _fmt(r.summary.average_consistency if r.summary else None),
            _fmt(r.avg_tools),
            _fmt(r.median_seconds),
            _fmt(r.tokens_per_sample, 0),
            str(r.rows),
            str(r.errors),
        ]
        cells.append(line)
    return header, cells


def markdown_table(header: Sequence[str], cells: Sequence[Sequence[str]]) -> str:
    """A GitHub Markdown table (text columns left, number columns right)."""

    def numeric(col: int) -> bool:
        return all(_is_number(line[col]) for line in cells) and bool(cells)

    align = ["---:" if numeric(i) else "---" for i in range(len(header))]
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(c.replace("|", "\\|") for c in line) + " |" for line in cells]
    return "\n".join(lines)


def _is_number(text: str) -> bool:
    if text == "–":
        return True
    try:
        float(text)
    except ValueError:
        return False
    return True


def table_markdown(rows: Sequence[StrategyRow]) -> str:
    """The results table of ``rows`` as Markdown."""
    return markdown_table(*strategy_table(rows))


def split_tables(rows: Sequence[StrategyRow]) -> tuple[list[StrategyRow], list[StrategyRow]]:
    """(Table 1, Table 2): baselines and DocIntent; ablations with DocIntent for reference (may be empty)."""
    main = [r for r in rows if r.strategy not in ABLATIONS]
    ablations = [r for r in rows if r.strategy in ABLATIONS]
    if not main:
        return ablations, []
    if ablations:
        ablations = ablations + [r for r in rows if r.strategy == "docintent"]
    return main, ablations


# --- degradation breakdown -------------------------------------------------------------------------


@dataclass
class DegradationTable:
    """Score (percent, mean row score) per recorded degradation and column (strategy or run/strategy)."""

    columns: list[str]
    degradations: list[str]
    samples: dict[str, int]  # distinct samples per degradation
    scores: dict[str, dict[str, float]]  # degradation -> column -> score

    def cells(self) -> tuple[list[str], list[list[str]]]:
        header = ["degradation", "n"] + self.columns
        body = [
            [d, str(self.samples[d])] + [_fmt(self.scores[d].get(c)) for c in self.columns] for d in self.degradations
        ]
        return header, body


def degradation_table(runs: Sequence[tuple[str, Sequence[dict[str, Any]]]]) -> DegradationTable:
    """Break scores down by the degradations recorded on each sample (a sample counts under each of its
    degradations; samples with none under ``(none recorded)``)."""
    many_runs = len(runs) > 1
    sums: dict[str, dict[str, list[float]]] = {}
    samples: dict[str, set[str]] = {}
    columns: list[str] = []
    for label, rows in runs:
        for row in rows:
            column = f"{label}/{row['strategy']}" if many_runs else row["strategy"]
            if column not in columns:
                columns.append(column)
            names = list(row["sample"].get("degradations") or []) or [CLEAN]
            for name in dict.fromkeys(names):
                sums.setdefault(name, {}).setdefault(column, []).append(float(row.get("score") or 0.0))
                samples.setdefault(name, set()).add(row["sample"]["id"])
    order = sorted(sums, key=lambda d: (d == CLEAN, -len(samples[d]), d))
    scores = {d: {c: 100.0 * statistics.fmean(v) for c, v in sums[d].items()} for d in order}
    return DegradationTable(columns, order, {d: len(samples[d]) for d in order}, scores)


# --- plots -----------------------------------------------------------------------------------------


#: Widest plot in inches (at 110 dpi about 1200 px: shown at full size in the report and the viewer).
PLOT_MAX_WIDTH = 11.0
#: Grouped bar charts with more bars than this become an annotated table of colours (heatmap): a bar chart
#: that wide would be shrunk into a strip nobody can read.
MAX_BARS = 40


def _bar_plot(
    path: Path, groups: Sequence[str], series: Mapping[str, Sequence[float | None]], title: str, ylabel: str
) -> None:
    """Grouped bars, at most :data:`PLOT_MAX_WIDTH` wide and never flatter than about 3:1; too many bars
    for that width are drawn as a heatmap instead (see :func:`_heatmap`)."""
    if len(groups) * max(1, len(series)) > MAX_BARS:
        _heatmap(path, groups, series, title)
        return
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    n = max(1, len(series))
    width = 0.8 / n
    x = np.arange(len(groups))
    fig_width = min(PLOT_MAX_WIDTH, max(6.0, 0.28 * len(groups) * n + 1.5))
    fig, ax = plt.subplots(figsize=(fig_width, 4.2), dpi=110)
    for i, (name, values) in enumerate(series.items()):
        heights = [np.nan if v is None else v for v in values]
        ax.bar(x - 0.4 + width * (i + 0.5), heights, width, label=name)
    crowded = len(groups) > 5 or fig_width / max(1, len(groups)) < 1.4
    ax.set_xticks(x, groups, rotation=20 if crowded else 0, ha="right" if crowded else "center")
    ax.set_ylabel(ylabel)
    ax.set_ylim(0, 100)
    ax.set_title(title)
    ax.grid(axis="y", alpha=0.3)
    # Below the axes, so it never hides a bar at 100 %.
    ax.legend(
        fontsize=8,
        ncol=min(n, 4),
        loc="upper center",
        bbox_to_anchor=(0.5, -0.18 if not crowded else -0.3),
        frameon=False,
    )
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)


def _heatmap(path: Path, groups: Sequence[str], series: Mapping[str, Sequence[float | None]], title: str) -> None:
    """One row per group, one column per series, each cell coloured by its score and labelled with it."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    names = list(series)
    values = np.array(
        [[np.nan if series[c][g] is None else series[c][g] for c in names] for g in range(len(groups))], dtype=float
    )
    fig_width = min(PLOT_MAX_WIDTH, max(6.0, 2.8 + 0.95 * len(names)))
    fig, ax = plt.subplots(figsize=(fig_width, max(3.0, 1.6 + 0.36 * len(groups))), dpi=110)
    image = ax.imshow(np.ma.masked_invalid(values), cmap="RdYlGn", vmin=0, vmax=100, aspect="auto")
    ax.set_xticks(range(len(names)), names, rotation=30, ha="left")
    ax.xaxis.tick_top()
    ax.set_yticks(range(len(groups)), groups)
    for (r, c), v in np.ndenumerate(values):
        if not np.isnan(v):
            ax.text(c, r, f"{v:.0f}", ha="center", va="center", fontsize=8, color="black")
    ax.set_title(f"{title} (score %)", pad=12)
    fig.colorbar(image, ax=ax, fraction=0.03, pad=0.02)
    fig.savefig(path, bbox_inches="tight")
    plt.close(fig)


def plot_families(rows: Sequence[StrategyRow], path: Path) -> None:
    """Grouped bars: score per task family (and average) for each strategy."""
    families = _families(rows)
    groups = [family_title(f) for f in families] + ["Average"]
    many_runs = len({r.run for r in rows}) > 1
    series = {}
    for r in rows:
        name = f"{r.run}/{r.strategy}" if many_runs else r.strategy
        values = [r.summary.tasks[f].score if r.summary and f in r.summary.tasks else None for f in families]
        series[name] = values + [r.summary.average_score if r.summary else None]
    _bar_plot(path, groups, series, "Score by strategy and task family", "score (%)")


def plot_degradations(table: DegradationTable, path: Path) -> None:
    """Grouped bars: score per recorded degradation for each strategy."""
    groups = [f"{d} (n={table.samples[d]})" for d in table.degradations]
    series = {c: [table.scores[d].get(c) for d in table.degradations] for c in table.columns}
    _bar_plot(path, groups, series, "Score by recorded degradation", "score (%)")


# --- failures --------------------------------------------------------------------------------------


@dataclass
class Failure:
    """A wrong row picked for the report, with the images to show (paths relative to the report)."""

    run: str
    row: dict[str, Any]
    images: list[tuple[str, str]]  # (caption, relative path)
    solved_by: list[str]


def pick_failures(runs: Sequence[Run], limit: int = MAX_FAILURES) -> list[tuple[Run, dict[str, Any], list[str]]]:
    """Wrong rows, one per sample: first those another strategy got right (the informative ones), then
    rows where tools ran (their steps show what restoration did), then errors, then the rest; file order
    within each rank."""
    correct_by: dict[str, list[str]] = {}
    for run in runs:
        for row in run.rows:
            if row.get("correct"):
                correct_by.setdefault(row["sample"]["id"], []).append(row["strategy"])
    candidates = []
    for run in runs:
        for position, row in enumerate(run.rows):
            if row.get("correct"):
                continue
            solved = [s for s in correct_by.get(row["sample"]["id"], []) if s != row["strategy"]]
            rank = (not solved, _tools(row) == 0, not row.get("error"))
            candidates.append((rank, position, run, row, solved))
    candidates.sort(key=lambda c: (c[0], c[1]))
    picked, seen = [], set()
    for _, _, run, row, solved in candidates:
        if row["sample"]["id"] in seen:
            continue
        seen.add(row["sample"]["id"])
        picked.append((run, row, solved))
        if len(picked) >= limit:
            break
    return picked


def _thumbnail(source: Path, target: Path, max_side: int = 640) -> bool:
    """Write a JPEG thumbnail of an image file; False when it cannot be read."""
    try:
        from PIL import Image

        with Image.open(source) as opened:
            img = opened.convert("RGB")
            img.thumbnail((max_side, max_side))
            target.parent.mkdir(parents=True, exist_ok=True)
            img.save(target, quality=85)
        return True
    except Exception:  # a missing or unreadable image only loses its picture in the report
        return False


#: What a page state's name in a row may be (a page hash): no separator, no dot, so never a path.
_PAGE_NAME = re.compile(r"[A-Za-z0-9_-]{1,128}")
#: The largest picture file a report copies a thumbnail of.
MAX_PICTURE_BYTES = 256 * 1024 * 1024


def _steps(result: dict[str, Any]) -> list[dict[str, Any]]:
    trace = result.get("trace")
    return [step for step in trace if isinstance(step, dict)] if isinstance(trace, list) else []


def sample_picture(run: Run, row: dict[str, Any]) -> Path | None:
    """The file of a row's sample image a report may show, by its real path, or None.

    A row's paths are data. The image is shown when it is a regular file inside the run folder (a relative
    path is taken from there, never from the working folder), or - where a run keeps its dataset's images,
    outside the run folder - when the file's bytes are those the row was written for (its ``sample_digest``,
    which covers the image's bytes): whoever wrote that row knew the picture already, and a row edited to name
    any other file on the disk gets no picture."""
    sample = row.get("sample") or {}
    image = sample.get("image") if isinstance(sample, dict) else None
    inside = regular_file_within(run.path, image, max_bytes=MAX_PICTURE_BYTES)
    if inside is not None:
        return inside
    digest = row.get("sample_digest")
    if not isinstance(image, str) or not os.path.isabs(image) or not isinstance(digest, str):
        return None
    real = regular_file_within(os.sep, image, max_bytes=MAX_PICTURE_BYTES)  # confined below, by its bytes
    if real is None:
        return None
    from ..sample import Sample

    try:
        written_for = Sample.from_dict({**sample, "image": str(real)})
        return real if sample_digest(written_for) == digest else None
    except (KeyError, TypeError, ValueError):
        return None


def failure_images(run: Run, row: dict[str, Any], out_dir: Path, index: int) -> list[tuple[str, str]]:
    """Copy the pictures of one failure into ``out_dir/images``: the step images when the run saved them
    (input, then the page after each tool with its verdict), otherwise the input image. Every path a row names
    (its step folder, page names, the sample's image) is confined: pictures are read only from regular files
    inside the run folder (or the sample's own image, see :func:`sample_picture`) and written only under
    ``out_dir/images``."""
    images: list[tuple[str, str]] = []
    result = row.get("result") or {}
    steps_dir = row.get("steps_dir")
    prefix = f"failure{index:02d}"
    folder = within(run.path, steps_dir) if steps_dir else None
    if folder is not None:
        verdicts = {}
        for step in _steps(result):
            if step.get("phase") == Phase.REVIEW and isinstance(step.get("after"), str):
                verdicts[step["after"]] = "rolled back" if step.get("action") == "rollback" else "kept"
        shown = []
        if result.get("input_page"):
            shown.append(("input", result["input_page"]))
        for step in _steps(result):
            if step.get("phase") == Phase.TOOL and step.get("action") == Action.APPLIED and step.get("after"):
                verdict = verdicts.get(step["after"], "kept") if isinstance(step["after"], str) else "kept"
                shown.append((f"after {step.get('tool')} ({verdict})", step["after"]))
        for caption, page_hash in shown:
            if not isinstance(page_hash, str) or not _PAGE_NAME.fullmatch(page_hash):
                continue  # a row's page names are data: never a path out of the run or the report folder
            source = regular_file_within(run.path, str(folder / f"{page_hash}.jpg"), max_bytes=MAX_PICTURE_BYTES)
            target = out_dir / "images" / f"{prefix}_{page_hash}.jpg"
            if source is not None and _thumbnail(source, target):
                images.append((caption, target.relative_to(out_dir).as_posix()))
    if not images:
        source = sample_picture(run, row)
        target = out_dir / "images" / f"{prefix}_input.jpg"
        if source is not None and _thumbnail(source, target):
            images.append(("input", target.relative_to(out_dir).as_posix()))
    return images


# --- writing ---------------------------------------------------------------------------------------

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,sans-serif;margin:2em auto;max-width:1200px;color:#222;padding:0 1em}
h1,h2,h3{font-weight:600} table{border-collapse:collapse;margin:1em 0;font-size:14px}
th,td{border:1px solid #ccc;padding:4px 8px} th{background:#f2f2f2} td.num{text-align:right;font-variant-numeric:tabular-nums}
tr:nth-child(even) td{background:#fafafa} .meta{color:#666;font-size:13px} img.plot{max-width:100%}
.failure{border:1px solid #ddd;border-radius:6px;padding:0.8em;margin:1em 0}
.failure figure{display:inline-block;margin:0.3em;vertical-align:top} .failure img{max-height:320px;border:1px solid #ccc}
figcaption{font-size:12px;color:#555} code{background:#f4f4f4;padding:1px 4px}
"""


def _md_cells(block: str) -> tuple[list[str], list[list[str]]]:
    """A Markdown table's header and rows (the separator line dropped)."""
    lines = [line.strip().strip("|").split("|") for line in block.splitlines() if line.startswith("|")]
    rows = [[c.strip().replace("**", "") for c in line] for line in lines]
    return rows[0], [r for r in rows[2:]]


def _html_table(header: Sequence[str], cells: Sequence[Sequence[str]]) -> str:
    out = ["<table><thead><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr></thead><tbody>"]
    for line in cells:
        tds = "".join(
            f'<td class="num">{html.escape(c)}</td>' if _is_number(c) else f"<td>{html.escape(c)}</td>" for c in line
        )
        out.append(f"<tr>{tds}</tr>")
    out.append("</tbody></table>")
    return "\n".join(out)


def comparability_warnings(runs: Sequence[Run]) -> list[str]:
    """One line per setting in which a run differs from the first one compared (package versions, the OCR
    engine's settings, a strategy's configuration, the brain's settings; see
    :func:`docintent.evaluation.runner.reproducibility`)."""
    if len(runs) < 2:
        return []
    first = runs[0]
    out = []
    for other in runs[1:]:
        if not first.manifest.get("reproducibility") or not other.manifest.get("reproducibility"):
            missing = first.label if not first.manifest.get("reproducibility") else other.label
            out.append(f"{missing} records no reproducibility settings (a run made before they were recorded)")
            continue
        out += [
            f"{first.label} vs {other.label}: {d}" for d in reproducibility_differences(first.manifest, other.manifest)
        ]
    return out


def _run_facts(run: Run) -> str:
    m = run.manifest
    config = m.get("config") or {}
    git = m.get("git") or {}
    parts = [f"{len(run.rows)} rows", f"brain {m.get('brain', '?')}"]
    if config.get("dataset"):
        parts.append(f"dataset {config['dataset']}")
    if m.get("prompt_version"):
        parts.append(f"prompt {m['prompt_version']}")
    if git.get("commit"):
        parts.append(f"commit {git['commit'][:10]}{' (dirty)' if git.get('dirty') else ''}")
    if "seed" in m:
        parts.append(f"seed {m['seed']}")
    if m.get("started"):
        parts.append(f"{m['started']} → {m.get('finished') or 'unfinished'}")
    return f"{run.label}: " + ", ".join(parts)


def write_report(runs: Sequence[Run], out_dir: str | os.PathLike, *, failures: int = MAX_FAILURES) -> dict[str, Path]:
    """Write ``report.md``, ``report.html``, ``report.json`` and the plots into ``out_dir``.

    Returns the written paths by kind ("markdown", "html", "json", "plot_families", "plot_degradations").
    """
    if not runs:
        raise DatasetError("no run to report on")
    runs = list(runs)
    _unique_labels(runs)
    empty = [r.label for r in runs if not r.rows]
    if empty:
        raise DatasetError(f"run(s) without any result row: {', '.join(empty)}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    pairs = [(r.label, r.rows) for r in runs]
    rows = strategy_rows(pairs)
    table1, table2 = split_tables(rows)
    degradations = degradation_table(pairs)

    paths = {"plot_families": out / "score_by_family.png", "plot_degradations": out / "score_by_degradation.png"}
    plot_families(rows, paths["plot_families"])
    plot_degradations(degradations, paths["plot_degradations"])

    picked = []
    for i, (run, row, solved) in enumerate(pick_failures(runs, failures)):
        picked.append(Failure(run.label, row, failure_images(run, row, out, i), solved))

    facts = [_run_facts(r) for r in runs]
    md = ["# Benchmark report", ""] + [f"- {f}" for f in facts] + [""]
    warnings = comparability_warnings(runs)
    if warnings:
        md += (
            [
                "**Warning: these runs differ in settings that can change results**, so their rows are not "
                "comparable as they stand:",
                "",
            ]
            + [f"- {w}" for w in warnings]
            + [""]
        )
    md += ["## Table 1: strategies", "", table_markdown(table1), ""]
    if table2:
        md += ["## Table 2: ablations", "", table_markdown(table2), ""]
    md += [
        "Scores and consistencies in percent (WildDoc rules; TableVQA macro-averaged over its sub-splits); "
        "Avg. Tools = tools run per sample; failed rows count as wrong.",
        "",
    ]
    md += ["## Score by recorded degradation", "", markdown_table(*degradations.cells()), ""]
    harm = {r.label: harm_markdown(r.rows) for r in runs}
    for label, text in harm.items():
        if text:
            md += [
                f"## Harm: docintent minus none ({label})",
                "",
                "Per document kind and capture condition with at least 8 paired samples; the interval is a "
                "paired bootstrap's 95 %; **loss** marks an interval wholly below zero.",
                "",
                text,
                "",
            ]
    md += [
        f"![score by family]({paths['plot_families'].name})",
        "",
        f"![score by degradation]({paths['plot_degradations'].name})",
        "",
    ]
    if picked:
        md += ["## Failures", ""]
        for f in picked:
            s = f.row["sample"]
            md += [
                f"### {s['id']} — {f.row['strategy']} ({f.run})",
                "",
                f"- question: {s['question']}",
                f"- gold: {' | '.join(s['answers'])}",
                f"- answer: {f.row.get('answer')!r} (score {float(f.row.get('score') or 0):.2f})",
            ]
            if s.get("degradations"):
                md.append(f"- degradations: {', '.join(s['degradations'])}")
            if f.row.get("error"):
                md.append(f"- error: `{f.row['error']}`")
            if f.solved_by:
                md.append(f"- answered correctly by: {', '.join(f.solved_by)}")
            md += [""] + [f"![{cap}]({path})" for cap, path in f.images] + [""]
    paths["markdown"] = out / "report.md"
    atomic_write_text(paths["markdown"], redact("\n".join(md)))

    h = [
        "<!doctype html><html><head><meta charset='utf-8'><title>docintent benchmark report</title>",
        f"<style>{_CSS}</style></head><body><h1>Benchmark report</h1>",
    ]
    h += [f"<p class='meta'>{html.escape(f)}</p>" for f in facts]
    h += ["<h2>Table 1: strategies</h2>", _html_table(*strategy_table(table1))]
    if table2:
        h += ["<h2>Table 2: ablations</h2>", _html_table(*strategy_table(table2))]
    h += [
        "<p class='meta'>Scores and consistencies in percent (WildDoc rules; TableVQA macro-averaged over its "
        "sub-splits); Avg. Tools = tools run per sample; failed rows count as wrong.</p>"
    ]
    h += ["<h2>Score by recorded degradation</h2>", _html_table(*degradations.cells())]
    for label, text in harm.items():
        if text:
            h += [
                f"<h2>Harm: docintent minus none ({html.escape(label)})</h2>",
                "<p class='meta'>Per document kind and capture condition with at least 8 paired samples; the "
                "interval is a paired bootstrap's 95 %.</p>",
            ]
            h += [_html_table(*_md_cells(block)) for block in text.split("\n\n") if block.startswith("|")]
    h += [
        f"<p><img class='plot' src='{paths['plot_families'].name}' alt='score by family'></p>",
        f"<p><img class='plot' src='{paths['plot_degradations'].name}' alt='score by degradation'></p>",
    ]
    if picked:
        h.append("<h2>Failures</h2>")
        for f in picked:
            s = f.row["sample"]
            h.append("<div class='failure'>")
            h.append(f"<h3>{html.escape(s['id'])} — {html.escape(f.row['strategy'])} ({html.escape(f.run)})</h3><ul>")
            h.append(f"<li>question: {html.escape(s['question'])}</li>")
            h.append(f"<li>gold: {html.escape(' | '.join(s['answers']))}</li>")
            h.append(
                f"<li>answer: <code>{html.escape(str(f.row.get('answer')))}</code> "
                f"(score {float(f.row.get('score') or 0):.2f})</li>"
            )
            if s.get("degradations"):
                h.append(f"<li>degradations: {html.escape(', '.join(s['degradations']))}</li>")
            if f.row.get("error"):
                h.append(f"<li>error: <code>{html.escape(f.row['error'])}</code></li>")
            if f.solved_by:
                h.append(f"<li>answered correctly by: {html.escape(', '.join(f.solved_by))}</li>")
            h.append("</ul>")
            for cap, path in f.images:
                h.append(
                    f"<figure><img src='{html.escape(path)}' alt='{html.escape(cap)}'>"
                    f"<figcaption>{html.escape(cap)}</figcaption></figure>"
                )
            h.append("</div>")
    h.append("</body></html>")
    paths["html"] = out / "report.html"
    atomic_write_text(paths["html"], redact("\n".join(h)))

    data = {
        "runs": [{"label": r.label, "path": str(r.path), "manifest": r.manifest} for r in runs],
        "table1": [r.to_dict() for r in table1],
        "table2": [r.to_dict() for r in table2],
        "degradations": {
            "columns": degradations.columns,
            "samples": degradations.samples,
            "scores": degradations.scores,
        },
        "harm": {
            r.label: {
                "groups": [c.to_dict() for c in harm_table(r.rows, min_samples=8)],
                "harmed": [vars(h) | {"kept": list(h.kept)} for h in harmed_samples(r.rows)],
            }
            for r in runs
        },
        "failures": [
            {
                "run": f.run,
                "sample": f.row["sample"]["id"],
                "strategy": f.row["strategy"],
                "images": [p for _, p in f.images],
            }
            for f in picked
        ],
    }
    paths["json"] = out / "report.json"
    atomic_write_text(paths["json"], redact(json.dumps(data, indent=2) + "\n"))
    return paths


__all__ = [
    "ABLATIONS",
    "DegradationTable",
    "Run",
    "StrategyRow",
    "degradation_table",
    "load_run",
    "markdown_table",
    "pick_failures",
    "split_tables",
    "strategy_rows",
    "strategy_table",
    "table_markdown",
    "write_report",
]
