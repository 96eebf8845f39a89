"""Running at scale: the shared rate limit, many model calls in flight, and bench / index on a local Ray.

The Ray tests start one local Ray with 2 CPUs for the module and compare every row and every index entry
with a run of the same inputs in this process.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from functools import partial
from pathlib import Path

import cv2
import numpy as np
import pytest

from docintent.brains import Answer, Brain, Diagnosis, Keep, UseTool
from docintent.brains.ratelimit import RateLimiter
from docintent.cli import main
from docintent.errors import ConfigError
from docintent.evaluation.executors import LocalExecutor, RayExecutor, make_executor, parse_memory
from docintent.evaluation.runner import BrainFactory, read_results, run_benchmark
from docintent.retrieval import build_index
from docintent.sample import Sample
from docintent.testing.fake_openai import FakeOpenAI
from needs import need_module
from retrieval_helpers import FILLER, make_pdf

# --- the rate limiter ----------------------------------------------------------------------------------------


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_requests_are_spaced_to_the_rate_and_tokens_to_the_token_budget():
    clock = Clock()
    limiter = RateLimiter(requests_per_minute=120, burst_seconds=0, clock=clock)
    assert [limiter.reserve() for _ in range(4)] == [0.0, 0.5, 1.0, 1.5]
    clock.now += 10  # idle time is not banked beyond the burst allowance
    assert limiter.reserve() == 0.0 and limiter.reserve() == 0.5

    tokens = RateLimiter(tokens_per_minute=6000, burst_seconds=0, clock=clock)
    assert tokens.reserve(1000) == 0.0
    assert tokens.reserve(1000) == pytest.approx(10.0)  # 1000 tokens at 100 tokens/s
    tokens.settle(-500)  # the first reply used 500 fewer tokens than reserved
    assert tokens.reserve(10) == pytest.approx(15.0)


def test_a_429_pauses_every_caller_halves_the_rate_once_and_recovers():
    clock = Clock()
    limiter = RateLimiter(requests_per_minute=600, burst_seconds=0, recover_after=2, clock=clock)
    assert limiter.reserve() == 0.0
    assert limiter.throttled(3.0) == 3.0
    assert limiter.throttled(1.0) == 3.0  # a second 429 of the same episode waits for the same pause
    assert limiter.stats().slowdown == 2.0
    # new requests from anyone wait for the pause, then go at half the rate (0.2 s apart, not 0.1 s)
    assert [round(limiter.reserve(), 3) for _ in range(3)] == [3.0, 3.2, 3.4]
    limiter.settle(0)
    limiter.settle(0)
    assert limiter.stats().slowdown == pytest.approx(1.6)


def test_without_a_configured_rate_a_429_limits_to_the_rate_that_drew_it():
    clock = Clock()
    limiter = RateLimiter(clock=clock)
    for _ in range(20):  # 20 requests over 10 s: 2 per second, none waits
        assert limiter.reserve() == 0.0
        clock.now += 0.5
    limiter.throttled(0.0)
    waits = [limiter.reserve() for _ in range(3)]
    assert waits[1] - waits[0] == pytest.approx(1.0, abs=0.05)  # half of the observed 2/s


def test_limits_and_executor_options_are_checked():
    for value in (0, -1, float("nan"), float("inf")):
        with pytest.raises(ConfigError, match="requests_per_minute must be a finite number above 0"):
            RateLimiter(requests_per_minute=value)
    with pytest.raises(ConfigError, match="valid: local, ray"):
        make_executor("dask")
    with pytest.raises(ConfigError, match="--ray-address needs --executor ray"):
        make_executor("local", ray_address="ray://head:10001")
    assert parse_memory("2G") == 2 * 1024**3 and parse_memory("512MB") == 512 * 1024**2
    with pytest.raises(ConfigError, match="expected a size"):
        parse_memory("lots")
    for text in ("nan", "inf", "0", "-2G"):
        with pytest.raises(ConfigError, match="finite size"):
            parse_memory(text)


# --- samples and a brain that needs no model -----------------------------------------------------------------


def _image(path: Path, text: str) -> str:
    img = np.full((90, 260, 3), 255, np.uint8)
    cv2.putText(img, text, (10, 60), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 0), 2)
    cv2.imwrite(str(path), img)
    return str(path)


def _samples(folder: Path, n: int) -> list[Sample]:
    out = []
    for i in range(n):
        # Gold answers alternate between the number in the question and another one, so scores differ.
        gold = str(i) if i % 3 else str(i + 100)
        out.append(
            Sample(
                id=f"s{i}",
                image=_image(folder / f"p{i}.png", f"item {i}"),
                question=f"what is item {i}?",
                answers=(gold,),
                task="doc",
                subset="DocVQA",
                group=f"g{i // 2}",
                capture=1,
            )
        )
    out.append(
        Sample(
            id="missing",
            image=str(folder / "no-such-image.png"),
            question="what is item 7?",
            answers=("7",),
            task="doc",
            subset="DocVQA",
            group="gx",
            capture=1,
        )
    )
    return out


class QuestionBrain(Brain):
    """Answers with the number in the question; asks for one restoration on even items (so traces differ).

    ``die_on``: the sample question on which the brain SIGKILLs its own process, once per ``marker`` file
    (every time when there is no marker).
    """

    name = "question"

    def __init__(self, marker: str | None = None, die_on: str | None = None) -> None:
        self.marker, self.die_on = marker, die_on

    def _number(self, state) -> str:
        return state.question.split()[-1].rstrip("?")

    def _maybe_die(self, state) -> None:
        if self.die_on != state.question or (self.marker and os.path.exists(self.marker)):
            return
        if self.marker:
            Path(self.marker).write_text(str(os.getpid()))
        os.kill(os.getpid(), signal.SIGKILL)

    def decide(self, state):
        self._maybe_die(state)
        if int(self._number(state)) % 2 == 0 and not state.history:
            return UseTool("appearance")
        return Answer(self._number(state), 0.9)

    def review(self, state, change):
        return Keep()

    def diagnose(self, state):
        return Diagnosis(())

    def answer(self, state):
        self._maybe_die(state)
        return Answer(self._number(state), 0.9)


def question_brain(**options) -> QuestionBrain:
    return QuestionBrain(**options)


def _comparable(rows: list[dict]) -> dict[tuple[str, str], tuple]:
    """What must match between two runs: answer, score, error and the trace's steps (not timings)."""
    out = {}
    for r in rows:
        steps = [(s.get("phase"), s.get("action"), s.get("tool")) for s in (r.get("result") or {}).get("trace", [])]
        out[(r["sample"]["id"], r["strategy"])] = (r["answer"], r["score"], r["correct"], r["error"], steps)
    return out


# --- many model calls in flight ------------------------------------------------------------------------------


def test_concurrency_keeps_n_model_calls_in_flight_and_gives_the_same_rows(tmp_path):
    lock = threading.Lock()
    state = {"now": 0, "peak": 0}

    def slow_answer(body):
        with lock:
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(0.2)
        with lock:
            state["now"] -= 1
        question = body["messages"][-1]["content"][0]["text"].split()[-1].rstrip("?")
        return {"content": json.dumps({"answer": question})}

    samples = _samples(tmp_path, 16)
    with FakeOpenAI(slow_answer) as server:
        factory = BrainFactory("openai", {"base_url": server.base_url, "model": server.model})
        t0 = time.perf_counter()
        one = run_benchmark(samples, ["none"], factory, tmp_path / "c1", progress=False)
        serial = time.perf_counter() - t0
        assert state["peak"] == 1
        t0 = time.perf_counter()
        eight = run_benchmark(
            samples, ["none"], factory, tmp_path / "c8", progress=False, executor=LocalExecutor(concurrency=8)
        )
        parallel = time.perf_counter() - t0
    assert state["peak"] == 8
    assert one.new_rows == eight.new_rows == 17 and one.failed == eight.failed == 1
    assert _comparable(read_results(tmp_path / "c1")) == _comparable(read_results(tmp_path / "c8"))
    assert serial > 16 * 0.2 and parallel < serial / 2  # 8 in flight; the first sample of a process runs alone
    manifest = json.loads((tmp_path / "c8" / "manifest.json").read_text())
    assert manifest["config"]["executor"]["concurrency"] == 8


@pytest.mark.parametrize("async_calls", [True, False], ids=["event loop", "threads"])
def test_a_429_pauses_every_request_in_flight_not_just_its_own(tmp_path, async_calls):
    lock = threading.Lock()
    calls: list[tuple[float, int]] = []

    def script(body):
        with lock:
            calls.append((time.monotonic(), 0))
            first = len(calls) == 3
        if first:
            return {"status": 429, "retry_after": 1}
        time.sleep(0.05)
        return {"content": json.dumps({"answer": "1"})}

    samples = _samples(tmp_path, 12)
    with FakeOpenAI(script) as server:
        factory = BrainFactory("openai", {"base_url": server.base_url, "model": server.model})
        summary = run_benchmark(
            samples,
            ["none"],
            factory,
            tmp_path / "run",
            progress=False,
            executor=LocalExecutor(concurrency=4, async_calls=async_calls),
        )
    assert summary.failed == 1  # only the sample with no image
    throttled_at = calls[2][0]
    # The other 3 threads may each have a request on its way when the 429 lands; after that nobody sends until
    # the second asked for has passed (unpaused, 4 threads at ~50 ms a call would send dozens meanwhile).
    later = [t - throttled_at for t, _ in calls[3:]]
    in_pause = [dt for dt in later if dt < 0.95]
    assert len(in_pause) <= 3, f"requests sent during the pause: {in_pause}"
    assert len(calls) == 13  # 12 answers and the 429, whose sample was sent again after the pause


# --- Ray -----------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def local_ray():
    ray = need_module("ray", "the Ray executor runs on it (pip install 'docintent[ray]')")
    # Test doubles defined here travel to the workers by value (the workers cannot import this module).
    ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=128 * 1024**2,
        logging_level="ERROR",
    )
    yield ray
    ray.shutdown()


@pytest.mark.ray
def test_bench_on_ray_gives_the_rows_of_a_local_run_survives_a_killed_worker_and_resumes(local_ray, tmp_path):
    samples = _samples(tmp_path, 10)
    strategies = ["none", "docintent"]
    local = run_benchmark(samples, strategies, partial(question_brain), tmp_path / "local", progress=False)
    assert local.new_rows == 22 and local.failed == 2

    # First Ray session stops after 6 rows (as if interrupted); a worker kills itself mid-way on "item 4".
    marker = tmp_path / "killed.pid"
    factory = partial(question_brain, marker=str(marker), die_on="what is item 4?")
    ray_run = RayExecutor(workers=2, cpus_per_task=1)
    first = run_benchmark(samples, strategies, factory, tmp_path / "ray", progress=False, executor=ray_run, max_rows=6)
    assert first.new_rows == 6
    second = run_benchmark(samples, strategies, factory, tmp_path / "ray", progress=False, executor=ray_run)
    assert marker.exists(), "the worker was not killed, so the test proved nothing"
    assert second.skipped == 6 and second.new_rows == 16

    lines = [json.loads(line) for line in (tmp_path / "ray" / "results.jsonl").read_text().splitlines()]
    assert len(lines) == 22 and len({(r["sample"]["id"], r["strategy"]) for r in lines}) == 22  # no loss, no repeat
    assert _comparable(lines) == _comparable(read_results(tmp_path / "local"))
    missing = [r for r in lines if r["sample"]["id"] == "missing"]
    assert all("no-such-image.png" in r["error"] for r in missing)
    manifest = json.loads((tmp_path / "ray" / "manifest.json").read_text())
    assert manifest["config"]["executor"]["executor"] == "ray" and len(manifest["sessions"]) == 2


@pytest.mark.ray
def test_a_sample_that_kills_its_worker_every_time_becomes_an_error_row(local_ray, tmp_path):
    samples = _samples(tmp_path, 3)[:3]
    factory = partial(question_brain, die_on="what is item 1?")
    summary = run_benchmark(
        samples, ["none"], factory, tmp_path / "run", progress=False, executor=RayExecutor(workers=1, max_retries=1)
    )
    rows = {r["sample"]["id"]: r for r in read_results(tmp_path / "run")}
    assert summary.new_rows == 3
    assert (
        rows["s1"]["error"].startswith("WorkerLost: worker died")
        and "each of 2 times it ran alone" in rows["s1"]["error"]
    )
    assert rows["s0"]["answer"] == "0" and rows["s2"]["answer"] == "2" and not rows["s2"]["error"]


@pytest.mark.ray
def test_index_command_with_executor_ray(local_ray, tmp_path, capsys):
    folder = tmp_path / "pdfs"
    folder.mkdir()
    make_pdf(folder / "a.pdf", FILLER[:5])
    make_pdf(folder / "b.pdf", FILLER[5:9])
    assert main(["index", str(folder), "--out", str(tmp_path / "idx-local")]) == 0
    assert main(["index", str(folder), "--out", str(tmp_path / "idx-ray"), "--executor", "ray", "--workers", "2"]) == 0
    assert _index_rows(tmp_path / "idx-ray") == _index_rows(tmp_path / "idx-local")
    assert (tmp_path / "idx-ray" / "bm25.npz").read_bytes() == (tmp_path / "idx-local" / "bm25.npz").read_bytes()
    out = capsys.readouterr().out
    assert "9 pages (0 already done, 9 processed" in out


@pytest.mark.ray
def test_bench_command_starts_and_stops_its_own_local_ray(tmp_path):
    need_module("ray", "the Ray executor runs on it (pip install 'docintent[ray]')")
    samples = _samples(tmp_path, 3)
    data = tmp_path / "samples.jsonl"
    data.write_text("".join(json.dumps(s.to_dict()) + "\n" for s in samples))
    # A fresh interpreter, as a user runs it: no Ray is running, so the command starts one and stops it.
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "docintent",
            "bench",
            "--dataset",
            f"jsonl:{data}",
            "--brain",
            "scripted",
            "--brain-opt",
            "final=2",
            "--executor",
            "ray",
            "--cpus-per-task",
            "1",
            "--concurrency",
            "2",
            "--max-rpm",
            "6000",
            "--no-progress",
            "--out",
            str(tmp_path / "run"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    rows = read_results(tmp_path / "run")
    assert sorted(r["answer"] for r in rows if not r["error"]) == ["2", "2", "2"]
    assert [r["correct"] for r in sorted(rows, key=lambda r: r["sample"]["id"])] == [False, False, False, True]
    assert "no-such-image.png" in next(r["error"] for r in rows if r["sample"]["id"] == "missing")
    assert "4 rows (4 new" in done.stdout
    executor = json.loads((tmp_path / "run" / "manifest.json").read_text())["config"]["executor"]
    assert (executor["executor"], executor["concurrency"], executor["requests_per_minute"]) == ("ray", 2, 6000)


def _index_rows(directory: Path) -> list[tuple]:
    con = sqlite3.connect(str(directory / "index.sqlite"))
    try:
        return con.execute(
            "SELECT p.handle, d.path, p.page_no, p.width, p.height, p.text, p.text_source "
            "FROM pages p JOIN documents d USING (doc_id) ORDER BY p.handle"
        ).fetchall()
    finally:
        con.close()


@pytest.mark.ray
def test_index_on_ray_resumes_an_interrupted_build(local_ray, tmp_path):
    folder = tmp_path / "pdfs"
    folder.mkdir()
    make_pdf(folder / "a.pdf", FILLER[:6])
    make_pdf(folder / "b.pdf", FILLER[6:])
    whole = build_index([folder], tmp_path / "local", seed=5)
    executor = RayExecutor(workers=2)
    first = build_index([folder], tmp_path / "ray", seed=5, limit=5, executor=executor)
    assert (first.pages_processed, first.complete) == (5, False)
    second = build_index([folder], tmp_path / "ray", seed=5, executor=executor)
    assert (second.pages_done_before, second.pages_processed, second.complete) == (5, 7, True)
    assert whole.pages_total == second.pages_total == 12
    assert _index_rows(tmp_path / "ray") == _index_rows(tmp_path / "local")
