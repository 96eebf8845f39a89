"""MACT (plan / execute / judge / answer) against single-pass reading, on a synthetic set of multi-step chart
and table questions plus look-ups.

The set is generated with ``generate(..., multistep=True)`` (differences, sums, averages, conditional counts,
second-highest, and the look-ups of the same documents; 4 captures per question) from a seed used for nothing
else: MACT's rules were developed on seed 101, this reports seed 2027. Runs go through the benchmark runner
(one JSONL row per sample and strategy), so an interrupted run continues where it stopped.

    python benchmarks/mact.py run                  # build the set if missing, run every strategy, report
    python benchmarks/mact.py run --only main      # none, docintent, mact, docintent+mact
    python benchmarks/mact.py run --only ablations # mact with plan+execute, and with the judge
    python benchmarks/mact.py run --only scaling --scaling-samples 32
    python benchmarks/mact.py tokens               # prompt tokens per sample, model brain vs a loopback server
    python benchmarks/mact.py report               # tables from the rows already written

Writes benchmarks/results/mact.md and mact.json.
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import os
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
SEED = 2027
DEV_SEED = 101
SET_DIR = ROOT / "out" / f"mact-synth-{SEED}"
RUN_DIR = ROOT / "out" / "mact_run"  # none, docintent, mact, docintent+mact
RUN_DIRS = {"main": RUN_DIR, "ablations": ROOT / "out" / "mact_ablations", "scaling": ROOT / "out" / "mact_scaling"}
MULTI = ("difference", "sum", "average", "count", "second")
LOOKUP = ("value", "lookup")

MAIN = ("none", "docintent", "mact", "docintent+mact")
ABLATIONS = ("mact@plan,execute", "mact@plan,execute,judge")
ABLATION_REFERENCE = "mact (ablation samples)"  # all four roles, on the samples the ablations finished
GRID = {"np": (1, 2, 3), "ne": (1, 2), "nc": (0, 1, 3)}


def strategy(spec: str) -> Any:
    """``name`` or ``name@role,role`` (a role ablation) or ``name[np=2,ne=1,nc=3]`` (knobs)."""
    from docintent.strategies import configured_strategy

    name, _, rest = spec.partition("@")
    options: dict[str, Any] = {}
    if "[" in name:
        name, knobs = name[:-1].split("[")
        options = {k: int(v) for k, v in (kv.split("=") for kv in knobs.split(","))}
    if rest:
        options["roles"] = tuple(rest.split(","))
    return configured_strategy(name, **options)


def scaling_specs() -> list[str]:
    return [f"mact[np={a},ne={b},nc={c}]" for a, b, c in itertools.product(GRID["np"], GRID["ne"], GRID["nc"])]


def build(n: int, seed: int = SEED) -> Path:
    from docintent.synth import generate

    if (SET_DIR / "samples.jsonl").is_file():
        return SET_DIR
    t0 = time.perf_counter()
    summary = generate(
        SET_DIR,
        n=n,
        seed=seed,
        families=("chart", "table"),
        questions_per_document=4,
        workers=1,
        contact_sheet=False,
        multistep=True,
    )
    print(f"built {summary.samples} samples ({summary.questions} questions) in {time.perf_counter() - t0:.0f} s")
    return SET_DIR


def interleave(samples: list) -> list:
    """Question groups of the two families taken in turn, so a run cut short still covers charts and tables."""
    by_family: dict[str, list[list]] = defaultdict(list)
    groups: dict[str, list] = {}
    for s in samples:
        if s.group not in groups:
            groups[s.group] = []
            by_family[s.task].append(groups[s.group])
        groups[s.group].append(s)
    families = list(by_family.values())
    return [s for turn in itertools.zip_longest(*families) for g in turn if g for s in g]


def run(group: str, specs: list[str], limit: int | None = None, workers: int = 1, reverse: bool = False) -> None:
    """Run ``specs`` on the set into the group's run directory (resumable). ``reverse``: from the last sample
    (a second process then meets the first one's OCR in the shared cache instead of racing it)."""
    from docintent.evaluation.datasets import load_dataset
    from docintent.evaluation.runner import BrainFactory, run_benchmark

    samples = interleave(load_dataset(f"synth:{SET_DIR}"))
    if reverse:
        samples = samples[::-1]
    if limit:
        samples = samples[:limit]
    summary = run_benchmark(
        samples,
        [strategy(s) for s in specs],
        BrainFactory("offline", {}),
        RUN_DIRS[group],
        workers=workers,
        progress=False,
        config={"dataset": f"synth:{SET_DIR}", "samples": len(samples)},
    )
    print(
        f"{summary.new_rows} new rows, {summary.skipped} already done, {summary.failed} with errors, {summary.seconds:.0f} s"
    )


# -- report ---------------------------------------------------------------------------------------------------


def _rows() -> list[dict]:
    from docintent.evaluation.runner import read_results

    return [r for d in RUN_DIRS.values() if (d / "results.jsonl").is_file() for r in read_results(d)]


def _roles(row: dict) -> dict[str, dict[str, float]]:
    """Calls, seconds and prompt tokens per MACT role in one row (the final answer counts as a role call only
    when the answer role acted: not in other strategies, not in ablations without it)."""
    out: dict[str, dict[str, float]] = defaultdict(lambda: {"calls": 0, "seconds": 0.0, "prompt_tokens": 0})
    trace = (row.get("result") or {}).get("trace", [])
    name = row["strategy"]
    answer_role = any(s["phase"] == "plan" for s in trace) and ("@" not in name or "answer" in name.split("@")[1])
    # (rows carry their own strategy name; the ablation reference rows are mact's)
    for step in trace:
        phase = str(step["phase"])
        if phase == "answer" and not answer_role:
            continue
        if phase in ("plan", "execute", "judge", "answer") and step["action"] != "selected":
            out[phase]["calls"] += 1
            out[phase]["seconds"] += step.get("seconds", 0.0)
            out[phase]["prompt_tokens"] += step.get("prompt_tokens", 0)
    return out


def _score(rows: list[dict]) -> tuple[float, float, int]:
    """(score %, consistency %, rows): consistency = questions whose every capture is right."""
    if not rows:
        return float("nan"), float("nan"), 0
    groups: dict[str, list[bool]] = defaultdict(list)
    for r in rows:
        groups[r["sample"]["group"]].append(bool(r["correct"]))
    return (
        100 * statistics.fmean(r["score"] for r in rows),
        100 * statistics.fmean(all(v) for v in groups.values()),
        len(rows),
    )


def _judgment(rows: list[dict]) -> dict[str, Any]:
    """How often the judge flagged, and what corrections did to the answer's correctness."""
    from docintent.evaluation.metrics import row_correct, score_row

    flagged = fixed = broke = corrected = 0
    for r in rows:
        trace = (r.get("result") or {}).get("trace", [])
        if any(s["phase"] == "judge" and s["action"] == "flagged" for s in trace):
            flagged += 1
        answer_step = next((s for s in reversed(trace) if s["phase"] == "answer"), None)
        fixes = (answer_step or {}).get("data", {}).get("corrections") or []
        if not fixes:
            continue
        corrected += 1
        s = r["sample"]
        before = fixes[0].get("before", "")
        was = row_correct(s["task"], score_row(s["task"], s["subset"], before, s["answers"]))
        now = bool(r["correct"])
        fixed += (not was) and now
        broke += was and not now
    n = len(rows) or 1
    return {
        "rows": len(rows),
        "flag_rate": 100 * flagged / n,
        "corrected": corrected,
        "wrong_to_right": fixed,
        "right_to_wrong": broke,
    }


def report() -> dict[str, Any]:
    rows = _rows()
    by_strategy: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_strategy[r["strategy"]].append(r)

    # Compare on the samples every strategy of a group has finished (a run still in progress is cut to them):
    # the main four; the ablations beside mact on their own common samples; the scaling grid.
    def ids(n: str) -> set[str]:
        return {r["sample"]["id"] for r in by_strategy.get(n, [])}

    ablations = [n for n in ABLATIONS if n in by_strategy]
    if ablations and "mact" in by_strategy:
        common = set.intersection(ids("mact"), *(ids(n) for n in ablations))
        by_strategy[ABLATION_REFERENCE] = [r for r in by_strategy["mact"] if r["sample"]["id"] in common]
        for n in ablations:
            by_strategy[n] = [r for r in by_strategy[n] if r["sample"]["id"] in common]
    for group in ([n for n in MAIN if n in by_strategy], [n for n in by_strategy if "[" in n]):
        common = set.intersection(*(ids(n) for n in group)) if group else set()
        for n in group:
            by_strategy[n] = [r for r in by_strategy[n] if r["sample"]["id"] in common]
    intents = sorted({r["sample"]["meta"]["intent"] for r in rows})
    out: dict[str, Any] = {"seed": SEED, "strategies": {}, "load_average": os.getloadavg()}
    lines = [f"# MACT on the multi-step synthetic set (seed {SEED}; rules developed on seed {DEV_SEED})", ""]
    head = (
        "| strategy | rows | multi-step | look-up | chart | table | consistency | avg tools | role calls "
        "(plan/exec/judge/answer) | s/sample (median) |"
    )
    lines += [head, "|" + "---|" * 10]
    order = MAIN + ABLATIONS + (ABLATION_REFERENCE,)
    for name in sorted(by_strategy, key=lambda n: (n not in order, order.index(n) if n in order else 0, n)):
        rs = by_strategy[name]
        multi = [r for r in rs if r["sample"]["meta"]["intent"] in MULTI]
        look = [r for r in rs if r["sample"]["meta"]["intent"] in LOOKUP]
        fam = {f: _score([r for r in rs if r["sample"]["task"] == f]) for f in ("chart", "table")}
        total = _score(rs)
        tools = statistics.fmean((r.get("result") or {}).get("tools_used", 0) for r in rs)
        roles: dict[str, float] = defaultdict(float)
        role_seconds: dict[str, float] = defaultdict(float)
        role_tokens: dict[str, float] = defaultdict(float)
        for r in rs:
            for role, v in _roles(r).items():
                roles[role] += v["calls"] / len(rs)
                role_seconds[role] += v["seconds"] / len(rs)
                role_tokens[role] += v["prompt_tokens"] / len(rs)
        secs = statistics.median(r["seconds"] for r in rs)
        per_intent = {i: _score([r for r in rs if r["sample"]["meta"]["intent"] == i]) for i in intents}
        out["strategies"][name] = {
            "rows": len(rs),
            "score": total[0],
            "consistency": total[1],
            "multistep": _score(multi)[0],
            "lookup": _score(look)[0],
            "family": {f: v[0] for f, v in fam.items()},
            "avg_tools": tools,
            "role_calls": dict(roles),
            "role_seconds": dict(role_seconds),
            "role_tokens": dict(role_tokens),
            "seconds_median": secs,
            "intents": {i: {"score": v[0], "consistency": v[1], "rows": v[2]} for i, v in per_intent.items()},
            "judgment": _judgment(rs),
        }
        calls = "/".join(f"{roles.get(k, 0):.1f}" for k in ("plan", "execute", "judge", "answer"))
        lines.append(
            f"| {name} | {len(rs)} | {_score(multi)[0]:.1f} | {_score(look)[0]:.1f} | {fam['chart'][0]:.1f} | "
            f"{fam['table'][0]:.1f} | {total[1]:.1f} | {tools:.2f} | {calls} | {secs:.2f} |"
        )
    lines += [
        "",
        "Score per question intent (score / consistency):",
        "",
        "| strategy | " + " | ".join(intents) + " |",
        "|---|" + "---|" * len(intents),
    ]
    for name, data in out["strategies"].items():
        if "[" in name:
            continue
        cells = " | ".join(
            f"{data['intents'][i]['score']:.1f} / {data['intents'][i]['consistency']:.1f}" for i in intents
        )
        lines.append(f"| {name} | {cells} |")
    lines += [
        "",
        "Seconds and prompt tokens per role and sample (mean; the offline reader sends no prompts):",
        "",
        "| strategy | plan | execute | judge | answer |",
        "|---|---|---|---|---|",
    ]
    for name, data in out["strategies"].items():
        if data["role_seconds"]:
            cells = " | ".join(
                f"{data['role_seconds'].get(k, 0):.2f} s / {data['role_tokens'].get(k, 0):.0f} tok"
                for k in ("plan", "execute", "judge", "answer")
            )
            lines.append(f"| {name} | {cells} |")
    lines += [
        "",
        "Judgment (rows with at least one flag; answers a correction changed):",
        "",
        "| strategy | flag rate % | corrected rows | wrong -> right | right -> wrong |",
        "|---|---|---|---|---|",
    ]
    for name, data in out["strategies"].items():
        j = data["judgment"]
        if name.startswith(("mact", "docintent+mact")) and ("judge" in name or "@" not in name):
            lines.append(
                f"| {name} | {j['flag_rate']:.1f} | {j['corrected']} | {j['wrong_to_right']} | {j['right_to_wrong']} |"
            )
    tokens = RESULTS / "mact_tokens.json"
    scaling = [n for n in out["strategies"] if n.startswith("mact[")]
    if scaling:
        tok = json.loads(tokens.read_text()) if tokens.is_file() else {}
        lines += [
            "",
            "Test-time scaling (offline reader; prompt tokens: model brain vs the loopback server):",
            "",
            "| Np | Ne | Nc | rows | score | multi-step | look-up | s/sample (median) | prompt tokens/sample |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for name in scaling:
            d = out["strategies"][name]
            knobs = dict(kv.split("=") for kv in name[5:-1].split(","))
            t = tok.get(f"np={knobs['np']},ne={knobs['ne']},nc={knobs['nc']}", {}).get("prompt_tokens_per_sample")
            lines.append(
                f"| {knobs['np']} | {knobs['ne']} | {knobs['nc']} | {d['rows']} | {d['score']:.1f} | {d['multistep']:.1f} | "
                f"{d['lookup']:.1f} | {d['seconds_median']:.2f} | {t if t is not None else '-'} |"
            )
    la = out["load_average"]
    lines += [
        "",
        f"Load average at report time: {la[0]:.1f} {la[1]:.1f} {la[2]:.1f} (2 cores shared by many processes). "
        "Seconds are wall time with the shared OCR cache: the first strategy to meet a page pays its OCR "
        "(in the main run `none` comes first), so compare seconds within one run only.",
    ]
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "mact.md").write_text("\n".join(lines) + "\n")
    (RESULTS / "mact.json").write_text(json.dumps(out, indent=1, default=float) + "\n")
    print("\n".join(lines))
    return out


# -- prompt tokens with the model brain ------------------------------------------------------------------------


def scripted_reply(body: dict[str, Any], np_: int, flags: list[int]) -> dict[str, Any]:
    """A loopback reply by role (read from the system prompt): plans of three steps, records, a judge that
    flags once per question, an answer."""
    from docintent.testing.fake_openai import text, tool_call

    system = str(body["messages"][0]["content"])
    if "planning agent" in system:
        steps = [
            {"goal": "read the first value", "expected": "number"},
            {"goal": "read the second value", "expected": "number"},
            {"goal": "subtract", "expected": "number", "inputs": ["s1", "s2"]},
        ]
        return tool_call("submit_plans", plans=[{"steps": steps}] * np_)
    if "execution agent" in system:
        return tool_call("record", output="27", confidence="high")
    if "judgment agent" in system:
        if flags[0] > 0:
            flags[0] -= 1
            return tool_call("flag_execution", step_id="s1", mistake="the first value was misread")
        return tool_call("accept")
    return text('{"answer": "3", "confidence": "high"}')


def tokens(samples: int = 4) -> dict[str, Any]:
    """Prompt tokens per sample for every (Np, Ne, Nc) with the model brain against the loopback server."""
    from docintent.brains import get_brain
    from docintent.evaluation.datasets import load_dataset
    from docintent.io import load_page
    from docintent.testing.fake_openai import FakeOpenAI

    rows = [s for s in load_dataset(f"synth:{SET_DIR}") if s.meta.get("intent") in MULTI][:samples]
    out: dict[str, Any] = {}
    for np_, ne, nc in itertools.product(GRID["np"], GRID["ne"], GRID["nc"]):
        total = calls = 0
        for s in rows:
            flags = [1]
            with FakeOpenAI(functools.partial(scripted_reply, np_=np_, flags=flags)) as server:
                brain = get_brain("openai", base_url=server.base_url, model=server.model)
                result = strategy(f"mact[np={np_},ne={ne},nc={nc}]").run(load_page(s.image), s.question, s.task, brain)
                brain.close()
                total += result.prompt_tokens
                calls += len(server.chat_requests)
        out[f"np={np_},ne={ne},nc={nc}"] = {
            "prompt_tokens_per_sample": round(total / len(rows)),
            "requests_per_sample": calls / len(rows),
            "samples": len(rows),
        }
        print(np_, ne, nc, out[f"np={np_},ne={ne},nc={nc}"], flush=True)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "mact_tokens.json").write_text(json.dumps(out, indent=1) + "\n")
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("command", choices=("build", "run", "tokens", "report"))
    p.add_argument("--questions", type=int, default=30, help="questions per family in the set (x4 captures)")
    p.add_argument("--only", choices=("main", "ablations", "scaling", "all"), default="all")
    p.add_argument("--workers", type=int, default=1)
    p.add_argument("--reverse", action="store_true", help="samples from the last (a second process beside a first)")
    p.add_argument("--scaling-samples", type=int, default=32, help="samples for the Np/Ne/Nc grid")
    args = p.parse_args(argv)
    os.environ.setdefault("DOCINTENT_THREADS", "1")
    if args.command in ("build", "run", "tokens"):
        build(args.questions)
    if args.command == "run":
        if args.only in ("main", "all"):
            run("main", list(MAIN), workers=args.workers, reverse=args.reverse)
        if args.only in ("ablations", "all"):
            run("ablations", list(ABLATIONS), workers=args.workers, reverse=args.reverse)
        if args.only in ("scaling", "all"):
            run("scaling", scaling_specs(), limit=args.scaling_samples, workers=args.workers, reverse=args.reverse)
    if args.command == "tokens":
        tokens()
    if args.command in ("run", "report", "tokens"):
        report()
    return 0


if __name__ == "__main__":
    sys.exit(main())
