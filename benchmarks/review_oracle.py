"""Phase B against an oracle, and answer confidence against correctness (the dev part of the real-page set).

Runs the ``docintent`` strategy with the offline reader on development samples. At every restoration Phase B
judges, the benchmark (not the brain, which never sees gold answers) also reads the answer on the page with the
tool kept and with it rolled back and scores both against the gold answers: the oracle keeps the tool when the
answer scores higher with it, rolls it back when it scores lower, and has no preference on a tie. Every judged
restoration gets the verdict of each review rule (``legibility``: the previous rule, evidence-region legibility
only; ``evidence-fixed``: the evidence rule with fixed margins; ``evidence``: the noise-aware rule, with either
tie rule), so the rules are compared on the same restorations.

Reports per tool: restorations judged, oracle keeps / rollbacks / ties, and for each rule keep precision and
recall and rollback precision and recall (over the restorations where the oracle has a preference). Then the
calibration table: the final answer's confidence in bins against its ANLS score and exact-match rate, overall
and per capture condition.

    python benchmarks/review_oracle.py --per-page 2            # 2 questions per dev page, 4 captures each

Writes benchmarks/results/review_oracle.md and .json. Resumable: finished samples are kept in
benchmarks/out/runs/review-oracle/rows.jsonl.
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent
RESULTS = ROOT / "results"
#: The rules judged on every restoration: the legibility-only rule, the evidence rule with its fixed margins (the
#: rule before the noise floors), the noise-aware evidence rule with either tie rule, and the answer-only rule.
RULES = ("legibility", "evidence-fixed", "evidence/tie-rollback", "evidence/tie-keep", "answer")


def verdict_of(evidence, rule: str) -> bool:
    """The verdict of ``rule`` (a review rule, ``/tie-keep`` or ``/tie-rollback`` choosing the noise-aware tie)."""
    from dataclasses import replace

    from docintent.brains.offline import DEFAULT_FLOORS

    name, _, tie = rule.partition("/tie-")
    floors = replace(DEFAULT_FLOORS, tie=tie) if tie else DEFAULT_FLOORS
    return evidence.keep(name, floors=floors)


def run(args: argparse.Namespace) -> list[dict]:
    from docintent.brains.offline import OfflineReader
    from docintent.evaluation.datasets import load_dataset
    from docintent.evaluation.metrics import score_row
    from docintent.io import load_page
    from docintent.strategies import get_strategy

    samples = load_dataset(f"synth:{args.dataset}")
    per_page: dict[str, list[str]] = defaultdict(list)
    for s in samples:
        groups = per_page[s.meta.get("page") or s.meta["document"]]
        if s.group not in groups and len(groups) < args.per_page:
            groups.append(s.group)
    chosen = [s for s in samples if s.group in per_page[s.meta.get("page") or s.meta["document"]]]
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    rows_path = out_dir / "rows.jsonl"
    done = {json.loads(line)["id"] for line in rows_path.read_text().splitlines()} if rows_path.exists() else set()

    class Recording(OfflineReader):
        """The offline reader, with the benchmark listening in on its reviews (gold stays outside the brain)."""

        judged: list[dict]
        gold: tuple[str, ...] = ()

        def review(self, state, change):
            verdict = super().review(state, change)
            tool, before, after = change.tool, change.before, change.after
            if tool and not tool.startswith("rotate_"):
                evidence = self.review_evidence(state, change)
                a_before = self.read(state, before).answer
                a_after = self.read(state, after).answer
                s_before = score_row("doc", "", a_before, list(self.gold))
                s_after = score_row("doc", "", a_after, list(self.gold))
                self.judged.append(
                    {
                        "tool": tool,
                        "oracle": "keep" if s_after > s_before else "rollback" if s_after < s_before else "tie",
                        "score_before": s_before,
                        "score_after": s_after,
                        **{rule: "keep" if verdict_of(evidence, rule) else "rollback" for rule in RULES},
                        "measurements": evidence.measurements(),
                        "why": evidence.describe(),
                    }
                )
            return verdict

    reader = Recording()
    strategy = get_strategy("docintent")
    with rows_path.open("a") as f:
        for s in chosen:
            if s.id in done:
                continue
            reader.judged, reader.gold = [], s.answers
            t0 = time.perf_counter()
            result = strategy.run(load_page(s.image), s.question, s.task, reader)
            row = {
                "id": s.id,
                "condition": s.meta.get("condition", f"capture {s.capture}"),
                "answer": result.answer,
                "confidence": result.confidence,
                "score": score_row(s.task, s.subset, result.answer, list(s.answers)),
                "judged": reader.judged,
                "error": result.error,
                "seconds": round(time.perf_counter() - t0, 2),
            }
            f.write(json.dumps(row) + "\n")
            f.flush()
            print(f"{s.id}: {row['score']:.2f} conf {row['confidence']:.2f}, {len(reader.judged)} judged", flush=True)
    return [json.loads(line) for line in rows_path.read_text().splitlines() if line.strip()]


def oracle_table(rows: list[dict]) -> tuple[list[str], dict]:
    from docintent.brains.offline import ReviewEvidence

    by_tool: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        for j in r["judged"]:
            if "measurements" in j:  # verdicts recomputed with the current floors from what was measured
                evidence = ReviewEvidence(**j["measurements"])
                j.update({rule: "keep" if verdict_of(evidence, rule) else "rollback" for rule in RULES})
            by_tool[j["tool"]].append(j)
    by_tool["all"] = [j for js in list(by_tool.values()) for j in js]
    lines = [
        "| tool | judged | oracle keep | oracle rollback | tie | rule | keeps | keep precision | keep recall | "
        "rollback precision | rollback recall |",
        "|---|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|",
    ]
    figures: dict = {}
    for tool, js in sorted(by_tool.items()):
        oracle = Counter(j["oracle"] for j in js)
        for rule in RULES:

            def pr(label: str, js: list[dict] = js, rule: str = rule) -> tuple[float | None, float | None]:
                decisive = [j for j in js if j["oracle"] != "tie"]
                said = [j for j in decisive if j[rule] == label]
                truth = [j for j in decisive if j["oracle"] == label]
                hit = [j for j in said if j["oracle"] == label]
                return (len(hit) / len(said) if said else None, len(hit) / len(truth) if truth else None)

            kp, kr = pr("keep")
            rp, rr = pr("rollback")
            keeps = sum(1 for j in js if j[rule] == "keep")
            fmt = lambda v: "—" if v is None else f"{100 * v:.0f}%"  # noqa: E731
            lines.append(
                f"| {tool} | {len(js)} | {oracle['keep']} | {oracle['rollback']} | {oracle['tie']} | {rule} | "
                f"{keeps} | {fmt(kp)} | {fmt(kr)} | {fmt(rp)} | {fmt(rr)} |"
            )
            figures.setdefault(tool, {})[rule] = {
                "keeps": keeps,
                "keep_precision": kp,
                "keep_recall": kr,
                "rollback_precision": rp,
                "rollback_recall": rr,
            }
        figures[tool]["oracle"] = dict(oracle)
    return lines, figures


def calibration(rows: list[dict]) -> tuple[list[str], dict]:
    """The final answers' confidence in bins against their score (the table of ``benchmarks/calibration.py``)."""
    from calibration import calibration_table  # the benchmark beside this one

    lines, figures, ece = calibration_table([(r["confidence"], r["score"]) for r in rows])
    return lines, {"bins": figures, "ece": ece}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dataset", default=str(ROOT / "out" / "realpages" / "dev"))
    ap.add_argument("--per-page", type=int, default=2, help="questions per page (each with its 4 captures)")
    ap.add_argument("--out", default=str(ROOT / "out" / "runs" / "review-oracle"))
    ap.add_argument("--report-only", action="store_true")
    ap.add_argument("--name", default="review_oracle", help="base name of the result files")
    args = ap.parse_args()
    if args.report_only:
        rows = [json.loads(line) for line in (Path(args.out) / "rows.jsonl").read_text().splitlines() if line.strip()]
        # what the run chose, from its rows ("<page>-q<n>-c<capture>"): the report says it, whatever --per-page says
        groups = {r["id"].rsplit("-c", 1)[0] for r in rows}
        pages = Counter(g.rsplit("-q", 1)[0] for g in groups)
        args.per_page = max(pages.values(), default=0)
    else:
        rows = run(args)
    table, figures = oracle_table(rows)
    cal, cal_figures = calibration(rows)
    dataset = Path(args.dataset).resolve()
    dataset = dataset.relative_to(ROOT.parent) if dataset.is_relative_to(ROOT.parent) else dataset
    by_condition = defaultdict(list)
    for r in rows:
        by_condition[r["condition"]].append(r)
    cal_lines = []
    for cond, rs in sorted(by_condition.items()):
        lines, _ = calibration(rs)
        cal_lines += [f"**{cond}** (n={len(rs)})", "", *lines, ""]
    text = "\n".join(
        [
            "# Phase B against an oracle; answer confidence against correctness",
            "",
            f"docintent strategy, offline reader, {dataset} ({len(rows)} samples, {args.per_page} questions per "
            "page x 4 captures). Oracle: the answer read with the tool kept vs rolled back, scored against gold; "
            "precision / recall over restorations where the oracle has a preference.",
            "",
            *table,
            "",
            f"## Calibration (final answer confidence vs score; expected calibration error {cal_figures['ece']:.1f})",
            "",
            *cal,
            "",
            "### Per capture condition",
            "",
            *cal_lines,
        ]
    )
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / f"{args.name}.md").write_text(text + "\n")
    (RESULTS / f"{args.name}.json").write_text(json.dumps({"oracle": figures, "calibration": cal_figures}, indent=2))


if __name__ == "__main__":
    main()
