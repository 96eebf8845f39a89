"""Paths that are data: any path string in a run's rows, in its manifest, in a request to the service or in an MCP
tool call stays inside its folder.

Each property builds a small world - a run folder holding links out of it, a link looping on itself and named
pipes, beside an ``outside`` folder holding a secret picture (random noise, where every picture of the run is one
flat grey) and a secret word - and then lets Hypothesis write the path strings (``..``, absolute paths, NUL
characters, backslashes, ``%2e%2e``, the names of the links and pipes, any text, values that are not text). What a
user would notice is checked: the outcome is a report or one line on stderr (exit 1), an HTTP answer below 500
with a message, or an MCP refusal naming the allowed folders; the outside folder and the run folder are left as
they were and nothing is written beside them; no picture or text of the secret reaches a report or a reply; and
an audit hook watching every ``open`` confirms that no pipe is ever opened and no file outside is opened at all,
but for the one case a report reads a file outside its run: a sample image of a row that carries the digest of
its image's bytes, hashed to compare (and shown only when they match, which no hand-edited row here can make).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import stat
import sys
import urllib.parse
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from docintent.cli import main

SECRET_WORD = "SECRET-7f3c9e"
fixture_ok = settings(suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow], deadline=None)

# --- what is opened -------------------------------------------------------------------------------------------

#: (path, writing) of every file opened while a check runs (None: nobody is watching).
_OPENED: list[tuple[str, bool]] | None = None
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event != "open" or _OPENED is None:
        return
    path, mode, flags = (tuple(args) + (None, None, None))[:3]
    if isinstance(path, bytes):
        path = os.fsdecode(path)
    if not isinstance(path, (str, os.PathLike)):
        return  # an open file descriptor
    path = os.fspath(path)
    writing = any(c in str(mode or "") for c in "wax+") or bool(isinstance(flags, int) and flags & _WRITE_FLAGS)
    _OPENED.append((path, writing))
    pipe = False
    with contextlib.suppress(OSError, ValueError):
        pipe = stat.S_ISFIFO(os.stat(path).st_mode)
    if pipe:  # opening it would wait for a writer: refused here (and recorded, so the check fails)
        raise OSError(f"{path}: the test refuses to open a named pipe")


sys.addaudithook(_audit)


@contextlib.contextmanager
def _watching():
    global _OPENED
    _OPENED = []
    try:
        yield _OPENED
    finally:
        _OPENED = None


def _real(path: str) -> Path:
    return Path(os.path.realpath(path))


def _check_opened(
    opened: list[tuple[str, bool]],
    world: Path,
    *,
    writable: list[Path],
    readable: list[Path],
    hashed: set[Path] | None = None,
) -> None:
    """No pipe opened; inside ``world``, files written only under ``writable``, read only under ``readable`` (or
    ``writable``) or among ``hashed``."""
    for path, writing in opened:
        real = _real(path)
        assert not (real.exists() and stat.S_ISFIFO(real.stat().st_mode)), f"a named pipe was opened: {path}"
        if not real.is_relative_to(world):
            continue  # Python's own files, fonts, the cache
        if writing:
            assert any(real.is_relative_to(w) for w in writable), f"written outside the report: {path}"
        else:
            assert any(real.is_relative_to(r) for r in [*readable, *writable]) or real in (hashed or set()), (
                f"read outside the run folder: {path}"
            )


def _tree(root: Path, skip: tuple[Path, ...] = ()) -> dict[str, Any]:
    """Every entry under ``root`` (links not followed): a file's bytes, a link's target, a folder, a pipe."""
    out: dict[str, Any] = {}
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        if any(here.is_relative_to(s) for s in skip):
            dirs[:] = []
            continue
        for name in dirs + files:
            path = here / name
            if any(path.is_relative_to(s) for s in skip):
                continue
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                out[str(path)] = ("link", os.readlink(path))
            elif stat.S_ISREG(mode):
                out[str(path)] = ("file", path.read_bytes())
            else:
                out[str(path)] = ("other", stat.S_IFMT(mode))
    return out


def _flat(data: bytes) -> bool:
    """Whether an encoded picture is one flat grey (every picture of the run is; the secret is noise)."""
    image = cv2.imdecode(np.frombuffer(data, np.uint8), cv2.IMREAD_GRAYSCALE)
    return image is not None and float(image.std()) < 20


# --- the world ---------------------------------------------------------------------------------------------------


def _noise(path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), np.random.default_rng(7).integers(0, 255, (90, 120, 3), dtype=np.uint8))


def _grey(path: Path, shade: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    cv2.imwrite(str(path), np.full((60, 80, 3), shade, np.uint8))


def _row(sid: str, strategy: str = "none", **changes: Any) -> dict[str, Any]:
    row = {
        "sample": {
            "id": sid,
            "image": "images/s1.png",
            "question": f"What is {sid}?",
            "answers": ["7"],
            "task": "doc",
            "subset": "DocVQA",
            "group": sid,
            "capture": 1,
            "degradations": [],
            "meta": {},
        },
        "strategy": strategy,
        "brain": "offline",
        "answer": "1",
        "score": 0.0,
        "correct": False,
        "seconds": 1.0,
        "error": None,
        "result": {"tools_used": 1, "prompt_tokens": 0, "completion_tokens": 0, "input_page": "abc123", "trace": []},
    }
    row.update(changes)
    return row


def _world(tmp: Path) -> dict[str, Path]:
    """``outside/`` (the secrets), ``runs/run`` (a run with links out, a looping link and pipes), ``runs/away`` (a
    link to a run folder outside the runs folder) and ``allowed/`` (an MCP server's folder, with the same traps)."""
    outside = tmp / "outside"
    _noise(outside / "secret.png")
    _noise(outside / "secret.jpg")
    _noise(outside / "abc123.jpg")
    (outside / "manifest.json").write_text(json.dumps({"brain": SECRET_WORD, "config": {"dataset": SECRET_WORD}}))
    (outside / "results.jsonl").write_text(json.dumps(_row("s9", answer=SECRET_WORD)) + "\n")
    elsewhere = tmp / "elsewhere" / "away"  # a whole run folder outside the runs folder
    elsewhere.mkdir(parents=True)
    (elsewhere / "results.jsonl").write_text(json.dumps(_row("s8", answer=SECRET_WORD)) + "\n")
    run = tmp / "runs" / "run"
    _grey(run / "images" / "s1.png", 200)
    _grey(run / "steps" / "abc123.jpg", 60)
    (run / "steps" / "out.jpg").symlink_to(outside / "secret.jpg")
    os.mkfifo(run / "steps" / "pipe.jpg")
    os.mkfifo(run / "pipe.png")
    (run / "link").symlink_to(outside, target_is_directory=True)
    (run / "loop").symlink_to("loop")
    (run / "images" / "out.png").symlink_to(outside / "secret.png")
    (tmp / "runs" / "away").symlink_to(elsewhere, target_is_directory=True)
    allowed = tmp / "allowed"
    _grey(allowed / "page.png", 200)
    (allowed / "out.png").symlink_to(outside / "secret.png")
    (allowed / "link").symlink_to(outside, target_is_directory=True)
    (allowed / "loop").symlink_to("loop")
    os.mkfifo(allowed / "pipe.png")
    return {"tmp": tmp, "outside": outside, "run": run, "runs": tmp / "runs", "allowed": allowed}


_SEGMENT = st.sampled_from(
    [
        "..",
        ".",
        "",
        "steps",
        "abc123",
        "abc123.jpg",
        "out.jpg",
        "pipe.jpg",
        "pipe.png",
        "link",
        "loop",
        "images",
        "s1.png",
        "out.png",
        "secret.png",
        "secret.jpg",
        "outside",
        "run",
        "runs",
        "away",
        "%2e%2e",
        "..%2f..",
        "..\\..",
        "\\",
        "~",
        "C:\\Windows",
    ]
)


def _path_texts(world: dict[str, Path]) -> st.SearchStrategy[str]:
    """Path strings a hostile file or client would write."""
    relative = st.lists(_SEGMENT, min_size=1, max_size=6).map("/".join)
    anchors = st.sampled_from(
        [
            str(world["outside"]),
            str(world["run"]),
            str(world["allowed"]),
            str(world["tmp"]),
            "",
            "~",
            "/",
            "/dev",
            "/proc/self",
        ]
    )
    return st.one_of(
        relative,
        st.tuples(anchors, relative).map("/".join),
        st.sampled_from(
            [
                str(world["outside"] / "secret.png"),
                str(world["run"] / "link" / "secret.png"),
                str(world["run"] / "pipe.png"),
                "page\x00.png",
                "/dev/zero",
                "/etc/passwd",
                "%2e%2e/%2e%2e/outside/secret.png",
                "..\\..\\outside\\secret.png",
            ]
        ),
        st.text(max_size=24),
    )


def _path_strings(world: dict[str, Path]) -> st.SearchStrategy[Any]:
    """:func:`_path_texts`, and values in their place that are no text at all."""
    return st.one_of(
        _path_texts(world),
        st.none(),
        st.integers(-2, 2),
        st.lists(st.text(max_size=4), max_size=2),
        st.dictionaries(st.text(max_size=3), st.text(max_size=3), max_size=1),
    )


def _place(path: Path, kind: str, content: bytes, outside: Path) -> None:
    """Make ``path`` a file of ``content``, a link out, a pipe, a folder, a dangling link or nothing."""
    if path.is_symlink() or path.is_file() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)
    if kind == "file":
        path.write_bytes(content)
    elif kind == "link out":
        path.symlink_to(outside / path.name)
    elif kind == "pipe":
        os.mkfifo(path)
    elif kind == "folder":
        path.mkdir()
    elif kind == "dangling link":
        path.symlink_to(outside / "no-such-file")


_json_junk = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-9, 10**12), st.floats(allow_nan=False), st.text(max_size=8)),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3),
    max_leaves=8,
)
_MANIFEST_KEYS = (
    "brain",
    "seed",
    "started",
    "finished",
    "prompt_version",
    "config",
    "git",
    "reproducibility",
    "versions",
    "sessions",
)


@st.composite
def _run_files(draw, world: dict[str, Path], traps: bool | None = None) -> dict[str, Any]:
    """The rows and the manifest of one example, and what each of the two files is: with ``traps``, either may be
    a link out, a pipe, a folder or a dangling link and the manifest any JSON (or none); without, both are files
    and the manifest an object whose text fields are path strings."""
    paths = _path_strings(world)
    rows = []
    for sid in ("s1", "s2", "s3"):
        row = _row(sid)
        row["sample"]["image"] = draw(paths)
        if draw(st.booleans()):
            row["steps_dir"] = draw(paths)
        row["result"]["input_page"] = draw(paths)
        row["result"]["trace"] = [
            {"phase": "tool", "action": "applied", "tool": "deshadowing", "after": draw(paths)}
            for _ in range(draw(st.integers(0, 2)))
        ]
        digest = draw(st.sampled_from(["absent", "hex", "text"]))
        if digest != "absent":
            row["sample_digest"] = "0" * 32 if digest == "hex" else draw(st.text(max_size=8))
        rows.append(row)
    texts = _path_texts(world)
    manifest: dict[str, Any] = {
        "brain": "offline",
        "config": {"dataset": draw(texts), "dataset_id": draw(texts)},
        "git": {"commit": draw(texts)},
    }
    for key in ("started", "finished", "prompt_version"):
        if draw(st.booleans()):
            manifest[key] = draw(texts)
    if traps is None:
        traps = draw(st.booleans())
    if not traps:
        return {"rows": rows, "results": "file", "manifest": "file", "manifest_bytes": json.dumps(manifest).encode()}
    for key in draw(st.lists(st.sampled_from(_MANIFEST_KEYS), max_size=3, unique=True)):
        manifest[key] = draw(st.one_of(_json_junk, paths))
    manifest_bytes = draw(
        st.sampled_from(
            [json.dumps(manifest).encode(), b"[1, 2]", b"\xff\xfe not UTF-8", b"[" * 5000 + b"]" * 5000, b"{"]
        )
    )
    kinds = ["file", "link out", "pipe", "folder", "dangling link"]
    return {
        "rows": rows,
        "results": draw(st.sampled_from(kinds)),
        "manifest": draw(st.sampled_from([*kinds, "none"])),
        "manifest_bytes": manifest_bytes,
    }


def _write_run(world: dict[str, Path], files: dict[str, Any]) -> None:
    run = world["run"]
    rows = b"".join(json.dumps(r).encode() + b"\n" for r in files["rows"])
    _place(run / "results.jsonl", files["results"], rows, world["outside"])
    _place(run / "manifest.json", files["manifest"], files["manifest_bytes"], world["outside"])


def _hashed(world: dict[str, Path], files: dict[str, Any]) -> set[Path]:
    """The files outside the run a report may open to compare their bytes with a row's digest: the absolute
    sample images of rows that carry a digest."""
    out = set()
    for row in files["rows"]:
        image = row["sample"]["image"]
        if isinstance(image, str) and "\x00" not in image and os.path.isabs(image) and "sample_digest" in row:
            out.add(_real(image))
    return out


# --- docintent report -------------------------------------------------------------------------------------------


def _report(world: dict[str, Path], files: dict[str, Any], report: Path, capsys) -> tuple[int, str]:
    """``docintent report`` of the run as ``files`` make it, checked for what it read and wrote; (exit, stderr)."""
    _write_run(world, files)
    shutil.rmtree(report, ignore_errors=True)
    before = _tree(world["tmp"])
    capsys.readouterr()
    with _watching() as opened:
        code = main(["report", str(world["run"]), "--out", str(report)])
    err = capsys.readouterr().err.strip()
    assert _tree(world["tmp"], skip=(report,)) == before, "a file outside the report folder changed"
    _check_opened(opened, world["tmp"], writable=[report], readable=[world["run"]], hashed=_hashed(world, files))
    if code == 0:
        pictures = list((report / "images").glob("*")) if (report / "images").exists() else []
        assert all(_flat(p.read_bytes()) for p in pictures), "a picture from outside the run is in the report"
        assert all(".." not in p.name for p in report.rglob("*"))
        for name in ("report.md", "report.html", "report.json"):
            assert SECRET_WORD not in (report / name).read_text(encoding="utf-8")
    return code, err


def test_any_path_in_a_row_or_a_manifest_gives_a_report_from_inside_the_run_only(tmp_path, capsys):
    """Path strings as a row's sample image, step folder, page names and a manifest's dataset: the report is made
    (exit 0), every picture in it from inside the run, nothing read or written elsewhere."""
    world = _world(tmp_path)

    @fixture_ok
    @given(files=_run_files(world, traps=False))
    @example(
        files={
            "rows": [
                _row("s1", steps_dir="steps"),
                _row("s2", steps_dir="link"),
                _row("s3", steps_dir="../../outside"),
            ],
            "results": "file",
            "manifest": "file",
            "manifest_bytes": b"{}",
        }
    )
    @example(
        files={
            "rows": [
                _row(
                    "s1",
                    sample={**_row("s1")["sample"], "image": str(world["outside"] / "secret.png")},
                    sample_digest="0" * 32,
                ),
                _row("s2", sample={**_row("s2")["sample"], "image": "../../outside/secret.png"}),
                _row("s3", sample={**_row("s3")["sample"], "image": "images/out.png"}),
            ],
            "results": "file",
            "manifest": "file",
            "manifest_bytes": b"{}",
        }
    )
    def check(files):
        code, err = _report(world, files, tmp_path / "report", capsys)
        assert code == 0, err

    check()


def test_any_run_folder_file_or_manifest_gives_a_report_or_one_line(tmp_path, capsys):
    """results.jsonl and manifest.json as links out, pipes, folders, dangling links; manifests of any JSON: a
    report, or exit 1 with one line - never a pipe waited on, a file outside read, a traceback."""
    world = _world(tmp_path)

    @fixture_ok
    @given(files=_run_files(world, traps=True))
    @example(files={"rows": [_row("s1")], "results": "file", "manifest": "pipe", "manifest_bytes": b"{}"})
    @example(files={"rows": [_row("s1")], "results": "link out", "manifest": "file", "manifest_bytes": b"{}"})
    def check(files):
        code, err = _report(world, files, tmp_path / "report", capsys)
        if code != 0:
            assert code == 1 and len(err.splitlines()) == 1 and err.startswith("docintent report: error: "), err
            assert "unexpected error" not in err and "Traceback" not in err

    check()


def test_a_report_shows_a_dataset_image_outside_the_run_only_when_the_row_was_written_for_its_bytes(tmp_path, capsys):
    """A benchmark run whose dataset lives outside the run folder: the report shows a failure's page from the
    dataset. The same row edited to name another picture outside the run (its digest kept) shows no picture."""
    from docintent.evaluation.datasets import load_dataset
    from docintent.evaluation.runner import BrainFactory, run_benchmark

    data = tmp_path / "data"
    _grey(data / "page.png", 200)
    (data / "samples.jsonl").write_text(
        json.dumps({"id": "s1", "image": "page.png", "question": "What is it?", "answers": ["7"], "task": "doc"}) + "\n"
    )
    run = tmp_path / "run"
    run_benchmark(
        load_dataset(f"jsonl:{data / 'samples.jsonl'}"),
        ["none"],
        BrainFactory("scripted", {"final": "1"}),
        run,
        progress=False,
        config={"dataset": f"jsonl:{data / 'samples.jsonl'}"},
    )
    assert main(["report", str(run), "--out", str(tmp_path / "report")]) == 0
    (picture,) = (tmp_path / "report" / "images").iterdir()
    assert _flat(picture.read_bytes())
    _noise(tmp_path / "private" / "scan.png")
    row = json.loads((run / "results.jsonl").read_text())
    row["sample"]["image"] = str(tmp_path / "private" / "scan.png")
    (run / "results.jsonl").write_text(json.dumps(row) + "\n")
    assert main(["report", str(run), "--out", str(tmp_path / "report2")]) == 0
    assert not (tmp_path / "report2" / "images").exists()
    assert (
        '"images": []' in (tmp_path / "report2" / "report.json").read_text().replace("\n", "").replace(" ", "")
        or not json.loads((tmp_path / "report2" / "report.json").read_text())["failures"][0]["images"]
    )


@pytest.mark.parametrize("which", ["results.jsonl", "manifest.json"])
@pytest.mark.parametrize("kind", ["link out", "pipe", "folder"])
def test_a_run_file_that_leads_out_or_is_no_file_is_one_line_naming_it(tmp_path, capsys, which, kind):
    world = _world(tmp_path)
    rows = json.dumps(_row("s1")).encode() + b"\n"
    _write_run(world, {"rows": [_row("s1")], "results": "file", "manifest": "file", "manifest_bytes": b"{}"})
    _place(world["run"] / which, kind, rows, world["outside"])
    capsys.readouterr()
    with _watching() as opened:  # a pipe opened is refused by the audit hook (and fails the check), not waited on
        assert main(["report", str(world["run"]), "--out", str(tmp_path / "report")]) == 1
    _check_opened(opened, tmp_path, writable=[tmp_path / "report"], readable=[world["run"]])
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(world["run"] / which) in err, err
    expected = {
        "link out": "a link out of the run folder",
        "pipe": "not a regular file",
        "folder": "not a regular file",
    }
    assert expected[kind] in err


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"[1]", "must be a JSON object, got list"),
        (b'{"config": "x"}', "'config' must be an object, got str"),
        (b'{"git": {"commit": 5}}', "'git.commit' must be text, got int"),
        (b'{"sessions": 3}', "'sessions' must be a list"),
        (b"\xff\xfe{}", "not valid UTF-8"),
        (b"[" * 100_000, "nested too deeply"),
    ],
    ids=["list", "config-text", "commit-number", "sessions-number", "not-utf8", "deep"],
)
def test_a_manifest_of_the_wrong_shape_is_one_line_in_report_and_bench(tmp_path, capsys, content, words):
    world = _world(tmp_path)
    _write_run(world, {"rows": [_row("s1")], "results": "file", "manifest": "file", "manifest_bytes": content})
    capsys.readouterr()
    assert main(["report", str(world["run"]), "--out", str(tmp_path / "report")]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "manifest.json" in err and words in err, err
    data = tmp_path / "data"
    _grey(data / "page.png", 200)
    (data / "samples.jsonl").write_text(
        json.dumps({"id": "s1", "image": "page.png", "question": "What is it?", "answers": ["7"], "task": "doc"}) + "\n"
    )
    assert (
        main(
            [
                "bench",
                "--dataset",
                f"jsonl:{data / 'samples.jsonl'}",
                "--brain",
                "scripted",
                "--no-progress",
                "--out",
                str(world["run"]),
            ]
        )
        == 1
    )
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "manifest.json" in err and words in err, err


# --- the service's runs browser and its other paths ----------------------------------------------------------------


def test_any_path_in_a_browsed_run_or_a_request_stays_inside_the_runs_and_data_folders(tmp_path):
    pytest.importorskip("fastapi", reason="the service needs the serve extra")
    from fastapi.testclient import TestClient

    from docintent.server import ServeConfig, create_app
    from server_helpers import scripted_factory

    world = _world(tmp_path)
    data = tmp_path / "data"
    config = ServeConfig(
        brains={"scripted": scripted_factory()},
        default_brain="scripted",
        warm_up=False,
        runs_dir=world["runs"],
        data_dir=data,
    )
    names = st.one_of(
        _path_texts(world), st.sampled_from(["run", "away", "..", "%2e%2e", "run/..", "run%2f..%2f..%2foutside"])
    )

    with TestClient(create_app(config)) as client:
        listing = client.get("/v1/benchmarks").json()
        assert "away" not in [entry["name"] for entry in listing]  # a link to a run folder elsewhere is no run here

        @fixture_ok
        @given(files=_run_files(world), name=names, index=st.one_of(st.integers(-2, 8).map(str), st.text(max_size=6)))
        def check(files, name, index):
            _write_run(world, files)
            before = _tree(tmp_path, skip=(data,))
            quoted = urllib.parse.quote(name, safe="")
            with _watching() as opened:
                replies = [
                    client.get("/v1/benchmarks"),
                    client.get("/v1/benchmarks/run"),
                    client.get(f"/v1/benchmarks/{quoted}"),
                    client.get(f"/v1/benchmarks/run/files/{quoted}"),
                    client.get(f"/v1/benchmarks/{quoted}/files/{urllib.parse.quote(index, safe='')}"),
                    client.get(f"/v1/runs/{quoted}"),
                    client.get(f"/v1/runs/{quoted}/pages/{quoted}.jpg"),
                ]
                report = replies[1]
                if report.status_code == 200:
                    for failure in report.json()["failures"]:
                        replies += [client.get(image["url"]) for image in failure["images"]]
            assert _tree(tmp_path, skip=(data,)) == before, "a file outside the service's data folder changed"
            _check_opened(opened, tmp_path, writable=[data], readable=[world["run"]], hashed=_hashed(world, files))
            for reply in replies:
                assert reply.status_code < 500, (reply.request.url, reply.text[:200])
                if reply.status_code >= 400:  # docintent's {"error": ...}, or the framework's own for a bad route
                    body = reply.json()
                    message = body.get("error") or json.dumps(body.get("detail"))
                    assert message and "\n" not in message and "Traceback" not in message
                assert SECRET_WORD.encode() not in reply.content
                if reply.headers.get("content-type", "").startswith("image/"):
                    assert _flat(reply.content), f"{reply.request.url} served a picture from outside the run"

        check()


# --- MCP ---------------------------------------------------------------------------------------------------------


def test_any_path_given_to_an_mcp_tool_is_inside_an_allowed_folder_or_refused(tmp_path):
    """Every MCP tool that takes a path (ask, restore, diagnose, extract, zoom: image_path; restore: output_path)
    takes it through Files.check: the real path inside an allowed folder, or one refusal naming the folders."""
    pytest.importorskip("mcp", reason="the MCP server needs the serve extra")
    from docintent.errors import ConfigError, InputError
    from docintent.server.mcp import Files

    world = _world(tmp_path)
    files = Files([world["allowed"]])
    allowed = _real(str(world["allowed"]))

    @settings(deadline=None)
    @given(path=_path_strings(world), must_exist=st.booleans())
    @example(path=str(world["allowed"] / "out.png"), must_exist=False)
    @example(path=str(world["allowed"] / ".." / "outside" / "secret.png"), must_exist=True)
    @example(path=str(world["allowed"] / "pipe.png"), must_exist=False)
    def check(path, must_exist):
        with _watching() as opened:
            try:
                target = files.check(path, must_exist=must_exist)
            except (ConfigError, InputError) as err:
                text = str(err)
                assert text and "\n" not in text
                if isinstance(err, ConfigError) and "outside" in text:
                    assert str(allowed) in text and "--allow" in text
                return
            finally:
                assert opened == []  # checking a path opens nothing
        assert target.is_relative_to(allowed) and target == _real(str(target))
        if target.exists() or must_exist:
            assert target.is_file(), f"{path!r} -> {target}: not a regular file"
        outside = _real(str(world["outside"]))
        assert not target.is_relative_to(outside)

    check()


def test_bench_never_writes_through_a_results_file_that_leads_out_of_its_run(tmp_path, capsys):
    data = tmp_path / "data"
    _grey(data / "page.png", 200)
    (data / "samples.jsonl").write_text(
        json.dumps({"id": "s1", "image": "page.png", "question": "What is it?", "answers": ["7"], "task": "doc"}) + "\n"
    )
    outside = tmp_path / "elsewhere" / "notes.txt"
    outside.parent.mkdir()
    outside.write_text("a file of somebody else's\n")
    run = tmp_path / "run"
    run.mkdir()
    os.symlink(outside, run / "results.jsonl")
    capsys.readouterr()
    assert (
        main(
            [
                "bench",
                "--dataset",
                f"jsonl:{data / 'samples.jsonl'}",
                "--brain",
                "scripted",
                "--no-progress",
                "--out",
                str(run),
            ]
        )
        == 1
    )
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "a link out of the run folder" in err, err
    assert outside.read_text() == "a file of somebody else's\n"  # nothing appended, nothing cut off
