"""Questions over folders of documents, and question-free restoration of folders, as resumable runs of rows.

``ask_batch`` answers every question about every document (a folder, searched recursively, a glob, or files):
one JSONL row per document and question, written and flushed as each finishes, so a run that is stopped or
killed loses nothing and, run again, repeats nothing (rows already in the file are skipped; a line cut short by
a kill is dropped). A document that cannot be read, or a question that fails, is a row with ``error`` set.
``restore_batch`` does the same for ``restore --auto``: one restored image and one row per page.

Both run on the benchmark runner's machinery (:mod:`docintent.evaluation.runner`: the results file, the plan of
what is left, the progress line) and its executors (:mod:`docintent.evaluation.executors`: worker processes or
Ray), and each answer goes through :func:`docintent.ask`, the one path a page or a document is answered by.

An answers row::

    {"file": "scans/inv-7.pdf", "question": "What is the total?", "task": "doc", "id": null,
     "answer": "$1,250.00", "confidence": 0.93, "page": 2, "box": [0.06, 0.61, 0.61, 0.74],
     "evidence": [{"text": "Total amount due: $1,250.00", "confidence": 0.9995, "box": [...]}],
     "read_on": ["deshadowing"], "strategy": "docintent", "brain": "offline", "seconds": 3.1, "error": null,
     "result": {... the full Result, with its trace ...}}

>>> summary = ask_batch(find_documents("scans/"), read_questions("questions.txt"),
...                     BrainFactory("offline"), "answers.jsonl")              # doctest: +SKIP
>>> summary.new_rows, summary.failed                                           # doctest: +SKIP
(12, 1)
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .api import MAX_PAGES, ask
from .brains import get_brain
from .document import Document, PageSelection
from .errors import ConfigError, InputError
from .evaluation.executors import Executor, LocalExecutor, Progress
from .evaluation.runner import BrainFactory, ResultsWriter, latest_rows, plan_rows, write_rows
from .io import save_page
from .io.lock import FolderLock
from .strategies.auto import restore_auto
from .vocabulary import TASKS, check_task

#: Files a folder is searched for (PDFs and the image formats the loader reads).
DOCUMENT_SUFFIXES = (".pdf", ".jpg", ".jpeg", ".png", ".tif", ".tiff", ".webp", ".bmp", ".gif")
#: Where ``restore_batch`` records its rows, inside the output folder.
RESTORE_ROWS = "restore.jsonl"


# --- inputs ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """One question of a batch: its ``text``, answer format ``task`` and an optional ``id`` of the user's."""

    text: str
    task: str = "doc"
    id: str | None = None


def read_questions(path: str | os.PathLike) -> list[Question]:
    """The questions of a ``.txt`` file (one per line; blank lines and ``#`` comments skipped) or a ``.jsonl``
    file (rows with ``question`` and optionally ``task`` and ``id``). A question listed twice counts once."""
    p = Path(path)
    if p.suffix.lower() not in (".txt", ".jsonl"):
        raise InputError(p, "a questions file must be .txt (one question per line) or .jsonl (rows with \"question\")")
    if not p.is_file():
        raise InputError(p, "no such file" if not p.exists() else "not a regular file")
    questions: list[Question] = []
    for number, raw in enumerate(p.read_text(encoding="utf-8").splitlines(), start=1):
        line = raw.strip()
        if not line or (p.suffix.lower() == ".txt" and line.startswith("#")):
            continue
        if p.suffix.lower() == ".txt":
            questions.append(Question(line))
            continue
        try:
            row = json.loads(line)
        except json.JSONDecodeError as err:
            raise InputError(p, f"line {number} is not JSON ({err.msg})") from None
        text = row.get("question") if isinstance(row, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise InputError(p, f"line {number} has no \"question\" text")
        task = str(row.get("task") or "doc")
        if task not in TASKS:
            raise InputError(p, f"line {number}: task {task!r} is not one of {', '.join(TASKS)}")
        qid = row.get("id")
        questions.append(Question(text.strip(), task, None if qid is None else str(qid)))
    unique = list(dict.fromkeys(questions))
    if not unique:
        raise InputError(p, "holds no question")
    return unique


def _magic(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def find_documents(target: str | os.PathLike) -> list[str]:
    """The documents ``target`` names: a folder (searched recursively for PDFs and images, in name order), a
    glob pattern (``"scans/*.jpg"``, ``"**"`` for every level) or one file."""
    text = str(target)
    p = Path(text)
    if p.is_dir():
        found = sorted(str(f) for f in p.rglob("*") if f.is_file() and f.suffix.lower() in DOCUMENT_SUFFIXES)
        if not found:
            raise InputError(p, f"no PDF or image in this folder (looked for {', '.join(DOCUMENT_SUFFIXES)})")
        return found
    if _magic(text):
        found = sorted(f for f in glob.glob(text, recursive=True) if Path(f).is_file())
        if not found:
            raise InputError(text, "the pattern matches no file")
        return found
    if not p.exists():
        raise InputError(p, "no such file or folder")
    return [text]


def _base(target: str | os.PathLike) -> Path:
    """The folder output names are made relative to: the folder itself, a pattern's fixed part, a file's folder."""
    p = Path(str(target))
    if p.is_dir():
        return p
    if _magic(str(target)):
        fixed = [part for part in p.parts[: next(i for i, part in enumerate(p.parts) if _magic(part))]]
        return Path(*fixed) if fixed else Path(".")
    return p.parent


def _error_text(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


# --- asking --------------------------------------------------------------------------------------------


def answer_key(row: dict[str, Any]) -> tuple[str, ...]:
    """The identity of an answers row: (file, question, task)."""
    return str(row["file"]), str(row["question"]), str(row.get("task") or "doc")


def new_answer_row(file: str, question: Question, strategy: str, brain_name: str) -> dict[str, Any]:
    """The row of a document and question before it has run: no answer, no error."""
    return {"file": file, "question": question.text, "task": question.task, "id": question.id, "answer": "",
            "confidence": None, "page": None, "box": None, "evidence": [], "read_on": [], "strategy": strategy,
            "brain": brain_name, "seconds": 0.0, "error": None, "result": None}


@dataclass(frozen=True)
class AskJob:
    """One row per ``(file, Question)``; every worker slot builds its brain once (see the executors' Job)."""

    brain_factory: Callable[[], Any]
    strategy: str
    brain_name: str
    options: dict[str, Any] = field(default_factory=dict)
    pages: PageSelection = None
    max_pages: int = MAX_PAGES
    batch: int = 1

    def setup(self) -> Any:
        return self.brain_factory()

    def run(self, brain: Any, item: tuple[str, Question]) -> dict[str, Any]:
        file, question = item
        row = new_answer_row(file, question, self.strategy, self.brain_name)
        t0 = time.perf_counter()
        try:
            result = ask(file, question.text, question.task, self.strategy, brain, pages=self.pages,
                         max_pages=self.max_pages, **self.options)
            data = result.to_dict()
            row.update(answer=result.answer, confidence=result.confidence, page=result.page, box=data["box"],
                       evidence=data["provenance"]["lines"], read_on=data["provenance"]["read_on"], result=data,
                       error=result.error)
        except Exception as err:  # one document's failure is a row, never the end of the run
            row["error"] = _error_text(err)
        row["seconds"] = round(time.perf_counter() - t0, 3)
        return row

    def lost(self, item: tuple[str, Question], reason: str) -> dict[str, Any]:
        """The row of an item whose worker died on every try."""
        row = new_answer_row(item[0], item[1], self.strategy, self.brain_name)
        row["error"] = f"WorkerLost: {reason}"
        return row

    def close(self, brain: Any) -> None:
        with contextlib.suppress(Exception):
            brain.close()


@dataclass
class BatchSummary:
    """What a batch call did: ``rows`` in the file afterwards (one per key), ``new_rows`` written now,
    ``skipped`` (done before), ``retried``, ``failed`` (rows in the file with an error), ``seconds``."""

    path: Path
    rows: int
    new_rows: int
    skipped: int
    retried: int
    failed: int
    seconds: float

    @property
    def rows_per_second(self) -> float:
        return self.new_rows / self.seconds if self.seconds > 0 else 0.0


def _run(items: Sequence[Any], item_key: Callable[[Any], tuple[str, ...]], row_key: Callable[[dict], tuple[str, ...]],
         job: Any, path: Path, *, executor: Executor, progress: bool | None, retry_failed: bool, purpose: str,
         state: Any = None) -> BatchSummary:
    """Run ``job`` on the items not yet in the results file ``path`` (holding its lock), writing each row as it
    arrives."""
    if path.exists() and path.is_dir():
        raise InputError(path, "is a folder; give a file name for the rows")
    path.parent.mkdir(parents=True, exist_ok=True)
    with FolderLock(path.parent, purpose=purpose, name=f".{path.name}.lock"):
        writer = ResultsWriter(path, key=row_key)
        todo, skipped, retried, _ = plan_rows(items, item_key, writer.latest(), retry_failed)
        bar = Progress(len(todo) + skipped, desc=path.name, initial=skipped, show=progress)
        before = len(writer.rows)
        t0 = time.perf_counter()
        try:
            write_rows(todo, job, writer, executor, bar, state=state)
        finally:
            bar.close()
            writer.close()
            written = len(writer.rows) - before
            writer.compact()
        rows = latest_rows(writer.rows, row_key)
        return BatchSummary(path, len(rows), written, skipped, retried, sum(1 for r in rows if r.get("error")),
                            time.perf_counter() - t0)


def ask_batch(
    documents: Sequence[str],
    questions: Sequence[Question],
    brain_factory: Callable[[], Any],
    out: str | os.PathLike,
    *,
    strategy: str = "docintent",
    options: dict[str, Any] | None = None,
    pages: PageSelection = None,
    max_pages: int = MAX_PAGES,
    executor: Executor | None = None,
    progress: bool | None = None,
    retry_failed: bool = False,
) -> BatchSummary:
    """Answer every question about every document into the JSONL file ``out`` (see the module docstring).

    ``brain_factory``: a callable returning a brain, picklable for worker processes or Ray
    (:class:`~docintent.evaluation.runner.BrainFactory`); ``options``: the strategy's knobs; ``pages`` and
    ``max_pages`` as in :func:`docintent.ask`; ``executor``: where the rows run (default: this process);
    ``progress``: the progress line (None: only when stderr is a terminal); ``retry_failed``: run rows that
    ended with an error again. Raises :class:`~docintent.errors.FolderBusyError` when another process writes
    ``out``.
    """
    for question in questions:
        check_task(question.task)
    executor = executor or LocalExecutor()
    brain = brain_factory()
    brain_name = str(getattr(brain, "name", None) or getattr(brain_factory, "kind", None) or type(brain).__name__)
    job = AskJob(brain_factory, strategy, brain_name, dict(options or {}), pages, max_pages)
    items = [(file, q) for file in documents for q in questions]
    try:
        return _run(items, lambda item: (item[0], item[1].text, item[1].task), answer_key, job, Path(out),
                    executor=executor, progress=progress, retry_failed=retry_failed, purpose="answers file",
                    state=brain)
    finally:
        with contextlib.suppress(Exception):
            brain.close()


# --- restoring ---------------------------------------------------------------------------------------------


def restore_key(row: dict[str, Any]) -> tuple[str, ...]:
    """The identity of a restore row: (file, page)."""
    return str(row["file"]), str(row.get("page"))


@dataclass(frozen=True)
class RestoreJob:
    """One row per ``(file, page, output path)``: the page restored question-free and saved (whole or not at
    all: written beside its name, then renamed)."""

    pages: PageSelection = None
    batch: int = 1

    def setup(self) -> Any:
        return get_brain("offline", review_rule="page")

    def run(self, reader: Any, item: tuple[str, int | None, str]) -> dict[str, Any]:
        file, number, output = item
        row: dict[str, Any] = {"file": file, "page": number, "output": None, "steps": [], "kept": [],
                               "seconds": 0.0, "error": None}
        t0 = time.perf_counter()
        try:
            if number is None:  # the document could not be opened when the run was planned: say why
                Document(file, pages=self.pages)
                raise InputError(file, "could not be opened when the run started; run the command again")
            page = Document(file, pages=[number]).page(number)
            restored, steps = restore_auto(page, reader)
            target = Path(output)
            target.parent.mkdir(parents=True, exist_ok=True)
            partial = target.with_name(f".{target.stem}.{os.getpid()}.partial{target.suffix}")
            try:
                save_page(restored, partial)
                os.replace(partial, target)
            finally:
                partial.unlink(missing_ok=True)
            row.update(output=str(target), kept=[s.tool for s in steps if s.verdict == "keep"],
                       steps=[{"tool": s.tool, "verdict": s.verdict, "why": s.why, "reason": s.reason,
                               "seconds": round(s.seconds, 3)} for s in steps])
        except Exception as err:  # one page's failure is a row
            row["error"] = _error_text(err)
        row["seconds"] = round(time.perf_counter() - t0, 3)
        return row

    def lost(self, item: tuple[str, int | None, str], reason: str) -> dict[str, Any]:
        return {"file": item[0], "page": item[1], "output": None, "steps": [], "kept": [], "seconds": 0.0,
                "error": f"WorkerLost: {reason}"}

    def close(self, reader: Any) -> None:
        with contextlib.suppress(Exception):
            reader.close()


def restore_items(documents: Sequence[str], base: str | os.PathLike, out_dir: str | os.PathLike,
                  pages: PageSelection = None) -> list[tuple[str, int | None, str]]:
    """``(file, page, output)`` for every page to restore: ``OUT/<path under base>.png`` for an image,
    ``OUT/<path under base>-p<N>.png`` for page N of a PDF. A document that cannot be opened is one item with
    page None (its row gets the loader's error)."""
    out = Path(out_dir)
    base_path = Path(base)
    items: list[tuple[str, int | None, str]] = []
    for file in documents:
        try:
            rel = Path(file).resolve().relative_to(base_path.resolve())
        except ValueError:
            rel = Path(Path(file).name)
        stem = out / rel.with_suffix("")
        try:
            document = Document(file, pages=pages)
        except Exception:  # noqa: BLE001 - reported as the item's row when it runs
            items.append((file, None, str(stem) + ".png"))
            continue
        for number in document.numbers:
            name = f"{stem}-p{number}.png" if document.is_pdf else f"{stem}.png"
            items.append((file, number, name))
    return items


def restore_batch(
    target: str | os.PathLike,
    out_dir: str | os.PathLike,
    *,
    pages: PageSelection = None,
    executor: Executor | None = None,
    progress: bool | None = None,
    retry_failed: bool = False,
) -> BatchSummary:
    """Restore every page of the documents ``target`` names (:func:`find_documents`) question-free into
    ``out_dir``, one row per page in ``out_dir/restore.jsonl`` (resumable like :func:`ask_batch`)."""
    out = Path(out_dir)
    if out.exists() and not out.is_dir():
        raise InputError(out, "exists and is not a folder; restoring a folder needs an output folder (-o OUT/)")
    items = restore_items(find_documents(target), _base(target), out, pages)
    if not items:
        raise ConfigError(f"{target}: no page to restore")
    return _run(items, lambda item: (item[0], str(item[1])), restore_key, RestoreJob(pages), out / RESTORE_ROWS,
                executor=executor or LocalExecutor(), progress=progress, retry_failed=retry_failed,
                purpose="restore output folder")


__all__ = ["DOCUMENT_SUFFIXES", "RESTORE_ROWS", "AskJob", "BatchSummary", "BrainFactory", "Question", "RestoreJob",
           "answer_key", "ask_batch", "find_documents", "new_answer_row", "read_questions", "restore_batch",
           "restore_items", "restore_key"]
