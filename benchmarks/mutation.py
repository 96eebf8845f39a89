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
import random
import shutil
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

#: module (path under src/docintent) -> (the tests that guard it, further files whose tests run only where they reach
#: the mutated line)
TARGETS: dict[str, tuple[str, list[str], list[str]]] = {
    # The orchestration is four modules since the strategy core was split into modes over a run context.
    "strategies": (
        "strategies/core.py",
        ["tests/test_strategies.py", "tests/test_strategies_mutants.py", "tests/test_house.py"],
        ["tests/test_mllm.py"],
    ),
    "run": ("strategies/run.py", ["tests/test_strategies.py", "tests/test_strategies_mutants.py"], []),
    "loop": ("strategies/loop.py", ["tests/test_strategies.py", "tests/test_strategies_mutants.py"], []),
    "baselines": ("strategies/baselines.py", ["tests/test_strategies.py", "tests/test_strategies_mutants.py"], []),
    "metrics": (
        "evaluation/metrics.py",
        ["tests/test_wilddoc_metrics.py", "tests/test_score_command.py", "tests/test_metrics_mutants.py"],
        [],
    ),
    "runstore": ("evaluation/runner.py", ["tests/test_runner.py", "tests/test_runner_mutants.py"], []),
}

_SWAP_CMP = {
    ast.Eq: ast.NotEq,
    ast.NotEq: ast.Eq,
    ast.Lt: ast.GtE,
    ast.GtE: ast.Lt,
    ast.Gt: ast.LtE,
    ast.LtE: ast.Gt,
    ast.In: ast.NotIn,
    ast.NotIn: ast.In,
    ast.Is: ast.IsNot,
    ast.IsNot: ast.Is,
}


@dataclass
class Mutant:
    id: str
    line: int
    description: str
    outcome: str = ""  # killed | survived | timeout | error
    seconds: float = 0.0
    reached: bool = False  # whether a test ran the mutated line (module-level lines run only at import)


class _Points(ast.NodeVisitor):
    """Collects (node path, description) of every mutation point in source order."""

    def __init__(self) -> None:
        self.points: list[tuple[int, int, str, str]] = []  # (line, index among same-line points, kind, text)
        self._docstrings: set[int] = set()

    def visit(self, node: ast.AST) -> None:
        # Docstrings are constants too, but mutating them changes nothing a test can see.
        body = getattr(node, "body", None)
        if (
            isinstance(body, list)
            and body
            and isinstance(body[0], ast.Expr)
            and isinstance(body[0].value, ast.Constant)
        ):
            self._docstrings.add(id(body[0].value))
        super().visit(node)

    def generic_visit(self, node: ast.AST) -> None:
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Compare):
            for i, op in enumerate(node.ops):
                if type(op) in _SWAP_CMP:
                    self.points.append(
                        (line, len(self.points), "cmp", f"{type(op).__name__}->{_SWAP_CMP[type(op)].__name__}#{i}")
                    )
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
        elif (
            isinstance(node, ast.Return)
            and node.value is not None
            and not (isinstance(node.value, ast.Constant) and node.value.value is None)
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
        elif (
            isinstance(node, ast.Return)
            and node.value is not None
            and not (isinstance(node.value, ast.Constant) and node.value.value is None)
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


_MESSAGE_CALLS = {"debug", "info", "warning", "error", "exception", "critical", "warn", "print"}


def _message_lines(tree: ast.Module) -> set[int]:
    """Lines inside a logging / print / warnings call: a mutant there changes a message nobody asserts on."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""
            owner = f.value.id if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name) else ""
            if name in _MESSAGE_CALLS and (owner in ("log", "logger", "logging", "warnings") or name == "print"):
                lines.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return lines


# -- running the tests -------------------------------------------------------------------------------------
# Every mutant's test run is a fork of this process, which has already imported pytest and the heavy third-party
# libraries (numpy, Pillow, OpenCV, pydantic, httpx, openai): under load a fresh interpreter spends more time
# importing them than running the guarding tests. docintent itself is never imported here, so each child imports
# the mutated source fresh from the scratch copy.
_PRELOAD = (
    "numpy",
    "PIL.Image",
    "PIL.ImageDraw",
    "PIL.ImageFont",
    "pydantic",
    "httpx",
    "openai",
    "cv2",
    "matplotlib",
    "scipy.ndimage",
    "pytest",
)


def _preload() -> None:
    import importlib

    for name in _PRELOAD:
        try:
            importlib.import_module(name)
        except Exception:  # an optional library missing only costs its import time in each child
            pass


class _LineTrace:
    """pytest plugin: which lines of ``filename`` each test executes, and how long each test takes."""

    def __init__(self, filename: str) -> None:
        self.filename = filename
        self.current = ""
        self.lines: dict[str, set[int]] = {}
        self.seconds: dict[str, float] = {}

    def _tracer(self, frame, event, arg):  # noqa: ANN001
        if frame.f_code.co_filename != self.filename:
            return None
        if event == "line" or event == "call":
            self.lines.setdefault(self.current, set()).add(frame.f_lineno)
        return self._tracer

    def _global(self, frame, event, arg):  # noqa: ANN001
        if frame.f_code.co_filename == self.filename:
            return self._tracer(frame, event, arg)
        return None

    def pytest_collection_finish(self, session) -> None:  # noqa: ANN001
        self.order = [item.nodeid for item in session.items]

    def pytest_runtest_protocol(self, item, nextitem):  # noqa: ANN001
        import threading

        self.current = item.nodeid
        sys.settrace(self._global)
        threading.settrace(self._global)
        return None

    def pytest_runtest_logfinish(self, nodeid, location) -> None:  # noqa: ANN001
        import threading

        sys.settrace(None)
        threading.settrace(None)  # type: ignore[arg-type]


def _run_pytest(
    scratch: Path, args: list[str], timeout: float, plugin: object | None = None, log: Path | None = None
) -> str:
    """Runs pytest on ``args`` in a forked child; "passed", "failed" or "timeout"."""
    pid = os.fork()
    if pid == 0:  # child
        code = 3
        try:
            os.setpgid(0, 0)
            fd = os.open(str(log) if log else os.devnull, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
            os.dup2(fd, 1)
            os.dup2(fd, 2)
            os.chdir(scratch)
            os.environ["PYTHONPATH"] = str(scratch / "src")
            os.environ["DOCINTENT_THREADS"] = "1"
            sys.path.insert(0, str(scratch / "src"))
            import pytest

            code = int(pytest.main(args, plugins=[plugin] if plugin else []))
            if plugin is not None:
                (scratch / ".trace.json").write_text(
                    json.dumps(
                        {
                            "order": getattr(plugin, "order", []),
                            "lines": {k: sorted(v) for k, v in plugin.lines.items()},  # type: ignore[attr-defined]
                        }
                    )
                )
        finally:
            sys.stdout.flush()
            os._exit(code)
    deadline = time.monotonic() + timeout
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return "passed" if os.waitstatus_to_exitcode(status) == 0 else "failed"
        if time.monotonic() > deadline:
            try:
                os.killpg(pid, 9)
            except ProcessLookupError:
                pass
            os.waitpid(pid, 0)
            return "timeout"
        time.sleep(0.05)


_PYTEST_OPTS = [
    "-x",
    "-q",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:randomly",
    "-o",
    "addopts=",
    "-m",
    "not slow",
    "--doctest-modules",
]


def run_module(
    name: str,
    scratch: Path,
    out: Path,
    sample: int | None,
    seed: int,
    timeout: float,
    only: set[str] | None = None,
    label: str = "",
    deadline: float | None = None,
) -> list[Mutant]:
    """Tests every (sampled) mutant of one module; ``only``: retest just these mutant ids (kept results for the rest)."""
    rel, tests, extra = TARGETS[name]
    # The "before" run measures the tests as they were: the files written against its survivors join only the
    # retest.
    tests = [t for t in tests if (REPO / t).exists() and (label or not t.endswith("_mutants.py"))]
    target = scratch / "src" / "docintent" / rel
    original = (REPO / "src" / "docintent" / rel).read_text()
    digest = hashlib.blake2b(original.encode(), digest_size=8).hexdigest()
    state_file = out / f"mutation_{name}{label}.json"
    state = json.loads(state_file.read_text()) if state_file.is_file() else {}
    if state.get("digest") != digest:
        state = {"digest": digest, "mutants": {}}
    tree, points, _ = mutation_points(original)
    quiet = _message_lines(tree)
    # Baseline: every guarding test must pass, and it tells which tests reach which line of the module.
    plugin = _LineTrace(str(target))
    module_doctests = f"src/docintent/{rel}"
    outcome = _run_pytest(
        scratch,
        [*_PYTEST_OPTS, *tests, *extra, module_doctests],
        timeout * 3,
        plugin,
        log=scratch / f".baseline_{name}.log",
    )
    if outcome != "passed":
        raise SystemExit(f"{name}: the tests fail before any mutation; see {scratch}/.baseline_{name}.log")
    trace = json.loads((scratch / ".trace.json").read_text())
    order: list[str] = trace["order"]
    covers = {k: set(v) for k, v in trace["lines"].items()}
    primary = [t for t in order if not any(t.startswith(e) for e in extra)]
    indices = [i for i, (line, _, _, _) in enumerate(points) if line not in quiet]
    skipped = len(points) - len(indices)
    if sample:
        # Mutants are tested in a seeded random order, so the ones finished before a deadline are a uniform
        # sample too.
        random.Random(seed).shuffle(indices)
        indices = indices[:sample]
    results: list[Mutant] = []
    for n, index in enumerate(indices):
        if deadline and time.time() > deadline and f"{index}" not in state["mutants"]:
            print(f"{name}: deadline reached after {len(results)} mutants", flush=True)
            break
        line, _, kind, text = points[index]
        key = f"{index}"
        if key in state["mutants"] and (only is None or key not in only):
            results.append(Mutant(**state["mutants"][key]))
            continue
        if only is not None and key not in only:
            continue
        mutant = Mutant(key, line, f"line {line}: {kind} {text}")
        # Tests that reach the mutated line first (they are the ones that can notice), then the rest of the primary
        # files; the secondary files only contribute the tests that reach the line.
        reach = [t for t in order if line in covers.get(t, ())]
        rest = [t for t in primary if t not in reach]
        selected = reach + rest
        try:
            target.write_text(mutate(original, index))
            t0 = time.perf_counter()
            result = _run_pytest(scratch, [*_PYTEST_OPTS, *selected], timeout)
            mutant.outcome = {"passed": "survived", "failed": "killed", "timeout": "timeout"}[result]
            mutant.seconds = round(time.perf_counter() - t0, 2)
        finally:
            target.write_text(original)
        mutant.reached = bool(reach)
        results.append(mutant)
        state["mutants"][key] = asdict(mutant)
        state_file.write_text(json.dumps(state, indent=1))
        print(
            f"{name} {n + 1}/{len(indices)} {mutant.outcome:8} {mutant.seconds:6.1f}s {mutant.description}"
            f"{'' if reach else ' (no test runs the line; module-level lines run only at import)'}",
            flush=True,
        )
    state["skipped_message_mutants"] = skipped
    state["points"] = len(points)
    state["tested"] = len(results)
    state_file.write_text(json.dumps(state, indent=1))
    return results


def _copy_scratch(scratch: Path) -> None:
    """A copy of the working tree to mutate, beside a link to the reference data the tests read (../shared)."""
    if scratch.exists():
        shutil.rmtree(scratch)
    shutil.copytree(REPO, scratch, ignore=shutil.ignore_patterns(".git", "__pycache__", "*.egg-info", "runs"))
    shared = REPO.parent / "shared"
    if not shared.exists():
        shared = Path("/work/shared")
    if shared.exists() and not (scratch.parent / "shared").exists():
        (scratch.parent / "shared").symlink_to(shared)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--module", action="append", choices=sorted(TARGETS), help="module(s) to mutate (default: all)")
    parser.add_argument(
        "--sample",
        action="append",
        default=[],
        metavar="MODULE=N",
        help="test a uniform random sample of N mutants of MODULE (fixed --seed)",
    )
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds before a mutant's test run counts as killed (generous: load can make a run 10x slower)",
    )
    parser.add_argument(
        "--minutes",
        type=float,
        default=None,
        help="start no new mutant after this many minutes (with --sample: a smaller uniform sample)",
    )
    parser.add_argument(
        "--retest-survivors",
        metavar="LABEL",
        default=None,
        help="rerun only the mutants that survived in the earlier results, against the current tests, "
        "and record them under LABEL (e.g. 'after'); the earlier kills stand",
    )
    parser.add_argument(
        "--kills",
        type=Path,
        default=None,
        metavar="JSON",
        help="run each new test alone on each mutant it claims to kill (see benchmarks/mutation_kills.json)",
    )
    parser.add_argument("--report", action="store_true", help="only rewrite the report from the saved results")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    parser.add_argument("--scratch", type=Path, default=Path("/tmp/docintent-mutation"))
    args = parser.parse_args()
    samples = {k: int(v) for k, v in (s.split("=") for s in args.sample)}
    args.out.mkdir(parents=True, exist_ok=True)
    if args.report:
        write_report(args.out, args.seed)
        return 0
    if args.kills:
        _copy_scratch(args.scratch)
        _preload()
        return 1 if check_kills(args.kills, args.scratch, args.out, args.timeout) else 0
    _copy_scratch(args.scratch)
    _preload()
    label = f"_{args.retest_survivors}" if args.retest_survivors else ""
    start = time.time()
    for name in args.module or sorted(TARGETS):
        only = None
        if args.retest_survivors:
            before = json.loads((args.out / f"mutation_{name}.json").read_text())
            only = {k for k, m in before["mutants"].items() if m["outcome"] == "survived"}
            after_file = args.out / f"mutation_{name}{label}.json"
            if after_file.is_file():  # resume: retest only what has not been retested or still survives
                done = json.loads(after_file.read_text())["mutants"]
                only = {k for k in only if k not in done or done[k]["outcome"] == "survived"}
            else:
                after_file.write_text(
                    json.dumps(
                        {
                            "digest": before["digest"],
                            "mutants": {k: m for k, m in before["mutants"].items() if k not in only},
                        },
                        indent=1,
                    )
                )
        deadline = start + 60 * args.minutes if args.minutes else None
        run_module(name, args.scratch, args.out, samples.get(name), args.seed, args.timeout, only, label, deadline)
    write_report(args.out, args.seed)
    return 0


def check_kills(spec: Path, scratch: Path, out: Path, timeout: float) -> int:
    """Runs each new test alone against each mutant it claims to kill (``spec``: a JSON list of
    ``{"module", "test", "mutants": [index, ...]}``); writes ``mutation_kills.md`` / ``.json``. Returns how many
    claims failed (the test passed on its mutant)."""
    doc = json.loads(spec.read_text())
    claims = doc["claims"]
    for name, digest in doc.get("digests", {}).items():
        source = (REPO / "src" / "docintent" / TARGETS[name][0]).read_text()
        if hashlib.blake2b(source.encode(), digest_size=8).hexdigest() != digest:
            raise SystemExit(
                f"{spec}: its mutant numbers for {TARGETS[name][0]} refer to commit {doc.get('commit')}; "
                "the module has changed since, so renumber them (see mutation_points)"
            )
    state_file = out / "mutation_kills.json"
    state = json.loads(state_file.read_text()) if state_file.is_file() else {}
    originals = {name: (REPO / "src" / "docintent" / rel).read_text() for name, (rel, _, _) in TARGETS.items()}
    for claim in claims:
        name, test = claim["module"], claim["test"]
        target = scratch / "src" / "docintent" / TARGETS[name][0]
        _, points, _ = mutation_points(originals[name])
        lines = originals[name].splitlines()
        for index in claim["mutants"]:
            key = f"{test}|{name}|{index}|{hashlib.blake2b(originals[name].encode(), digest_size=8).hexdigest()}"
            if key in state:
                continue
            line, _, kind, text = points[index]
            try:
                target.write_text(mutate(originals[name], index))
                result = _run_pytest(scratch, [*_PYTEST_OPTS, test], timeout)
            finally:
                target.write_text(originals[name])
            state[key] = {
                "test": test,
                "module": TARGETS[name][0],
                "mutant": f"line {line}: {kind} {text}",
                "source": lines[line - 1].strip(),
                "killed": result != "passed",
            }
            state_file.write_text(json.dumps(state, indent=1))
            print(
                f"{'killed ' if result != 'passed' else 'SURVIVED'} {test.split('::')[1]} {name} {line} {kind} {text}",
                flush=True,
            )
    md = ["| new test | mutant (module, line: change) | source line | killed |", "|---|---|---|---|"]
    for entry in state.values():
        md.append(
            f"| `{entry['test'].split('::')[1]}` | {entry['module']} {entry['mutant']} | `{entry['source']}` "
            f"| {'yes' if entry['killed'] else '**no**'} |"
        )
    (out / "mutation_kills.md").write_text(
        "# Each new test against the mutants it is written to kill\n\n" + "\n".join(md) + "\n"
    )
    return sum(not e["killed"] for e in state.values())


def _sample_order(name: str, seed: int) -> tuple[list[int], list[tuple[int, int, str, str]], list[str], int]:
    """The module's mutants in the seeded random order the runs use, its mutation points, its source lines, and
    how many points lie in log / print calls (never tested)."""
    rel = TARGETS[name][0]
    source = (REPO / "src" / "docintent" / rel).read_text()
    tree, points, _ = mutation_points(source)
    quiet = _message_lines(tree)
    order = [i for i, (line, _, _, _) in enumerate(points) if line not in quiet]
    random.Random(seed).shuffle(order)
    return order, points, source.splitlines(), len(points) - len(order)


def write_report(out: Path, seed: int) -> dict:
    """``mutation.md`` / ``mutation.json`` from every module's state files: the score before the tests written
    against the survivors (``mutation_<module>.json``) and after (``mutation_<module>_after.json``), counted
    over the longest finished prefix of the seeded random order (a uniform sample of the module's mutants)."""
    summary: dict[str, dict] = {}
    report_json = out / "mutation.json"
    previous = json.loads(report_json.read_text()) if report_json.is_file() else {}
    for name, (rel, tests, extra) in TARGETS.items():
        before_file = out / f"mutation_{name}.json"
        if not before_file.is_file():
            continue
        before_state = json.loads(before_file.read_text())
        source = (REPO / "src" / "docintent" / rel).read_text()
        if before_state.get("digest") != hashlib.blake2b(source.encode(), digest_size=8).hexdigest():
            # Made on another version of the module: its mutant numbers no longer match the source, so the entry
            # written when the results were current stands.
            if name in previous:
                summary[name] = previous[name]
            print(f"{before_file}: made on another version of {rel}; its earlier report entry is kept", file=sys.stderr)
            continue
        order, points, lines, quiet = _sample_order(name, seed)
        before = before_state["mutants"]
        after_file = out / f"mutation_{name}_after.json"
        after = json.loads(after_file.read_text())["mutants"] if after_file.is_file() else None
        after_state = after or {}
        prefix = []
        for index in order:
            if str(index) not in before:
                break
            prefix.append(str(index))
        if after is not None:
            # A mutant killed before stays killed (added tests cannot revive it); a survivor must have been retested.
            after = {k: after.get(k, before[k]) for k in prefix}
            if any(k not in after or (before[k]["outcome"] == "survived" and k not in after_state) for k in prefix):
                after = None  # the retest has not finished

        def killed(state: dict, keys: list[str]) -> int:
            return sum(state[k]["outcome"] in ("killed", "timeout") for k in keys)

        def row(key: str, points: list = points, before: dict = before, lines: list = lines) -> dict:
            line = points[int(key)][0]
            return {"id": key, "line": line, "mutant": before[key]["description"], "source": lines[line - 1].strip()}

        entry: dict = {
            "module": rel,
            "tests": tests,
            "tests_reaching_the_line_from": extra,
            "mutation_points": len(points),
            "in_log_calls_not_tested": quiet,
            "seed": seed,
            "tested": len(prefix),
            "killed_before": killed(before, prefix),
            "score_before": round(100.0 * killed(before, prefix) / max(len(prefix), 1), 1),
        }
        if after is not None:
            entry.update(
                killed_after=killed(after, prefix),
                score_after=round(100.0 * killed(after, prefix) / max(len(prefix), 1), 1),
                killed_by_new_tests=[
                    row(k) for k in prefix if before[k]["outcome"] == "survived" and after[k]["outcome"] != "survived"
                ],
                survivors=[row(k) for k in prefix if after[k]["outcome"] == "survived"],
            )
        else:
            entry["survivors"] = [row(k) for k in prefix if before[k]["outcome"] == "survived"]
        summary[name] = entry
    md = [
        "| module | guarding tests | mutants tested (of all) | killed before | score before | killed after | score after |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    for s in summary.values():
        tests = ", ".join(t for t in s["tests"] if not t.endswith("_mutants.py")) + "".join(
            f"; {e} where it reaches the line" for e in s["tests_reaching_the_line_from"]
        )
        md.append(
            f"| {s['module']} | {tests} | {s['tested']} (of {s['mutation_points'] - s['in_log_calls_not_tested']}) "
            f"| {s['killed_before']} | {s['score_before']:.1f}% | {s.get('killed_after', '')} "
            f"| {str(s['score_after']) + '%' if 'score_after' in s else ''} |"
        )
    for s in summary.values():
        if s.get("killed_by_new_tests"):
            md += ["", f"Killed by the new tests in {s['module']}:", ""]
            md += [f"- {r['mutant']}: `{r['source']}`" for r in s["killed_by_new_tests"]]
        md += ["", f"Surviving in {s['module']}:", ""]
        md += [f"- {r['mutant']}: `{r['source']}`" for r in s["survivors"]]
    generated = "\n".join(md)
    path = out / "mutation.md"
    notes = ""
    if path.is_file() and _NOTES in path.read_text():
        notes = path.read_text().split(_NOTES, 1)[1]
    path.write_text(f"{_HEADER}\n\n{generated}\n\n{_NOTES}{notes or chr(10)}")
    (out / "mutation.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(generated)
    return summary


_HEADER = """# Mutation testing

Made by `python benchmarks/mutation.py` (one mutant per comparison, boolean operator, constant or returned value;
none inside log calls). A mutant is killed when the guarding tests fail on it. Mutants are tested in a seeded
random order (seed 0), so each module's count is a uniform sample where not all were tested. "Before": the
tests on main; "after": the same mutants with the tests in `tests/test_*_mutants.py` added."""
_NOTES = "<!-- notes below are kept when the tables above are regenerated -->"


if __name__ == "__main__":
    sys.exit(main())
