"""The demo: a handful of damaged documents, five strategies side by side (the last reasons with MACT on the
restored page), and an HTML page of every step. It opens with a question where restoration decided the answer,
with the page and box the answer was read at, and ends with the next command to try.

Everything is generated on the spot from a fixed seed (the synthetic benchmark's generator), so the demo needs
no files, no model and no network.
"""

from __future__ import annotations

import html
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path

from .api import ask
from .brains import Brain, get_brain
from .errors import DocIntentError
from .evaluation.datasets import load_dataset
from .evaluation.executors import Activity, Progress
from .evaluation.metrics import score_row
from .io import load_page, mark_box, resize_longest, to_data_url
from .sample import Sample
from .strategies import Result
from .synth import generate
from .trace import Action, Phase, describe_trace

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
    kinds = {
        "rotation": "rotation",
        "blur": "blur",
        "defocus": "blur",
        "curl": "warp",
        "perspective": "warp",
        "shadow": "shadow",
        "moire": "moire",
    }
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
        pool = [s for s in candidates if s.group not in groups and s.task == family] or [
            s for s in candidates if s.group not in groups
        ]
        if not pool:
            break
        # a kind of damage not shown yet, if there is one, in the order above
        pick = next((s for kind in order for s in pool if kind in damage(s) - seen_kinds), pool[0])
        chosen.append(pick)
        groups.add(pick.group)
        seen_kinds |= damage(pick)
    return chosen


#: The damage of a generated capture in plain words (``Sample.degradations`` names); others are shown as named.
DAMAGE_WORDS = {
    "rotation_90": "turned sideways",
    "rotation_180": "upside down",
    "rotation_270": "turned sideways",
    "perspective": "photographed at an angle",
    "curl": "curled",
    "fold": "folded",
    "crumple": "crumpled",
    "shadow": "under a shadow",
    "uneven_light": "unevenly lit",
    "low_contrast": "faded",
    "color_cast": "colour cast",
    "defocus": "out of focus",
    "motion_blur": "blurred by motion",
    "noise": "grainy",
    "jpeg": "heavily compressed",
    "moire": "moiré from a screen",
    "stain": "stained",
    "glare": "with glare",
    "distance": "taken from afar",
}


def damage_words(degradations: Sequence[str]) -> str:
    """``("perspective", "noise", "rotation_180")`` -> ``"photographed at an angle, grainy, upside down"``."""
    return ", ".join(DAMAGE_WORDS.get(d, d.replace("_", " ")) for d in degradations) or "no visible damage"


@dataclass(frozen=True)
class SamplePage:
    """A damaged page to try docintent on, with its question: the first question of the demo (with the default
    seed a letter photographed upside down and at an angle: "Who is the letter from?")."""

    name: str  # a file name for it, e.g. "docintent-sample-doc-00000-c2.jpg"
    image: bytes  # the capture as generated (JPEG)
    question: str
    _: KW_ONLY
    task: str
    answers: tuple[str, ...]
    damage: str  # what is wrong with the page, in plain words


def sample_page(seed: int = 7) -> SamplePage:
    """Generate the demo's first document question (seed ``seed``) and return its page and question.

    Only the document family is generated (about 2 s on one core), from the same seed as ``docintent demo``, so
    it is the page the demo opens with.

    >>> sample = sample_page()                    # doctest: +SKIP
    >>> sample.question, sample.damage            # doctest: +SKIP
    ('Who is the letter from?', 'photographed at an angle, grainy, upside down')
    """
    import cv2

    threads = cv2.getNumThreads()  # the generator sets OpenCV to one thread (it expects a pool of its own)
    with tempfile.TemporaryDirectory(prefix="docintent-sample-") as tmp:
        try:
            generate(tmp, n=2, seed=seed, families=["doc"], workers=1, contact_sheet=False)
        finally:
            cv2.setNumThreads(threads)
        picked = pick_samples(load_dataset(f"synth:{tmp}"), 1)
        if not picked:  # pragma: no cover - the generator always makes damaged captures
            raise DocIntentError(f"seed {seed} made no damaged document to offer as a sample")
        sample = picked[0]
        image = Path(sample.image).read_bytes()
    return SamplePage(
        f"docintent-sample-{Path(sample.image).stem}.jpg",
        image,
        sample.question,
        task=sample.task,
        answers=tuple(sample.answers),
        damage=damage_words(sample.degradations),
    )


#: The strategies in plain words, as the demo names them.
STRATEGY_WORDS = {
    "none": "answer from the page as it is, no restoration",
    "pipeline-fixed": "run every restoration tool in a fixed order, then answer",
    "judge-fixed": "list the damage first, run the tools for it, then answer",
    "docintent": "restore only what blocks the answer, check each step, roll back what hurt",
    "docintent+mact": "restore as docintent does, then plan, check and answer in steps (MACT)",
}


def run_demo(
    out: str | Path | None = None,
    *,
    count: int = 6,
    seed: int = 7,
    strategies: Sequence[str] = DEMO_STRATEGIES,
    brain: Brain | None = None,
    echo: Callable[[str], None] = print,
    progress: bool | None = None,
) -> list[DemoRow]:
    """Generate damaged documents, answer their questions with each strategy, write ``out/index.html``.

    ``out``: the folder to write into; None makes a new temporary folder (kept, so the page can be opened).
    What it prints (:func:`report_lines`) opens with a question where restoration decided the answer, with the
    page and box the answer was read at, names the strategies in plain words and ends with the next command to
    try. ``progress``: a progress line on stderr while the questions run (None: only on a terminal).
    """

    out = Path(out) if out is not None else Path(tempfile.mkdtemp(prefix="docintent-demo-"))
    out.mkdir(parents=True, exist_ok=True)
    offline = brain is None
    brain = brain or get_brain("offline")
    with tempfile.TemporaryDirectory(prefix="docintent-demo-") as tmp:
        bar = Activity("demo", show=progress)
        try:
            bar.say(f"generating damaged documents (seed {seed})")
            generate(tmp, n=2, seed=seed)
            samples = pick_samples(load_dataset(f"synth:{tmp}"), count)
            if offline:
                # loaded before the first question, so the first strategy's seconds do not hold the model load
                bar.say("loading the OCR models")
                load_ocr_models()
        finally:
            bar.close()
        rows = []
        steps = Progress(len(samples) * len(strategies), desc="demo", unit="answer", show=progress)
        try:
            for sample in samples:
                page = load_page(sample.image)
                row = DemoRow(sample)
                for name in strategies:
                    result = ask(page, sample.question, sample.task, name, brain)
                    row.results[name] = result
                    row.scores[name] = score_row(sample.task, sample.subset, result.answer, list(sample.answers))
                    steps.update()
                rows.append(row)
        finally:
            steps.close()
        rows = order_rows(rows)
        _write_html(out / "index.html", rows, strategies)
    for line in report_lines(rows, strategies, out / "index.html", seed):
        echo(line)
    return rows


def load_ocr_models() -> None:
    """Load the shared OCR engine's models by reading one small rendered word (a page no question asks about)."""
    import cv2
    import numpy as np

    from .ocr import get_engine
    from .page import Page

    word = np.full((48, 240, 3), 255, np.uint8)
    cv2.putText(word, "docintent", (8, 34), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 0), 2, cv2.LINE_AA)
    get_engine().read(Page.from_array(word, source="<warm-up>"))


def report_lines(rows: Sequence[DemoRow], strategies: Sequence[str], page: Path, seed: int = 7) -> list[str]:
    """What the demo prints: first a question where restoration decided the answer (it scores higher restored and
    checked than answered directly), with its page, box, evidence and steps; the strategies in plain words; every
    question by outcome; the summary table; where the HTML page is; the next command to try."""
    lines: list[str] = []
    decided = [r for r in rows if outcome(r) == "decided"]
    shown = decided[0] if decided else (rows[0] if rows else None)
    if shown is not None:
        lines += _story(shown, decided=bool(decided))
        lines.append("")
    lines.append(
        f"The {len(strategies)} ways each question was answered (offline reader: no model, no network; "
        f"documents generated from seed {seed}):"
    )
    lines += [f"  {name:<15} {STRATEGY_WORDS.get(name, name)}" for name in strategies]
    lines.append("")
    for name, text in OUTCOMES:
        picked = [r for r in rows if outcome(r) == name]
        if picked:
            lines.append(f"{text}: {len(picked)} of {len(rows)}")
            lines += [f"    - {r.sample.question}" for r in picked]
    lines += [
        "",
        summary_table(rows, strategies),
        "",
        f"Every step, with the page before and after each restoration: {page}",
        "",
        "Next, ask about a page of your own (a photo, a scan or a PDF):",
        '  docintent ask receipt.jpg "What is the total amount?"',
    ]
    return lines


def _story(row: DemoRow, decided: bool) -> list[str]:
    """One question told in full: the direct answer against the restored one, where the answer stands."""
    sample = row.sample
    head = (
        "Restoration decided this answer:"
        if decided
        else "No question here needed restoration to be answered right; the first one:"
    )
    lines = [head, f"  question ({sample.task}): {sample.question}", f"  right answer: {' | '.join(sample.answers)}"]
    for name in ("none", "docintent"):
        result = row.results.get(name)
        if result is None:
            continue
        score = row.scores.get(name, 0.0)
        # WildDoc counts an answer right at ANLS 0.5; one that is only close says its score
        verdict = "right" if score >= 1.0 - 1e-9 else f"close: score {score:.2f}" if score >= 0.5 else "wrong"
        lines.append(f"  {name:<10} {result.answer!r} ({verdict})")
    result = row.results.get("docintent") or next(iter(row.results.values()), None)
    if result is None:
        return lines
    prov = result.provenance
    if prov.box is not None:
        where = "box " + ", ".join(f"{v:.2f}" for v in prov.box.as_tuple()) + " on the page as given"
    elif prov.read_box is not None:
        where = "box " + ", ".join(f"{v:.2f}" for v in prov.read_box.as_tuple()) + " on the restored page"
    else:
        where = "no box (the reader could not place the answer)"
    lines.append(f"  read on page {prov.page}, {where} (x0, y0, x1, y1 as fractions of the page)")
    if prov.lines:
        lines.append(f"  evidence: {prov.lines[0][0]!r}")
    lines.append(f"  {result.strategy} steps:")
    lines += [f"    {i}. {text}" for i, text in enumerate(describe_trace(result.trace), 1)]
    return lines


#: How a question's outcome depended on restoration, in the order the demo shows them.
OUTCOMES = (
    ("decided", "Restoration decided the answer: restored and checked it scores higher than answered directly"),
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


#: The summary's columns: every figure is a mean per question.
SUMMARY_HEADER = ("strategy", "mean score", "tools run", "lines read", "seconds")
#: Printed under the summary: what the work columns count, and why the seconds alone do not compare strategies.
SUMMARY_NOTE = (
    "tools run and lines read (text lines the OCR recognised) are the work each strategy did for a "
    "question, the same on a first run and a repeated one; seconds are the time it took here, where a "
    "strategy reuses the reads of a page another strategy read before it (docintent+mact reuses "
    "docintent's), so compare the work columns, not the seconds, between strategies."
)


def lines_read(result: Result) -> int:
    """Text lines the OCR recognised for a question: recognitions the cache does not change (a line read again
    from the cache still counts), from the result's work counters."""
    return int(result.work.get("lines_recognised", 0))


def summary_cells(rows: Sequence[DemoRow], strategies: Sequence[str]) -> list[tuple[str, ...]]:
    """One row per strategy under :data:`SUMMARY_HEADER`: mean score (percent), tools run, lines read, seconds."""
    n = max(len(rows), 1)
    cells: list[tuple[str, ...]] = []
    for name in strategies:
        results = [r.results[name] for r in rows]
        cells.append(
            (
                name,
                f"{100 * sum(r.scores[name] for r in rows) / n:.1f}",
                f"{sum(r.tools_used for r in results) / n:.1f}",
                f"{sum(lines_read(r) for r in results) / n:.0f}",
                f"{sum(r.seconds for r in results) / n:.1f}",
            )
        )
    return cells


def summary_table(rows: Sequence[DemoRow], strategies: Sequence[str]) -> str:
    """The summary as a Markdown table, followed by :data:`SUMMARY_NOTE`."""
    lines = ["| " + " | ".join(SUMMARY_HEADER) + " |", "|---|" + "---:|" * (len(SUMMARY_HEADER) - 1)]
    lines += ["| " + " | ".join(row) + " |" for row in summary_cells(rows, strategies)]
    return "\n".join([*lines, "", "Per question: " + SUMMARY_NOTE])


def _answer_page(result: Result):
    """The page the answer's box is on, with the box drawn (None when the answer has no box)."""
    prov = result.provenance
    if prov.box is not None and prov.given_page in result.pages:
        return mark_box(result.pages[prov.given_page], prov.box)
    if prov.read_box is not None and prov.read_page in result.pages:
        return mark_box(result.pages[prov.read_page], prov.read_box)
    return None


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
        "<table><tr>" + "".join(f"<th>{e(h)}</th>" for h in SUMMARY_HEADER) + "</tr>",
    ]
    parts += ["<tr>" + "".join(f"<td>{e(c)}</td>" for c in row) + "</tr>" for row in summary_cells(rows, strategies)]
    parts.append(f"</table><p>Per question: {e(SUMMARY_NOTE)}</p>")
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
                answer = getattr(step, "answer", None) or step.data.get("answer", "")
                parts.append(
                    f"<div class='step'><b>answer</b>: {e(str(answer))}<br><small>{e(step.reason)}</small></div>"
                )
        marked = _answer_page(result)
        if marked is not None:
            parts.append(
                f"<div class='step'><b>where the answer was read (page {result.page})</b>"
                f"<img src='{_thumb(marked)}'></div>"
            )
        parts.append("</div>")
    path.write_text("\n".join(parts), encoding="utf-8")
