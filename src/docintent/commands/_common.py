"""Small helpers shared by command modules: argument types checked at parse time, key=value options, output
paths checked before the work starts, trace printing.

The ``*_arg`` functions are argparse ``type=`` callables: a bad value stops the command before any work with
one line naming the option and the problem (``argparse.ArgumentTypeError``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import ConfigError


def parse_options(pairs: list[str] | None) -> dict[str, Any]:
    """``["a=1", "b=x"]`` -> ``{"a": 1, "b": "x"}`` (values parsed as JSON when they can be). Secret values
    (``api_key=...``) are registered for redaction."""
    from ..redaction import register_options

    out: dict[str, Any] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ConfigError(f"option {pair!r} must look like key=value")
        key, value = pair.split("=", 1)
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    register_options(out)
    return out


def add_profile_argument(parser: argparse.ArgumentParser) -> None:
    """``--profile NAME``: a brain profile of the config files (``[profiles.NAME]`` in docintent.toml)."""
    parser.add_argument(
        "--profile",
        metavar="NAME",
        help="brain profile from docintent.toml ([profiles.NAME]: kind and options); "
        "default: the file's default_profile when --brain is not given (docintent config show)",
    )


class Kinds:
    """The names a registry holds, read when they are needed and not before: as argparse ``choices`` they are
    checked when a value is parsed and listed when ``--help`` is printed (``%(choices)s``, or ``%(kinds)s`` through
    :func:`list_kinds`), so a plug-in registered by then, from an entry point or a test's ``Registry.scoped``, is
    both accepted and listed, and building the parser imports no registry (``docintent --help`` stays fast).

    ``source``: a ``"module:attribute"`` naming a :class:`~docintent.registry.Registry` (its kinds in registration
    order), or a function returning the names; ``extra``: names the command accepts beside them (``search
    --method agent``).

    >>> methods = Kinds("docintent.retrieval.retrievers:RETRIEVERS", extra=("agent",))
    >>> "fusion" in methods, "agent" in methods, "bm52" in methods
    (True, True, False)
    """

    def __init__(self, source: str | Callable[[], Iterable[str]], extra: tuple[str, ...] = ()) -> None:
        self.source = source
        self.extra = extra

    def names(self) -> list[str]:
        if callable(self.source):
            found = list(self.source())
        else:
            import importlib

            module, _, attribute = self.source.partition(":")
            found = getattr(importlib.import_module(module), attribute).kinds_in_order()
        return list(dict.fromkeys([*found, *self.extra]))

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __contains__(self, name: object) -> bool:
        return name in self.names()

    def __str__(self) -> str:
        return ", ".join(self.names())


#: The registries whose names command options take (each read only when a value or the help needs it).
BRAIN_KINDS = Kinds("docintent.brains:BRAINS")
STRATEGY_NAMES = Kinds("docintent.strategies.core:NAMED")
ENGINE_KINDS = Kinds("docintent.ocr:ENGINES")
READER_KINDS = Kinds("docintent.reader.readers:READERS")
DATASET_KINDS = Kinds("docintent.evaluation.datasets:DATASETS")
PLANNER_KINDS = Kinds("docintent.retrieval.planners:PLANNERS")


def _restoration_tools() -> list[str]:
    from ..tools import restoration_tools

    return restoration_tools()


#: The tools that change pages (``restore --tool``), plug-ins included.
RESTORATION_TOOLS = Kinds(_restoration_tools)


def list_kinds(action: argparse.Action, **kinds: Kinds) -> argparse.Action:
    """Let the help of ``action`` name the kinds of registries as ``%(NAME)s`` (argparse expands an action's
    attributes in its help): for an option checked when it is used rather than while parsing (``--brain``, whose
    unknown kind is one line naming the valid ones from the registry itself), or taking options of several."""
    for name, value in kinds.items():
        vars(action)[name] = value
    return action


def kind_list(kinds: Kinds, what: str) -> Callable[[str], str]:
    """An argparse type: comma-separated names, each one of ``kinds`` (``bench --strategies none,docintent``);
    an unknown one is refused while parsing, in the registries' own words (the nearest valid name, every valid
    one)."""
    from ..errors import UnknownComponentError

    def parse(text: str) -> str:
        names = [n.strip() for n in text.split(",") if n.strip()]
        if not names:
            raise argparse.ArgumentTypeError(f"{text!r}: give one or more {what} names: {kinds}")
        valid = kinds.names()
        for name in names:
            if name not in valid:
                raise argparse.ArgumentTypeError(str(UnknownComponentError(what, name, valid)))
        return ",".join(names)

    parse.__name__ = f"{what} names"
    return parse


def brain_kind(text: str) -> str:
    """``--brain KIND``: a registered brain kind; an empty one is refused (it would quietly mean the default)."""
    if not text.strip():
        from ..brains import BRAINS

        raise argparse.ArgumentTypeError(f"empty; give a brain kind: {', '.join(BRAINS.kinds())}")
    return text.strip()


#: The endpoint options every command that can drive a model takes as flags as well as ``--brain-opt KEY=VALUE``:
#: (option, flag, help).
ENDPOINT_FLAGS = (
    (
        "base_url",
        "--base-url",
        "OpenAI-compatible endpoint ending in /v1, e.g. http://127.0.0.1:8080/v1 (the same as "
        "--brain-opt base_url=URL; selects the openai brain when --brain is not given; default DOCINTENT_BASE_URL "
        "or OPENAI_BASE_URL)",
    ),
    (
        "model",
        "--model",
        "model name as the server lists it (the same as --brain-opt model=NAME; default "
        "DOCINTENT_MODEL, else the only model the server lists)",
    ),
    (
        "api_key",
        "--api-key",
        "API key (the same as --brain-opt api_key=KEY; default DOCINTENT_API_KEY or "
        "OPENAI_API_KEY; local servers need none)",
    ),
)


def add_endpoint_arguments(parser: argparse.ArgumentParser) -> None:
    """``--base-url``, ``--model`` and ``--api-key``: the model endpoint, named the same way for ``ask``, ``doctor``,
    ``bench``, ``serve``, ``evidence`` and ``mcp`` (each is also accepted as ``--brain-opt key=value``)."""
    group = parser.add_argument_group("model endpoint (openai brain)")
    for option, flag, text in ENDPOINT_FLAGS:
        group.add_argument(flag, dest=option, metavar=option.split("_")[-1].upper(), default=None, help=text)


def endpoint_options(args: argparse.Namespace) -> dict[str, Any]:
    """The endpoint flags given (:data:`ENDPOINT_FLAGS`) as brain options; the key is registered for redaction."""
    from ..redaction import register_options

    given = {option: getattr(args, option, None) for option, _, _ in ENDPOINT_FLAGS}
    given = {key: value for key, value in given.items() if value is not None}
    register_options(given)
    return given


def brain_options(args: argparse.Namespace) -> dict[str, Any]:
    """``--brain-opt`` options with the endpoint flags merged in; a flag and a ``--brain-opt`` that name the same
    option with different values are refused in one line (neither silently wins)."""
    options = parse_options(getattr(args, "brain_opt", None))
    for key, value in endpoint_options(args).items():
        flag = next(f for o, f, _ in ENDPOINT_FLAGS if o == key)
        if key in options and options[key] != value:
            raise ConfigError(f"{flag} and --brain-opt {key}=... name different values; give one of them")
        options[key] = value
    return options


def brain_choice(args: argparse.Namespace):
    """The brain kind and options of a command's ``--profile``, ``--brain``, ``--brain-opt`` and endpoint flags,
    with the config files and the environment (:func:`choose_brain`). ``--base-url`` without ``--brain`` or
    ``--profile`` selects the openai brain: naming an endpoint means driving a model."""
    kind = args.brain
    profile = getattr(args, "profile", None)
    if kind is None and profile is None and getattr(args, "base_url", None) is not None:
        kind = "openai"
    return choose_brain(profile, kind, brain_options(args))


def choose_brain(profile: str | None, kind: str | None, options: dict[str, Any]):
    """:func:`docintent.brains.profiles.choose_brain`, with an API key from the environment kept away from an
    endpoint that only a config file names (:func:`docintent.settings.keep_environment_key_home`)."""
    from ..brains.profiles import choose_brain as choose
    from ..settings import keep_environment_key_home

    return keep_environment_key_home(choose(profile, kind, options))


def format_trace(result, verbose: bool = False) -> str:
    """A Result's steps for people: in plain words, a line per restoration tried and per other step; with
    ``verbose``, every step on its own line with the figures the brain gave, its seconds, tokens and page hashes."""
    from ..trace import describe_trace

    if not verbose:
        return "\n".join(f"{i:>2}. {line}" for i, line in enumerate(describe_trace(result.trace), 1))
    lines = []
    for i, step in enumerate(result.trace, 1):
        hashes = f" [{step.before}->{step.after}]" if step.after and step.before != step.after else ""
        tokens = (
            f" ({step.prompt_tokens}+{step.completion_tokens} tok)"
            if step.prompt_tokens or step.completion_tokens
            else ""
        )
        lines.append(f"{i:>2}. {step.describe(verbose=True)}  ({step.seconds:.2f} s{tokens}){hashes}")
    return "\n".join(lines)


# --- argument types (argparse ``type=``) ----------------------------------------------------------


def _number(text: str, what: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number ({what})") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not a finite number ({what})")
    return value


def region_arg(text: str):
    """``x0,y0,x1,y1`` as fractions in [0, 1] or as 0-1000 integers -> a Box, by :meth:`Box.parse`'s rule
    (the one every interface uses). Nothing is clamped: a region that leaves the page, has no area, or is not
    four numbers is refused."""
    from ..errors import InvalidBoxError
    from ..page import Box

    parts = [p.strip() for p in text.split(",")]
    if len(parts) != 4 or not all(parts):
        raise argparse.ArgumentTypeError(f"{text!r}: {Box.PARSE_RULE}")
    values = [_number(p, Box.PARSE_RULE) for p in parts]
    try:
        return Box.parse(values)
    except InvalidBoxError as err:
        raise argparse.ArgumentTypeError(f"{text!r} {err.problem}") from None


def _int(text: str) -> int:
    try:
        return int(text.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def int_range(low: int, high: int | None = None) -> Callable[[str], int]:
    """An argparse type: a whole number in [low, high] (no upper bound when ``high`` is None)."""

    def parse(text: str) -> int:
        value = _int(text)
        if value < low or (high is not None and value > high):
            bound = f"between {low} and {high}" if high is not None else f"at least {low}"
            raise argparse.ArgumentTypeError(f"{value} is out of range: must be {bound}")
        return value

    parse.__name__ = "whole number"
    return parse


def float_range(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a finite number in [low, high]."""

    def parse(text: str) -> float:
        value = _number(text, f"between {low:g} and {high:g}")
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{value:g} is out of range: must be between {low:g} and {high:g}")
        return value

    parse.__name__ = "number"
    return parse


def positive_float(high: float | None = None) -> Callable[[str], float]:
    """An argparse type: a finite number above 0 (and at most ``high`` when given)."""

    def parse(text: str) -> float:
        value = _number(text, "a finite number above 0")
        if value <= 0 or (high is not None and value > high):
            bound = f"above 0 and at most {high:g}" if high is not None else "above 0"
            raise argparse.ArgumentTypeError(f"{value:g} is out of range: must be {bound}")
        return value

    parse.__name__ = "number"
    return parse


#: 0-based page numbers (internal indices; users count pages from 1, see :func:`pages_arg`).
page_arg = int_range(0)

_PAGES_RULE = "pages count from 1 (1 is the first page); give numbers and ranges such as 2, 1-3 or 1,4-6"


def pages_arg(text: str) -> str:
    """``--pages``: 1-based page numbers and ranges (``"2"``, ``"1-3"``, ``"1,4-6"``), checked for their form here
    and against the document when it is opened."""
    for part in text.split(","):
        bounds = [b.strip() for b in part.split("-")]
        if len(bounds) > 2 or not all(b.isdigit() for b in bounds):
            raise argparse.ArgumentTypeError(f"{text!r}: {_PAGES_RULE}")
        low, high = int(bounds[0]), int(bounds[-1])
        if low < 1:
            raise argparse.ArgumentTypeError(f"{text!r}: {_PAGES_RULE}")
        if high < low:
            raise argparse.ArgumentTypeError(f"{text!r}: a range must go up, e.g. 2-5")
    return text.replace(" ", "")


def retired_page_arg(text: str) -> str:
    """``--page`` counted from 0; pages now count from 1 and are chosen with ``--pages``: refuse it, saying so
    (``--page 1`` meant the second page, so no value can be taken over without confusion)."""
    raise argparse.ArgumentTypeError(
        f"{text!r}: --page counted pages from 0 and is gone; pages now count from 1: use --pages N "
        "(--pages 1 is the first page)"
    )


def add_pages_argument(parser: argparse.ArgumentParser, help_text: str) -> None:
    """``--pages SPEC`` (1-based) and the retired ``--page`` (refused with the new rule)."""
    parser.add_argument("--pages", type=pages_arg, metavar="SPEC", help=help_text)
    parser.add_argument("--page", type=retired_page_arg, help=argparse.SUPPRESS)


def one_page(path: str, pages: str | None):
    """The one page ``--pages`` names (default: the first) of an image or PDF; several pages are refused."""
    from ..document import Document
    from ..errors import InputError

    document = Document(path, pages=pages or "1")
    if len(document) != 1:
        raise InputError(path, f"--pages {pages} names {len(document)} pages; this command reads one: give one page")
    return document.page(document.numbers[0])


def add_progress_argument(parser: argparse.ArgumentParser) -> None:
    """``--no-progress``: no progress line on stderr (it is shown only on a terminal anyway)."""
    parser.add_argument(
        "--no-progress", action="store_true", help="no progress line on stderr (shown only when stderr is a terminal)"
    )


#: PDF rendering resolutions docintent accepts (above 2400 dpi one letter page is over 500 M pixels).
dpi_arg = int_range(1, 2400)
positive_int = int_range(1)
non_negative_int = int_range(0)
#: Shares such as a matching threshold.
unit_float = float_range(0.0, 1.0)


def image_output_arg(text: str) -> Path:
    """An image path to write: its suffix must name a format docintent writes."""
    from ..io.encode import IMAGE_OUTPUT_SUFFIXES

    path = Path(text)
    if path.suffix.lower() not in IMAGE_OUTPUT_SUFFIXES:
        raise argparse.ArgumentTypeError(
            f"{text!r}: cannot write a {path.suffix or 'suffix-less'} image; use one of {', '.join(IMAGE_OUTPUT_SUFFIXES)}"
        )
    return path


# --- outputs ----------------------------------------------------------------------------------------


def check_output_file(path: str | os.PathLike) -> Path:
    """Refuse, before any work is done, a file path that cannot be written: its folder is missing, is a file,
    or is not writable, or the path itself is a folder, a block device or a socket. A symbolic link is
    checked where it points; a character device or pipe (``/dev/null``) is checked for writing into
    (see :func:`docintent.io.lock.output_target`)."""
    from ..errors import InputError
    from ..io.lock import output_target

    p = Path(path)
    target, how = output_target(p)
    if how == "through":
        if not os.access(p, os.W_OK):
            raise InputError(p, "cannot be written: no permission")
        return p
    _check_creatable(p, target.parent if str(target.parent) else Path("."), "written")
    if target.exists() and not os.access(target, os.W_OK):
        raise InputError(p, "cannot be written: no permission")
    return p


def check_output_folder(path: str | os.PathLike) -> Path:
    """Refuse, before any work is done, a folder path that is a file or cannot be created or written."""
    from ..errors import InputError

    p = Path(path)
    if p.exists() and not p.is_dir():
        raise InputError(p, "exists and is not a folder")
    _check_creatable(p, p, "created")
    return p


def _check_creatable(target: Path, start: Path, verb: str) -> None:
    """Refuse ``target`` when the nearest existing folder at or above ``start`` is not a folder or not writable."""
    from ..errors import InputError

    probe = start
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    if not probe.is_dir():
        raise InputError(target, f"cannot be {verb}: {probe} is not a folder")
    if not os.access(probe, os.W_OK | os.X_OK):
        raise InputError(target, f"cannot be written: no permission to write in {probe}")


def write_text_atomic(path: str | os.PathLike, text: str) -> None:
    """Write an output file so it is whole or absent (temporary file, then rename; see
    :func:`docintent.io.lock.atomic_write_bytes` for links and special files); secrets are removed from
    what is written."""
    from ..io.lock import atomic_write_text
    from ..redaction import redact

    atomic_write_text(path, redact(text))


#: Files not read that a batch summary names one by one; past it, the rest are counted by reason.
NOT_READ_SHOWN = 50


def not_read_lines(not_read: list[tuple[str, str]]) -> str:
    """The summary's lines for the files a folder walk left alone: ``not read: PATH (reason)`` each."""
    lines = [f"\nnot read: {path} ({reason})" for path, reason in not_read[:NOT_READ_SHOWN]]
    rest = not_read[NOT_READ_SHOWN:]
    if rest:
        reasons: dict[str, int] = {}
        for _, reason in rest:
            reasons[reason] = reasons.get(reason, 0) + 1
        lines.append(f"\nnot read: {len(rest)} more files (" + "; ".join(f"{n} {r}" for r, n in reasons.items()) + ")")
    return "".join(lines)


def report_batch(
    command: str,
    run: Callable[[], Any],
    folder: str | os.PathLike,
    done: str,
    unit: str,
    describe: Callable[[Any], str],
) -> int:
    """Run a resumable batch for ``docintent COMMAND``: print ``describe(summary)`` when it ends, name the rows
    with errors on stderr; on Ctrl-C say that the ``done`` items are saved in ``folder`` (exit 130)."""
    try:
        summary = run()
    except KeyboardInterrupt:
        print(
            f"docintent {command}: interrupted; the {done} so far are saved in {folder}; "
            "run the same command again to resume",
            file=sys.stderr,
        )
        return 130
    print(describe(summary))
    if summary.failed:
        print(
            f'{summary.failed} {unit}(s) have errors; see "error" in {summary.path} '
            "(rerun with --retry-failed to try them again)",
            file=sys.stderr,
        )
    return 0
