"""docintent's restoration and evidence tools as Model Context Protocol tools (``docintent mcp``, stdio).

Tools: ``ask`` (answer a question about a page, with the steps), ``restore`` (apply restoration tools),
``diagnose`` (measured degradations), ``zoom`` (read a region closer) and, when started with an index,
``search`` (rank indexed pages for a query). Images come in as a file path inside the folders the user
allowed (``--allow``, default: the working directory) or as base64 data, and go out as MCP image content
(and, for ``restore``, optionally as a file written inside an allowed folder).
"""

from __future__ import annotations

import base64
import binascii
import functools
import json
import os
import stat
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ..document import Document
from ..errors import ConfigError, DocIntentError, InputError
from ..io import IMAGE_OUTPUT_SUFFIXES, encode, mark_box, save_page
from ..page import Box, Page
from ..redaction import redact

try:
    from mcp.server.mcpserver import Image, MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
except ImportError as err:  # pragma: no cover - exercised only without the extra
    raise ImportError("docintent mcp needs the MCP SDK: pip install 'docintent[serve]'") from err

#: Longest side of images returned to the client (keeps messages small; the page itself is not changed).
RETURN_SIDE = 1600


class Files:
    """The folders whose files the MCP tools may read and write."""

    def __init__(self, allowed: Sequence[str | os.PathLike]) -> None:
        self.roots = [Path(os.path.realpath(p)) for p in allowed]

    def check(self, path: str, *, must_exist: bool = True) -> Path:
        """``path`` resolved (links followed) when it lies inside an allowed folder; ConfigError otherwise."""
        if not isinstance(path, str) or "\x00" in path:
            raise ConfigError(f"{path!r}: not a file path (a path is text without NUL characters)")
        try:
            resolved = Path(os.path.realpath(os.path.expanduser(path)))
        except (OSError, ValueError) as err:
            raise ConfigError(f"{path!r}: not a file path ({err})") from None
        if not any(resolved.is_relative_to(root) for root in self.roots):
            allowed = ", ".join(str(r) for r in self.roots) or "none"
            raise ConfigError(f"{path}: outside the folders this server may use ({allowed}); start it with --allow DIR")
        try:
            info = os.stat(resolved)
        except OSError:
            info = None
        if info is None:
            if must_exist:
                raise InputError(path, "no such file")
        elif not stat.S_ISREG(info.st_mode):  # a pipe would wait for a writer (or a reader), a device never ends
            raise InputError(path, "not a regular file (a folder, a pipe or a device is neither read nor written)")
        return resolved

    def page(self, image_path: str | None, image_base64: str | None, page: int = 1) -> Page:
        """Page ``page`` (counted from 1) of the document given by path (checked) or by base64 data (decoded with
        the loader's checks)."""
        if bool(image_path) == bool(image_base64):
            raise ConfigError("give exactly one of image_path and image_base64")
        if isinstance(page, bool) or not isinstance(page, int) or page < 1:
            raise ConfigError(f"page {page!r}: pages count from 1 (page 1 is the first page)")
        return self.document(image_path, image_base64, str(page)).page(page)

    def document(self, image_path: str | None, image_base64: str | None, pages: str | None = None) -> Document:
        """The document given by path (checked) or by base64 data; ``pages``: a spec counted from 1 (default
        every page)."""
        if bool(image_path) == bool(image_base64):
            raise ConfigError("give exactly one of image_path and image_base64")
        if image_path:
            return Document(self.check(image_path), pages=pages)
        from .uploads import UploadError, load_upload_document

        try:
            data = base64.b64decode(image_base64 or "", validate=True)
        except (binascii.Error, ValueError):
            raise ConfigError("image_base64 is not valid base64") from None
        import tempfile

        try:
            with tempfile.TemporaryDirectory(prefix="docintent-mcp-") as scratch:
                from ..settings import get_settings

                return load_upload_document(
                    data, "image", pages=pages, max_pixels=get_settings().max_pixels, scratch=Path(scratch)
                )
        except UploadError as err:
            raise ConfigError(err.message) from None


def _friendly(fn: Callable[..., Any]) -> Callable[..., Any]:
    """Errors reach the client as one redacted message: docintent's own with their text, a file the
    operating system refuses with its name, anything else as an unexpected error of its type. Every text
    the tool returns is redacted too."""

    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            reply = fn(*args, **kwargs)
        except DocIntentError as err:
            raise ToolError(redact(str(err))) from None
        except OSError as err:
            where = f"{err.filename}: " if err.filename else ""
            raise ToolError(redact(f"{where}{err.strerror or err}")) from None
        except Exception as err:  # noqa: BLE001 - a bug: its type and message, never a secret
            raise ToolError(redact(f"unexpected error: {type(err).__name__}: {err}")) from None
        return _redacted(reply)

    return call


def _redacted(reply: Any) -> Any:
    """A tool's reply with secrets removed from its texts (images pass as they are)."""
    from ..redaction import redact_data

    if isinstance(reply, str):
        return redact(reply)
    if isinstance(reply, list):
        return [_redacted(item) for item in reply]
    if isinstance(reply, dict):
        return redact_data(reply)
    return reply


def _image(page: Page) -> Image:
    from ..io import resize_longest

    shown = resize_longest(page, RETURN_SIDE) if max(page.width, page.height) > RETURN_SIDE else page
    data, mime = encode(shown, "auto")
    return Image(data=data, format=mime.split("/")[1])


def _naming(**names: Iterable[str]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Fill the ``{field}`` places of a tool's docstring, the description its clients read, with registry names
    as they stand when the server is built: the tasks, strategies, tools, degradation families and retrieval
    methods a client may pass, plug-ins included, instead of a list written once and left behind."""

    def fill(fn: Callable[..., Any]) -> Callable[..., Any]:
        fn.__doc__ = (fn.__doc__ or "").format(**{field: ", ".join(values) for field, values in names.items()})
        return fn

    return fill


def diagnosis(page: Page, region: Box | None = None) -> dict[str, Any]:
    """The measured degradations of ``page`` (or ``region``) as the diagnose tool returns them: every registered
    family, the built-in ones measured together and each plug-in family by its own measure."""
    from ..perception import Thresholds, measure
    from ..perception.signals import past_thresholds
    from ..perception.signals import severities as measured

    signals = measure(page, region)
    severities = measured(page, region)
    thresholds = Thresholds()
    found = past_thresholds(severities, thresholds)
    return {
        "diagnosis": found,
        "rotation": signals.rotation,
        "severities": severities,
        "thresholds": {f: thresholds.of(f) for f in severities},
    }


def build_server(
    allowed: Sequence[str | os.PathLike],
    index: str | os.PathLike | None = None,
    brain: str = "offline",
    brain_options: dict[str, Any] | None = None,
) -> MCPServer:
    """The MCP server object (run it with ``.run("stdio")``). The tools' descriptions name the tasks, strategies,
    tools, degradation families and retrieval methods registered when it is built, plug-ins included."""
    files = Files(allowed)
    from ..brains import get_brain
    from ..perception.degradations import names as family_names
    from ..strategies import STRATEGIES
    from ..tools import restoration_tools
    from ..vocabulary import TASKS

    # Built once at start: an unknown kind or a bad option stops the server before a client connects.
    get_brain(brain, **(brain_options or {})).close()
    from .. import __version__

    server = MCPServer(
        "docintent",
        version=__version__,
        instructions=(
            "Answer questions about photographed or scanned document pages and restore damaged pages. Pass images "
            "as image_path (inside the folders the user allowed) or image_base64."
        ),
    )

    @server.tool(structured_output=False)
    @_friendly
    @_naming(tasks=TASKS, strategies=STRATEGIES)
    def ask(
        question: str,
        image_path: str | None = None,
        image_base64: str | None = None,
        task: str = "doc",
        strategy: str = "docintent",
        pages: str | None = None,
        max_rounds: int = 10,
        page: int | None = None,
    ) -> list[Any]:
        """Answer a question about a document page or a whole PDF, restoring only what blocks the answer.

        task (default "doc"): one of {tasks}. strategy (default "docintent"): one of {strategies}.
        pages: the PDF pages to consider, counted from 1 ("2", "1-3"; default every page: the pages whose text
        matches the question best are read first). Returns the answer, its confidence, the page it came from
        (counted from 1), its box on that page (x0, y0, x1, y1 as fractions), the evidence lines with their OCR
        confidence, the restorations it was read on, every step, and the page image with the box drawn.
        """
        from ..api import ask as docintent_ask
        from ..brains import get_brain
        from ..strategies import applicable_options

        if page is not None:  # the retired argument, counted from 0: refused rather than quietly ignored
            raise ConfigError(
                "the page argument counted pages from 0 and is gone; give pages, counted from 1 "
                "(pages='1' is the first page; without it every page of a PDF is considered)"
            )
        document = files.document(image_path, image_base64, pages)
        the_brain = get_brain(brain, **(brain_options or {}))
        try:
            result = docintent_ask(
                document,
                question,
                task=task,
                strategy=strategy,
                brain=the_brain,
                **applicable_options(strategy, max_rounds=max_rounds),
            )
        finally:
            the_brain.close()
        if result.error and not result.answer:  # nothing to show but the reason: an error reply, as the CLI's exit 1
            raise ToolError(redact(result.error))
        data = result.to_dict()
        prov = result.provenance
        # where the answer came from first, then the rest of the Result (its trace last)
        head = {
            "answer": result.answer,
            "confidence": result.confidence,
            "page": prov.page,
            "box": data["box"],
            "evidence": data["provenance"]["lines"],
            "read_on": list(prov.read_on),
        }
        out: list[Any] = [json.dumps({**head, **{k: v for k, v in data.items() if k not in head}}, indent=1)]
        if prov.box is not None and prov.given_page in result.pages:
            out.append(_image(mark_box(result.pages[prov.given_page], prov.box)))
        elif prov.read_box is not None and prov.read_page in result.pages:
            out.append(_image(mark_box(result.pages[prov.read_page], prov.read_box)))
        elif result.final_page is not None:
            out.append(_image(result.final_page))
        return out

    @server.tool(structured_output=False)
    @_friendly
    @_naming(tools=restoration_tools())
    def restore(
        tools: list[str],
        image_path: str | None = None,
        image_base64: str | None = None,
        page: int = 1,
        output_path: str | None = None,
    ) -> list[Any]:
        """Apply restoration tools in order (e.g. ["deshadowing", "deblurring"]; of {tools}) to page `page`
        (counted from 1) and return the restored page as an image; with output_path (inside an allowed folder)
        also save it there."""
        from ..tools import get_tool

        if not tools:
            raise ConfigError("name at least one restoration tool")
        chosen = [get_tool(name) for name in tools]
        for tool in chosen:
            if tool.degradation == "inspection":
                raise ConfigError(f"{tool.name} changes no page; use the zoom tool of this server instead")
        target = None
        if output_path:  # checked before any work is done
            if Path(output_path).suffix.lower() not in IMAGE_OUTPUT_SUFFIXES:
                raise ConfigError(
                    f"{output_path}: cannot write a {Path(output_path).suffix or 'suffix-less'} "
                    f"image; use one of {', '.join(IMAGE_OUTPUT_SUFFIXES)}"
                )
            target = files.check(output_path, must_exist=False)
        current = files.page(image_path, image_base64, page)
        for tool in chosen:
            current = tool.run(current)
        summary = {"tools": [t.name for t in chosen], "ops": list(current.ops), "size": [current.width, current.height]}
        if target is not None:
            target.parent.mkdir(parents=True, exist_ok=True)
            save_page(current, target)
            summary["saved"] = str(target)
        return [json.dumps(summary), _image(current)]

    @server.tool()
    @_friendly
    @_naming(families=family_names())
    def diagnose(
        image_path: str | None = None, image_base64: str | None = None, page: int = 1, region: list[float] | None = None
    ) -> dict[str, Any]:
        """Measure how damaged page `page` (counted from 1) is by each degradation family ({families}; severities
        in [0, 1]); list the degradations above their thresholds and the rotation that makes the page upright.
        region: [x0, y0, x1, y1] as fractions or 0-1000 integers (default: the whole page)."""
        the_page = files.page(image_path, image_base64, page)
        return diagnosis(the_page, Box.parse(region) if region else None)

    @server.tool()
    @_friendly
    def extract(
        image_path: str | None = None, image_base64: str | None = None, pages: str | None = None, restore: bool = True
    ) -> dict[str, Any]:
        """Read pages as structure: blocks in reading order (headings, paragraphs, list items, key-value pairs)
        and tables as cells, each with its box ([x0, y0, x1, y1] fractions of the page) and confidence. pages: a
        PDF's pages counted from 1 such as "2-4" (default all); restore: restore each page question-free first
        (a PDF page with a text layer is read from it as it is). The result follows docintent's extract schema."""
        from ..extraction import envelope, extract_document

        document = files.document(image_path, image_base64, pages)
        return envelope([extract_document(document, restore=restore, name=image_path or "upload")])

    @server.tool(structured_output=False)
    @_friendly
    def zoom(
        bbox: list[float],
        image_path: str | None = None,
        image_base64: str | None = None,
        page: int = 1,
        kind: str = "text",
        label: str = "region",
    ) -> list[Any]:
        """Read a region of page `page` (counted from 1) closer: crop [x0, y0, x1, y1] (fractions or 0-1000
        integers), enlarge it
        and recognise its text (kind "text") or table (kind "table"). Returns the text and the crop image."""
        from ..tools import get_tool
        from ..tools.zoom import Zoom

        the_page = files.page(image_path, image_base64, page)
        tool = get_tool("zoom")
        if not isinstance(tool, Zoom):  # a plugin replaced the built-in zoom
            raise ConfigError("the registered zoom tool is not docintent's own; it cannot be served here")
        evidence = tool.inspect(the_page, **tool.check_args({"bbox": bbox, "type": kind, "label": label}))
        text = evidence.markdown or evidence.text
        return [
            json.dumps({"text": text, "box": list(evidence.box.as_tuple(4)), "note": evidence.note}),
            _image(evidence.crop),
        ]

    if index is not None:
        from ..retrieval import PageIndex, get_retriever
        from ..retrieval.retrievers import RETRIEVERS

        the_index = PageIndex.open(Path(index))

        @server.tool()
        @_friendly
        @_naming(methods=RETRIEVERS.kinds_in_order())
        def search(query: str, k: int = 5, method: str = "bm25") -> dict[str, Any]:
            """Rank the pages of the index this server was started with for a query (method, default "bm25":
            one of {methods}); each hit names its document, page (1-based), score and a text snippet."""
            if not 1 <= k <= 100:
                raise ConfigError(f"k must be between 1 and 100, got {k}")
            rows = []
            for rank, hit in enumerate(get_retriever(the_index, method).search(query, k), start=1):
                record = the_index.record(hit.handle)
                rows.append(
                    {
                        "rank": rank,
                        "handle": hit.handle,
                        "score": round(hit.score, 4),
                        "document": record.doc_path,
                        "page": record.page_no + 1,
                        "snippet": " ".join(record.text.split())[:200],
                    }
                )
            return {"query": query, "method": method, "hits": rows}

    return server


__all__ = ["DocIntentError", "Files", "build_server", "diagnosis"]
