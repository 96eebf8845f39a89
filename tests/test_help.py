"""Every command's help: what it does, examples that parse, and nothing masked that is not a secret."""

from __future__ import annotations

import argparse
import importlib
import shlex
import subprocess
import sys

import pytest

from docintent.cli import build_parser


def _commands() -> dict[str, argparse.ArgumentParser]:
    sub = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


@pytest.mark.parametrize("name", sorted(_commands()))
def test_every_command_says_what_it_does_and_its_examples_parse(name):
    parser = _commands()[name]
    assert parser.description and len(parser.description) > 15
    examples = importlib.import_module(f"docintent.commands.{name.replace('-', '_')}").EXAMPLES
    assert examples and f"examples:\n  {examples[0]}" in parser.format_help()
    for example in examples:
        args = shlex.split(example)
        assert args[:2] == ["docintent", name]
        build_parser().parse_args(args[1:])  # a mistyped example would exit here


def test_no_help_text_is_masked_as_a_secret():
    names = sorted(_commands())
    script = (
        "import contextlib, io, sys\nfrom docintent.cli import main\n"
        f"for name in {names!r}:\n"
        "    with contextlib.suppress(SystemExit):\n"
        "        main([name, '--help'])\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "usage: docintent serve" in done.stdout and "Bearer TOKEN" in done.stdout
    assert "***" not in done.stdout


def test_a_mistyped_option_or_command_gets_the_nearest_valid_one():
    run = lambda *a: subprocess.run(
        [sys.executable, "-m", "docintent", *a], capture_output=True, text=True, timeout=120
    )
    option = run("ask", "page.png", "What?", "--stratgy", "none")
    assert option.returncode == 1 and "did you mean --strategy?" in option.stderr
    command = run("extrct", "x.pdf")
    assert command.returncode == 1 and "did you mean 'extract'?" in command.stderr
    value = run("ask", "page.png", "What?", "--brain-opt", "readr=rules")
    assert value.returncode == 1 and "did you mean 'reader'?" in value.stderr


@pytest.mark.parametrize("command", ["ask", "bench", "serve", "mcp"])
def test_an_empty_brain_kind_is_refused_not_taken_for_the_default(command):
    extra = {"ask": ["page.png", "What?"], "bench": ["--dataset", "synth:x"], "serve": [], "mcp": []}[command]
    done = subprocess.run(
        [sys.executable, "-m", "docintent", command, *extra, "--brain", ""], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 1 and "argument --brain: empty; give a brain kind: offline" in done.stderr
