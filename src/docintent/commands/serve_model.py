"""``docintent serve-model``: a real OpenAI-compatible model server on this machine (llama.cpp, the packaged model)."""

from __future__ import annotations

import argparse

from ._common import int_range, positive_int

port_arg = int_range(1, 65535)

#: Shown under ``docintent serve-model --help``.
EXAMPLES = (
    "docintent serve-model --port 8080",
    "docintent serve-model --model my-model.gguf --threads 4 --context 4096",
)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve-model",
        help="serve a small local model (llama.cpp, Gemma 3 270M from PyPI) on an OpenAI-compatible API",
        description="Start llama.cpp's OpenAI-compatible server (llama-cpp-python) on the packaged Gemma 3 270M "
        "model, or on --model FILE.gguf, with a chat format that keeps the model's own turn layout. Any command "
        "then drives it with --base-url http://HOST:PORT/v1. The model reads no images: pages reach it as OCR text. "
        "Needs: pip install 'docintent[local-llm]'.",
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=port_arg, default=8080, help="port (default 8080, as llama.cpp's own server)")
    p.add_argument("--model", metavar="FILE", help="a GGUF model file (default: the packaged Gemma 3 270M)")
    p.add_argument("--threads", type=positive_int, default=None, help="CPU threads (default: every core)")
    p.add_argument("--context", type=positive_int, default=8192, help="context window in tokens (default 8192)")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    import sys
    from pathlib import Path

    from ..localmodel import server_app

    app = server_app(Path(args.model) if args.model else None, threads=args.threads, context=args.context)
    import uvicorn

    print(f"model server at http://{args.host}:{args.port}/v1; Ctrl-C stops it", file=sys.stderr, flush=True)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0
