"""``docintent evidence DOC "QUESTION"``: per-page evidence ``[{evidence, bbox}]`` and an answer over it."""

from __future__ import annotations

import argparse
import json

from ._common import (
    BRAIN_KINDS,
    ENGINE_KINDS,
    add_endpoint_arguments,
    add_profile_argument,
    add_progress_argument,
    brain_choice,
    brain_kind,
    dpi_arg,
    list_kinds,
    pages_arg,
    unit_float,
)

#: Shown under ``docintent evidence --help``.
EXAMPLES = ('docintent evidence manual.pdf "How long is the warranty?"',)


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "evidence",
        help="find the evidence for a question on each page of a PDF (or image) and answer from it",
        description="Prints, per page, a JSON list [{evidence, bbox}] (bbox in 0-1000 page coordinates; [] when "
        "the page is irrelevant), the estimated input tokens of the page, page+ocr and evidence+ocr "
        "contexts (images: one token per 28x28 px after capping at 2048 px; text: ~4 characters per token), "
        "and the answer of the brain in the chosen context.",
    )
    p.add_argument("document", help="PDF or image file")
    p.add_argument("question")
    p.add_argument(
        "--pages", type=pages_arg, help="pages or ranges counted from 1, e.g. 1-20 or 1,3,5-7 (default: all)"
    )
    p.add_argument(
        "--mode",
        choices=["page", "page+ocr", "evidence+ocr"],
        default="evidence+ocr",
        help="context the answer step sees (default evidence+ocr)",
    )
    list_kinds(
        p.add_argument(
            "--brain",
            type=brain_kind,
            default=None,
            metavar="KIND",
            help="brain for the answer step: %(kinds)s (default offline)",
        ),
        kinds=BRAIN_KINDS,
    )
    p.add_argument(
        "--brain-opt", action="append", metavar="KEY=VALUE", help="brain option, e.g. base_url=http://localhost:8000/v1"
    )
    add_endpoint_arguments(p)
    p.add_argument("--no-answer", action="store_true", help="only find evidence; skip the answer step")
    p.add_argument(
        "--threshold",
        type=unit_float,
        default=None,
        help="share of the question's keyword weight a line must match (default 0.5)",
    )
    p.add_argument("--dpi", type=dpi_arg, default=None, help="PDF render resolution (default DOCINTENT_PDF_DPI)")
    p.add_argument(
        "--text",
        choices=["auto", "ocr"],
        default="auto",
        help="auto (default): a PDF's text layer where a page has one, OCR elsewhere; ocr: always OCR",
    )
    p.add_argument(
        "--engine",
        choices=ENGINE_KINDS,
        default=None,
        metavar="KIND",
        help="OCR engine for pages read by OCR: %(choices)s (default DOCINTENT_OCR_ENGINE, else rapidocr)",
    )
    p.add_argument(
        "--match",
        choices=["auto", "lexical", "fused"],
        default="auto",
        help="page relevance: lexical, or fused with passage embeddings (needs docintent[dense]); "
        "auto (default): fused when docintent[dense] is installed",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    add_profile_argument(p)
    add_progress_argument(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    from ..errors import ConfigError
    from ..evaluation.executors import Progress
    from ..io import load_document, page_count
    from ..ocr import get_engine
    from ..retrieval.evidence import (
        DEFAULT_THRESHOLD,
        MODES,
        answer,
        collect_evidence,
        context,
        parse_pages,
        text_layer,
    )

    try:
        numbers = parse_pages(args.pages, page_count(args.document))
    except ConfigError as err:
        raise ConfigError(f"{args.document}: {err}") from None
    pages = load_document(args.document, pages=[n - 1 for n in numbers], dpi=args.dpi)
    threshold = DEFAULT_THRESHOLD if args.threshold is None else args.threshold
    texts = None
    if args.text == "auto" and str(args.document).lower().endswith(".pdf"):
        texts = text_layer(args.document, pages, numbers)
    dense = None
    if args.match != "lexical":
        from ..retrieval.passages import load_sentence_model

        try:
            dense = load_sentence_model()
        except ImportError:
            if args.match == "fused":
                raise
    bar = Progress(len(numbers), desc="evidence", unit="page", show=False if args.no_progress else None)
    try:
        found = collect_evidence(
            pages,
            args.question,
            threshold=threshold,
            numbers=numbers,
            texts=texts,
            dense=dense,
            engine=get_engine(args.engine) if args.engine else None,
            on_page=lambda number: bar.update(),
        )
    finally:
        bar.close()
    costs = {
        mode: context([d for d in found if d.relevant] if mode == "evidence+ocr" else found, mode)[2] for mode in MODES
    }
    result = None
    if not args.no_answer:
        from ..brains import get_brain

        choice = brain_choice(args)
        brain = get_brain(choice.kind, **choice.options)
        try:
            result = answer(found, args.question, brain, mode=args.mode)
        finally:
            close = getattr(brain, "close", None)
            if close:
                close()
    if args.json:
        data = {
            "question": args.question,
            "pages": {str(d.number): d.to_list() for d in found},
            "tokens": {
                m: {"images": c.images, "image_tokens": c.image_tokens, "text_tokens": c.text_tokens, "total": c.total}
                for m, c in costs.items()
            },
        }
        if result is not None:
            data["answer"] = {
                "text": result.answer.text,
                "confidence": result.answer.confidence,
                "mode": result.mode,
                "pages_used": list(result.pages_used),
                "seconds": round(result.seconds, 2),
            }
        print(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    for d in found:
        print(f"page {d.number}: {json.dumps(d.to_list(), ensure_ascii=False)}")
    relevant = [d.number for d in found if d.relevant]
    print(f"\nrelevant pages: {', '.join(map(str, relevant)) or 'none'} of {len(found)}")
    print("input tokens (estimated: images 1 per 28x28 px after a 2048-px cap, text ~4 chars per token):")
    for mode, c in costs.items():
        print(
            f"  {mode:<13} {c.total:>8}  (image tokens {c.image_tokens} for {c.images} image(s), text tokens {c.text_tokens})"
        )
    if result is not None:
        print(f"\nanswer ({result.mode}, pages {', '.join(map(str, result.pages_used)) or '-'}): {result.answer.text}")
        print(f"confidence: {result.answer.confidence:.2f}   seconds: {result.seconds:.2f}")
    return 0
