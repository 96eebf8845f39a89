"""Build a synthetic wild-document benchmark on disk: clean pages, 4 captures each, questions as Samples."""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .._version import __version__
from ..errors import ConfigError
from ..sample import Sample
from . import charts, documents, tables
from .capture import ALL_NAMES, CapturePlan, Planner, apply
from .contact import contact_sheet as make_sheet
from .multistep import multistep_questions
from .questions import choose

#: The tasks synthetic pages are made for: the built-in WildDoc ones, each with its own page makers below (a
#: plug-in task has no synthetic pages).
FAMILIES: tuple[str, ...] = ("doc", "chart", "table")
FORMAT_VERSION = 1
CAPTURES = 4


@dataclass(frozen=True)
class SynthSummary:
    """What :func:`generate` wrote: where, how many of each thing, and how long it took."""

    out: Path
    samples: int
    questions: int
    _: KW_ONLY
    documents: int
    images: int
    seconds: float
    degradation_share: dict[str, float]


def _family_seed(seed: int, family: str) -> int:
    return int(np.random.SeedSequence([seed, FAMILIES.index(family)]).generate_state(1)[0])


def _render(family: str, rng: np.random.Generator, kind: str):
    if family == "doc":
        return documents.render(rng, kind)
    if family == "chart":
        return charts.render_chart(rng, kind)
    return tables.render_table(rng, kind)


def _kinds(family: str) -> tuple[str, ...]:
    return {"doc": documents.KINDS, "chart": charts.KINDS}.get(family, tables.KINDS)


def _save(path: Path, image: np.ndarray) -> None:
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    if path.suffix == ".png":
        Image.fromarray(image).save(path, format="PNG", compress_level=6)
    else:
        # quality 92 keeps the file small without visible loss; heavy compression is the "jpeg" degradation
        Image.fromarray(image).save(path, format="JPEG", quality=92)


def _make_document(job: tuple) -> tuple[dict, list[dict]]:
    """Render one document, pick its questions, photograph it under its 4 plans and write the images."""
    import cv2

    cv2.setNumThreads(1)  # the pool already keeps every core busy
    out, family, index, doc_seed, kind, n_questions, plans, multistep = job

    rng = np.random.default_rng(doc_seed)
    doc = _render(family, rng, kind)
    if multistep:
        # a stream of its own, so the document and its captures are those of the plain set
        ms_rng = np.random.default_rng([doc_seed, 1])
        pool = multistep_questions(doc, ms_rng) + [q for q in doc.questions if q.intent in ("value", "lookup")]
        questions = choose(ms_rng, pool, n_questions)
    else:
        questions = choose(rng, doc.questions, n_questions)
    doc_id = f"{family}-{index:05d}"
    clean_rel = f"clean/{doc_id}.png"
    _save(Path(out) / clean_rel, doc.image)
    captures = []
    for c, plan in enumerate(plans, 1):
        image, meta = apply(doc.image, plan)
        rel = f"images/{doc_id}-c{c}.jpg"
        _save(Path(out) / rel, image)
        captures.append((rel, plan, meta))
    rows = []
    for j, qa in enumerate(questions):
        group = f"synth-{doc_id}-q{j}"
        for c, (rel, plan, meta) in enumerate(captures, 1):
            sample = Sample(
                id=f"{group}-c{c}",
                image=rel,
                question=qa.question,
                answers=qa.answers,
                task=family,
                subset=qa.subset,
                group=group,
                capture=c,
                degradations=plan.names,
                meta={
                    "document": doc_id,
                    "kind": doc.kind,
                    "intent": qa.intent,
                    "printed": qa.printed,
                    "clean_image": clean_rel,
                    "capture": meta,
                    **({"question": qa.meta} if qa.meta else {}),
                },
            )
            rows.append(sample.to_dict())
    record = {
        "id": doc_id,
        "family": family,
        "kind": doc.kind,
        "seed": int(doc_seed),
        "clean_image": clean_rel,
        "size": [int(doc.image.shape[1]), int(doc.image.shape[0])],
        "fonts": doc.fonts,
        "content": _plain(doc.content),
        "questions": [
            {
                "group": f"synth-{doc_id}-q{j}",
                "question": qa.question,
                "answers": list(qa.answers),
                "intent": qa.intent,
                "subset": qa.subset,
            }
            for j, qa in enumerate(questions)
        ],
        "captures": [{"image": rel, "degradations": list(plan.names)} for rel, plan, _ in captures],
    }
    return record, rows


def _plain(value: Any) -> Any:
    """Content as JSON-friendly data (numpy scalars to Python numbers, tuples to lists)."""
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, np.generic):
        return value.item()
    return value


def generate(
    out: str | Path,
    n: int = 30,
    seed: int = 0,
    families: Sequence[str] = FAMILIES,
    questions_per_document: int = 3,
    workers: int = 2,
    contact_sheet: bool = True,
    multistep: bool = False,
) -> SynthSummary:
    """Write a synthetic wild-document benchmark with ``n`` questions per family to ``out``.

    Every document is rendered once; ``questions_per_document`` of its questions share its 4 captures
    (as in WildDoc, where each printed document is photographed under 4 conditions). Output:
    ``images/*.jpg`` (captures), ``clean/*.png``, ``samples.jsonl`` (one :class:`~docintent.sample.Sample`
    per question and capture), ``documents.jsonl`` (clean content, for debugging only), ``manifest.json``
    and ``contact_sheet.jpg``. The same arguments give byte-identical files. ``multistep``: ask multi-step
    questions (differences, sums, averages, conditional counts, second-highest; see
    :mod:`docintent.synth.multistep`) and the documents' look-ups instead of the usual mix; the documents and
    captures stay those of the plain set.

    >>> summary = generate("/tmp/synth-demo", n=2, families=["table"], workers=1)  # doctest: +SKIP
    >>> summary.samples  # doctest: +SKIP
    8
    """
    families = [f.strip() for f in families if f.strip()]
    unknown = [f for f in families if f not in FAMILIES]
    if unknown or not families:
        raise ConfigError(
            f"families {list(families)!r}: unknown {unknown or 'none given'}; valid families: {', '.join(FAMILIES)}"
        )
    if n < 1:
        raise ConfigError(f"n={n}: need at least 1 question per family")
    if questions_per_document < 1:
        raise ConfigError(f"questions_per_document={questions_per_document}: need at least 1")
    started = time.perf_counter()
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    _remove_previous_set(out)

    jobs = []
    for family in FAMILIES:  # each family has its own generators, so it does not depend on the others
        if family not in families:
            continue
        fam_rng = np.random.default_rng(_family_seed(seed, family))
        planner = Planner(np.random.default_rng(fam_rng.integers(2**63)))
        kinds = _kinds(family)
        n_docs = math.ceil(n / questions_per_document)
        order = [
            kinds[int(i)]
            for i in np.concatenate([fam_rng.permutation(len(kinds)) for _ in range(math.ceil(n_docs / len(kinds)))])
        ]
        remaining = n
        for index in range(n_docs):
            k = min(questions_per_document, remaining)
            remaining -= k
            plans: list[CapturePlan] = [planner.plan(c) for c in range(1, CAPTURES + 1)]
            jobs.append((str(out), family, index, int(fam_rng.integers(2**63)), order[index], k, plans, multistep))

    if workers > 1 and len(jobs) > 1:
        with ProcessPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(_make_document, jobs, chunksize=1))
    else:
        results = [_make_document(job) for job in jobs]

    records = [r for r, _ in results]
    rows = [row for _, rs in results for row in rs]
    with open(out / "documents.jsonl", "w", encoding="utf-8") as fh:
        for rec in records:
            fh.write(json.dumps(rec, ensure_ascii=False, sort_keys=True) + "\n")
    with open(out / "samples.jsonl", "w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False, sort_keys=True) + "\n")

    images = [c for rec in records for c in rec["captures"]]
    share = {name: round(sum(name in c["degradations"] for c in images) / max(len(images), 1), 4) for name in ALL_NAMES}
    share["none"] = round(sum(not c["degradations"] for c in images) / max(len(images), 1), 4)
    manifest = {
        "generator": "docintent synth",
        "format_version": FORMAT_VERSION,
        "docintent_version": __version__,
        "seed": seed,
        "n": n,
        "families": [f for f in FAMILIES if f in families],
        "questions_per_document": questions_per_document,
        "captures_per_question": CAPTURES,
        **({"multistep": True} if multistep else {}),
        "documents": len(records),
        "questions": len(rows) // CAPTURES,
        "samples": len(rows),
        "images": len(images),
        "fonts": sorted({f for rec in records for f in rec["fonts"]}),
        "degradation_share": share,
        "subsets": _count(row["subset"] for row in rows if row["capture"] == 1),
    }
    (out / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    if contact_sheet:
        make_sheet(out, records, out / "contact_sheet.jpg")
    return SynthSummary(
        out,
        len(rows),
        len(rows) // CAPTURES,
        documents=len(records),
        images=len(images),
        seconds=time.perf_counter() - started,
        degradation_share=share,
    )


_OWN_FILE = re.compile(r"(doc|chart|table)-\d{5}(-c\d)?\.(jpg|png)")


def _remove_previous_set(out: Path) -> None:
    """Delete what an earlier run wrote here (only files named as this generator names them), so a
    smaller rerun does not leave stale images beside the new set."""
    for name in ("samples.jsonl", "documents.jsonl", "manifest.json", "contact_sheet.jpg"):
        if (out / name).is_file():
            (out / name).unlink()
    for folder in ("images", "clean"):
        if (out / folder).is_dir():
            for path in (out / folder).iterdir():
                if path.is_file() and _OWN_FILE.fullmatch(path.name):
                    path.unlink()


def _count(values) -> dict[str, int]:
    counts: dict[str, int] = {}
    for v in values:
        counts[v] = counts.get(v, 0) + 1
    return dict(sorted(counts.items()))
