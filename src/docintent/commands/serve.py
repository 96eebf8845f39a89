"""``docintent serve``: the HTTP API and web viewer (FastAPI + uvicorn, extra ``docintent[serve]``)."""

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

#: The service's port when none is given: not 8000 (vLLM's default, where a model server is often running), nor
#: another port that common model servers or notebook tools take (8080, 8888, 7860, 11434, 30000).
DEFAULT_PORT = 8737
#: TCP ports a service may listen on.
port_arg = int_range(1, 65535)


#: Shown under ``docintent serve --help``.
EXAMPLES = ("docintent serve --port 8000",)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="HTTP API and web viewer: ask questions, watch every step, browse benchmark runs",
        description="Serve the JSON API (POST /v1/ask, GET /v1/runs/{id}, its events and page images, /v1/tools, "
        "/v1/health) and the web viewer at '/'. Needs: pip install 'docintent[serve]'.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=port_arg, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}), 1-65535")
    p.add_argument("--workers", type=int_range(1, 256), default=2, help="runs executed at the same time (default 2)")
    p.add_argument("--runs", metavar="DIR", help="folder of benchmark run directories to browse in the viewer")
    list_kinds(
        p.add_argument(
            "--brain",
            type=brain_kind,
            action="append",
            metavar="KIND",
            help="brain kinds requests may choose, of %(kinds)s (repeatable; default: offline). "
            "The first is the default",
        ),
        kinds=BRAIN_KINDS,
    )
    add_profile_argument(p)
    p.add_argument(
        "--brain-opt",
        action="append",
        metavar="KEY=VALUE",
        help="option of the brain named with --brain that takes it (the first that accepts every option "
        "given), e.g. base_url=http://localhost:8001/v1; never taken from requests",
    )
    add_endpoint_arguments(p)
    p.add_argument("--token", help="require 'Authorization: Bearer TOKEN' (default: DOCINTENT_SERVE_TOKEN, else none)")
    p.add_argument(
        "--cors-origin", action="append", metavar="URL", help="allow this browser origin (default: CORS off)"
    )
    p.add_argument(
        "--max-upload-mb",
        type=positive_float(10240.0),
        default=25.0,
        help="largest upload in MB, above 0 and at most 10240 (default 25)",
    )
    p.add_argument(
        "--max-pixels", type=positive_int, default=40_000_000, help="largest decoded page in pixels (default 40M)"
    )
    p.add_argument("--timeout", type=positive_float(), default=300.0, help="seconds a run may take (default 300)")
    p.add_argument("--keep-runs", type=positive_int, default=100, help="finished runs kept (default 100)")
    p.add_argument(
        "--keep-minutes", type=positive_float(), default=60.0, help="minutes a finished run is kept (default 60)"
    )
    p.add_argument("--data-dir", metavar="DIR", help="where page images of runs are kept (default: a temporary folder)")
    p.add_argument(
        "--no-access-log",
        action="store_true",
        help="no line per request on stderr (method, path, status, milliseconds)",
    )
    p.set_defaults(func=run)


def build_config(args: argparse.Namespace):
    """The :class:`ServeConfig` for parsed ``serve`` arguments."""
    from pathlib import Path

    from ..errors import ConfigError
    from ..server.config import MB, ServeConfig, brain_factory, check_token
    from ..settings import get_settings
    from ._common import brain_options, choose_brain, endpoint_options

    get_settings()  # a bad DOCINTENT_* variable stops the service here, in one line, not in its start-up
    options = brain_options(args)
    if endpoint_options(args) and "openai" not in (args.brain or []):
        # naming an endpoint offers the model brain (beside the offline reader, still the default)
        args.brain = [*(args.brain or ["offline"]), "openai"]
    choice = choose_brain(args.profile, None, options) if args.profile or not args.brain else None
    if choice is not None and choice.profile is not None:
        # the profile's brain comes first (the default of requests), with the profile's options
        kinds = list(dict.fromkeys([choice.kind, *(args.brain or [])]))
        options_of = {choice.kind: choice.options}
    else:
        kinds = list(dict.fromkeys(args.brain or ["offline"]))
        options_of = {_owner(kinds, options): options} if options else {}
    brains = {kind: brain_factory(kind, **options_of.get(kind, {})) for kind in kinds}
    for kind, make in brains.items():
        check_brain(kind, make)
    options = options_of.get("openai", {})
    base_url = None
    if "openai" in kinds:
        base_url = options.get("base_url") or get_settings().resolved_base_url()
    if args.runs and not Path(args.runs).is_dir():
        raise ConfigError(f"{args.runs}: --runs must be a folder of benchmark run directories")
    if args.token is not None:
        check_token(args.token, "the token (--token)")
    return ServeConfig(
        workers=args.workers,
        max_upload_bytes=int(args.max_upload_mb * MB),
        max_pixels=args.max_pixels,
        run_timeout_s=args.timeout,
        keep_runs=args.keep_runs,
        keep_seconds=args.keep_minutes * 60.0,
        token=args.token if args.token is not None else ServeConfig.token_from_env(),
        cors_origins=tuple(args.cors_origin or ()),
        data_dir=Path(args.data_dir) if args.data_dir else None,
        runs_dir=Path(args.runs) if args.runs else None,
        brains=brains,
        default_brain=kinds[0],
        model_base_url=base_url,
    )


def _show_access_log() -> None:
    """The service's access lines on stderr, one per request, whatever the level of the other loggers."""
    import logging
    import sys

    logger = logging.getLogger("docintent.access")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", "%Y-%m-%dT%H:%M:%S"))
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def _owner(kinds: list[str], options: dict) -> str:
    """The brain of ``kinds`` the ``--brain-opt`` options are for: the first whose options model accepts them all
    (a plug-in brain's options reach it as they reach ``openai``); none accepting them is one line."""
    from ..brains import BRAINS
    from ..errors import ConfigError

    if len(kinds) == 1:
        return kinds[0]  # its own start-up check names a bad option
    problems = []
    for kind in kinds:
        try:
            BRAINS.validate(kind, options)
            return kind
        except ConfigError as err:
            problems.append(str(err))
    raise ConfigError(f"--brain-opt: no brain of --brain {', '.join(kinds)} takes these options ({problems[0]})")


def check_brain(kind: str, make) -> None:
    """Build the brain ``kind`` once, so an unknown kind or a bad option stops ``serve`` at start (in one line)
    instead of failing every run later."""
    from ..errors import ConfigError, DocIntentError

    try:
        brain = make()
    except DocIntentError as err:
        raise ConfigError(f"--brain {kind}: {err}") from None
    except (TypeError, ValueError) as err:  # a brain class refusing its keyword arguments
        raise ConfigError(f"--brain {kind}: {type(err).__name__}: {err}") from None
    brain.close()


def run(args: argparse.Namespace) -> int:
    from ..errors import MissingDependencyError

    try:
        import uvicorn
    except ImportError:
        raise MissingDependencyError("uvicorn", "serve", "docintent serve") from None
    from ..server import create_app

    config = build_config(args)
    if not args.no_access_log:
        _show_access_log()
    app = create_app(config)
    where = f"http://{args.host}:{args.port}/"
    print(
        f"docintent serve: {where} (workers {config.workers}, brains {', '.join(config.brains)}"
        f"{', bearer token required' if config.token else ''}{', runs from ' + str(config.runs_dir) if config.runs_dir else ''})",
        flush=True,
    )
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning", log_config=_log_config(uvicorn))
    return 0


def _log_config(uvicorn) -> dict:
    """uvicorn's own logging configuration with every handler redacting what it writes."""
    import copy

    from uvicorn.config import LOGGING_CONFIG

    config = copy.deepcopy(LOGGING_CONFIG)
    config.setdefault("filters", {})["redact"] = {"()": "docintent.redaction.RedactingFilter"}
    for handler in config.get("handlers", {}).values():
        handler.setdefault("filters", []).append("redact")
    return config
