"""``docintent ask IMAGE "QUESTION"``: answer one question and show the steps."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ._common import add_profile_argument, non_negative_int, page_arg


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="answer a question about a document image")
    p.add_argument("image", help="image or PDF file (first page unless --page)")
    p.add_argument("question")
    p.add_argument("--task", choices=["doc", "chart", "table"], default="doc", help="answer format family")
    p.add_argument("--strategy", default="docintent", help="docintent, none, pipeline-fixed, judge-fixed, ... (default docintent)")
    p.add_argument("--brain", default=None, help="offline (default), openai, ...")
    p.add_argument("--brain-opt", action="append", metavar="KEY=VALUE", help="brain option, e.g. base_url=http://localhost:8000/v1")
    add_profile_argument(p)
    p.add_argument("--page", type=page_arg, default=0, help="PDF page (0-based)")
    p.add_argument("--max-rounds", type=non_negative_int, default=None, help="at most this many restoration rounds (T, default 10)")
    p.add_argument("--strategy-opt", action="append", metavar="KEY=VALUE",
                   help="strategy option, e.g. np=2, ne=2, nc=1 or roles=plan,execute for mact strategies")
    p.add_argument("--trace", metavar="FILE", help="write the result and its trace as JSON")
    p.add_argument("--save-steps", metavar="DIR", help="save every page state as PNG, named by step")
    p.add_argument("--json", action="store_true", help="print the result as JSON instead of text")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..api import ask
    from ..brains import get_brain
    from ..io import load_page, save_page
    from ._common import (
        brain_choice,
        check_output_file,
        check_output_folder,
        format_trace,
        parse_options,
        write_text_atomic,
    )

    if args.trace:
        check_output_file(args.trace)
    if args.save_steps:
        check_output_folder(args.save_steps)
    choice = brain_choice(args)
    page = load_page(args.image, page=args.page)
    brain = get_brain(choice.kind, **choice.options)
    options = parse_options(args.strategy_opt)
    if args.max_rounds is not None:
        options["max_rounds"] = args.max_rounds
    try:
        result = ask(page, args.question, task=args.task, strategy=args.strategy, brain=brain, **options)
    finally:
        brain.close()
    data = result.to_dict()
    if args.trace:
        write_text_atomic(args.trace, json.dumps(data, indent=2))
    if args.save_steps:
        out = Path(args.save_steps)
        out.mkdir(parents=True, exist_ok=True)
        order = [page.hash] + [s.after for s in result.trace if s.after]
        for i, h in enumerate(dict.fromkeys(order)):
            if h in result.pages:
                save_page(result.pages[h], out / f"{i:02d}_{h}.png")
    if args.json:
        print(json.dumps(data, indent=2))
        if result.error:  # the JSON carries it too, but an error is always named on standard error
            print(f"docintent ask: error: {result.error}", file=sys.stderr)
            return 1
        return 0
    print(f"answer: {result.answer}")
    print(f"confidence: {result.confidence:.2f}   strategy: {result.strategy}   seconds: {result.seconds:.2f}")
    if result.tools_kept or result.tools_rolled_back:
        print(f"kept: {', '.join(result.tools_kept) or '-'}   rolled back: {', '.join(result.tools_rolled_back) or '-'}")
    if result.prompt_tokens or result.completion_tokens:
        print(f"tokens: {result.prompt_tokens} prompt + {result.completion_tokens} completion")
    print("steps:")
    print(format_trace(result))
    if result.error:
        print(f"docintent ask: error: {result.error}", file=sys.stderr)
        return 1
    return 0
