"""Benchmark two strategies on a tiny generated set, resume the run, and score it.

``docintent.synth.generate`` draws one document per family (a form, a chart, a table), each photographed four
times with recorded damage; one capture of each is answered with ``none`` and ``docintent`` by the offline
reader. Running the benchmark a second time finds every row done and runs nothing: runs resume. The table is
the one ``docintent bench`` and ``docintent score`` print. Run: python examples/bench_tiny.py [--out DIR]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from docintent.evaluation.datasets import load_dataset
from docintent.evaluation.report import strategy_rows, table_markdown
from docintent.evaluation.runner import BrainFactory, read_results, run_benchmark
from docintent.synth import generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None, help="folder for the set and the run (default: temporary)")
    folder = parser.parse_args().out or Path(tempfile.mkdtemp(prefix="docintent-bench-"))
    generate(folder / "set", n=1, seed=11)
    samples = load_dataset(f"synth:{folder / 'set'}")[::4]  # the first capture of each family's question
    strategies = ["none", "docintent"]
    first = run_benchmark(samples, strategies, BrainFactory("offline"), folder / "run", progress=False)
    again = run_benchmark(samples, strategies, BrainFactory("offline"), folder / "run", progress=False)
    print(
        f"first run: {first.new_rows} rows in {first.seconds:.1f} s; second run: {again.new_rows} new, "
        f"{again.skipped} already done"
    )
    print(table_markdown(strategy_rows([("tiny", read_results(folder / "run"))])))
    print(f"rows: {folder / 'run' / 'results.jsonl'}  (docintent score {folder / 'run'}; docintent report ...)")
    assert first.new_rows == len(samples) * len(strategies) and again.new_rows == 0 and first.failed == 0


if __name__ == "__main__":
    main()
