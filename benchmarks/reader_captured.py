"""The reader on captured pages of the held-out layout families: clean-page ANLS and captured docintent ANLS on
layout families the reader's trained scorer never saw.

The reader corpus (``benchmarks/reader_corpus.py``) deals its layout families to ``train``, ``calibration`` and
``test`` (``train_reader.split_families``); the committed scorer's ``scorer.manifest.json`` records the split it
was trained with, and the build refuses when the two disagree (``--skip-split-check`` is for trials only: the
scorer may then have seen the families evaluated, and the manifest and the results say so).

``build`` takes the first ``--per-family`` documents of every test family in corpus order, keeps at most
``--questions`` answerable questions a page (drawn by the seed, question families used least so far first, with
``broad.choose_questions``), rebuilds each page with ``readerset.make``, prints it with Chromium
(``reader_corpus.render``), checks every kept gold answer (or its evidence) on the page's text layer as the
corpus build does, rasterises it at ~2000 px (``broad.rasterise``) and photographs it four times under the
broad set's capture conditions (``broad.page_conditions`` / ``broad.plan``, ``docintent.synth.capture.apply``).
It writes a synthetic-set folder (``samples.jsonl``: ``subset`` = document kind, ``group`` = question,
``meta.family`` = question family, ``meta.layout_family``, ``meta.kind``, ``meta.condition``,
``meta.clean_image``) and ``manifest.json``; rebuilding gives identical files.

``run`` runs ``docintent bench`` with the offline brain for ``none`` and ``docintent`` (resumable: the run folder
keeps its rows), asks the same questions on the clean renders (``strategies.clean_rows``), and writes ANLS
overall, by document kind, by question family, by capture condition and by layout family, with the clean
answers given at confidence >= 0.9 and the share of them that are wrong.

    python benchmarks/reader_captured.py build                   # benchmarks/out/reader_captured/
    python benchmarks/reader_captured.py run --workers 2         # benchmarks/results/reader_captured.{md,json}
    python benchmarks/reader_captured.py all --limit-pages 2 --out /tmp/rc --run-dir /tmp/rc-run \\
        --results /tmp/rc-results --skip-split-check            # a quick trial
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import shlex
import subprocess
import sys
import tempfile
import time
import zlib
from collections import Counter, defaultdict
from pathlib import Path
from types import SimpleNamespace

sys.path.insert(0, str(Path(__file__).resolve().parent))

import strategies  # noqa: E402  (benchmarks/ is on sys.path)
from broad import RENDER_LONGEST, choose_questions, page_conditions, plan, rasterise  # noqa: E402
from docintent.io.office import file_digest  # noqa: E402
from reader_corpus import BATCH, CSS, render  # noqa: E402
from readerset import FAMILIES, make  # noqa: E402
from readerset.textlayer import ocr_lines, shows  # noqa: E402
from train_reader import split_families  # noqa: E402

ROOT = Path(__file__).resolve().parent
REPO = ROOT.parent
CORPUS = ROOT / "out" / "readerset" / "docs.jsonl"
DEFAULT_OUT = ROOT / "out" / "reader_captured"
DEFAULT_RUN = ROOT / "out" / "runs" / "reader_captured"
RESULTS = ROOT / "results"
SCORER_MANIFEST = REPO / "src" / "docintent" / "data" / "reader" / "scorer.manifest.json"
STRATEGIES = ("none", "docintent")
CONFIDENT = 0.9


def fail(message: str) -> None:
    raise SystemExit(f"reader_captured: {message}")


def shown_path(path: Path) -> str:
    """``path`` relative to the repository when it is inside it."""
    try:
        return str(path.resolve().relative_to(REPO))
    except ValueError:
        return str(path)


# --- corpus and split ------------------------------------------------------------------------------


def load_corpus(path: Path) -> list[dict]:
    """The corpus's pages without their lines (index, doc, kind, family, locale, variant, questions)."""
    if not path.is_file():
        fail(f"{path}: no corpus; build it with benchmarks/reader_corpus.py")
    docs = []
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f):
            if not line.strip():
                continue
            d = json.loads(line)
            d.pop("lines", None)
            if d["doc"] != f"rs{n:06d}":
                fail(f"{path}: line {n + 1} holds {d['doc']}, not rs{n:06d} (a corpus is one page a line, in order)")
            docs.append(d)
    return docs


def corpus_seed(path: Path, default: int, digest: str) -> int:
    """The seed the corpus was built with (its manifest's), checking the manifest describes this docs.jsonl."""
    manifest = path.parent / "manifest.json"
    if not manifest.is_file():
        print(f"note: {manifest} missing (corpus build still running?); corpus seed taken as {default}", flush=True)
        return default
    m = json.loads(manifest.read_text())
    if m.get("sha256") and m["sha256"] != digest:
        fail(f"{manifest} does not describe {path} (sha256 differs: build still running or stale manifest)")
    return int(m.get("seed", default))


def scorer_manifest() -> dict:
    return json.loads(SCORER_MANIFEST.read_text()) if SCORER_MANIFEST.is_file() else {}


def check_split(split: dict[str, str], seed: int, skip: bool) -> dict:
    """Compare the corpus's split with the committed scorer's (``scorer.manifest.json`` key ``split``); refuse
    on any difference unless ``skip``. Returns what the manifest and the results record about it."""
    m = scorer_manifest()
    if "split" not in m:
        print(f"note: {SCORER_MANIFEST} has no split; only the corpus split is used", flush=True)
        return {"status": "no scorer split", "seen_by_scorer": []}
    # only the families this generator makes: the scorer may also have learned on another corpus's
    # (``broad_corpus.py``), and those are not this corpus's to check
    theirs = {fam: part for part, fams in m["split"].items() for fam in fams if fam in FAMILIES}
    differ = sorted(f for f in set(split) | set(theirs) if split.get(f) != theirs.get(f))
    seen = sorted(f for f, p in split.items() if p == "test" and theirs.get(f) in ("train", "calibration"))
    if differ and not skip:
        fail(
            f"split_families(corpus, seed={seed}) and {shown_path(SCORER_MANIFEST)} ({m.get('version')}) disagree on "
            f"{len(differ)} of {len(set(split) | set(theirs))} families (e.g. {', '.join(differ[:3])}); retrain the "
            "scorer on this corpus, or pass --skip-split-check for a trial"
        )
    if not differ:
        return {"status": "agrees with scorer.manifest.json", "seen_by_scorer": []}
    return {
        "status": f"SKIPPED: {len(differ)} families differ from scorer.manifest.json",
        "differing_families": len(differ),
        "seen_by_scorer": seen,
    }


# --- build -----------------------------------------------------------------------------------------


def select_pages(docs: list[dict], split: dict[str, str], per_family: int, limit: int | None) -> list[dict]:
    """The first ``per_family`` documents with an answerable question of every test family, in corpus order."""
    taken: Counter = Counter()
    pages = []
    for d in docs:
        if split.get(d["family"]) != "test" or taken[d["family"]] >= per_family:
            continue
        if not any(q["answers"] and q["family"] != "unanswerable" for q in d["questions"]):
            continue
        taken[d["family"]] += 1
        pages.append(d)
    return pages[:limit] if limit else pages


def page_questions(doc: dict, made: dict, seed: int, k: int, used: Counter) -> list[SimpleNamespace]:
    """Up to ``k`` answerable questions of a corpus page, each with the strings its build must find shown."""
    index = int(doc["doc"][2:])
    pool = []
    for q in doc["questions"]:
        if not q["answers"] or q["family"] == "unanswerable":
            continue
        j = int(q["id"].rsplit("-", 1)[1])
        built = made["questions"][j] if j < len(made["questions"]) else None
        if (
            q["id"] != f"{index:06d}-{j}"
            or built is None
            or (built.question, built.answers)
            != (
                q["question"],
                q["answers"],
            )
        ):
            fail(
                f"{doc['doc']}: question {q['id']} differs from readerset.make (the corpus was built by other "
                "readerset code; rebuild it)"
            )
        pool.append(SimpleNamespace(**q, shown=list(built.shown())))
    return choose_questions(pool, zlib.crc32(f"{seed}/{doc['doc']}".encode()), k, used)


def missing_on_page(page, questions: list[SimpleNamespace]) -> list[str]:
    """The kept questions whose gold answer (or evidence) is not on the page's text layer (reader_corpus's rule)."""
    on_page = shows(*ocr_lines(page))
    return [f"{q.id}: {s!r}" for q in questions for s in q.shown if not on_page(s)]


def build(args: argparse.Namespace) -> dict:
    import cv2
    import pypdfium2 as pdfium

    from docintent.synth.capture import apply

    started = time.time()
    corpus = Path(args.corpus)
    digest = file_digest(corpus)
    seed = corpus_seed(corpus, args.seed, digest)
    docs = load_corpus(corpus)
    split = split_families(docs, args.seed)
    split_check = check_split(split, args.seed, args.skip_split_check)
    test_families = sorted(f for f, p in split.items() if p == "test")
    pages = select_pages(docs, split, args.per_family, args.limit_pages)
    if not pages:
        fail("no test-family page to build")
    out = Path(args.out)
    images = out / "images"
    images.mkdir(parents=True, exist_ok=True)
    used: Counter = Counter()
    chosen: dict[str, list[SimpleNamespace]] = {}
    made: dict[str, dict] = {}
    for d in pages:
        made[d["doc"]] = make(seed, int(d["doc"][2:]), d["family"])
        if made[d["doc"]]["kind"] != d["kind"]:
            fail(f"{d['doc']}: readerset.make builds a {made[d['doc']]['kind']}, the corpus says {d['kind']}")
        chosen[d["doc"]] = page_questions(d, made[d["doc"]], args.seed, args.questions, used)
    problems: list[str] = []
    samples: list[dict] = []
    written: set[str] = set()
    for start in range(0, len(pages), BATCH):
        part = pages[start : start + BATCH]
        html = (
            f'<!DOCTYPE html><html><head><meta charset="utf-8"><style>{CSS}</style></head><body>'
            + "".join(made[d["doc"]]["html"] for d in part)
            + "</body></html>"
        )
        with tempfile.TemporaryDirectory(prefix="reader-captured-") as tmp:
            pdf_path = render(html, Path(tmp))
            pdf = pdfium.PdfDocument(str(pdf_path))
            if len(pdf) != len(part):
                fail(f"batch at page {start}: {len(pdf)} PDF pages for {len(part)} documents (a page overflowed)")
            for i, d in enumerate(part):
                position = start + i
                page = pdf[i]
                problems += [f"{d['doc']} {p}" for p in missing_on_page(page, chosen[d["doc"]])]
                page.close()
                image, _ = rasterise(pdf_path, i, Path(tmp))
                samples += capture_page(d, position, image, chosen[d["doc"]], images, written, cv2, apply, args.force)
                print(f"{d['doc']} ({d['family']}): {len(chosen[d['doc']])} questions, captured", flush=True)
            pdf.close()
    if problems:
        fail("gold answers not on their pages: " + "; ".join(problems))
    for stale in sorted(images.iterdir()):
        if stale.name not in written:
            stale.unlink()
    with open(out / "samples.jsonl", "w", encoding="utf-8") as f:
        # questions in a seeded shuffled order (captures of one question together), as in broad.py, so that a run
        # over the first N samples covers many kinds of page
        for row in sorted(samples, key=lambda r: (zlib.crc32(r["group"].encode()), r["group"], r["capture"])):
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    first = [r for r in samples if r["capture"] == 1]
    scorer = scorer_manifest()
    manifest = {
        "corpus": shown_path(corpus),
        "corpus_docs": len(docs),
        "corpus_sha256": digest,
        "corpus_seed": seed,
        "split_seed": args.seed,
        "split_check": split_check,
        "scorer_version": scorer.get("version"),
        "scorer_corpus_sha256": scorer.get("corpus_sha256"),
        "per_family": args.per_family,
        "questions_per_page": args.questions,
        "limit_pages": args.limit_pages,
        "render_longest": RENDER_LONGEST,
        "pages": len(pages),
        "questions": len(first),
        "samples": len(samples),
        "test_families": test_families,
        "layout_families": dict(sorted(Counter(d["family"] for d in pages).items())),
        "test_families_without_pages": sorted(set(test_families) - {d["family"] for d in pages}),
        "kinds": dict(sorted(Counter(d["kind"] for d in pages).items())),
        "question_families": dict(sorted(Counter(r["meta"]["family"] for r in first).items())),
        "conditions": dict(sorted(Counter(r["meta"]["condition"] for r in samples).items())),
        "documents": [d["doc"] for d in pages],
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(
        f"built {manifest['pages']} pages, {manifest['questions']} questions, {manifest['samples']} samples "
        f"in {time.time() - started:.1f} s -> {out}",
        flush=True,
    )
    return manifest


def capture_page(d, position, image, questions, images: Path, written: set[str], cv2, apply, force) -> list[dict]:
    """Write a page's clean PNG and its four captures (redone only when the render or the plan changed, as in
    broad.py) and return its sample rows."""
    clean = images / f"{d['doc']}-clean.png"
    cv2.imwrite(str(clean), image[:, :, ::-1])
    written.add(clean.name)
    render_hash = hashlib.sha256(image.tobytes()).hexdigest()
    rows = []
    for capture, condition in enumerate(page_conditions(position), 1):
        capture_plan = plan(d["doc"], capture, condition)
        path = images / f"{d['doc']}-c{capture}.jpg"
        stamp = path.with_suffix(".stamp")
        key = hashlib.sha256((render_hash + json.dumps(capture_plan.to_meta())).encode()).hexdigest()
        if force or not path.exists() or not stamp.exists() or stamp.read_text() != key:
            captured, _ = apply(image, capture_plan)
            cv2.imwrite(str(path), captured[:, :, ::-1], [cv2.IMWRITE_JPEG_QUALITY, 90])
            stamp.write_text(key)
        written.update({path.name, stamp.name})
        for q in questions:
            group = f"rs{q.id}"
            rows.append(
                {
                    "id": f"{group}-c{capture}",
                    "image": f"images/{path.name}",
                    "question": q.question,
                    "answers": list(q.answers),
                    "task": "doc",
                    "subset": d["kind"],
                    "group": group,
                    "capture": capture,
                    "degradations": list(capture_plan.names),
                    "meta": {
                        "condition": condition,
                        "family": q.family,
                        "kind": d["kind"],
                        "layout_family": d["family"],
                        "field": q.field,
                        "doc": d["doc"],
                        "locale": d.get("locale"),
                        "variant": d.get("variant"),
                        "split": "test",
                        "source": "readerset",
                        "clean_image": f"images/{clean.name}",
                        "capture_plan": capture_plan.to_meta(),
                    },
                }
            )
    return rows


# --- run and report --------------------------------------------------------------------------------


def git_commit() -> str:
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=REPO, capture_output=True, text=True, check=True)
        dirty = subprocess.run(["git", "status", "--porcelain"], cwd=REPO, capture_output=True, text=True)
        return head.stdout.strip() + (" (work tree has changes)" if dirty.stdout.strip() else "")
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def summary(rows: list[dict]) -> dict:
    """ANLS (percent), correct share, consistency and confident answers of some rows."""
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        groups[r["group"]].append(bool(r["correct"]))
    sure = [r for r in rows if (r["confidence"] or 0.0) >= CONFIDENT]
    wrong = sum(1 for r in sure if not r["correct"])
    return {
        "anls": strategies.mean_of([float(r["score"] or 0.0) for r in rows]),
        "correct_pct": strategies.mean_of([float(bool(r["correct"])) for r in rows]),
        "consistency": strategies.mean_of([float(all(v)) for v in groups.values()]),
        "rows": len(rows),
        "questions": len(groups),
        "confident": len(sure),
        "confident_wrong": wrong,
        "confident_wrong_pct": 100.0 * wrong / len(sure) if sure else 0.0,
    }


def clean_answers(dataset: Path, run_dir: Path, digest: str) -> tuple[list[dict], float]:
    """The clean-page rows (``strategies.clean_rows``), kept in the run folder for this samples.jsonl."""
    cache = run_dir / "clean_rows.json"
    if cache.is_file():
        kept = json.loads(cache.read_text())
        if kept.get("samples_sha256") == digest:
            return kept["rows"], kept["seconds"]
    t0 = time.time()
    rows = strategies.clean_rows(dataset)
    seconds = time.time() - t0
    cache.write_text(json.dumps({"samples_sha256": digest, "seconds": seconds, "rows": rows}) + "\n")
    return rows, seconds


def run(args: argparse.Namespace) -> None:
    dataset, run_dir = Path(args.out), Path(args.run_dir)
    index = dataset / "samples.jsonl"
    if not index.is_file():
        fail(f"{dataset}: no samples.jsonl; run the build first")
    load_start = os.getloadavg()
    started = datetime.datetime.now(datetime.UTC)
    digest = file_digest(index)
    run_dir.mkdir(parents=True, exist_ok=True)
    stamp = run_dir / "reader_captured.samples.sha256"
    if stamp.is_file() and stamp.read_text().strip() != digest:
        fail(f"{run_dir} holds a run of another build of {index}; delete it or choose another --run-dir")
    stamp.write_text(digest + "\n")
    built = json.loads((dataset / "manifest.json").read_text())
    samples = {s["id"]: s for s in map(json.loads, index.read_text(encoding="utf-8").splitlines())}
    if not args.report_only:
        for strategy in STRATEGIES:  # one bench per strategy, as strategies.py runs them
            strategies.bench(dataset, strategy, args.workers, run_dir, args.brain_opt)
    captured = {
        (sid, strategy): r
        for (sid, strategy), r in strategies.last_rows(run_dir).items()
        if sid in samples and strategy in STRATEGIES
    }
    clean, clean_seconds = clean_answers(dataset, run_dir, digest)
    by_group = {s["group"]: s for s in samples.values() if s["capture"] == 1}
    rows: dict[str, list[dict]] = defaultdict(list)
    for (sid, strategy), r in sorted(captured.items()):
        meta = samples[sid]["meta"]
        rows[strategy].append(
            {
                "group": samples[sid]["group"],
                "score": r.get("score"),
                "correct": r.get("correct"),
                "confidence": (r.get("result") or {}).get("confidence"),
                "seconds": r.get("seconds") or 0.0,
                "error": r.get("error"),
                "kind": meta["kind"],
                "family": meta["family"],
                "condition": meta["condition"],
                "layout_family": meta["layout_family"],
            }
        )
    for c in clean:
        meta = by_group[c["group"]]["meta"]
        rows["clean"].append(
            {**c, "kind": meta["kind"], "family": meta["family"], "layout_family": meta["layout_family"]}
        )
    names = [s for s in (*STRATEGIES, "clean") if rows.get(s)]
    overall = {s: summary(rows[s]) for s in names}
    for s in STRATEGIES:
        if rows.get(s):
            overall[s]["errors"] = sum(1 for r in rows[s] if r["error"])
            seconds = sorted(r["seconds"] for r in rows[s])
            overall[s]["seconds_per_row"] = sum(seconds) / len(seconds)
            overall[s]["median_seconds_per_row"] = seconds[len(seconds) // 2]
    if rows.get("clean"):
        overall["clean"]["seconds_per_row"] = clean_seconds / len(rows["clean"])
    tables = {}
    for key in ("kind", "family", "condition", "layout_family"):
        table: dict[str, dict[str, dict]] = defaultdict(dict)
        for s in names:
            if key == "condition" and s == "clean":
                continue  # a clean page has no capture condition
            values: dict[str, list[dict]] = defaultdict(list)
            for r in rows[s]:
                values[str(r[key])].append(r)
            for value, mine in values.items():
                e = summary(mine)
                table[value][s] = {k: e[k] for k in ("anls", "correct_pct", "consistency", "rows", "questions")}
        tables[key] = dict(sorted(table.items()))
    finished = datetime.datetime.now(datetime.UTC)
    command = shlex.join(["python", "benchmarks/reader_captured.py", *sys.argv[1:]])
    result = {
        "command": command,
        "started": started.isoformat(timespec="seconds"),
        "finished": finished.isoformat(timespec="seconds"),
        "git_commit": git_commit(),
        "scorer_version": scorer_manifest().get("version"),
        "load_average": {"start": [round(x, 2) for x in load_start], "end": [round(x, 2) for x in os.getloadavg()]},
        "cpus": os.cpu_count(),
        "workers": args.workers,
        "dataset": shown_path(dataset),
        "run_dir": shown_path(run_dir),
        "samples_sha256": digest,
        "build": {k: v for k, v in built.items() if k != "documents"},
        "missing_rows": {s: len(samples) - len(rows.get(s, [])) for s in STRATEGIES},
        "overall": overall,
        "by": tables,
    }
    text = report_md(result)
    print(text)
    results = Path(args.results)
    results.mkdir(parents=True, exist_ok=True)
    (results / f"{args.name}.md").write_text(text + "\n")
    (results / f"{args.name}.json").write_text(json.dumps(result, indent=1) + "\n")
    print(f"wrote {results / args.name}.md and .json", flush=True)


def report_md(res: dict) -> str:
    b = res["build"]
    load = res["load_average"]
    lines = [
        "# Reader on captured pages of held-out layout families",
        "",
        f"- command: `{res['command']}`",
        f"- date: {res['started']} to {res['finished']} (UTC); git commit {res['git_commit']}",
        f"- load average (1/5/15 min): start {load['start']}, end {load['end']}; {res['cpus']} CPUs, "
        f"{res['workers']} bench workers",
        f"- run with scorer {res.get('scorer_version', 'not recorded')}; built with scorer {b['scorer_version']}; corpus "
        f"{b['corpus']} ({b['corpus_docs']} docs, sha256 "
        f"{b['corpus_sha256'][:12]}, seed {b['corpus_seed']}); split seed {b['split_seed']}: "
        f"{b['split_check']['status']}",
        f"- {b['pages']} pages of {len(b['layout_families'])} of {len(b['test_families'])} test layout families, "
        f"{b['questions']} questions (answerable, at most {b['questions_per_page']} a page), {b['samples']} captured "
        f"samples (4 captures a question); metric ANLS (tau 0.5), in percent",
    ]
    if b["split_check"]["status"].startswith("SKIPPED"):
        seen = sorted(set(b["split_check"]["seen_by_scorer"]) & set(b["layout_families"]))
        lines.append(
            f"- **warning**: the committed scorer was trained or calibrated on {len(seen)} of the "
            f"{len(b['layout_families'])} layout families evaluated here"
            + (f" ({', '.join(seen)}): these numbers are not all held-out" if seen else "")
        )
    if b.get("limit_pages"):
        lines.append(f"- trial build: --limit-pages {b['limit_pages']}")
    missing = {s: n for s, n in res["missing_rows"].items() if n}
    if missing:
        lines.append(f"- **incomplete run**: samples without a row: {missing}")
    lines += [
        "",
        "## Overall",
        "",
        "| | rows | questions | ANLS | correct % | consistency | s / row | median s / row | errors |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    titles = {"none": "none (captured)", "docintent": "docintent (captured)", "clean": "clean page (ceiling)"}
    for s, e in res["overall"].items():
        lines.append(
            f"| {titles[s]} | {e['rows']} | {e['questions']} | {e['anls']:.1f} | {e['correct_pct']:.1f} | "
            f"{e['consistency']:.1f} | {e.get('seconds_per_row', 0.0):.2f} | "
            + (f"{e['median_seconds_per_row']:.2f}" if "median_seconds_per_row" in e else "—")
            + f" | {e.get('errors', 0)} |"
        )
    lines += [
        "",
        "s / row: seconds per captured sample (the rows' `seconds`; a capture's first question pays its OCR, the "
        "others on it reuse it); for the clean pages, the whole ceiling pass (reader start included) per question.",
        "",
        f"Confidence >= {CONFIDENT}: answers given that sure, and the share of them wrong (ANLS <= 0.5).",
        "",
        "| | answers | confident | confident and wrong | wrong share % |",
        "|---|---:|---:|---:|---:|",
    ]
    for s, e in res["overall"].items():
        lines.append(
            f"| {titles[s]} | {e['rows']} | {e['confident']} | {e['confident_wrong']} | "
            f"{e['confident_wrong_pct']:.1f} |"
        )
    heads = {
        "kind": "document kind",
        "family": "question family",
        "condition": "capture condition",
        "layout_family": "layout family",
    }
    for key, table in res["by"].items():
        names = [s for s in ("none", "docintent", "clean") if any(s in v for v in table.values())]
        lines += [
            "",
            f"## By {heads[key]}",
            "",
            f"| {heads[key]} | questions | rows | " + " | ".join(f"{s} ANLS" for s in names) + " |",
            "|---|---:|---:|" + "---:|" * len(names),
        ]
        for value, per in table.items():
            ref = per.get("docintent") or next(iter(per.values()))
            cells = [f"{per[s]['anls']:.1f}" if s in per else "—" for s in names]
            lines.append(f"| {value} | {ref['questions']} | {ref['rows']} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main() -> None:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--out", default=str(DEFAULT_OUT), help="the dataset folder (default: %(default)s)")
    common.add_argument("--seed", type=int, default=0, help="split and question-choice seed (default: 0)")
    build_opts = argparse.ArgumentParser(add_help=False)
    build_opts.add_argument("--corpus", default=str(CORPUS), help="the corpus's docs.jsonl (default: %(default)s)")
    build_opts.add_argument("--per-family", type=int, default=3, help="pages of every test family (default: 3)")
    build_opts.add_argument("--questions", type=int, default=3, help="questions a page at most (default: 3)")
    build_opts.add_argument("--limit-pages", type=int, default=None, help="only the first K pages (a trial)")
    build_opts.add_argument("--force", action="store_true", help="re-capture even where a capture's stamp is current")
    build_opts.add_argument(
        "--skip-split-check",
        action="store_true",
        help="build even when the corpus split differs from scorer.manifest.json (trials only; recorded)",
    )
    run_opts = argparse.ArgumentParser(add_help=False)
    run_opts.add_argument("--run-dir", default=str(DEFAULT_RUN), help="bench run folder (default: %(default)s)")
    run_opts.add_argument("--workers", type=int, default=1, help="bench worker processes (default: 1)")
    run_opts.add_argument(
        "--brain-opt", action="append", default=[], metavar="KEY=VALUE", help="an option of the offline reader"
    )
    run_opts.add_argument("--results", default=str(RESULTS), help="where the results go (default: %(default)s)")
    run_opts.add_argument("--name", default="reader_captured", help="results base name (default: %(default)s)")
    run_opts.add_argument("--report-only", action="store_true", help="no bench; report what the run folder holds")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    sub.add_parser("build", parents=[common, build_opts], help="render, check and capture the test-family pages")
    sub.add_parser("run", parents=[common, run_opts], help="bench none and docintent, the clean ceiling, the report")
    sub.add_parser("all", parents=[common, build_opts, run_opts], help="build, then run")
    args = ap.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    if args.command in ("build", "all"):
        build(args)
    if args.command in ("run", "all"):
        run(args)


if __name__ == "__main__":
    main()
