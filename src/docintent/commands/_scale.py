"""Command-line options of the executors (``--executor local|ray``, concurrency, rate limits), shared by
``docintent bench`` and ``docintent index``."""

from __future__ import annotations

import argparse
from typing import Any

from ._common import int_range, positive_float, positive_int


def add_executor_arguments(p: argparse.ArgumentParser, *, workers: bool, model_calls: bool) -> None:
    """Add the executor options to ``p``; ``workers``: also add ``--workers`` (when the command has none);
    ``model_calls``: also add concurrency and rate limits (commands whose brain may call a model server)."""
    group = p.add_argument_group("where the work runs")
    group.add_argument(
        "--executor",
        choices=["local", "ray"],
        default="local",
        help="local: this machine (--workers processes); ray: a Ray cluster (default: local)",
    )
    if workers:
        group.add_argument(
            "--workers",
            type=positive_int,
            default=None,
            metavar="K",
            help="worker processes (local, default 1) or Ray actors (default: one per CPU)",
        )
    group.add_argument(
        "--ray-address",
        metavar="ADDR",
        help="Ray cluster to join, e.g. ray://head:10001 or auto (default: start a local Ray on this machine's cores)",
    )
    group.add_argument(
        "--cpus-per-task",
        type=positive_float(1024.0),
        default=1.0,
        metavar="N",
        help="Ray: CPUs each worker reserves, and its inference threads (default 1)",
    )
    group.add_argument("--memory-per-task", metavar="SIZE", help="Ray: memory each worker reserves, e.g. 2G")
    if model_calls:
        group.add_argument(
            "--concurrency",
            type=int_range(1, 1024),
            default=1,
            metavar="N",
            help="samples in flight in each worker (for model brains that wait on a server; default 1)",
        )
        group.add_argument(
            "--max-rpm",
            type=positive_float(),
            metavar="N",
            help="model requests per minute, shared by every worker of the run",
        )
        group.add_argument(
            "--max-tpm",
            type=positive_float(),
            metavar="N",
            help="model tokens per minute (prompt + completion), shared by every worker",
        )


def executor_from_args(args: argparse.Namespace) -> Any:
    """The executor the parsed options describe."""
    from ..evaluation.executors import make_executor

    return make_executor(
        args.executor,
        workers=args.workers,
        concurrency=getattr(args, "concurrency", 1),
        ray_address=args.ray_address,
        cpus_per_task=args.cpus_per_task,
        memory_per_task=args.memory_per_task,
        requests_per_minute=getattr(args, "max_rpm", None),
        tokens_per_minute=getattr(args, "max_tpm", None),
    )
