"""Hostile sweep: docintent used the way a hostile or careless user would, through its real interfaces.

Every case makes its own inputs (in a temporary folder), runs them through the command line (subprocesses),
the Python API (a subprocess running a few lines), the HTTP service (``docintent serve`` on 127.0.0.1) or the
MCP server (``docintent mcp`` over stdio), and classifies what happened:

- **clean error**: refused with one line on standard error that names the input, exit status 1, no traceback
  (for the service: a 4xx answer with a message; for MCP: an error reply with a message);
- **correct**: it worked and did what it should (the check is the case's own: the answer, the file written,
  the row kept);
- **traceback**: a Python traceback or "unexpected error" reached the user (or an HTTP 500);
- **silently wrong**: it exited 0 (or answered 2xx) where it should have refused, or did the wrong thing;
- **hang**: it did not finish within the case's bound (every case has one, 10-90 s);
- **leak**: a planted secret (an endpoint password containing '@', API keys, the service token) appears in
  any output: standard output and error, every file the case wrote (run folders, lock files also after
  ``kill -9``, traces, crash reports), HTTP bodies and events, MCP replies. A leak overrides any other outcome.

Classes: secrets, confinement, stale-data, service-options, http, outputs, options, inputs, bounded-work,
words, config, question-files, folder-walks, run-outputs, resume, pages, ranking, long-questions, run-paths. Servers listen on 127.0.0.1 only, every request loop is bounded in count and time.

    python benchmarks/hostile.py                    # every case -> benchmarks/results/hostile.{json,md}
    python benchmarks/hostile.py --only secrets     # one class (not saved unless --save)
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import http.client
import json
import os
import select
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import threading
import time
import traceback
import zlib
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
SRC = ROOT / "src"
sys.path.insert(0, str(SRC))

from docintent.testing.fake_openai import FakeOpenAI, offered_tools, tool_call  # noqa: E402

# --- planted secrets ---------------------------------------------------------------------------------------

URL_USER = "alice"
URL_PASSWORD = "Pw9f3kQx@Zq8Lm4Rt"  # contains '@'
API_KEY = "sk-hostileKey0123456789abcdef"
PLAIN_KEY = "hunter2hunter2-plain"
ENV_KEY = "envKey-7c0ffee-42xyz"
TOKEN = "tok-Hostile-5e1a9c0ffee77"
#: Fragments whose presence in any output is a leak (each part of the password on either side of its '@',
#: and the Basic credentials an HTTP client derives from the URL).
LEAKS = (
    "Pw9f3kQx",
    "Zq8Lm4Rt",
    "hostileKey0123",
    "hunter2hunter2",
    "envKey-7c0ffee",
    "Hostile-5e1a9c",
    base64.b64encode(f"{URL_USER}:{URL_PASSWORD}".encode()).decode()[:16],
)

OUTCOMES = ("clean error", "correct", "traceback", "silently wrong", "hang", "leak")


# --- running things ----------------------------------------------------------------------------------------


@dataclass
class Proc:
    """A finished (or stopped) process: exit status, output, seconds, whether it ran past its bound."""

    rc: int | None
    out: str
    err: str
    seconds: float
    timed_out: bool = False


class Verdict(Exception):
    """Raised by a case to state its outcome."""

    def __init__(self, outcome: str, note: str = "") -> None:
        super().__init__(note)
        self.outcome = outcome
        self.note = note


@dataclass
class Ctx:
    """What one case may use: its own folder and cache, the environment, the fake model servers."""

    folder: Path
    model_url: str  # a working fake OpenAI endpoint, with the planted credentials in its URL
    failing_url: str  # one that answers 503 to every chat request
    slow_url: str  # one that waits 30 s before every chat reply
    texts: list[str] = field(default_factory=list)  # every output seen, for the leak scan

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("DOCINTENT_", "OPENAI_"))}
        env.update(
            PYTHONPATH=str(SRC),
            DOCINTENT_CACHE_DIR=str(self.folder / "cache"),
            DOCINTENT_THREADS="1",
            PYTHONDONTWRITEBYTECODE="1",
        )
        env.update(extra)
        return env

    def run(
        self,
        args: list[str],
        *,
        timeout: float = 60,
        env: dict[str, str] | None = None,
        python: bool = False,
        cwd: Path | None = None,
    ) -> Proc:
        """``docintent ARGS`` (or ``python ARGS`` when ``python``) in the case's folder, bounded by ``timeout``."""
        command = [sys.executable, *args] if python else [sys.executable, "-m", "docintent", *args]
        start = time.monotonic()
        proc = subprocess.Popen(
            command,
            cwd=cwd or self.folder,
            env=env or self.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            stdin=subprocess.DEVNULL,
            text=True,
            errors="replace",
            start_new_session=True,
        )
        try:
            out, err = proc.communicate(timeout=timeout)
            result = Proc(proc.returncode, out, err, time.monotonic() - start)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, err = proc.communicate()
            result = Proc(None, out, err, time.monotonic() - start, timed_out=True)
        self.texts += [result.out, result.err]
        return result

    def python(self, code: str, *, timeout: float = 60, env: dict[str, str] | None = None) -> Proc:
        return self.run(["-c", code], timeout=timeout, env=env, python=True)


def _has_traceback(text: str) -> bool:
    return "Traceback (most recent call last)" in text or "unexpected error" in text


def refused(p: Proc, *names: str, also: tuple[str, ...] = ()) -> None:
    """The case passes as a clean error when ``p`` was refused in one line naming ``names``."""
    if p.timed_out:
        raise Verdict("hang", f"still running after {p.seconds:.0f} s")
    if _has_traceback(p.err) or _has_traceback(p.out):
        raise Verdict("traceback", _last_line(p.err or p.out))
    lines = [line for line in p.err.splitlines() if line.strip()]
    if p.rc == 0:
        raise Verdict("silently wrong", f"exit 0 where a refusal was due: {_last_line(p.out)}")
    if p.rc != 1 or len(lines) != 1:
        raise Verdict("silently wrong", f"exit {p.rc}, {len(lines)} stderr lines: {_last_line(p.err)}")
    missing = [n for n in (*names, *also) if n.lower() not in lines[0].lower()]
    if missing:
        raise Verdict("silently wrong", f"the message does not name {missing}: {lines[0][:200]}")
    raise Verdict("clean error", lines[0][:160])


def works(p: Proc, check: Callable[[Proc], str | None] | None = None) -> None:
    """The case passes as correct when ``p`` exited 0 and ``check`` (returns a problem or None) is happy."""
    if p.timed_out:
        raise Verdict("hang", f"still running after {p.seconds:.0f} s")
    if _has_traceback(p.err) or _has_traceback(p.out):
        raise Verdict("traceback", _last_line(p.err or p.out))
    if p.rc != 0:
        raise Verdict("silently wrong", f"exit {p.rc}: {_last_line(p.err)}")
    problem = check(p) if check else None
    if problem:
        raise Verdict("silently wrong", problem)
    raise Verdict("correct", _last_line(p.out)[:160])


def _last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1][:240] if lines else ""


def expect(condition: bool, problem: str, good: str = "", outcome: str = "correct") -> None:
    """``outcome`` ("correct", or "clean error" for a refusal the case checked itself) when ``condition``, else
    silently wrong with ``problem``."""
    raise Verdict(outcome if condition else "silently wrong", good if condition else problem)


# --- inputs ------------------------------------------------------------------------------------------------


def png(width: int = 24, height: int = 16, value: int = 128, text_chunk: bytes | None = None) -> bytes:
    """A grey PNG written by hand (optionally with a tEXt chunk)."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    raw = b"".join(b"\0" + bytes([value]) * width for _ in range(height))
    ihdr = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 0, 0, 0, 0])
    extra = chunk(b"tEXt", text_chunk) if text_chunk is not None else b""
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", ihdr)
        + extra
        + chunk(b"IDAT", zlib.compress(raw, 9))
        + chunk(b"IEND", b"")
    )


def png_header(width: int, height: int) -> bytes:
    """A PNG whose valid header declares ``width`` x ``height`` pixels, with no image data behind it."""
    body = b"IHDR" + width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 2, 0, 0, 0])
    ihdr = (13).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")
    end = (0).to_bytes(4, "big") + b"IEND" + zlib.crc32(b"IEND").to_bytes(4, "big")
    return b"\x89PNG\r\n\x1a\n" + ihdr + end


def text_page(path: Path, text: str = "Total: 42") -> Path:
    from PIL import Image, ImageDraw, ImageFont

    image = Image.new("RGB", (420, 120), "white")
    try:
        font = ImageFont.truetype("DejaVuSans.ttf", 28)
    except OSError:
        font = ImageFont.load_default()
    ImageDraw.Draw(image).text((20, 40), text, fill="black", font=font)
    image.save(path)
    return path


def pdf_bytes(pages: int = 1, claim: int | None = None, size: tuple[float, float] = (200, 200)) -> bytes:
    """A PDF of ``pages`` blank pages whose page tree claims ``claim`` pages (default: the truth)."""
    import io

    import pypdfium2 as pdfium

    pdf = pdfium.PdfDocument.new()
    for _ in range(pages):
        pdf.new_page(*size)
    buffer = io.BytesIO()
    pdf.save(buffer)
    data = buffer.getvalue()
    if claim is not None:
        data = data.replace(f"/Count {pages}/".encode(), f"/Count {claim}/".encode())
    return data


def encrypted_pdf(path: Path) -> Path:
    import pypdf

    writer = pypdf.PdfWriter()
    writer.add_blank_page(200, 200)
    writer.encrypt("owner-pw")
    with open(path, "wb") as fh:
        writer.write(fh)
    return path


def dataset(folder: Path, rows: list[dict[str, Any]], *, bom: bool = False, name: str = "samples.jsonl") -> Path:
    """A JSONL dataset in ``folder``; rows without an image get a tiny PNG of their own."""
    folder.mkdir(parents=True, exist_ok=True)
    lines = []
    for i, row in enumerate(rows):
        row = {"question": "What is the total?", "answers": ["42"], "task": "doc", **row}
        if "image" not in row:
            image = folder / f"img{i}.png"
            image.write_bytes(png(value=40 + i))
            row["image"] = image.name
        lines.append(json.dumps(row))
    path = folder / name
    path.write_text(("\ufeff" if bom else "") + "\n".join(lines) + "\n", encoding="utf-8")
    return path


def bench(
    ctx: Ctx,
    data: Path,
    out: Path,
    *extra: str,
    timeout: float = 90,
    env: dict[str, str] | None = None,
    kind: str = "jsonl",
) -> Proc:
    return ctx.run(
        [
            "bench",
            "--dataset",
            f"{kind}:{data}",
            "--brain",
            "scripted",
            "--brain-opt",
            "final=42",
            "--no-progress",
            "--out",
            str(out),
            *extra,
        ],
        timeout=timeout,
        env=env,
    )


def rows_of(out: Path) -> list[dict[str, Any]]:
    path = out / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()] if path.exists() else []


def secret_url(base: str) -> str:
    """``base`` with the planted user and password (the password holds an '@') in it."""
    return base.replace("http://", f"http://{URL_USER}:{URL_PASSWORD}@")


def model_opts(url: str, *extra: str) -> list[str]:
    out = ["--brain", "openai", "--brain-opt", f"base_url={url}", "--brain-opt", "model=fake-vl"]
    for item in extra:
        out += ["--brain-opt", item]
    return out


# --- the service and MCP -----------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Reply:
    status: int
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


class Service:
    """``docintent serve`` on 127.0.0.1 in a subprocess, for the length of a ``with`` block."""

    def __init__(self, ctx: Ctx, *args: str, token: str | None = TOKEN, env: dict[str, str] | None = None) -> None:
        self.ctx = ctx
        self.port = free_port()
        self.token = token
        command = [
            sys.executable,
            "-m",
            "docintent",
            "serve",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--workers",
            "1",
            *args,
        ]
        if token:
            command += ["--token", token]
        self.proc = subprocess.Popen(
            command,
            cwd=ctx.folder,
            env=env or ctx.env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            start_new_session=True,
        )
        self.out = self.err = ""

    def __enter__(self) -> Service:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                self._collect()
                raise Verdict("silently wrong", f"the service did not start: {_last_line(self.err)}")
            with contextlib.suppress(OSError):
                if self.get("/v1/health").status == 200:
                    return self
            time.sleep(0.2)
        raise Verdict("hang", "the service did not start within 60 s")

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
        self._collect()

    def _collect(self) -> None:
        out, err = self.proc.communicate()
        self.out, self.err = out or "", err or ""
        self.ctx.texts += [self.out, self.err]

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
        *,
        auth: bool = True,
        timeout: float = 20,
    ) -> Reply:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=timeout)
        all_headers = dict(headers or {})
        if auth and self.token:
            all_headers.setdefault("Authorization", f"Bearer {self.token}")
        deadline = time.monotonic() + timeout  # for the whole answer: keep-alive comments must not extend it
        try:
            conn.request(method, path, body=body, headers=all_headers)
            try:
                response = conn.getresponse()
            except TimeoutError:
                raise Verdict("hang", f"{method} {path}: no answer within {timeout:.0f} s") from None
            chunks = []
            while True:
                if time.monotonic() > deadline:
                    raise Verdict("hang", f"{method} {path}: the answer did not end within {timeout:.0f} s")
                try:
                    chunk = response.read1(65536)
                except TimeoutError:
                    raise Verdict("hang", f"{method} {path}: no answer within {timeout:.0f} s") from None
                if not chunk:
                    break
                chunks.append(chunk)
            reply = Reply(response.status, {k.lower(): v for k, v in response.getheaders()}, b"".join(chunks))
        finally:
            conn.close()
        self.ctx.texts.append(reply.body.decode("utf-8", "replace"))
        return reply

    def get(self, path: str, **kw: Any) -> Reply:
        return self.request("GET", path, **kw)

    def ask(self, image: bytes, question: str = "What is the total?", **fields: str) -> Reply:
        boundary = "hostileboundary7"
        parts = []
        for name, value in {"question": question, **fields}.items():
            parts.append(f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode())
        parts.append(
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="page.png"\r\n'
            "Content-Type: application/octet-stream\r\n\r\n".encode()
            + image
            + b"\r\n"
        )
        parts.append(f"--{boundary}--\r\n".encode())
        return self.request(
            "POST", "/v1/ask", b"".join(parts), {"Content-Type": f"multipart/form-data; boundary={boundary}"}
        )

    def wait(self, run_id: str, bound: float = 60) -> dict[str, Any]:
        deadline = time.monotonic() + bound
        while time.monotonic() < deadline:
            run = self.get(f"/v1/runs/{run_id}").json()
            if run["status"] in ("done", "failed", "timeout"):
                return run
            time.sleep(0.2)
        raise Verdict("hang", f"run {run_id} still {run['status']} after {bound:.0f} s")

    def raw(self, data: bytes, timeout: float = 10) -> bytes:
        """Send ``data`` as it is and return everything the server answers (within ``timeout``)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as sock:
            sock.sendall(data)
            chunks = []
            end = time.monotonic() + timeout
            while time.monotonic() < end:
                try:
                    chunk = sock.recv(65536)
                except TimeoutError:
                    break
                if not chunk:
                    break
                chunks.append(chunk)
        text = b"".join(chunks)
        self.ctx.texts.append(text.decode("utf-8", "replace"))
        return text


class Mcp:
    """``docintent mcp`` over stdio, spoken to with newline-delimited JSON-RPC (each reply bounded in time)."""

    def __init__(self, ctx: Ctx, *args: str) -> None:
        self.ctx = ctx
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "docintent", "mcp", *args],
            cwd=ctx.folder,
            env=ctx.env(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.ids = 0
        self.err = b""
        self._buffer = b""

    def __enter__(self) -> Mcp:
        reply = self.call(
            "initialize",
            {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "hostile", "version": "1"}},
            bound=60,
        )
        if "result" not in reply:
            raise Verdict("silently wrong", f"the MCP server did not initialise: {reply}")
        self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return self

    def __exit__(self, *exc: object) -> None:
        with contextlib.suppress(OSError):
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        self.err = self.proc.stderr.read()
        self.ctx.texts.append(self.err.decode("utf-8", "replace"))

    def _send(self, message: dict[str, Any]) -> None:
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def call(self, method: str, params: dict[str, Any], bound: float = 60) -> dict[str, Any]:
        self.ids += 1
        self._send({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})
        deadline = time.monotonic() + bound
        while time.monotonic() < deadline:
            while b"\n" in self._buffer:
                line, self._buffer = self._buffer.split(b"\n", 1)
                self.ctx.texts.append(line.decode("utf-8", "replace"))
                message = json.loads(line)
                if message.get("id") == self.ids:
                    return message
            ready, _, _ = select.select([self.proc.stdout], [], [], 0.5)
            if ready:
                chunk = os.read(self.proc.stdout.fileno(), 1 << 20)
                if not chunk:
                    raise Verdict("silently wrong", "the MCP server closed its output")
                self._buffer += chunk
        raise Verdict("hang", f"no MCP reply to {method} within {bound:.0f} s")

    def tool(self, name: str, arguments: dict[str, Any], bound: float = 60) -> tuple[bool, str]:
        """(is_error, the reply's text) of one tool call."""
        reply = self.call("tools/call", {"name": name, "arguments": arguments}, bound=bound)
        if "error" in reply:
            return True, json.dumps(reply["error"])
        result = reply["result"]
        text = " ".join(c.get("text", "") for c in result.get("content", []) if c.get("type") == "text")
        return bool(result.get("isError")), text


def mcp_refused(error: bool, text: str, *names: str) -> None:
    if not error:
        raise Verdict("silently wrong", f"no error reply: {text[:160]}")
    if "Traceback" in text or "unexpected error" in text:
        raise Verdict("traceback", text[:200])
    missing = [n for n in names if n.lower() not in text.lower()]
    if missing:
        raise Verdict("silently wrong", f"the reply does not name {missing}: {text[:200]}")
    raise Verdict("clean error", text[:160])


def http_refused(reply: Reply, status: int, *names: str) -> None:
    if reply.status >= 500:
        raise Verdict("traceback", f"HTTP {reply.status}: {reply.body[:160]!r}")
    if reply.status != status:
        raise Verdict("silently wrong", f"HTTP {reply.status} where {status} was due: {reply.body[:160]!r}")
    text = reply.body.decode("utf-8", "replace")
    missing = [n for n in names if n.lower() not in text.lower()]
    if missing:
        raise Verdict("silently wrong", f"the answer does not name {missing}: {text[:200]}")
    raise Verdict("clean error", f"HTTP {status}: {text[:140]}")


# --- cases ---------------------------------------------------------------------------------------------------

CASES: list[tuple[str, str, Callable[[Ctx], None]]] = []


def case(klass: str, name: str) -> Callable[[Callable[[Ctx], None]], Callable[[Ctx], None]]:
    def register(fn: Callable[[Ctx], None]) -> Callable[[Ctx], None]:
        CASES.append((klass, name, fn))
        return fn

    return register


# -- secrets: every artefact scanned for the planted credentials ------------------------------------------


@case("secrets", "ask with user:pass@ endpoint (password holds '@')")
def _(ctx: Ctx) -> None:
    page = text_page(ctx.folder / "page.png")
    p = ctx.run(["ask", str(page), "What is the total?", "--strategy", "none", *model_opts(ctx.model_url)])
    works(p, lambda p: None if "answer: 42" in p.out else f"no answer 42: {_last_line(p.out)}")


@case("secrets", "ask --json and --trace against an unreachable endpoint with credentials")
def _(ctx: Ctx) -> None:
    page = text_page(ctx.folder / "page.png")
    url = secret_url(f"http://127.0.0.1:{free_port()}/v1")
    p = ctx.run(
        [
            "ask",
            str(page),
            "What is the total?",
            "--strategy",
            "none",
            "--json",
            "--trace",
            str(ctx.folder / "trace.json"),
            *model_opts(url, "max_retries=0"),
        ]
    )
    expect(
        p.rc == 1 and "cannot reach" in p.err and (ctx.folder / "trace.json").exists() and not _has_traceback(p.err),
        f"exit {p.rc}: {_last_line(p.err)}",
        "refused; trace written without credentials",
        outcome="clean error",
    )


@case("secrets", "ask --trace with retry warnings after 5xx")
def _(ctx: Ctx) -> None:
    page = text_page(ctx.folder / "page.png")
    p = ctx.run(
        [
            "ask",
            str(page),
            "What is the total?",
            "--strategy",
            "none",
            "--trace",
            str(ctx.folder / "t.json"),
            *model_opts(ctx.failing_url, "max_retries=2", "backoff=0.01"),
        ]
    )
    expect(
        p.rc == 1 and "retry" in p.err and "503" in p.err,
        f"exit {p.rc}: {p.err[-300:]}",
        "retries warned, error reported, credentials masked",
        outcome="clean error",
    )


@case("secrets", "ask with OPENAI_BASE_URL and OPENAI_API_KEY from the environment")
def _(ctx: Ctx) -> None:
    page = text_page(ctx.folder / "page.png")
    env = ctx.env(OPENAI_BASE_URL=ctx.failing_url, OPENAI_API_KEY=ENV_KEY)
    p = ctx.run(
        [
            "ask",
            str(page),
            "What is the total?",
            "--strategy",
            "none",
            "--brain",
            "openai",
            "--brain-opt",
            "model=fake-vl",
            "--brain-opt",
            "max_retries=1",
            "--brain-opt",
            "backoff=0.01",
            "--json",
        ],
        env=env,
    )
    expect(
        p.rc == 1 and "503" in p.out + p.err,
        f"exit {p.rc}: {_last_line(p.err)}",
        "error without the secrets",
        outcome="clean error",
    )


@case("secrets", "ask with an API key the server rejects (--brain-opt api_key=sk-...)")
def _(ctx: Ctx) -> None:
    page = text_page(ctx.folder / "page.png")
    with FakeOpenAI(_model_script, api_key="the-right-key-000") as server:
        p = ctx.run(
            [
                "ask",
                str(page),
                "What is the total?",
                "--strategy",
                "none",
                *model_opts(secret_url(server.base_url), f"api_key={API_KEY}"),
            ]
        )
    refused(p, "rejected the API key")


@case("secrets", "bench --brain-opt api_key=...: run folder, lock file, refusal of a second run, kill -9")
def _(ctx: Ctx) -> None:
    data = dataset(ctx.folder / "data", [{"id": f"s{i}"} for i in range(6)])
    out = ctx.folder / "run"
    args = [
        "bench",
        "--dataset",
        f"jsonl:{data}",
        "--strategies",
        "none",
        "--no-progress",
        "--out",
        str(out),
        *model_opts(ctx.slow_url, f"api_key={PLAIN_KEY}", "timeout=20", "max_retries=0"),
    ]
    first = subprocess.Popen(
        [sys.executable, "-m", "docintent", *args],
        cwd=ctx.folder,
        env=ctx.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 30
        while not (out / ".docintent.lock").exists() or not (out / ".docintent.lock").read_text().strip():
            if time.monotonic() > deadline:
                raise Verdict("hang", "the first bench never took its lock")
            time.sleep(0.1)
        second = ctx.run(args, timeout=30)
        os.killpg(first.pid, signal.SIGKILL)
        first.wait(timeout=10)
        ctx.texts += list(first.communicate())
        lock = (out / ".docintent.lock").read_text()
        ctx.texts.append(lock)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(first.pid, signal.SIGKILL)
    if "in use by" not in second.err or second.rc != 1:
        raise Verdict("silently wrong", f"the second run was not refused: {_last_line(second.err)}")
    expect("bench" in lock, f"lock file after kill -9: {lock[:100]!r}", "refused naming the holder; no key anywhere")


@case("secrets", "crash report of a command given --api-key")
def _(ctx: Ctx) -> None:
    code = (
        "import sys; import docintent.commands.doctor as d; from docintent.cli import main\n"
        "d.run = lambda args: 1 / 0\n"
        f"sys.argv = ['docintent', 'doctor', '--base-url', {ctx.model_url!r}, '--api-key', {API_KEY!r}]\n"
        "sys.exit(main(sys.argv[1:]))"
    )
    p = ctx.python(code)
    report = p.err.split("traceback written to ")[-1].split()[0] if "traceback written to" in p.err else ""
    if not report or not Path(report).is_file():
        raise Verdict("silently wrong", f"no crash report: {_last_line(p.err)}")
    text = Path(report).read_text()
    ctx.texts.append(text)
    expect(
        "ZeroDivisionError" in text and "--api-key" in text,
        "the report lacks the traceback or the argv",
        "the report keeps the traceback and the option names, not their values",
    )


@case("secrets", "doctor against a working endpoint with credentials")
def _(ctx: Ctx) -> None:
    p = ctx.run(
        ["doctor", "--base-url", ctx.model_url, "--model", "fake-vl", "--api-key", API_KEY, "--timeout", "10"],
        timeout=120,
    )
    expect(
        p.rc in (0, 1) and "result:" in p.out and not _has_traceback(p.err),
        f"exit {p.rc}: {_last_line(p.err)}",
        _last_line(p.out),
    )


@case("secrets", "doctor against a failing endpoint with credentials")
def _(ctx: Ctx) -> None:
    p = ctx.run(["doctor", "--base-url", ctx.failing_url, "--model", "fake-vl", "--timeout", "5"], timeout=120)
    expect(p.rc == 1 and "result: not usable" in p.out, f"exit {p.rc}: {_last_line(p.out)}", _last_line(p.out))


@case("secrets", "search --planner openai with --api-key and credentials in --base-url")
def _(ctx: Ctx) -> None:
    from PIL import Image

    images = ctx.folder / "images"
    images.mkdir()
    Image.new("RGB", (60, 40), "white").save(images / "a.png")
    built = ctx.run(["index", str(images), "--out", str(ctx.folder / "idx"), "--text", "pdf"], timeout=120)
    if built.rc != 0:
        raise Verdict("silently wrong", f"index failed: {_last_line(built.err)}")
    url = secret_url(f"http://127.0.0.1:{free_port()}/v1")
    p = ctx.run(
        [
            "search",
            str(ctx.folder / "idx"),
            "invoice",
            "--method",
            "agent",
            "--planner",
            "openai",
            "--base-url",
            url,
            "--model",
            "m",
            "--api-key",
            API_KEY,
        ]
    )
    refused(p, "cannot reach")


@case("secrets", "bench with credentials in OPENAI_BASE_URL and an unreachable endpoint")
def _(ctx: Ctx) -> None:
    data = dataset(ctx.folder / "data", [{"id": "s0"}, {"id": "s1"}])
    env = ctx.env(OPENAI_BASE_URL=secret_url(f"http://127.0.0.1:{free_port()}/v1"), OPENAI_API_KEY=ENV_KEY)
    p = ctx.run(
        [
            "bench",
            "--dataset",
            f"jsonl:{data}",
            "--brain",
            "openai",
            "--brain-opt",
            "model=m",
            "--brain-opt",
            "max_retries=0",
            "--no-progress",
            "--out",
            str(ctx.folder / "run"),
        ],
        env=env,
    )
    rows = rows_of(ctx.folder / "run")
    expect(
        p.rc == 0 and len(rows) == 2 and all("cannot reach" in (r["error"] or "") for r in rows),
        f"exit {p.rc}, {len(rows)} rows: {_last_line(p.err)}",
        "two error rows naming the masked URL",
    )


@case("secrets", "serve: /v1/health, run JSON, trace.json, SSE with a model endpoint with credentials")
def _(ctx: Ctx) -> None:
    with Service(ctx, *model_opts(ctx.model_url)) as service:
        open_health = service.get("/v1/health", auth=False).json()
        health = service.get("/v1/health").json()
        run_id = service.ask(png(64, 48), brain="openai", strategy="none").json()["id"]
        run = service.wait(run_id)
        service.get(f"/v1/runs/{run_id}/trace.json")
        service.get(f"/v1/runs/{run_id}/events")
    if set(open_health) != {"status", "version"}:
        raise Verdict("silently wrong", f"/v1/health tells a caller without the token {sorted(open_health)}")
    endpoint = health.get("model_endpoint") or {}
    expect(
        health["status"] == "ok"
        and endpoint.get("reachable")
        and "***@" in str(endpoint.get("url"))
        and run["answer"] == "42",
        f"health {health['status']}, endpoint {endpoint}, run {run['status']}",
        "health ok (not degraded), URL masked, run answered",
    )


@case("secrets", "serve: a run whose endpoint fails (error text in run JSON and SSE)")
def _(ctx: Ctx) -> None:
    with Service(ctx, *model_opts(ctx.failing_url, "max_retries=1", "backoff=0.01")) as service:
        run_id = service.ask(png(64, 48), brain="openai", strategy="none").json()["id"]
        run = service.wait(run_id)
        events = service.get(f"/v1/runs/{run_id}/events").body.decode()
    expect(
        run["status"] == "failed" and "503" in (run["error"] or "") and "event: done" in events,
        f"run {run['status']}: {run['error']}",
        "failed with the masked URL",
    )


@case("secrets", "mcp ask with a model endpoint with credentials, working and failing")
def _(ctx: Ctx) -> None:
    page = text_page(ctx.folder / "page.png")
    texts = []
    for url in (ctx.model_url, ctx.failing_url):
        with Mcp(ctx, "--allow", str(ctx.folder), *model_opts(url, "max_retries=1", "backoff=0.01")) as mcp:
            texts.append(
                mcp.tool("ask", {"question": "What is the total?", "image_path": str(page), "strategy": "none"})
            )
    (ok_error, ok_text), (bad_error, bad_text) = texts
    expect(
        not ok_error and '"answer": "42"' in ok_text and bad_error and "503" in bad_text,
        f"replies: {texts}",
        "answered, then refused with the masked URL",
    )


@case("secrets", "serve --token given on the command line: refusal texts and logs")
def _(ctx: Ctx) -> None:
    with Service(ctx) as service:
        wrong = service.get("/v1/tools", headers={"Authorization": f"Bearer {TOKEN}x"}, auth=False)
        service.get("/v1/tools", headers={"Authorization": f"Basic {TOKEN}"}, auth=False)
    http_refused(wrong, 401, "bearer token")


# -- confinement ----------------------------------------------------------------------------------------------


def _outside(ctx: Ctx) -> Path:
    secret = ctx.folder / "outside" / "private.png"
    secret.parent.mkdir(parents=True, exist_ok=True)
    secret.write_bytes(png(value=7))
    return secret


@case("confinement", "a symlink in the dataset folder to a file outside it")
def _(ctx: Ctx) -> None:
    secret = _outside(ctx)
    folder = ctx.folder / "data"
    folder.mkdir()
    (folder / "link.png").symlink_to(secret)
    data = dataset(folder, [{"id": "s0", "image": "link.png"}])
    refused(bench(ctx, data, ctx.folder / "run"), "link.png", "--allow-outside-paths")


@case("confinement", "a symlinked sub-folder leading out of the dataset folder")
def _(ctx: Ctx) -> None:
    secret = _outside(ctx)
    folder = ctx.folder / "data"
    folder.mkdir()
    (folder / "images").symlink_to(secret.parent, target_is_directory=True)
    data = dataset(folder, [{"id": "s0", "image": "images/private.png"}])
    refused(bench(ctx, data, ctx.folder / "run"), "images/private.png", "outside the dataset folder")


@case("confinement", "a chain of two links, the second one leading out")
def _(ctx: Ctx) -> None:
    secret = _outside(ctx)
    folder = ctx.folder / "data"
    folder.mkdir()
    (folder / "hop.png").symlink_to(secret)
    (folder / "first.png").symlink_to(folder / "hop.png")
    data = dataset(folder, [{"id": "s0", "image": "first.png"}])
    refused(bench(ctx, data, ctx.folder / "run"), "first.png")


@case("confinement", "../ and absolute image paths")
def _(ctx: Ctx) -> None:
    secret = _outside(ctx)
    data = dataset(ctx.folder / "data", [{"id": "s0", "image": "../outside/private.png"}])
    first = bench(ctx, data, ctx.folder / "run")
    data = dataset(ctx.folder / "data2", [{"id": "s0", "image": str(secret)}])
    second = bench(ctx, data, ctx.folder / "run2")
    if first.rc != 1 or "--allow-outside-paths" not in first.err or _has_traceback(first.err):
        refused(first, "--allow-outside-paths")  # states what went wrong with the first
    refused(second, str(secret), "--allow-outside-paths")


@case("confinement", "a link inside the folder pointing inside it still works")
def _(ctx: Ctx) -> None:
    folder = ctx.folder / "data"
    folder.mkdir()
    (folder / "real.png").write_bytes(png(value=90))
    (folder / "alias.png").symlink_to(folder / "real.png")
    data = dataset(folder, [{"id": "s0", "image": "alias.png"}])
    out = ctx.folder / "run"
    works(
        bench(ctx, data, out),
        lambda p: None if rows_of(out) and rows_of(out)[0]["error"] is None else f"row: {rows_of(out)[:1]}",
    )


@case("confinement", "--allow-outside-paths lets the outside link through")
def _(ctx: Ctx) -> None:
    secret = _outside(ctx)
    folder = ctx.folder / "data"
    folder.mkdir()
    (folder / "link.png").symlink_to(secret)
    data = dataset(folder, [{"id": "s0", "image": "link.png"}])
    out = ctx.folder / "run"
    works(
        bench(ctx, data, out, "--allow-outside-paths"),
        lambda p: None if rows_of(out) and rows_of(out)[0]["error"] is None else "the row failed",
    )


@case("confinement", "a WildDoc TSV image_path through a link out of the folder")
def _(ctx: Ctx) -> None:
    secret = _outside(ctx)
    folder = ctx.folder / "wd"
    folder.mkdir()
    (folder / "x.png").symlink_to(secret)
    (folder / "w.tsv").write_text("index\tquestion\tanswer\timage_path\nDocVQA-val-1-1\tq\t42\tx.png\n")
    refused(bench(ctx, folder / "w.tsv", ctx.folder / "run", kind="wilddoc"), "x.png", "--allow-outside-paths")


@case("confinement", "a WildDoc folder of JSONL with a link out")
def _(ctx: Ctx) -> None:
    secret = _outside(ctx)
    folder = ctx.folder / "wd"
    folder.mkdir()
    (folder / "x.png").symlink_to(secret)
    (folder / "a.jsonl").write_text(
        json.dumps({"index": "DocVQA-val-1-1", "question": "q", "answer": "42", "image_path": "x.png"}) + "\n"
    )
    refused(bench(ctx, folder, ctx.folder / "run", kind="wilddoc"), "x.png")


@case("confinement", "MCP: an image path through a link out of the allowed folder")
def _(ctx: Ctx) -> None:
    secret = _outside(ctx)
    allowed = ctx.folder / "allowed"
    allowed.mkdir()
    (allowed / "link.png").symlink_to(secret)
    with Mcp(ctx, "--allow", str(allowed)) as mcp:
        error, text = mcp.tool("diagnose", {"image_path": str(allowed / "link.png")})
    mcp_refused(error, text, "outside the folders")


@case("confinement", "MCP: restore output_path through a link out of the allowed folder")
def _(ctx: Ctx) -> None:
    allowed = ctx.folder / "allowed"
    allowed.mkdir()
    (allowed / "page.png").write_bytes(png(64, 48, 200))
    victim = ctx.folder / "outside" / "victim.png"
    victim.parent.mkdir()
    victim.write_bytes(b"keep me")
    (allowed / "out.png").symlink_to(victim)
    with Mcp(ctx, "--allow", str(allowed)) as mcp:
        error, text = mcp.tool(
            "restore",
            {"tools": ["rotate_90"], "image_path": str(allowed / "page.png"), "output_path": str(allowed / "out.png")},
        )
    if victim.read_bytes() != b"keep me":
        raise Verdict("silently wrong", "the file outside the allowed folder was overwritten")
    mcp_refused(error, text, "outside the folders")


# -- stale or mixed data ---------------------------------------------------------------------------------------


def _scores(out: Path) -> dict[str, float]:
    return {r["sample"]["id"]: r["score"] for r in rows_of(out)}


@case("stale-data", "resume --out with another dataset")
def _(ctx: Ctx) -> None:
    first = dataset(ctx.folder / "a", [{"id": "a0"}, {"id": "a1"}])
    other = dataset(ctx.folder / "b", [{"id": "b0"}])
    out = ctx.folder / "run"
    bench(ctx, first, out)
    p = bench(ctx, other, out)
    if any(r["sample"]["id"] == "b0" for r in rows_of(out)):
        raise Verdict("silently wrong", "the other dataset's rows were appended")
    refused(p, str(out), "another --out", also=("--dataset",))


@case("stale-data", "resume with the same dataset spelled another way (relative vs absolute)")
def _(ctx: Ctx) -> None:
    data = dataset(ctx.folder / "a", [{"id": "a0"}, {"id": "a1"}])
    out = ctx.folder / "run"
    bench(ctx, Path("a") / data.name, out)
    p = bench(ctx, data.resolve(), out)
    works(p, lambda p: None if "2 already done" in p.out else f"not resumed: {p.out.splitlines()[:1]}")


@case("stale-data", "a sample's gold answer edited between two runs")
def _(ctx: Ctx) -> None:
    data = dataset(ctx.folder / "a", [{"id": "a0", "answers": ["42"]}, {"id": "a1"}])
    out = ctx.folder / "run"
    bench(ctx, data, out)
    before = _scores(out)
    dataset(ctx.folder / "a", [{"id": "a0", "answers": ["nine hundred"]}, {"id": "a1"}])
    bench(ctx, data, out)
    after = _scores(out)
    gold = {r["sample"]["id"]: r["sample"]["answers"] for r in rows_of(out)}
    expect(
        before["a0"] == 1.0 and after["a0"] == 0.0 and gold["a0"] == ["nine hundred"] and after["a1"] == 1.0,
        f"scores before {before}, after {after}, gold {gold}",
        "re-run and scored with the new gold",
    )


@case("stale-data", "a sample's question edited between two runs")
def _(ctx: Ctx) -> None:
    data = dataset(ctx.folder / "a", [{"id": "a0"}])
    out = ctx.folder / "run"
    bench(ctx, data, out)
    dataset(ctx.folder / "a", [{"id": "a0", "question": "What is the date?"}])
    p = bench(ctx, data, out)
    rows = rows_of(out)
    works(
        p,
        lambda p: (
            None
            if rows[-1]["sample"]["question"] == "What is the date?" and "1 changed" in p.out
            else f"kept the old row: {rows[-1]['sample']['question']!r}"
        ),
    )


@case("stale-data", "a sample's image replaced (same name, other bytes)")
def _(ctx: Ctx) -> None:
    data = dataset(ctx.folder / "a", [{"id": "a0"}])
    out = ctx.folder / "run"
    bench(ctx, data, out)
    (ctx.folder / "a" / "img0.png").write_bytes(png(value=250))
    p = bench(ctx, data, out)
    works(p, lambda p: None if "1 changed" in p.out else f"not re-run: {p.out.splitlines()[:1]}")


@case("stale-data", "an unchanged dataset resumes without re-running anything")
def _(ctx: Ctx) -> None:
    data = dataset(ctx.folder / "a", [{"id": f"a{i}"} for i in range(4)])
    out = ctx.folder / "run"
    bench(ctx, data, out)
    p = bench(ctx, data, out)
    works(p, lambda p: None if "0 new, 4 already done" in p.out else f"{p.out.splitlines()[:1]}")


@case("stale-data", "a lone surrogate in a JSONL question: an error row, the run goes on, resume works")
def _(ctx: Ctx) -> None:
    folder = ctx.folder / "a"
    folder.mkdir()
    (folder / "i.png").write_bytes(png())
    lines = [
        '{"id": "ok", "image": "i.png", "question": "q", "answers": ["42"], "task": "doc"}',
        '{"id": "bad", "image": "i.png", "question": "q\\ud800", "answers": ["42"], "task": "doc"}',
        '{"id": "ok2", "image": "i.png", "question": "q", "answers": ["42"], "task": "doc"}',
    ]
    (folder / "s.jsonl").write_text("\n".join(lines) + "\n")
    out = ctx.folder / "run"
    first = bench(ctx, folder / "s.jsonl", out)
    again = bench(ctx, folder / "s.jsonl", out)
    errors = {r["sample"]["id"]: r["error"] for r in rows_of(out)}
    if first.rc != 0 or again.rc != 0:
        works(first if first.rc else again)
    expect(
        errors.get("ok") is None and errors.get("ok2") is None and "not valid Unicode" in (errors.get("bad") or ""),
        f"rows {errors}",
        "one error row, two good rows, resumed cleanly",
    )


@case("stale-data", "a lone surrogate in a JSONL sample id")
def _(ctx: Ctx) -> None:
    folder = ctx.folder / "a"
    folder.mkdir()
    (folder / "i.png").write_bytes(png())
    lines = [
        '{"id": "s\\udc80", "image": "i.png", "question": "q", "answers": ["42"], "task": "doc"}',
        '{"id": "fine", "image": "i.png", "question": "q", "answers": ["42"], "task": "doc"}',
    ]
    (folder / "s.jsonl").write_text("\n".join(lines) + "\n")
    out = ctx.folder / "run"
    p = bench(ctx, folder / "s.jsonl", out)
    bench(ctx, folder / "s.jsonl", out)
    rows = rows_of(out)
    works(p, lambda p: None if len(rows) == 2 and sum(1 for r in rows if r["error"]) == 1 else f"rows {rows}")


@case("stale-data", "a TSV with bytes that are not UTF-8 in one row")
def _(ctx: Ctx) -> None:
    image = base64.b64encode(png(80, 60)).decode()
    data = (
        f"index\tquestion\tanswer\timage\nDocVQA-val-1-1\tq\t42\t{image}\n".encode()
        + b"DocVQA-val-2-1\tq \xff\xfe caf\xe9\t42\t"
        + image.encode()
        + b"\n"
    )
    (ctx.folder / "w.tsv").write_bytes(data)
    out = ctx.folder / "run"
    p = bench(ctx, ctx.folder / "w.tsv", out, kind="wilddoc")
    rows = {r["sample"]["id"]: r["error"] for r in rows_of(out)}
    works(
        p,
        lambda p: (
            None
            if rows.get("DocVQA-val-1-1") is None and "w.tsv:3" in (rows.get("DocVQA-val-2-1") or "")
            else f"rows {rows}"
        ),
    )


@case("stale-data", "a JSONL dataset that starts with a byte-order mark")
def _(ctx: Ctx) -> None:
    data = dataset(ctx.folder / "a", [{"id": "a0"}, {"id": "a1"}], bom=True)
    out = ctx.folder / "run"
    works(bench(ctx, data, out), lambda p: None if len(rows_of(out)) == 2 else "rows missing")


@case("stale-data", "a WildDoc TSV that starts with a byte-order mark")
def _(ctx: Ctx) -> None:
    image = base64.b64encode(png(80, 60)).decode()
    (ctx.folder / "w.tsv").write_text(f"\ufeffindex\tquestion\tanswer\timage\nDocVQA-val-1-1\tq\t42\t{image}\n")
    out = ctx.folder / "run"
    works(
        bench(ctx, ctx.folder / "w.tsv", out, kind="wilddoc"),
        lambda p: None if len(rows_of(out)) == 1 and rows_of(out)[0]["error"] is None else f"{rows_of(out)}",
    )


@case("stale-data", "a row with an empty list of gold answers")
def _(ctx: Ctx) -> None:
    data = dataset(ctx.folder / "a", [{"id": "a0", "answers": []}, {"id": "a1"}])
    out = ctx.folder / "run"
    p = bench(ctx, data, out)
    rows = {r["sample"]["id"]: r["error"] for r in rows_of(out)}
    works(p, lambda p: None if "no gold answer" in (rows.get("a0") or "") and rows.get("a1") is None else f"{rows}")


@case("stale-data", "kill -9 mid-run, then resume: no row lost or repeated")
def _(ctx: Ctx) -> None:
    data = dataset(ctx.folder / "a", [{"id": f"a{i}"} for i in range(30)])
    out = ctx.folder / "run"
    args = [
        "bench",
        "--dataset",
        f"jsonl:{data}",
        "--brain",
        "scripted",
        "--brain-opt",
        "final=42",
        "--no-progress",
        "--out",
        str(out),
    ]
    proc = subprocess.Popen(
        [sys.executable, "-m", "docintent", *args],
        cwd=ctx.folder,
        env=ctx.env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while len(rows_of(out)) < 3 and time.monotonic() < deadline and proc.poll() is None:
        time.sleep(0.05)
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.communicate()
    p = bench(ctx, data, out)
    ids = [r["sample"]["id"] for r in rows_of(out)]
    works(
        p,
        lambda p: (
            None if sorted(ids) == sorted(f"a{i}" for i in range(30)) else f"{len(ids)} rows, {len(set(ids))} distinct"
        ),
    )


# -- service options: refused at start, never a service that starts open or broken ----------------------------


def _serve_refused(ctx: Ctx, args: list[str], *names: str, env: dict[str, str] | None = None) -> None:
    p = ctx.run(["serve", "--host", "127.0.0.1", "--port", str(free_port()), *args], timeout=25, env=env)
    if p.timed_out:
        raise Verdict("silently wrong", "the service started (killed after 25 s)")
    refused(p, *names)


for _label, _args, _names in [
    ("--token ''", ["--token", ""], ("empty", "--token")),
    ("--token of spaces", ["--token", "        "], ("empty",)),
    ("--token with a newline", ["--token", "abcdefgh\nijk"], ("printable",)),
    ("--token too short", ["--token", "abc"], ("at least 8",)),
    ("--timeout nan", ["--timeout", "nan"], ("--timeout",)),
    ("--timeout 0", ["--timeout", "0"], ("--timeout",)),
    ("--timeout -5", ["--timeout", "-5"], ("--timeout",)),
    ("--keep-minutes inf", ["--keep-minutes", "inf"], ("--keep-minutes",)),
    ("--keep-runs 0", ["--keep-runs", "0"], ("--keep-runs",)),
    ("--max-pixels 0", ["--max-pixels", "0"], ("--max-pixels",)),
    ("--max-pixels -1", ["--max-pixels", "-1"], ("--max-pixels",)),
    ("--max-upload-mb nan", ["--max-upload-mb", "nan"], ("--max-upload-mb",)),
    ("--max-upload-mb inf", ["--max-upload-mb", "inf"], ("--max-upload-mb",)),
    ("--max-upload-mb 0", ["--max-upload-mb", "0"], ("--max-upload-mb",)),
    ("--port -1", ["--port", "-1"], ("--port",)),
    ("--port 70000", ["--port", "70000"], ("--port",)),
    ("--workers 0", ["--workers", "0"], ("--workers",)),
    ("--brain nosuch", ["--brain", "nosuch"], ("nosuch", "valid brains")),
    ("--brain openai without an endpoint", ["--brain", "openai"], ("no endpoint",)),
    (
        "--brain openai with an option typo",
        ["--brain", "openai", "--brain-opt", "base_url=http://127.0.0.1:9/v1", "--brain-opt", "tiemout=3"],
        ("tiemout",),
    ),
    ("--runs that is a file", ["--runs", "/etc/hostname"], ("--runs",)),
]:
    case("service-options", f"serve {_label}")(lambda ctx, a=_args, n=_names: _serve_refused(ctx, a, *n))


@case("service-options", "serve with DOCINTENT_SERVE_TOKEN set but empty")
def _(ctx: Ctx) -> None:
    _serve_refused(ctx, [], "DOCINTENT_SERVE_TOKEN", "empty", env=ctx.env(DOCINTENT_SERVE_TOKEN=""))


@case("service-options", "serve with a bad DOCINTENT_MAX_PIXELS")
def _(ctx: Ctx) -> None:
    _serve_refused(ctx, [], "DOCINTENT_MAX_PIXELS", env=ctx.env(DOCINTENT_MAX_PIXELS="lots"))


# -- HTTP: every header and form value parsed with bounds ---------------------------------------------------


def _finished_run(service: Service) -> str:
    run_id = service.ask(png(64, 48), strategy="none", brain="scripted").json()["id"]
    service.wait(run_id)
    return run_id


def _scripted_service(ctx: Ctx) -> Service:
    return Service(ctx, "--brain", "scripted", "--timeout", "20")


for _label, _value in [
    ("Arabic-Indic digits", "١٢".encode()),
    ("5,000 digits", b"9" * 5000),
    ("a negative number", b"-1"),
    ("superscript two (latin-1)", b"\xb2"),
    ("a number with spaces inside", b"1 2"),
]:

    @case("http", f"Last-Event-ID of {_label}")
    def _(ctx: Ctx, value: bytes = _value) -> None:
        with _scripted_service(ctx) as service:
            run_id = _finished_run(service)
            request = (
                (
                    f"GET /v1/runs/{run_id}/events HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
                    "Last-Event-ID: "
                ).encode()
                + value
                + b"\r\nConnection: close\r\n\r\n"
            )
            answer = service.raw(request)
        status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0
        if status >= 500 or "Traceback" in service.err:
            raise Verdict("traceback", f"HTTP {status}; log: {_last_line(service.err)}")
        expect(
            status == 400 and b"Last-Event-ID" in answer,
            f"HTTP {status}: {answer[:200]!r}",
            "HTTP 400 naming Last-Event-ID",
            outcome="clean error",
        )


@case("http", "Last-Event-ID past the end of a finished run returns at once")
def _(ctx: Ctx) -> None:
    with _scripted_service(ctx) as service:
        run_id = _finished_run(service)
        start = time.monotonic()
        reply = service.get(f"/v1/runs/{run_id}/events", headers={"Last-Event-ID": "1000000"}, timeout=20)
        seconds = time.monotonic() - start
    expect(
        reply.status == 200 and seconds < 3,
        f"HTTP {reply.status} after {seconds:.1f} s",
        f"ended after {seconds:.2f} s",
    )


@case("http", "Last-Event-ID within a finished run replays the rest and ends")
def _(ctx: Ctx) -> None:
    with _scripted_service(ctx) as service:
        run_id = _finished_run(service)
        everything = service.get(f"/v1/runs/{run_id}/events").body.decode()
        rest = service.get(f"/v1/runs/{run_id}/events", headers={"Last-Event-ID": "1"}).body.decode()
    ids = [int(line[4:]) for line in everything.splitlines() if line.startswith("id: ")]
    later = [int(line[4:]) for line in rest.splitlines() if line.startswith("id: ")]
    expect(
        later == [i for i in ids if i > 1] and "event: done" in rest,
        f"ids {ids} then {later}",
        f"events {later[:1]}..{later[-1:]} then done",
    )


@case("http", "Content-Length of 5,000 digits")
def _(ctx: Ctx) -> None:
    with _scripted_service(ctx) as service:
        answer = service.raw(
            b"POST /v1/ask HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
            + TOKEN.encode()
            + b"\r\nContent-Length: "
            + b"9" * 5000
            + b"\r\n\r\nxx"
        )
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0
    if status >= 500 or "Traceback" in service.err:
        raise Verdict("traceback", f"HTTP {status}; log: {_last_line(service.err)}")
    expect(400 <= status < 500, f"HTTP {status}: {answer[:120]!r}", f"HTTP {status}", outcome="clean error")


for _field_name, _value in [
    ("page", "²"),
    ("page", "1e9"),
    ("page", "99999999999999999999999"),
    ("page", "-1"),
    ("max_rounds", "99999"),
    ("max_rounds", "٣"),
]:

    @case("http", f"form field {_field_name}={_value!r}")
    def _(ctx: Ctx, name: str = _field_name, value: str = _value) -> None:
        with _scripted_service(ctx) as service:
            reply = service.ask(png(64, 48), **{name: value})
        http_refused(reply, 400, name)


@case("http", "a client that disconnects mid-upload")
def _(ctx: Ctx) -> None:
    with _scripted_service(ctx) as service:
        body = b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.png"\r\n\r\n' + b"x" * 50000
        head = (
            f"POST /v1/ask HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {TOKEN}\r\n"
            f"Content-Type: multipart/form-data; boundary=b\r\nContent-Length: 900000\r\n\r\n"
        ).encode()
        for _ in range(3):
            with socket.create_connection(("127.0.0.1", service.port), timeout=5) as sock:
                sock.sendall(head + body)
            time.sleep(0.3)
        time.sleep(1.0)
        alive = service.get("/v1/health").status == 200
    if "Traceback" in service.err:
        raise Verdict("traceback", _last_line(service.err))
    expect(alive, "the service stopped answering", "no traceback in the log; the service goes on")


@case("http", "an Authorization header with bytes that are not ASCII")
def _(ctx: Ctx) -> None:
    with _scripted_service(ctx) as service:
        answer = service.raw(
            b"GET /v1/tools HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \xff\xfe\xe9t\xe9\r\nConnection: close\r\n\r\n"
        )
    status = int(answer.split(b" ", 2)[1]) if answer.startswith(b"HTTP/") else 0
    if status >= 500 or "Traceback" in service.err:
        raise Verdict("traceback", f"HTTP {status}; log: {_last_line(service.err)}")
    expect(status == 401, f"HTTP {status}", "HTTP 401", outcome="clean error")


@case("http", "an Authorization header that is only 'Bearer'")
def _(ctx: Ctx) -> None:
    with _scripted_service(ctx) as service:
        reply = service.get("/v1/tools", headers={"Authorization": "Bearer"}, auth=False)
    http_refused(reply, 401, "bearer token")


@case("http", "/v1/health without the token shows only the status")
def _(ctx: Ctx) -> None:
    with _scripted_service(ctx) as service:
        health = service.get("/v1/health", auth=False).json()
        wrong = service.get("/v1/health", headers={"Authorization": "Bearer nope-nope-nope"}, auth=False).json()
    expect(
        set(health) == {"status", "version"} and set(wrong) == {"status", "version"},
        f"{health} / {wrong}",
        "status and version only",
    )


@case("http", "malformed run ids and page names")
def _(ctx: Ctx) -> None:
    with _scripted_service(ctx) as service:
        run_id = _finished_run(service)
        replies = [
            service.get(path)
            for path in (
                "/v1/runs/..%2F..%2Fetc",
                "/v1/runs/" + "0" * 32,
                f"/v1/runs/{run_id}/pages/..%2F..%2Fx.jpg",
                f"/v1/runs/{run_id}/pages/{'f' * 5000}.jpg",
                f"/v1/runs/{run_id.upper()}",
            )
        ]
    statuses = [r.status for r in replies]
    if any(s >= 500 for s in statuses):
        raise Verdict("traceback", f"statuses {statuses}")
    expect(all(s == 404 for s in statuses), f"statuses {statuses}", "HTTP 404 each")


@case("http", "a question of 100,000 characters and an empty one")
def _(ctx: Ctx) -> None:
    with _scripted_service(ctx) as service:
        long = service.ask(png(64, 48), question="why " * 25000)
        empty = service.ask(png(64, 48), question="   ")
    expect(
        long.status == 400 and empty.status == 400,
        f"HTTP {long.status} / {empty.status}",
        "HTTP 400 each",
        outcome="clean error",
    )


@case("http", "an upload that is not an image, and one over the pixel limit")
def _(ctx: Ctx) -> None:
    with Service(ctx, "--brain", "scripted", "--max-pixels", "1000") as service:
        text = service.ask(b"just some words")
        big = service.ask(png(100, 100))
    expect(
        text.status == 415 and big.status == 400,
        f"HTTP {text.status} / {big.status}: {big.body[:100]!r}",
        "HTTP 415 / 400",
        outcome="clean error",
    )


# -- outputs: written through links and devices, never replacing them ------------------------------------------


def _ask_trace(ctx: Ctx, target: Path | str) -> Proc:
    page = ctx.folder / "page.png"
    page.write_bytes(png(64, 48, 230))
    return ctx.run(
        ["ask", str(page), "What is the total?", "--strategy", "none", "--brain", "scripted", "--trace", str(target)]
    )


def null_device(folder: Path) -> Path:
    """A character device to write into: a private copy of /dev/null made in ``folder`` when this process may
    make one (root), so a build that replaces devices destroys only the copy; else /dev/null itself (which a
    process that is not root cannot replace)."""
    if os.geteuid() == 0:
        node = folder / "null-device"
        os.mknod(node, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        return node
    return Path("/dev/null")


def _run_folder(ctx: Ctx) -> Path:
    run = ctx.folder / "run"
    run.mkdir()
    row = {
        "sample": {"id": "a", "task": "doc", "subset": "DocVQA", "answers": ["42"]},
        "strategy": "none",
        "answer": "42",
        "error": None,
        "score": 1.0,
    }
    (run / "results.jsonl").write_text(json.dumps(row) + "\n")
    return run


@case("outputs", "--trace /dev/null (a character device)")
def _(ctx: Ctx) -> None:
    device = null_device(ctx.folder)
    p = _ask_trace(ctx, device)
    works(p, lambda p: None if stat.S_ISCHR(os.lstat(device).st_mode) else f"{device} is no longer a device")


@case("outputs", "--trace to a symlink: the link stays, its target gets the trace")
def _(ctx: Ctx) -> None:
    target = ctx.folder / "real.json"
    target.write_text("old")
    link = ctx.folder / "link.json"
    link.symlink_to(target)
    p = _ask_trace(ctx, link)
    works(
        p,
        lambda p: (
            None
            if link.is_symlink() and target.read_text().startswith("{")
            else f"link {'kept' if link.is_symlink() else 'replaced'}, target {target.read_text()[:20]!r}"
        ),
    )


@case("outputs", "--trace to a dangling symlink creates its target")
def _(ctx: Ctx) -> None:
    target = ctx.folder / "sub" / "made.json"
    target.parent.mkdir()
    link = ctx.folder / "dangling.json"
    link.symlink_to(target)
    p = _ask_trace(ctx, link)
    works(p, lambda p: None if link.is_symlink() and target.is_file() else "the link was replaced or not followed")


@case("outputs", "--trace to a named pipe nobody reads")
def _(ctx: Ctx) -> None:
    fifo = ctx.folder / "pipe"
    os.mkfifo(fifo)
    p = _ask_trace(ctx, fifo)
    if stat.S_ISFIFO(os.lstat(fifo).st_mode) is False:
        raise Verdict("silently wrong", "the pipe was replaced by a file")
    refused(p, str(fifo), "no process is reading")


@case("outputs", "--trace to a named pipe someone reads")
def _(ctx: Ctx) -> None:
    fifo = ctx.folder / "pipe"
    os.mkfifo(fifo)
    got: list[bytes] = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()), daemon=True)
    reader.start()
    time.sleep(0.2)
    p = _ask_trace(ctx, fifo)
    reader.join(timeout=10)
    works(
        p,
        lambda p: (
            None
            if got and got[0].startswith(b"{") and stat.S_ISFIFO(os.lstat(fifo).st_mode)
            else "nothing arrived through the pipe"
        ),
    )


@case("outputs", "--trace to a folder and to a file under a file")
def _(ctx: Ctx) -> None:
    (ctx.folder / "blocker").write_text("x")
    first = _ask_trace(ctx, ctx.folder)
    if first.rc != 1 or _has_traceback(first.err):
        refused(first, str(ctx.folder))
    refused(_ask_trace(ctx, ctx.folder / "blocker" / "t.json"), "blocker")


@case("outputs", "restore -o to a symlink")
def _(ctx: Ctx) -> None:
    page = ctx.folder / "page.png"
    page.write_bytes(png(64, 48, 200))
    target = ctx.folder / "real.png"
    target.write_bytes(b"old")
    link = ctx.folder / "out.png"
    link.symlink_to(target)
    p = ctx.run(["restore", str(page), "-t", "rotate_90", "-o", str(link)])
    works(
        p,
        lambda p: (
            None
            if link.is_symlink() and target.read_bytes().startswith(b"\x89PNG")
            else "the link was replaced or its target not written"
        ),
    )


@case("outputs", "restore -o through a link to /dev/null")
def _(ctx: Ctx) -> None:
    page = ctx.folder / "page.png"
    page.write_bytes(png(64, 48, 200))
    device = null_device(ctx.folder)
    link = ctx.folder / "discard.png"
    link.symlink_to(device)
    p = ctx.run(["restore", str(page), "-t", "rotate_90", "-o", str(link)])
    works(
        p,
        lambda p: (
            None
            if link.is_symlink() and stat.S_ISCHR(os.lstat(device).st_mode)
            else "the link or the device was replaced"
        ),
    )


@case("outputs", "restore -o with a suffix it cannot write, and to a folder")
def _(ctx: Ctx) -> None:
    page = ctx.folder / "page.png"
    page.write_bytes(png(64, 48, 200))
    first = ctx.run(["restore", str(page), "-t", "rotate_90", "-o", str(ctx.folder / "out.txt")])
    if first.rc != 1 or ".txt" not in first.err:
        refused(first, ".txt")
    (ctx.folder / "d.png").mkdir()
    refused(ctx.run(["restore", str(page), "-t", "rotate_90", "-o", str(ctx.folder / "d.png")]), "d.png", "folder")


@case("outputs", "score --out to a symlink and to /dev/null")
def _(ctx: Ctx) -> None:
    run = _run_folder(ctx)
    target = ctx.folder / "scores.md"
    target.write_text("old")
    link = ctx.folder / "link.md"
    link.symlink_to(target)
    first = ctx.run(["score", str(run), "--out", str(link)])
    device = null_device(ctx.folder)
    second = ctx.run(["score", str(run), "--out", str(device)])
    if second.rc != 0:
        works(second)
    works(
        first,
        lambda p: (
            None
            if link.is_symlink() and "###" in target.read_text() and stat.S_ISCHR(os.lstat(device).st_mode)
            else "link replaced or target not written"
        ),
    )


@case("outputs", "a planted lock-file symlink in a run folder")
def _(ctx: Ctx) -> None:
    victim = ctx.folder / "victim.txt"
    victim.write_text("precious")
    data = dataset(ctx.folder / "data", [{"id": "a0"}])
    out = ctx.folder / "run"
    out.mkdir()
    (out / ".docintent.lock").symlink_to(victim)
    p = bench(ctx, data, out)
    if victim.read_text() != "precious":
        raise Verdict("silently wrong", "the lock truncated the file its link points to")
    refused(p, ".docintent.lock", "not a regular file")


@case("outputs", "bench --out that is a symlink to a folder")
def _(ctx: Ctx) -> None:
    data = dataset(ctx.folder / "data", [{"id": "a0"}])
    real = ctx.folder / "real-run"
    real.mkdir()
    (ctx.folder / "run").symlink_to(real, target_is_directory=True)
    p = bench(ctx, data, ctx.folder / "run")
    works(
        p,
        lambda p: (
            None
            if (real / "results.jsonl").is_file() and (ctx.folder / "run").is_symlink()
            else "the folder link was not followed"
        ),
    )


@case("outputs", "report --out that is a file")
def _(ctx: Ctx) -> None:
    run = _run_folder(ctx)
    (ctx.folder / "taken").write_text("x")
    refused(ctx.run(["report", str(run), "--out", str(ctx.folder / "taken")]), "taken")


@case("outputs", "MCP restore to a .txt path")
def _(ctx: Ctx) -> None:
    (ctx.folder / "page.png").write_bytes(png(64, 48, 200))
    with Mcp(ctx, "--allow", str(ctx.folder)) as mcp:
        error, text = mcp.tool(
            "restore",
            {
                "tools": ["rotate_90"],
                "image_path": str(ctx.folder / "page.png"),
                "output_path": str(ctx.folder / "out.txt"),
            },
        )
    mcp_refused(error, text, ".txt")


@case("outputs", "ask --save-steps into a file path")
def _(ctx: Ctx) -> None:
    page = ctx.folder / "page.png"
    page.write_bytes(png(64, 48, 200))
    (ctx.folder / "steps").write_text("x")
    refused(
        ctx.run(
            [
                "ask",
                str(page),
                "q?",
                "--strategy",
                "none",
                "--brain",
                "scripted",
                "--save-steps",
                str(ctx.folder / "steps"),
            ]
        ),
        "steps",
    )


# -- options that mean nothing ------------------------------------------------------------------------------


def _bench_option(ctx: Ctx, *extra: str) -> Proc:
    data = dataset(ctx.folder / "data", [{"id": "a0"}])
    return bench(ctx, data, ctx.folder / "run", *extra)


def _index_option(ctx: Ctx, *extra: str) -> Proc:
    (ctx.folder / "in").mkdir()
    (ctx.folder / "in" / "a.png").write_bytes(png())
    return ctx.run(["index", str(ctx.folder / "in"), "--out", str(ctx.folder / "idx"), "--text", "pdf", *extra])


for _label, _make, _args, _name in [
    ("index --workers 0", _index_option, ["--workers", "0"], "--workers"),
    ("index --workers -3", _index_option, ["--workers", "-3"], "--workers"),
    ("index --cpus-per-task nan", _index_option, ["--cpus-per-task", "nan"], "--cpus-per-task"),
    ("index --dpi 0", _index_option, ["--dpi", "0"], "--dpi"),
    ("bench --workers 0", _bench_option, ["--workers", "0"], "--workers"),
    ("bench --workers -1", _bench_option, ["--workers", "-1"], "--workers"),
    ("bench --max-rpm nan", _bench_option, ["--max-rpm", "nan"], "--max-rpm"),
    ("bench --max-rpm -60", _bench_option, ["--max-rpm", "-60"], "--max-rpm"),
    ("bench --max-rpm inf", _bench_option, ["--max-rpm", "inf"], "--max-rpm"),
    ("bench --max-tpm 0", _bench_option, ["--max-tpm", "0"], "--max-tpm"),
    ("bench --concurrency 0", _bench_option, ["--concurrency", "0"], "--concurrency"),
    ("bench --memory-per-task nan", _bench_option, ["--memory-per-task", "nan"], "nan"),
    ("bench --limit -1", _bench_option, ["--limit", "-1"], "--limit"),
    ("bench --shard 3/2", _bench_option, ["--shard", "3/2"], "--shard"),
    ("bench --seed abc", _bench_option, ["--seed", "abc"], "--seed"),
    ("bench --strategies nosuch", _bench_option, ["--strategies", "nosuch"], "nosuch"),
]:
    case("options", _label)(lambda ctx, make=_make, a=_args, n=_name: refused(make(ctx, *a), n))


for _label, _args, _name in [
    ("doctor --timeout nan", ["--timeout", "nan"], "--timeout"),
    ("doctor --max-tokens 0", ["--max-tokens", "0"], "--max-tokens"),
    ("doctor --max-side -5", ["--max-side", "-5"], "--max-side"),
    ("ask --page -1", None, "--page"),
    ("ask --max-rounds -2", None, "--max-rounds"),
    ("evidence --threshold nan", None, "--threshold"),
]:

    @case("options", _label)
    def _(ctx: Ctx, label: str = _label, a: list[str] | None = _args, n: str = _name) -> None:
        page = ctx.folder / "page.png"
        page.write_bytes(png())
        if a is not None:
            p = ctx.run(["doctor", "--base-url", "http://127.0.0.1:9/v1", *a])
        elif label.startswith("ask"):
            p = ctx.run(["ask", str(page), "q?", label.split()[1], label.split()[2]])
        else:
            p = ctx.run(["evidence", str(page), "q?", "--threshold", "nan"])
        refused(p, n)


@case("options", "score a row with no gold answers")
def _(ctx: Ctx) -> None:
    run = ctx.folder / "run"
    run.mkdir()
    rows = [
        {"sample": {"id": "a", "task": "doc", "answers": ["42"]}, "strategy": "none", "answer": "42", "error": None},
        {"sample": {"id": "b", "task": "doc", "answers": []}, "strategy": "none", "answer": "7", "error": None},
    ]
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    refused(ctx.run(["score", str(run)]), "'b'", "no gold answer")


@case("options", "score a predictions file with an empty answer")
def _(ctx: Ctx) -> None:
    path = ctx.folder / "pred.jsonl"
    path.write_text(json.dumps({"index": "DocVQA-val-1-1", "answer": "", "prediction": "x"}) + "\n")
    refused(ctx.run(["score", str(path)]), "pred.jsonl", "no gold answer")


# -- inputs that used to end in a traceback -------------------------------------------------------------------


def _api(ctx: Ctx, code: str) -> Proc:
    """Run Python API lines; they print CLEAN <message> for a DocIntentError, OK <value> when they return."""
    wrapper = (
        "import sys, numpy as np, docintent\nfrom docintent.errors import DocIntentError\n"
        "from docintent.page import Page, Box\n"
        "page = Page.from_array(np.full((60, 80, 3), 255, np.uint8))\n"
        "try:\n    value = " + code + "\n    print('OK', repr(value)[:200])\n"
        "except DocIntentError as err:\n    print('CLEAN', type(err).__name__, err)\n"
    )
    return ctx.python(wrapper)


def api_refused(p: Proc, *names: str) -> None:
    if p.timed_out:
        raise Verdict("hang", "")
    if "Traceback" in p.err:
        raise Verdict("traceback", _last_line(p.err))
    if p.out.startswith("OK"):
        raise Verdict("silently wrong", p.out.strip()[:200])
    missing = [n for n in names if n.lower() not in p.out.lower()]
    if missing or not p.out.startswith("CLEAN"):
        raise Verdict("silently wrong", f"no {missing}: {p.out.strip()[:200]}")
    raise Verdict("clean error", p.out.strip()[6:160])


for _label, _code, _names in [
    ("docintent.ask(page, 42)", "docintent.ask(page, 42, brain='scripted')", ("question",)),
    ("docintent.ask(page, None)", "docintent.ask(page, None, brain='scripted')", ("question",)),
    ("docintent.ask(42, 'q')", "docintent.ask(42, 'q', brain='scripted')", ("image",)),
    ("docintent.ask(b'...png bytes', 'q')", "docintent.ask(b'\\x89PNG', 'q', brain='scripted')", ("bytes",)),
    ("docintent.ask on an empty array", "docintent.ask(np.zeros((0, 0)), 'q', brain='scripted')", ("shape",)),
    ("docintent.ask on a string array", "docintent.ask(np.array([['a']]), 'q', brain='scripted')", ("dtype",)),
    ("docintent.ask with 7 channels", "docintent.ask(np.zeros((4, 4, 7)), 'q', brain='scripted')", ("channels",)),
    ("docintent.ask(page, 'q', task=3)", "docintent.ask(page, 'q', task=3, brain='scripted')", ("task",)),
    ("Box.parse([0, 0, 0.5, 1000])", "Box.parse([0, 0, 0.5, 1000])", ("mixes",)),
    ("Box.parse([0, 0, 2.5, 2])", "Box.parse([0.0, 0.0, 2.5, 2.0])", ("mixes",)),
    ("Box.parse(['a', 0, 1, 1])", "Box.parse(['a', 0, 1, 1])", ("numbers",)),
    ("Box.parse([0, 0, 1, nan])", "Box.parse([0, 0, 1, float('nan')])", ("finite",)),
    ("Box.parse([0, 0, 1100, 900])", "Box.parse([0, 0, 1100, 900])", ("outside",)),
    ("Box.parse('0,0,1,1')", "Box.parse('0,0,1,1')", ("list of 4",)),
]:
    case("inputs", _label)(lambda ctx, c=_code, n=_names: api_refused(_api(ctx, c), *n))


for _label, _var, _value, _pdf in [
    ("DOCINTENT_MAX_PIXELS=abc", "DOCINTENT_MAX_PIXELS", "abc", False),
    ("DOCINTENT_MAX_PIXELS=-1", "DOCINTENT_MAX_PIXELS", "-1", False),
    ("DOCINTENT_PDF_DPI=0 on a PDF", "DOCINTENT_PDF_DPI", "0", True),
    ("DOCINTENT_PDF_DPI=99999 on a PDF", "DOCINTENT_PDF_DPI", "99999", True),
    ("DOCINTENT_MAX_SIDE=0", "DOCINTENT_MAX_SIDE", "0", False),
    ("DOCINTENT_THREADS=many", "DOCINTENT_THREADS", "many", False),
    ("DOCINTENT_CACHE=perhaps", "DOCINTENT_CACHE", "perhaps", False),
]:

    @case("inputs", _label)
    def _(ctx: Ctx, var: str = _var, value: str = _value, is_pdf: bool = _pdf) -> None:
        path = ctx.folder / ("doc.pdf" if is_pdf else "page.png")
        path.write_bytes(pdf_bytes() if is_pdf else png())
        refused(ctx.run(["ask", str(path), "q?", "--strategy", "none"], env=ctx.env(**{var: value})), var)


def _index_folder(ctx: Ctx) -> Path:
    import pypdfium2 as pdfium  # noqa: F401 - the PDF maker below needs it

    (ctx.folder / "in").mkdir()
    (ctx.folder / "in" / "a.pdf").write_bytes(pdf_bytes(2))
    built = ctx.run(["index", str(ctx.folder / "in"), "--out", str(ctx.folder / "idx"), "--text", "pdf"])
    if built.rc != 0:
        raise Verdict("silently wrong", f"index failed: {_last_line(built.err)}")
    ctx.run(["search", str(ctx.folder / "idx"), "warranty"])  # writes the BM25 files
    return ctx.folder / "idx"


for _label, _change in [
    ("a BM25 vocabulary that is a list", lambda meta: {**meta, "vocab": ["a", "b"]}),
    ("a BM25 column index that is text", lambda meta: {**meta, "vocab": {"page": "x"}}),
    ("a BM25 column index past the matrix", lambda meta: {**meta, "vocab": {"page": 10**9}}),
    ("a negative BM25 column index", lambda meta: {**meta, "vocab": {"page": -3}}),
    ("a BM25 file that is a JSON list", lambda meta: [1, 2, 3]),
    ("BM25 k1 that is text", lambda meta: {**meta, "k1": "high"}),
    ("an unknown BM25 tokeniser", lambda meta: {**meta, "tokenizer": "v99"}),
]:

    @case("inputs", f"search an index with {_label}")
    def _(ctx: Ctx, change: Callable[[Any], Any] = _change) -> None:
        idx = _index_folder(ctx)
        vocab = idx / "bm25_vocab.json"
        if not vocab.exists():
            raise Verdict("silently wrong", "search wrote no BM25 files")
        vocab.write_text(json.dumps(change(json.loads(vocab.read_text()))))
        refused(ctx.run(["search", str(idx), "page"]), "damaged", "docintent index")


@case("inputs", "search an index whose database is not SQLite")
def _(ctx: Ctx) -> None:
    idx = _index_folder(ctx)
    (idx / "index.sqlite").write_bytes(b"not a database at all" * 100)
    refused(ctx.run(["search", str(idx), "page"]), "index")


def _junk_run(ctx: Ctx, **changes: Any) -> Path:
    run = ctx.folder / "runs" / "junk"
    run.mkdir(parents=True)
    row = {
        "sample": {"id": "a", "task": "doc", "subset": "DocVQA", "answers": ["42"], "question": "q"},
        "strategy": "none",
        "answer": "42",
        "error": None,
        "score": 1.0,
        "seconds": 0.5,
        "result": {"tools_used": 0, "prompt_tokens": 0, "completion_tokens": 0, "trace": []},
    }
    for key, value in changes.items():
        if key.startswith("result_"):
            row["result"][key[7:]] = value
        else:
            row[key] = value
    (run / "results.jsonl").write_text(json.dumps(row) + "\n")
    return run


for _label, _changes in [
    ("'score': 'abc'", {"score": "abc"}),
    ("'seconds': 'slow'", {"seconds": "slow"}),
    ("'prompt_tokens': 'many'", {"result_prompt_tokens": "many"}),
    ("'tools_used': [1]", {"result_tools_used": [1]}),
    ("'result': 'done'", {"result": "done"}),
]:

    @case("inputs", f"report on a row with {_label}")
    def _(ctx: Ctx, changes: dict[str, Any] = _changes) -> None:
        run = _junk_run(ctx, **changes)
        refused(ctx.run(["report", str(run), "--out", str(ctx.folder / "rep")]), "must be", "results.jsonl")


@case("inputs", "/v1/benchmarks on a run with text where numbers belong")
def _(ctx: Ctx) -> None:
    run = _junk_run(ctx, score="abc")
    with Service(ctx, "--brain", "scripted", "--runs", str(run.parent)) as service:
        listing = service.get("/v1/benchmarks")
        report = service.get("/v1/benchmarks/junk")
    if listing.status >= 500 or report.status >= 500:
        raise Verdict("traceback", f"HTTP {listing.status} / {report.status}")
    http_refused(report, 400, "must be a number")


@case("inputs", "MCP diagnose with region [0, 0, 0.5, 1000]")
def _(ctx: Ctx) -> None:
    (ctx.folder / "page.png").write_bytes(png(64, 48, 200))
    with Mcp(ctx, "--allow", str(ctx.folder)) as mcp:
        error, text = mcp.tool("diagnose", {"image_path": str(ctx.folder / "page.png"), "region": [0, 0, 0.5, 1000]})
    mcp_refused(error, text, "mixes")


@case("inputs", "CLI --region 0,0,0.5,1000 (the same rule)")
def _(ctx: Ctx) -> None:
    (ctx.folder / "page.png").write_bytes(png(64, 48, 200))
    refused(ctx.run(["diagnose", str(ctx.folder / "page.png"), "--region", "0,0,0.5,1000"]), "--region", "mixes")


@case("inputs", "MCP tools with arguments of the wrong types")
def _(ctx: Ctx) -> None:
    (ctx.folder / "page.png").write_bytes(png(64, 48, 200))
    replies = []
    with Mcp(ctx, "--allow", str(ctx.folder)) as mcp:
        for name, arguments in [
            ("restore", {"tools": "deshadowing", "image_path": 5}),
            ("zoom", {"bbox": "everything", "image_path": str(ctx.folder / "page.png")}),
            ("ask", {"question": ["q"], "image_base64": "!!!"}),
            ("diagnose", {"image_base64": base64.b64encode(b"not an image").decode()}),
        ]:
            replies.append(mcp.tool(name, arguments))
    bad = [text for error, text in replies if not error or "Traceback" in text or "unexpected error" in text]
    if bad:
        raise Verdict(
            "traceback" if any("Traceback" in t or "unexpected" in t for t in bad) else "silently wrong", bad[0][:200]
        )
    raise Verdict("clean error", "; ".join(text[:50] for _, text in replies))


for _label, _data, _name in [
    ("an empty file", b"", "page.png"),
    ("a truncated PNG", png(200, 200)[:60], "page.png"),
    ("a text file named .png", b"hello world, not a picture", "page.png"),
    ("a PNG header claiming 100000x100000 pixels", png_header(100_000, 100_000), "page.png"),
    ("garbage after a PDF header", b"%PDF-1.7\n" + os.urandom(3000), "doc.pdf"),
]:

    @case("inputs", f"ask on {_label}")
    def _(ctx: Ctx, data: bytes = _data, name: str = _name) -> None:
        path = ctx.folder / name
        path.write_bytes(data)
        refused(ctx.run(["ask", str(path), "q?", "--strategy", "none", "--brain", "scripted"]), name)


@case("inputs", "ask whose answer holds a lone surrogate (text and --json)")
def _(ctx: Ctx) -> None:
    (ctx.folder / "page.png").write_bytes(png(64, 48, 200))
    argv = [
        "ask",
        str(ctx.folder / "page.png"),
        "q?",
        "--strategy",
        "none",
        "--brain",
        "scripted",
        "--brain-opt",
        'final="4\\ud8002"',
    ]
    text, as_json = ctx.run(argv), ctx.run([*argv, "--json"])
    if text.rc != 0 or as_json.rc != 0:
        works(text if text.rc else as_json)
    works(
        text,
        lambda p: (
            None
            if "\\ud800" in p.out and json.loads(as_json.out)["answer"] == "4\ud8002"
            else f"{p.out[:80]!r} / {as_json.out[:80]!r}"
        ),
    )


@case("inputs", "bench whose answers hold a lone surrogate")
def _(ctx: Ctx) -> None:
    data = dataset(ctx.folder / "data", [{"id": "a0"}, {"id": "a1"}])
    out = ctx.folder / "run"
    p = ctx.run(
        [
            "bench",
            "--dataset",
            f"jsonl:{data}",
            "--brain",
            "scripted",
            "--brain-opt",
            'final="4\\ud8002"',
            "--no-progress",
            "--out",
            str(out),
        ]
    )
    works(
        p,
        lambda p: (
            None if len(rows_of(out)) == 2 and rows_of(out)[0]["answer"] == "4\ud8002" else f"rows {rows_of(out)}"
        ),
    )


@case("inputs", "a NUL character in a path: dataset image, Python API, MCP image_path")
def _(ctx: Ctx) -> None:
    (ctx.folder / "page.png").write_bytes(png(64, 48, 200))
    data = dataset(ctx.folder / "data", [{"id": "a0", "image": "page\u0000.png"}])
    from_dataset = bench(ctx, data, ctx.folder / "run")
    from_api = _api(ctx, "docintent.ask('page\\x00.png', 'q', brain='scripted')")
    with Mcp(ctx, "--allow", str(ctx.folder)) as mcp:
        error, text = mcp.tool("diagnose", {"image_path": str(ctx.folder / "page.png") + "\u0000"})
    if from_dataset.rc != 1 or "NUL" not in from_dataset.err:
        refused(from_dataset, "NUL")
    if not from_api.out.startswith("CLEAN") or "NUL" not in from_api.out:
        api_refused(from_api, "NUL")
    mcp_refused(error, text, "NUL")


@case("inputs", "score a results file with a damaged line in the middle")
def _(ctx: Ctx) -> None:
    run = _run_folder(ctx)
    text = (run / "results.jsonl").read_text()
    (run / "results.jsonl").write_text(text + "{not json\n" + text)
    refused(ctx.run(["score", str(run)]), "results.jsonl")


# -- bounded work: nothing runs without end -------------------------------------------------------------------


@case("bounded-work", "index a 1-page PDF whose page tree claims 1,000,000 pages")
def _(ctx: Ctx) -> None:
    (ctx.folder / "in").mkdir()
    (ctx.folder / "in" / "liar.pdf").write_bytes(pdf_bytes(1, claim=1_000_000))
    p = ctx.run(["index", str(ctx.folder / "in"), "--out", str(ctx.folder / "idx"), "--text", "pdf"], timeout=60)
    works(p, lambda p: None if "1 pages" in p.out and p.seconds < 30 else f"{_last_line(p.out)} in {p.seconds:.0f} s")


@case("bounded-work", "index a 3-page PDF claiming 500,000 pages")
def _(ctx: Ctx) -> None:
    data = pdf_bytes(3, claim=500_000)
    (ctx.folder / "in").mkdir()
    (ctx.folder / "in" / "liar.pdf").write_bytes(data)
    p = ctx.run(["index", str(ctx.folder / "in"), "--out", str(ctx.folder / "idx"), "--text", "pdf"], timeout=60)
    works(p, lambda p: None if "3 pages" in p.out else _last_line(p.out))


@case("bounded-work", "ask page 5 of a 1-page PDF claiming 1,000,000 pages")
def _(ctx: Ctx) -> None:
    (ctx.folder / "liar.pdf").write_bytes(pdf_bytes(1, claim=1_000_000))
    refused(
        ctx.run(["ask", str(ctx.folder / "liar.pdf"), "q?", "--pages", "5", "--strategy", "none"], timeout=60),
        "liar.pdf",
        "1-page",
    )


for _w, _h in [(100_000, 1), (1, 100_000), (200_000, 2), (60_000, 30), (30, 60_000)]:

    @case("bounded-work", f"ask (offline reader) on a {_w}x{_h} PNG")
    def _(ctx: Ctx, w: int = _w, h: int = _h) -> None:
        from PIL import Image

        Image.new("RGB", (w, h), "white").save(ctx.folder / "strip.png")
        p = ctx.run(["ask", str(ctx.folder / "strip.png"), "What is the total?"], timeout=90)
        works(p, lambda p: None if p.seconds < 30 else f"took {p.seconds:.0f} s")


@case("bounded-work", "a PDF page of 200,000 x 200,000 points (a pixel bomb)")
def _(ctx: Ctx) -> None:
    (ctx.folder / "huge.pdf").write_bytes(pdf_bytes(1, size=(200_000, 200_000)))
    refused(
        ctx.run(["ask", str(ctx.folder / "huge.pdf"), "q?", "--strategy", "none"], timeout=60), "huge.pdf", "pixels"
    )


@case("bounded-work", "serve: a run whose model never answers ends at the service's deadline")
def _(ctx: Ctx) -> None:
    with Service(ctx, *model_opts(ctx.slow_url, "timeout=60", "max_retries=0"), "--timeout", "3") as service:
        run_id = service.ask(png(64, 48), brain="openai", strategy="none").json()["id"]
        start = time.monotonic()
        run = service.wait(run_id, bound=30)
        seconds = time.monotonic() - start
    expect(
        run["status"] == "timeout" and seconds < 15,
        f"{run['status']} after {seconds:.0f} s",
        f"timeout after {seconds:.1f} s",
    )


@case("bounded-work", "serve: the SSE stream of a finished run ends")
def _(ctx: Ctx) -> None:
    with _scripted_service(ctx) as service:
        run_id = _finished_run(service)
        start = time.monotonic()
        reply = service.get(f"/v1/runs/{run_id}/events", timeout=20)
        seconds = time.monotonic() - start
    expect(reply.status == 200 and b"event: done" in reply.body and seconds < 3, f"{seconds:.1f} s", f"{seconds:.2f} s")


@case("bounded-work", "a dataset of 2,000 rows, one of them a lone surrogate, runs to the end")
def _(ctx: Ctx) -> None:
    folder = ctx.folder / "a"
    folder.mkdir()
    (folder / "i.png").write_bytes(png())
    lines = [
        json.dumps({"id": f"s{i}", "image": "i.png", "question": "q", "answers": ["42"], "task": "doc"})
        for i in range(2000)
    ]
    lines[1234] = lines[1234].replace('"q"', '"q\\udfff"')
    (folder / "s.jsonl").write_text("\n".join(lines) + "\n")
    out = ctx.folder / "run"
    p = bench(ctx, folder / "s.jsonl", out, timeout=180)
    works(
        p,
        lambda p: (
            None
            if len(rows_of(out)) == 2000 and sum(1 for r in rows_of(out) if r["error"]) == 1
            else f"{len(rows_of(out))} rows"
        ),
    )


# -- wrong words and wrong refusals ---------------------------------------------------------------------------


@case("words", "a 0-page PDF read after an encrypted one is not called encrypted")
def _(ctx: Ctx) -> None:
    import pypdf

    encrypted_pdf(ctx.folder / "locked.pdf")
    with open(ctx.folder / "empty.pdf", "wb") as fh:
        pypdf.PdfWriter().write(fh)
    code = (
        "from docintent.io import load_page\nfrom docintent.errors import DocIntentError\n"
        "for name in ('locked.pdf', 'empty.pdf'):\n    try:\n        load_page(name)\n"
        "    except DocIntentError as err:\n        print(type(err).__name__, err)\n"
    )
    p = ctx.python(code)
    lines = p.out.splitlines()
    if len(lines) != 2 or "Traceback" in p.err:
        raise Verdict("traceback" if "Traceback" in p.err else "silently wrong", p.err[-200:] or p.out)
    expect(
        lines[0].startswith("EncryptedPdfError")
        and not lines[1].startswith("EncryptedPdfError")
        and "encrypt" not in lines[1].lower(),
        f"{lines}",
        lines[1][:150],
    )


@case("words", "the index names a 0-page PDF beside an encrypted one correctly")
def _(ctx: Ctx) -> None:
    import pypdf

    (ctx.folder / "in").mkdir()
    encrypted_pdf(ctx.folder / "in" / "a-locked.pdf")
    with open(ctx.folder / "in" / "b-empty.pdf", "wb") as fh:
        pypdf.PdfWriter().write(fh)
    (ctx.folder / "in" / "c.pdf").write_bytes(pdf_bytes(1))
    p = ctx.run(["index", str(ctx.folder / "in"), "--out", str(ctx.folder / "idx"), "--text", "pdf"])
    lines = [line for line in (p.out + p.err).splitlines() if "b-empty.pdf" in line]
    works(p, lambda p: None if lines and all("encrypt" not in line.lower() for line in lines) else f"{lines}")


@case("words", "no message says '(PDFium: Success)' or 'Failed to load page.'")
def _(ctx: Ctx) -> None:
    import pypdf

    with open(ctx.folder / "empty.pdf", "wb") as fh:
        pypdf.PdfWriter().write(fh)
    (ctx.folder / "liar.pdf").write_bytes(pdf_bytes(1, claim=3))
    texts = []
    for name, page in (("empty.pdf", "1"), ("liar.pdf", "3"), ("empty.pdf", "4")):
        p = ctx.run(["ask", str(ctx.folder / name), "q?", "--pages", page, "--strategy", "none"])
        texts.append(p.err)
        if p.rc != 1 or _has_traceback(p.err):
            refused(p, name)
    weak = [t for t in texts if "PDFium: Success" in t or "Failed to load" in t]
    expect(not weak, f"weak: {weak[:1]}", " / ".join(_last_line(t)[-60:] for t in texts))


@case("words", "a PNG whose text chunk holds '%PDF-' is read as an image")
def _(ctx: Ctx) -> None:
    (ctx.folder / "note.png").write_bytes(png(64, 48, 220, text_chunk=b"Comment\x00see %PDF-1.7 spec"))
    works(ctx.run(["diagnose", str(ctx.folder / "note.png")]))


@case("words", "an uploaded PNG whose text chunk holds '%PDF-' is read as an image")
def _(ctx: Ctx) -> None:
    with _scripted_service(ctx) as service:
        reply = service.ask(png(64, 48, 220, text_chunk=b"Comment\x00%PDF-1.4"), strategy="none")
        run = service.wait(reply.json()["id"]) if reply.status == 202 else None
    expect(
        reply.status == 202 and run and run["status"] == "done",
        f"HTTP {reply.status}: {reply.body[:100]!r}",
        "accepted and answered",
    )


@case("words", "a working user:pass@ endpoint is 'ok' in /v1/health, an unreachable one 'degraded'")
def _(ctx: Ctx) -> None:
    with Service(ctx, *model_opts(ctx.model_url)) as service:
        good = service.get("/v1/health").json()
    with Service(ctx, *model_opts(secret_url(f"http://127.0.0.1:{free_port()}/v1"))) as service:
        bad = service.get("/v1/health").json()
    expect(
        good["status"] == "ok" and bad["status"] == "degraded", f"{good['status']} / {bad['status']}", "ok / degraded"
    )


@case("words", "a region rule the CLI and Box.parse share: [0.1, 0.1, 0.9, 0.9] and [100, 100, 900, 900] agree")
def _(ctx: Ctx) -> None:
    p = _api(ctx, "(Box.parse([0.1, 0.1, 0.9, 0.9]).as_tuple(3), Box.parse([100, 100, 900, 900]).as_tuple(3))")
    expect(p.out.startswith("OK") and p.out.count("(0.1, 0.1, 0.9, 0.9)") == 2, p.out.strip(), p.out.strip()[3:])


@case("words", "a page the PDF reader cannot load is named with its number")
def _(ctx: Ctx) -> None:
    (ctx.folder / "liar.pdf").write_bytes(pdf_bytes(2, claim=2).replace(b"/Type/Page>>", b"/Type/Junk>>", 1))
    p = ctx.run(
        ["ask", str(ctx.folder / "liar.pdf"), "q?", "--pages", "1", "--strategy", "none", "--brain", "scripted"]
    )
    if p.rc == 0:
        works(p)
    refused(p, "liar.pdf", "page")


# -- config: only files a user chose are obeyed, and the environment's key stays with its endpoint ----------


def _recording_endpoint() -> FakeOpenAI:
    """A model endpoint that answers 42 and records every request (with its Authorization header)."""
    return FakeOpenAI(_model_script)


def _key_reached(server: FakeOpenAI) -> bool:
    return any(ENV_KEY in request.headers.get("authorization", "") for request in server.requests)


@case("config", "a docintent.toml planted in a parent folder (a shared temporary folder) with OPENAI_API_KEY set")
def _(ctx: Ctx) -> None:
    page = text_page(ctx.folder / "page.png")
    work = ctx.folder / "job" / "work"
    work.mkdir(parents=True)
    with _recording_endpoint() as server:
        (ctx.folder / "docintent.toml").write_text(
            f'default_profile = "x"\n[profiles.x]\nkind = "openai"\nbase_url = "{server.base_url}"\nmodel = "fake-vl"\n'
        )
        p = ctx.run(
            ["ask", str(page), "What is the total?", "--strategy", "none"],
            cwd=work,
            env=ctx.env(OPENAI_API_KEY=ENV_KEY),
        )
        if _key_reached(server):
            raise Verdict("leak", "the planted endpoint received the environment's API key")
        obeyed = bool(server.requests)
    works(p, lambda p: "the planted file was obeyed (its endpoint was called)" if obeyed else None)


@case("config", "config show names a planted parent-folder file as ignored, with the reason")
def _(ctx: Ctx) -> None:
    work = ctx.folder / "work"
    work.mkdir()
    (ctx.folder / "docintent.toml").write_text("[settings]\nthreads = 3\n")
    p = ctx.run(["config", "show"], cwd=work)
    works(
        p,
        lambda p: (
            None if "ignored" in p.out and "threads 3" not in " ".join(p.out.split()) else f"not said: {p.out[:200]}"
        ),
    )


@case("config", "the project's own profile names an endpoint; OPENAI_API_KEY must not go there")
def _(ctx: Ctx) -> None:
    page = text_page(ctx.folder / "page.png")
    project = ctx.folder / "proj"
    (project / ".git").mkdir(parents=True)
    with _recording_endpoint() as server:
        (project / "docintent.toml").write_text(
            f'[profiles.x]\nkind = "openai"\nbase_url = "{server.base_url}"\nmodel = "fake-vl"\n'
        )
        p = ctx.run(
            ["ask", str(page), "What is the total?", "--strategy", "none", "--profile", "x"],
            cwd=project,
            env=ctx.env(OPENAI_API_KEY=ENV_KEY),
        )
        if _key_reached(server):
            raise Verdict("leak", "a config file's endpoint received the environment's API key")
        called = bool(server.requests)
    works(
        p, lambda p: None if called and "answer: 42" in p.out else f"not answered by the profile: {_last_line(p.out)}"
    )


@case("config", "[settings] base_url in the project file; OPENAI_API_KEY must not go there")
def _(ctx: Ctx) -> None:
    page = text_page(ctx.folder / "page.png")
    project = ctx.folder / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    with _recording_endpoint() as server:
        (project / "docintent.toml").write_text(f'[settings]\nbase_url = "{server.base_url}"\nmodel = "fake-vl"\n')
        p = ctx.run(
            ["ask", str(page), "What is the total?", "--strategy", "none", "--brain", "openai"],
            cwd=project,
            env=ctx.env(OPENAI_API_KEY=ENV_KEY),
        )
        if _key_reached(server):
            raise Verdict("leak", "a config file's endpoint received the environment's API key")
    works(p, lambda p: None if "answer: 42" in p.out else _last_line(p.out))


@case("config", "the environment's key does go to the endpoint the command line names")
def _(ctx: Ctx) -> None:
    page = text_page(ctx.folder / "page.png")
    with FakeOpenAI(_model_script, api_key=ENV_KEY) as server:  # refuses any other key
        p = ctx.run(
            ["ask", str(page), "What is the total?", "--strategy", "none", *model_opts(server.base_url)],
            env=ctx.env(OPENAI_API_KEY=ENV_KEY),
        )
    works(p, lambda p: None if "answer: 42" in p.out else _last_line(p.err or p.out))


@case("config", "deeply nested arrays in docintent.toml")
def _(ctx: Ctx) -> None:
    (ctx.folder / ".git").mkdir()
    (ctx.folder / "docintent.toml").write_text("[settings]\nthreads = " + "[" * 5000 + "1" + "]" * 5000 + "\n")
    refused(ctx.run(["config", "show"]), "docintent.toml", "nested")


@case("config", "a docintent.toml of 5 MB")
def _(ctx: Ctx) -> None:
    (ctx.folder / ".git").mkdir()
    (ctx.folder / "docintent.toml").write_text("[settings]\n" + "# padding\n" * 500_000 + "threads = 1\n")
    refused(ctx.run(["config", "show"]), "docintent.toml", "bytes")


@case("config", "doctor with max_retries in the profile")
def _(ctx: Ctx) -> None:
    (ctx.folder / ".git").mkdir()
    with _recording_endpoint() as server:  # no credentials in its URL: the file itself is scanned for leaks
        (ctx.folder / "docintent.toml").write_text(
            f'[profiles.m]\nkind = "openai"\nbase_url = "{server.base_url}"\nmodel = "fake-vl"\nmax_retries = 0\n'
        )
        p = ctx.run(["doctor", "--profile", "m"], timeout=90)
    if p.timed_out:
        raise Verdict("hang", f"still running after {p.seconds:.0f} s")
    if _has_traceback(p.err) or _has_traceback(p.out):
        raise Verdict("traceback", _last_line(p.err or p.out))
    expect(
        p.rc in (0, 1) and "reachable" in p.out,
        f"exit {p.rc}: {_last_line(p.err or p.out)}",
        "checked: " + _last_line(p.out)[:100],
    )


@case("config", "--config naming a missing file, and a folder")
def _(ctx: Ctx) -> None:
    p = ctx.run(["--config", str(ctx.folder / "nope.toml"), "config", "show"])
    if p.rc != 1:
        refused(p, "nope.toml")
    refused(ctx.run(["--config", str(ctx.folder), "config", "show"]), str(ctx.folder), "not a regular file")


# -- question files: decoded by their mark, refused naming the line ---------------------------------------------


def _batch(ctx: Ctx, target: Path, out: Path, *extra: str, timeout: float = 90, cwd: Path | None = None) -> Proc:
    return ctx.run(
        [
            "ask",
            str(target),
            *extra,
            "--out",
            str(out),
            "--brain",
            "scripted",
            "--brain-opt",
            "final=42",
            "--no-progress",
        ],
        timeout=timeout,
        cwd=cwd,
    )


def _answer_rows(out: Path) -> list[dict[str, Any]]:
    # split at line feeds only: a row may hold U+2028, which str.splitlines would split at
    return [json.loads(line) for line in out.read_text().split("\n") if line.strip()] if out.exists() else []


def _scans(ctx: Ctx, count: int = 2) -> Path:
    folder = ctx.folder / "scans"
    folder.mkdir(exist_ok=True)
    for i in range(count):
        (folder / f"p{i}.png").write_bytes(png(value=30 + 40 * i))
    return folder


for _label, _data in [
    ("UTF-8 with a byte-order mark", "\ufeffWhat is the total?\nWho signed?\n".encode()),
    ("UTF-16 LE with its mark", "\ufeffWhat is the total?\r\nWho signed?\r\n".encode("utf-16-le")),
    ("UTF-16 BE with its mark", "\ufeffWhat is the total?\nWho signed?\n".encode("utf-16-be")),
]:

    @case("question-files", f"a questions file in {_label}")
    def _(ctx: Ctx, data: bytes = _data) -> None:
        (ctx.folder / "q.txt").write_bytes(data)
        out = ctx.folder / "a.jsonl"
        p = _batch(ctx, _scans(ctx, 1), out, "--questions", str(ctx.folder / "q.txt"))
        asked = sorted(r["question"] for r in _answer_rows(out))
        works(p, lambda p: None if asked == ["What is the total?", "Who signed?"] else f"questions {asked!r}")


for _label, _data, _line in [
    ("invalid UTF-8 on line 3", b"q one?\nq two?\nq \xff three?\n", "line 3"),
    ("UTF-16 LE cut in the middle of a character", "\ufeffq one?\nq two?".encode("utf-16-le") + b"\x00", "line 2"),
    ("UTF-16 without its mark", "q one?\nq two?\n".encode("utf-16-le"), "line 1"),
]:

    @case("question-files", f"a questions file with {_label}")
    def _(ctx: Ctx, data: bytes = _data, line: str = _line) -> None:
        (ctx.folder / "q.txt").write_bytes(data)
        refused(
            _batch(ctx, _scans(ctx, 1), ctx.folder / "a.jsonl", "--questions", str(ctx.folder / "q.txt")), "q.txt", line
        )


@case("question-files", "a line holding U+2028 and a form feed is one question each")
def _(ctx: Ctx) -> None:
    (ctx.folder / "q.txt").write_text("What is\u2028the total?\nWho\x0csigned?\n", encoding="utf-8")
    out = ctx.folder / "a.jsonl"
    p = _batch(ctx, _scans(ctx, 1), out, "--questions", str(ctx.folder / "q.txt"))
    works(p, lambda p: None if len(_answer_rows(out)) == 2 else f"{len(_answer_rows(out))} rows for 2 questions")


@case("question-files", "a questions file that is a named pipe")
def _(ctx: Ctx) -> None:
    os.mkfifo(ctx.folder / "q.txt")
    refused(
        _batch(ctx, _scans(ctx, 1), ctx.folder / "a.jsonl", "--questions", str(ctx.folder / "q.txt"), timeout=30),
        "q.txt",
        "not a regular file",
    )


# -- folder walks: real paths, each file once, loops cut, pipes never opened --------------------------------------


@case("folder-walks", "two links to '.' inside a batch folder")
def _(ctx: Ctx) -> None:
    folder = _scans(ctx)
    os.symlink(".", folder / "a")
    os.symlink(".", folder / "b")
    out = ctx.folder / "a.jsonl"
    p = _batch(ctx, folder, out, "q?", timeout=60)
    works(p, lambda p: None if len(_answer_rows(out)) == 2 else f"{len(_answer_rows(out))} rows for 2 documents")


@case("folder-walks", "a link back to the parent in a subfolder")
def _(ctx: Ctx) -> None:
    folder = _scans(ctx)
    (folder / "sub").mkdir()
    os.symlink("..", folder / "sub" / "up")
    out = ctx.folder / "a.jsonl"
    p = _batch(ctx, folder, out, "q?", timeout=60)
    works(p, lambda p: None if len(_answer_rows(out)) == 2 else f"{len(_answer_rows(out))} rows for 2 documents")


@case("folder-walks", "a glob with ** through two links to '.'")
def _(ctx: Ctx) -> None:
    folder = _scans(ctx)
    os.symlink(".", folder / "a")
    os.symlink(".", folder / "b")
    out = ctx.folder / "a.jsonl"
    p = _batch(ctx, Path(str(folder) + "/**/*.png"), out, "q?", timeout=60)
    works(p, lambda p: None if len(_answer_rows(out)) == 2 else f"{len(_answer_rows(out))} rows for 2 documents")


@case("folder-walks", "a named pipe, a socket and a .tsv inside a batch folder are named, not read")
def _(ctx: Ctx) -> None:
    folder = _scans(ctx)
    os.mkfifo(folder / "pipe.png")
    (folder / "notes.tsv").write_text("a\tb\n")
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(folder / "s.png"))
        out = ctx.folder / "a.jsonl"
        p = _batch(ctx, folder, out, "q?", timeout=60)
    finally:
        sock.close()
    named = all(name in p.out for name in ("pipe.png", "notes.tsv", "s.png"))
    works(
        p, lambda p: None if len(_answer_rows(out)) == 2 and named else f"rows {len(_answer_rows(out))}: {p.out[-200:]}"
    )


@case("folder-walks", "a named pipe given as the document")
def _(ctx: Ctx) -> None:
    os.mkfifo(ctx.folder / "page.png")
    refused(ctx.run(["ask", str(ctx.folder / "page.png"), "q?"], timeout=30), "page.png", "pipe")


@case("folder-walks", "a link to a file already in the folder is read once")
def _(ctx: Ctx) -> None:
    folder = _scans(ctx)
    os.symlink("p0.png", folder / "alias.png")
    out = ctx.folder / "a.jsonl"
    p = _batch(ctx, folder, out, "q?")
    works(
        p,
        lambda p: (
            None
            if len(_answer_rows(out)) == 2 and "the same file as" in p.out
            else f"{len(_answer_rows(out))} rows: {p.out[-160:]}"
        ),
    )


@case("folder-walks", "index a folder with a looping link and a pipe")
def _(ctx: Ctx) -> None:
    (ctx.folder / "in").mkdir()
    (ctx.folder / "in" / "a.pdf").write_bytes(pdf_bytes(1))
    os.symlink(".", ctx.folder / "in" / "loop")
    os.mkfifo(ctx.folder / "in" / "pipe.pdf")
    p = ctx.run(["index", str(ctx.folder / "in"), "--out", str(ctx.folder / "idx"), "--text", "pdf"], timeout=60)
    works(p, lambda p: None if "1 pages" in p.out or "1 page" in p.out else _last_line(p.out))


# -- run outputs: --out never cuts what is not its own --------------------------------------------------------------


@case("run-outputs", "--out naming the questions file")
def _(ctx: Ctx) -> None:
    (ctx.folder / "q.txt").write_text("What is the total?\n")
    p = _batch(ctx, _scans(ctx), ctx.folder / "q.txt", "--questions", str(ctx.folder / "q.txt"))
    if (ctx.folder / "q.txt").read_text() != "What is the total?\n":
        raise Verdict("silently wrong", "the questions file was changed")
    refused(p, "q.txt", "questions file")


@case("run-outputs", "--out naming an existing one-line file that is not an answers file")
def _(ctx: Ctx) -> None:
    (ctx.folder / "notes.jsonl").write_text("my notes")
    p = _batch(ctx, _scans(ctx), ctx.folder / "notes.jsonl", "q?")
    if (ctx.folder / "notes.jsonl").read_text() != "my notes":
        raise Verdict("silently wrong", "the file was cut or appended to")
    refused(p, "notes.jsonl", "not an answers file")


@case("run-outputs", "--out naming a benchmark results file")
def _(ctx: Ctx) -> None:
    row = json.dumps({"sample": {"id": "s1"}, "strategy": "none", "answer": "42"}) + "\n"
    (ctx.folder / "results.jsonl").write_text(row)
    p = _batch(ctx, _scans(ctx), ctx.folder / "results.jsonl", "q?")
    if (ctx.folder / "results.jsonl").read_text() != row:
        raise Verdict("silently wrong", "the results file was changed")
    refused(p, "results.jsonl", "not an answers file")


@case("run-outputs", "--out naming one of the documents")
def _(ctx: Ctx) -> None:
    folder = _scans(ctx)
    before = (folder / "p0.png").read_bytes()
    p = _batch(ctx, folder, folder / "p0.png", "q?")
    if (folder / "p0.png").read_bytes() != before:
        raise Verdict("silently wrong", "the document was changed")
    refused(p, "p0.png", "input of this run")


@case("run-outputs", "two batches writing one answers file through a link alias")
def _(ctx: Ctx) -> None:
    folder = _scans(ctx, 1)
    out = ctx.folder / "a.jsonl"
    os.symlink("a.jsonl", ctx.folder / "alias.jsonl")
    first = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "docintent",
            "ask",
            str(folder),
            "q?",
            "--out",
            str(out),
            "--strategy",
            "none",
            *model_opts(ctx.slow_url, "timeout=60", "max_retries=0"),
            "--no-progress",
        ],
        cwd=ctx.folder,
        env=ctx.env(),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        lock = ctx.folder / ".a.jsonl.lock"
        deadline = time.monotonic() + 60
        while not (lock.exists() and lock.read_text().strip()):
            if time.monotonic() > deadline or first.poll() is not None:
                raise Verdict("silently wrong", "the first batch did not start")
            time.sleep(0.1)
        p = _batch(ctx, folder, ctx.folder / "alias.jsonl", "q?")
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    refused(p, "in use")


# -- resume: a changed document is answered again -------------------------------------------------------------------


@case("resume", "ask DIR: a document edited between two runs")
def _(ctx: Ctx) -> None:
    folder = _scans(ctx)
    out = ctx.folder / "a.jsonl"
    base = ["ask", str(folder), "q?", "--out", str(out), "--brain", "scripted", "--no-progress"]
    ctx.run([*base, "--brain-opt", "final=first"])
    (folder / "p1.png").write_bytes(png(value=222))
    p = ctx.run([*base, "--brain-opt", "final=second"])
    answers = sorted(r["answer"] for r in _answer_rows(out))
    works(p, lambda p: None if answers == ["first", "second"] else f"answers {answers}")


@case("resume", "ask DIR: nothing changed, nothing run again")
def _(ctx: Ctx) -> None:
    folder = _scans(ctx)
    out = ctx.folder / "a.jsonl"
    base = ["ask", str(folder), "q?", "--out", str(out), "--brain", "scripted", "--no-progress"]
    ctx.run([*base, "--brain-opt", "final=first"])
    p = ctx.run([*base, "--brain-opt", "final=second"])
    answers = sorted(r["answer"] for r in _answer_rows(out))
    works(p, lambda p: None if answers == ["first", "first"] else f"answers {answers}")


# -- pages: a selection outside the document is refused, pages count from 1 -------------------------------------------


@case("pages", "--pages 1,7 on a 2-page PDF")
def _(ctx: Ctx) -> None:
    (ctx.folder / "two.pdf").write_bytes(pdf_bytes(2))
    refused(
        ctx.run(["ask", str(ctx.folder / "two.pdf"), "q?", "--pages", "1,7", "--brain", "scripted"]), "two.pdf", "1-2"
    )


@case("pages", "--pages 2-40 on a 4-page PDF (a range partly outside)")
def _(ctx: Ctx) -> None:
    (ctx.folder / "four.pdf").write_bytes(pdf_bytes(4))
    refused(
        ctx.run(["ask", str(ctx.folder / "four.pdf"), "q?", "--pages", "2-40", "--brain", "scripted"]),
        "four.pdf",
        "1-4",
    )


@case("pages", "evidence --pages 3 on a 2-page PDF")
def _(ctx: Ctx) -> None:
    (ctx.folder / "two.pdf").write_bytes(pdf_bytes(2))
    refused(
        ctx.run(["evidence", str(ctx.folder / "two.pdf"), "q?", "--pages", "3", "--brain", "scripted"]),
        "two.pdf",
        "1-2",
    )


# -- ranking: codes with digits match exactly ---------------------------------------------------------------------------


def text_pdf(path: Path, pages: list[str]) -> Path:
    """A PDF with a text layer, one page per string."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    with PdfPages(path) as pdf:
        for text in pages:
            fig = plt.figure(figsize=(4, 5))
            for i, line in enumerate(text.split("\n")):
                fig.text(0.06, 0.92 - 0.06 * i, line, fontsize=8)
            pdf.savefig(fig)
            plt.close(fig)
    return path


@case("ranking", "a PDF of invoices INV-00037, INV-03777, INV-00377: the question names INV-00377")
def _(ctx: Ctx) -> None:
    pages = [f"Invoice INV-{n:05d}\nTotal amount due: ${n}.00" for n in (37, 3777, 377, 1377)]
    pdf = text_pdf(ctx.folder / "inv.pdf", pages)
    p = ctx.run(
        [
            "ask",
            str(pdf),
            "What is the total amount due on invoice INV-00377?",
            "--json",
            "--brain",
            "scripted",
            "--brain-opt",
            "final=$377.00",
            "--strategy",
            "none",
        ]
    )
    page = json.loads(p.out).get("provenance", {}).get("page") if p.rc == 0 and p.out.strip().startswith("{") else None
    works(p, lambda p: None if page == 3 else f"answered from page {page}")


@case("ranking", "keyword1 and keyword1777 on two pages: the question names keyword1")
def _(ctx: Ctx) -> None:
    pdf = text_pdf(ctx.folder / "kw.pdf", ["keyword1777 appears on this page", "keyword1 appears on this page"])
    p = ctx.python(
        f"from docintent.document import Document\n"
        f"print(Document({str(pdf)!r}).locate('Which page mentions keyword1?')[0].number)"
    )
    works(p, lambda p: None if p.out.strip() == "2" else f"page {p.out.strip()}")


# -- long questions: refused at once everywhere ----------------------------------------------------------------------------

LONG = "What is the total? " * 8000  # 152,000 characters


@case("long-questions", "ask with a question of 119,700 characters (CLI; one argument holds at most 128 KiB)")
def _(ctx: Ctx) -> None:
    page = text_page(ctx.folder / "page.png")
    p = ctx.run(["ask", str(page), "What is the total? " * 6300], timeout=90)
    if p.rc == 1 and p.seconds > 10:
        raise Verdict("silently wrong", f"refused only after {p.seconds:.0f} s")
    refused(p, "characters")


@case("long-questions", "docintent.ask with a question of 152,000 characters (API)")
def _(ctx: Ctx) -> None:
    text_page(ctx.folder / "page.png")
    start = time.monotonic()
    p = _api(ctx, "docintent.ask('page.png', 'What is the total? ' * 8000)")
    expect(
        p.out.startswith("CLEAN") and "characters" in p.out and time.monotonic() - start < 30,
        f"{p.out.strip()[:160] or _last_line(p.err)} after {time.monotonic() - start:.0f} s",
        p.out.strip()[:120],
        outcome="clean error",
    )


@case("long-questions", "a questions file with a line of 152,000 characters")
def _(ctx: Ctx) -> None:
    (ctx.folder / "q.txt").write_text("What is the total?\n" + LONG + "\n")
    refused(
        _batch(ctx, _scans(ctx, 1), ctx.folder / "a.jsonl", "--questions", str(ctx.folder / "q.txt")), "q.txt", "line 2"
    )


@case("long-questions", "a benchmark row with a question of 152,000 characters")
def _(ctx: Ctx) -> None:
    data = dataset(ctx.folder / "d", [{"id": "long", "question": LONG}, {"id": "short"}])
    out = ctx.folder / "run"
    p = bench(ctx, data, out, "--strategies", "none", timeout=90)
    rows = {r["sample"]["id"]: r for r in rows_of(out)}
    works(
        p,
        lambda p: (
            None
            if len(rows) == 2
            and "characters" in str(rows["long"].get("error"))
            and not rows["short"]["error"]
            and p.seconds < 60
            else f"rows {list(rows)} in {p.seconds:.0f} s"
        ),
    )


# -- run paths: a run folder's paths are data (rows, manifests, requests, MCP arguments) ------------------------------


def _noise_png(path: Path) -> Path:
    """A picture of random noise (every picture of the runs below is one flat grey): the secret to keep out."""
    import numpy as np
    from PIL import Image

    path.parent.mkdir(parents=True, exist_ok=True)
    Image.fromarray(np.random.default_rng(5).integers(0, 255, (90, 120, 3), dtype=np.uint8)).save(path)
    return path


def _noisy(data: bytes) -> bool:
    """Whether an encoded picture holds the noise of :func:`_noise_png` (a flat grey page does not)."""
    import io

    import numpy as np
    from PIL import Image

    try:
        return float(np.asarray(Image.open(io.BytesIO(data)).convert("L"), dtype=np.float64).std()) > 20
    except Exception:  # noqa: BLE001 - not a picture at all
        return False


def _tampered_run(ctx: Ctx, name: str = "run") -> tuple[Path, Path]:
    """A real benchmark run (2 wrong rows, its dataset outside the run folder) and a secret picture beside it."""
    folder = ctx.folder / "data"
    folder.mkdir(exist_ok=True)
    for i in range(2):
        (folder / f"img{i}.png").write_bytes(png(64, 48, 200))
    data = dataset(folder, [{"id": f"s{i}", "image": f"img{i}.png"} for i in range(2)])
    run = ctx.folder / "runs" / name
    p = ctx.run(
        [
            "bench",
            "--dataset",
            f"jsonl:{data}",
            "--brain",
            "scripted",
            "--brain-opt",
            "final=7",
            "--no-progress",
            "--out",
            str(run),
        ],
        timeout=90,
    )
    if p.rc != 0 or len(rows_of(run)) != 2:
        raise Verdict("silently wrong", f"the run to tamper with was not made: {_last_line(p.err)}")
    return run, _noise_png(ctx.folder / "outside" / "secret.png")


def _edit_rows(run: Path, edit: Callable[[dict[str, Any]], None]) -> None:
    rows = rows_of(run)
    for row in rows:
        edit(row)
    (run / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def _report_pictures(out: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted((out / "images").glob("*"))] if (out / "images").is_dir() else []


for _label, _image in [
    ("an absolute path to a picture outside the run (its digest kept)", "abs"),
    ("../../outside/secret.png", "rel"),
    ("a link inside the run pointing out of it", "link"),
]:

    @case("run-paths", f"report: a row's sample image is {_label}")
    def _(ctx: Ctx, how: str = _image) -> None:
        run, secret = _tampered_run(ctx)
        if how == "link":
            (run / "page.png").symlink_to(secret)
        target = {"abs": str(secret), "rel": "../../outside/secret.png", "link": "page.png"}[how]
        _edit_rows(run, lambda row: row["sample"].update(image=target) if row["sample"]["id"] == "s0" else None)
        out = ctx.folder / "rep"
        p = ctx.run(["report", str(run), "--out", str(out)])
        pictures = _report_pictures(out)  # the untouched row's page, and nothing for the edited one
        works(
            p,
            lambda p: (
                "the secret picture is in the report"
                if any(_noisy(b) for b in pictures)
                else None
                if len(pictures) == 1
                else f"{len(pictures)} pictures where the untouched row has 1"
            ),
        )


@case("run-paths", "report: the untampered run still shows its dataset's page (outside the run folder)")
def _(ctx: Ctx) -> None:
    run, _ = _tampered_run(ctx)
    out = ctx.folder / "rep"
    p = ctx.run(["report", str(run), "--out", str(out)])
    works(p, lambda p: None if len(_report_pictures(out)) == 2 else f"{len(_report_pictures(out))} pictures for 2")


@case("run-paths", "report: step folder '../../outside' and page names leading out")
def _(ctx: Ctx) -> None:
    run, secret = _tampered_run(ctx)
    (secret.parent / "secret.jpg").write_bytes(secret.read_bytes())
    (run / "steps" / "s0__none").mkdir(parents=True)
    (run / "steps" / "s0__none" / "leak.jpg").symlink_to(secret.parent / "secret.jpg")

    def edit(row: dict[str, Any]) -> None:
        row["steps_dir"] = "../../outside" if row["sample"]["id"] == "s1" else "steps/s0__none"
        row["result"]["input_page"] = "leak" if row["sample"]["id"] == "s0" else "secret"
        row["result"]["trace"] = [{"phase": "tool", "action": "applied", "tool": "deshadowing", "after": "../../x"}]
        row["sample"]["image"] = "nowhere.png"

    _edit_rows(run, edit)
    out = ctx.folder / "rep"
    p = ctx.run(["report", str(run), "--out", str(out)])
    works(
        p,
        lambda p: "a picture from outside is in the report" if any(_noisy(b) for b in _report_pictures(out)) else None,
    )


for _label, _how, _words in [
    (
        "manifest.json is a link to a file outside the run",
        "manifest-link",
        ("manifest.json", "link out of the run folder"),
    ),
    ("manifest.json is a named pipe", "manifest-fifo", ("manifest.json", "not a regular file")),
    (
        "results.jsonl is a link to a file outside the run",
        "results-link",
        ("results.jsonl", "link out of the run folder"),
    ),
    ("the manifest's 'config' is text", "config-text", ("manifest.json", "must be an object")),
    ("the manifest is a JSON list", "list", ("manifest.json", "JSON object")),
    ("the manifest's git commit is a number", "commit", ("manifest.json", "git.commit")),
]:

    @case("run-paths", f"report: {_label}")
    def _(ctx: Ctx, how: str = _how, words: tuple[str, ...] = _words) -> None:
        run, secret = _tampered_run(ctx)
        outside = secret.parent
        (outside / "manifest.json").write_text(json.dumps({"brain": "outside-brain"}))
        (outside / "results.jsonl").write_text((run / "results.jsonl").read_text())
        if how in ("manifest-link", "manifest-fifo"):
            (run / "manifest.json").unlink()
            if how == "manifest-link":
                (run / "manifest.json").symlink_to(outside / "manifest.json")
            else:
                os.mkfifo(run / "manifest.json")
        elif how == "results-link":
            (run / "results.jsonl").unlink()
            (run / "results.jsonl").symlink_to(outside / "results.jsonl")
        else:
            manifest = json.loads((run / "manifest.json").read_text())
            if how == "config-text":
                manifest["config"] = "x"
            elif how == "commit":
                manifest["git"] = {"commit": 5}
            else:
                manifest = [manifest]
            (run / "manifest.json").write_text(json.dumps(manifest))
        p = ctx.run(["report", str(run), "--out", str(ctx.folder / "rep")], timeout=30)
        if "outside-brain" in p.out + p.err or (ctx.folder / "rep").exists():
            raise Verdict("silently wrong", "the file outside the run was read into a report")
        refused(p, *words)


@case("run-paths", "bench resuming a run whose manifest.json is a JSON list")
def _(ctx: Ctx) -> None:
    run, _ = _tampered_run(ctx)
    (run / "manifest.json").write_text("[1, 2]")
    data = ctx.folder / "data" / "samples.jsonl"
    refused(bench(ctx, data, run), "manifest.json", "JSON object")


@case("run-paths", "API: load_run + write_report of a row naming a picture outside, and of a pipe as manifest")
def _(ctx: Ctx) -> None:
    run, secret = _tampered_run(ctx)
    _edit_rows(run, lambda row: row["sample"].update(image=str(secret)))
    (ctx.folder / "runs" / "piped").mkdir()
    (ctx.folder / "runs" / "piped" / "results.jsonl").write_text((run / "results.jsonl").read_text())
    os.mkfifo(ctx.folder / "runs" / "piped" / "manifest.json")
    code = (
        "(__import__('docintent.evaluation.report', fromlist=['x']).write_report("
        f"[__import__('docintent.evaluation.report', fromlist=['x']).load_run({str(run)!r})], {str(ctx.folder / 'rep')!r}),"
        f" __import__('docintent.evaluation.report', fromlist=['x']).load_run({str(ctx.folder / 'runs' / 'piped')!r}))"
    )
    p = _api(ctx, code)
    if any(_noisy(b) for b in _report_pictures(ctx.folder / "rep")):
        raise Verdict("silently wrong", "the secret picture is in the report")
    api_refused(p, "manifest.json", "not a regular file")


@case("run-paths", "serve --runs: the runs browser of a row naming a picture outside the runs folder")
def _(ctx: Ctx) -> None:
    run, secret = _tampered_run(ctx)
    _edit_rows(run, lambda row: row["sample"].update(image=str(secret)) if row["sample"]["id"] == "s0" else None)
    with Service(
        ctx, "--brain", "scripted", "--runs", str(run.parent), "--data-dir", str(ctx.folder / "svc")
    ) as service:
        report = service.get("/v1/benchmarks/run")
        images = (
            [service.get(i["url"]).body for f in report.json().get("failures", []) for i in f["images"]]
            if report.status == 200
            else []
        )
    if report.status != 200:
        raise Verdict("traceback" if report.status >= 500 else "silently wrong", f"HTTP {report.status}")
    expect(
        not any(_noisy(b) for b in images) and len(images) == 1,
        f"{len(images)} pictures served (the untouched row's page is 1), the secret among them: "
        f"{any(_noisy(b) for b in images)}",
        "the untouched row's page served, nothing for the edited row",
    )


@case("run-paths", "serve --runs: a run folder that is a link to a folder outside the runs folder")
def _(ctx: Ctx) -> None:
    run, _ = _tampered_run(ctx, "inside")
    away = ctx.folder / "elsewhere" / "away"
    away.parent.mkdir()
    run.rename(away)
    (ctx.folder / "runs" / "away").symlink_to(away, target_is_directory=True)
    with Service(ctx, "--brain", "scripted", "--runs", str(ctx.folder / "runs")) as service:
        listing = service.get("/v1/benchmarks").json()
        report = service.get("/v1/benchmarks/away")
    if any(entry.get("name") == "away" for entry in listing):
        raise Verdict("silently wrong", "the linked run folder is listed")
    http_refused(report, 404, "no such benchmark run")


for _label, _how in [("a manifest whose 'config' is text", "config"), ("a manifest that is a named pipe", "fifo")]:

    @case("run-paths", f"serve --runs: /v1/benchmarks/NAME and its files of {_label}")
    def _(ctx: Ctx, how: str = _how) -> None:
        run, _ = _tampered_run(ctx)
        (run / "manifest.json").unlink()
        if how == "fifo":
            os.mkfifo(run / "manifest.json")
        else:
            (run / "manifest.json").write_text(json.dumps({"config": "x"}))
        with Service(ctx, "--brain", "scripted", "--runs", str(run.parent)) as service:
            listing = service.get("/v1/benchmarks", timeout=20)
            files = service.get("/v1/benchmarks/run/files/0", timeout=20)
            report = service.get("/v1/benchmarks/run", timeout=20)
        if listing.status >= 500 or files.status >= 500:
            raise Verdict("traceback", f"HTTP {listing.status} / {files.status}")
        if files.status != 400:
            raise Verdict("silently wrong", f"files: HTTP {files.status}")
        http_refused(report, 400, "manifest.json")


@case("run-paths", "serve: run names and page names with '..', '%2e%2e', NUL and backslashes")
def _(ctx: Ctx) -> None:
    run, secret = _tampered_run(ctx)
    replies = []
    with Service(ctx, "--brain", "scripted", "--runs", str(run.parent)) as service:
        for name in [
            "..",
            "%2e%2e",
            "..%2f..%2foutside",
            "run%2f..%2f..%2foutside",
            "%00",
            "..%5c..%5coutside",
            "run%00",
            "~",
        ]:
            replies += [
                service.get(f"/v1/benchmarks/{name}"),
                service.get(f"/v1/benchmarks/{name}/files/0"),
                service.get(f"/v1/runs/{name}"),
                service.get(f"/v1/runs/{'0' * 32}/pages/{name}.jpg"),
            ]
    bad = [r for r in replies if r.status >= 500]
    if bad:
        raise Verdict("traceback", f"HTTP {bad[0].status}: {bad[0].body[:120]!r}")
    leaked = [r for r in replies if r.status < 400 or _noisy(r.body)]
    expect(
        not leaked,
        f"answered {leaked[0].status if leaked else ''}: {leaked[0].body[:120]!r}" if leaked else "",
        f"{len(replies)} requests, each a 4xx",
        outcome="clean error",
    )


@case("run-paths", "MCP: '..' out of the allowed folder for every tool that takes a path")
def _(ctx: Ctx) -> None:
    secret = _noise_png(ctx.folder / "outside" / "secret.png")
    allowed = ctx.folder / "allowed"
    allowed.mkdir()
    (allowed / "page.png").write_bytes(png(64, 48, 200))
    out_of = str(allowed / ".." / "outside" / "secret.png")
    replies = []
    with Mcp(ctx, "--allow", str(allowed)) as mcp:
        for name, arguments in [
            ("ask", {"question": "What is the total?", "image_path": out_of, "strategy": "none"}),
            ("restore", {"tools": ["rotate_90"], "image_path": out_of}),
            (
                "restore",
                {
                    "tools": ["rotate_90"],
                    "image_path": str(allowed / "page.png"),
                    "output_path": str(allowed / ".." / "outside" / "secret.png"),
                },
            ),
            ("diagnose", {"image_path": out_of}),
            ("extract", {"image_path": out_of}),
            ("zoom", {"bbox": [0, 0, 1, 1], "image_path": out_of}),
        ]:
            replies.append(mcp.tool(name, arguments))
    if not _noisy(secret.read_bytes()):
        raise Verdict("silently wrong", "the file outside the allowed folder was overwritten")
    bad = [text for error, text in replies if not error or "outside the folders" not in text]
    if bad:
        raise Verdict(
            "traceback" if any("Traceback" in t or "unexpected" in t for t in bad) else "silently wrong", bad[0][:200]
        )
    raise Verdict("clean error", f"{len(replies)} calls refused: " + replies[0][1][:100])


for _label, _how in [
    ("restore output_path naming a named pipe in the allowed folder", "fifo"),
    ("image_path through a link that loops on itself", "loop"),
    ("image_path naming a folder link leading out", "dirlink"),
]:

    @case("run-paths", f"MCP: {_label}")
    def _(ctx: Ctx, how: str = _how) -> None:
        allowed = ctx.folder / "allowed"
        allowed.mkdir()
        (allowed / "page.png").write_bytes(png(64, 48, 200))
        _noise_png(ctx.folder / "outside" / "secret.png")
        if how == "fifo":
            os.mkfifo(allowed / "out.png")
            arguments = {
                "tools": ["rotate_90"],
                "image_path": str(allowed / "page.png"),
                "output_path": str(allowed / "out.png"),
            }
            tool, words = "restore", "not a regular file"
        elif how == "loop":
            (allowed / "loop.png").symlink_to("loop.png")
            arguments, tool, words = {"image_path": str(allowed / "loop.png")}, "diagnose", "loop.png"
        else:
            (allowed / "link").symlink_to(ctx.folder / "outside", target_is_directory=True)
            arguments, tool, words = (
                {"image_path": str(allowed / "link" / "secret.png")},
                "diagnose",
                "outside the folders",
            )
        with Mcp(ctx, "--allow", str(allowed)) as mcp:
            error, text = mcp.tool(tool, arguments, bound=30)
        mcp_refused(error, text, words)


# --- the sweep -----------------------------------------------------------------------------------------------


def _scan_files(folder: Path) -> list[str]:
    """Every file under ``folder`` (links not followed), as text."""
    texts = []
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            info = os.lstat(path)
            if stat.S_ISREG(info.st_mode) and info.st_size < 50_000_000:
                texts.append(path.read_bytes().decode("utf-8", "replace"))
    return texts


def _leaks(texts: list[str]) -> list[str]:
    return sorted({fragment for fragment in LEAKS for text in texts if fragment in text})


def run_case(
    klass: str, name: str, fn: Callable[[Ctx], None], servers: dict[str, str], scratch: Path, index: int
) -> dict[str, Any]:
    folder = scratch / f"case{index:03d}"
    folder.mkdir(parents=True)
    ctx = Ctx(folder, servers["model"], servers["failing"], servers["slow"])
    start = time.monotonic()
    try:
        fn(ctx)
        outcome, note = "silently wrong", "the case stated no outcome"
    except Verdict as verdict:
        outcome, note = verdict.outcome, verdict.note
    except Exception as err:  # noqa: BLE001 - a broken case is reported, never hidden
        outcome, note = "traceback", f"the case itself failed: {type(err).__name__}: {err}"
        traceback.print_exc()
    leaked = _leaks(ctx.texts + _scan_files(folder))
    if leaked:
        outcome, note = "leak", f"found {leaked}; {note}"
    return {
        "class": klass,
        "case": name,
        "outcome": outcome,
        "note": " ".join(note.split())[:300],
        "seconds": round(time.monotonic() - start, 2),
    }


def _model_script(body: dict[str, Any]) -> dict[str, Any]:
    if "answer" in offered_tools(body):
        return tool_call("answer", answer="42", confidence="high")
    return {"content": '{"answer": "42", "confidence": "high"}'}


def write_results(rows: list[dict[str, Any]], seconds: float, load: str) -> None:
    RESULTS.mkdir(parents=True, exist_ok=True)
    by_class: dict[str, Counter] = {}
    for row in rows:
        by_class.setdefault(row["class"], Counter())[row["outcome"]] += 1
    total = Counter(row["outcome"] for row in rows)
    data = {
        "cases": len(rows),
        "outcomes": dict(total),
        "by_class": {k: dict(v) for k, v in by_class.items()},
        "seconds": round(seconds, 1),
        "load": load,
        "rows": rows,
    }
    (RESULTS / "hostile.json").write_text(json.dumps(data, indent=2) + "\n")
    lines = [
        "# Hostile sweep",
        "",
        f"`python benchmarks/hostile.py`: {len(rows)} cases in {seconds:.0f} s (load average {load}).",
        "",
        "| class | cases | " + " | ".join(OUTCOMES) + " |",
        "|---|---:|" + "---:|" * len(OUTCOMES),
    ]
    for klass, counts in by_class.items():
        lines.append(
            f"| {klass} | {sum(counts.values())} | " + " | ".join(str(counts.get(o, 0)) for o in OUTCOMES) + " |"
        )
    lines.append(f"| **all** | **{len(rows)}** | " + " | ".join(f"**{total.get(o, 0)}**" for o in OUTCOMES) + " |")
    lines += ["", "| class | case | outcome | note |", "|---|---|---|---|"]
    for row in rows:
        note = row["note"].replace("|", "\\|")
        lines.append(f"| {row['class']} | {row['case']} | {row['outcome']} | {note} |")
    (RESULTS / "hostile.md").write_text("\n".join(lines) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--only", action="append", help="run only this class (repeatable) or case name")
    parser.add_argument("--save", action="store_true", help="save the table even with --only")
    args = parser.parse_args(argv)
    chosen = [c for c in CASES if not args.only or c[0] in args.only or c[1] in args.only]
    rows = []
    start = time.monotonic()

    def failing(body: dict[str, Any]) -> dict[str, Any]:
        return {"status": 503, "error": "overloaded, try later"}

    def slow(body: dict[str, Any]) -> dict[str, Any]:
        return {**_model_script(body), "delay": 30}

    with (
        tempfile.TemporaryDirectory(prefix="docintent-hostile-") as scratch,
        FakeOpenAI(_model_script) as model,
        FakeOpenAI(failing) as broken,
        FakeOpenAI(slow) as sleepy,
    ):
        servers = {
            "model": secret_url(model.base_url),
            "failing": secret_url(broken.base_url),
            "slow": secret_url(sleepy.base_url),
        }
        for index, (klass, name, fn) in enumerate(chosen):
            row = run_case(klass, name, fn, servers, Path(scratch), index)
            rows.append(row)
            print(f"{row['outcome']:<15} {klass:<16} {name:<58} {row['seconds']:6.1f}s  {row['note'][:90]}", flush=True)
    seconds = time.monotonic() - start
    load = " ".join(f"{x:.1f}" for x in os.getloadavg())
    total = Counter(row["outcome"] for row in rows)
    print(
        f"\n{len(rows)} cases in {seconds:.0f} s (load {load}): "
        + ", ".join(f"{total.get(o, 0)} {o}" for o in OUTCOMES)
    )
    if not args.only or args.save:
        write_results(rows, seconds, load)
    bad = sum(total.get(o, 0) for o in ("traceback", "silently wrong", "hang", "leak"))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
