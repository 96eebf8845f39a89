"""Latency and memory of ``docintent serve``: what the service costs on top of ``docintent.ask``.

Four figures, all from one process that runs the service with uvicorn on a local port (a thread) and talks
to it over real HTTP:

1. requests per second of ``GET /v1/health`` (keep-alive connections from ``--clients`` threads);
2. time to the first Server-Sent Event (``POST /v1/ask`` sent -> first event read) and to the first step;
3. overhead of the service over ``docintent.ask`` on the same page file with the same brain and strategy:
   end-to-end service time (upload, decode, queue, run, the "done" event) against a direct call that also
   loads the file; the two alternate, caches off, and the ratio of medians is the headline;
4. memory (RSS) over ``--runs`` runs with a retention limit of ``--keep`` runs: finished runs kept in memory
   and on disk must stay at the limit, and RSS must stop growing once the limit is reached.

    DOCINTENT_THREADS=1 DOCINTENT_CACHE=0 python benchmarks/serve.py            # the README figures
    python benchmarks/serve.py --pairs 3 --runs 40                               # a quick look

Prints the figures and writes benchmarks/results/serve.{json,md}.
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import platform
import statistics
import sys
import tempfile
import threading
import time
import uuid
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"
ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the damaged invoice the service tests use


def _rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def _multipart(path: Path, fields: dict[str, str]) -> tuple[bytes, str]:
    boundary = uuid.uuid4().hex
    body = b""
    for name, value in fields.items():
        body += f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
    body += (
        f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{path.name}"\r\n\r\n'.encode()
        + path.read_bytes()
        + f"\r\n--{boundary}--\r\n".encode()
    )
    return body, f"multipart/form-data; boundary={boundary}"


def _post(port: int, path: Path, fields: dict[str, str]) -> str:
    body, content_type = _multipart(path, fields)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    conn.request("POST", "/v1/ask", body, {"Content-Type": content_type})
    response = conn.getresponse()
    data = json.loads(response.read())
    conn.close()
    if response.status != 202:
        raise RuntimeError(f"POST /v1/ask: {response.status} {data}")
    return str(data["id"])


def _events(port: int, run_id: str, t0: float) -> dict[str, float]:
    """Read the run's events; seconds from ``t0`` to the first event, the first step and "done", and the
    service's own account of the run (strategy seconds, queue wait, server-side wall time)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=300)
    conn.request("GET", f"/v1/runs/{run_id}/events")
    response = conn.getresponse()
    marks: dict[str, float] = {}
    while True:
        line = response.readline()
        if not line:
            break
        if line.startswith(b"event: "):
            kind = line[7:].strip().decode()
            now = time.perf_counter() - t0
            marks.setdefault("first_event", now)
            if kind == "step":
                marks.setdefault("first_step", now)
            if kind == "done":
                marks["done"] = now
                data = json.loads(response.readline()[6:])
                marks["strategy_s"] = data["seconds"] or 0.0
                marks["server_s"] = data["finished"] - data["created"]
                marks["queued_s"] = data["started"] - data["created"]
                break
    conn.close()
    return marks


def _health_rate(port: int, clients: int, seconds: float) -> dict[str, float]:
    counts = [0] * clients
    stop = time.perf_counter() + seconds

    def hammer(i: int) -> None:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        while time.perf_counter() < stop:
            conn.request("GET", "/v1/health")
            response = conn.getresponse()
            response.read()
            if response.status == 200:
                counts[i] += 1
        conn.close()

    start = time.perf_counter()
    threads = [threading.Thread(target=hammer, args=(i,)) for i in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - start
    return {"requests": sum(counts), "seconds": round(elapsed, 2), "per_second": round(sum(counts) / elapsed, 1)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=10, help="service/direct pairs for the overhead (default 10)")
    parser.add_argument("--runs", type=int, default=200, help="runs for the memory figure (default 200)")
    parser.add_argument("--keep", type=int, default=50, help="finished runs the service keeps (default 50)")
    parser.add_argument("--sse", type=int, default=20, help="runs timed for the first event (default 20)")
    parser.add_argument("--clients", type=int, default=4, help="threads asking /v1/health (default 4)")
    parser.add_argument("--strategy", default="docintent")
    parser.add_argument("--out", default=str(RESULTS / "serve"), help="results path without suffix")
    args = parser.parse_args()

    import uvicorn
    from PIL import Image

    import docintent
    from docintent.server import ServeConfig, create_app
    from server_helpers import damaged_page, free_port

    work = Path(tempfile.mkdtemp(prefix="serve-bench-"))
    page_path = work / "invoice.png"
    Image.fromarray(damaged_page()).save(page_path)
    question = "What is the total amount due?"
    fields = {"question": question, "strategy": args.strategy}

    port = free_port()
    config = ServeConfig(workers=2, keep_runs=args.keep, data_dir=work / "service")
    server = uvicorn.Server(uvicorn.Config(create_app(config), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    load_start = os.getloadavg()

    health = _health_rate(port, args.clients, 5.0)
    print(
        f"GET /v1/health: {health['per_second']} requests/s ({health['requests']} in {health['seconds']} s, "
        f"{args.clients} clients)"
    )

    # warm both paths once (OCR models, first-run imports)
    docintent.ask(page_path, question, strategy=args.strategy)
    _events(port, _post(port, page_path, fields), time.perf_counter())

    first_event, first_step = [], []
    for _ in range(args.sse):
        t0 = time.perf_counter()
        marks = _events(port, _post(port, page_path, fields), t0)
        first_event.append(marks["first_event"])
        first_step.append(marks.get("first_step", float("nan")))
    print(
        f"first SSE event: median {statistics.median(first_event) * 1000:.1f} ms; "
        f"first step: median {statistics.median(first_step) * 1000:.0f} ms (n={args.sse})"
    )

    service, direct, inside, server_side, direct_inside = [], [], [], [], []
    answers = set()
    for i in range(args.pairs):
        order = ("service", "direct") if i % 2 == 0 else ("direct", "service")
        for which in order:
            t0 = time.perf_counter()
            if which == "service":
                marks = _events(port, _post(port, page_path, fields), t0)
                service.append(marks["done"])
                inside.append(marks["strategy_s"])
                server_side.append(marks["server_s"])
            else:
                result = docintent.ask(page_path, question, strategy=args.strategy)
                direct.append(time.perf_counter() - t0)
                direct_inside.append(result.seconds)
                answers.add(result.answer)
    overhead = statistics.median(service) / statistics.median(direct) - 1.0
    ratios = [s / d - 1.0 for s, d in zip(service, direct)]
    print(
        f"service {statistics.median(service):.3f} s vs docintent.ask {statistics.median(direct):.3f} s "
        f"(medians, n={args.pairs} pairs): overhead {overhead * 100:+.1f} % "
        f"(per-pair median {statistics.median(ratios) * 100:+.1f} %); answers {sorted(answers)}"
    )
    print(
        f"  inside the strategy: service {statistics.median(inside):.3f} s, direct {statistics.median(direct_inside):.3f} s; "
        f"server-side wall {statistics.median(server_side):.3f} s"
    )

    store = server.config.app.state.store if hasattr(server.config.app, "state") else None
    memory = []
    done = 0
    rss0 = _rss_mb()
    batch = max(1, args.runs // 8)
    while done < args.runs:
        ids = [_post(port, page_path, fields) for _ in range(min(batch, args.runs - done))]
        for run_id in ids:
            _events(port, run_id, time.perf_counter())
        done += len(ids)
        store.evict() if store is not None else None
        kept = len(store.runs) if store is not None else None
        on_disk = len(list((work / "service" / "runs").iterdir()))
        memory.append(
            {"runs": done, "rss_mb": round(_rss_mb(), 1), "kept_in_memory": kept, "run_folders_on_disk": on_disk}
        )
        print(
            f"after {done:4d} runs: RSS {memory[-1]['rss_mb']:.0f} MB, runs kept {kept}, run folders on disk {on_disk}"
        )
    server.should_exit = True
    thread.join(timeout=10)
    load_end = os.getloadavg()

    at_limit = [m for m in memory if m["runs"] >= args.keep * 2]
    growth = round(at_limit[-1]["rss_mb"] - at_limit[0]["rss_mb"], 1) if len(at_limit) > 1 else None
    earlier = 2 + args.sse + args.pairs  # warm-up, first-event and overhead runs before the memory loop
    result = {
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "load_start": load_start,
            "load_end": load_end,
            "threads": os.environ.get("DOCINTENT_THREADS"),
            "cache": os.environ.get("DOCINTENT_CACHE"),
        },
        "page": "tests/server_helpers.damaged_page() (640 px wide invoice, shadow + blur)",
        "strategy": args.strategy,
        "brain": "offline",
        "health": health,
        "first_event_ms": {"median": round(statistics.median(first_event) * 1000, 1), "n": args.sse},
        "first_step_ms": {"median": round(statistics.median(first_step) * 1000, 1), "n": args.sse},
        "overhead": {
            "service_s": [round(v, 4) for v in service],
            "direct_s": [round(v, 4) for v in direct],
            "median_service_s": round(statistics.median(service), 4),
            "median_direct_s": round(statistics.median(direct), 4),
            "overhead_pct": round(overhead * 100, 2),
            "per_pair_median_pct": round(statistics.median(ratios) * 100, 2),
            "pairs": args.pairs,
            "median_strategy_s_service": round(statistics.median(inside), 4),
            "median_strategy_s_direct": round(statistics.median(direct_inside), 4),
            "median_server_wall_s": round(statistics.median(server_side), 4),
        },
        "memory": {
            "keep_runs": args.keep,
            "rss_start_mb": round(rss0, 1),
            "points": memory,
            "earlier_runs": earlier,
            "growth_after_limit_mb": growth,
        },
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.with_suffix(".json").write_text(json.dumps(result, indent=2) + "\n")
    md = [
        "# docintent serve: latency and memory",
        "",
        f"Load average at start {load_start[0]:.2f}, at end {load_end[0]:.2f}; {os.cpu_count()} CPUs; "
        f"DOCINTENT_THREADS={result['machine']['threads']}, DOCINTENT_CACHE={result['machine']['cache']}; "
        f"brain offline, strategy {args.strategy}; page: {result['page']}.",
        "",
        "| figure | value |",
        "|---|---:|",
        f"| GET /v1/health ({args.clients} keep-alive clients) | {health['per_second']} requests/s |",
        f"| POST -> first SSE event (median of {args.sse}) | {result['first_event_ms']['median']} ms |",
        f"| POST -> first step event (median of {args.sse}) | {result['first_step_ms']['median']} ms |",
        f"| service end-to-end (median of {args.pairs}) | {result['overhead']['median_service_s']} s |",
        f"| docintent.ask on the same file (median of {args.pairs}) | {result['overhead']['median_direct_s']} s |",
        f"| overhead of the service | {result['overhead']['overhead_pct']:+.1f} % |",
        f"| RSS growth once {args.keep} runs are kept (from run {at_limit[0]['runs'] if at_limit else '-'} to {args.runs}) | "
        f"{growth if growth is not None else '-'} MB |",
        "",
        f"The memory loop starts after {earlier} earlier runs (warm-up, first-event and overhead timings); "
        f"RSS was {round(rss0, 1)} MB when it started.",
        "",
        "| runs | RSS MB | runs in memory | run folders on disk |",
        "|---:|---:|---:|---:|",
    ] + [f"| {m['runs']} | {m['rss_mb']} | {m['kept_in_memory']} | {m['run_folders_on_disk']} |" for m in memory]
    out.with_suffix(".md").write_text("\n".join(md) + "\n")
    print(f"wrote {out.with_suffix('.json')} and {out.with_suffix('.md')}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
