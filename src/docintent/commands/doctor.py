"""``docintent doctor``: check an OpenAI-compatible endpoint and print how to fix what fails."""

from __future__ import annotations

import argparse


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="check a model endpoint with the requests ask will send: images, tool calls, Phase A and B, prompt length",
        description="Check that an OpenAI-compatible endpoint can drive docintent: it sends the Phase A and Phase B "
        "requests ask will send (same max_side, max_tokens and options) and prints one fix for each problem.",
    )
    p.add_argument("--base-url", help="endpoint URL ending in /v1 (default DOCINTENT_BASE_URL or OPENAI_BASE_URL)")
    p.add_argument("--model", help="model name (default DOCINTENT_MODEL, else the only model the server lists)")
    p.add_argument("--api-key", help="API key (default DOCINTENT_API_KEY or OPENAI_API_KEY; local servers need none)")
    p.add_argument("--max-side", type=int, default=None,
                   help="longest image side, as ask will send it (default DOCINTENT_MAX_SIDE, 2048)")
    p.add_argument("--max-tokens", type=int, default=4096, help="output-token budget per call, as ask uses it (default 4096)")
    p.add_argument("--timeout", type=float, default=60.0, help="seconds to wait for each reply (default 60)")
    p.add_argument("--brain-opt", action="append", default=[], metavar="KEY=VALUE",
                   help="another option of the openai brain, as given to ask (e.g. native_tools=false, review=page)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..doctor import format_checks, healthy, run_checks
    from ..settings import get_settings
    from ._common import parse_options

    options = parse_options(args.brain_opt)
    settings = get_settings()
    checks = run_checks(args.base_url, args.model or settings.model, args.api_key,
                        max_side=args.max_side or settings.max_side, max_tokens=args.max_tokens,
                        timeout=args.timeout, options=options)
    print(format_checks(checks))
    return 0 if healthy(checks) else 1
