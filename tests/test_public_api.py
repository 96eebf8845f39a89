"""What a newcomer meets first: help() on the one-call API, the service's default port, where the demo writes."""

from __future__ import annotations

import inspect
import os
import pydoc
import subprocess
import sys

import pytest

import docintent
from docintent.cli import build_parser


def test_help_on_docintent_ask_shows_its_real_signature_and_docstring():
    text = pydoc.render_doc(docintent.ask, renderer=pydoc.plaintext)
    assert "ask(image: " in text and "question: " in text and "*args" not in text
    assert "restoring only what blocks the answer" in text
    assert list(inspect.signature(docintent.ask).parameters)[:5] == ["image", "question", "task", "strategy", "brain"]
    from docintent import ask

    assert ask is docintent.ask and ask.__module__ == "docintent.api"


def test_importing_docintent_does_not_load_the_pipeline_behind_ask():
    code = "import sys, docintent; print('docintent.api' in sys.modules, 'ask' in dir(docintent))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "True"]


def test_serve_listens_on_8737_by_default_not_on_a_model_servers_port(capsys):
    assert build_parser().parse_args(["serve"]).port == 8737
    with pytest.raises(SystemExit):
        build_parser().parse_args(["serve", "--help"])
    assert "port (default 8737)" in " ".join(capsys.readouterr().out.split())


def test_demo_without_out_writes_into_a_new_temporary_folder_and_says_where(tmp_path):
    assert build_parser().parse_args(["demo"]).out is None
    # A process of its own: the generator forks worker processes, which is unsafe in a test process that other
    # tests have filled with server and monitor threads.
    code = (
        "from docintent.brains import ScriptedBrain; from docintent.demo import run_demo; "
        "run_demo(None, count=1, strategies=('none',), brain=ScriptedBrain(final='x'))"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    lines = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, timeout=300
    ).stdout.splitlines()
    folders = [p for p in tmp_path.iterdir() if p.name.startswith("docintent-demo-") and (p / "index.html").is_file()]
    assert len(folders) == 1
    assert f"Every step, with the page before and after each restoration: {folders[0] / 'index.html'}" in lines
    assert lines[-1].strip().startswith("docintent ask ")  # it ends with the next command to try
