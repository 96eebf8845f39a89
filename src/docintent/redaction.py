"""One place that removes secrets from text before it leaves the process.

Every message, log line, trace, manifest, lock file, crash report, HTTP response, Server-Sent Event and MCP
reply docintent writes passes through :func:`redact`. It replaces with ``***``:

- the user and password of a URL (``http://alice:pa@ss@host/v1`` -> ``http://***@host/v1``, passwords that
  contain ``@`` included);
- the value of an ``api_key`` / ``token`` / ``password`` / ``secret`` / ``authorization`` setting written as
  ``key=value``, as JSON or a Python literal (``"api_key": "..."``), or as a command-line option
  (``--api-key X``, ``--token=X``, ``'--api-key', 'X'`` in a printed argument list);
- bearer and basic credentials (``Authorization: Bearer X``, ``Bearer X``) and OpenAI-style ``sk-...`` keys;
- any value registered with :func:`register_secret` (keys, tokens and URL passwords docintent was given),
  wherever and however it appears, so a secret with no recognisable shape is caught too.

>>> redact("cannot reach http://alice:pa@ss@127.0.0.1:8000/v1 (model m)")
'cannot reach http://***@127.0.0.1:8000/v1 (model m)'
>>> redact('docintent bench --brain-opt api_key=hunter22 --api-key sk-abcdefghijklmnopqrst')
'docintent bench --brain-opt api_key=*** --api-key ***'
>>> redact('{"token": "abc123", "max_tokens": 512}')
'{"token": "***", "max_tokens": 512}'

This module imports nothing from docintent: every layer may use it.
"""

from __future__ import annotations

import io
import json
import logging
import os
import re
import threading
from typing import Any, TextIO
from urllib.parse import unquote

MASK = "***"

#: Setting names whose values are secrets (matched as whole words, so ``max_tokens`` is not one).
SECRET_WORDS = (
    "api_key",
    "apikey",
    "api-key",
    "token",
    "access_token",
    "password",
    "passwd",
    "secret",
    "client_secret",
    "authorization",
)
#: Environment variables whose values are registered as secrets by :func:`register_environment`.
SECRET_ENVIRONMENT = ("OPENAI_API_KEY", "DOCINTENT_API_KEY", "DOCINTENT_SERVE_TOKEN")
#: Environment variables holding URLs whose credentials are registered by :func:`register_environment`.
URL_ENVIRONMENT = ("OPENAI_BASE_URL", "DOCINTENT_BASE_URL")
#: Registered values shorter than this are left to the patterns (masking every "pw" in a text helps nobody).
MIN_SECRET_LENGTH = 6

_KEY = r"(?:[A-Za-z0-9]+[_-])*(?:api[_-]?key|apikey|token|access[_-]token|password|passwd|secret|authorization)"
_URL = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)([^\s\"'<>`]*)")
# A value is a quoted string or a bare token; an object or a list (``"api_key": {...}``) is not one: its own
# keys and strings are looked at instead.
_KEY_VALUE = re.compile(rf"(?i)(?<![A-Za-z0-9_-])({_KEY})(\s*=\s*)(\"[^\"]*\"|'[^']*'|[^\s&,;\"'<>(){{}}\[\]]+)")
_QUOTED_KEY = re.compile(rf"(?i)([\"'])({_KEY})\1(\s*:\s*)(\"(?:[^\"\\]|\\.)*\"|'(?:[^'\\]|\\.)*'|[^\s,{{}}\[\]\"']+)")
_OPTION = re.compile(rf"(?i)(?<![A-Za-z0-9_-])(--{_KEY.replace('[_-]', '-')})(=|\s+|['\"],\s*['\"])([^\s'\"]+)")
# A credential after "Bearer" / "Basic" / "Token": six or more token characters with a digit among them (so
# prose such as "basic checks" is left alone).
_AUTH_SCHEME = re.compile(r"(?i)\b(bearer|basic|token)(\s+)(?=[A-Za-z._~+/=-]*[0-9])([A-Za-z0-9._~+/=-]{6,})")
# A header line "Authorization: <anything up to the end of the line>".
_HEADER = re.compile(r"(?i)\b(authorization)(\s*:\s*)(?![\"']?\*\*\*)([^\r\n\"']+)")
_SK_KEY = re.compile(r"\bsk-[A-Za-z0-9_-]{16,}")

_secrets: set[str] = set()
_secrets_lock = threading.Lock()


def register_secret(value: object) -> None:
    """Remember ``value`` as a secret: :func:`redact` masks it wherever it appears (also JSON- and
    URL-encoded). Values shorter than :data:`MIN_SECRET_LENGTH` (spaces around them not counted), or without
    a letter or digit, are ignored."""
    if not isinstance(value, str):
        return
    value = value.strip()  # an empty or blank "secret" (``--token '   '``) would otherwise mask every indentation
    if len(value) < MIN_SECRET_LENGTH or not any(ch.isalnum() for ch in value):
        return
    forms = {value, unquote(value), json.dumps(value)[1:-1]}
    with _secrets_lock:
        _secrets.update(f for f in forms if len(f) >= MIN_SECRET_LENGTH)


def register_url(url: object) -> None:
    """Register the password of ``url`` (as written and decoded) as a secret."""
    if not isinstance(url, str) or "@" not in url:
        return
    match = _URL.search(url)
    if not match:
        return
    userinfo = _userinfo(match.group(2))
    if userinfo:
        # The password, and user:password (a user name alone is no secret, and masking it everywhere would
        # garble paths such as /home/<user>); inside URLs both are masked by the URL rule anyway.
        register_secret(userinfo)
        register_secret(userinfo.partition(":")[2])


def register_options(options: dict[str, Any] | None) -> None:
    """Register the secret-named values (and URL credentials) of a dict of options, e.g. brain options."""
    for key, value in (options or {}).items():
        if is_secret_name(key):
            register_secret(str(value))
        elif isinstance(value, str):
            register_url(value)


def register_environment(environ: dict[str, str] | None = None) -> None:
    """Register the API keys, tokens and URL credentials of the conventional environment variables."""
    env = os.environ if environ is None else environ
    for name in SECRET_ENVIRONMENT:
        register_secret(env.get(name))
    for name in URL_ENVIRONMENT:
        register_url(env.get(name))


def register_argv(argv: list[str]) -> None:
    """Register the secrets of a command line: ``--api-key X``, ``--token=X``, ``api_key=X``, URL passwords."""
    option = re.compile(rf"(?i)^--{_KEY.replace('[_-]', '-')}$")
    for i, arg in enumerate(argv):
        name, eq, value = arg.partition("=")
        if option.match(arg) and i + 1 < len(argv):
            register_secret(argv[i + 1])
        elif eq and (option.match(name) or is_secret_name(name.strip())):
            register_secret(value)
        register_url(arg)


def is_secret_name(name: object) -> bool:
    """Whether a setting called ``name`` holds a secret (``api_key``, ``OPENAI_API_KEY``, ``token``, ...)."""
    return isinstance(name, str) and re.fullmatch(_KEY, name.strip(), re.I) is not None


def _userinfo(rest: str) -> str:
    """The user[:password] part of a URL without its scheme ('' when it has none).

    The user information ends at the last ``@`` before the host, so a password containing ``@`` is taken
    whole. A ``/`` after a ``user:`` that is not a port number belongs to the password too."""
    at = rest.rfind("@")
    if at < 0:
        return ""
    head = rest[:at]
    cut = re.search(r"[/?#]", head)
    if cut is None:
        return head
    first = head[: cut.start()]
    if "@" in first:  # "tok@host/path?mail=a@b": the credentials end before the host
        return first[: first.rfind("@")]
    name, colon, after = first.partition(":")
    if colon and not after.isdigit():  # "user:pa/ss@host": a password with a slash, not "host:8000/path"
        return head
    return ""  # an "@" only in the path or the query (an e-mail address): no credentials


def _mask_url(match: re.Match[str]) -> str:
    scheme, rest = match.group(1), match.group(2)
    userinfo = _userinfo(rest)
    if not userinfo:
        return match.group(0)
    return f"{scheme}{MASK}@{rest[len(userinfo) + 1 :]}"


def redact_values(text: object) -> str:
    """``text`` with only the registered secret values masked (no pattern rules): for text docintent wrote
    itself, such as ``--help``, where ``--token TOKEN`` names an option and ``Bearer TOKEN`` shows a form."""
    out = text if isinstance(text, str) else str(text)
    with _secrets_lock:
        known = sorted(_secrets, key=len, reverse=True)
    for secret in known:
        if secret in out:
            out = out.replace(secret, MASK)
    return out


def redact(text: object) -> str:
    """``text`` with every secret it holds replaced by ``***`` (see the module docstring)."""
    out = text if isinstance(text, str) else str(text)
    if not out:
        return out
    out = redact_values(out)
    if "://" in out:
        out = _URL.sub(_mask_url, out)
    out = _QUOTED_KEY.sub(lambda m: f"{m.group(1)}{m.group(2)}{m.group(1)}{m.group(3)}{_masked_value(m.group(4))}", out)
    out = _KEY_VALUE.sub(lambda m: f"{m.group(1)}{m.group(2)}{_masked_value(m.group(3))}", out)
    out = _OPTION.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", out)
    out = _HEADER.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", out)
    out = _AUTH_SCHEME.sub(lambda m: f"{m.group(1)}{m.group(2)}{MASK}", out)
    return _SK_KEY.sub(f"sk-{MASK}", out)


def _masked_value(value: str) -> str:
    """``***`` in place of a value, keeping its quotes; numbers, booleans and nulls (JSON) are left alone
    when they cannot be secrets of their own (``"token": null``)."""
    if value[:1] in "\"'" and value[-1:] == value[:1] and len(value) >= 2:
        return f"{value[0]}{MASK}{value[0]}" if len(value) > 2 else value
    if value in ("null", "None", "true", "false", "True", "False", MASK):
        return value
    return MASK


def redact_data(value: Any) -> Any:
    """A copy of JSON-like ``value`` with every string redacted and secret-named keys' values masked."""
    if isinstance(value, str):
        return redact(value)
    if isinstance(value, dict):
        return {
            k: (MASK if is_secret_name(k) and value[k] not in (None, "") else redact_data(v)) for k, v in value.items()
        }
    if isinstance(value, (list, tuple)):
        return [redact_data(v) for v in value]
    return value


class RedactingFilter(logging.Filter):
    """A logging filter that redacts a record's message, arguments and traceback text before any handler
    formats it (attach it to handlers: filters on loggers do not see records of their children)."""

    def filter(self, record: logging.LogRecord) -> bool:
        # The arguments stay arguments (formatters such as uvicorn's access log read them by position).
        if isinstance(record.msg, str):
            record.msg = redact(record.msg)
        if isinstance(record.args, dict):
            record.args = {k: _redacted_argument(v) for k, v in record.args.items()}
        elif isinstance(record.args, tuple):
            record.args = tuple(_redacted_argument(v) for v in record.args)
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = redact(record.exc_text)
        if record.stack_info:
            record.stack_info = redact(record.stack_info)
        return True


def _redacted_argument(value: Any) -> Any:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    return redact(value if isinstance(value, str) else str(value))


class RedactingStream(io.TextIOBase):
    """A text stream that redacts what is written to ``inner``, a line at a time (a secret is never split
    across two writes of one ``print``). ``flush`` writes out a pending partial line."""

    def __init__(self, inner: TextIO) -> None:
        super().__init__()
        self.inner = inner
        self._pending = ""
        self._lock = threading.Lock()

    def write(self, text: str) -> int:
        with self._lock:
            self._pending += text
            cut = max(self._pending.rfind("\n"), self._pending.rfind("\r"))
            if cut >= 0:
                ready, self._pending = self._pending[: cut + 1], self._pending[cut + 1 :]
                self._write(redact(ready))
        return len(text)

    def _write(self, text: str) -> None:
        try:
            self.inner.write(text)
        except UnicodeEncodeError:  # a lone surrogate (an answer, a dataset field): shown as its escape
            encoding = getattr(self.inner, "encoding", None) or "utf-8"
            self.inner.write(text.encode(encoding, "backslashreplace").decode(encoding))

    def flush(self) -> None:
        with self._lock:
            if self._pending:
                self._write(redact(self._pending))
                self._pending = ""
        self.inner.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        try:
            return self.inner.isatty()
        except ValueError:  # the stream is closed (at exit, after pytest's capture ends)
            return False

    def fileno(self) -> int:
        return self.inner.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.inner, "encoding", "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.inner, "errors", None)

    @property
    def buffer(self) -> Any:
        """The inner stream's byte buffer (binary protocols such as MCP's stdio redact their own messages)."""
        return self.inner.buffer


def public_url(url: str | None) -> str | None:
    """``url`` fit to be shown: credentials masked (None stays None)."""
    if url is None:
        return None
    return redact(url)


__all__ = [
    "MASK",
    "RedactingFilter",
    "RedactingStream",
    "is_secret_name",
    "public_url",
    "redact",
    "redact_data",
    "redact_values",
    "register_argv",
    "register_environment",
    "register_options",
    "register_secret",
    "register_url",
]
