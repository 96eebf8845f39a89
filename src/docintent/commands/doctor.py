"""``docintent doctor``: check an OpenAI-compatible endpoint, or any brain by name, and print how to fix what
fails."""

from __future__ import annotations

import argparse

from ._common import (
    BRAIN_KINDS,
    add_endpoint_arguments,
    add_profile_argument,
    brain_kind,
    int_range,
    list_kinds,
    positive_float,
    positive_int,
)

#: Shown under ``docintent doctor --help``.
EXAMPLES = ("docintent doctor --base-url http://127.0.0.1:8080/v1 --model my-model",)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "doctor",
        help="check a model endpoint with the requests ask will send: images, tool calls, Phase A and B, prompt length",
        description="Check that an OpenAI-compatible endpoint can drive docintent: it sends the Phase A and Phase B "
        "requests ask will send (same max_side, max_tokens and options) and prints one fix for each problem. With "
        "--brain KIND, the brain of that name (a plug-in's too) is checked as ask builds it from --brain-opt.",
    )
    p.add_argument(
        "--max-side",
        type=int_range(16, 65536),
        default=None,
        help="longest image side, as ask will send it (default DOCINTENT_MAX_SIDE, 2048)",
    )
    p.add_argument(
        "--max-tokens",
        type=positive_int,
        default=None,
        help="output-token budget per call, as ask uses it (default 4096)",
    )
    p.add_argument(
        "--timeout", type=positive_float(3600.0), default=None, help="seconds to wait for each reply (default 60)"
    )
    list_kinds(
        p.add_argument(
            "--brain",
            type=brain_kind,
            default=None,
            metavar="KIND",
            help="the brain to check, as ask builds it: %(kinds)s (default openai: the model "
            "endpoint; a model brain on another API gets the same checks, any other brain is "
            "asked to read a test page)",
        ),
        kinds=BRAIN_KINDS,
    )
    add_profile_argument(p)
    p.add_argument(
        "--brain-opt",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="another option of the brain, as given to ask (e.g. native_tools=false, review=page)",
    )
    add_endpoint_arguments(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..doctor import check_brain, format_checks, healthy, run_checks
    from ..settings import get_settings
    from ._common import brain_options, choose_brain

    given = {"max_side": args.max_side, "max_tokens": args.max_tokens, "timeout": args.timeout}
    options = {**brain_options(args), **{k: v for k, v in given.items() if v is not None}}
    choice = choose_brain(args.profile, args.brain, options)
    if choice.kind != "openai" and args.brain is None and args.profile is None:
        choice = choose_brain(None, "openai", options)  # a default profile of another kind does not apply here
    if choice.kind != "openai":  # named: checked as ask builds it, with its own options only
        checks = check_brain(choice.kind, dict(choice.options))
        print(format_checks(checks))
        return 0 if healthy(checks) else 1
    options = dict(choice.options)
    settings = get_settings()
    checks = run_checks(
        options.pop("base_url", None),
        options.pop("model", None) or settings.model,
        options.pop("api_key", None),
        max_side=options.pop("max_side", None) or settings.max_side,
        max_tokens=options.pop("max_tokens", 4096),
        timeout=options.pop("timeout", 60.0),
        options=options,
    )
    print(format_checks(checks))
    return 0 if healthy(checks) else 1
