"""The README's Quick start, measured on a fresh virtual environment: what a new user waits for, and what they see.

Makes a new venv, then runs the README's two commands as they stand, each step timed on its own:

======================= ===============================================================================
``venv``                ``python -m venv VENV``
``install``             ``pip install --no-cache-dir -e .`` (the venv's size after it)
``demo_cold``           ``docintent demo`` with a new, empty cache folder (the models load, every page is read)
``demo_warm``           ``docintent demo`` again with the same cache folder (the reads come from the cache)
``install_test``        ``pip install --no-cache-dir -e '.[test]'`` (the venv's size after it)
``tests``               ``python -m pytest`` (run once: its passed / skipped / failed / deselected counts)
======================= ===============================================================================

Each step records its wall seconds and the machine's load average before, during (sampled every 5 s) and after.
The demo's summary table is kept as printed, cold and warm, so its work columns can be compared. The result,
with the date, the commit (and whether the work tree had changes) and the machine, is printed and written to
``benchmarks/results/quickstart.json``; each step's whole output is kept in ``benchmarks/out/quickstart/`` (a
failed test's traceback among it).

    python benchmarks/quickstart.py                      # everything (the test suite takes 8-17 min here)
    python benchmarks/quickstart.py --no-tests           # the install and the demo only
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results"
LOGS = ROOT / "benchmarks" / "out" / "quickstart"
#: pytest's last line: "820 passed, 22 skipped, 3 deselected in 346.12s (0:05:46)".
_COUNTS = re.compile(r"(\d+) (passed|failed|skipped|deselected|errors?|xfailed|xpassed|warnings?)")


class LoadSampler:
    """The 1-minute load average every ``every`` seconds while a step runs."""

    def __init__(self, every: float = 5.0) -> None:
        self.every = every
        self.samples: list[float] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            self.samples.append(os.getloadavg()[0])

    def __enter__(self) -> LoadSampler:
        self.samples.append(os.getloadavg()[0])
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.samples.append(os.getloadavg()[0])

    def summary(self) -> dict[str, float]:
        return {
            "before": round(self.samples[0], 2),
            "min": round(min(self.samples), 2),
            "max": round(max(self.samples), 2),
            "after": round(self.samples[-1], 2),
        }


def step(name: str, command: list[str], *, env: dict[str, str], cwd: Path, log: Path, timeout: float) -> dict:
    """Run one step, its output to ``log``; its seconds, exit status, load and output's last lines."""
    print(f"quickstart: {name}: {' '.join(command)}", file=sys.stderr, flush=True)
    started = time.perf_counter()
    with LoadSampler() as load, open(log, "w", encoding="utf-8") as out:
        try:
            done = subprocess.run(command, cwd=cwd, env=env, stdout=out, stderr=subprocess.STDOUT, timeout=timeout)
            status = done.returncode
        except subprocess.TimeoutExpired:
            status = "timeout"
    seconds = time.perf_counter() - started
    text = log.read_text(encoding="utf-8", errors="replace")
    print(f"quickstart: {name}: {seconds:.1f} s, exit {status}", file=sys.stderr, flush=True)
    return {
        "command": " ".join(command),
        "seconds": round(seconds, 1),
        "exit": status,
        "load": load.summary(),
        "output_tail": text.splitlines()[-3:],
    }


def folder_mb(path: Path) -> float:
    total = sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())
    return round(total / 1e6, 1)


def demo_table(text: str) -> list[str]:
    """The summary table's lines as the demo printed them."""
    return [line for line in text.splitlines() if line.startswith("| ")]


def pytest_counts(text: str) -> dict[str, int]:
    """The counts of pytest's last summary line."""
    line = next((line for line in reversed(text.splitlines()) if " in " in line and _COUNTS.search(line)), "")
    return {
        kind.rstrip("s") if kind.startswith(("error", "warning")) else kind: int(n) for n, kind in _COUNTS.findall(line)
    }


def git(*args: str) -> str:
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
    return done.stdout.strip()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--venv",
        type=Path,
        default=Path(tempfile.gettempdir()) / "qs-venv",
        help="where the fresh venv is made (removed first; default /tmp/qs-venv)",
    )
    parser.add_argument("--python", default=sys.executable, help="the Python that makes the venv")
    parser.add_argument("--no-tests", action="store_true", help="skip the test extra and the test suite")
    parser.add_argument("--out", type=Path, default=RESULTS / "quickstart.json", help="where the JSON goes")
    args = parser.parse_args()

    venv = args.venv
    if venv.exists():
        shutil.rmtree(venv)
    scratch = Path(tempfile.mkdtemp(prefix="docintent-quickstart-"))
    cache = scratch / "cache"
    bin_dir = venv / "bin"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCINTENT_", "PYTHON", "VIRTUAL_ENV", "CI"))}
    env.update(
        PATH=f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        VIRTUAL_ENV=str(venv),
        DOCINTENT_CACHE_DIR=str(cache),
        TMPDIR=str(scratch),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
    )
    pip = [str(bin_dir / "python"), "-m", "pip", "install", "--no-cache-dir", "-q"]
    record: dict = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "commit": git("rev-parse", "--short", "HEAD"),
        "work_tree_changed": bool(git("status", "--porcelain", "--untracked-files=no")),
        "machine": {"cpus": os.cpu_count(), "python": platform.python_version(), "system": platform.platform()},
        "steps": {},
    }
    steps = record["steps"]
    logs = LOGS
    shutil.rmtree(logs, ignore_errors=True)
    logs.mkdir(parents=True)
    try:
        steps["venv"] = step(
            "venv", [args.python, "-m", "venv", str(venv)], env=env, cwd=ROOT, log=logs / "venv.log", timeout=600
        )
        steps["install"] = step("install", [*pip, "-e", "."], env=env, cwd=ROOT, log=logs / "install.log", timeout=3600)
        steps["install"]["venv_mb"] = folder_mb(venv)
        for name in ("demo_cold", "demo_warm"):  # the same cache folder: the second run finds the first's reads
            steps[name] = step(
                name, [str(bin_dir / "docintent"), "demo"], env=env, cwd=ROOT, log=logs / f"{name}.log", timeout=3600
            )
            steps[name]["table"] = demo_table((logs / f"{name}.log").read_text(encoding="utf-8", errors="replace"))
        if not args.no_tests:
            steps["install_test"] = step(
                "install_test", [*pip, "-e", ".[test]"], env=env, cwd=ROOT, log=logs / "install_test.log", timeout=3600
            )
            steps["install_test"]["venv_mb"] = folder_mb(venv)
            steps["tests"] = step(
                "tests",
                [str(bin_dir / "python"), "-m", "pytest"],
                env=env,
                cwd=ROOT,
                log=logs / "tests.log",
                timeout=7200,
            )
            text = (logs / "tests.log").read_text(encoding="utf-8", errors="replace")
            steps["tests"]["counts"] = pytest_counts(text)
            steps["tests"]["failed_tests"] = [
                line.split(" ", 1)[1] for line in text.splitlines() if line.startswith(("FAILED ", "ERROR "))
            ][:20]
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(record, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(record, indent=2))
    print(f"quickstart: written to {args.out}; each step's output in {logs}", file=sys.stderr)
    return 0 if all(s["exit"] == 0 for s in steps.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
