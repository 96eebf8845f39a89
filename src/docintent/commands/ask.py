"""``docintent ask DOCUMENT "QUESTION"``: answer a question about a page or a whole document, and say where the
answer stands; ``docintent ask DIR_OR_GLOB --questions FILE --out answers.jsonl``: every question about every
document, as a resumable batch."""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from ..vocabulary import TASKS
from ._common import (
    BRAIN_KINDS,
    ENGINE_KINDS,
    READER_KINDS,
    STRATEGY_NAMES,
    add_endpoint_arguments,
    add_pages_argument,
    add_profile_argument,
    add_progress_argument,
    brain_kind,
    list_kinds,
    non_negative_int,
    positive_int,
    report_batch,
)
from ._scale import add_executor_arguments

#: Shown under ``docintent ask --help``.
EXAMPLES = (
    'docintent ask receipt.jpg "What is the total amount?"',
    "docintent ask scans/ --questions questions.txt --out answers.jsonl",
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ask",
        help="answer a question about a document image or PDF (or questions about a folder of them)",
        description="Answer QUESTION about DOCUMENT: an image, or a PDF whose pages are ranked by how well their "
        "text matches the question (text layer first, OCR where a page has none) and read best first until one "
        "answers. Prints the answer, the page (counted from 1) and box it stands at, the evidence lines and "
        "the steps. With a folder or glob and --questions FILE, answers every question about every document "
        "into --out FILE (one JSON row each; running the same command again resumes).",
    )
    p.add_argument("document", help="image or PDF file; for a batch, a folder (searched recursively) or a quoted glob")
    p.add_argument(
        "question", nargs="?", help="the question (for a batch: asked of every document, unless --questions)"
    )
    p.add_argument(
        "--questions",
        metavar="FILE",
        help='batch: a .txt file (one question per line) or .jsonl (rows with "question", optional "task" and "id")',
    )
    p.add_argument("--out", metavar="FILE", help="batch: the answers file to write or resume (JSONL)")
    p.add_argument("--retry-failed", action="store_true", help="batch: run rows that ended with an error again")
    # the task registry itself is the choices: read when parsing or printing help, so plug-in tasks are in both
    p.add_argument(
        "--task",
        choices=TASKS,
        default="doc",
        metavar="TASK",
        help="answer format family: %(choices)s (default %(default)s)",
    )
    p.add_argument(
        "--strategy",
        choices=STRATEGY_NAMES,
        default="docintent",
        metavar="NAME",
        help="strategy: %(choices)s (default %(default)s)",
    )
    list_kinds(
        p.add_argument(
            "--brain", type=brain_kind, default=None, metavar="KIND", help="brain: %(kinds)s (default offline)"
        ),
        kinds=BRAIN_KINDS,
    )
    list_kinds(
        p.add_argument(
            "--brain-opt",
            action="append",
            metavar="KEY=VALUE",
            help="brain option, e.g. base_url=http://localhost:8000/v1; the offline brain reads "
            "with engine=NAME (OCR engines: %(engines)s) and reader=NAME (readers: %(readers)s)",
        ),
        engines=ENGINE_KINDS,
        readers=READER_KINDS,
    )
    add_profile_argument(p)
    add_endpoint_arguments(p)
    add_pages_argument(p, "pages of a PDF to consider, counted from 1: 2, 1-3 or 1,4-6 (default: all)")
    p.add_argument(
        "--max-pages",
        type=positive_int,
        default=None,
        metavar="N",
        help="read at most N of the pages the locator ranks, best first, until one answers (default 3)",
    )
    p.add_argument(
        "--max-rounds", type=non_negative_int, default=None, help="at most this many restoration rounds (T, default 10)"
    )
    p.add_argument(
        "--strategy-opt",
        action="append",
        metavar="KEY=VALUE",
        help="strategy option, e.g. np=2, ne=2, nc=1 or roles=plan,execute for mact strategies",
    )
    p.add_argument("--trace", metavar="FILE", help="write the result and its trace as JSON")
    p.add_argument(
        "--save-steps",
        metavar="DIR",
        help="save every page state as PNG, named by step, and the page with the answer's box drawn",
    )
    p.add_argument("--json", action="store_true", help="print the result as JSON instead of text")
    add_progress_argument(p)
    p.add_argument(
        "-v",
        "--verbose",
        action="count",
        default=argparse.SUPPRESS,
        help="also print every step's figures, the page ranking and timings (as docintent -v ask)",
    )
    add_executor_arguments(p, workers=True, model_calls=True)
    p.set_defaults(func=run)


def _is_batch(args: argparse.Namespace) -> bool:
    target = args.document
    return bool(args.questions or args.out or Path(target).is_dir() or any(ch in target for ch in "*?["))


def run(args: argparse.Namespace) -> int:
    from ..errors import ConfigError
    from ._common import check_output_file, check_output_folder

    if _is_batch(args):
        return run_batch(args)
    for option, value in (
        ("--retry-failed", args.retry_failed),
        ("--workers", args.workers),
        ("--executor ray", args.executor == "ray"),
    ):
        if value:
            raise ConfigError(f"{option} is for a batch (a folder or glob with --questions FILE --out FILE)")
    if not args.question:
        raise ConfigError('give the question after the document, e.g. docintent ask invoice.jpg "What is the total?"')
    if args.trace:
        check_output_file(args.trace)
    if args.save_steps:
        check_output_folder(args.save_steps)
    return run_one(args)


def _strategy_options(args: argparse.Namespace) -> dict[str, Any]:
    from ._common import parse_options

    options = parse_options(args.strategy_opt)
    if args.max_rounds is not None:
        options["max_rounds"] = args.max_rounds
    return options


def run_one(args: argparse.Namespace) -> int:
    from ..api import MAX_PAGES, ask
    from ..brains import get_brain
    from ..evaluation.executors import Activity
    from ._common import brain_choice, format_trace, write_text_atomic

    choice = brain_choice(args)
    brain = get_brain(choice.kind, **choice.options)
    status = Activity(Path(args.document).name, show=False if args.no_progress else None)
    steps = 0

    def on_step(step, run) -> None:
        nonlocal steps
        steps += 1
        page = getattr(step, "page", None)
        status.say(f"step {steps}: {step.describe()}" if page is None else f"reading page {page}")

    try:
        result = ask(
            args.document,
            args.question,
            task=args.task,
            strategy=args.strategy,
            brain=brain,
            pages=args.pages,
            max_pages=args.max_pages or MAX_PAGES,
            on_step=on_step,
            on_locate=lambda done, total: status.say(f"looking for the pages to read: {done}/{total}"),
            **_strategy_options(args),
        )
    finally:
        status.close()
        brain.close()
    data = result.to_dict()
    if args.trace:
        write_text_atomic(args.trace, json.dumps(data, indent=2))
    if args.save_steps:
        _save_steps(result, Path(args.save_steps))
    if args.json:
        print(json.dumps(data, indent=2))
        if result.error:  # the JSON carries it too, but an error is always named on standard error
            print(f"docintent ask: error: {result.error}", file=sys.stderr)
            return 1
        return 0
    verbose = getattr(args, "verbose", 0) or 0
    print(f"answer: {result.answer}")
    print(f"confidence: {result.confidence:.2f}   strategy: {result.strategy}   seconds: {result.seconds:.2f}")
    for line in provenance_lines(result):
        print(line)
    if result.tools_kept or result.tools_rolled_back:
        print(
            f"kept: {', '.join(result.tools_kept) or '-'}   rolled back: {', '.join(result.tools_rolled_back) or '-'}"
        )
    if result.prompt_tokens or result.completion_tokens:
        print(f"tokens: {result.prompt_tokens} prompt + {result.completion_tokens} completion")
    if any(result.work.values()):
        print("work: " + ", ".join(f"{k.replace('_', ' ')} {v}" for k, v in result.work.items() if v))
    print("steps:")
    print(format_trace(result, verbose=bool(verbose)))
    if verbose:
        print(timings_line(result))
    if result.error:
        print(f"docintent ask: error: {result.error}", file=sys.stderr)
        return 1
    return 0


def provenance_lines(result) -> list[str]:
    """Where the answer came from, in lines for people: the page, the box, the evidence, what it was read on."""
    prov = result.provenance
    if not result.answer:
        return []
    lines = [f"page: {prov.page}"]
    if prov.box is not None:
        lines[0] += (
            "   box: "
            + ", ".join(f"{v:.3f}" for v in prov.box.as_tuple())
            + " (x0, y0, x1, y1 as fractions of the page)"
        )
    elif prov.read_box is not None:
        lines[0] += (
            "   box: on the restored page only, "
            + ", ".join(f"{v:.3f}" for v in prov.read_box.as_tuple())
            + " (a kept restoration moved the page in a way that cannot be undone)"
        )
    else:
        lines[0] += "   box: not placed (the reader could not say where on the page the answer stands)"
    if prov.lines:
        shown = [f"{text!r} (OCR confidence {conf:.2f})" for text, conf, _ in prov.lines[:4]]
        more = f" and {len(prov.lines) - 4} more" if len(prov.lines) > 4 else ""
        lines.append("evidence: " + "; ".join(shown) + more)
    lines.append(
        "read on: "
        + (
            f"the page after {', then '.join(prov.read_on)}"
            if prov.read_on
            else "the page as given (no restoration kept)"
        )
    )
    return lines


def timings_line(result) -> str:
    """Where the time went: locating the pages, then each page read (its steps' seconds)."""
    from ..trace import LocateStep

    parts: list[str] = []
    segments: list[list[Any]] = []  # [page, seconds, steps]
    for step in result.trace:
        if isinstance(step, LocateStep):
            if step.previous is None and step.seconds:
                parts.append(f"locating pages {step.seconds:.2f} s")
            segments.append([step.page, 0.0, 0])
            continue
        if not segments:
            segments.append([result.page, 0.0, 0])
        segments[-1][1] += step.seconds
        segments[-1][2] += 1
    parts += [f"page {page} {seconds:.2f} s ({count} steps)" for page, seconds, count in segments]
    parts.append(f"total {result.seconds:.2f} s")
    return "timings: " + "; ".join(parts)


def _save_steps(result, out: Path) -> None:
    """Every page state as PNG in step order, and the page as given with the answer's box drawn on it."""
    from ..io import mark_box, save_page

    out.mkdir(parents=True, exist_ok=True)
    order = dict.fromkeys(h for s in result.trace for h in (s.before, s.after) if h and h in result.pages)
    for i, h in enumerate(order):
        save_page(result.pages[h], out / f"{i:02d}_{h}.png")
    prov = result.provenance
    if prov.box is not None and prov.given_page in result.pages:
        save_page(mark_box(result.pages[prov.given_page], prov.box), out / f"answer_page{prov.page}.png")
    elif prov.read_box is not None and prov.read_page in result.pages:
        save_page(mark_box(result.pages[prov.read_page], prov.read_box), out / f"answer_page{prov.page}_restored.png")


def run_batch(args: argparse.Namespace) -> int:
    from ..api import MAX_PAGES
    from ..batch import Question, ask_batch, read_questions, walk_documents
    from ..errors import ConfigError, InputError
    from ..evaluation.runner import BrainFactory
    from ..vocabulary import check_question
    from ._common import brain_choice, check_output_file, not_read_lines
    from ._scale import executor_from_args

    for option, value in (("--trace", args.trace), ("--save-steps", args.save_steps), ("--json", args.json)):
        if value:
            raise ConfigError(f"{option} is for one question about one document; a batch writes every row to --out")
    if not args.out:
        raise ConfigError("a batch (a folder, a glob or --questions) needs --out FILE for its answers (JSONL)")
    if bool(args.questions) == bool(args.question):
        raise ConfigError(
            "give the questions either as --questions FILE or as one QUESTION, not both"
            if args.question
            else "give the questions: --questions FILE (.txt or .jsonl) or one QUESTION"
        )
    check_output_file(args.out)
    if args.questions and os.path.realpath(args.out) == os.path.realpath(args.questions):
        raise InputError(args.out, "is the questions file of this run; give --out another file name")
    questions = (
        read_questions(args.questions) if args.questions else [Question(check_question(args.question), args.task)]
    )
    walk = walk_documents(args.document)
    documents = walk.documents
    choice = brain_choice(args)
    return report_batch(
        "ask",
        lambda: ask_batch(
            documents,
            questions,
            BrainFactory(choice.kind, choice.options),
            args.out,
            strategy=args.strategy,
            options=_strategy_options(args),
            pages=args.pages,
            max_pages=args.max_pages or MAX_PAGES,
            executor=executor_from_args(args),
            progress=False if args.no_progress else None,
            retry_failed=args.retry_failed,
            not_read=walk.skipped,
        ),
        args.out,
        "rows finished",
        "row",
        lambda summary: (
            f"{summary.path}: {summary.rows} rows for {len(documents)} document(s) x {len(questions)} "
            f"question(s) ({summary.new_rows} new, {summary.skipped} already done, {summary.retried} retried, "
            + (f"{summary.changed} run again as their document changed, " if summary.changed else "")
            + f"{summary.failed} with errors) in {summary.seconds:.1f} s ({summary.rows_per_second:.2f} rows/s)"
            + not_read_lines(summary.not_read)
        ),
    )
