"""Prompt tokens per sample sent by the model brain: whole-page vs region Phase B x context none / text / full.

Synthetic pages (``docintent.synth``: a rendered report with a table, damaged by rotation, shadow, moire,
blur, low contrast, curl) each get a fixed restoration trace: the tools for its degradations in order, some
rolled back, then the answer. The question asks for a cell of the page's table, so the scripted Phase A calls
name the table as the evidence region (the optional ``region`` argument a model may give). The DocIntent
strategy replays that trace with :class:`~docintent.brains.mllm.ModelBrain` against the loopback fake
OpenAI server under every configuration, so all runs make the same decisions (checked: the benchmark fails
if any configuration's trace differs) and differ only in what each request carries.

Configurations: ``review=page`` (the paper's Phase B: the whole page before and after) or ``review=region``
(before/after crops of the evidence region plus a small thumbnail), each under ``context`` none / text / full,
at the brain's defaults (``max_side`` 2048, ``max_pixels`` 1,003,520 = Qwen-VL's 1280 image tokens, no
``image_budget``); plus the previous default (whole pages at 2048 px, no pixel cap) for reference.

Counting: images by the Qwen-VL rule (longest side capped, one token per 28x28 pixels), text at 4 characters
per token, tool schemas included; this is the fake server's own count (``docintent.brains.tokens``). The
paper reports 19,032 tokens per sample for Qwen3.5-9B and 6,106 for Gemini-3.1-Pro.

    python benchmarks/context_tokens.py                 # 24 pages at 1600 px
    python benchmarks/context_tokens.py --pages 8

Prints the table and writes benchmarks/results/context_tokens.{md,json}.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import time
from pathlib import Path

import numpy as np

RESULTS = Path(__file__).resolve().parent / "results"
PAPER = {"Qwen3.5-9B": 19_032, "Gemini-3.1-Pro": 6_106}
TARGET = 9_500  # half the paper's Qwen3.5-9B figure
QUESTION = "What is the revenue of the region in the table's second row?"

#: (degradations applied in order, restoration trace: (tool, verdict) pairs).
PAGES = [
    (("shadow",), (("deshadowing", "keep"),)),
    (("rotate", "shadow"), (("rotate_90", "keep"), ("deshadowing", "keep"))),
    (("moire",), (("demoire", "keep"),)),
    (("defocus", "shadow"), (("deshadowing", "keep"), ("appearance", "rollback"))),
    (("low_contrast",), (("appearance", "keep"),)),
    (("curl", "color_cast"), (("appearance", "rollback"),)),
    (("motion_blur",), ()),
    (("rotate", "moire", "shadow"), (("rotate_90", "keep"), ("demoire", "rollback"), ("deshadowing", "keep"))),
]

#: name -> brain options (on top of the brain's defaults).
CONFIGS = {
    "previous default (page, text, 2048 px, no pixel cap)": {
        "review": "page",
        "context": "text",
        "max_side": 2048,
        "max_pixels": 0,
    },
    **{
        f"{review}, {context}": {"review": review, "context": context}
        for review in ("page", "region")
        for context in ("none", "text", "full")
    },
}
DEFAULT = "region, text"


def table_region(img: np.ndarray) -> list[float]:
    """The table of a clean render as [x0, y0, x1, y1] fractions (its grid lines are drawn in (60, 60, 60))."""
    grid = np.all(img == (60, 60, 60), axis=2)
    rows = np.where(grid.sum(1) > 0.5 * img.shape[1])[0]
    cols = np.where(grid.sum(0) > 0.05 * img.shape[0])[0]
    h, w = img.shape[:2]
    return [
        round(cols.min() / w, 3),
        round(rows.min() / h, 3),
        round((cols.max() + 1) / w, 3),
        round((rows.max() + 1) / h, 3),
    ]


def make_page(index: int, width: int):
    """Page ``index``: a rendered report damaged by the degradations of ``PAGES[index % 8]`` (seeded), and the
    table's region on the upright page."""
    from docintent.page import Page
    from docintent.synth import degrade
    from docintent.synth.render import render_page

    img, _ = render_page(width=width, seed=index)
    region = table_region(img)
    rng = np.random.default_rng(1000 + index)
    for name in PAGES[index % len(PAGES)][0]:
        if name == "rotate":
            img = np.ascontiguousarray(np.rot90(img, 1))  # counter-clockwise: rotate_90 (clockwise) restores it
        else:
            img = getattr(degrade, name)(img, rng, 0.5)
    return Page.from_array(img, source=f"synthetic-{index}"), region


def policy(trace, region):
    """A fake-server script function that replays ``trace`` (Phase A tool calls naming the evidence region,
    Phase B verdicts), then answers."""
    from docintent.testing.fake_openai import offered_tools, text, tool_call

    steps = list(trace)
    position = {"next": 0}

    def reply(body):
        tools = offered_tools(body)
        if "continue" in tools:
            _, verdict = steps[position["next"] - 1]
            return (
                tool_call("continue") if verdict == "keep" else tool_call("rollback", reason="text got harder to read")
            )
        if not tools:
            return text('{"answer": "42"}')
        while position["next"] < len(steps) and steps[position["next"]][0] not in tools:
            position["next"] += 1  # a tool this installation lacks: skip that step of the trace
        if position["next"] < len(steps):
            name = steps[position["next"]][0]
            position["next"] += 1
            args = {} if name.startswith("rotate_") else {"region": region}  # the page is sideways before rotate_90
            return tool_call(name, content=f"The table is degraded; calling {name}.", **args)
        return tool_call("answer", answer="42", confidence="high", reasoning="The table row is legible.")

    return reply


def decisions(result) -> list[str]:
    """What a run decided, step by step (phase, action, tool) and its answer: equal across configurations."""
    steps = [f"{s.phase}:{s.action}:{s.tool or ''}" for s in result.trace]
    return steps + [f"answer={result.answer}"]


def reuse_restorations() -> None:
    """Run each restoration once per (tool, page, arguments) and reuse it in every configuration.

    Tools are deterministic, so this changes no page and no decision; it only keeps the benchmark from
    restoring the same 1600-px page seven times.
    """
    from docintent.tools.base import Tool

    run = Tool.run
    done: dict[tuple[str, str, str], object] = {}

    def cached(self, page, **args):
        key = (self.name, page.hash, json.dumps(args, sort_keys=True, default=str))
        if key not in done:
            done[key] = run(self, page, **args)
        return done[key]

    Tool.run = cached  # type: ignore[method-assign]


def measure(pages: int, width: int) -> dict:
    from docintent.brains.mllm import ModelBrain
    from docintent.brains.tokens import request_tokens
    from docintent.strategies import get_strategy
    from docintent.testing.fake_openai import FakeOpenAI, images
    from docintent.tools import list_tools

    reuse_restorations()
    installed = {t.name for t in list_tools() if t.degradation != "inspection"}
    rows: dict[str, list[dict]] = {name: [] for name in CONFIGS}
    mismatches = []
    for index in range(pages):
        page, region = make_page(index, width)
        trace = PAGES[index % len(PAGES)][1]
        reference = None
        for name, options in CONFIGS.items():
            with FakeOpenAI(policy(trace, region)) as server:
                brain = ModelBrain(base_url=server.base_url, model=server.model, **options)
                result = get_strategy("docintent").run(page, QUESTION, "doc", brain)
                bodies = server.chat_requests
            counts = [request_tokens(b) for b in bodies]
            made = decisions(result)
            if reference is None:
                reference = made
            elif made != reference:
                mismatches.append({"page": index, "config": name, "decisions": made, "reference": reference})
            phases = result.to_dict().get("tokens_by_phase", {})
            rows[name].append(
                {
                    "page": index,
                    "size": list(page.size),
                    "trace": [f"{t}:{v}" for t, v in trace if t in installed],
                    "calls": len(bodies),
                    "images": sum(len(images(b)) for b in bodies),
                    "image_tokens": sum(c.images for c in counts),
                    "text_tokens": sum(c.text for c in counts),
                    "prompt_tokens": result.prompt_tokens,
                    "prompt_tokens_A": phases.get("A", {}).get("prompt", 0),
                    "prompt_tokens_B": phases.get("B", {}).get("prompt", 0),
                    "completion_tokens": result.completion_tokens,
                    "answer": result.answer,
                    "error": result.error,
                }
            )
    summary = {}
    keys = (
        "calls",
        "images",
        "image_tokens",
        "text_tokens",
        "prompt_tokens",
        "prompt_tokens_A",
        "prompt_tokens_B",
        "completion_tokens",
    )
    for name, samples in rows.items():
        summary[name] = {key: statistics.mean(s[key] for s in samples) for key in keys}
        summary[name]["errors"] = sum(1 for s in samples if s["error"])
    return {
        "samples": rows,
        "summary": summary,
        "decision_mismatches": mismatches,
        "tools_installed": sorted(installed),
    }


def table(result: dict, args: argparse.Namespace) -> str:
    from docintent.brains.mllm import ModelBrainOptions

    fields = ModelBrainOptions.model_fields
    defaults = {k: fields[k].default for k in ("max_side", "max_pixels", "image_budget", "thumbnail_side")}
    lines = [
        f"Prompt tokens per sample sent by the model brain, {args.pages} synthetic damaged pages ({args.width} px wide), "
        f"DocIntent strategy, the same scripted decisions in every configuration (brain defaults: {defaults}).",
        "Images: Qwen-VL rule (28x28 px per token); text: 4 characters per text token (fake server's count).",
        "",
        "| configuration | calls | images | image tokens | text tokens | Phase A | Phase B | prompt tokens / sample "
        "| vs Qwen3.5-9B 19,032 | vs Gemini-3.1-Pro 6,106 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for name in CONFIGS:
        s = result["summary"][name]
        mark = " (default)" if name == DEFAULT else ""
        lines.append(
            f"| {name}{mark} | {s['calls']:.2f} | {s['images']:.2f} | {s['image_tokens']:,.0f} | {s['text_tokens']:,.0f} | "
            f"{s['prompt_tokens_A']:,.0f} | {s['prompt_tokens_B']:,.0f} | {s['prompt_tokens']:,.0f} | "
            f"{s['prompt_tokens'] / PAPER['Qwen3.5-9B']:.2f}x | {s['prompt_tokens'] / PAPER['Gemini-3.1-Pro']:.2f}x |"
        )
    default = result["summary"][DEFAULT]["prompt_tokens"]
    mismatches = len(result["decision_mismatches"])
    lines += [
        "",
        f"Default configuration ({DEFAULT}): {default:,.0f} prompt tokens per sample; target <= {TARGET:,}: "
        f"{'met' if default <= TARGET else 'missed'}. Decisions identical across configurations: "
        f"{'yes' if not mismatches else f'no ({mismatches} differ)'}.",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=24)
    parser.add_argument("--width", type=int, default=1600, help="rendered page width in pixels (default 1600)")
    args = parser.parse_args()
    t0 = time.perf_counter()
    result = measure(args.pages, args.width)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    from docintent.brains.prompts import PROMPT_VERSION

    result["config"] = {
        "pages": args.pages,
        "width": args.width,
        "question": QUESTION,
        "configs": CONFIGS,
        "python": platform.python_version(),
        "paper_tokens_per_sample": PAPER,
        "prompt_version": PROMPT_VERSION,
    }
    md = table(result, args)
    print(md)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "context_tokens.md").write_text(f"# Prompt tokens per sample: Phase B review x context\n\n{md}\n")
    (RESULTS / "context_tokens.json").write_text(json.dumps(result, indent=1))
    print(f"\nwrote {RESULTS / 'context_tokens.md'} and .json in {result['seconds']} s")
    if result["decision_mismatches"]:
        raise SystemExit(f"decisions differ between configurations: {result['decision_mismatches'][:2]}")


if __name__ == "__main__":
    main()
