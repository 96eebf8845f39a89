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

import codecs
import contextlib
import json
import os
import stat
import time
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from pathlib import Path
from typing import Any

from .api import MAX_PAGES, ask
from .brains import get_brain
from .document import Document, PageSelection
from .errors import ConfigError, InputError
from .evaluation.executors import Executor, LocalExecutor, Progress
from .evaluation.runner import BrainFactory, ResultsWriter, content_digest, latest_rows, plan_rows, write_rows
from .io import save_page
from .io.lock import FolderLock
from .io.office import OFFICE_SUFFIXES, converter
from .io.walk import MAX_WALK_DEPTH, MAX_WALK_ENTRIES, DocumentWalk, pattern_matches, skip_reason, walk_folder
from .strategies.auto import restore_auto
from .vocabulary import check_question, check_task

#: Files a folder is searched for (PDFs and the image formats the loader reads); office documents join them
#: where LibreOffice is installed to convert them (:func:`folder_suffixes`).
DOCUMENT_SUFFIXES = (".pdf", ".jpg", ".jpeg", ".png", ".tif", ".tiff", ".webp", ".bmp", ".gif")


def folder_suffixes() -> tuple[str, ...]:
    """The suffixes a folder is searched for: :data:`DOCUMENT_SUFFIXES`, and the office documents' where
    LibreOffice is on PATH (elsewhere they are named as not read, with the package to install)."""
    return DOCUMENT_SUFFIXES + (OFFICE_SUFFIXES if converter() is not None else ())


#: Where ``restore_batch`` records its rows, inside the output folder.
RESTORE_ROWS = "restore.jsonl"


# --- inputs ----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Question:
    """One question of a batch: its ``text``, answer format ``task`` and an optional ``id`` of the user's."""

    text: str
    task: str = "doc"
    id: str | None = None


#: The largest questions file read (bytes).
MAX_QUESTIONS_BYTES = 16 << 20
#: Byte-order marks a questions file may start with, longest first (a UTF-32 mark begins like a UTF-16 one).
_BOMS = (
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def decode_questions(data: bytes, name: object = "<questions>") -> list[str]:
    """The lines of a questions file's bytes: decoded by its byte-order mark (UTF-8, UTF-16 or UTF-32; UTF-8
    without one), the mark never part of the first line, split at line ends only (``\\r\\n``, ``\\n``,
    ``\\r``), so each line is one question whatever other characters it holds (a form feed or U+2028 does not
    split it). Bytes that are not valid in the encoding, or a NUL character, are an
    :class:`~docintent.errors.InputError` naming ``name`` and the line.

    >>> decode_questions(b"\\xef\\xbb\\xbfWhat is the total?\\r\\nWho signed?\\n")
    ['What is the total?', 'Who signed?', '']
    """
    encoding, body = "utf-8", data
    for bom, codec in _BOMS:
        if data.startswith(bom):
            encoding, body = codec, data[len(bom) :]
            break
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as err:
        before = body[: err.start].decode(encoding, "replace").replace("\r\n", "\n").replace("\r", "\n")
        shown = "UTF-8" if encoding == "utf-8" else encoding.upper()
        raise InputError(
            name,
            f"line {before.count(chr(10)) + 1} is not valid {shown} text (at byte offset "
            f"{err.start + len(data) - len(body)}); save the file as UTF-8",
        ) from None
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    for number, line in enumerate(lines, start=1):
        if "\x00" in line:
            raise InputError(
                name,
                f"line {number} holds a NUL character (a binary file, or a UTF-16 file without its byte-order mark?)",
            )
    return lines


def read_questions(path: str | os.PathLike) -> list[Question]:
    """The questions of a ``.txt`` file (one per line; blank lines and ``#`` comments skipped) or a ``.jsonl``
    file (rows with ``question`` and optionally ``task`` and ``id``), decoded by :func:`decode_questions`. A
    question listed twice counts once; a question over :data:`~docintent.vocabulary.MAX_QUESTION_CHARS`
    characters is refused naming its line. Only a regular file is opened (a pipe would wait without end)."""
    p = Path(path)
    if p.suffix.lower() not in (".txt", ".jsonl"):
        raise InputError(p, 'a questions file must be .txt (one question per line) or .jsonl (rows with "question")')
    if not p.is_file():
        raise InputError(p, "no such file" if not p.exists() else "not a regular file")
    with open(p, "rb") as fh:
        data = fh.read(MAX_QUESTIONS_BYTES + 1)
    if len(data) > MAX_QUESTIONS_BYTES:
        raise InputError(p, f"over {MAX_QUESTIONS_BYTES:,} bytes; a questions file holds one question per line")
    questions: list[Question] = []
    for number, raw in enumerate(decode_questions(data, p), start=1):
        line = raw.strip()
        if not line or (p.suffix.lower() == ".txt" and line.startswith("#")):
            continue
        if p.suffix.lower() == ".txt":
            questions.append(Question(_checked(line, p, number)))
            continue
        try:
            row = json.loads(line)
        except (json.JSONDecodeError, RecursionError) as err:
            msg = err.msg if isinstance(err, json.JSONDecodeError) else "nested too deeply"
            raise InputError(p, f"line {number} is not JSON ({msg})") from None
        text = row.get("question") if isinstance(row, dict) else None
        if not isinstance(text, str) or not text.strip():
            raise InputError(p, f'line {number} has no "question" text')
        task = row.get("task") or "doc"
        try:
            check_task(task)  # any registered task, plug-ins included
        except ConfigError as err:
            raise InputError(p, f"line {number}: {err}") from None
        qid = row.get("id")
        if qid is not None and not isinstance(qid, (str, int)):
            raise InputError(p, f"line {number}: id must be text or a whole number, got {type(qid).__name__}")
        questions.append(Question(_checked(text.strip(), p, number), task, None if qid is None else str(qid)))
    unique = list(dict.fromkeys(questions))
    if not unique:
        raise InputError(p, "holds no question")
    return unique


def _checked(question: str, path: Path, number: int) -> str:
    if any("\ud800" <= ch <= "\udfff" for ch in question):  # a JSON escape of half a character
        raise InputError(path, f"line {number}: the question holds a lone surrogate (half of a character)")
    try:
        return check_question(question)
    except ConfigError as err:
        raise InputError(path, f"line {number}: {err}") from None


def _magic(text: str) -> bool:
    return any(ch in text for ch in "*?[")


def walk_documents(target: str | os.PathLike) -> DocumentWalk:
    """The documents ``target`` names: a folder (searched recursively for PDFs and images), a glob pattern
    (``"scans/*.jpg"``, ``"**"`` for every level) or one file; and the files left alone, each with its reason.

    The walk goes by real path: a file reached twice (through a link, or a link to a folder already walked)
    is read once, under the name met first (real folders before links), and a link back into a folder on the
    way is cut. Pipes, sockets and devices are never opened. Folders deeper than :data:`MAX_WALK_DEPTH` are not
    entered (named in ``skipped``); more than :data:`MAX_WALK_ENTRIES` entries is an
    :class:`~docintent.errors.InputError`."""
    text = str(target)
    p = Path(text)
    if "\x00" in text:
        raise InputError(text, "the path holds a NUL character")
    if _magic(text) and not p.exists():
        base = _base(text)
        pattern = list(p.parts[len(base.parts) :]) if str(base) != "." else list(p.parts)
        if not base.is_dir():
            raise InputError(text, "the pattern matches no file")
        depth = MAX_WALK_DEPTH if "**" in pattern else len(pattern) - 1
        walk = walk_folder(base, depth, lambda rel: pattern_matches(rel, pattern), suffixes=None)
        if not walk.documents:
            raise InputError(text, "the pattern matches no file" + _skipped_note(walk))
        return walk
    try:
        info = os.stat(p)
    except FileNotFoundError:
        raise InputError(p, "no such file or folder") from None
    except OSError as err:
        raise InputError(p, f"cannot be read ({err.strerror or err})") from None
    if stat.S_ISDIR(info.st_mode):
        suffixes = folder_suffixes()
        walk = walk_folder(p, MAX_WALK_DEPTH, None, suffixes=suffixes)
        if not walk.documents:
            raise InputError(
                p, f"no PDF or image in this folder (looked for {', '.join(suffixes)})" + _skipped_note(walk)
            )
        return walk
    why = skip_reason(info.st_mode)
    if why:
        raise InputError(p, why)
    return DocumentWalk([text], [])


def _skipped_note(walk: DocumentWalk) -> str:
    if not walk.skipped:
        return ""
    first = walk.skipped[0]
    more = f" and {len(walk.skipped) - 1} more" if len(walk.skipped) > 1 else ""
    return f"; skipped {first[0]} ({first[1]}){more}"


def find_documents(target: str | os.PathLike) -> list[str]:
    """The documents ``target`` names (:func:`walk_documents`, without the files it left alone)."""
    return walk_documents(target).documents


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
    return {
        "file": file,
        "question": question.text,
        "task": question.task,
        "id": question.id,
        "answer": "",
        "confidence": None,
        "page": None,
        "box": None,
        "evidence": [],
        "read_on": [],
        "strategy": strategy,
        "brain": brain_name,
        "seconds": 0.0,
        "error": None,
        "result": None,
    }


@dataclass(frozen=True)
class AskJob:
    """One row per ``(file, Question)``; every worker slot builds its brain once (see the executors' Job)."""

    brain_factory: Callable[[], Any]
    strategy: str
    brain_name: str
    _: KW_ONLY
    options: dict[str, Any] = field(default_factory=dict)
    pages: PageSelection = None
    max_pages: int = MAX_PAGES
    batch: int = 1
    #: Each document's content digest when the run was planned (written in its rows, so a resume sees edits).
    digests: dict[str, str] = field(default_factory=dict)

    def setup(self) -> Any:
        return self.brain_factory()

    def run(self, brain: Any, item: tuple[str, Question]) -> dict[str, Any]:
        file, question = item
        row = new_answer_row(file, question, self.strategy, self.brain_name)
        row["file_digest"] = self.digests.get(file)
        t0 = time.perf_counter()
        try:
            result = ask(
                file,
                question.text,
                question.task,
                self.strategy,
                brain,
                pages=self.pages,
                max_pages=self.max_pages,
                **self.options,
            )
            data = result.to_dict()
            row.update(
                answer=result.answer,
                confidence=result.confidence,
                page=result.page,
                box=data["box"],
                evidence=data["provenance"]["lines"],
                read_on=data["provenance"]["read_on"],
                result=data,
                error=result.error,
            )
        except Exception as err:  # one document's failure is a row, never the end of the run
            row["error"] = _error_text(err)
        row["seconds"] = round(time.perf_counter() - t0, 3)
        return row

    def lost(self, item: tuple[str, Question], reason: str) -> dict[str, Any]:
        """The row of an item whose worker died on every try."""
        row = new_answer_row(item[0], item[1], self.strategy, self.brain_name)
        row["file_digest"] = self.digests.get(item[0])
        row["error"] = f"WorkerLost: {reason}"
        return row

    def close(self, brain: Any) -> None:
        with contextlib.suppress(Exception):
            brain.close()


@dataclass
class BatchSummary:
    """What a batch call did: ``rows`` in the file afterwards (one per key), ``new_rows`` written now,
    ``skipped`` (done before), ``retried``, ``failed`` (rows in the file with an error), ``seconds``,
    ``changed`` (rows run again because their document changed since) and ``not_read`` (the files the walk
    left alone, each with its reason)."""

    path: Path
    rows: int
    new_rows: int
    _: KW_ONLY
    skipped: int
    retried: int
    failed: int
    seconds: float
    changed: int = 0
    not_read: list[tuple[str, str]] = field(default_factory=list)

    @property
    def rows_per_second(self) -> float:
        return self.new_rows / self.seconds if self.seconds > 0 else 0.0


def _check_run_file(path: Path, key: Callable[[dict], tuple[str, ...]], what: str, name: Path | None = None) -> None:
    """Refuse an existing ``path`` that is not a rows file of this kind (its first row must have this kind's
    key), so resuming never cuts or appends to someone else's file. A lone line cut short by a kill (it starts
    as every row does, with ``{"file": ``) is a rows file whose first row was never finished."""
    shown = name or path
    try:
        info = os.stat(path)
    except FileNotFoundError:
        return
    if not stat.S_ISREG(info.st_mode):
        raise InputError(shown, f"is not a regular file; {what} is read back to resume, so it must be one")
    if info.st_size == 0:
        return
    with open(path, "rb") as fh:
        first = b""
        while not first.strip():
            first = fh.readline(64 << 20)
            if not first:
                return
    link = f" (a link to {path})" if os.path.abspath(shown) != str(path) else ""
    refusal = (
        f"exists{link} and is not {what} (its first line is not such a row); give --out another file "
        "name or remove this one"
    )
    if not first.endswith(b"\n"):
        if not first.lstrip().startswith(b'{"file": '):
            raise InputError(shown, refusal)
        return
    try:
        row = json.loads(first)
        key(row)
    except (ValueError, KeyError, TypeError, AttributeError, RecursionError):
        raise InputError(shown, refusal) from None
    if not isinstance(row, dict):
        raise InputError(shown, refusal)


def _run(
    items: Sequence[Any],
    item_key: Callable[[Any], tuple[str, ...]],
    row_key: Callable[[dict], tuple[str, ...]],
    job: Any,
    path: Path,
    *,
    executor: Executor,
    progress: bool | None,
    retry_failed: bool,
    purpose: str,
    state: Any = None,
    stale: Callable[[Any, dict[str, Any]], bool] | None = None,
) -> BatchSummary:
    """Run ``job`` on the items not yet in the results file ``path`` (holding its lock), writing each row as it
    arrives. The lock and the file are those of ``path``'s real path, so two names of one file share a lock."""
    if path.exists() and path.is_dir():
        raise InputError(path, "is a folder; give a file name for the rows")
    real = Path(os.path.realpath(path))
    real.parent.mkdir(parents=True, exist_ok=True)
    with FolderLock(real.parent, purpose=purpose, name=f".{real.name}.lock"):
        article = "an" if purpose[:1] in "aeiou" else "a"
        _check_run_file(real, row_key, f"{article} {purpose} of docintent", path)
        writer = ResultsWriter(real, key=row_key)
        todo, skipped, retried, changed = plan_rows(items, item_key, writer.latest(), retry_failed, stale)
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
        return BatchSummary(
            path,
            len(rows),
            written,
            skipped=skipped,
            retried=retried,
            failed=sum(1 for r in rows if r.get("error")),
            seconds=time.perf_counter() - t0,
            changed=changed,
        )


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
    not_read: Sequence[tuple[str, str]] = (),
) -> BatchSummary:
    """Answer every question about every document into the JSONL file ``out`` (see the module docstring).

    ``brain_factory``: a callable returning a brain, picklable for worker processes or Ray
    (:class:`~docintent.evaluation.runner.BrainFactory`); ``options``: the strategy's knobs; ``pages`` and
    ``max_pages`` as in :func:`docintent.ask`; ``executor``: where the rows run (default: this process);
    ``progress``: the progress line (None: only when stderr is a terminal); ``retry_failed``: run rows that
    ended with an error again; ``not_read``: the files the walk left alone, carried into the summary. A row
    whose document's content changed since it was written (its ``file_digest``) is run again. ``out`` that is
    one of the documents, or an existing file that is not an answers file, is refused. Raises
    :class:`~docintent.errors.FolderBusyError` when another process writes ``out`` (under any of its names).
    """
    for question in questions:
        check_task(question.task)
    _refuse_inputs_as_output(documents, out)
    executor = executor or LocalExecutor()
    digests = {file: content_digest(file) for file in dict.fromkeys(documents)}
    brain = brain_factory()
    brain_name = str(getattr(brain, "name", None) or getattr(brain_factory, "kind", None) or type(brain).__name__)
    job = AskJob(
        brain_factory,
        strategy,
        brain_name,
        options=dict(options or {}),
        pages=pages,
        max_pages=max_pages,
        digests=digests,
    )
    items = [(file, q) for file in documents for q in questions]

    def changed(item: tuple[str, Question], row: dict[str, Any]) -> bool:
        # rows written before digests were recorded are taken as they are
        return "file_digest" in row and row["file_digest"] != digests[item[0]]

    try:
        summary = _run(
            items,
            lambda item: (item[0], item[1].text, item[1].task),
            answer_key,
            job,
            Path(out),
            executor=executor,
            progress=progress,
            retry_failed=retry_failed,
            purpose="answers file",
            state=brain,
            stale=changed,
        )
    finally:
        with contextlib.suppress(Exception):
            brain.close()
    summary.not_read = list(not_read)
    return summary


def _refuse_inputs_as_output(inputs: Sequence[str | os.PathLike], out: str | os.PathLike) -> None:
    """Refuse an output file that is one of the run's own inputs (it would be cut or appended to)."""
    target = os.path.realpath(out)
    for item in inputs:
        if os.path.realpath(item) == target:
            raise InputError(out, f"is an input of this run ({item}); give --out another file name")


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
        row: dict[str, Any] = {
            "file": file,
            "page": number,
            "output": None,
            "steps": [],
            "kept": [],
            "seconds": 0.0,
            "error": None,
        }
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
            row.update(
                output=str(target),
                kept=[s.tool for s in steps if s.verdict == "keep"],
                steps=[
                    {
                        "tool": s.tool,
                        "verdict": s.verdict,
                        "why": s.why,
                        "reason": s.reason,
                        "seconds": round(s.seconds, 3),
                    }
                    for s in steps
                ],
            )
        except Exception as err:  # one page's failure is a row
            row["error"] = _error_text(err)
        row["seconds"] = round(time.perf_counter() - t0, 3)
        return row

    def lost(self, item: tuple[str, int | None, str], reason: str) -> dict[str, Any]:
        return {
            "file": item[0],
            "page": item[1],
            "output": None,
            "steps": [],
            "kept": [],
            "seconds": 0.0,
            "error": f"WorkerLost: {reason}",
        }

    def close(self, reader: Any) -> None:
        with contextlib.suppress(Exception):
            reader.close()


def restore_items(
    documents: Sequence[str], base: str | os.PathLike, out_dir: str | os.PathLike, pages: PageSelection = None
) -> list[tuple[str, int | None, str]]:
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
    walk = walk_documents(target)
    items = restore_items(walk.documents, _base(target), out, pages)
    if not items:
        raise ConfigError(f"{target}: no page to restore")
    summary = _run(
        items,
        lambda item: (item[0], str(item[1])),
        restore_key,
        RestoreJob(pages),
        out / RESTORE_ROWS,
        executor=executor or LocalExecutor(),
        progress=progress,
        retry_failed=retry_failed,
        purpose="restore rows file",
    )
    summary.not_read = list(walk.skipped)
    return summary


__all__ = [
    "DOCUMENT_SUFFIXES",
    "MAX_QUESTIONS_BYTES",
    "MAX_WALK_DEPTH",
    "MAX_WALK_ENTRIES",
    "RESTORE_ROWS",
    "AskJob",
    "BatchSummary",
    "BrainFactory",
    "DocumentWalk",
    "Question",
    "RestoreJob",
    "answer_key",
    "ask_batch",
    "decode_questions",
    "find_documents",
    "walk_documents",
    "new_answer_row",
    "read_questions",
    "restore_batch",
    "restore_items",
    "restore_key",
]
