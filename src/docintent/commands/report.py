"""``docintent report``: Markdown and HTML report of one or more benchmark runs."""

from __future__ import annotations

import argparse
import sys

from ._common import non_negative_int

#: Shown under ``docintent report --help``.
EXAMPLES = ("docintent report runs/s1 --out report/",)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "report",
        help="tables, plots and failures of benchmark runs as Markdown and HTML",
        description="Summarise runs made by 'docintent bench': score and consistency per subtask, Avg. Tools, "
        "time and tokens per sample, a breakdown by recorded degradation, plots and a few failures.",
    )
    p.add_argument("runs", nargs="+", metavar="RUN", help="run directories (each holds results.jsonl)")
    p.add_argument("--out", required=True, metavar="DIR", help="where report.md, report.html and plots go")
    p.add_argument("--failures", type=non_negative_int, default=6, metavar="N", help="failures to show (default: 6)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..evaluation.report import (
        comparability_warnings,
        load_run,
        split_tables,
        strategy_rows,
        table_markdown,
        write_report,
    )
    from ._common import check_output_folder

    check_output_folder(args.out)  # before the runs are read
    runs = [load_run(path) for path in args.runs]
    for warning in comparability_warnings(runs):
        print(f"docintent report: warning: {warning}", file=sys.stderr)
    paths = write_report(runs, args.out, failures=args.failures)
    table1, table2 = split_tables(strategy_rows([(r.label, r.rows) for r in runs]))
    print(table_markdown(table1))
    if table2:
        print()
        print(table_markdown(table2))
    print(f"\nwrote {paths['markdown']} and {paths['html']}")
    return 0
