"""``docintent score``: re-score a finished run (or a WildDoc predictions file) with the WildDoc rules."""

from __future__ import annotations

import argparse
from pathlib import Path

#: Shown under ``docintent score --help``.
EXAMPLES = ("docintent score runs/s1",)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "score",
        help="re-score a run without re-running it: WildDoc score and consistency per strategy",
        description=(
            "Score RUN (a run directory with results.jsonl, a results.jsonl file, or a WildDoc predictions "
            "file .jsonl[.gz] with index/question/answer/prediction) with the WildDoc leaderboard rules and "
            "print one table per strategy."
        ),
    )
    p.add_argument("run", metavar="RUN", help="run directory, results.jsonl, or predictions .jsonl[.gz]")
    p.add_argument("--out", metavar="FILE", help="also write the tables (or the JSON with --json) to FILE")
    p.add_argument("--json", action="store_true", help="print JSON instead of Markdown tables")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..evaluation.scoring import score_path, scores_json, scores_markdown
    from ._common import check_output_file, write_text_atomic

    if args.out:
        check_output_file(args.out)
    scores = score_path(args.run)
    text = scores_json(scores) if args.json else scores_markdown(scores)
    print(text, end="")
    if args.out:
        Path(args.out).parent.mkdir(parents=True, exist_ok=True)
        write_text_atomic(args.out, text)
    return 0
