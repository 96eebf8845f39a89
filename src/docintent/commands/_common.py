"""Small helpers shared by command modules (argument parsing of key=value options, trace printing)."""

from __future__ import annotations

import json
from typing import Any

from ..errors import ConfigError


def parse_options(pairs: list[str] | None) -> dict[str, Any]:
    """``["a=1", "b=x"]`` -> ``{"a": 1, "b": "x"}`` (values parsed as JSON when they can be)."""
    out: dict[str, Any] = {}
    for pair in pairs or []:
        if "=" not in pair:
            raise ConfigError(f"option {pair!r} must look like key=value")
        key, value = pair.split("=", 1)
        try:
            out[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            out[key.strip()] = value
    return out


def format_trace(result) -> str:
    """Readable list of a Result's steps."""
    lines = []
    for i, step in enumerate(result.trace, 1):
        tool = f" {step.tool}" if step.tool else ""
        hashes = f" [{step.before}->{step.after}]" if step.after and step.before != step.after else ""
        tokens = f" ({step.prompt_tokens}+{step.completion_tokens} tok)" if step.prompt_tokens or step.completion_tokens else ""
        reason = f": {step.reason}" if step.reason else ""
        where = ""
        if "plan_id" in step.data:  # a MACT role call: which plan and step, what came out, what was wrong
            ids = " ".join(str(step.data[k]) for k in ("plan_id", "step_id") if k in step.data)
            cand = f" #{step.data['candidate']}" if isinstance(step.data.get("candidate"), int) else ""
            out = f" -> {step.data['output']!r}" if "output" in step.data else ""
            where = f" [{ids}{cand}]{out}"
        lines.append(f"{i:>2}. {step.phase:<8} {step.action}{tool}{where}{reason}{hashes} {step.seconds:.2f}s{tokens}")
    return "\n".join(lines)
