"""Find the page that answers a question in a small collection of PDFs.

Three short manuals are written here as PDFs with a text layer (matplotlib's PDF backend), indexed with
``build_index`` (the text layer is read, no OCR needed), and searched with BM25. Each hit names its document and
page. Run: python examples/retrieval.py
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.backends.backend_pdf import PdfPages  # noqa: E402

from docintent.retrieval import PageIndex, build_index, get_retriever  # noqa: E402

MANUALS = {
    "printer.pdf": [
        "Loading paper\nOpen the tray and push the guides against the stack.",
        "Clearing a paper jam\nSwitch the printer off, open the rear cover and pull the sheet out slowly.",
        "Replacing the toner\nShake the new cartridge five times before you insert it.",
    ],
    "router.pdf": [
        "Connecting the router\nPlug the grey cable into the port marked WAN.",
        "Changing the Wi-Fi password\nOpen the admin page, choose Wireless and type the new key.",
        "Resetting\nHold the reset button for ten seconds to restore the factory settings.",
    ],
    "kettle.pdf": [
        "Filling\nNever fill the kettle above the MAX mark.",
        "Descaling\nBoil a mixture of water and vinegar, leave it for an hour, then rinse twice.",
    ],
}
QUESTIONS = [
    "how do I get a stuck sheet out of the printer?",
    "what is the factory reset procedure?",
    "can I descale it with vinegar?",
]


def write_pdf(path: Path, pages: list[str]) -> None:
    with PdfPages(path) as pdf:
        for text in pages:
            fig = plt.figure(figsize=(5, 6))
            for i, line in enumerate(text.split("\n")):
                fig.text(0.06, 0.9 - 0.07 * i, line, fontsize=9)
            pdf.savefig(fig)
            plt.close(fig)


def main() -> None:
    folder = Path(tempfile.mkdtemp(prefix="docintent-retrieval-"))
    for name, pages in MANUALS.items():
        write_pdf(folder / name, pages)
    report = build_index([folder], folder / "manuals.idx", progress=False)
    print(f"indexed {report.pages_total} pages of {len(MANUALS)} PDFs into {folder / 'manuals.idx'}")
    index = PageIndex.open(folder / "manuals.idx")
    bm25 = get_retriever(index, "bm25")
    answers = []
    for question in QUESTIONS:
        hits = bm25.search(question, k=3)
        print(f"\n{question}")
        if not hits:
            print("  no page shares a word with the question")
            answers.append(None)
            continue
        best = index.record(hits[0].handle)
        answers.append((Path(best.doc_path).name, best.page_no + 1))
        for hit in hits:
            record = index.record(hit.handle)
            print(
                f"  {hit.score:6.2f}  {Path(record.doc_path).name} page {record.page_no + 1}: {record.text.splitlines()[0]}"
            )
    index.close()
    assert answers == [("printer.pdf", 2), ("router.pdf", 3), ("kettle.pdf", 2)], answers


if __name__ == "__main__":
    main()
