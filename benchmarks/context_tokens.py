"""Tokens sent per sample by the model brain under each context strategy (none, text, full).

Synthetic pages (``docintent.synth.render``) are damaged with ``docintent.synth.degrade`` (rotation, shadow,
moire, blur, low contrast, curl). Each page gets a fixed restoration trace: the tools for its degradations in
order, one of them rolled back on some pages, then the answer. The DocIntent strategy runs that trace with
:class:`~docintent.brains.mllm.ModelBrain` against the loopback fake OpenAI server, once per context strategy,
so the three runs make the same decisions and differ only in what each request carries.

Counting: images by the Qwen-VL rule (longest side capped, one token per 28x28 pixels), text at 4 characters
per token, tool schemas included; this is the fake server's own count (``docintent.brains.tokens``). The
paper reports 19,032 tokens per sample for Qwen3.5-9B and 6,106 for Gemini-3.1-Pro.

    python benchmarks/context_tokens.py                 # 6 pages at 1600 px, images capped at 2048
    python benchmarks/context_tokens.py --pages 3 --max-side 1024

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


def make_page(index: int, width: int):
    """Page ``index`` of :data:`PAGES`: a rendered document damaged by its degradations (seeded)."""
    from docintent.page import Page
    from docintent.synth import degrade
    from docintent.synth.render import render_page

    img, _ = render_page(width=width, seed=index)
    rng = np.random.default_rng(1000 + index)
    for name in PAGES[index % len(PAGES)][0]:
        if name == "rotate":
            img = np.ascontiguousarray(np.rot90(img, 1))  # counter-clockwise: rotate_90 (clockwise) restores it
        else:
            img = getattr(degrade, name)(img, rng, 0.5)
    return Page.from_array(img, source=f"synthetic-{index}")


def policy(trace):
    """A fake-server script function that replays ``trace`` (Phase A tool calls, Phase B verdicts), then answers."""
    from docintent.testing.fake_openai import offered_tools, text, tool_call

    steps = list(trace)
    position = {"next": 0}

    def reply(body):
        tools = offered_tools(body)
        if "continue" in tools:
            _, verdict = steps[position["next"] - 1]
            return tool_call("continue") if verdict == "keep" else tool_call("rollback", reason="text got harder to read")
        if not tools:
            return text('{"answer": "42"}')
        while position["next"] < len(steps) and steps[position["next"]][0] not in tools:
            position["next"] += 1  # a tool this installation lacks: skip that step of the trace
        if position["next"] < len(steps):
            name = steps[position["next"]][0]
            position["next"] += 1
            return tool_call(name, content=f"The evidence region is degraded; calling {name}.")
        return tool_call("answer", answer="42", confidence="high", reasoning="The total row is legible.")

    return reply


def measure(pages: int, width: int, max_side: int) -> dict:
    from docintent.brains.mllm import ModelBrain
    from docintent.brains.tokens import request_tokens
    from docintent.strategies import get_strategy
    from docintent.testing.fake_openai import FakeOpenAI, images
    from docintent.tools import list_tools

    installed = {t.name for t in list_tools() if t.degradation != "inspection"}
    rows = {c: [] for c in ("none", "text", "full")}
    for index in range(pages):
        page = make_page(index, width)
        trace = PAGES[index % len(PAGES)][1]
        for context in rows:
            with FakeOpenAI(policy(trace)) as server:
                brain = ModelBrain(base_url=server.base_url, model=server.model, context=context, max_side=max_side)
                result = get_strategy("docintent").run(page, "What is the total revenue?", "doc", brain)
                bodies = server.chat_requests
            counts = [request_tokens(b, max_side=max_side) for b in bodies]
            rows[context].append({
                "page": index,
                "size": list(page.size),
                "trace": [f"{t}:{v}" for t, v in trace if t in installed],
                "calls": len(bodies),
                "images": sum(len(images(b)) for b in bodies),
                "image_tokens": sum(c.images for c in counts),
                "text_tokens": sum(c.text for c in counts),
                "prompt_tokens": result.prompt_tokens,
                "completion_tokens": result.completion_tokens,
                "answer": result.answer,
                "error": result.error,
            })
    summary = {}
    for context, samples in rows.items():
        summary[context] = {
            key: statistics.mean(s[key] for s in samples)
            for key in ("calls", "images", "image_tokens", "text_tokens", "prompt_tokens", "completion_tokens")
        }
    return {"samples": rows, "summary": summary, "tools_installed": sorted(installed)}


def table(result: dict, args: argparse.Namespace) -> str:
    lines = [
        f"Tokens sent per sample by the model brain, {args.pages} synthetic damaged pages ({args.width} px wide, "
        f"images capped at {args.max_side} px), DocIntent strategy, same decisions under every context strategy.",
        "Images: Qwen-VL rule (28x28 px per token); text: 4 characters per token (fake server's count).",
        "",
        "| context | calls | images sent | image tokens | text tokens | prompt tokens / sample | vs Qwen3.5-9B 19,032 | vs Gemini-3.1-Pro 6,106 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for context in ("none", "text", "full"):
        s = result["summary"][context]
        lines.append(
            f"| {context} | {s['calls']:.1f} | {s['images']:.1f} | {s['image_tokens']:,.0f} | {s['text_tokens']:,.0f} | "
            f"{s['prompt_tokens']:,.0f} | {s['prompt_tokens'] / PAPER['Qwen3.5-9B']:.2f}x | "
            f"{s['prompt_tokens'] / PAPER['Gemini-3.1-Pro']:.2f}x |"
        )
    text_, full = result["summary"]["text"]["prompt_tokens"], result["summary"]["full"]["prompt_tokens"]
    lines += ["", f"`text` sends {text_ / full:.2f}x the tokens of `full` ({full - text_:,.0f} fewer per sample)."]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--pages", type=int, default=len(PAGES))
    parser.add_argument("--width", type=int, default=1600, help="rendered page width in pixels (default 1600)")
    parser.add_argument("--max-side", type=int, default=2048, help="longest image side sent (default 2048)")
    args = parser.parse_args()
    t0 = time.perf_counter()
    result = measure(args.pages, args.width, args.max_side)
    result["seconds"] = round(time.perf_counter() - t0, 1)
    result["config"] = {"pages": args.pages, "width": args.width, "max_side": args.max_side,
                        "python": platform.python_version(), "paper_tokens_per_sample": PAPER}
    from docintent.brains.prompts import PROMPT_VERSION

    result["config"]["prompt_version"] = PROMPT_VERSION
    md = table(result, args)
    print(md)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "context_tokens.md").write_text(f"# Context strategies: tokens per sample\n\n{md}\n")
    (RESULTS / "context_tokens.json").write_text(json.dumps(result, indent=1))
    print(f"\nwrote {RESULTS / 'context_tokens.md'} and .json in {result['seconds']} s")


if __name__ == "__main__":
    main()
