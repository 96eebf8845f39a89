"""The HTTP API of ``docintent serve`` through FastAPI's test client: every endpoint and every limit."""

from __future__ import annotations

import io
import json
import os
import re
import threading
import time

import pytest

from needs import need_module

need_module("fastapi", "the service needs the serve extra: pip install 'docintent[serve]'")

from fastapi.testclient import TestClient  # noqa: E402
from PIL import Image  # noqa: E402

from docintent.server import ServeConfig, create_app  # noqa: E402
from docintent.server.config import brain_factory  # noqa: E402
from server_helpers import ANSWER, damaged_page, make_benchmark_run, png_bytes, scripted_factory  # noqa: E402


@pytest.fixture(scope="module")
def page_png() -> bytes:
    return png_bytes(damaged_page())


def _config(**overrides) -> ServeConfig:
    brains = overrides.pop("brains", None) or {"scripted": scripted_factory(), "offline": brain_factory("offline")}
    return ServeConfig(
        brains=brains, default_brain=overrides.pop("default_brain", "scripted"), warm_up=False, **overrides
    )


@pytest.fixture()
def client():
    with TestClient(create_app(_config(workers=2))) as c:
        yield c


def _ask(client, data: bytes, name: str = "invoice.png", **fields):
    form = {"question": "What is the total amount due?", **{k: str(v) for k, v in fields.items()}}
    return client.post("/v1/ask", files={"file": (name, data, "application/octet-stream")}, data=form)


def _wait(client, run_id: str, timeout: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        run = client.get(f"/v1/runs/{run_id}").json()
        if run["status"] in ("done", "failed", "timeout"):
            return run
        time.sleep(0.02)
    raise AssertionError(f"run {run_id} did not finish")


def _events(client, run_id: str) -> list[tuple[str, dict]]:
    out = []
    with client.stream("GET", f"/v1/runs/{run_id}/events") as response:
        assert response.headers["content-type"].startswith("text/event-stream")
        kind = None
        for line in response.iter_lines():
            if line.startswith("event: "):
                kind = line[7:]
            elif line.startswith("data: "):
                out.append((kind, json.loads(line[6:])))
    return out


# -- asking -----------------------------------------------------------------------------------------------


def test_ask_answers_at_once_with_a_run_id_while_the_run_waits_for_its_brain(page_png):
    gate = threading.Event()
    config = _config(brains={"scripted": scripted_factory(gate=gate)})
    with TestClient(create_app(config)) as client:
        started = time.perf_counter()
        response = _ask(client, page_png)
        assert time.perf_counter() - started < 5.0
        assert response.status_code == 202
        run_id = response.json()["id"]
        assert client.get(f"/v1/runs/{run_id}").json()["status"] in ("queued", "running")
        gate.set()
        run = _wait(client, run_id)
    assert run["status"] == "done"
    assert run["answer"] == ANSWER
    assert run["tools_kept"] == ["deshadowing"]
    assert run["tools_rolled_back"] == ["deblurring"]
    assert [(s["phase"], s["action"], s["tool"]) for s in run["trace"]] == [
        ("A", "use_tool", "deshadowing"),
        ("tool", "applied", "deshadowing"),
        ("B", "keep", "deshadowing"),
        ("A", "use_tool", "deblurring"),
        ("tool", "applied", "deblurring"),
        ("B", "rollback", "deblurring"),
        ("A", "answer", None),
    ]
    # the page after the rolled-back deblurring is kept as a page state, but the final page is the deshadowed one
    assert len(run["pages"]) == 3 and run["final_page"] == run["pages"][1]
    # what the run cost, counted: two tool runs that each wrote the page's pixels, two reviews
    height, width = damaged_page().shape[:2]
    assert run["work"] == {"tool_runs": 2, "reviews": 2, "inspections": 0, "pixels_restored": 2 * width * height}


def test_events_stream_every_step_in_order_then_the_finished_run(client, page_png):
    run_id = _ask(client, page_png).json()["id"]
    events = _events(client, run_id)
    kinds = [k for k, _ in events]
    assert kinds[0] == "status" and kinds[-1] == "done"
    steps = [d for k, d in events if k == "step"]
    done = events[-1][1]
    assert [s["index"] for s in steps] == list(range(len(done["trace"])))
    assert [(s["phase"], s["action"], s["tool"]) for s in steps] == [
        (s["phase"], s["action"], s["tool"]) for s in done["trace"]
    ]
    assert done["answer"] == ANSWER and done["status"] == "done"
    # the last event carries where the answer came from, so a client needs no other request to show it
    assert done["page"] == 1 and "box" in done and "evidence" in done and done["answer_page"] == done["pages"][0]
    assert all(s["text"] for s in steps) and steps[0]["text"].startswith("a shadow lies over the text: run deshadowing")
    # a client that reconnects with Last-Event-ID gets only what it missed
    with client.stream("GET", f"/v1/runs/{run_id}/events", headers={"Last-Event-ID": str(len(events) - 2)}) as r:
        body = r.read().decode()
    assert body.count("event: ") == 1 and "event: done" in body


def test_every_page_state_is_served_as_jpeg_and_nothing_else(client, page_png):
    run = _wait(client, _ask(client, page_png).json()["id"])
    sizes = set()
    for page_hash in run["pages"]:
        response = client.get(f"/v1/runs/{run['id']}/pages/{page_hash}.jpg")
        assert response.status_code == 200 and response.headers["content-type"] == "image/jpeg"
        sizes.add(Image.open(io.BytesIO(response.content)).size)
    assert sizes == {Image.open(io.BytesIO(page_png)).size}
    for bad in [
        "0" * 20 + ".jpg",
        run["pages"][0],
        run["pages"][0] + ".png",
        "..%2f..%2fetc%2fpasswd.jpg",
        "%2e%2e%2f" + run["pages"][0] + ".jpg",
    ]:
        response = client.get(f"/v1/runs/{run['id']}/pages/{bad}")
        assert response.status_code == 404, bad
        assert b"root:" not in response.content


def test_trace_json_and_the_evidence_box_of_the_answer(page_png):
    # The offline reader answers from the page itself; the evidence box must surround "$1,250.00".
    with TestClient(create_app(_config(default_brain="offline"))) as client:
        run = _wait(client, _ask(client, page_png, strategy="none").json()["id"], timeout=120)
        assert run["answer"] == ANSWER, run
        trace = client.get(f"/v1/runs/{run['id']}/trace.json")
        assert trace.headers["content-disposition"].startswith("attachment")
        assert json.loads(trace.content)["trace"] == run["trace"]
        evidence = client.get(f"/v1/runs/{run['id']}/evidence").json()
    # the run itself says where the answer was read: page 1, the box around the total's line, the evidence line
    assert run["page"] == 1 and run["answer_page"] == run["pages"][0]
    assert any(ANSWER in line["text"] and line["confidence"] > 0.5 for line in run["evidence"])
    assert evidence["text"].replace(" ", "").endswith(ANSWER)
    x0, y0, x1, y1 = evidence["box"]
    # the total is on the third of three lines, right of its label
    assert 0.3 < x0 < x1 < 0.9 and 0.5 < y0 < y1 < 0.95
    # the answer's own box is the total's line (the third of three), not a region around several lines
    bx0, by0, bx1, by1 = run["box"]
    assert 0.55 < by0 < by1 < 0.8 and bx0 < 0.1 < 0.5 < bx1


def test_tools_health_and_config(client):
    tools = client.get("/v1/tools").json()
    names = {t["name"] for t in tools}
    assert {"deshadowing", "deblurring", "dewarping", "zoom"} <= names
    assert all(t["parameters"]["type"] == "object" and t["description"] for t in tools)
    health = client.get("/v1/health").json()
    assert health["status"] == "ok" and health["model_endpoint"] is None
    assert health["brains"] == ["scripted", "offline"]
    assert health["ocr_engine"]["loaded"] is False  # these tests start without loading the OCR models
    config = client.get("/v1/config").json()
    assert "docintent" in config["strategies"] and config["default_brain"] == "scripted"
    assert config["runs_browser"] is False


def test_the_run_list_shows_every_run_newest_first_with_its_question_answer_and_link(page_png):
    with TestClient(create_app(_config(workers=1))) as client:
        assert client.get("/v1/runs").json() == {"runs": [], "total": 0}
        first = _ask(client, page_png, name="march.png", question="What is the total amount due?").json()["id"]
        _wait(client, first)
        second = _ask(client, page_png, name="april.png", question="Who issued the invoice?").json()["id"]
        _wait(client, second)
        listing = client.get("/v1/runs").json()
        assert listing["total"] == 2
        assert [r["id"] for r in listing["runs"]] == [second, first]  # newest first
        newest, oldest = listing["runs"]
        assert newest["question"] == "Who issued the invoice?" and newest["input"] == "april.png"
        assert oldest["question"] == "What is the total amount due?"
        assert oldest["status"] == "done" and oldest["answer"] == ANSWER
        assert oldest["created"] <= newest["created"]
        assert oldest["links"] == {"self": f"/v1/runs/{first}", "viewer": f"/#/run/{first}"}
        assert client.get(oldest["links"]["self"]).json()["answer"] == ANSWER  # the link opens the run
        # bounded: a limit lists the newest runs and says how many there are
        assert [r["id"] for r in client.get("/v1/runs?limit=1").json()["runs"]] == [second]
        for bad in ("0", "501", "many"):
            response = client.get(f"/v1/runs?limit={bad}")
            assert (
                response.status_code == 400
                and "limit must be a whole number between 1 and 500" in response.json()["error"]
            )


def test_the_sample_page_is_the_demos_damaged_letter_with_its_question(client):
    sample = client.get("/v1/sample").json()
    assert sample["question"] == "Who is the letter from?" and sample["task"] == "doc"
    assert "upside down" in sample["damage"]
    image = client.get(sample["image"])
    assert image.headers["content-type"] == "image/jpeg"
    assert Image.open(io.BytesIO(image.content)).size[0] > 500


def test_the_page_says_whether_the_service_wants_a_token():
    with TestClient(create_app(_config())) as client:
        assert 'data-token="none"' in client.get("/").text
    with TestClient(create_app(_config(token="page-token-42"))) as client:
        assert 'data-token="required"' in client.get("/").text
        assert client.get("/v1/runs").status_code == 401  # the list is the token holder's, as every run is


def test_health_reports_an_unreachable_model_endpoint():
    config = _config(model_base_url="http://127.0.0.1:9/v1")
    with TestClient(create_app(config)) as client:
        health = client.get("/v1/health").json()
    assert health["status"] == "degraded"
    assert health["model_endpoint"]["reachable"] is False and health["model_endpoint"]["problem"]


# -- limits and safety --------------------------------------------------------------------------------------


def test_an_upload_over_the_limit_is_refused_with_413(page_png):
    with TestClient(create_app(_config(max_upload_bytes=len(page_png) - 1))) as client:
        response = _ask(client, page_png)
        assert response.status_code == 413
        assert "larger than the limit" in response.json()["error"]
        # a client that sends no Content-Length (chunked) is cut off as well
        boundary = "xyz"
        body = (
            f'--{boundary}\r\nContent-Disposition: form-data; name="question"\r\n\r\nq?\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n'
        ).encode()
        body += page_png * 40 + f"\r\n--{boundary}--\r\n".encode()

        def chunks():
            for i in range(0, len(body), 65536):
                yield body[i : i + 65536]

        response = client.post(
            "/v1/ask", content=chunks(), headers={"Content-Type": f"multipart/form-data; boundary={boundary}"}
        )
        assert response.status_code == 413


def test_the_type_comes_from_the_bytes_not_the_name(client, page_png):
    response = _ask(client, b"name,total\nINV-2041,1250\n" * 20, name="invoice.png")
    assert response.status_code == 415
    assert response.json()["error"].startswith("invoice.png: not an image or PDF")
    assert _ask(client, page_png, name="notes.txt").status_code == 202


def test_decompression_bombs_and_corrupt_files_get_the_loaders_message(page_png):
    with TestClient(create_app(_config(max_pixels=4_000_000))) as client:
        bomb = io.BytesIO()
        Image.new("1", (4000, 4000)).save(bomb, "PNG")  # 16 M pixels in about 2 KB
        assert len(bomb.getvalue()) < 10_000
        response = _ask(client, bomb.getvalue(), name="bomb.png")
        assert response.status_code == 400
        assert (
            response.json()["error"]
            == "bomb.png: 4000x4000 = 16,000,000 pixels exceeds the limit of 4,000,000 (set DOCINTENT_MAX_PIXELS to raise it)"
        )
        response = _ask(client, page_png[:60] + b"\x00" * 200, name="cut.png")
        assert response.status_code == 400
        message = response.json()["error"]
        assert message.startswith("cut.png: ") and "/tmp" not in message and "docintent-serve" not in message
        response = _ask(client, b"", name="empty.png")
        assert response.status_code == 400 and "empty" in response.json()["error"]


def test_form_values_are_checked(client, page_png):
    assert "question is empty" in _ask(client, page_png, question=" ").json()["error"]
    assert "strategy must be one of" in _ask(client, page_png, strategy="../../x").json()["error"]
    assert "brain must be one of" in _ask(client, page_png, brain="openai").json()["error"]
    assert (
        _ask(client, page_png, strategy="docintnet")
        .json()["error"]
        .endswith("got 'docintnet' (did you mean 'docintent'?)")
    )
    assert _ask(client, page_png, task="chrt").json()["error"] == (
        "task must be one of doc, chart, table: got 'chrt' (did you mean 'chart'?)"
    )
    assert "max_rounds" in _ask(client, page_png, max_rounds=99).json()["error"]
    assert (
        "the page field counted pages from 0 and is gone; send pages, counted from 1"
        in _ask(client, page_png, page=2).json()["error"]
    )
    assert "an image has one page (page 1)" in _ask(client, page_png, pages=2).json()["error"]
    missing = client.post("/v1/ask", data={"question": "q"})
    assert missing.status_code == 400 and "'file'" in missing.json()["error"]


def test_a_whole_pdf_is_answered_from_the_page_that_holds_the_answer(client, tmp_path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    path = tmp_path / "two.pdf"
    with PdfPages(path) as pdf:
        for text in ("Dear customer, thank you for your order.", "Total amount due: $1,250.00"):
            fig = plt.figure(figsize=(4, 2))
            fig.text(0.1, 0.5, text, fontsize=12)
            pdf.savefig(fig)
            plt.close(fig)
    data = path.read_bytes()
    run = _wait(client, _ask(client, data, name="two.pdf", brain="offline", strategy="none").json()["id"], timeout=120)
    assert run["status"] == "done" and run["answer"] == ANSWER
    # the run says where the answer came from: page 2, a box on it, the line it was read from
    assert run["page"] == 2 and run["answer_page"] in run["pages"]
    x0, y0, x1, y1 = run["box"]
    assert 0 <= x0 < x1 <= 1 and 0 <= y0 < y1 <= 1
    assert [line["text"] for line in run["evidence"]] == ["Total amount due: $1,250.00"]
    assert run["trace"][0]["phase"] == "locate" and "reading page 2" in run["trace"][0]["text"]
    only_first = _wait(
        client, _ask(client, data, name="two.pdf", brain="offline", strategy="none", pages=1).json()["id"], timeout=120
    )
    assert only_first["answer"] != ANSWER and only_first["page"] in (1, None)
    response = _ask(client, data, name="two.pdf", pages=5)
    assert (
        response.status_code == 400
        and response.json()["error"]
        == "two.pdf: --pages '5': page 5 is outside this 2-page document (pages 1-2; pages count from 1)"
    )


def test_every_request_is_one_access_log_line(client, page_png, caplog):
    with caplog.at_level("INFO", logger="docintent.access"):
        client.get("/v1/health")
        client.get("/v1/runs/" + "0" * 32)
    lines = [r.getMessage() for r in caplog.records if r.name == "docintent.access"]
    assert len(lines) == 2
    assert '"GET /v1/health" 200 ' in lines[0] and lines[0].endswith(" ms")
    assert '"GET /v1/runs/' + "0" * 32 + '" 404 ' in lines[1]


@pytest.mark.parametrize(
    "path",
    [
        "/v1/runs/not-a-run",
        "/v1/runs/" + "0" * 32,
        "/v1/runs/..%2f..%2fetc%2fpasswd",
        "/v1/runs/%2e%2e%2f%2e%2e%2fetc%2fpasswd/events",
        "/v1/runs/..%2f/pages/x.jpg",
        "/v1/runs/" + "a" * 33,
        "/static/..%2f__init__.py",
        "/static/%2e%2e%2fapp.py",
        "/v1/benchmarks/..%2f..",
        "/v1/runs/" + "0" * 32 + "/evidence",
    ],
)
def test_bad_run_ids_and_traversal_attempts_are_404(client, path):
    response = client.get(path)
    assert response.status_code == 404
    assert b"root:" not in response.content and b"import" not in response.content


def test_a_bearer_token_guards_every_endpoint_but_health(page_png):
    token = "s3cret-token"
    with TestClient(create_app(_config(token=token))) as client:
        for method, path in [
            ("post", "/v1/ask"),
            ("get", "/v1/tools"),
            ("get", "/v1/config"),
            ("get", "/v1/runs/" + "0" * 32),
        ]:
            response = getattr(client, method)(path)
            assert response.status_code == 401, path
            assert response.headers["www-authenticate"] == "Bearer"
        wrong = client.get("/v1/tools", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401 and "bearer token" in wrong.json()["error"]
        assert client.get("/v1/health").status_code == 200
        assert client.get("/").status_code == 200  # the page holds no data; it asks for the token
        headers = {"Authorization": f"Bearer {token}"}
        response = client.post(
            "/v1/ask",
            headers=headers,
            files={"file": ("a.png", page_png)},
            data={"question": "What is the total amount due?"},
        )
        assert response.status_code == 202
        run = client.get(f"/v1/runs/{response.json()['id']}", headers=headers)
        assert run.status_code == 200


def test_token_from_the_environment(monkeypatch):
    monkeypatch.setenv("DOCINTENT_SERVE_TOKEN", "from-the-env-123")
    assert ServeConfig.token_from_env() == "from-the-env-123"
    from docintent.cli import build_parser
    from docintent.commands.serve import build_config

    config = build_config(build_parser().parse_args(["serve"]))
    assert config.token == "from-the-env-123"
    assert build_config(build_parser().parse_args(["serve", "--token", "given-on-cli"])).token == "given-on-cli"


def test_cors_is_off_unless_an_origin_is_allowed(client):
    origin = {"Origin": "https://elsewhere.example"}
    assert "access-control-allow-origin" not in client.get("/v1/tools", headers=origin).headers
    with TestClient(create_app(_config(cors_origins=("https://elsewhere.example",)))) as allowed:
        response = allowed.get("/v1/tools", headers=origin)
    assert response.headers["access-control-allow-origin"] == "https://elsewhere.example"


def test_a_run_past_its_time_limit_is_stopped(page_png):
    config = _config(brains={"scripted": scripted_factory(delay=0.4)}, run_timeout_s=0.6)
    with TestClient(create_app(config)) as client:
        run = _wait(client, _ask(client, page_png).json()["id"])
        assert run["status"] == "timeout"
        assert "longer than the service's limit" in run["error"]
        # the worker is free again: the next run starts
        assert client.get("/v1/health").json()["runs"]["timeout"] == 1


def test_finished_runs_are_evicted_by_count_and_age_from_memory_and_disk(page_png, tmp_path):
    config = _config(keep_runs=2, keep_seconds=600, data_dir=tmp_path)
    with TestClient(create_app(config)) as client:
        ids = []
        for _ in range(4):
            ids.append(_ask(client, page_png).json()["id"])
            _wait(client, ids[-1])
        client.app.state.store.evict()
        kept = [i for i in ids if client.get(f"/v1/runs/{i}").status_code == 200]
        assert kept == ids[-2:]
        on_disk = sorted(p.name for p in (tmp_path / "runs").iterdir())
        assert on_disk == sorted(ids[-2:])
        client.app.state.store.evict(now=time.time() + 601)
        assert all(client.get(f"/v1/runs/{i}").status_code == 404 for i in ids)
        assert list((tmp_path / "runs").iterdir()) == []
        assert client.get("/v1/health").json()["runs"]["evicted"] == 4


def test_eight_concurrent_runs_all_finish_with_their_own_answers(page_png):
    answers = [f"answer-{i}" for i in range(8)]
    brains = {f"b{i}": scripted_factory(answer=a, delay=0.05) for i, a in enumerate(answers)}
    config = _config(brains=brains, default_brain="b0", workers=4)
    with TestClient(create_app(config)) as client:
        ids = [None] * 8

        def submit(i: int) -> None:
            ids[i] = _ask(client, page_png, brain=f"b{i}").json()["id"]

        threads = [threading.Thread(target=submit, args=(i,)) for i in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        runs = [_wait(client, run_id) for run_id in ids]
    assert len(set(ids)) == 8
    assert [r["status"] for r in runs] == ["done"] * 8
    assert [r["answer"] for r in runs] == answers
    assert all(r["tools_kept"] == ["deshadowing"] for r in runs)


def test_a_full_queue_answers_503_and_the_service_keeps_working(page_png):
    gate = threading.Event()
    config = _config(brains={"scripted": scripted_factory(gate=gate)}, workers=1, max_queued=1)
    with TestClient(create_app(config)) as client:
        first = _ask(client, page_png).json()["id"]
        deadline = time.monotonic() + 10
        while client.get(f"/v1/runs/{first}").json()["status"] != "running" and time.monotonic() < deadline:
            time.sleep(0.02)
        second = _ask(client, page_png).json()["id"]
        refused = _ask(client, page_png)
        assert refused.status_code == 503 and refused.headers["retry-after"] == "5"
        assert "waiting for a worker" in refused.json()["error"]
        assert client.get("/v1/health").status_code == 200
        gate.set()
        assert [_wait(client, i)["status"] for i in (first, second)] == ["done", "done"]


def test_a_model_brain_configured_on_the_command_line_serves_requests(page_png):
    from docintent.cli import build_parser
    from docintent.commands.serve import build_config
    from docintent.testing.fake_openai import FakeOpenAI, images, tool_call

    script = [
        tool_call("deshadowing", content="A shadow covers the total."),
        tool_call("rollback", reason="the digits lost contrast"),
        tool_call("answer", answer="$1,250.00", confidence="high"),
    ]
    with FakeOpenAI(script) as model:
        args = build_parser().parse_args(
            [
                "serve",
                "--brain",
                "offline",
                "--brain",
                "openai",
                "--brain-opt",
                f"base_url={model.base_url}",
                "--brain-opt",
                f"model={model.model}",
            ]
        )
        config = build_config(args)
        assert list(config.brains) == ["offline", "openai"] and config.model_base_url == model.base_url
        with TestClient(create_app(config)) as client:
            health = client.get("/v1/health").json()
            assert health["status"] == "ok" and health["model_endpoint"]["reachable"] is True
            run = _wait(client, _ask(client, page_png, brain="openai", strategy="docintent").json()["id"])
        requests = model.chat_requests
    assert run["status"] == "done" and run["answer"] == "$1,250.00" and run["brain"] == "openai"
    assert run["tools_rolled_back"] == ["deshadowing"] and run["tools_kept"] == []
    rollback = next(s for s in run["trace"] if s["action"] == "rollback")
    assert rollback["reason"] == "the digits lost contrast"
    assert len(requests) == 3 and all(images(r) for r in requests)  # the model saw the page each time


# -- the runs browser ------------------------------------------------------------------------------------------


def test_the_runs_browser_shows_the_figures_of_docintent_report(tmp_path):
    from docintent.cli import main

    root = tmp_path / "runs"
    make_benchmark_run(root)
    (root / "not-a-run").mkdir()
    with TestClient(create_app(_config(runs_dir=root))) as client:
        listing = client.get("/v1/benchmarks").json()
        assert [r["name"] for r in listing] == ["offline-synth"]
        assert listing[0]["rows"] == 16 and listing[0]["strategies"] == ["none", "pipeline-fixed", "docintent", "agres"]
        report = client.get("/v1/benchmarks/offline-synth").json()
        assert client.get("/v1/benchmarks/not-a-run").status_code == 404
        plot = client.get(report["plots"]["degradations"])
        assert plot.headers["content-type"] == "image/png"
        assert client.get("/v1/benchmarks/offline-synth/files/999").status_code == 404
    assert main(["report", str(root / "offline-synth"), "--out", str(tmp_path / "report")]) == 0
    markdown = (tmp_path / "report" / "report.md").read_text()
    for row in report["table1"]["cells"] + report["table2"]["cells"]:
        assert "| " + " | ".join(row) + " |" in markdown
    assert [r[0] for r in report["table1"]["cells"]] == ["none", "pipeline-fixed", "docintent"]
    assert [r[0] for r in report["table2"]["cells"]] == ["agres", "docintent"]
    assert report["failures"] and all(f["images"] for f in report["failures"])
    width, height = Image.open(io.BytesIO(plot.content)).size
    assert height >= 300 and width / height < 3.5


# -- the command line ------------------------------------------------------------------------------------------


def test_docintent_serve_starts_and_answers(tmp_path):
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    from server_helpers import free_port

    port = free_port()
    env = {**os.environ, "DOCINTENT_SERVE_TOKEN": "a-long-token"}
    proc = subprocess.Popen(
        [sys.executable, "-m", "docintent", "serve", "--port", str(port), "--workers", "1"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        deadline = time.monotonic() + 90
        health = None
        while time.monotonic() < deadline and health is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/v1/health", timeout=2) as response:
                    health = json.loads(response.read())
            except OSError:
                assert proc.poll() is None, proc.communicate()[1]
                time.sleep(0.2)
        # Without the token /v1/health tells only whether the service is up; with it, the details.
        assert health == {"status": "ok", "version": health["version"]}
        token = {"Authorization": "Bearer a-long-token"}
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/health", headers=token)
        with urllib.request.urlopen(request, timeout=5) as response:
            health = json.loads(response.read())
        assert health["status"] == "ok" and health["workers"] == 1
        assert health["ocr_engine"]["loaded"] is True and health["ocr_engine"]["kind"]
        request = urllib.request.Request(f"http://127.0.0.1:{port}/v1/tools")
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(request, timeout=5)
        assert refused.value.code == 401
    finally:
        proc.terminate()
        out, err = proc.communicate(timeout=30)
    assert f"http://127.0.0.1:{port}/" in out and "bearer token required" in out
    # one access line per request on stderr: client, method and path, status, milliseconds
    assert re.search(r'127\.0\.0\.1 "GET /v1/health" 200 [\d.]+ ms', err), err
    assert re.search(r'127\.0\.0\.1 "GET /v1/tools" 401 [\d.]+ ms', err), err


@pytest.mark.parametrize(
    "args, message",
    [
        (["--runs", "no-such-folder"], "--runs must be a folder"),
        (["--workers", "0"], "--workers"),
        (["--token", "short"], "at least 8 characters"),
    ],
)
def test_docintent_serve_refuses_bad_options(args, message, capsys):
    from docintent.cli import main

    assert main(["serve", *args]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("docintent serve: error:") and message in err and "\n" not in err


# -- hostile clients and careless start-ups ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, env, message",
    [
        (["--token", ""], {}, "empty, which would serve every endpoint without authentication"),
        (["--token", "        "], {}, "empty"),
        ([], {"DOCINTENT_SERVE_TOKEN": ""}, "DOCINTENT_SERVE_TOKEN is empty"),
        (["--brain", "nosuch"], {}, "--brain nosuch: unknown brain 'nosuch'"),
        (
            ["--brain", "openai", "--brain-opt", "base_url=http://127.0.0.1:9/v1", "--brain-opt", "tiemout=3"],
            {},
            "--brain openai: brain 'openai': unknown option 'tiemout'",
        ),
        (["--port", "-1"], {}, "--port"),
        (["--max-upload-mb", "nan"], {}, "--max-upload-mb"),
        (["--keep-minutes", "0"], {}, "--keep-minutes"),
    ],
)
def test_serve_refuses_at_start_what_would_serve_open_or_broken(args, env, message, monkeypatch, capsys):
    from docintent.cli import main

    for key, value in env.items():
        monkeypatch.setenv(key, value)
    assert main(["serve", *args]) == 1
    err = capsys.readouterr().err.strip()
    assert message in err and "\n" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    "field, value",
    [
        ("run_timeout_s", float("nan")),
        ("keep_seconds", float("inf")),
        ("max_pixels", 0),
        ("max_upload_bytes", -1),
        ("token", ""),
    ],
)
def test_service_limits_are_checked_in_the_library_too(field, value):
    from docintent.errors import ConfigError

    with pytest.raises(ConfigError):
        _config(**{field: value})


def test_health_tells_only_token_holders_the_details(page_png):
    token = "s3cret-token"
    with TestClient(create_app(_config(token=token))) as client:
        anonymous = client.get("/v1/health").json()
        wrong = client.get("/v1/health", headers={"Authorization": "Bearer nope-nope"}).json()
        full = client.get("/v1/health", headers={"Authorization": f"Bearer {token}"}).json()
    assert set(anonymous) == set(wrong) == {"status", "version"}
    assert full["brains"] == ["scripted", "offline"] and "runs" in full


@pytest.mark.parametrize("value", ["١٢", "9" * 5000, "-1", "1 2", "1e3"])
def test_a_malformed_last_event_id_is_a_400(value, client, page_png):
    run_id = _ask(client, page_png).json()["id"]
    _wait(client, run_id)
    response = client.get(f"/v1/runs/{run_id}/events", headers={"Last-Event-ID": value.encode("utf-8")})
    assert response.status_code == 400 and "Last-Event-ID" in response.json()["error"]


def test_resuming_events_past_the_end_of_a_finished_run_ends_at_once(client, page_png):
    run_id = _ask(client, page_png).json()["id"]
    _wait(client, run_id)
    started = time.perf_counter()
    response = client.get(f"/v1/runs/{run_id}/events", headers={"Last-Event-ID": "1000000"})
    assert response.status_code == 200 and "event:" not in response.text
    assert time.perf_counter() - started < 5.0  # before: it waited for an event that never comes
    rest = client.get(f"/v1/runs/{run_id}/events", headers={"Last-Event-ID": "1"}).text
    assert "id: 2\n" in rest and "event: done" in rest and "id: 1\n" not in rest


@pytest.mark.parametrize("field, value", [("page", "²"), ("page", "99999999999999999999999"), ("max_rounds", "٣")])
def test_form_numbers_are_parsed_with_bounds(field, value, client, page_png):
    response = _ask(client, page_png, **{field: value})
    assert response.status_code == 400 and field in response.json()["error"]


def test_a_run_stuck_where_its_deadline_is_not_checked_still_ends_as_a_timeout(page_png):
    """The brain's own call hangs (an endpoint that never answers): the watchdog ends the run at its deadline and
    drops the late result."""
    from docintent.brains import Answer, FunctionBrain

    release = threading.Event()

    def stuck(state):
        release.wait(30)
        return Answer("late", 0.9, "")

    config = _config(brains={"scripted": lambda: FunctionBrain(decide=stuck, answer=stuck)}, run_timeout_s=0.5)
    with TestClient(create_app(config)) as client:
        run_id = _ask(client, page_png).json()["id"]
        run = _wait(client, run_id, timeout=20)
        release.set()
        time.sleep(0.3)
        after = client.get(f"/v1/runs/{run_id}").json()
    assert run["status"] == "timeout" and "limit of 0.5 s" in run["error"]
    assert after["status"] == "timeout" and after["answer"] is None  # the late answer was dropped


def test_extract_returns_the_uploaded_page_as_structure(page_png):
    with TestClient(create_app(_config())) as client:
        response = client.post(
            "/v1/extract",
            files={"file": ("invoice.png", page_png, "application/octet-stream")},
            data={"restore": "false"},
        )
        empty = client.post("/v1/extract", data={"restore": "false"})
    assert response.status_code == 200, response.text
    data = response.json()
    assert data["schema"] == "docintent.extract" and data["documents"][0]["file"] == "invoice.png"
    page = data["documents"][0]["pages"][0]
    assert page["restored"] == [] and any("1,250.00" in b["text"] for b in page["blocks"])
    assert empty.status_code == 400 and "multipart field 'file'" in empty.json()["error"]


def test_serve_hands_brain_options_to_the_brain_that_takes_them(monkeypatch):
    """--brain-opt reaches the named brain whose options accept them (a plug-in brain as well as openai), not a
    fixed one; options no named brain takes are one line at start."""
    from docintent.cli import build_parser
    from docintent.commands import serve

    seen = {}

    def fake_factory(kind, **options):
        seen[kind] = options
        return lambda: type("B", (), {"close": lambda self: None})()

    monkeypatch.setattr("docintent.server.config.brain_factory", fake_factory)
    monkeypatch.setattr(serve, "check_brain", lambda kind, make: None)
    monkeypatch.setattr("docintent.server.create_app", lambda config: (_ for _ in ()).throw(SystemExit(0)))
    args = build_parser().parse_args(
        ["serve", "--brain", "openai", "--brain", "offline", "--brain-opt", "review_rule=answer"]
    )
    with pytest.raises(SystemExit):
        serve.run(args)
    assert seen == {"openai": {}, "offline": {"review_rule": "answer"}}
    args = build_parser().parse_args(["serve", "--brain", "offline", "--brain", "scripted", "--brain-opt", "nosuch=1"])
    with pytest.raises(Exception, match="no brain of --brain offline, scripted takes these options"):
        serve.run(args)


def test_the_runs_browser_serves_nothing_a_tampered_row_points_at(tmp_path):
    """A row of a browsed run edited to name a picture outside the runs folder as its page (and a step folder
    above it): the report the service builds reads and writes only its own files, and none of the files it serves
    is that picture."""
    import cv2

    root = tmp_path / "runs"
    run = make_benchmark_run(root)
    secret = tmp_path / "secret.jpg"
    import numpy as np

    cv2.imwrite(str(secret), np.random.default_rng(1).integers(0, 255, (60, 80, 3), dtype=np.uint8))
    (run / "steps" / "s1__none").mkdir(parents=True)
    rows = [json.loads(line) for line in (run / "results.jsonl").read_text().splitlines()]
    for row in rows:
        if row["score"] == 0.0:
            row["steps_dir"] = "steps/s1__none"
            row["result"]["input_page"] = "../../../../secret"
            row["result"]["trace"] = [{"phase": "tool", "action": "applied", "tool": "deshadowing", "after": "../.."}]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    data = tmp_path / "data"
    with TestClient(create_app(_config(runs_dir=root, data_dir=data))) as client:
        report = client.get("/v1/benchmarks/offline-synth").json()
        served = [client.get(i["url"]).content for f in report["failures"] for i in f["images"]]
    assert secret.read_bytes() not in served
    assert not [
        p for p in tmp_path.rglob("*") if ".." in p.name or (p.name.startswith("failure") and data not in p.parents)
    ]


def test_fifty_pdf_uploads_at_once_are_all_answered_or_refused_with_retry_after(tmp_path):
    """A burst of 50 PDF uploads from 16 clients at once into a service with 2 workers and room for 20 queued runs:
    the service stays up, every request gets a reply (202 with a run, or 503 with Retry-After), and every accepted
    run finishes with its answer."""
    import time
    from concurrent.futures import ThreadPoolExecutor

    from retrieval_helpers import make_pdf

    data = make_pdf(
        tmp_path / "inv.pdf", ["Dear customer", "Invoice INV-2041\nTotal amount due: $1,250.00"]
    ).read_bytes()
    started = time.monotonic()
    with TestClient(create_app(_config(workers=2, max_queued=20))) as client:
        with ThreadPoolExecutor(16) as pool:
            replies = list(pool.map(lambda i: _ask(client, data, name=f"inv{i}.pdf"), range(50)))
        codes = [r.status_code for r in replies]
        assert set(codes) <= {202, 503}, codes
        assert all(r.headers.get("retry-after") for r in replies if r.status_code == 503)
        accepted = [r.json()["id"] for r in replies if r.status_code == 202]
        assert len(accepted) >= 20
        finished = [_wait(client, run_id, timeout=240) for run_id in accepted]
        assert client.get("/v1/health").status_code == 200
    assert all(run["status"] == "done" and run["answer"] == ANSWER for run in finished)
    assert time.monotonic() - started < 300
