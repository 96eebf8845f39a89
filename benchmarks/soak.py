"""Soak test: kill ``docintent bench`` and ``docintent index`` at random moments, resume, compare to a clean run.

Two parts, each against a clean, uninterrupted run of the same command:

- **bench**: a JSONL dataset of SAMPLES tiny images (every 50th file is broken on purpose, so error rows are
  part of the check), strategy ``none`` with the scripted brain (no model, no OCR). The command is started,
  killed with SIGKILL BENCH_KILLS times (every other start with ``--workers 2``; after each kill every child
  process must exit within ORPHAN_GRACE_SECONDS), then run to the end.
  Checks: one row per (sample, strategy), no duplicate lines, the same answers / errors / scores as the clean
  run, no process left behind.
- **index**: PAGES pages in text-layer PDFs (no OCR), killed INDEX_KILLS times, then finished. Checks: the same
  handle -> (document, page, text) map, the same BM25 matrix and vocabulary, the same top-10 for 20 queries, and
  after every kill that left all pages saved, ``search`` either works or refuses in one line (the kill hit the
  BM25 write: "unfinished, run docintent index again"), never a traceback.

One kill in five lands at a random moment of start-up; the others land once a random number of new rows (pages)
has been saved, spread so that every kill falls inside the remaining work. Results are printed and saved to benchmarks/results/soak.md.

    python benchmarks/soak.py                       # 500 samples x 20 kills, 2,000 pages x 10 kills
    python benchmarks/soak.py --samples 100 --pages 300 --bench-kills 5 --index-kills 3     # quick
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"


# --- inputs ------------------------------------------------------------------------------------------


def _png(width: int, height: int, value: int) -> bytes:
    """A grey PNG written by hand (no imaging library needed, identical bytes every time)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    raw = b"".join(b"\0" + bytes([value]) * width for _ in range(height))
    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 0, 0, 0, 0])
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", ihdr) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b"")


def make_dataset(folder: Path, samples: int) -> Path:
    """SAMPLES rows over tiny PNGs; every 50th image is truncated (its row must become an error row)."""
    images = folder / "images"
    images.mkdir(parents=True, exist_ok=True)
    rows = []
    for i in range(samples):
        name = f"img_{i:05d}.png"
        data = _png(24, 16, 40 + i % 200)
        (images / name).write_bytes(data[: len(data) // 2] if i % 50 == 49 else data)
        rows.append(
            {
                "id": f"s{i:05d}",
                "image": f"images/{name}",
                "question": f"What is item {i}?",
                "answers": [str(i)],
                "task": "doc",
                "subset": "DocVQA",
                "group": f"g{i // 4}",
            }
        )
    path = folder / "samples.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _pdf(pages: list[str]) -> bytes:
    """A PDF whose pages carry a real text layer (Helvetica), written by hand."""
    objects: list[bytes] = [b"<< /Type /Catalog /Pages 2 0 R >>", b""]
    kids = []
    font_id = 3
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for text in pages:
        lines = [text[i : i + 80] for i in range(0, len(text), 80)]
        ops = ["BT /F1 11 Tf 50 760 Td 14 TL"]
        for line in lines:
            safe = line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")
            ops.append(f"({safe}) Tj T*")
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
        content_id = len(objects)
        objects.append(
            b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> "
            b"/Contents %d 0 R >>" % (font_id, content_id)
        )
        kids.append(len(objects))
    objects[1] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(b"%d 0 R" % k for k in kids), len(kids))
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % o for o in offsets)
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    return bytes(out)


WORDS = (
    "invoice total amount shipment warranty battery engine valve sensor filter pump motor cable torque "
    "pressure voltage current schedule payment balance account contract clause section table figure"
).split()


def make_corpus(folder: Path, pages: int, per_pdf: int = 100) -> Path:
    """PAGES text-layer pages in PDFs of PER_PDF pages; the words are seeded, so every page differs."""
    rng = random.Random(0)
    folder.mkdir(parents=True, exist_ok=True)
    for doc in range((pages + per_pdf - 1) // per_pdf):
        n = min(per_pdf, pages - doc * per_pdf)
        texts = [f"Document {doc} page {p}: " + " ".join(rng.choice(WORDS) for _ in range(60)) for p in range(n)]
        (folder / f"doc_{doc:03d}.pdf").write_bytes(_pdf(texts))
    return folder


# --- running and killing -----------------------------------------------------------------------------


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT / "src") + os.pathsep + env.get("PYTHONPATH", "")
    env.setdefault("DOCINTENT_THREADS", "1")
    env["DOCINTENT_CACHE"] = "0"
    return env


def _children(pid: int) -> list[int]:
    """Pids of the processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        state = (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


#: How long the children of a killed process may take to notice and exit (a worker still importing its
#: modules on a loaded machine only starts watching its parent once it has imported them).
ORPHAN_GRACE_SECONDS = 30.0


def run(cmd: list[str], *, kill_when=None, max_wait: float = 300.0) -> dict:
    """Run ``cmd``; with ``kill_when`` (a function polled every 10 ms), SIGKILL the process as soon as it returns
    True, and report how long its child processes took to exit and which were still alive after
    ORPHAN_GRACE_SECONDS."""
    # Output goes to files, not pipes: a process left behind after a kill would hold a pipe open forever.
    with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
        result = _run(cmd, kill_when, max_wait, out_file, err_file)
        out_file.seek(0)
        err_file.seek(0)
        result.update(stdout=out_file.read(), stderr=err_file.read())
    return result


def _run(cmd, kill_when, max_wait, out_file, err_file) -> dict:
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, env=_env(), stdout=out_file, stderr=err_file, text=True)
    if kill_when is None:
        proc.wait()
        return {"rc": proc.returncode, "seconds": time.perf_counter() - start}
    seen_children: set[int] = set()
    polls = 0
    while proc.poll() is None and time.perf_counter() - start < max_wait:
        if polls % 5 == 0:
            seen_children.update(_children(proc.pid))
        if kill_when():
            break
        polls += 1
        time.sleep(0.01)
    killed = proc.poll() is None
    if killed:
        seen_children.update(_children(proc.pid))
        proc.send_signal(signal.SIGKILL)
    proc.wait()
    left: list[int] = []
    exit_seconds = 0.0
    if killed:
        killed_at = time.perf_counter()
        while time.perf_counter() - killed_at < ORPHAN_GRACE_SECONDS:
            left = [c for c in seen_children if _alive(c)]
            if not left:
                break
            time.sleep(0.1)
        exit_seconds = time.perf_counter() - killed_at if seen_children else 0.0
    return {
        "rc": proc.returncode,
        "killed": killed,
        "children": len(seen_children),
        "orphans": left,
        "children_exit_seconds": exit_seconds,
        "seconds": time.perf_counter() - start,
    }


def _kill_plan(rng: random.Random, done: int, total: int, kills_left: int, startup: float):
    """When to kill the next attempt: during start-up (one time in five, after a random delay), else once a
    random number of new items (spread so the remaining kills fit in the remaining work) are saved."""
    if rng.random() < 0.2:
        return ("time", rng.uniform(0.0, startup))
    step = max(1, 2 * (total - done) // (kills_left + 1))
    return ("count", done + rng.randint(1, step))


def _rows(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _bench_cmd(dataset: Path, out: Path, workers: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "docintent",
        "bench",
        "--dataset",
        f"jsonl:{dataset}",
        "--strategies",
        "none",
        "--brain",
        "scripted",
        "--brain-opt",
        "final=42",
        "--no-progress",
        "--workers",
        str(workers),
        "--out",
        str(out),
    ]


def _time_passed(t0: float, seconds: float):
    return lambda: time.perf_counter() - t0 >= seconds


def _count_lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except OSError:
        return 0


def _startup_seconds() -> float:
    return run([sys.executable, "-m", "docintent", "--version"])["seconds"]


def soak_bench(work: Path, samples: int, kills: int, rng: random.Random) -> dict:
    dataset = make_dataset(work / "data", samples)
    clean = run(_bench_cmd(dataset, work / "clean", 1))
    assert clean["rc"] == 0, clean["stderr"]
    reference = {
        (r["sample"]["id"], r["strategy"]): (r["answer"], r["error"], r["score"])
        for r in _rows(work / "clean" / "results.jsonl")
    }
    startup = _startup_seconds()
    out = work / "killed"
    results = out / "results.jsonl"
    log = []
    for attempt in range(kills):
        workers = 2 if attempt % 2 else 1
        done = _count_lines(results)
        kind, value = _kill_plan(rng, done, samples, kills - attempt, startup)
        t0 = time.perf_counter()
        when = _time_passed(t0, value) if kind == "time" else (lambda target=value: _count_lines(results) >= target)
        result = run(_bench_cmd(dataset, out, workers), kill_when=when)
        log.append(
            {
                "workers": workers,
                "killed": result["killed"],
                "rows": _count_lines(results),
                "children": result["children"],
                "orphans": len(result["orphans"]),
                "rc": result["rc"],
                "at": kind,
                "exit_s": result.get("children_exit_seconds", 0.0),
            }
        )
        for pid in result["orphans"]:  # do not leave anything running, whatever the check says
            os.kill(pid, signal.SIGKILL)
    final = run(_bench_cmd(dataset, out, 2))
    rows = _rows(results)
    keys = [(r["sample"]["id"], r["strategy"]) for r in rows]
    got = {(r["sample"]["id"], r["strategy"]): (r["answer"], r["error"], r["score"]) for r in rows}
    mismatched = sum(1 for k, v in reference.items() if got.get(k) != v)
    orphans = sum(x["orphans"] for x in log)
    return {
        "samples": samples,
        "clean_seconds": round(clean["seconds"], 2),
        "kills": sum(x["killed"] for x in log),
        "attempts": log,
        "final_rc": final["rc"],
        "final_stderr": final["stderr"][-500:],
        "rows": len(rows),
        "expected_rows": len(reference),
        "duplicates": len(keys) - len(set(keys)),
        "mismatched": mismatched,
        "error_rows": sum(1 for v in got.values() if v[1]),
        "orphans": orphans,
        "slowest_exit": max((x["exit_s"] for x in log if x["children"]), default=0.0),
        "ok": final["rc"] == 0
        and len(rows) == len(reference)
        and len(keys) == len(set(keys))
        and mismatched == 0
        and orphans == 0,
    }


def _index_cmd(corpus: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "docintent", "index", str(corpus), "--out", str(out), "--text", "pdf"]


QUERIES = [" ".join(random.Random(q).sample(WORDS, 3)) for q in range(20)]


def _index_state(folder: Path) -> dict:
    import sqlite3

    import numpy as np

    con = sqlite3.connect(folder / "index.sqlite")
    pages = con.execute(
        "SELECT p.handle, d.path, p.page_no, p.text FROM pages p JOIN documents d USING (doc_id) ORDER BY p.handle"
    ).fetchall()
    con.close()
    pages = [(h, Path(path).name, no, text) for h, path, no, text in pages]
    with np.load(folder / "bm25.npz") as npz:
        matrix = {k: npz[k].tolist() for k in npz.files}
    vocab = json.loads((folder / "bm25_vocab.json").read_text())
    return {"pages": pages, "matrix": matrix, "vocab": vocab}


def _search(folder: Path) -> list[list[str]]:
    sys.path.insert(0, str(ROOT / "src"))
    from docintent.retrieval import PageIndex, get_retriever

    index = PageIndex.open(folder)
    try:
        retriever = get_retriever(index, "bm25")
        return [[h.handle for h in retriever.search(q, 10)] for q in QUERIES]
    finally:
        index.close()


def _pages_done(folder: Path) -> int:
    """Pages with text in an index being built (-1 when the database cannot be read)."""
    import sqlite3

    if not (folder / "index.sqlite").exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{folder / 'index.sqlite'}?mode=ro", uri=True, timeout=0.05)
        try:
            return con.execute("SELECT COUNT(*) FROM pages WHERE text IS NOT NULL").fetchone()[0]
        finally:
            con.close()
    except sqlite3.Error:
        return -1


def soak_index(work: Path, pages: int, kills: int, rng: random.Random) -> dict:
    corpus = make_corpus(work / "corpus", pages)
    clean = run(_index_cmd(corpus, work / "clean.idx"))
    assert clean["rc"] == 0, clean["stderr"]
    startup = _startup_seconds()
    out = work / "killed.idx"
    log = []
    search_failures = refusals = 0
    for attempt in range(kills):
        done = max(0, _pages_done(out))
        kind, value = _kill_plan(rng, done, pages, kills - attempt, startup)
        t0 = time.perf_counter()
        when = _time_passed(t0, value) if kind == "time" else (lambda target=value: _pages_done(out) >= target)
        result = run(_index_cmd(corpus, out), kill_when=when)
        done_after = _pages_done(out)
        entry = {"killed": result["killed"], "pages_done": done_after, "rc": result["rc"], "at": kind}
        if done_after == pages:
            # Every page is saved; the kill may still have hit the BM25 write. Search must then work or refuse
            # in one line ("unfinished ... run docintent index again"), never half-load the files.
            probe = run([sys.executable, "-m", "docintent", "search", str(out), QUERIES[0]])
            entry["search_rc"] = probe["rc"]
            clean_refusal = probe["rc"] == 1 and "unfinished" in probe["stderr"] and "Traceback" not in probe["stderr"]
            refusals += clean_refusal
            search_failures += probe["rc"] != 0 and not clean_refusal
        log.append(entry)
    final = run(_index_cmd(corpus, out))
    a, b = _index_state(work / "clean.idx"), _index_state(out)
    same_pages = a["pages"] == b["pages"]
    same_bm25 = a["matrix"] == b["matrix"] and a["vocab"] == b["vocab"]
    same_search = _search(work / "clean.idx") == _search(out)
    return {
        "pages": pages,
        "clean_seconds": round(clean["seconds"], 2),
        "kills": sum(x["killed"] for x in log),
        "attempts": log,
        "final_rc": final["rc"],
        "final_stderr": final["stderr"][-500:],
        "same_pages": same_pages,
        "same_bm25": same_bm25,
        "same_top10": same_search,
        "search_failures_after_kill": search_failures,
        "search_refusals_after_kill": refusals,
        "ok": final["rc"] == 0 and same_pages and same_bm25 and same_search and search_failures == 0,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--samples", type=int, default=500)
    parser.add_argument("--bench-kills", type=int, default=20)
    parser.add_argument("--pages", type=int, default=2000)
    parser.add_argument("--index-kills", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default=str(RESULTS / "soak.md"))
    args = parser.parse_args()
    rng = random.Random(args.seed)
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="docintent-soak-") as tmp:
        work = Path(tmp)
        t0 = time.perf_counter()
        bench = soak_bench(work / "bench", args.samples, args.bench_kills, rng)
        index = soak_index(work / "index", args.pages, args.index_kills, rng)
        seconds = time.perf_counter() - t0
    lines = [
        "# Soak: killed and resumed runs against clean runs",
        "",
        f"`python benchmarks/soak.py --samples {args.samples} --bench-kills {args.bench_kills} --pages {args.pages} "
        f"--index-kills {args.index_kills} --seed {args.seed}`; {seconds:.0f} s in all; load average at start "
        f"{load:.2f}.",
        "",
        "| part | size | clean run (s) | kills landed | final exit | checks | result |",
        "|---|---|---|---|---|---|---|",
        f"| bench | {bench['samples']} samples ({bench['error_rows']} broken images) | {bench['clean_seconds']} | "
        f"{bench['kills']} of {args.bench_kills} | {bench['final_rc']} | rows {bench['rows']}/{bench['expected_rows']}, "
        f"duplicates {bench['duplicates']}, answers differing {bench['mismatched']}, orphaned workers "
        f"{bench['orphans']} (slowest exit {bench['slowest_exit']:.1f} s) | {'PASS' if bench['ok'] else 'FAIL'} |",
        f"| index | {index['pages']} text-layer pages | {index['clean_seconds']} | {index['kills']} of {args.index_kills} "
        f"| {index['final_rc']} | same pages+text {index['same_pages']}, same BM25 {index['same_bm25']}, same top-10 "
        f"{index['same_top10']}, search after a kill: {index['search_failures_after_kill']} failures, "
        f"{index['search_refusals_after_kill']} one-line 'unfinished' refusals | "
        f"{'PASS' if index['ok'] else 'FAIL'} |",
        "",
        "Bench attempts (workers, killed, rows in the file after the kill, child processes seen / left alive "
        f"after {ORPHAN_GRACE_SECONDS:.0f} s, seconds they took to exit):",
        "",
        ", ".join(
            f"{a['workers']}w {'k' if a['killed'] else 'done'} {a['rows']} rows {a['children']}/{a['orphans']}"
            f" {a['exit_s']:.1f}s"
            for a in bench["attempts"]
        ),
        "",
        "Index attempts (killed, pages done after the kill):",
        "",
        ", ".join(f"{'k' if a['killed'] else 'done'} {a['pages_done']}" for a in index["attempts"]),
        "",
        *(["Final bench run stderr:", "", "    " + bench["final_stderr"], ""] if bench["final_rc"] else []),
        *(["Final index run stderr:", "", "    " + index["final_stderr"], ""] if index["final_rc"] else []),
    ]
    text = "\n".join(lines)
    print(text)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(text)
    return 0 if bench["ok"] and index["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
