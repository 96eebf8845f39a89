"""Tiny PDFs with a real text layer, written by the retrieval tests (matplotlib's PDF backend)."""

from __future__ import annotations

from pathlib import Path


def make_pdf(path: Path, pages: list[str]) -> Path:
    """One PDF page per string; lines of each string become text lines on the page."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.backends.backend_pdf import PdfPages

    with PdfPages(path) as pdf:
        for text in pages:
            fig = plt.figure(figsize=(4, 5))
            for i, line in enumerate(text.split("\n")):
                fig.text(0.06, 0.92 - 0.06 * i, line, fontsize=7)
            pdf.savefig(fig)
            plt.close(fig)
    return path


FILLER = [
    "Tables and rules\nThe tabular environment sets columns.",
    "Page headers and footers\nRunning heads show chapter titles.",
    "Bibliography styles\nCitations are sorted by author.",
    "Hyphenation patterns\nLanguages load their own patterns.",
    "Cross references\nLabels and refs resolve after two runs.",
    "Counters\nEvery counter has a representation.",
    "Verbatim text\nCode is shown in a typewriter font.",
    "Indexes\nMakeindex sorts the entries.",
    "Title pages\nThe maketitle command prints a title.",
    "Margins\nGeometry changes the text block.",
    "Footnotes\nNotes appear at the bottom.",
    "Lists\nItemize and enumerate nest four levels.",
]
