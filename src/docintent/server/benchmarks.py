"""The runs browser: finished benchmark runs under one folder, with the figures ``docintent report`` writes.

Each run is reported by :func:`docintent.evaluation.report.write_report` itself (into the service's own
folder, redone when the run's results change), so the tables, plots and failures shown are those of
``docintent report``. Requests name a run only by a name from the listing and files only by their index.
"""

from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path
from typing import Any

from ..evaluation.report import (
    degradation_table,
    load_run,
    pick_failures,
    split_tables,
    strategy_rows,
    strategy_table,
    write_report,
)
from ..evaluation.runner import RESULTS_FILE
from ..io.confine import within

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$")


class BenchmarkRuns:
    """Lists run directories of ``root`` and reports on them."""

    def __init__(self, root: Path, cache_dir: Path) -> None:
        self.root = root
        self.cache_dir = cache_dir
        self._reports: dict[str, tuple[float, dict[str, Any]]] = {}
        self._lock = threading.Lock()

    def _directories(self) -> dict[str, Path]:
        """Run name -> directory: the root itself when it is a run, and its direct sub-folders that are runs.
        A sub-folder is taken by its real path, and only when that lies inside the root's: a link to a folder
        elsewhere is no run of this root. (Each run's own files are confined to it by ``load_run``.)"""
        found: dict[str, Path] = {}
        if os.path.lexists(self.root / RESULTS_FILE):
            found[self.root.name if _NAME.match(self.root.name) else "run"] = self.root
        if self.root.is_dir():
            for child in sorted(self.root.iterdir()):
                if not _NAME.match(child.name):
                    continue
                real = within(self.root, child.name)
                if real is not None and real.is_dir() and os.path.lexists(real / RESULTS_FILE):
                    found[child.name] = real
        return found

    def listing(self) -> list[dict[str, Any]]:
        """One entry per run: name, rows, strategies and brain (from the manifest when there is one)."""
        out: list[dict[str, Any]] = []
        for name, directory in self._directories().items():
            try:
                run = load_run(directory)
            except Exception as err:  # a broken run is listed with its problem rather than hiding the rest
                out.append({"name": name, "error": str(err)})
                continue
            strategies = list(dict.fromkeys(r["strategy"] for r in run.rows))
            out.append(
                {
                    "name": name,
                    "rows": len(run.rows),
                    "strategies": strategies,
                    "brain": run.manifest.get("brain"),
                    "started": run.manifest.get("started"),
                }
            )
        return out

    def report(self, name: str) -> dict[str, Any] | None:
        """The report of run ``name`` (None when no listed run has that name)."""
        directory = self._directories().get(name) if _NAME.match(name) else None
        if directory is None:
            return None
        try:
            stamp = (directory / RESULTS_FILE).stat().st_mtime
        except OSError:  # a dangling link: load_run names the problem
            stamp = -1.0
        with self._lock:
            cached = self._reports.get(name)
            if cached and cached[0] == stamp:
                return cached[1]
            report = self._build(name, directory)
            self._reports[name] = (stamp, report)
            return report

    def _build(self, name: str, directory: Path) -> dict[str, Any]:
        run = load_run(directory)
        out = self.cache_dir / name
        paths = write_report([run], out)
        written = json.loads(paths["json"].read_text(encoding="utf-8"))
        table1, table2 = split_tables(strategy_rows([(run.label, run.rows)]))
        files: list[Path] = []
        failures = []
        picked = pick_failures([run])
        for entry, (_, row, solved) in zip(written["failures"], picked):
            sample = row["sample"]
            images = []
            for caption, rel in zip(_captions(row, len(entry["images"])), entry["images"]):
                files.append(out / rel)
                images.append({"caption": caption, "url": f"/v1/benchmarks/{name}/files/{len(files) - 1}"})
            failures.append(
                {
                    "sample": sample["id"],
                    "strategy": row["strategy"],
                    "question": sample.get("question"),
                    "gold": sample.get("answers", []),
                    "answer": row.get("answer"),
                    "score": row.get("score"),
                    "degradations": sample.get("degradations") or [],
                    "error": row.get("error"),
                    "solved_by": solved,
                    "images": images,
                }
            )
        plots = {}
        for kind in ("plot_families", "plot_degradations"):
            files.append(paths[kind])
            plots[kind.removeprefix("plot_")] = f"/v1/benchmarks/{name}/files/{len(files) - 1}"
        header1, cells1 = strategy_table(table1)
        report: dict[str, Any] = {
            "name": name,
            "facts": _facts(run),
            "table1": {"header": header1, "cells": cells1},
            "table2": ({"header": strategy_table(table2)[0], "cells": strategy_table(table2)[1]} if table2 else None),
            "degradations": written["degradations"],
            "degradation_cells": dict(zip(("header", "cells"), degradation_table([(run.label, run.rows)]).cells())),
            "failures": failures,
            "plots": plots,
            "markdown": paths["markdown"].read_text(encoding="utf-8"),
            "_files": files,
        }
        return report

    def file(self, name: str, index: int) -> Path | None:
        """The ``index``-th file (plot or failure image) of run ``name``'s report."""
        report = self.report(name)
        if report is None or not 0 <= index < len(report["_files"]):
            return None
        return report["_files"][index]


def _captions(row: dict[str, Any], count: int) -> list[str]:
    """Captions of a failure's pictures, in the order the report writes them."""
    result = row.get("result") or {}
    trace = result.get("trace")
    steps = [s for s in trace if isinstance(s, dict)] if isinstance(trace, list) else []
    verdicts = {
        s["after"]: ("rolled back" if s.get("action") == "rollback" else "kept")
        for s in steps
        if s.get("phase") == "B" and isinstance(s.get("after"), str)
    }
    captions = ["input"] if result.get("input_page") or count else []
    for step in steps:
        if step.get("phase") == "tool" and step.get("action") == "applied" and step.get("after"):
            after = step["after"]
            captions.append(
                f"after {step.get('tool')} ({verdicts.get(after, 'kept') if isinstance(after, str) else 'kept'})"
            )
    return (captions + ["image"] * count)[:count]


def _facts(run: Any) -> dict[str, Any]:
    m = run.manifest or {}
    config = m.get("config") or {}
    return {
        "rows": len(run.rows),
        "brain": m.get("brain"),
        "dataset": config.get("dataset"),
        "seed": m.get("seed"),
        "started": m.get("started"),
        "finished": m.get("finished"),
        "commit": (m.get("git") or {}).get("commit"),
    }
