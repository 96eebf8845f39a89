"""Dataset loaders: every benchmark becomes a list of :class:`~docintent.sample.Sample`.

One entry point, :func:`load_dataset`, takes a spec ``KIND:PATH``:

- ``synth:DIR``      a generated set: ``DIR/samples.jsonl`` of ``Sample.to_dict()`` rows, image paths
                     relative to ``DIR``;
- ``wilddoc:PATH``   WildDoc, either the VLMEvalKit TSV (``index``, ``question``, ``answer`` and
                     ``image`` as base64 or ``image_path``) or a folder of JSONL files with the same fields
                     and image paths relative to the folder;
- ``jsonl:PATH``     any JSONL file of ``Sample.to_dict()`` rows (image paths relative to its folder).

Example::

    >>> from docintent.evaluation.datasets import load_dataset
    >>> samples = load_dataset("wilddoc:/data/WildDoc.tsv")      # doctest: +SKIP
    >>> samples[0].task, samples[0].group                        # doctest: +SKIP
    ('doc', 'DocVQA-val-1')

WildDoc indexes read ``<Dataset>-<subset>-<capture 1..4>-<qid>``; the four captures of one question share
the group ``<Dataset>-<subset>-<qid>``. Base64 images are written once into a cache folder, named by the
hash of their encoded text, and only decoded when that file does not exist yet.

Files are UTF-8, with or without a byte-order mark. A row whose text is not valid Unicode (bytes that are
not UTF-8, a lone surrogate such as ``"\ud800"`` in JSON) is kept with its text escaped
(``\udc80``) and the reason in ``meta["row_error"]``: the run records it as that row's error and goes on.
A file whose structure is broken (a line that is not JSON, a row without its fields) is refused whole,
naming the line.
"""

from __future__ import annotations

import base64
import binascii
import csv
import gzip
import hashlib
import io
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import DatasetError
from ..registry import Registry
from ..sample import Sample
from ..settings import get_settings
from .metrics import parse_answers

WILDDOC_FAMILIES: dict[str, str] = {"DocVQA": "doc", "ChartQA": "chart", "TableVQA": "table"}


# --- WildDoc index and answers -------------------------------------------------------------------


@dataclass(frozen=True)
class WildDocIndex:
    """A parsed WildDoc row index ``<dataset>-<split>-<capture>-<qid>``."""

    dataset: str
    split: str
    capture: int
    qid: str

    @property
    def task(self) -> str:
        """The metric family: DocVQA -> doc, ChartQA -> chart, TableVQA -> table."""
        return WILDDOC_FAMILIES[self.dataset]

    @property
    def subset(self) -> str:
        """``DocVQA`` / ``ChartQA`` for those datasets, the sub-split (``vwtq`` ...) for TableVQA."""
        return self.split if self.dataset == "TableVQA" else self.dataset

    @property
    def group(self) -> str:
        """The id the four captures of one question share."""
        return f"{self.dataset}-{self.split}-{self.qid}"


def parse_wilddoc_index(index: str) -> WildDocIndex:
    """Parse ``"TableVQA-vwtq-3-1407"``; raises DatasetError for any other shape or dataset."""
    parts = str(index).split("-")
    if len(parts) != 4:
        raise DatasetError(f"WildDoc index {index!r}: expected <Dataset>-<subset>-<capture>-<qid>")
    dataset, split, capture, qid = parts
    if dataset not in WILDDOC_FAMILIES:
        raise DatasetError(
            f"WildDoc index {index!r}: unknown dataset {dataset!r} (expected one of {', '.join(WILDDOC_FAMILIES)})"
        )
    if not capture.isdigit():
        raise DatasetError(f"WildDoc index {index!r}: capture {capture!r} is not a number")
    return WildDocIndex(dataset, split, int(capture), qid)


def _index_at(index: Any, source: str) -> WildDocIndex:
    try:
        return parse_wilddoc_index(str(index))
    except DatasetError as err:
        raise DatasetError(f"{source}: {err}") from None


def wilddoc_answers(task: str, answer: Any) -> tuple[str, ...]:
    """Gold answers of one WildDoc row: DocVQA / ChartQA list text is expanded (``"['40', '40%']"``),
    a TableVQA answer stays one string (its ``|`` separates the items of one answer)."""
    if task == "table":
        return (str(answer),)
    return tuple(parse_answers(answer if isinstance(answer, (list, tuple)) else str(answer)))


def _wilddoc_sample(row: dict[str, Any], image: str, source: str) -> Sample:
    for key in ("index", "question", "answer"):
        if row.get(key) is None:
            raise DatasetError(f"{source}: row has no {key!r}")
    idx = _index_at(row["index"], source)
    return Sample(
        id=str(row["index"]),
        image=image,
        question=str(row["question"]),
        answers=wilddoc_answers(idx.task, row["answer"]),
        task=idx.task,
        subset=idx.subset,
        group=idx.group,
        capture=idx.capture,
        meta={"dataset": "WildDoc", "split": idx.split},
    )


# --- files ---------------------------------------------------------------------------------------


def _open_text(path: Path) -> io.TextIOBase:
    """The file as text: UTF-8 with an optional byte-order mark; bytes that are not UTF-8 become lone
    surrogates, which :func:`_checked_text` turns into that row's error (one bad row is not a bad file)."""
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8-sig", errors="surrogateescape")
    return open(path, encoding="utf-8-sig", errors="surrogateescape")


def _has_surrogate(text: str) -> bool:
    return any("\ud800" <= ch <= "\udfff" for ch in text)


def _escaped(value: Any) -> Any:
    """``value`` with lone surrogates written as ``\\udcXX`` escapes (strings inside lists and dicts too)."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode("utf-8") if _has_surrogate(value) else value
    if isinstance(value, (list, tuple)):
        return type(value)(_escaped(v) for v in value)
    if isinstance(value, dict):
        return {_escaped(k): _escaped(v) for k, v in value.items()}
    return value


def _checked_text(sample: Sample, source: str) -> Sample:
    """``sample`` as it is when all its text is valid Unicode; else with that text escaped and the problem in
    ``meta["row_error"]`` (naming ``source`` and the fields)."""
    d = sample.to_dict()
    bad = [k for k, v in d.items() if _escaped(v) != v]
    if not bad:
        return sample
    clean = _escaped(d)
    clean["meta"] = {
        **clean.get("meta", {}),
        "row_error": (
            f"{source}: {', '.join(bad)} not valid Unicode text (bytes that are not UTF-8, or a lone surrogate); "
            "fix the dataset row"
        ),
    }
    return Sample.from_dict(clean)


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Yield ``(line number, object)`` for each non-blank line of a JSONL file (``.gz`` allowed).

    Raises DatasetError naming the file (and line) when it is missing, unreadable or not JSON objects.
    """
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    try:
        with _open_text(path) as fh:
            for number, line in enumerate(fh, 1):
                if not line.strip():
                    continue
                try:
                    obj = json.loads(line)
                except json.JSONDecodeError as err:
                    raise DatasetError(f"{path}:{number}: not valid JSON ({err.msg})") from None
                if not isinstance(obj, dict):
                    raise DatasetError(f"{path}:{number}: expected a JSON object, got {type(obj).__name__}")
                yield number, obj
    except (OSError, UnicodeDecodeError, EOFError) as err:
        raise DatasetError(f"{path}: cannot read ({err})") from None


def _resolve(base: Path, image: str, source: str, allow_outside: bool = False) -> str:
    """An image path of a dataset row, resolved against the dataset's folder ``base``.

    A path that leads out of that folder (``../..``, an absolute path elsewhere) is refused unless
    ``allow_outside``: a dataset file from elsewhere must not make a run read, copy into reports (with
    ``--save-steps``) or send to a model endpoint any file on the disk. Symbolic links are resolved first:
    a link inside the folder that points out of it is refused too.
    """
    if not image:
        return image
    if "\x00" in image:  # no file system takes it (and the path functions raise on it)
        raise DatasetError(f"{source}: image path {image!r} holds a NUL character")
    if allow_outside:
        return os.path.normpath(os.path.join(os.path.abspath(base), os.path.expanduser(image)))
    # Links resolved before the check: a link inside the folder that points out of it leads out of it. The
    # resolved path is what gets read, so the link cannot be changed between the check and the read.
    folder = os.path.realpath(base)
    resolved = os.path.realpath(os.path.join(folder, os.path.expanduser(image)))
    if os.path.commonpath([folder, resolved]) != folder:
        raise DatasetError(
            f"{source}: image path {image!r} is outside the dataset folder {folder}; "
            "move the images into it or pass --allow-outside-paths"
        )
    return resolved


def load_samples_jsonl(path: str | Path, *, allow_outside_paths: bool = False) -> list[Sample]:
    """Read a JSONL file of ``Sample.to_dict()`` rows; relative image paths are resolved against the
    file's folder, and paths out of that folder are refused unless ``allow_outside_paths``. Raises
    DatasetError naming the line of a row that lacks a required field."""
    path = Path(path)
    samples = []
    for number, row in iter_jsonl(path):
        missing = [k for k in ("id", "image", "question", "answers", "task") if k not in row]
        if missing:
            raise DatasetError(f"{path}:{number}: row lacks {', '.join(missing)}")
        if isinstance(row["answers"], str):
            raise DatasetError(f"{path}:{number}: 'answers' must be a list of strings, got a string")
        try:
            sample = Sample.from_dict(row)
        except (TypeError, ValueError) as err:
            raise DatasetError(f"{path}:{number}: malformed sample ({err})") from None
        sample = _checked_text(sample, f"{path}:{number}")
        if not any(a.strip() for a in sample.answers) and not sample.meta.get("row_error"):
            sample = _with_row_error(
                sample,
                f"{path}:{number}: no gold answer ('answers' is empty), so the row cannot be scored; add its answers",
            )
        if sample.meta.get("row_error"):
            samples.append(sample)  # its image path may be the bad text: not resolved, never read
            continue
        samples.append(
            _with_image(sample, _resolve(path.parent, sample.image, f"{path}:{number}", allow_outside_paths))
        )
    if not samples:
        raise DatasetError(f"{path}: holds no samples")
    return samples


def _with_image(sample: Sample, image: str) -> Sample:
    d = sample.to_dict()
    d["image"] = image
    return Sample.from_dict(d)


def _with_row_error(sample: Sample, error: str) -> Sample:
    d = sample.to_dict()
    d["meta"] = {**d.get("meta", {}), "row_error": error}
    return Sample.from_dict(d)


def _with_image_error(sample: Sample, error: str | None) -> Sample:
    if not error:
        return sample
    d = sample.to_dict()
    d["meta"] = {**d.get("meta", {}), "image_error": error}
    return Sample.from_dict(d)


def load_synth(directory: str | Path, *, allow_outside_paths: bool = False) -> list[Sample]:
    """Load a generated set: ``DIR/samples.jsonl`` written by the synthetic generator."""
    directory = Path(directory)
    if not directory.is_dir():
        raise DatasetError(f"{directory}: no such directory (expected a synthetic set with samples.jsonl)")
    index = directory / "samples.jsonl"
    if not index.is_file():
        raise DatasetError(f"{directory}: no samples.jsonl in this directory")
    return load_samples_jsonl(index, allow_outside_paths=allow_outside_paths)


# --- WildDoc TSV ---------------------------------------------------------------------------------

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", "png"),
    (b"\xff\xd8\xff", "jpg"),
    (b"GIF8", "gif"),
    (b"BM", "bmp"),
    (b"II*\x00", "tif"),
    (b"MM\x00*", "tif"),
)


def _image_extension(encoded: str) -> str:
    """File extension from the first bytes of a base64 image, without decoding all of it."""
    try:
        head = base64.b64decode(encoded[:32], validate=False)
    except (binascii.Error, ValueError):
        return "img"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "webp"
    for magic, ext in _MAGIC:
        if head.startswith(magic):
            return ext
    return "img"


def cache_base64_image(encoded: str, cache_dir: Path, source: str) -> Path:
    """Write a base64 image once into ``cache_dir``, named by the SHA-256 of its encoded text.

    An existing file is reused without decoding; a new one is written atomically (so concurrent
    loaders never see half a file). Raises DatasetError naming ``source`` for invalid base64.
    """
    encoded = encoded.strip()
    digest = hashlib.sha256(encoded.encode("ascii", "replace")).hexdigest()[:40]
    target = cache_dir / f"{digest}.{_image_extension(encoded)}"
    if target.is_file():
        return target
    try:
        data = base64.b64decode(encoded, validate=True)
    except (binascii.Error, ValueError) as err:
        raise DatasetError(f"{source}: image is not valid base64 ({err})") from None
    if not data:
        raise DatasetError(f"{source}: image is empty")
    cache_dir.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache_dir, suffix=".part")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def default_image_cache() -> Path:
    """Where decoded dataset images go: ``<DOCINTENT_CACHE_DIR>/images``."""

    return Path(get_settings().cache_dir) / "images"


def load_wilddoc_tsv(
    path: str | Path, cache_dir: str | Path | None = None, *, allow_outside_paths: bool = False
) -> list[Sample]:
    """Load WildDoc in VLMEvalKit TSV form.

    Columns: ``index``, ``question``, ``answer`` and either ``image`` (base64; a short value that is the
    index of another row reuses that row's image, as VLMEvalKit writes shared images) or ``image_path``
    (relative to the TSV's folder). Base64 images go to ``cache_dir`` (default
    :func:`default_image_cache`), once each. A row whose base64 text does not decode is kept, with the reason
    in ``meta["image_error"]``: the run records it as that row's error and goes on.
    """
    path = Path(path)
    if not path.is_file():
        raise DatasetError(f"{path}: no such file")
    cache = Path(cache_dir) if cache_dir is not None else default_image_cache()
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # base64 images are far longer than csv's 128 kB default
    samples: list[Sample] = []
    image_of: dict[str, str] = {}
    error_of: dict[str, str] = {}
    references: list[tuple[int, str]] = []
    with _open_text(path) as fh:
        reader = csv.DictReader(fh, delimiter="\t")
        columns = set(reader.fieldnames or ())
        missing = {"index", "question", "answer"} - columns
        if missing:
            raise DatasetError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
        if not columns & {"image", "image_path"}:
            raise DatasetError(f"{path}: needs an 'image' (base64) or 'image_path' column")
        for number, row in enumerate(reader, 2):
            source = f"{path}:{number}"
            index = str(row.get("index") or "")
            encoded = (row.get("image") or "").strip()
            if any(_has_surrogate(str(v)) for v in row.values() if v is not None):
                sample = _checked_text(_wilddoc_sample(row, "", source), source)
                samples.append(sample)
                image_of[sample.id] = ""
                error_of[sample.id] = sample.meta["row_error"]
                continue
            if row.get("image_path"):
                image = _resolve(path.parent, row["image_path"], source, allow_outside_paths)
            elif len(encoded) > 64:
                try:
                    image = str(cache_base64_image(encoded, cache, source))
                except DatasetError as err:
                    image, error_of[index] = "", str(err)
            elif encoded:
                references.append((len(samples), encoded))
                image = ""
            else:
                raise DatasetError(f"{source}: row {index!r} has no image")
            samples.append(_with_image_error(_wilddoc_sample(row, image, source), error_of.get(index)))
            image_of[index] = image
    for position, ref in references:
        if ref in error_of:
            samples[position] = _with_image_error(samples[position], error_of[ref])
            continue
        if not image_of.get(ref):
            raise DatasetError(
                f"{path}: row {samples[position].id!r} refers to the image of row {ref!r}, which has none"
            )
        samples[position] = _with_image(samples[position], image_of[ref])
    if not samples:
        raise DatasetError(f"{path}: holds no rows")
    return samples


def load_wilddoc_dir(
    directory: str | Path, cache_dir: str | Path | None = None, *, allow_outside_paths: bool = False
) -> list[Sample]:
    """Load WildDoc from a folder: its ``*.jsonl`` files (rows with ``index``, ``question``, ``answer``
    and ``image`` or ``image_path`` relative to the folder), or else its single ``*.tsv``."""
    directory = Path(directory)
    if not directory.is_dir():
        raise DatasetError(f"{directory}: no such directory")
    files = sorted(directory.glob("*.jsonl")) + sorted(directory.glob("*.jsonl.gz"))
    if not files:
        tsvs = sorted(directory.glob("*.tsv"))
        if len(tsvs) == 1:
            return load_wilddoc_tsv(tsvs[0], cache_dir, allow_outside_paths=allow_outside_paths)
        problem = "several .tsv files; name one" if tsvs else "no .jsonl or .tsv file"
        raise DatasetError(f"{directory}: {problem}")
    samples = []
    for file in files:
        for number, row in iter_jsonl(file):
            image = row.get("image") or row.get("image_path")
            if not image:
                raise DatasetError(f"{file}:{number}: row has no 'image' or 'image_path'")
            source = f"{file}:{number}"
            if _escaped(row) != row:
                samples.append(_checked_text(_wilddoc_sample(row, "", source), source))
                continue
            samples.append(_wilddoc_sample(row, _resolve(directory, str(image), source, allow_outside_paths), source))
    if not samples:
        raise DatasetError(f"{directory}: the .jsonl files hold no rows")
    return samples


def load_wilddoc(
    path: str | Path, cache_dir: str | Path | None = None, *, allow_outside_paths: bool = False
) -> list[Sample]:
    """WildDoc from a TSV file or a folder (see :func:`load_wilddoc_tsv`, :func:`load_wilddoc_dir`)."""
    path = Path(path)
    if path.is_dir():
        return load_wilddoc_dir(path, cache_dir, allow_outside_paths=allow_outside_paths)
    if not path.exists():
        raise DatasetError(f"{path}: no such file or directory")
    return load_wilddoc_tsv(path, cache_dir, allow_outside_paths=allow_outside_paths)


# --- entry point ---------------------------------------------------------------------------------


def _synth(path: Path, cache_dir: str | Path | None = None, allow_outside_paths: bool = False) -> list[Sample]:
    return load_synth(path, allow_outside_paths=allow_outside_paths)


def _jsonl(path: Path, cache_dir: str | Path | None = None, allow_outside_paths: bool = False) -> list[Sample]:
    return load_samples_jsonl(path, allow_outside_paths=allow_outside_paths)


#: Dataset kinds: a loader ``(path, cache_dir=None, allow_outside_paths=False) -> list[Sample]`` each; plug-in
#: datasets join through the ``docintent.datasets`` entry points (a sample may name its metric in
#: ``meta["metric"]``, one of :data:`docintent.evaluation.metrics.METRICS`).
DATASETS: Registry[list[Sample]] = Registry("dataset kind", group="docintent.datasets")
DATASETS.register("synth", _synth, description="a synthetic set (samples.jsonl beside its images)")
DATASETS.register("wilddoc", load_wilddoc, description="WildDoc from its TSV or a folder")
DATASETS.register("jsonl", _jsonl, description="any JSON-lines file of samples")


def load_dataset(spec: str, cache_dir: str | Path | None = None, *, allow_outside_paths: bool = False) -> list[Sample]:
    """Load the samples a spec names: ``synth:DIR``, ``wilddoc:PATH`` (TSV or folder), ``jsonl:PATH``, or a
    plug-in kind.

    Image paths must stay inside the dataset's folder unless ``allow_outside_paths``. Raises DatasetError
    naming the spec or path and the problem (unknown kind, missing file, bad row, a path outside the folder).
    """
    kind, sep, target = str(spec).partition(":")
    kinds = DATASETS.kinds_in_order()
    if not sep or not target:
        raise DatasetError(f"dataset spec {spec!r}: expected KIND:PATH with KIND one of {', '.join(kinds)}")
    if kind not in DATASETS:
        raise DatasetError(f"dataset spec {spec!r}: unknown kind {kind!r}; valid kinds: {', '.join(kinds)}")
    path = Path(target).expanduser()
    return DATASETS.entry(kind).factory(path, cache_dir, allow_outside_paths=allow_outside_paths)


# --- reference predictions -----------------------------------------------------------------------


def read_wilddoc_predictions(path: str | Path) -> list[dict[str, Any]]:
    """Read a WildDoc predictions file (JSONL or JSONL.gz rows with ``index``, ``answer``,
    ``prediction``, optionally ``question``) as scorable rows: ``id``, ``task``, ``subset``, ``group``,
    ``capture``, ``question``, ``answers``, ``prediction``."""
    rows = []
    for number, row in iter_jsonl(path):
        for key in ("index", "answer", "prediction"):
            if key not in row:
                raise DatasetError(f"{path}:{number}: row has no {key!r}")
        idx = _index_at(row["index"], f"{path}:{number}")
        if not any(a.strip() for a in wilddoc_answers(idx.task, row["answer"])):
            raise DatasetError(f"{path}:{number}: row {str(row['index'])!r} has no gold answer, so it cannot be scored")
        rows.append(
            {
                "id": str(row["index"]),
                "task": idx.task,
                "subset": idx.subset,
                "group": idx.group,
                "capture": idx.capture,
                "question": str(row.get("question", "")),
                "answers": wilddoc_answers(idx.task, row["answer"]),
                "prediction": row["prediction"],
            }
        )
    if not rows:
        raise DatasetError(f"{path}: holds no rows")
    return rows
