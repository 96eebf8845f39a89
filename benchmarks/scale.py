"""Running at scale: model calls in flight, local processes vs Ray, and index pages per minute.

Three measurements (the first in two parts), each saved as it finishes (``benchmarks/results/scale_<part>.json``) and summarised in
``benchmarks/results/scale.md``:

(a) ``model``: strategy ``none`` with the ``openai`` brain against the loopback server
    (``docintent.testing.fake_openai``, in its own process, so its CPU is not the client's) answering every
    call after a scripted 200 ms. Samples/s at ``--concurrency`` 1, 8, 32 and 64 (one process), for the
    synchronous clients on the items' threads (``async_calls=False``) and the requests on one event loop
    (``async_calls=True``); CPU per call of the client (the whole process, and without decoding the input
    image files, measured apart on the same files) and of the server; repeats alternating the order.
    ``client``: the CPU per call of each way to send the request (the SDK's clients, the endpoint's paths),
    no strategy around it, and of a call made after a 200 ms pause.
(b) ``offline``: strategy ``none`` with the offline reader (RapidOCR, OCR cache off) on distinct synthetic
    captures: ``--workers 2`` local processes vs ``--executor ray`` with 2 actors on a local Ray of 2 CPUs;
    the per-task overhead of Ray from a job that does nothing.
(c) ``index``: pages/min of ``docintent index`` in this process, in 2 local worker processes and on Ray
    (2 actors), on PDF text layers and with OCR of every page (``--text ocr``).

    DOCINTENT_THREADS=1 nice -n 10 python benchmarks/scale.py            # all three parts
    python benchmarks/scale.py --part model --repeats 1                  # one part, quickly
    python benchmarks/scale.py --part model --modes async --levels 1,32  # some of (a)
    python benchmarks/scale.py --part client                             # CPU per call, by client

Load averages are recorded beside every figure; compare ratios measured in one run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
LATENCY = 0.2
LEVELS = (1, 8, 32, 64)
#: (a): how each level runs its model requests: ``async_calls`` of the executor.
MODES = {"sync": False, "async": True}


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def _save(part: str, data: dict) -> None:
    RESULTS.mkdir(exist_ok=True)
    data = {"part": part, "python": platform.python_version(), "cores": os.cpu_count(), **data}
    (RESULTS / f"scale_{part}.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


# --- samples -------------------------------------------------------------------------------------------------


def _text_images(folder: Path, n: int) -> list:
    """``n`` distinct 480x320 photographed-looking pages (uneven light, sensor noise: sent as JPEG, like
    WildDoc captures) with two lines of text, as samples asking for the total."""
    import cv2
    import numpy as np

    from docintent.sample import Sample

    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    light = np.linspace(0.75, 1.0, 480)[None, :, None] * np.linspace(0.85, 1.0, 320)[:, None, None]
    samples = []
    for i in range(n):
        img = np.full((320, 480, 3), 235, np.uint8)
        cv2.putText(img, f"Invoice {i:05d}", (20, 120), cv2.FONT_HERSHEY_SIMPLEX, 1.4, (20, 20, 20), 3)
        cv2.putText(img, f"Total {i * 7 % 1000}.00", (20, 220), cv2.FONT_HERSHEY_SIMPLEX, 1.2, (20, 20, 20), 2)
        shot = img * light + rng.normal(0, 6, img.shape)
        path = folder / f"page{i:05d}.png"
        cv2.imwrite(str(path), np.clip(shot, 0, 255).astype(np.uint8))
        samples.append(
            Sample(
                id=f"p{i:05d}",
                image=str(path),
                question="What is the total?",
                answers=(f"{i * 7 % 1000}.00",),
                task="doc",
                subset="DocVQA",
                group=f"g{i}",
                capture=1,
            )
        )
    return samples


# --- (a) model path ------------------------------------------------------------------------------------------

SERVER = """
import json, sys, time
from docintent.testing.fake_openai import FakeOpenAI
latency = float(sys.argv[1])
def reply(body):
    return {"delay": latency, "content": json.dumps({"answer": "0.00", "confidence": "high"})}
server = FakeOpenAI(reply).start()
print(server.base_url, flush=True)
sys.stdin.read()
server.stop()
"""


def _process_cpu(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far (Linux ``/proc``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _own_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _decode_cpu_ms(samples: list) -> float:
    """CPU ms per sample of reading its image file (what ``run_one`` does before the strategy starts)."""
    from docintent.io import load_page

    start = time.process_time()
    for sample in samples:
        load_page(sample.image)
    return 1000 * (time.process_time() - start) / len(samples)


def _steady_executor(concurrency: int, async_calls: bool, marks: list[float]):
    """A local executor that notes this process's CPU time as each row arrives: the CPU between the first
    and the last row is the steady state, without the run's fixed costs (the brain, the manifest, the git
    commit and package versions it records)."""
    from docintent.evaluation.executors import LocalExecutor

    class Steady(LocalExecutor):
        def map(self, items, job, emit, *, state=None):
            def noted(row):
                emit(row)
                marks.append(_own_cpu())

            super().map(items, job, noted, state=state)

    return Steady(concurrency=concurrency, async_calls=async_calls)


def _uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def part_model(args: argparse.Namespace, scratch: Path) -> dict:
    from docintent.evaluation.executors import LocalExecutor
    from docintent.evaluation.runner import BrainFactory, read_results, run_benchmark

    levels = [int(x) for x in args.levels.split(",")]
    modes = args.modes.split(",")
    uptime_start = _uptime()
    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, str(LATENCY)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        base_url = server.stdout.readline().strip()
        factory = BrainFactory("openai", {"base_url": base_url, "model": "fake-vl", "timeout": 60})
        # 60 at least: concurrency 1 needs that many rows for a steady CPU figure (12 s at 200 ms a call)
        counts = {c: max(60, args.per_level * c) for c in levels}
        samples = _text_images(scratch / "model-pages", max(counts.values()))
        decode_ms = _decode_cpu_ms(samples[: max(50, min(400, len(samples)))])
        # Warm-up (imports, first connections, both paths), not recorded: the first measured run would pay for it.
        for mode in modes:
            run_benchmark(
                samples[:16],
                ["none"],
                factory,
                scratch / f"model-warm-up-{mode}",
                progress=False,
                executor=LocalExecutor(concurrency=4, async_calls=MODES[mode]),
            )
        configs = [(mode, c) for mode in modes for c in levels]
        runs = []
        for repeat in range(args.repeats):
            order = configs if repeat % 2 == 0 else list(reversed(configs))
            for mode, c in order:
                load = _load()
                marks: list[float] = []
                client0, server0 = _own_cpu(), _process_cpu(server.pid)
                summary = run_benchmark(
                    samples[: counts[c]],
                    ["none"],
                    factory,
                    scratch / f"model-{repeat}-{mode}-{c}",
                    progress=False,
                    executor=_steady_executor(c, MODES[mode], marks),
                )
                client_cpu, server_cpu = _own_cpu() - client0, _process_cpu(server.pid) - server0
                steady_ms = 1000 * (marks[-1] - marks[0]) / (len(marks) - 1)
                rows = read_results(summary.out_dir)
                errors = [r["error"] for r in rows if r.get("error")]
                calls = sum(
                    1 for r in rows for step in (r.get("result") or {}).get("trace", []) if step.get("prompt_tokens")
                )
                if errors:  # kept, and shown beside the figure: a failed call is faster than a real one
                    print(f"(a) {mode} x{c}: {len(errors)} rows failed, first: {errors[0][:300]}", file=sys.stderr)
                n = summary.new_rows
                per_call = n / max(1, calls)
                run = {
                    "repeat": repeat + 1,
                    "mode": mode,
                    "concurrency": c,
                    "samples": n,
                    "calls": calls,
                    "failed": len(errors),
                    "first_error": errors[0][:300] if errors else None,
                    "seconds": round(summary.seconds, 3),
                    "samples_per_second": summary.samples_per_second,
                    "client_cpu_ms_per_sample": 1000 * client_cpu / n,
                    "client_cpu_ms_per_sample_steady": steady_ms,
                    "client_cpu_ms_per_call": (steady_ms - decode_ms) * per_call,
                    "server_cpu_ms_per_call": 1000 * server_cpu / max(1, calls),
                    "load_before": load,
                }
                runs.append(run)
                print(
                    f"(a) repeat {repeat + 1} {mode:>5} x {c:>2}: {run['samples_per_second']:6.2f} samples/s "
                    f"({n} samples; client CPU-ms per sample {run['client_cpu_ms_per_sample']:.2f} whole run, "
                    f"{steady_ms:.2f} first to last row, {run['client_cpu_ms_per_call']:.2f} per call without "
                    f"decoding; server {run['server_cpu_ms_per_call']:.2f} per call; load {load})",
                    file=sys.stderr,
                )
    finally:
        server.stdin.close()
        server.wait(timeout=10)

    def median(key: str, mode: str, c: int) -> float:
        return statistics.median(r[key] for r in runs if (r["mode"], r["concurrency"]) == (mode, c))

    figures = {
        mode: {
            str(c): {
                key: median(key, mode, c)
                for key in (
                    "samples_per_second",
                    "client_cpu_ms_per_sample",
                    "client_cpu_ms_per_sample_steady",
                    "client_cpu_ms_per_call",
                    "server_cpu_ms_per_call",
                )
            }
            for c in levels
        }
        for mode in modes
    }
    speedups = {
        mode: {
            f"{c}_over_{levels[0]}": figures[mode][str(c)]["samples_per_second"]
            / figures[mode][str(levels[0])]["samples_per_second"]
            for c in levels[1:]
        }
        for mode in modes
    }
    result = {
        "latency_s": LATENCY,
        "levels": levels,
        "modes": modes,
        "repeats": args.repeats,
        "decode_cpu_ms_per_sample": decode_ms,
        "uptime_start": uptime_start,
        "uptime_end": _uptime(),
        "runs": runs,
        "median": figures,
        "speedup": speedups,
        "before": _before(),
    }
    _save("model", result)
    (RESULTS / "scale_model.md").write_text(model_summary(result) + "\n", encoding="utf-8")
    return result


def _before() -> list[dict]:
    """The figures (a) had before requests went on an event loop, kept from the previous results file (a file
    in the old format becomes one entry)."""
    path = RESULTS / "scale_model.json"
    if not path.exists():
        return []
    old = json.loads(path.read_text())
    if "before" in old:
        return old["before"]
    return [
        old_entry(
            old,
            "the previous results file: one process, a synchronous openai client per item thread "
            "(chat.completions.create), the loopback server with Nagle's algorithm on",
        )
    ]


def old_entry(old: dict, note: str) -> dict:
    """A results file of (a) in its old format (one path, ``workers x concurrency`` keys) as a "before" entry."""
    runs = old.get("runs", [])
    rates = old.get("median_samples_per_second", {})
    return {
        "note": note,
        "median_samples_per_second": rates,
        "speedup_32_over_1": old.get("speedup_32_over_1"),
        "client_cpu_ms_per_sample": {
            key: statistics.median(
                r["client_cpu_ms_per_sample"] for r in runs if f"{r.get('workers', 1)}x{r['concurrency']}" == key
            )
            for key in rates
        },
        "load": [min(r["load_before"] for r in runs), max(r["load_before"] for r in runs)] if runs else None,
    }


def model_summary(m: dict) -> str:
    """(a) as Markdown: medians per path and level, every run with its load, and the figures before."""
    levels, first = m["levels"], str(m["levels"][0])
    lines = [
        f"## (a) Model path: loopback server in its own process, {int(m['latency_s'] * 1000)} ms per call, "
        f"strategy `none`",
        "",
        f"Machine load: `{m['uptime_start']}` at the start, `{m['uptime_end']}` at the end (2 cores). "
        f"Medians of {m['repeats']} runs. Client CPU per sample: the whole run (with its fixed costs: the "
        "brain, the manifest), and from the first row to the last; per call: the latter without decoding "
        f"the page file, which costs {m['decode_cpu_ms_per_sample']:.2f} CPU-ms per sample (measured apart "
        "on the same files). Server: its process's CPU per call.",
        "",
        "| path | in flight | samples/s | x concurrency 1 | client CPU-ms / sample (run; steady) "
        "| client CPU-ms / call | server CPU-ms / call | runs: samples/s (load before) |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for mode in m["modes"]:
        for c in levels:
            f = m["median"][mode][str(c)]
            runs = [r for r in m["runs"] if (r["mode"], r["concurrency"]) == (mode, c)]
            detail = ", ".join(
                f"{r['samples_per_second']:.1f} ({r['load_before']})"
                + (f" {r['failed']} failed" if r.get("failed") else "")
                for r in runs
            )
            ratio = f["samples_per_second"] / m["median"][mode][first]["samples_per_second"]
            lines.append(
                f"| {mode} | {c} | {f['samples_per_second']:.2f} | {ratio:.1f}x | "
                f"{f['client_cpu_ms_per_sample']:.2f}; {f['client_cpu_ms_per_sample_steady']:.2f} | "
                f"{f['client_cpu_ms_per_call']:.2f} | "
                f"{f['server_cpu_ms_per_call']:.2f} | {detail} |"
            )
    if m.get("before"):
        lines += ["", "Before (processes x concurrency: samples/s, client CPU-ms per sample of the whole run):", ""]
    for before in m.get("before") or []:
        rates = before["median_samples_per_second"]
        cpu = before.get("client_cpu_ms_per_sample") or {}
        load = before.get("load")
        lines.append(
            f"- {before['note']}"
            + (f", load {load[0]}-{load[1]}" if load else "")
            + ": "
            + ", ".join(f"{key} {value:.2f} ({cpu.get(key, float('nan')):.1f})" for key, value in rates.items())
            + f"; speed-up 1 -> 32: {before['speedup_32_over_1']:.1f}x."
        )
    return "\n".join(lines)


# --- (a) the client's CPU per call, by way of sending it ------------------------------------------------------

CLIENT_CALLS = 400


def part_client(args: argparse.Namespace, scratch: Path) -> dict:
    """CPU per call of each way to send one request (the answer prompt with a 480x320 page), no strategy
    around it, against the loopback server (own process) answering at once: the SDK's synchronous and async
    clients with ``chat.completions.create`` and with ``post``, and :class:`~docintent.brains.endpoint.Endpoint`
    synchronous, on an installed event loop, and ``achat``; async ones with 1 and 32 requests in flight.
    Also ``Endpoint.chat`` on the loop with a 200 ms pause before each call (what concurrency 1 in (a) does)."""
    import asyncio

    import openai
    from openai.types.chat import ChatCompletion

    from docintent.brains import eventloop
    from docintent.brains.endpoint import Endpoint
    from docintent.brains.mllm import ModelBrain
    from docintent.io import load_page

    server = subprocess.Popen(
        [sys.executable, "-c", SERVER, "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    uptime_start = _uptime()
    try:
        base_url = server.stdout.readline().strip()
        page = load_page(_text_images(scratch / "client-pages", 1)[0].image)
        messages = [
            {"role": "system", "content": "You answer questions about one document page. " * 30},
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "Question: What is the total?"},
                    ModelBrain(base_url=base_url, model="fake-vl").image_part(page),
                ],
            },
        ]
        body = {"model": "fake-vl", "messages": messages, "temperature": 0.0, "top_p": 1.0, "max_tokens": 4096}
        sdk = openai.OpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=60)
        endpoint = Endpoint(base_url, "fake-vl", top_p=1.0, max_tokens=4096)
        loop = asyncio.new_event_loop()
        async_sdk = openai.AsyncOpenAI(base_url=base_url, api_key="x", max_retries=0, timeout=60)

        def serial(call):
            return lambda n: [call() for _ in range(n)]

        def in_flight(make, concurrency):
            async def many(n):
                gate = asyncio.Semaphore(concurrency)

                async def one():
                    async with gate:
                        await make()

                await asyncio.gather(*(one() for _ in range(n)))

            return lambda n: loop.run_until_complete(many(n))

        def on_event_loop(n, pause=0.0):
            calls = eventloop.EventLoop()
            eventloop.install(calls)
            try:
                for _ in range(n):
                    if pause:
                        time.sleep(pause)
                    endpoint.chat(messages)
            finally:
                eventloop.install(None)
                calls.close()

        variants = {
            "SDK OpenAI, chat.completions.create": (1, serial(lambda: sdk.chat.completions.create(**body))),
            "SDK OpenAI, post": (1, serial(lambda: sdk.post("/chat/completions", body=body, cast_to=ChatCompletion))),
            "Endpoint.chat, synchronous": (1, serial(lambda: endpoint.chat(messages))),
            "Endpoint.chat on the event loop": (1, on_event_loop),
        }
        for c in (1, 32):
            variants[f"SDK AsyncOpenAI, chat.completions.create, {c} in flight"] = (
                c,
                in_flight(lambda: async_sdk.chat.completions.create(**body), c),
            )
            variants[f"SDK AsyncOpenAI, post, {c} in flight"] = (
                c,
                in_flight(lambda: async_sdk.post("/chat/completions", body=body, cast_to=ChatCompletion), c),
            )
            variants[f"Endpoint.achat (httpx2), {c} in flight"] = (c, in_flight(lambda: endpoint.achat(messages), c))
        runs = []
        for repeat in range(args.repeats):
            names = list(variants) if repeat % 2 == 0 else list(reversed(variants))
            for name in names:
                _, run = variants[name]
                run(20)  # connections and lazy imports first
                load = _load()
                start = time.process_time()
                run(CLIENT_CALLS)
                ms = 1000 * (time.process_time() - start) / CLIENT_CALLS
                runs.append({"repeat": repeat + 1, "variant": name, "cpu_ms_per_call": ms, "load_before": load})
                print(f"(a') {name}: {ms:.2f} CPU-ms per call (load {load})", file=sys.stderr)
        paused = []
        for repeat in range(args.repeats):
            load = _load()
            start = time.process_time()
            on_event_loop(60, pause=LATENCY)
            paused.append(
                {
                    "repeat": repeat + 1,
                    "cpu_ms_per_call": 1000 * (time.process_time() - start) / 60,
                    "load_before": load,
                }
            )
        loop.run_until_complete(async_sdk.close())
        loop.run_until_complete(endpoint.aclose())
        loop.close()
    finally:
        server.stdin.close()
        server.wait(timeout=10)
    median = {name: statistics.median(r["cpu_ms_per_call"] for r in runs if r["variant"] == name) for name in variants}
    result = {
        "calls": CLIENT_CALLS,
        "uptime_start": uptime_start,
        "uptime_end": _uptime(),
        "runs": runs,
        "median_cpu_ms_per_call": median,
        "paused_runs": paused,
        "median_paused_cpu_ms_per_call": statistics.median(p["cpu_ms_per_call"] for p in paused),
    }
    _save("client", result)
    return result


def client_summary(x: dict) -> str:
    lines = [
        "## (a) The client's CPU per call, by way of sending it",
        "",
        f"One request (the answer prompt with a 480x320 JPEG page), {x['calls']} calls per run against the "
        f"loopback server answering at once; medians of {len(x['runs']) // len(x['median_cpu_ms_per_call'])} "
        f"runs. Load: `{x['uptime_start']}` at the start, `{x['uptime_end']}` at the end.",
        "",
        "| way | CPU-ms per call (median) | runs (load before) |",
        "|---|---:|---|",
    ]
    for name, value in x["median_cpu_ms_per_call"].items():
        detail = ", ".join(
            f"{r['cpu_ms_per_call']:.2f} ({r['load_before']})" for r in x["runs"] if r["variant"] == name
        )
        lines.append(f"| {name} | {value:.2f} | {detail} |")
    detail = ", ".join(f"{p['cpu_ms_per_call']:.2f} ({p['load_before']})" for p in x["paused_runs"])
    lines += [
        "",
        f"`Endpoint.chat` on the event loop with a {int(LATENCY * 1000)} ms pause before each call: "
        f"**{x['median_paused_cpu_ms_per_call']:.2f}** CPU-ms per call (runs: {detail}).",
    ]
    return "\n".join(lines)


# --- (b) offline path ----------------------------------------------------------------------------------------


class NoOp:
    """A job that does nothing: what is left is the executor's own cost per item."""

    batch = 1

    def setup(self) -> None:
        return None

    def run(self, state: None, item: int) -> int:
        return item

    def lost(self, item: int, reason: str) -> int:
        raise RuntimeError(reason)

    def close(self, state: None) -> None:
        pass


def _synth_samples(scratch: Path, n: int) -> list:
    from docintent.evaluation.datasets import load_dataset
    from docintent.synth.generator import generate

    generate(scratch / "synth", n=max(1, n // 3 + 1), seed=0, workers=1, contact_sheet=False)
    picked, seen = [], set()
    for s in load_dataset(f"synth:{scratch / 'synth'}"):
        if s.image not in seen and len(picked) < n:
            seen.add(s.image)
            picked.append(s)
    return picked


def part_offline(args: argparse.Namespace, scratch: Path) -> dict:
    import ray

    from docintent.evaluation.executors import LocalExecutor, RayExecutor
    from docintent.evaluation.runner import BrainFactory, run_benchmark

    os.environ["DOCINTENT_CACHE"] = "0"
    samples = _synth_samples(scratch, args.offline_samples)
    factory = BrainFactory("offline")
    t0 = time.perf_counter()
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=256 * 1024**2,
        logging_level="ERROR",
    )
    ray_start = time.perf_counter() - t0
    try:
        runs = []
        executors = {"local --workers 2": LocalExecutor(workers=2), "ray, 2 actors": RayExecutor(workers=2)}
        for repeat in range(args.repeats):
            names = list(executors) if repeat % 2 == 0 else list(reversed(executors))
            measured = {}
            for name in names:
                load = _load()
                summary = run_benchmark(
                    samples,
                    ["none"],
                    factory,
                    scratch / f"offline-{repeat}-{name[:5]}",
                    progress=False,
                    executor=executors[name],
                )
                if summary.failed:
                    raise SystemExit(f"{name}: {summary.failed} rows failed; the timing means nothing")
                measured[name] = {
                    "samples_per_second": summary.samples_per_second,
                    "seconds": round(summary.seconds, 3),
                    "load_before": load,
                }
            local, on_ray = measured["local --workers 2"], measured["ray, 2 actors"]
            overhead = local["samples_per_second"] / on_ray["samples_per_second"] - 1
            runs.append({"repeat": repeat + 1, **{k: v for k, v in measured.items()}, "ray_overhead": overhead})
            print(
                f"(b) repeat {repeat + 1}: local {local['samples_per_second']:.3f}/s, ray "
                f"{on_ray['samples_per_second']:.3f}/s, overhead {100 * overhead:+.1f}%",
                file=sys.stderr,
            )

    finally:
        ray.shutdown()
    result = {
        "samples": len(samples),
        "ray_start_seconds": round(ray_start, 2),
        "runs": runs,
        "median_ray_overhead": statistics.median(r["ray_overhead"] for r in runs),
    }
    _save("offline", result)
    return result


def part_overhead(args: argparse.Namespace, scratch: Path) -> dict:
    """Ray's own cost per item: a job that does nothing, timed between the first and the last result (so
    actor start-up is not in it), one and 16 items per call, 2 actors on a local Ray of 2 CPUs."""
    import ray

    from docintent.evaluation.executors import RayExecutor

    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=256 * 1024**2,
        logging_level="ERROR",
    )
    noop = []
    try:
        for repeat in range(args.repeats):
            for batch in (1, 16):
                job = NoOp()
                job.batch = batch
                stamps: list[float] = []
                load = _load()
                RayExecutor(workers=2).map(
                    list(range(args.noop_items)), job, lambda r, stamps=stamps: stamps.append(time.perf_counter())
                )
                per_item = (stamps[-1] - stamps[0]) / (len(stamps) - 1)
                noop.append(
                    {
                        "repeat": repeat + 1,
                        "batch": batch,
                        "items": len(stamps),
                        "ms_per_item": 1000 * per_item,
                        "load_before": load,
                    }
                )
                print(
                    f"(b) no-op, {batch} item(s) per call, 2 actors: {1000 * per_item:.2f} ms per item (load {load})",
                    file=sys.stderr,
                )
    finally:
        ray.shutdown()
    result = {
        "noop": noop,
        "median_ms_per_item": {
            str(b): statistics.median(n["ms_per_item"] for n in noop if n["batch"] == b) for b in (1, 16)
        },
    }
    _save("overhead", result)
    return result


# --- (c) index -----------------------------------------------------------------------------------------------


def _make_pdfs(folder: Path, documents: int, pages: int) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    folder.mkdir(parents=True, exist_ok=True)
    for d in range(documents):
        with PdfPages(folder / f"doc{d:02d}.pdf") as pdf:
            for p in range(pages):
                fig = plt.figure(figsize=(8.27, 11.69))
                for line in range(30):
                    fig.text(
                        0.08,
                        0.92 - 0.028 * line,
                        f"Document {d} page {p} line {line}: invoice {d * 1000 + p * 31 + line} total "
                        f"{(d + p + line) * 13 % 997}.00 shipped to warehouse {line % 7}",
                        fontsize=9,
                    )
                pdf.savefig(fig)
                plt.close(fig)
    return folder


def part_index(args: argparse.Namespace, scratch: Path) -> dict:
    import ray

    from docintent.evaluation.executors import LocalExecutor, RayExecutor
    from docintent.retrieval import build_index

    os.environ["DOCINTENT_CACHE"] = "0"
    text_pdfs = _make_pdfs(scratch / "text-pdfs", args.index_docs, args.index_pages)
    ocr_pdfs = _make_pdfs(scratch / "ocr-pdfs", 2, args.ocr_pages // 2)
    ray.init(
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        object_store_memory=256 * 1024**2,
        logging_level="ERROR",
    )
    runs = []
    try:
        executors = {
            "this process": None,
            "local --workers 2": LocalExecutor(workers=2),
            "ray, 2 actors": RayExecutor(workers=2),
        }
        for mode, folder in (("pdf", text_pdfs), ("ocr", ocr_pdfs)):
            for repeat in range(args.repeats):
                names = list(executors) if repeat % 2 == 0 else list(reversed(executors))
                for name in names:
                    out = Path(tempfile.mkdtemp(prefix="idx-", dir=scratch))
                    load = _load()
                    report = build_index([folder], out, text=mode, executor=executors[name])
                    run = {
                        "text": mode,
                        "executor": name,
                        "repeat": repeat + 1,
                        "pages": report.pages_processed,
                        "seconds": round(report.seconds, 3),
                        "pages_per_minute": report.pages_per_minute,
                        "load_before": load,
                    }
                    runs.append(run)
                    print(
                        f"(c) {mode} {name}: {run['pages_per_minute']:.0f} pages/min ({run['pages']} pages, "
                        f"load {load})",
                        file=sys.stderr,
                    )
    finally:
        ray.shutdown()
    medians = {
        f"{mode} / {name}": statistics.median(
            r["pages_per_minute"] for r in runs if r["text"] == mode and r["executor"] == name
        )
        for mode in ("pdf", "ocr")
        for name in ("this process", "local --workers 2", "ray, 2 actors")
    }
    result = {"runs": runs, "median_pages_per_minute": medians}
    _save("index", result)
    return result


# --- summary -------------------------------------------------------------------------------------------------


def _rate(value: float) -> str:
    return f"{value:.0f}" if value >= 100 else f"{value:.2f}"


def summary() -> str:
    lines = ["# Running at scale", ""]
    model = RESULTS / "scale_model.json"
    if model.exists():
        m = json.loads(model.read_text())
        if "median" in m:
            lines += [model_summary(m), ""]
    client = RESULTS / "scale_client.json"
    if client.exists():
        lines += [client_summary(json.loads(client.read_text())), ""]
    offline = RESULTS / "scale_offline.json"
    if offline.exists():
        o = json.loads(offline.read_text())
        lines += [
            f"## (b) Offline reader: local `--workers 2` vs Ray (2 actors, 2 CPUs), {o['samples']} samples",
            "",
            "| repeat | local samples/s (load) | Ray samples/s (load) | Ray overhead |",
            "|---:|---:|---:|---:|",
        ]
        for r in o["runs"]:
            loc, ray_ = r["local --workers 2"], r["ray, 2 actors"]
            lines.append(
                f"| {r['repeat']} | {loc['samples_per_second']:.3f} ({loc['load_before']}) | "
                f"{ray_['samples_per_second']:.3f} ({ray_['load_before']}) | {100 * r['ray_overhead']:+.1f}% |"
            )
        lines += [
            "",
            f"**Median Ray overhead: {100 * o['median_ray_overhead']:+.1f}%** (target <= 15%); starting "
            f"the local Ray itself took {o['ray_start_seconds']} s (not counted).",
            "",
        ]
    overhead = RESULTS / "scale_overhead.json"
    if overhead.exists():
        v = json.loads(overhead.read_text())
        lines += ["## Ray's cost per item (a job that does nothing, 2 actors, first to last result)", ""]
        for batch, value in v["median_ms_per_item"].items():
            runs = [n for n in v["noop"] if str(n["batch"]) == batch]
            detail = ", ".join(f"{n['ms_per_item']:.2f} (load {n['load_before']})" for n in runs)
            lines.append(f"- {batch} item(s) per call: **{value:.2f} ms per item** (median; runs: {detail}).")
        lines.append("")
    index = RESULTS / "scale_index.json"
    if index.exists():
        x = json.loads(index.read_text())
        lines += [
            "## (c) Index: pages per minute",
            "",
            "| text | executor | pages/min (median) | runs |",
            "|---|---|---:|---|",
        ]
        for key, value in x["median_pages_per_minute"].items():
            mode, name = key.split(" / ")
            runs = [r for r in x["runs"] if r["text"] == mode and r["executor"] == name]
            detail = ", ".join(
                f"{_rate(r['pages_per_minute'])} ({r['pages']} p, load {r['load_before']})" for r in runs
            )
            lines.append(f"| {mode} | {name} | {_rate(value)} | {detail} |")
        lines.append("")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--part", choices=["model", "client", "offline", "overhead", "index", "all", "summary"], default="all"
    )
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--per-level", type=int, default=20, help="(a) samples per unit of concurrency")
    parser.add_argument("--levels", default=",".join(map(str, LEVELS)), help="(a) concurrency levels, first = base")
    parser.add_argument("--modes", default=",".join(MODES), help="(a) request paths: sync, async or both")
    parser.add_argument("--offline-samples", type=int, default=12)
    parser.add_argument("--noop-items", type=int, default=1000)
    parser.add_argument("--index-docs", type=int, default=4)
    parser.add_argument("--index-pages", type=int, default=60)
    parser.add_argument("--ocr-pages", type=int, default=12)
    args = parser.parse_args()
    parts = {
        "model": part_model,
        "client": part_client,
        "offline": part_offline,
        "overhead": part_overhead,
        "index": part_index,
    }
    chosen = list(parts) if args.part == "all" else [] if args.part == "summary" else [args.part]
    with tempfile.TemporaryDirectory(prefix="scale-") as tmp:
        for name in chosen:
            parts[name](args, Path(tmp))
    text = summary()
    print(text)
    (RESULTS / "scale.md").write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
