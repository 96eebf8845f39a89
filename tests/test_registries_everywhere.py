"""One plug-in in every registry, driven through every interface: each command's ``--help`` lists it where the
command takes such a name, and each command, the service and the MCP tools accept it and show what it did.

The plug-ins are small but real, and they work together on one synthetic page, a form with a red stamp over its
text: a degradation family (``stamp``, measured as the share of red pixels) with its tool (``destamp``), a strategy
mode and named strategy (``clean-first``: run one tool, keep it if the brain's review agrees, answer), a brain
(``redmeter``: answers how much of the page is red, and keeps a restoration that lowered it), a task (``stamped``)
scored by a metric (``percent_points``), a dataset kind (``stamps``: every PNG of a folder), an OCR engine
(``inkocr``: one line saying how much of the page is inked), a reader (``longest``: the longest line), a retriever
(``phrase``: pages by how often they hold the query) and a search planner (``first-search``: one search, then its
ranking). Everything runs in this process (``docintent.cli.main``), so the ``Registry.scoped`` registrations apply.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Literal

import numpy as np
import pytest
from PIL import Image

from conftest import render_text_page
from docintent.brains import BRAINS, Answer, Diagnosis, Keep, Restorer, Rollback
from docintent.cli import main
from docintent.evaluation.datasets import DATASETS
from docintent.evaluation.metrics import METRICS, Metric
from docintent.ocr import ENGINES, forget_engines
from docintent.ocr.base import OcrEngine
from docintent.page import Box, Page
from docintent.perception.degradations import DEGRADATIONS, Degradation
from docintent.reader.readers import READERS, Choice
from docintent.retrieval.agent import Action, Planner
from docintent.retrieval.planners import PLANNERS
from docintent.retrieval.retrievers import RETRIEVERS, Hit, Retriever
from docintent.sample import Sample
from docintent.strategies import MODES, NAMED, Mode, StrategyConfig
from docintent.tools import TOOLS, Tool
from docintent.vocabulary import TASKS, Task

QUESTION = "How much of the form is red?"


# -- the plug-ins ------------------------------------------------------------------------------------------------


def red_share(pixels: np.ndarray) -> float:
    """Share of strongly red pixels (a rubber stamp's ink)."""
    rgb = pixels.astype(np.int16)
    red = (rgb[..., 0] > 150) & (rgb[..., 0] - rgb[..., 1] > 80) & (rgb[..., 0] - rgb[..., 2] > 80)
    return float(red.mean())


def stamp_severity(page: Page, region: Box | None = None) -> float:
    target = page if region is None else page.crop(region)
    return min(1.0, red_share(target.pixels) * 10.0)


STAMP = Degradation(
    "stamp",
    "a red rubber stamp printed over the text",
    ("stamp", "red ink"),
    measure=stamp_severity,
    threshold=0.2,
    order=45,
    plain="a red stamp covers the text",
)


class Destamp(Tool):
    name = "destamp"
    degradation = "stamp"
    description = "Remove a red rubber stamp printed over the text (turns strongly red pixels to paper white)."

    def apply(self, page: Page) -> Page:
        pixels = page.pixels.copy()
        rgb = pixels.astype(np.int16)
        pixels[(rgb[..., 0] > 150) & (rgb[..., 0] - rgb[..., 1] > 80) & (rgb[..., 0] - rgb[..., 2] > 80)] = 255
        return page.derive(pixels, self.name)


class RedMeter(Restorer):
    """Answers how much of the page is red ink; keeps a restoration only when it lowered that share."""

    name = "redmeter"

    def __init__(self, unit: str = "% red") -> None:
        self.unit = unit

    def decide(self, state):
        return self.answer(state)

    def review(self, state, change):
        lower = red_share(change.after.pixels) < red_share(change.before.pixels)
        return Keep("less red ink") if lower else Rollback("as much red ink as before")

    def diagnose(self, state):
        return Diagnosis(("stamp",) if red_share(state.page.pixels) > 0.005 else ())

    def answer(self, state):
        return Answer(f"{round(100 * red_share(state.page.pixels))}{self.unit}", 0.9, "counted the red pixels")


class CleanFirstConfig(StrategyConfig):
    mode: Literal["clean_first"] = "clean_first"
    tool: str = "destamp"


def run_clean_first(run, config):
    """Run one tool, keep it when the brain's review agrees, then answer."""
    applied = run.apply(config.tool, {}, "clean first")
    if applied.change is not None:
        verdict = run.brain.review(run.state, applied.change)
        (run.keep if isinstance(verdict, Keep) else run.rollback)(applied.change)
    return run.answer()


STAMPED = Task(
    "stamped",
    "stamped form",
    "Answer format (stamped forms):\n- Give the share of red ink as a whole "
    "percent followed by '% red', e.g. \"3% red\".",
    metric="percent_points",
)


def _percent(text: str) -> float | None:
    found = re.search(r"\d+", text)
    return float(found.group()) if found else None


def percent_points(prediction: str, answers: Any, subset: str) -> float:
    """1 minus the distance in percentage points, over 10 (an answer 10 points off scores 0)."""
    got = _percent(prediction)
    golds = [_percent(a) for a in ([answers] if isinstance(answers, str) else answers)]
    scores = [max(0.0, 1.0 - abs(got - g) / 10.0) for g in golds if g is not None and got is not None]
    return max(scores, default=0.0)


POINTS = Metric("percent_points", percent_points, lambda score: score >= 0.9)


def load_stamps(path: Path, cache_dir: Any = None, allow_outside_paths: bool = False) -> list[Sample]:
    """Every PNG of a folder, asked how much of it is red; the gold answer is 0 (a form as it was printed)."""
    return [
        Sample(image.stem, str(image), QUESTION, answers=("0% red",), task="stamped", subset="forms", group=image.stem)
        for image in sorted(Path(path).glob("*.png"))
    ]


class InkOcr(OcrEngine):
    """Reads no letters: one line saying how much of the page is inked, over the inked area."""

    name = "inkocr"

    def __init__(self, label: str = "ink") -> None:
        self.label = label

    def cache_key(self) -> str:
        return f"{self.name}-{self.label}"

    def _read_array(self, rgb):
        dark = np.asarray(rgb).min(axis=2) < 128
        ys, xs = np.nonzero(dark)
        if not len(xs):
            return []
        x0, y0, x1, y1 = float(xs.min()), float(ys.min()), float(xs.max() + 1), float(ys.max() + 1)
        return [
            (f"{self.label} {round(100 * dark.mean())} percent", [[x0, y0], [x1, y0], [x1, y1], [x0, y1]], 0.99, [])
        ]


class LongestLine:
    """A reader that answers with the longest line of the page."""

    name = "longest"

    def read(self, question, layout, page=None) -> Choice:
        if not layout.items:
            return Choice("", 0.0, Box.FULL, source="nothing readable")
        item = max(layout.items, key=lambda i: len(i.text))
        return Choice(item.text, 0.95, item.box, source="longest line", box=item.box)


class PhraseRetriever(Retriever):
    """Pages by how often their text holds the query (case folded), most first; pages without it are left out."""

    name = "phrase"

    def search(self, query: str, k: int = 10) -> list[Hit]:
        needle = query.lower().strip()
        counts = [(handle, self.index.text(handle).lower().count(needle)) for handle in self.index.handles]
        found = sorted(((h, n) for h, n in counts if n), key=lambda hn: (-hn[1], hn[0]))
        return [Hit(h, float(n)) for h, n in found[:k]]


class FirstSearch(Planner):
    """One search with ``method``, then its ranking (filled up from the index to the ten handles asked for)."""

    name = "first-search"

    def __init__(self, method: str = "bm25") -> None:
        self.method = method

    def next_action(self, state, tools):
        searched = state.searched()
        if not searched:
            return Action("search", {"query": state.query, "method": self.method, "top_k": 10})
        found = searched[-1][1]
        ranking = list(dict.fromkeys([*found, *tools.index.handles]))[:10]
        return Action("submit", {"ranking": [{"handle": h, "rationale": f"{self.method} search"} for h in ranking]})

    def finalize(self, state, tools):
        from docintent.brains import Usage

        return [], Usage()

    def judge(self, query, pages, tools):
        from docintent.brains import Usage

        return [0.0] * len(pages), Usage()


@contextlib.contextmanager
def every_plugin() -> Iterator[None]:
    """One scoped plug-in in each registry (the degradation first: its tool names it)."""
    destamp = Destamp()
    with contextlib.ExitStack() as stack:
        for registry, kind, factory, options in [
            (DEGRADATIONS, "stamp", lambda: STAMP, None),
            (TOOLS, "destamp", lambda: destamp, None),
            (BRAINS, "redmeter", RedMeter, None),
            (MODES, "clean_first", Mode(CleanFirstConfig, run_clean_first), None),
            (NAMED, "clean-first", lambda: CleanFirstConfig(name="clean-first"), None),
            (TASKS, "stamped", STAMPED, None),
            (METRICS, "percent_points", POINTS, None),
            (DATASETS, "stamps", load_stamps, None),
            (ENGINES, "inkocr", InkOcr, None),
            (READERS, "longest", LongestLine, None),
            (RETRIEVERS, "phrase", PhraseRetriever, None),  # its options read from its signature, index skipped
            (PLANNERS, "first-search", FirstSearch, None),
        ]:
            stack.enter_context(registry.scoped(kind, factory, options))
        try:
            yield
        finally:
            forget_engines()  # no shared instance of the plug-in engine outlives its registration


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    """A stamped form (PNG), a folder of two forms (the dataset), and a small manual (PDF with a text layer)."""
    from retrieval_helpers import FILLER, make_pdf

    root = tmp_path_factory.mktemp("everywhere")
    clean = render_text_page(["Application form", "Name: Ada Lovelace", "Reference: AF-1843"], size=26, width=640)
    stamped = clean.copy()
    stamped[30:120, 360:600] = (220, 30, 40)  # a red stamp over the right of the lines
    form = root / "form.png"
    Image.fromarray(stamped).save(form)
    forms = root / "forms"
    forms.mkdir()
    Image.fromarray(stamped).save(forms / "f1.png")
    Image.fromarray(clean).save(forms / "f2.png")
    docs = root / "docs"
    docs.mkdir()
    make_pdf(docs / "manual.pdf", [*FILLER[:10], "Warranty\nThe warranty lasts 24 months. Warranty claims by mail."])
    Image.fromarray(stamped).save(docs / "form.png")
    return {"root": root, "form": form, "forms": forms, "docs": docs}


@pytest.fixture
def plugins():
    with every_plugin():
        yield


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


def helped(capsys, command: str) -> str:
    """``docintent COMMAND --help``, with its line breaks and indents folded to single spaces."""
    code, out, _ = run(capsys, command, "--help")
    assert code == 0
    # argparse may break a line after a name's hyphen ("pipeline-" / "fixed"): join it back
    return re.sub(r"(\w)- (\w)", r"\1-\2", " ".join(out.split()))


# -- --help: every command lists the plug-ins of the registries its options name ---------------------------------

#: What each command's help must hold, as templates over the live registries (``{BRAINS}``: every brain kind in
#: registration order), so a new built-in joins the expected text as it joins the help.
HELP = {
    "ask": [
        "--task TASK answer format family: {TASKS}",
        "strategy: {NAMED} (default docintent)",
        "brain: {BRAINS}",
        "OCR engines: {ENGINES}",
        "readers: {READERS}",
    ],
    "bench": ["KIND one of {DATASETS}", "{NAMED} (default: none)", "brain: {BRAINS}"],
    "search": ["retrieval method: {RETRIEVERS}, agent", "{PLANNERS}"],
    "ocr": ["OCR engine: {ENGINES}"],
    "extract": ["{ENGINES}"],
    "index": ["{ENGINES}"],
    "evidence": ["{ENGINES}", "{BRAINS}"],
    "restore": ["deshadowing, destamp, dewarping"],
    "doctor": ["{BRAINS}"],
    "serve": ["{BRAINS}"],
    "mcp": ["{BRAINS}"],
}


def _registered() -> dict[str, str]:
    from docintent.brains import BRAINS
    from docintent.evaluation.datasets import DATASETS
    from docintent.ocr import ENGINES
    from docintent.reader.readers import READERS
    from docintent.retrieval.planners import PLANNERS
    from docintent.retrieval.retrievers import RETRIEVERS
    from docintent.strategies.core import NAMED
    from docintent.vocabulary import TASKS

    registries = {
        "BRAINS": BRAINS,
        "DATASETS": DATASETS,
        "ENGINES": ENGINES,
        "READERS": READERS,
        "PLANNERS": PLANNERS,
        "RETRIEVERS": RETRIEVERS,
        "NAMED": NAMED,
    }
    names = {key: ", ".join(registry.kinds_in_order()) for key, registry in registries.items()}
    return names | {"TASKS": ", ".join(TASKS)}


@pytest.mark.parametrize("command", sorted(HELP))
def test_every_command_lists_the_plugins_in_its_help(command, plugins, capsys):
    shown = helped(capsys, command)
    registered = _registered()
    assert all(
        plugin in " ".join(registered.values())
        for plugin in ("redmeter", "clean-first", "stamped", "stamps", "inkocr", "longest", "phrase", "first-search")
    )
    for template in HELP[command]:
        expected = template.format(**registered)
        assert expected in shown, (expected, shown)


def test_the_lists_are_read_when_the_help_is_printed_not_when_docintent_starts(capsys):
    assert "redmeter" not in helped(capsys, "ask")  # nothing left behind by another test's scope
    with every_plugin():
        assert "redmeter" in helped(capsys, "ask")
    assert "redmeter" not in helped(capsys, "ask")


# -- every command accepts them and shows what they did ------------------------------------------------------


def test_ask_with_the_plugin_brain_strategy_and_task(files, plugins, capsys):
    code, out, err = run(
        capsys,
        "ask",
        str(files["form"]),
        QUESTION,
        "--brain",
        "redmeter",
        "--brain-opt",
        "unit= points red",
        "--task",
        "stamped",
        "--strategy",
        "clean-first",
        "--no-progress",
    )
    assert code == 0, err
    assert "answer: 0 points red" in out and "strategy: clean-first" in out and "kept: destamp" in out
    code, out, err = run(
        capsys,
        "ask",
        str(files["form"]),
        QUESTION,
        "--brain",
        "redmeter",
        "--task",
        "stamped",
        "--strategy",
        "none",
        "--json",
    )
    assert code == 0, err
    data = json.loads(out)
    red = round(100 * red_share(np.asarray(Image.open(files["form"]).convert("RGB"))))
    assert red > 5 and data["answer"] == f"{red}% red" and data["strategy"] == "none"


def test_ask_with_the_offline_brain_reading_by_the_plugin_engine_and_reader(files, plugins, capsys):
    code, out, err = run(
        capsys,
        "ask",
        str(files["form"]),
        "What is written?",
        "--strategy",
        "none",
        "--brain-opt",
        "engine=inkocr",
        "--brain-opt",
        "reader=longest",
        "--json",
    )
    assert code == 0, err
    assert re.fullmatch(r"ink \d+ percent", json.loads(out)["answer"]), out


def test_a_mistyped_plugin_name_gets_the_nearest_one_in_one_line(files, plugins, capsys):
    for argv, hint in [
        (["ask", str(files["form"]), QUESTION, "--strategy", "clean-frist"], "'clean-first'"),
        (["ocr", str(files["form"]), "--engine", "inkoc"], "'inkocr'"),
        (["search", str(files["root"]), "q", "--method", "phrse"], "'phrase'"),
        (["bench", "--dataset", "stamps:x", "--strategies", "none,clean-frist", "--out", "r"], "'clean-first'"),
    ]:
        code, _, err = run(capsys, *argv)
        assert code == 1 and err.count("\n") == 1 and f"did you mean {hint}?" in err, err


def test_tools_restore_and_diagnose_take_the_plugin_tool_and_family(files, plugins, capsys, tmp_path):
    code, out, _ = run(capsys, "tools")
    assert code == 0 and "destamp  [stamp]" in out
    restored = tmp_path / "restored.png"
    code, out, err = run(capsys, "restore", str(files["form"]), "-t", "destamp", "-o", str(restored))
    assert code == 0, err
    assert "destamp" in out and f"saved {restored}" in out
    assert red_share(np.asarray(Image.open(restored).convert("RGB"))) == 0.0
    code, out, err = run(capsys, "diagnose", str(files["form"]), "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["severities"]["stamp"] > 0.2 and "stamp" in data["diagnosis"] and data["thresholds"]["stamp"] == 0.2
    code, out, _ = run(capsys, "diagnose", str(restored))
    assert re.search(r"^  stamp +0\.00 +\(threshold 0\.20\)$", out, re.M), out


def test_ocr_and_extract_read_with_the_plugin_engine(files, plugins, capsys, tmp_path):
    code, out, err = run(capsys, "ocr", str(files["form"]), "--engine", "inkocr")
    assert code == 0, err
    assert re.fullmatch(r"ink \d+ percent\n", out), out
    target = tmp_path / "form.json"
    code, out, err = run(
        capsys,
        "extract",
        str(files["form"]),
        "--out",
        str(target),
        "--engine",
        "inkocr",
        "--no-restore",
        "--no-progress",
    )
    assert code == 0, err
    assert re.search(r"ink \d+ percent", target.read_text()), target.read_text()[:500]


def test_evidence_reads_with_the_plugin_engine_and_answers_with_the_plugin_brain(files, plugins, capsys):
    code, out, err = run(
        capsys,
        "evidence",
        str(files["form"]),
        "How much ink is on the page?",
        "--engine",
        "inkocr",
        "--brain",
        "redmeter",
        "--match",
        "lexical",
        "--json",
        "--no-progress",
    )
    assert code == 0, err
    data = json.loads(out)
    assert re.fullmatch(r"ink \d+ percent", data["pages"]["1"][0]["evidence"]), data
    assert data["answer"]["text"].endswith("% red"), data


def test_index_and_search_with_the_plugin_engine_retriever_and_planner(files, plugins, capsys, tmp_path):
    index = tmp_path / "idx"
    code, out, err = run(
        capsys, "index", str(files["docs"]), "--out", str(index), "--ocr-engine", "inkocr", "--no-progress"
    )
    assert code == 0, err
    assert "12 pages" in out and "ocr: 1" in out, out
    code, out, err = run(capsys, "search", str(index), "warranty", "--method", "phrase", "--json")
    assert code == 0, err
    rows = json.loads(out)
    assert [(r["page"], r["score"]) for r in rows] == [(11, 3.0)] and rows[0]["document"].endswith("manual.pdf")
    code, out, err = run(capsys, "search", str(index), "ink", "--method", "phrase", "--json")
    assert code == 0, err
    assert [r["document"].endswith("form.png") for r in json.loads(out)] == [True]  # text from the plug-in OCR
    code, out, err = run(
        capsys,
        "search",
        str(index),
        "warranty",
        "--method",
        "agent",
        "--planner",
        "first-search",
        "--planner-opt",
        "method=phrase",
        "--json",
        "-k",
        "3",
    )
    assert code == 0, err
    rows = json.loads(out)
    assert rows[0]["page"] == 11 and rows[0]["rationale"] == "phrase search" and len(rows) == 3


def test_bench_and_score_run_the_plugin_dataset_strategy_brain_task_and_metric(files, plugins, capsys, tmp_path):
    out_dir = tmp_path / "run"
    code, out, err = run(
        capsys,
        "bench",
        "--dataset",
        f"stamps:{files['forms']}",
        "--strategies",
        "none,clean-first",
        "--brain",
        "redmeter",
        "--out",
        str(out_dir),
        "--no-progress",
    )
    assert code == 0, err
    assert "4 rows (4 new" in out and "| strategy | stamped score | stamped cons. |" in out, out
    rows = {(r["strategy"], r["sample"]["id"]): r for r in map(json.loads, (out_dir / "results.jsonl").open())}
    assert rows["none", "f1"]["answer"] != "0% red" and rows["clean-first", "f1"]["answer"] == "0% red"
    # percent_points: 10 or more points off scores 0 (ANLS would give "17% red" for "0% red" 0.71)
    assert [rows[key]["score"] for key in sorted(rows)] == [1.0, 1.0, 0.0, 1.0]
    code, out, err = run(capsys, "score", str(out_dir))
    assert code == 0, err
    assert "| stamped (percent_points) | 50.00 | 50.00 |" in out and "| stamped (percent_points) | 100.00 |" in out, out
    code, out, err = run(capsys, "report", str(out_dir), "--out", str(tmp_path / "report"))
    assert code == 0, err
    assert "stamped score" in (tmp_path / "report" / "report.md").read_text()


def test_doctor_checks_the_plugin_brain_by_name_with_its_options(plugins, capsys):
    code, out, err = run(capsys, "doctor", "--brain", "redmeter", "--brain-opt", "unit= points red")
    assert code == 0, err
    assert "[ ok ] brain: redmeter (RedMeter, test)" in out
    assert "it answered '0 points red'" in out and "result: usable (0 failed, 1 warning(s))" in out
    code, _, err = run(capsys, "doctor", "--brain", "redmeter", "--brain-opt", "unti=x")
    assert code == 1 and "unknown option 'unti' (did you mean 'unit'?)" in err and err.count("\n") == 1


# -- the service and MCP ------------------------------------------------------------------------------------------


def test_serve_offers_the_plugin_brain_with_its_options_and_runs_the_plugin_strategy_and_task(files, plugins):
    pytest.importorskip("fastapi")
    from fastapi.testclient import TestClient

    from docintent.cli import build_parser
    from docintent.commands.serve import build_config
    from docintent.server import create_app

    args = build_parser().parse_args(
        ["serve", "--brain", "offline", "--brain", "redmeter", "--brain-opt", "unit= points red", "--workers", "1"]
    )
    config = build_config(args)
    config = type(config)(**{**config.__dict__, "warm_up": False})
    with TestClient(create_app(config)) as client:
        shown = client.get("/v1/config").json()
        assert "stamped" in shown["tasks"] and "clean-first" in shown["strategies"] and "redmeter" in shown["brains"]
        assert {"name": "destamp", "degradation": "stamp"}.items() <= next(
            t for t in client.get("/v1/tools").json() if t["name"] == "destamp"
        ).items()
        posted = client.post(
            "/v1/ask",
            files={"file": ("form.png", files["form"].read_bytes(), "image/png")},
            data={"question": QUESTION, "task": "stamped", "strategy": "clean-first", "brain": "redmeter"},
        )
        assert posted.status_code == 202, posted.text
        deadline = time.monotonic() + 60
        while (done := client.get(f"/v1/runs/{posted.json()['id']}").json())["status"] not in (
            "done",
            "failed",
            "timeout",
        ):
            assert time.monotonic() < deadline, done
            time.sleep(0.02)
    assert done["status"] == "done" and done["answer"] == "0 points red" and done["tools_kept"] == ["destamp"], done


def test_mcp_tools_describe_and_take_the_plugins(files, plugins, tmp_path):
    pytest.importorskip("mcp")
    from docintent.retrieval import build_index
    from docintent.server.mcp import build_server

    build_index([files["docs"] / "manual.pdf"], tmp_path / "idx", text="pdf", progress=False)
    server = build_server(
        [files["root"]], index=tmp_path / "idx", brain="redmeter", brain_options={"unit": " points red"}
    )

    def call(name: str, arguments: dict[str, Any]) -> Any:
        result = asyncio.run(server.call_tool(name, arguments))
        assert not result.is_error, result.content[0].text
        return json.loads(result.content[0].text)

    described = {tool.name: tool.description for tool in asyncio.run(server.list_tools())}
    assert "stamped" in described["ask"] and "clean-first" in described["ask"]
    assert "destamp" in described["restore"] and "stamp" in described["diagnose"] and "phrase" in described["search"]
    asked = call(
        "ask", {"question": QUESTION, "image_path": str(files["form"]), "task": "stamped", "strategy": "clean-first"}
    )
    assert asked["answer"] == "0 points red" and asked["tools_kept"] == ["destamp"]
    assert call("restore", {"tools": ["destamp"], "image_path": str(files["form"])})["tools"] == ["destamp"]
    assert "stamp" in call("diagnose", {"image_path": str(files["form"])})["diagnosis"]
    hits = call("search", {"query": "warranty", "method": "phrase"})["hits"]
    assert [(h["page"], h["score"]) for h in hits] == [(11, 3.0)]
