"""Mutation testing of the modules whose mistakes would matter most: flip a comparison, a boolean operator, a
constant or a returned value, run the tests that guard the module, and see whether they notice.

    python benchmarks/mutation.py [--module strategies] [--limit N] [--out benchmarks/results/mutation]

Each module is mutated in a scratch copy of the repository (the working tree is never touched); a mutant is
*killed* when its tests fail (or time out), *survived* when they pass. Results are resumable: a JSON file per
module keeps every mutant's outcome, and a rerun tests only the mutants not tested yet with the same source.
Prints a table and writes ``mutation.md`` / ``mutation.json`` under ``--out``.

The mutation operators (one change per mutant):
- comparisons: ``==``/``!=``, ``<``/``>=``, ``>``/``<=``, ``in``/``not in``, ``is``/``is not``;
- boolean operators ``and``/``or``; ``not x`` -> ``x``;
- constants: ``True``/``False``, an integer ``n`` -> ``n + 1``, a float ``x`` -> ``x * 1.5`` (0 -> 1);
- ``return <expr>`` -> ``return None`` (for non-None returns).
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: module (path under src/docintent) -> the tests that guard it
TARGETS: dict[str, tuple[str, list[str]]] = {
    "strategies": ("strategies/core.py", ["tests/test_strategies.py"]),
    "metrics": ("evaluation/metrics.py", ["tests/test_wilddoc_metrics.py", "tests/test_score_command.py"]),
    "runstore": ("evaluation/runner.py", ["tests/test_runner.py"]),
}

_SWAP_CMP = {
    ast.Eq: ast.NotEq, ast.NotEq: ast.Eq, ast.Lt: ast.GtE, ast.GtE: ast.Lt, ast.Gt: ast.LtE, ast.LtE: ast.Gt,
    ast.In: ast.NotIn, ast.NotIn: ast.In, ast.Is: ast.IsNot, ast.IsNot: ast.Is,
}


@dataclass
class Mutant:
    id: str
    line: int
    description: str
    outcome: str = ""  # killed | survived | timeout | error
    seconds: float = 0.0


class _Points(ast.NodeVisitor):
    """Collects (node path, description) of every mutation point in source order."""

    def __init__(self) -> None:
        self.points: list[tuple[int, int, str, str]] = []  # (line, index among same-line points, kind, text)
        self._docstrings: set[int] = set()

    def visit(self, node: ast.AST) -> None:
        # Docstrings are constants too, but mutating them changes nothing a test can see.
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            self._docstrings.add(id(body[0].value))
        super().visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in _SWAP_CMP:
                    self.points.append((line, len(self.points), "cmp", f"{type(op).__name__}->{_SWAP_CMP[type(op)].__name__}#{i}"))
        elif isinstance(node, ast.BoolOp):
            self.points.append((line, len(self.points), "bool", f"{type(node.op).__name__} swapped"))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            self.points.append((line, len(self.points), "not", "not x -> x"))
        elif isinstance(node, ast.Constant) and id(node) not in self._docstrings:
            if isinstance(node.value, bool):
                self.points.append((line, len(self.points), "const", f"{node.value} -> {not node.value}"))
            elif isinstance(node.value, int):
                self.points.append((line, len(self.points), "const", f"{node.value} -> {node.value + 1}"))
            elif isinstance(node.value, float):
                self.points.append((line, len(self.points), "const", f"{node.value} -> {node.value * 1.5 or 1.0}"))
        elif isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None
        ):
            self.points.append((line, len(self.points), "return", "return x -> return None"))
        super().generic_visit(node)


class _Apply(ast.NodeTransformer):
    """Applies the ``target``-th mutation point (same traversal order as :class:`_Points`)."""

    def __init__(self, target: int, docstrings: set[int]) -> None:
        self.target = target
        self.seen = 0
        self._docstrings = docstrings

    def _hit(self) -> bool:
        hit = self.seen == self.target
        self.seen += 1
        return hit

    def generic_visit(self, node: ast.AST) -> ast.AST:
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in _SWAP_CMP and self._hit():
                    node.ops[i] = _SWAP_CMP[type(op)]()
        elif isinstance(node, ast.BoolOp):
            if self._hit():
                node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            if self._hit():
                return super().generic_visit(node.operand)
        elif isinstance(node, ast.Constant) and id(node) not in self._docstrings:
            if isinstance(node.value, bool):
                if self._hit():
                    node.value = not node.value
            elif isinstance(node.value, int):
                if self._hit():
                    node.value = node.value + 1
            elif isinstance(node.value, float):
                if self._hit():
                    node.value = node.value * 1.5 or 1.0
        elif isinstance(node, ast.Return) and node.value is not None and not (
            isinstance(node.value, ast.Constant) and node.value.value is None
        ):
            if self._hit():
                node.value = ast.Constant(None)
        return super().generic_visit(node)


def mutation_points(source: str) -> tuple[ast.Module, list[tuple[int, int, str, str]], set[int]]:
    tree = ast.parse(source)
    finder = _Points()
    finder.visit(tree)
    return tree, finder.points, finder._docstrings


def mutate(source: str, index: int) -> str:
    tree, _, _ = mutation_points(source)
    finder = _Points()
    finder.visit(tree)  # recompute docstring ids on this tree
    mutated = _Apply(index, finder._docstrings).visit(tree)
    ast.fix_missing_locations(mutated)
    return ast.unparse(mutated)


def run_module(name: str, scratch: Path, out: Path, limit: int | None, timeout: float) -> list[Mutant]:
    rel, tests = TARGETS[name]
    target = scratch / "src" / "docintent" / rel
    original = (REPO / "src" / "docintent" / rel).read_text()
    digest = hashlib.blake2b(original.encode(), digest_size=8).hexdigest()
    state_file = out / f"mutation_{name}.json"
    state = json.loads(state_file.read_text()) if state_file.is_file() else {}
    if state.get("digest") != digest:
        state = {"digest": digest, "mutants": {}}
    _, points, _ = mutation_points(original)
    env = dict(os.environ, PYTHONPATH=str(scratch / "src"), DOCINTENT_THREADS="1")
    base_cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-o", "addopts=", *tests]
    baseline = subprocess.run(base_cmd, cwd=scratch, env=env, capture_output=True, text=True, timeout=timeout * 3)
    if baseline.returncode != 0:
        raise SystemExit(f"{name}: the tests fail before any mutation:\n{baseline.stdout[-2000:]}")
    results: list[Mutant] = []
    todo = list(enumerate(points))[: limit or None]
    for index, (line, _, kind, text) in todo:
        key = f"{index}"
        if key in state["mutants"]:
            results.append(Mutant(**state["mutants"][key]))
            continue
        mutant = Mutant(key, line, f"line {line}: {kind} {text}")
        try:
            target.write_text(mutate(original, index))
            t0 = time.perf_counter()
            try:
                proc = subprocess.run(base_cmd, cwd=scratch, env=env, capture_output=True, text=True, timeout=timeout)
                mutant.outcome = "survived" if proc.returncode == 0 else "killed"
            except subprocess.TimeoutExpired:
                mutant.outcome = "timeout"  # counted as killed: the tests did not pass
            mutant.seconds = round(time.perf_counter() - t0, 2)
        finally:
            target.write_text(original)
        results.append(mutant)
        state["mutants"][key] = asdict(mutant)
        state_file.write_text(json.dumps(state, indent=1))
        print(f"{name} {index + 1}/{len(todo)} {mutant.outcome:8} {mutant.description}", flush=True)
    return results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", action="append", choices=sorted(TARGETS), help="module(s) to mutate (default: all)")
    parser.add_argument("--limit", type=int, default=None, help="test at most this many mutants per module")
    parser.add_argument("--timeout", type=float, default=240.0, help="seconds before a mutant's test run counts as killed")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/docintent-mutation"))
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    if args.scratch.exists():
        shutil.rmtree(args.scratch)
    shutil.copytree(REPO, args.scratch, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", "runs"))
    # The tests read ../shared relative to the repository.
    shared = REPO.parent / "shared"
    if shared.exists() and not (args.scratch.parent / "shared").exists():
        (args.scratch.parent / "shared").symlink_to(shared)
    summary = {}
    for name in args.module or sorted(TARGETS):
        results = run_module(name, args.scratch, args.out, args.limit, args.timeout)
        killed = sum(m.outcome in ("killed", "timeout") for m in results)
        summary[name] = {
            "module": TARGETS[name][0], "tests": TARGETS[name][1], "mutants": len(results), "killed": killed,
            "score": round(100.0 * killed / max(len(results), 1), 1),
            "survivors": [m.description for m in results if m.outcome == "survived"],
        }
    lines = ["| module | tests | mutants | killed | score |", "|---|---|---:|---:|---:|"]
    for s in summary.values():
        lines.append(f"| {s['module']} | {', '.join(s['tests'])} | {s['mutants']} | {s['killed']} | {s['score']:.1f}% |")
    for s in summary.values():
        lines += ["", f"Survivors in {s['module']}:", *[f"- {d}" for d in s["survivors"]]]
    text = "\n".join(lines)
    print(text)
    (args.out / "mutation.md").write_text(text + "\n")
    (args.out / "mutation.json").write_text(json.dumps(summary, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
