"""Benchmark runs: every (sample, strategy) pair as one JSONL row, resumable, in parallel worker processes.

A run lives in one directory::

    runs/NAME/results.jsonl   one row per (sample id, strategy), appended and flushed as each finishes
    runs/NAME/manifest.json   configuration, package versions, git commit, seed, prompt version, times
    runs/NAME/steps/...       page images of every step (only with ``save_steps``)

Rows already in ``results.jsonl`` are skipped when a run is started again, so an interrupted run resumes
where it stopped. A line cut short by a kill is dropped. Each row records its sample's content
(``sample_digest``: question, gold answers, task, image bytes), so a sample edited in the dataset since its
row was written is run again (and scored with its new gold); a run folder is bound to its dataset
(``config["dataset_id"]``), and another dataset is refused. A sample whose image cannot be loaded, or whose
strategy raises, becomes a row with ``error`` set; such rows are run again only with ``retry_failed``, and
the new row replaces the old one (readers take the last row per key; the file is compacted at the end).

One process writes a run folder at a time: :func:`run_benchmark` holds the folder's lock
(:mod:`docintent.io.lock`) for the whole run, so a second run on the same folder is refused with the name of
the one writing it, and the compaction never replaces a file another process is appending to. Worker
processes ignore Ctrl-C (the parent stops them) and exit on their own when their parent dies. Credentials
in URLs are removed from every row and manifest before it is written.

Example::

    >>> from functools import partial
    >>> from docintent.brains import get_brain
    >>> summary = run_benchmark(samples, ["none", "docintent"], partial(get_brain, "offline"),
    ...                         "runs/demo", workers=2)          # doctest: +SKIP
    >>> summary.new_rows, summary.failed                         # doctest: +SKIP
    (40, 0)
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
import logging
import os
import platform
import random
import stat
import subprocess
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, TypeVar, cast

import numpy as np

from ..brains import get_brain
from ..errors import ConfigError, DatasetError, DocIntentError, InputError
from ..io import load_page
from ..io.confine import run_file
from ..io.lock import FolderLock, atomic_write_text
from ..ocr import get_engine
from ..redaction import MASK, is_secret_name, redact, register_options
from ..sample import Sample
from ..settings import get_settings
from ..strategies import STRATEGIES, get_strategy
from ..vocabulary import check_question
from .executors import Executor, LocalExecutor, Progress
from .metrics import row_correct, score_row

log = logging.getLogger(__name__)

RESULTS_FILE = "results.jsonl"
MANIFEST_FILE = "manifest.json"
STEPS_DIR = "steps"
#: Packages whose versions every manifest records.
VERSIONED_PACKAGES = (
    "docintent", "numpy", "scipy", "opencv-python-headless", "pillow", "pypdfium2", "rapidocr", "onnxruntime",
    "tesserocr", "rapidfuzz", "openai", "pydantic", "scikit-image",
)  # fmt: skip


# --- options ---------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BrainFactory:
    """A picklable recipe for a brain: ``get_brain(kind, **options)``. Each worker process calls it once."""

    kind: str
    options: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        register_options(self.options)  # masked wherever they would appear in this process's output

    def __call__(self):
        register_options(self.options)  # in a worker process too
        return get_brain(self.kind, **self.options)


def parse_shard(text: str) -> tuple[int, int]:
    """Parse ``"i/n"`` (0-based shard ``i`` of ``n``)."""
    try:
        index_text, count_text = text.split("/")
        index, count = int(index_text), int(count_text)
    except ValueError:
        raise ConfigError(f"--shard {text!r}: expected I/N with integers, e.g. 0/4") from None
    if count < 1 or not 0 <= index < count:
        raise ConfigError(f"--shard {text!r}: need N >= 1 and 0 <= I < N")
    return index, count


def shard_of(sample_id: str, count: int) -> int:
    """The shard (0..count-1) a sample id falls in; stable across machines, orderings and ``--limit``."""
    digest = hashlib.blake2b(sample_id.encode("utf-8"), digest_size=8).digest()
    return int.from_bytes(digest, "big") % count


def select_shard(samples: Sequence[Sample], index: int, count: int) -> list[Sample]:
    """The samples of shard ``index`` of ``count``; the shards of one ``count`` partition ``samples``."""
    return [s for s in samples if shard_of(s.id, count) == index]


def parse_options(pairs: Iterable[str]) -> dict[str, Any]:
    """``["k=v", ...]`` -> dict; values are read as JSON when they parse (numbers, booleans), else text."""
    options: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key.strip():
            raise ConfigError(f"option {pair!r}: expected KEY=VALUE")
        try:
            options[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            options[key.strip()] = value
    return options


# --- the results file ------------------------------------------------------------------------------


def row_key(row: dict[str, Any]) -> tuple[str, str]:
    """The identity of a row: (sample id, strategy)."""
    return str(row["sample"]["id"]), str(row["strategy"])


def _json_default(value: Any) -> Any:
    if isinstance(value, np.generic):
        return value.item()
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    if isinstance(value, Path):
        return str(value)
    return repr(value)


def dump_row(row: dict[str, Any]) -> str:
    """One row as a JSON line (with the trailing newline); secrets are replaced by ``***``
    (:func:`docintent.redaction.redact`)."""
    text = json.dumps(row, ensure_ascii=False, default=_json_default)
    if any("\ud800" <= ch <= "\udfff" for ch in text):  # a lone surrogate cannot be written as UTF-8: escape it
        text = json.dumps(row, ensure_ascii=True, default=_json_default)
    return redact(text) + "\n"


#: A row's identity in its results file (:func:`row_key` for benchmark rows).
RowKey = Callable[[dict[str, Any]], tuple[str, ...]]


def _scan(path: Path, key: RowKey = row_key) -> tuple[list[dict[str, Any]], int, int]:
    """Parse a results file: (rows in file order, byte length of the intact part, number of lines dropped).

    Only the last line may be damaged (a write cut short by a kill has no final newline, or is not JSON);
    a damaged line before it means the file was edited or corrupted, which is an error.
    """
    data = path.read_bytes()
    rows: list[dict[str, Any]] = []
    good_end = 0
    pos = 0
    lines = data.split(b"\n")
    dropped = 0
    for number, raw in enumerate(lines, start=1):
        is_last_piece = number == len(lines)
        end = pos + len(raw) + (0 if is_last_piece else 1)
        if not raw.strip():
            if not is_last_piece:
                good_end = end
            pos = end
            continue
        try:
            row = json.loads(raw)
            if is_last_piece:  # no newline after it: the write was cut short
                raise ValueError("unterminated line")
            key(row)
        except (ValueError, KeyError, TypeError, RecursionError) as err:
            rest = b"".join(lines[number:]).strip()
            if rest:
                raise DatasetError(
                    f"{path}: line {number} is not a complete result row ({err}); "
                    "only the last line of a results file may be cut short"
                ) from None
            dropped = 1
            break
        rows.append(row)
        good_end = end
        pos = end
    return rows, good_end, dropped


def latest_rows(rows: Iterable[dict[str, Any]], key: RowKey = row_key) -> list[dict[str, Any]]:
    """One row per key, the last one written, in the order keys first appeared."""
    latest: dict[tuple[str, ...], dict[str, Any]] = {}
    for row in rows:
        latest[key(row)] = row  # re-assigning keeps the key's first position
    return list(latest.values())


def read_results(path: str | os.PathLike, key: RowKey = row_key) -> list[dict[str, Any]]:
    """The rows of a run (a ``results.jsonl`` or its directory): last row per key, damaged last line dropped."""
    p = Path(path)
    if p.is_dir():
        # the run folder's own file, by its real path: a link out of the folder is refused, never read
        p = run_file(p, RESULTS_FILE) or p / RESULTS_FILE
    if not p.exists():
        raise DatasetError(f"{p}: no such results file")
    if not p.is_file():  # a pipe would wait for a writer
        raise DatasetError(f"{p}: not a regular file")
    try:
        rows, _, dropped = _scan(p, key)
    except OSError as err:
        raise DatasetError(f"{p}: cannot be read ({err.strerror or err})") from None
    if dropped:
        log.warning("%s: dropped a partially written last line", p)
    return latest_rows(rows, key)


class ResultsWriter:
    """Appends rows to a results file (``results.jsonl``), one flushed line each. Opening it cuts off a partial
    last line. ``key``: a row's identity (the last row per key counts)."""

    def __init__(self, path: Path, key: RowKey = row_key) -> None:
        self.path = path
        self.key = key
        self.rows: list[dict[str, Any]] = []
        self.dropped = 0
        if path.exists():
            self.rows, good_end, self.dropped = _scan(path, key)
            if good_end < path.stat().st_size:
                # Appending after a cut-off line would glue the next row onto it.
                with open(path, "r+b") as fh:
                    fh.truncate(good_end)
                log.warning("%s: removed a partially written last line", path)
        self._fh = open(path, "a", encoding="utf-8")

    def write(self, row: dict[str, Any]) -> None:
        self._fh.write(dump_row(row))
        self._fh.flush()
        self.rows.append(row)

    def close(self) -> None:
        self._fh.close()

    def latest(self) -> dict[tuple[str, ...], dict[str, Any]]:
        """The last row written per key."""
        return {self.key(r): r for r in self.rows}

    def compact(self) -> bool:
        """Rewrite the file with one row per key (the last). Returns whether anything changed."""
        latest = latest_rows(self.rows, self.key)
        if len(latest) == len(self.rows):
            return False
        # Safe only because the run holds the folder's lock: nobody else appends to the file being replaced.
        atomic_write_text(self.path, "".join(dump_row(row) for row in latest))
        self.rows = latest
        return True


def plan_rows(
    items: Iterable[Any],
    item_key: Callable[[Any], tuple[str, ...]],
    done: dict[tuple[str, ...], dict[str, Any]],
    retry_failed: bool = False,
    stale: Callable[[Any, dict[str, Any]], bool] | None = None,
) -> tuple[list[Any], int, int, int]:
    """The items still to run: ``(todo, skipped, retried, changed)``. An item whose key has a row in ``done`` is
    skipped, unless that row failed and ``retry_failed``, or ``stale(item, row)`` says the item changed since the
    row was written (its new row then replaces the old one)."""
    todo: list[Any] = []
    skipped = retried = changed = 0
    for item in items:
        row = done.get(item_key(item))
        if row is None:
            todo.append(item)
        elif row.get("error") and retry_failed:
            todo.append(item)
            retried += 1
        elif stale is not None and stale(item, row):
            todo.append(item)
            changed += 1
        else:
            skipped += 1
    return todo, skipped, retried, changed


def write_rows(
    todo: Sequence[Any],
    job: Any,
    writer: ResultsWriter,
    executor: Executor,
    bar: Progress,
    *,
    state: Any = None,
    stamp: Callable[[dict[str, Any]], None] | None = None,
) -> int:
    """Run ``job`` on every item of ``todo`` with ``executor`` and append each row as it arrives (this process
    alone writes); returns the rows written. ``stamp`` may add fields to each row before it is written. A row
    with ``error`` set counts as failed on the progress line."""
    written = 0

    def emit(row: dict[str, Any]) -> None:
        nonlocal written
        if stamp is not None:
            stamp(row)
        writer.write(row)
        written += 1
        bar.update(failed=bool(row.get("error")), note=row.get("error"))

    executor.map(todo, job, emit, state=state)
    return written


# --- running one row -------------------------------------------------------------------------------


def _error_text(err: BaseException) -> str:
    return f"{type(err).__name__}: {err}"


def _slug(text: str) -> str:
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in text)
    return safe[:80] or "sample"


def _save_steps(result: Any, sample_id: str, out_dir: Path) -> str:
    """Write every page state of ``result`` as ``<hash>.jpg`` (longest side 1024) and return the folder,
    relative to the run directory. Files are named by page hash, so the strategies of one sample share
    one folder and a page they all saw (the input) is stored once."""
    import cv2

    rel = Path(STEPS_DIR) / _slug(sample_id)
    folder = out_dir / rel
    folder.mkdir(parents=True, exist_ok=True)
    for page_hash, page in getattr(result, "pages", {}).items():
        target = folder / f"{page_hash}.jpg"
        if target.exists():
            continue
        pixels = page.pixels
        scale = 1024 / max(pixels.shape[:2])
        if scale < 1:
            pixels = cv2.resize(pixels, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
        # Write under a temporary name first: two workers may save the same input page at once.
        tmp = folder / f".{page_hash}.{os.getpid()}.jpg"
        cv2.imwrite(str(tmp), cv2.cvtColor(pixels, cv2.COLOR_RGB2BGR), [cv2.IMWRITE_JPEG_QUALITY, 85])
        os.replace(tmp, target)
    return rel.as_posix()


def _row_seed(seed: int, key: tuple[str, str]) -> int:
    digest = hashlib.blake2b(f"{seed}|{key[0]}|{key[1]}".encode(), digest_size=4).digest()
    return int.from_bytes(digest, "big")


#: Image digests of this process by (path, size, modification time): a resume hashes each image once.
_IMAGE_DIGESTS: dict[tuple[str, int, int], str] = {}


def _image_digest(path: str) -> str:
    """The BLAKE2b digest of an image file's bytes ("missing" / "unreadable" when it cannot be read)."""
    try:
        info = os.stat(path)
    except OSError:
        return "missing"
    key = (path, info.st_size, info.st_mtime_ns)
    if key not in _IMAGE_DIGESTS:
        digest = hashlib.blake2b(digest_size=16)
        try:
            with open(path, "rb") as fh:
                for chunk in iter(lambda: fh.read(1 << 20), b""):
                    digest.update(chunk)
        except OSError:
            return "unreadable"
        _IMAGE_DIGESTS[key] = digest.hexdigest()
    return _IMAGE_DIGESTS[key]


def content_digest(path: str) -> str:
    """The BLAKE2b digest of a file's bytes, hashed once per process for a path, size and modification time
    ("missing" / "unreadable" when it cannot be read; a pipe or device is never opened)."""
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):
            return "not a regular file"
    except OSError:
        return "missing"
    return _image_digest(path)


def sample_digest(sample: Sample) -> str:
    """What a row's result depends on in its sample: question, gold answers, task, subset, the problem of a
    bad row and the image's bytes (not its path, so a moved dataset resumes). Rows whose digest differs from
    the dataset's sample are run again."""
    image = _image_digest(sample.image) if sample.image else "none"
    facts = [
        sample.question,
        list(sample.answers),
        sample.task,
        sample.subset,
        str(sample.meta.get("row_error") or sample.meta.get("image_error") or ""),
        image,
    ]
    text = json.dumps(facts, ensure_ascii=True)
    return hashlib.blake2b(text.encode("ascii"), digest_size=16).hexdigest()


def _same_sample(row: dict[str, Any], sample: Sample, digest: str) -> bool:
    """Whether ``row`` was written for ``sample`` as it is now (rows from before digests compare their text)."""
    if "sample_digest" in row:
        return row["sample_digest"] == digest
    written = row.get("sample") or {}
    return (
        written.get("question") == sample.question
        and list(written.get("answers") or []) == list(sample.answers)
        and written.get("task") == sample.task
    )


def dataset_identity(spec: str) -> str:
    """A dataset spec with its path resolved (``jsonl:/abs/path``), so two spellings of one dataset match."""
    kind, sep, target = str(spec).partition(":")
    if not sep:
        return str(spec)
    return f"{kind}:{os.path.realpath(os.path.expanduser(target))}"


def _check_dataset(out: Path, previous: dict[str, Any] | None, config: dict[str, Any]) -> None:
    """Refuse to resume a run folder with another dataset than the one it was made with."""
    if not previous or not config.get("dataset"):
        return
    before = previous.get("config") or {}
    if not before.get("dataset"):
        return
    old = before.get("dataset_id") or before["dataset"]
    new = config["dataset_id"] if before.get("dataset_id") else config["dataset"]
    if old != new:
        raise ConfigError(
            f"{out}: this run folder holds a run of the dataset {before['dataset']!r}, not {config['dataset']!r}; "
            f"resume it with --dataset {before['dataset']}, or choose another --out folder for this dataset"
        )


def new_row(sample: Sample, strategy_name: str, brain_name: str) -> dict[str, Any]:
    """The row of a pair before it has run: no answer, score 0, no error."""
    return {
        "sample": sample.to_dict(),
        "strategy": strategy_name,
        "brain": brain_name,
        "answer": "",
        "score": 0.0,
        "correct": False,
        "result": None,
        "seconds": 0.0,
        "error": None,
    }


def run_one(
    sample: Sample,
    strategy: Any,
    brain: Any,
    *,
    brain_name: str,
    seed: int = 0,
    steps_dir: Path | None = None,
) -> dict[str, Any]:
    """Run ``strategy`` with ``brain`` on one sample and return its row. Never raises for the sample's sake:
    a failure (image, strategy, scoring) is the row's ``error``."""

    key = (sample.id, strategy.name)
    row_seed = _row_seed(seed, key)
    random.seed(row_seed)
    np.random.seed(row_seed)
    row = new_row(sample, strategy.name, brain_name)
    t0 = time.perf_counter()
    try:
        for problem in ("row_error", "image_error"):  # the dataset row itself, or its image, cannot be used
            if sample.meta.get(problem):
                raise DatasetError(str(sample.meta[problem]))
        check_question(sample.question)
        page = load_page(sample.image)
        result = strategy.run(page, sample.question, sample.task, brain)
        row["answer"] = str(result.answer)
        row["result"] = result.to_dict()
        final_page = getattr(result, "final_page", None)
        if final_page is not None:
            row["result"]["final_page"] = final_page.hash
            row["result"]["input_page"] = page.hash
        if result.error:
            row["error"] = str(result.error)
        if steps_dir is not None:
            row["steps_dir"] = _save_steps(result, sample.id, steps_dir)
    except Exception as err:  # one sample's failure is data, never the end of the run
        row["error"] = _error_text(err)
    row["seconds"] = time.perf_counter() - t0
    try:
        metric = sample.meta.get("metric")
        score = float(score_row(sample.task, sample.subset, row["answer"], sample.answers, metric))
        row["score"] = score
        row["correct"] = bool(row_correct(sample.task, score, metric))
    except DocIntentError as err:
        row["error"] = row["error"] or _error_text(err)
    return row


# --- the job the executors run ------------------------------------------------------------------


@dataclass(frozen=True)
class RowJob:
    """One row per item ``(sample, strategy index)``; every worker slot builds its brain once.

    Run by an executor (:mod:`docintent.evaluation.executors`) in this process, in worker processes or on Ray
    actors; rows come back to :func:`run_benchmark`, which alone writes them.
    """

    brain_factory: Callable[[], Any]
    strategies: list[Any]
    brain_name: str
    _: KW_ONLY
    seed: int = 0
    steps_dir: Path | None = None
    batch: int = 1

    def setup(self) -> Any:
        return self.brain_factory()

    def run(self, brain: Any, item: tuple[Sample, int]) -> dict[str, Any]:
        sample, index = item
        return run_one(
            sample, self.strategies[index], brain, brain_name=self.brain_name, seed=self.seed, steps_dir=self.steps_dir
        )

    def lost(self, item: tuple[Sample, int], reason: str) -> dict[str, Any]:
        """The row of a pair whose worker died on every try: an error row, like any other failure."""
        sample, index = item
        row = new_row(sample, self.strategies[index].name, self.brain_name)
        row["error"] = f"WorkerLost: {reason}"
        return row

    def close(self, brain: Any) -> None:
        with contextlib.suppress(Exception):
            brain.close()


# --- manifest --------------------------------------------------------------------------------------


def _now() -> str:
    return datetime.now(UTC).isoformat(timespec="seconds")


def package_versions() -> dict[str, str | None]:
    """Installed versions of the packages a result depends on (None when absent)."""
    versions: dict[str, str | None] = {"python": platform.python_version()}
    for name in VERSIONED_PACKAGES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def git_commit() -> dict[str, Any] | None:
    """The commit of the docintent source tree (and whether it had uncommitted changes), if it is a checkout."""
    root = Path(__file__).resolve().parents[3]
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=5)
        if commit.returncode != 0:
            return None
        status = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=5,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return {"commit": commit.stdout.strip(), "dirty": bool(status.stdout.strip())}


def reproducibility(strategies: Sequence[Any], brain: Any) -> dict[str, Any]:
    """Everything recorded that could still change a result: package versions, inference threads, the OCR
    engine's settings (its cache key names them), the full configuration of every strategy and the brain's
    settings. ``docintent report`` warns when two runs it compares differ in any of them."""
    settings = get_settings()
    engine_key = None
    if hasattr(brain, "engine_kind"):  # a brain that reads pages with an OCR engine
        engine_key = get_engine(brain.engine_kind, cache=False).cache_key()
    configs: dict[str, Any] = {}
    for strategy in strategies:
        config = getattr(strategy, "config", None)
        dump = getattr(config, "model_dump", None)
        configs[strategy.name] = dump(mode="json") if dump is not None else str(config)
    brain_settings = (
        {
            k: v
            for k, v in vars(brain).items()
            if isinstance(v, (str, int, float, bool, type(None))) and not is_secret_name(k)
        }
        if brain is not None
        else {}
    )
    for name in ("calibration", "floors", "perception"):
        value = getattr(brain, name, None)
        if value is not None:
            brain_settings[name] = repr(value)
    return {
        "versions": package_versions(),
        "threads": {
            "DOCINTENT_THREADS": os.environ.get("DOCINTENT_THREADS"),
            "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS"),
            "settings.threads": settings.threads,
        },
        "ocr_engine": engine_key,
        "pdf_dpi": settings.pdf_dpi,
        "max_side": settings.max_side,
        "strategies": configs,
        "brain": brain_settings,
    }


def reproducibility_differences(a: dict[str, Any], b: dict[str, Any]) -> list[str]:
    """What differs between two manifests' reproducibility records (``key: A vs B`` lines; strategies compared
    only where both runs have them). Thread counts do not change results, so they are left out."""
    left, right = a.get("reproducibility") or {}, b.get("reproducibility") or {}
    out = []
    for key in sorted(set(left) | set(right)):
        if key == "threads":
            continue
        x, y = left.get(key), right.get(key)
        if key == "strategies" and isinstance(x, dict) and isinstance(y, dict):
            x = {k: v for k, v in x.items() if k in y}
            y = {k: v for k, v in y.items() if k in x}
        if isinstance(x, dict) and isinstance(y, dict):
            for sub in sorted(set(x) | set(y)):
                if x.get(sub) != y.get(sub):
                    out.append(f"{key}.{sub}: {x.get(sub)!r} vs {y.get(sub)!r}")
        elif x != y:
            out.append(f"{key}: {x!r} vs {y!r}")
    return out


def _public_options(options: dict[str, Any]) -> dict[str, Any]:
    return {k: (MASK if is_secret_name(k) else v) for k, v in options.items()}


#: The largest manifest read (a run's manifest is a few kilobytes).
MAX_MANIFEST_BYTES = 16 * 1024 * 1024
#: Manifest fields read as objects or lists, when present.
_MANIFEST_OBJECTS = ("config", "git", "reproducibility", "versions")
_MANIFEST_LISTS = ("sessions",)


def read_manifest(out_dir: str | os.PathLike) -> dict[str, Any] | None:
    """The manifest of a run directory, or None when it has none. It is data: read only from inside the folder
    (a link out is refused), only as a regular file, and refused naming the field when a field has a type no
    run writes."""
    path = Path(out_dir) / MANIFEST_FILE
    target = run_file(out_dir, MANIFEST_FILE, max_bytes=MAX_MANIFEST_BYTES)
    if target is None:
        return None
    try:
        manifest = json.loads(target.read_text(encoding="utf-8"))
    except json.JSONDecodeError as err:
        raise DatasetError(f"{path}: not valid JSON ({err})") from None
    except UnicodeDecodeError:
        raise DatasetError(f"{path}: not valid UTF-8") from None
    except RecursionError:
        raise DatasetError(f"{path}: nested too deeply to be a manifest") from None
    except OSError as err:
        raise DatasetError(f"{path}: cannot be read ({err.strerror or err})") from None
    if not isinstance(manifest, dict):
        raise DatasetError(f"{path}: must be a JSON object, got {type(manifest).__name__}")
    for name, kind, word in [
        *((n, dict, "an object") for n in _MANIFEST_OBJECTS),
        *((n, list, "a list") for n in _MANIFEST_LISTS),
    ]:
        if manifest.get(name) is not None and not isinstance(manifest[name], kind):
            raise DatasetError(f"{path}: {name!r} must be {word}, got {type(manifest[name]).__name__}")
    commit = (manifest.get("git") or {}).get("commit")
    if commit is not None and not isinstance(commit, str):
        raise DatasetError(f"{path}: 'git.commit' must be text, got {type(commit).__name__}")
    return manifest


def _write_manifest(out_dir: Path, manifest: dict[str, Any]) -> None:
    text = json.dumps(manifest, indent=2, default=_json_default) + "\n"
    atomic_write_text(out_dir / MANIFEST_FILE, redact(text))


# --- the run ---------------------------------------------------------------------------------------


@dataclass
class RunSummary:
    """What a call to :func:`run_benchmark` did.

    ``rows``: rows in the results file afterwards (one per key); ``new_rows``: rows written by this call;
    ``skipped``: pairs already done; ``retried``: failed pairs run again; ``failed``: rows in the file whose
    ``error`` is set; ``seconds``: wall time of this call; ``samples_per_second``: new rows per second;
    ``changed``: pairs run again because their sample changed in the dataset.
    """

    out_dir: Path
    rows: int
    new_rows: int
    _: KW_ONLY
    skipped: int
    retried: int
    failed: int
    seconds: float
    workers: int
    dropped_partial_line: bool = False
    changed: int = 0

    @property
    def samples_per_second(self) -> float:
        return self.new_rows / self.seconds if self.seconds > 0 else 0.0

    @property
    def results_path(self) -> Path:
        return self.out_dir / RESULTS_FILE


def _resolve_strategies(strategies: Sequence[Any], seed: int) -> list[Any]:
    resolved = []
    for item in strategies:
        if isinstance(item, str):
            name = item.strip()
            # the run's seed reaches the strategies that draw random orders (the others have no seed knob)
            seeded = name in STRATEGIES and "seed" in STRATEGIES[name].knobs()
            resolved.append(get_strategy(name, seed=seed) if seeded else get_strategy(name))
        else:
            resolved.append(item)
    names = [s.name for s in resolved]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ConfigError(f"strategies listed twice: {', '.join(duplicates)}")
    if not resolved:
        raise ConfigError("no strategy to run")
    return resolved


def _check_ids(samples: Sequence[Sample]) -> None:
    seen: set[str] = set()
    for s in samples:
        if s.id in seen:
            raise DatasetError(f"sample id {s.id!r} occurs more than once; rows are keyed by sample id")
        seen.add(s.id)


def _check_picklable(brain_factory: Callable[[], Any], strategies: list[Any]) -> None:
    import pickle

    for what, value in (("brain factory", brain_factory), ("strategies", strategies)):
        try:
            pickle.dumps(value)
        except Exception as err:
            raise ConfigError(
                f"workers > 1 need a picklable {what} (a module-level function or class, BrainFactory or "
                f"functools.partial; not a lambda or local function): {err}"
            ) from None


_Run = TypeVar("_Run", bound=Callable[..., Any])


def _one_writer(run: _Run) -> _Run:
    """Hold the run folder's lock (creating the folder) while ``run`` works in it."""

    @functools.wraps(run)
    def locked(
        samples: Any, strategies: Any, brain_factory: Any, out_dir: str | os.PathLike, *args: Any, **kwargs: Any
    ) -> Any:
        out = Path(out_dir)
        if out.exists() and not out.is_dir():
            raise InputError(out, "exists and is not a folder; a run needs a folder of its own")
        out.mkdir(parents=True, exist_ok=True)
        with FolderLock(out, purpose="benchmark run"):
            return run(samples, strategies, brain_factory, out, *args, **kwargs)

    return cast(_Run, locked)


@_one_writer
def run_benchmark(
    samples: Sequence[Sample],
    strategies: Sequence[Any],
    brain_factory: Callable[[], Any],
    out_dir: str | os.PathLike,
    *,
    workers: int = 1,
    retry_failed: bool = False,
    progress: bool | None = None,
    seed: int = 0,
    save_steps: bool = False,
    config: dict[str, Any] | None = None,
    max_rows: int | None = None,
    executor: Executor | None = None,
) -> RunSummary:
    """Run every strategy on every sample and append one row per pair to ``out_dir/results.jsonl``.

    ``strategies``: names (``docintent.strategies.STRATEGIES``) or objects with ``.name`` and
    ``.run(page, question, task, brain) -> Result``. ``brain_factory``: a callable returning a Brain; with
    ``workers > 1`` it and the strategies must be picklable (a :class:`BrainFactory` or
    ``functools.partial(get_brain, ...)`` is), since each spawned worker process builds its own brain once.
    Pairs already in the file are skipped; failed ones are run again only when ``retry_failed``.
    ``progress``: a tqdm bar (None = only when stderr is a terminal). ``config``: extra facts for the
    manifest (dataset spec, shard, limit). ``max_rows``: stop after writing this many rows (a budget).
    ``executor``: where the rows run (:class:`~docintent.evaluation.executors.LocalExecutor` with ``workers``
    by default, or a :class:`~docintent.evaluation.executors.RayExecutor`); this process alone writes them.
    Raises :class:`~docintent.errors.FolderBusyError` when another process is writing ``out_dir``.
    """
    if workers < 1:
        raise ConfigError(f"workers must be >= 1, got {workers}")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    _check_ids(samples)
    resolved = _resolve_strategies(strategies, seed)
    config = dict(config or {})
    if config.get("dataset"):
        config["dataset_id"] = dataset_identity(config["dataset"])
    _check_dataset(out, read_manifest(out), config)

    executor = executor or LocalExecutor(workers=workers)
    if isinstance(executor, LocalExecutor) and executor.workers > 1:
        _check_picklable(brain_factory, resolved)
    brain = brain_factory()
    brain_name = str(getattr(brain, "name", None) or getattr(brain_factory, "kind", None) or type(brain).__name__)
    prompt_version = getattr(brain, "prompt_version", None)
    previous = read_manifest(out)
    if previous and previous.get("brain") not in (None, brain_name):
        raise ConfigError(
            f"{out}: this run was made with brain {previous['brain']!r}, not {brain_name!r}; "
            "use another --out directory"
        )
    options = _public_options(getattr(brain_factory, "options", {}) or {})
    old_options = ((previous or {}).get("config") or {}).get("brain_options")
    if old_options is not None and old_options != json.loads(json.dumps(options, default=_json_default)):
        log.warning(
            "%s: brain options changed from %s to %s; earlier rows keep the old ones", out, old_options, options
        )

    run_file(out, RESULTS_FILE)  # a results file that is a link out of the run or no regular file: refused unwritten
    writer = ResultsWriter(out / RESULTS_FILE)
    digests = {sample.id: sample_digest(sample) for sample in samples}
    pairs = [(sample, index) for sample in samples for index in range(len(resolved))]
    todo, skipped, retried, changed = plan_rows(
        pairs,
        lambda item: (item[0].id, resolved[item[1]].name),
        writer.latest(),
        retry_failed,
        stale=lambda item, row: not _same_sample(row, item[0], digests[item[0].id]),
    )
    if max_rows is not None:
        todo = todo[: max(0, max_rows)]

    started = _now()
    manifest = dict(previous or {})
    if changed:
        log.warning(
            "%s: %d row(s) are run again: their samples changed in the dataset since they were written", out, changed
        )
    manifest.update(
        config={
            **config,
            "strategies": [s.name for s in resolved],
            "workers": getattr(executor, "workers", None) or workers,
            "executor": executor.describe(),
            "retry_failed": retry_failed,
            "save_steps": save_steps,
            "brain_options": options,
        },
        brain=brain_name,
        prompt_version=prompt_version,
        seed=seed,
        versions=package_versions(),
        reproducibility=reproducibility(resolved, brain),
        git=git_commit(),
        started=manifest.get("started", started),
        finished=None,
    )
    sessions = list(manifest.get("sessions") or [])
    sessions.append({"started": started, "finished": None, "planned_rows": len(todo), "new_rows": 0})
    manifest["sessions"] = sessions
    _write_manifest(out, manifest)

    bar = Progress(len(todo), desc=out.name, show=progress)
    steps_dir = out.resolve() if save_steps else None  # absolute: workers may run in another directory
    rows_before = len(writer.rows)
    t0 = time.perf_counter()

    def stamp(row: dict[str, Any]) -> None:
        row["sample_digest"] = digests.get(str(row["sample"]["id"]))

    try:
        # All strategies of a sample in one call: they start from the same page, whose OCR the worker's
        # cache (one per machine) then serves to every strategy after the first.
        job = RowJob(brain_factory, resolved, brain_name, seed=seed, steps_dir=steps_dir, batch=len(resolved))
        write_rows(todo, job, writer, executor, bar, state=brain, stamp=stamp)
    finally:
        bar.close()
        writer.close()
        with contextlib.suppress(Exception):
            brain.close()
        seconds = time.perf_counter() - t0
        new_rows = len(writer.rows) - rows_before  # counted here too when the run was interrupted
        writer.compact()
        final_rows = latest_rows(writer.rows)
        sessions[-1].update(finished=_now(), new_rows=new_rows, seconds=round(seconds, 3))
        manifest.update(finished=_now(), rows=len(final_rows), failed=sum(1 for r in final_rows if r.get("error")))
        _write_manifest(out, manifest)

    return RunSummary(
        out_dir=out,
        rows=len(final_rows),
        new_rows=new_rows,
        skipped=skipped,
        retried=retried,
        failed=sum(1 for r in final_rows if r.get("error")),
        seconds=seconds,
        workers=getattr(executor, "workers", None) or workers,
        dropped_partial_line=bool(writer.dropped),
        changed=changed,
    )
