"""The demo: a handful of damaged documents, five strategies side by side (the last reasons with MACT on the
restored page), and an HTML page of every step.

Everything is generated on the spot from a fixed seed (the synthetic benchmark's generator), so the demo needs
no files, no model and no network.
"""

from __future__ import annotations

import html
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .brains import Brain, get_brain
from .evaluation.datasets import load_dataset
from .evaluation.metrics import score_row
from .io import load_page, resize_longest, to_data_url
from .sample import Sample
from .strategies import Result, get_strategy
from .synth import generate
from .trace import Action, Phase

DEMO_STRATEGIES = ("none", "pipeline-fixed", "judge-fixed", "docintent", "docintent+mact")


@dataclass
class DemoRow:
    sample: Sample
    results: dict[str, Result] = field(default_factory=dict)
    scores: dict[str, float] = field(default_factory=dict)


def pick_samples(samples: Sequence[Sample], count: int) -> list[Sample]:
    """Captures with one or two kinds of visible damage (a turn comes on top: it hides nothing), one per
    question, spread over the families and over kinds of damage: enough damage to need a restoration, not so much
    that nothing reads. Kinds are taken in the order restoration most often decides the answer on these pages
    (the synthetic benchmark's per-degradation table): a turned page, blur, warp, shadow, moiré."""
    kinds = {"rotation": "rotation", "blur": "blur", "defocus": "blur", "curl": "warp", "perspective": "warp",
             "shadow": "shadow", "moire": "moire"}
    order = ("rotation", "blur", "warp", "shadow", "moire")

    def damage(s: Sample) -> set[str]:
        if sum(1 for d in s.degradations if not d.startswith("rotation")) > 2:
            return set()
        return {kind for d in s.degradations for key, kind in kinds.items() if key in d}

    candidates = sorted((s for s in samples if damage(s)), key=lambda s: s.id)
    chosen: list[Sample] = []
    seen_kinds: set[str] = set()
    groups: set[str] = set()
    families = ("doc", "chart", "table")
    while len(chosen) < count:
        family = families[len(chosen) % 3]
        pool = [s for s in candidates if s.group not in groups and s.task == family] or [s for s in candidates if s.group not in groups]
        if not pool:
            break
        # a kind of damage not shown yet, if there is one, in the order above
        pick = next((s for kind in order for s in pool if kind in damage(s) - seen_kinds), pool[0])
        chosen.append(pick)
        groups.add(pick.group)
        seen_kinds |= damage(pick)
    return chosen


def run_demo(
    out: str | Path | None = None,
    *,
    count: int = 6,
    seed: int = 7,
    strategies: Sequence[str] = DEMO_STRATEGIES,
    brain: Brain | None = None,
    echo: Callable[[str], None] = print,
) -> list[DemoRow]:
    """Generate damaged documents, answer their questions with each strategy, write ``out/index.html``.

    ``out``: the folder to write into; None makes a new temporary folder (kept, so the page can be opened). The
    folder is named before the work starts and again at the end.
    """

    out = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="docintent-demo-"))
    out.mkdir(parents=True, exist_ok=True)
    echo(f"writing the demo page to {out}")
    brain = brain or get_brain("offline")
    with tempfile.TemporaryDirectory(prefix="docintent-demo-") as tmp:
        echo(f"generating damaged documents (seed {seed}) ...")
        generate(tmp, n=2, seed=seed)
        samples = pick_samples(load_dataset(f"synth:{tmp}"), count)
        rows = []
        for i, sample in enumerate(samples, 1):
            page = load_page(sample.image)
            row = DemoRow(sample)
            echo(f"[{i}/{len(samples)}] {sample.task}: {sample.question}")
            for name in strategies:
                result = get_strategy(name).run(page, sample.question, sample.task, brain)
                row.results[name] = result
                row.scores[name] = score_row(sample.task, sample.subset, result.answer, list(sample.answers))
                kept = ",".join(result.tools_kept) or "-"
                echo(f"    {name:<15} {result.answer!r:<28} score {row.scores[name]:.2f}  tools kept: {kept}  {result.seconds:.1f}s")
            echo(f"    gold: {', '.join(sample.answers)}")
            rows.append(row)
        rows = order_rows(rows)
        _write_html(out / "index.html", rows, strategies)
    echo("")
    for name, text in OUTCOMES:
        picked = [r for r in rows if outcome(r) == name]
        if picked:
            echo(f"{text}: {len(picked)} of {len(rows)}")
            for r in picked:
                echo(f"    - {r.sample.question}")
    echo("")
    echo(summary_table(rows, strategies))
    echo(f"\nwrote {out / 'index.html'}")
    return rows


#: How a question's outcome depended on restoration, in the order the demo shows them.
OUTCOMES = (
    ("decided", "Restoration decided the answer: answered directly it is wrong, restored and checked it is right"),
    ("same", "Restoration did not change the outcome (the page read as well without it, or not even with it)"),
    ("hurt", "Restoration did not help here: answering directly did better"),
)


def outcome(row: DemoRow) -> str:
    """``decided`` when docintent beat answering directly, ``hurt`` when it did worse, else ``same``."""
    mine, direct = row.scores.get("docintent"), row.scores.get("none")
    if mine is None or direct is None or abs(mine - direct) < 1e-9:
        return "same"
    return "decided" if mine > direct else "hurt"


def order_rows(rows: Sequence[DemoRow]) -> list[DemoRow]:
    """Questions where restoration decided the answer first, then those it did not change, then those it hurt."""
    rank = {name: i for i, (name, _) in enumerate(OUTCOMES)}
    return sorted(rows, key=lambda r: rank[outcome(r)])


def summary_table(rows: Sequence[DemoRow], strategies: Sequence[str]) -> str:
    lines = ["| strategy | mean score | tools run | seconds |", "|---|---:|---:|---:|"]
    for name in strategies:
        n = max(len(rows), 1)
        score = sum(r.scores[name] for r in rows) / n
        tools = sum(r.results[name].tools_used for r in rows) / n
        secs = sum(r.results[name].seconds for r in rows) / n
        lines.append(f"| {name} | {100 * score:.1f} | {tools:.1f} | {secs:.1f} |")
    return "\n".join(lines)


def _thumb(page, side: int = 420) -> str:
    return to_data_url(resize_longest(page, side), "jpeg", quality=80)


def _write_html(path: Path, rows: Sequence[DemoRow], strategies: Sequence[str]) -> None:
    e = html.escape
    parts = [
        "<!doctype html><meta charset='utf-8'><title>docintent demo</title>",
        "<style>body{font:14px system-ui,sans-serif;margin:2em;max-width:1400px}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}"
        ".steps{display:flex;flex-wrap:wrap;gap:10px}.step{border:1px solid #ddd;padding:6px;width:430px}"
        ".ok{color:#080}.bad{color:#b00}img{max-width:420px;display:block}</style>",
        "<h1>docintent demo</h1>",
        f"<p>Generated {time.strftime('%Y-%m-%d %H:%M')}. Each question was answered by every strategy with the "
        "offline reader; the DocIntent steps show the page before and after each tool and whether it was kept.</p>",
        "<h2>Summary</h2>",
        "<table><tr><th>strategy</th><th>mean score</th><th>tools run</th><th>seconds</th></tr>",
    ]
    for name in strategies:
        n = max(len(rows), 1)
        parts.append(
            f"<tr><td>{e(name)}</td><td>{100 * sum(r.scores[name] for r in rows) / n:.1f}</td>"
            f"<td>{sum(r.results[name].tools_used for r in rows) / n:.1f}</td>"
            f"<td>{sum(r.results[name].seconds for r in rows) / n:.1f}</td></tr>"
        )
    parts.append("</table>")
    shown = ""
    for row in rows:
        if outcome(row) != shown:
            shown = outcome(row)
            parts.append(f"<h2 class='outcome'>{e(dict(OUTCOMES)[shown])}</h2>")
        s = row.sample
        parts.append(f"<h2>{e(s.task)}: {e(s.question)}</h2><p>gold: <b>{e(' | '.join(s.answers))}</b></p>")
        parts.append("<table><tr><th>strategy</th><th>answer</th><th>score</th><th>kept</th><th>rolled back</th></tr>")
        for name, result in row.results.items():
            cls = "ok" if row.scores[name] >= 0.5 else "bad"
            parts.append(
                f"<tr><td>{e(name)}</td><td class='{cls}'>{e(result.answer)}</td><td>{row.scores[name]:.2f}</td>"
                f"<td>{e(', '.join(result.tools_kept))}</td><td>{e(', '.join(result.tools_rolled_back))}</td></tr>"
            )
        parts.append("</table>")
        result = row.results.get("docintent") or next(iter(row.results.values()))
        parts.append(f"<h3>{e(result.strategy)} steps</h3><div class='steps'>")
        first = result.trace[0].before if result.trace else None
        if first in result.pages:
            parts.append(f"<div class='step'><b>input</b><img src='{_thumb(result.pages[first])}'></div>")
        for step in result.trace:
            if step.phase == Phase.REVIEW and step.after in result.pages:
                verdict = "kept" if step.action == Action.KEEP else "rolled back"
                parts.append(
                    f"<div class='step'><b>{e(step.tool or '')}: {verdict}</b><br><small>{e(step.reason)}</small>"
                    f"<img src='{_thumb(result.pages[step.after])}'></div>"
                )
            elif step.phase in (Phase.DECIDE, Phase.ANSWER) and step.action == Action.ANSWER:
                parts.append(f"<div class='step'><b>answer</b>: {e(str(step.data.get('answer', '')))}<br><small>{e(step.reason)}</small></div>")
        parts.append("</div>")
    path.write_text("\n".join(parts), encoding="utf-8")
