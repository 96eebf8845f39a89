"""``docintent bench``: run strategies with a brain over a dataset into a resumable JSONL run."""

from __future__ import annotations

import argparse
import sys

from ._common import (
    BRAIN_KINDS,
    DATASET_KINDS,
    STRATEGY_NAMES,
    add_endpoint_arguments,
    add_profile_argument,
    brain_choice,
    brain_kind,
    check_output_folder,
    kind_list,
    list_kinds,
    non_negative_int,
    positive_int,
)
from ._scale import add_executor_arguments, executor_from_args

#: Shown under ``docintent bench --help``.
EXAMPLES = ("docintent bench --dataset synth:benchmarks/out/synth-s1-n60 --strategies none,docintent --out runs/s1",)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bench",
        help="run strategies over a dataset (one JSONL row per sample and strategy; resumable)",
        description="Run strategies with a brain over a dataset. Rows already in OUT/results.jsonl are "
        "skipped, so running the same command again resumes an interrupted run.",
    )
    list_kinds(
        p.add_argument(
            "--dataset",
            required=True,
            metavar="KIND:PATH",
            help="the dataset, as KIND:PATH with KIND one of %(kinds)s (synth:DIR, wilddoc:PATH, jsonl:PATH, ...)",
        ),
        kinds=DATASET_KINDS,
    )
    list_kinds(
        p.add_argument(
            "--strategies",
            type=kind_list(STRATEGY_NAMES, "strategy"),
            default="none",
            metavar="A,B",
            help="comma-separated strategy names of %(kinds)s (default: none)",
        ),
        kinds=STRATEGY_NAMES,
    )
    list_kinds(
        p.add_argument(
            "--brain", type=brain_kind, default=None, metavar="KIND", help="brain: %(kinds)s (default: offline)"
        ),
        kinds=BRAIN_KINDS,
    )
    p.add_argument(
        "--brain-opt",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="brain option (repeatable); values are read as JSON when they parse",
    )
    p.add_argument(
        "--strategy-opt",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="strategy option for every listed strategy (repeatable), e.g. np=2 for mact; the rows "
        "are named after their options, e.g. mact[np=2]",
    )
    p.add_argument("--limit", type=non_negative_int, metavar="N", help="only the first N samples of the dataset")
    p.add_argument("--shard", metavar="I/N", help="only shard I (0-based) of N; shards partition the samples")
    p.add_argument(
        "--workers",
        type=positive_int,
        default=None,
        metavar="K",
        help="worker processes (default: 1), or Ray actors with --executor ray (default: one per CPU)",
    )
    p.add_argument("--retry-failed", action="store_true", help="run rows that ended with an error again")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--seed", type=int, default=0, help="seed of random orders and sampling (default: 0)")
    p.add_argument(
        "--save-steps", action="store_true", help="save every page state of every row under OUT/steps (for reports)"
    )
    p.add_argument(
        "--allow-outside-paths",
        action="store_true",
        help="let dataset rows name images outside the dataset's folder (refused by default)",
    )
    p.add_argument("--out", required=True, metavar="DIR", help="run directory, e.g. runs/NAME")
    add_executor_arguments(p, workers=False, model_calls=True)
    add_profile_argument(p)
    add_endpoint_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..evaluation.datasets import load_dataset
    from ..evaluation.runner import (
        BrainFactory,
        parse_options,
        parse_shard,
        read_results,
        run_benchmark,
        select_shard,
    )

    if args.shard:
        parse_shard(args.shard)  # a malformed shard stops the command before the dataset is read
    check_output_folder(args.out)
    choice = brain_choice(args)  # a bad profile stops the command before the dataset is read
    samples = load_dataset(args.dataset, allow_outside_paths=args.allow_outside_paths)
    total = len(samples)
    if args.limit is not None:
        samples = samples[: args.limit]
    if args.shard:
        index, count = parse_shard(args.shard)
        samples = select_shard(samples, index, count)
    strategies: list = [s.strip() for s in args.strategies.split(",") if s.strip()]
    strategy_options = parse_options(args.strategy_opt)
    if strategy_options:
        from ..strategies import configured_strategy

        strategies = [configured_strategy(name, **strategy_options) for name in strategies]
    factory = BrainFactory(choice.kind, choice.options)
    try:
        summary = run_benchmark(
            samples,
            strategies,
            factory,
            args.out,
            workers=args.workers or 1,
            executor=executor_from_args(args),
            retry_failed=args.retry_failed,
            progress=False if args.no_progress else None,
            seed=args.seed,
            save_steps=args.save_steps,
            config={
                "dataset": args.dataset,
                "dataset_samples": total,
                "limit": args.limit,
                "shard": args.shard,
                "samples": len(samples),
            },
        )
    except KeyboardInterrupt:
        print(
            f"docintent bench: interrupted; the rows finished so far are saved in {args.out}; "
            "run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    print(
        f"{summary.results_path}: {summary.rows} rows ({summary.new_rows} new, {summary.skipped} already done, "
        f"{summary.retried} retried, {f'{summary.changed} changed in the dataset, ' if summary.changed else ''}"
        f"{summary.failed} with errors) in {summary.seconds:.1f} s "
        f"({summary.samples_per_second:.2f} rows/s, {summary.workers} worker(s))"
    )
    rows = read_results(summary.out_dir)
    names = {s if isinstance(s, str) else s.name for s in strategies}
    rows = [r for r in rows if r["strategy"] in names and r["sample"]["id"] in {s.id for s in samples}]
    if rows:
        from ..evaluation.report import strategy_rows, table_markdown

        print(table_markdown(strategy_rows([(summary.out_dir.name, rows)])))
    if summary.failed:
        print(
            f"{summary.failed} row(s) have errors; see 'error' in {summary.results_path} "
            "(rerun with --retry-failed to try them again)",
            file=sys.stderr,
        )
    return 0
