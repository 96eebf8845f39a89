"""Whole pages as structure: ``docintent extract`` and :func:`extract`.

Every page of every document becomes the blocks of :func:`docintent.layout.structure.page_structure` in
reading order (headings, paragraphs, list items, key-value pairs), its tables as cells and its chart as a data
table (:func:`docintent.reader.chart_table.read_chart`: series, categories, each value with the box of its mark
and a confidence), each item with its page, box and confidence. A PDF page with a text layer is read from it (exact text, no restoration needed); any
other page is restored question-free first (:func:`docintent.strategies.auto.restore_auto`: a step is kept
only when the page reads better) and read by OCR. Boxes are given on the page as it was given: an item read on
a restored page is mapped back through every kept restoration; where a restoration cannot map a box back
(dewarping), ``box`` is null and ``read_box`` holds it on the restored page.

The output follows a versioned JSON Schema (``docintent/data/extract.schema.json``, :data:`SCHEMA_VERSION`)::

    {"schema": "docintent.extract", "version": "1.1", "docintent": "0.1.0",
     "documents": [{"file": "report.pdf", "pages": [{"page": 1, "width": 1240, "height": 1754, "source":
       "text-layer", "restored": [], "blocks": [{"order": 0, "kind": "heading", "text": "...", "box": [...],
       "confidence": 1.0}, ...], "tables": [{"index": 0, "box": [...], "cells": [...]}],
       "charts": [{"index": 0, "kind": "bar", "series": [...], "categories": [...], "values": [...]}]}]}]}

A run over several pages is resumable: each finished page is a row of a journal beside the output
(``.NAME.pages.jsonl``), so a stopped or killed run repeats nothing when started again; the output is written
whole at the end (and the journal removed).

>>> data = extract("scan.png")                                  # doctest: +SKIP
>>> data["documents"][0]["pages"][0]["blocks"][0]["kind"]       # doctest: +SKIP
'heading'
"""

from __future__ import annotations

import csv
import io
import json
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass
from pathlib import Path
from typing import Any

from ._version import __version__
from .batch import find_documents
from .document import Document, PageSelection
from .errors import InputError
from .evaluation.executors import Progress
from .evaluation.runner import ResultsWriter, content_digest, latest_rows
from .io.lock import FolderLock
from .layout.lines import Layout
from .layout.structure import SCHEMA_VERSION, Structure, chart_grid, page_markdown, page_structure, table_grid
from .locator import text_layer
from .ocr import get_engine
from .ocr.base import OcrResult
from .page import Box, Page
from .reader.chart_table import read_chart
from .strategies.auto import AutoStep, restore_auto
from .tools import get_tool

#: The ``schema`` value of an extract file.
SCHEMA_NAME = "docintent.extract"

#: Output formats of :func:`extract_to`.
FORMATS = ("json", "md")


def _box(box: Box | None) -> list[float] | None:
    return None if box is None else [round(v, 5) for v in box.as_tuple()]


def _mapper(kept: Sequence[tuple[str, Page, Page]]) -> Callable[[Box], Box | None]:
    """A box on the restored page mapped back through the kept restorations, last first (None: it cannot be)."""

    def back(box: Box) -> Box | None:
        out: Box | None = box
        for tool, before, after in reversed(kept):
            if out is None:
                return None
            out = get_tool(tool).unmap_region(out, before, after)
        return out

    return back


#: A chart is exported when at least this share of its values was read (fewer: not a chart, or not one read).
CHART_READ_SHARE = 0.5


def _add_charts(data: dict[str, Any], ocr: OcrResult, page: Page) -> None:
    """The page's chart as a data table (:func:`docintent.reader.chart_table.read_chart`) in ``data["charts"]``,
    and a ``chart`` block in reading order in place of the blocks of its own text (tick and category labels,
    its title, its legend)."""
    data["charts"] = []
    chart = read_chart(Layout.from_ocr(ocr), page)
    if chart is None or len(chart.categories) < 2 or chart.read_share < CHART_READ_SHARE:
        return
    item = {"index": 0, **chart.to_dict()}
    data["charts"].append(item)
    r = chart.region

    def inside(box: list[float] | None) -> bool:
        if box is None:
            return False
        cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
        return r.x0 <= cx <= r.x1 and r.y0 <= cy <= r.y1

    blocks: list[dict[str, Any]] = []
    at: int | None = None
    for block in data["blocks"]:
        if block["kind"] != "table" and inside(block["box"]):
            at = len(blocks) if at is None else at
            continue
        blocks.append(block)
    chart_block = {
        "order": 0,
        "kind": "chart",
        "text": page_markdown({"blocks": [{"kind": "chart", "chart": 0}], "charts": [item]}).strip(),
        "box": item["box"],
        "confidence": item["confidence"],
        "chart": 0,
    }
    blocks.insert(len(blocks) if at is None else at, chart_block)
    for order, block in enumerate(blocks):
        block["order"] = order
    data["blocks"] = blocks


def _serialise(
    structure: Structure,
    number: int,
    back: Callable[[Box], Box | None] | None,
    ocr: OcrResult | None = None,
    page: Page | None = None,
) -> dict[str, Any]:
    """The page in the schema, boxes mapped onto the given page by ``back`` (None: read on the given page);
    with ``ocr`` and the ``page`` it was read on, its chart too."""
    data = structure.to_dict(number)
    if ocr is not None and page is not None:
        _add_charts(data, ocr, page)
    if back is None:
        return data

    def remap(item: dict[str, Any]) -> None:
        read = Box(*item["box"])
        item["read_box"] = item["box"]
        item["box"] = _box(back(read))

    for block in data["blocks"]:
        remap(block)
    for table in data["tables"]:
        remap(table)
        for cell in table["cells"]:
            remap(cell)
    for chart in data.get("charts", []):
        remap(chart)
        for value in chart["values"]:
            remap(value)
    return data


def extract_page(
    page: Page, number: int = 1, *, layer: OcrResult | None = None, restore: bool = True, engine: str | None = None
) -> dict[str, Any]:
    """One page in the extract schema. ``layer``: the page's PDF text layer (read as it is, no restoration);
    ``restore``: restore the page question-free before reading it; ``engine``: the OCR engine."""
    t0 = time.perf_counter()
    if layer is not None:
        data = _serialise(
            page_structure(layer, page.width, page.height, source="text-layer"), number, None, layer, page
        )
        data["restored"] = []
    else:
        kept: list[tuple[str, Page, Page]] = []
        read_on = page
        if restore:

            def observe(before: Page, after: Page, step: AutoStep) -> None:
                if step.verdict == "keep":
                    kept.append((step.tool, before, after))

            read_on, _ = restore_auto(page, engine=engine, observe=observe)
        ocr = get_engine(engine).read(read_on)
        structure = page_structure(ocr, read_on.width, read_on.height, page=read_on)
        data = _serialise(structure, number, _mapper(kept) if kept else None, ocr, read_on)
        data["restored"] = [tool for tool, _, _ in kept]
        data["width"], data["height"] = page.width, page.height
    data["seconds"] = round(time.perf_counter() - t0, 3)
    return data


def _layers(document: Document) -> dict[int, OcrResult | None]:
    if not document.is_pdf or document.source is None:
        return {}
    return dict(zip(document.numbers, text_layer(document.source, None, document.numbers, password=document.password)))


@dataclass(frozen=True)
class ExtractSummary:
    """What :func:`extract_to` did: pages in the output, pages read now, pages done before, pages that failed."""

    path: Path
    pages: int
    new_pages: int
    _: KW_ONLY
    skipped: int
    failed: int
    seconds: float


def _row_key(row: dict[str, Any]) -> tuple[str, ...]:
    return str(row["file"]), str(row["digest"]), str(row["page"])


def extract_document(
    document: Document, *, restore: bool = True, engine: str | None = None, name: str | None = None
) -> dict[str, Any]:
    """Every chosen page of ``document`` in the extract schema (one document entry; ``name``: its ``file``)."""
    layers = _layers(document)
    return {
        "file": name or document.name or "",
        "pages": [
            extract_page(document.page(n), n, layer=layers.get(n), restore=restore, engine=engine)
            for n in document.numbers
        ],
    }


def extract(
    source: str | os.PathLike | Document,
    *,
    pages: PageSelection = None,
    restore: bool = True,
    engine: str | None = None,
) -> dict[str, Any]:
    """Every page of the documents ``source`` names (a file, a folder searched recursively, a glob, or a
    :class:`~docintent.document.Document`) in the extract schema, in memory (see :func:`extract_to` for a
    resumable run written to a file)."""
    if isinstance(source, Document):
        return envelope([extract_document(source, restore=restore, engine=engine)])
    return envelope(
        [
            extract_document(Document(file, pages=pages), restore=restore, engine=engine, name=file)
            for file in _documents(source)
        ]
    )


def envelope(documents: list[dict[str, Any]]) -> dict[str, Any]:
    return {"schema": SCHEMA_NAME, "version": SCHEMA_VERSION, "docintent": __version__, "documents": documents}


def _documents(source: str | os.PathLike) -> list[str]:
    path = Path(source)
    if path.is_file():
        return [str(source)]
    documents = find_documents(source)
    if not documents:
        raise InputError(source, "no document to extract (PDFs and images are read)")
    return documents


def extract_to(
    source: str | os.PathLike,
    out: str | os.PathLike,
    *,
    fmt: str = "json",
    pages: PageSelection = None,
    restore: bool = True,
    engine: str | None = None,
    tables_dir: str | os.PathLike | None = None,
    progress: bool | None = None,
) -> ExtractSummary:
    """Extract every page ``source`` names into ``out`` (``fmt``: "json" or "md"), resumably: each page done is a
    row of the journal ``.OUT.pages.jsonl`` until the output is written whole. ``tables_dir``: also write every
    table as a CSV there (``<document>-p<N>-t<K>.csv``)."""
    if fmt not in FORMATS:
        raise InputError(out, f"unknown format {fmt!r}; valid formats: {', '.join(FORMATS)}")
    target = Path(out)
    if target.is_dir():
        raise InputError(out, "is a folder; give a file name for the output")
    target.parent.mkdir(parents=True, exist_ok=True)
    documents = _documents(source)
    journal = target.with_name(f".{target.name}.pages.jsonl")
    t0 = time.perf_counter()
    with FolderLock(target.parent, purpose="extract output", name=f".{target.name}.lock"):
        plan: list[tuple[str, str, int | None]] = []
        for file in documents:
            digest = content_digest(file)
            try:
                plan += [(file, digest, n) for n in Document(file, pages=pages).numbers]
            except Exception:  # noqa: BLE001 - the document's row says why it could not be read
                plan.append((file, digest, None))
        writer = ResultsWriter(journal, key=_row_key)
        done = writer.latest()
        todo = [p for p in plan if (p[0], p[1], str(p[2])) not in done]
        bar = Progress(len(plan), desc=target.name, unit="page", initial=len(plan) - len(todo), show=progress)
        opened: dict[str, tuple[Document, dict[int, OcrResult | None]]] = {}
        try:
            for file, digest, number in todo:
                row: dict[str, Any] = {"file": file, "digest": digest, "page": number, "error": None}
                try:
                    if number is None:
                        Document(file, pages=pages)
                        raise InputError(file, "could not be opened")
                    if file not in opened:
                        opened.clear()  # one document's pages at a time
                        document = Document(file, pages=pages)
                        opened[file] = (document, _layers(document))
                    document, layers = opened[file]
                    row["data"] = extract_page(
                        document.page(number), number, layer=layers.get(number), restore=restore, engine=engine
                    )
                except Exception as err:  # one page's failure is a row, named in the output
                    row["error"] = f"{type(err).__name__}: {err}"
                writer.write(row)
                bar.update(failed=bool(row["error"]), note=row["error"])
        finally:
            bar.close()
            writer.close()
        rows = {_row_key(r): r for r in latest_rows(writer.rows, _row_key)}
        ordered = [rows[(f, d, str(n))] for f, d, n in plan if (f, d, str(n)) in rows]
        new = len(todo)
        data = _assemble(ordered)
        text = json.dumps(data, ensure_ascii=False, indent=1) + "\n" if fmt == "json" else to_markdown(data)
        _atomic(target, text)
        if tables_dir is not None:
            write_tables(data, tables_dir)
        journal.unlink(missing_ok=True)
    failed = sum(1 for r in ordered if r.get("error"))
    return ExtractSummary(
        target, len(ordered), new, skipped=len(plan) - new, failed=failed, seconds=time.perf_counter() - t0
    )


def _assemble(rows: list[dict[str, Any]]) -> dict[str, Any]:
    documents: dict[str, dict[str, Any]] = {}
    for row in rows:
        doc = documents.setdefault(row["file"], {"file": row["file"], "pages": [], "errors": []})
        if row.get("error"):
            doc["errors"].append({"page": row["page"], "error": row["error"]})
        else:
            doc["pages"].append(row["data"])
    return envelope(list(documents.values()))


def _atomic(path: Path, text: str) -> None:
    partial = path.with_name(f".{path.name}.{os.getpid()}.partial")
    try:
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def to_markdown(data: dict[str, Any]) -> str:
    """An extract (the dict :func:`extract` returns) as Markdown: one section per page, blocks in reading order,
    tables as Markdown tables; a page that could not be read is named."""
    out: list[str] = []
    for doc in data["documents"]:
        for page in doc["pages"]:
            out.append(f"<!-- {doc['file']}, page {page['page']} -->\n\n" + page_markdown(page))
        for error in doc.get("errors", []):
            out.append(f"<!-- {doc['file']}, page {error['page']}: not read ({error['error']}) -->\n")
    return "\n".join(out)


def write_tables(data: dict[str, Any], folder: str | os.PathLike) -> list[Path]:
    """Every table of an extract as a CSV file in ``folder`` (``<document stem>-p<page>-t<index>.csv``), and every
    chart's data table (``<document stem>-p<page>-c<index>.csv``: series as columns, categories as rows)."""
    out = Path(folder)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for doc in data["documents"]:
        stem = Path(doc["file"]).stem
        for page in doc["pages"]:
            for table in page["tables"]:
                buf = io.StringIO()
                csv.writer(buf, lineterminator="\n").writerows(table_grid(table))
                path = out / f"{stem}-p{page['page']}-t{table['index']}.csv"
                _atomic(path, buf.getvalue())
                written.append(path)
            for chart in page.get("charts", []):
                buf = io.StringIO()
                csv.writer(buf, lineterminator="\n").writerows(chart_grid(chart))
                path = out / f"{stem}-p{page['page']}-c{chart['index']}.csv"
                _atomic(path, buf.getvalue())
                written.append(path)
    return written


__all__ = [
    "FORMATS",
    "SCHEMA_NAME",
    "SCHEMA_VERSION",
    "ExtractSummary",
    "extract",
    "extract_document",
    "extract_page",
    "envelope",
    "extract_to",
    "to_markdown",
    "write_tables",
]
