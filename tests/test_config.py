"""docintent.toml: where it is found, what wins over what, profiles picked with --profile, `config show`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from conftest import render_text_page
from docintent.brains.profiles import choose_brain
from docintent.cli import main
from docintent.configfile import load_config, project_config_path
from docintent.errors import ConfigError
from docintent.settings import settings_from, settings_report
from docintent.testing.fake_openai import FakeOpenAI, tool_call

PROFILES = """
default_profile = "local"

[settings]
threads = 1
pdf_dpi = 200

[profiles.local]
kind = "openai"
base_url = "http://127.0.0.1:9/v1"
model = "fake-vl"
max_tokens = 16384
timeout = 30

[profiles.careful]
kind = "offline"
answer_threshold = 0.95
"""


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A git checkout with docintent.toml at its top, the current folder two levels below it, and a user
    config folder of its own."""
    root = tmp_path / "home" / "work" / "proj"
    (root / ".git").mkdir(parents=True)
    write(root / "docintent.toml", PROFILES)
    here = root / "src" / "deep"
    here.mkdir(parents=True)
    monkeypatch.chdir(here)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("DOCINTENT_CONFIG", raising=False)
    for name in ("DOCINTENT_THREADS", "DOCINTENT_PDF_DPI", "DOCINTENT_BASE_URL", "DOCINTENT_MODEL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return root


def test_the_project_file_is_found_upward_and_wins_over_the_user_file(project, tmp_path):
    write(tmp_path / "xdg" / "docintent" / "docintent.toml", "[settings]\nthreads = 3\nmax_side = 1024\n")
    config = load_config()
    assert config.files == (tmp_path / "xdg" / "docintent" / "docintent.toml", project / "docintent.toml")
    settings = settings_from(config)
    assert settings.threads == 1 and settings.max_side == 1024 and settings.pdf_dpi == 200


def test_the_lookup_stops_at_the_top_of_the_checkout(tmp_path):
    write(tmp_path / "docintent.toml", "[settings]\nthreads = 9\n")  # above the checkout: not this project's
    inner = tmp_path / "repo"
    (inner / ".git").mkdir(parents=True)
    (inner / "sub").mkdir()
    assert project_config_path(inner / "sub", home=tmp_path / "elsewhere") is None
    notes = tmp_path / "notes"  # not in a checkout: the lookup goes up to the file
    notes.mkdir()
    assert project_config_path(notes, home=tmp_path / "elsewhere") == tmp_path / "docintent.toml"


def test_environment_wins_over_the_file_and_the_file_over_the_defaults(project, monkeypatch):
    monkeypatch.setenv("DOCINTENT_THREADS", "2")
    settings = settings_from(load_config())
    assert settings.threads == 2 and settings.pdf_dpi == 200 and settings.max_side == 2048
    sources = {row.name: row.source for row in settings_report()}
    assert sources["threads"] == "environment (DOCINTENT_THREADS)"
    assert sources["pdf_dpi"] == str(project / "docintent.toml")
    assert sources["max_side"] == "default"


def test_profile_selection_default_profile_and_what_overrides_a_profile(project, monkeypatch):
    assert choose_brain("careful", None, {}).options == {"answer_threshold": 0.95}
    default = choose_brain(None, None, {})
    assert default.profile == "local" and default.kind == "openai" and default.options["max_tokens"] == 16384
    assert choose_brain(None, "offline", {}).options == {}  # --brain alone: the default profile does not apply
    assert choose_brain("local", None, {"max_tokens": 512}).options["max_tokens"] == 512  # --brain-opt wins
    monkeypatch.setenv("DOCINTENT_BASE_URL", "http://127.0.0.1:10/v1")
    chosen = choose_brain("local", None, {})
    assert "base_url" not in chosen.options and chosen.sources["base_url"] == "environment (DOCINTENT_BASE_URL)"
    with pytest.raises(ConfigError, match="--profile nope: no such profile .* profiles: local, careful"):
        choose_brain("nope", None, {})
    with pytest.raises(ConfigError, match="--brain offline contradicts --profile local"):
        choose_brain("local", "offline", {})


def test_ask_with_a_profile_talks_to_the_profiles_endpoint(project, tmp_path, capsys):
    image = tmp_path / "page.png"
    Image.fromarray(render_text_page(["Total: 42"])).save(image)
    with FakeOpenAI([tool_call("answer", answer="42", confidence="high")]) as server:
        write(project / "docintent.toml", PROFILES.replace("http://127.0.0.1:9/v1", server.base_url))
        assert main(["ask", str(image), "What is the total?", "--profile", "local", "--strategy", "none"]) == 0
        assert server.chat_requests[0]["max_tokens"] == 16384
    assert "answer: 42" in capsys.readouterr().out


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err
    return err


def test_an_unknown_key_is_one_line_naming_the_file_the_key_and_the_valid_keys(project, capsys):
    write(project / "docintent.toml", "[settings]\nthred = 1\n")
    assert main(["config", "show"]) == 1
    err = _one_line_error(capsys)
    assert f"{project / 'docintent.toml'}: settings.thred: unknown key; valid keys in [settings]: max_pixels," in err
    write(project / "docintent.toml", '[profiles.p]\nkind = "openai"\nmax_token = 5\n')
    assert main(["ask", "page.png", "q?", "--profile", "p"]) == 1
    err = _one_line_error(capsys)
    assert "profiles.p.max_token: unknown option of the openai brain; valid keys: kind, model, base_url" in err
    write(project / "docintent.toml", "colour = 1\n")
    assert main(["config", "show"]) == 1
    assert "colour: unknown key; valid keys at the top level: default_profile, settings, profiles" in _one_line_error(capsys)


def test_a_bad_value_is_one_line_naming_the_file_and_the_key(project, capsys):
    write(project / "docintent.toml", '[settings]\nthreads = "many"\n')
    assert main(["config", "show"]) == 1
    assert f"{project / 'docintent.toml'}: settings.threads: " in _one_line_error(capsys)
    write(project / "docintent.toml", '[profiles.p]\nkind = "openai"\nmax_tokens = "lots"\n')
    assert main(["ask", "page.png", "q?", "--profile", "p"]) == 1
    err = _one_line_error(capsys)
    assert f"{project / 'docintent.toml'}: profiles.p: brain 'openai': option 'max_tokens'='lots'" in err
    assert "valid options: " in err
    write(project / "docintent.toml", '[profiles.p]\nkind = "gpt"\n')
    assert main(["bench", "--dataset", "jsonl:x.jsonl", "--out", "run", "--profile", "p"]) == 1
    assert "profiles.p.kind: unknown brain kind 'gpt'; valid: offline, openai, scripted" in _one_line_error(capsys)


def test_config_show_prints_each_value_with_its_source(project, monkeypatch, capsys):
    monkeypatch.setenv("DOCINTENT_MODEL", "from-env")
    assert main(["config", "show"]) == 0
    lines = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    path = str(project / "docintent.toml")
    assert lines[:2] == ["config files (a later one wins):", path]
    assert f"threads 1 {path}" in lines
    assert "max_side 2048 default" in lines
    assert "model from-env environment (DOCINTENT_MODEL)" in lines
    assert f"profiles (default: local from {path}):" in lines
    assert f"max_tokens 16384 {path}" in lines and f"answer_threshold 0.95 {path}" in lines
    assert main(["config", "show", "--json", "--profile", "careful"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["settings"]["pdf_dpi"] == {"value": "200", "source": path}
    assert [p["name"] for p in data["profiles"]] == ["careful"]


def test_no_config_file_anywhere_says_where_it_looked(tmp_path, monkeypatch, capsys):
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("DOCINTENT_CONFIG", raising=False)
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    assert f"config files: none (looked for {tmp_path / 'xdg' / 'docintent' / 'docintent.toml'}" in out
    assert "profiles: none" in out
