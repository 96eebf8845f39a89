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
    notes = tmp_path / "notes"  # not in a project: only the current folder's own file counts
    notes.mkdir()
    assert project_config_path(notes, home=tmp_path / "elsewhere") is None
    write(notes / "docintent.toml", "[settings]\nthreads = 2\n")
    assert project_config_path(notes, home=tmp_path / "elsewhere") == notes / "docintent.toml"
    (tmp_path / "tool").mkdir()  # a pyproject.toml marks a project's top as .git does
    write(tmp_path / "tool" / "pyproject.toml", "[project]\nname = 'x'\n")
    write(tmp_path / "tool" / "docintent.toml", "[settings]\nthreads = 3\n")
    (tmp_path / "tool" / "src").mkdir()
    assert (
        project_config_path(tmp_path / "tool" / "src", home=tmp_path / "elsewhere")
        == tmp_path / "tool" / "docintent.toml"
    )


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
        # phase_tokens off: every request then carries the profile's max_tokens as it is
        profile = PROFILES.replace("http://127.0.0.1:9/v1", server.base_url).replace(
            "timeout = 30", "timeout = 30\nphase_tokens = false"
        )
        write(project / "docintent.toml", profile)
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
    assert "colour: unknown key; valid keys at the top level: default_profile, settings, profiles" in _one_line_error(
        capsys
    )


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
    assert lines[:2] == [
        "config files (a later one wins):",
        f"{path} (the project's file (the project's top, {project}, holds .git))",
    ]
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


# --- files nobody chose, and the environment's API key ------------------------------------------------------


def test_a_file_planted_in_a_parent_folder_outside_any_project_is_ignored(tmp_path, monkeypatch, capsys):
    shared = tmp_path / "shared-tmp"
    write(
        shared / "docintent.toml",
        'default_profile = "evil"\n[profiles.evil]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n',
    )
    here = shared / "job" / "work"
    here.mkdir(parents=True)
    monkeypatch.chdir(here)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    monkeypatch.delenv("DOCINTENT_CONFIG", raising=False)
    assert load_config().files == ()
    assert choose_brain(None, None, {}).kind == "offline"  # the planted default profile does not apply
    assert main(["config", "show"]) == 0
    out = capsys.readouterr().out
    assert f"ignored: {shared / 'docintent.toml'}" in out and "outside any project" in out
    # named explicitly, the same file is read, and config show says why
    assert main(["--config", str(shared / "docintent.toml"), "config", "show"]) == 0
    assert "named by DOCINTENT_CONFIG or --config" in capsys.readouterr().out


def test_a_file_any_user_may_write_is_not_read(project, capsys):
    (project / "docintent.toml").chmod(0o666)
    config = load_config()
    assert config.files == () and "any user may write it" in config.ignored[0][1]


def _key_seen(server) -> list[str]:
    return [r.headers.get("authorization", "") for r in server.requests]


def test_an_environment_key_never_reaches_an_endpoint_only_a_config_file_names(project, tmp_path, monkeypatch, capsys):
    image = tmp_path / "page.png"
    Image.fromarray(render_text_page(["Total: 42"])).save(image)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-secret-0042")
    reply = [tool_call("answer", answer="42", confidence="high")]
    with FakeOpenAI(reply * 4) as server:
        write(project / "docintent.toml", PROFILES.replace("http://127.0.0.1:9/v1", server.base_url))
        assert main(["ask", str(image), "What is the total?", "--profile", "local", "--strategy", "none"]) == 0
        seen = _key_seen(server)
        assert seen and not any("sk-env-secret-0042" in header for header in seen)
        # named on the command line, the endpoint is the user's own choice: the key goes with it
        assert (
            main(
                [
                    "ask",
                    str(image),
                    "What is the total?",
                    "--brain",
                    "openai",
                    "--brain-opt",
                    f"base_url={server.base_url}",
                    "--brain-opt",
                    "model=fake-vl",
                    "--strategy",
                    "none",
                ]
            )
            == 0
        )
        assert _key_seen(server)[-1] == "Bearer sk-env-secret-0042"
    capsys.readouterr()
    assert main(["config", "show", "--json", "--profile", "local"]) == 0
    api_key = json.loads(capsys.readouterr().out)["profiles"][0]["options"]["api_key"]
    assert api_key["value"] is None and api_key["source"].startswith("not sent: OPENAI_API_KEY")


def test_a_settings_base_url_from_a_file_gets_no_environment_key(project, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env-secret-0042")
    write(project / "docintent.toml", '[settings]\nbase_url = "http://127.0.0.1:9/v1"\n')
    assert settings_from(load_config()).resolved_api_key() is None
    write(project / "docintent.toml", '[settings]\nbase_url = "http://127.0.0.1:9/v1"\napi_key = "sk-file-7"\n')
    assert settings_from(load_config()).resolved_api_key() == "sk-file-7"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    write(project / "docintent.toml", "[settings]\nthreads = 1\n")  # the environment names the endpoint
    assert settings_from(load_config()).resolved_api_key() == "sk-env-secret-0042"


def test_deeply_nested_arrays_are_one_line(project, capsys):
    write(project / "docintent.toml", "[settings]\nthreads = " + "[" * 5000 + "1" + "]" * 5000 + "\n")
    assert main(["config", "show"]) == 1
    assert "nested more than 8 levels deep" in _one_line_error(capsys)
    write(project / "docintent.toml", "[settings]\nthreads = " + "[" * 12 + "1" + "]" * 12 + "\n")
    assert main(["config", "show"]) == 1
    assert "nested more than 8 levels deep" in _one_line_error(capsys)


def test_doctor_with_max_retries_in_the_profile_checks_instead_of_crashing(project, capsys):
    write(
        project / "docintent.toml",
        '[profiles.m]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmax_retries = 0\ntimeout = 2\n',
    )
    assert main(["doctor", "--profile", "m"]) == 1
    captured = capsys.readouterr()
    assert "unexpected error" not in captured.err and "TypeError" not in captured.err
    assert "reachable" in captured.out
