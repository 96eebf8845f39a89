"""``docintent doctor``: check an OpenAI-compatible endpoint and print how to fix what fails."""

from __future__ import annotations

import argparse

from ._common import add_endpoint_arguments, add_profile_argument, int_range, positive_float, positive_int

#: Shown under ``docintent doctor --help``.
EXAMPLES = (
    'docintent doctor --base-url http://127.0.0.1:8080/v1 --model my-model',
)

def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="check a model endpoint with the requests ask will send: images, tool calls, Phase A and B, prompt length",
        description="Check that an OpenAI-compatible endpoint can drive docintent: it sends the Phase A and Phase B "
        "requests ask will send (same max_side, max_tokens and options) and prints one fix for each problem.",
    )
    p.add_argument("--max-side", type=int_range(16, 65536), default=None,
                   help="longest image side, as ask will send it (default DOCINTENT_MAX_SIDE, 2048)")
    p.add_argument("--max-tokens", type=positive_int, default=None, help="output-token budget per call, as ask uses it (default 4096)")
    p.add_argument("--timeout", type=positive_float(3600.0), default=None, help="seconds to wait for each reply (default 60)")
    add_profile_argument(p)
    p.add_argument("--brain-opt", action="append", default=[], metavar="KEY=VALUE",
                   help="another option of the openai brain, as given to ask (e.g. native_tools=false, review=page)")
    add_endpoint_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..doctor import format_checks, healthy, run_checks
    from ..errors import ConfigError
    from ..settings import get_settings
    from ._common import brain_options, choose_brain

    given = {"max_side": args.max_side, "max_tokens": args.max_tokens, "timeout": args.timeout}
    options = {**brain_options(args), **{k: v for k, v in given.items() if v is not None}}
    choice = choose_brain(args.profile, None, options)
    if choice.kind != "openai":
        if args.profile:
            raise ConfigError(f"--profile {args.profile}: a {choice.kind} brain; doctor checks model endpoints (openai)")
        choice = choose_brain(None, "openai", options)  # a default profile of another kind does not apply here
    options = dict(choice.options)
    settings = get_settings()
    checks = run_checks(options.pop("base_url", None), options.pop("model", None) or settings.model,
                        options.pop("api_key", None), max_side=options.pop("max_side", None) or settings.max_side,
                        max_tokens=options.pop("max_tokens", 4096), timeout=options.pop("timeout", 60.0),
                        options=options)
    print(format_checks(checks))
    return 0 if healthy(checks) else 1
