"""``docintent doctor``: check an OpenAI-compatible endpoint and print how to fix what fails."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="check a model endpoint: reachable, model listed, images, tool calls, context length",
        description="Check that an OpenAI-compatible endpoint can drive docintent, and print a fix for each problem.",
    )
    p.add_argument("--base-url", help="endpoint URL ending in /v1 (default DOCINTENT_BASE_URL or OPENAI_BASE_URL)")
    p.add_argument("--model", help="model name (default DOCINTENT_MODEL, else the only model the server lists)")
    p.add_argument("--api-key", help="API key (default DOCINTENT_API_KEY or OPENAI_API_KEY; local servers need none)")
    p.add_argument("--max-side", type=int, default=2048, help="longest image side to test the context with (default 2048)")
    p.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for each reply (default 120)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..doctor import format_checks, healthy, run_checks
    from ..settings import get_settings

    model = args.model or get_settings().model
    checks = run_checks(args.base_url, model, args.api_key, max_side=args.max_side, timeout=args.timeout)
    print(format_checks(checks))
    return 0 if healthy(checks) else 1
