"""Ask a question about a damaged page, offline: no model, no network, no files of your own.

The page is drawn here (an invoice), then turned on its side and shadowed as a phone photo might be. Answering
it as it is reads nothing useful; the docintent strategy turns it upright, checks that the turn helped, and
answers. Run: python examples/ask_offline.py
"""

from __future__ import annotations

import numpy as np

import docintent
from docintent.page import Page
from docintent.synth.degrade import shadow
from docintent.synth.render import render_text_lines

LINES = [
    "ACME Office Supplies",
    "Invoice number: INV-2041",
    "Date: 12 March 2024",
    "Customer: Northwind Traders",
    "Total amount due: $1,250.00",
    "Payment within 30 days",
]


def damaged_invoice() -> Page:
    """The invoice, turned 90 degrees counter-clockwise and shadowed."""
    pixels = render_text_lines(LINES, width=900, font_px=30)
    turned = np.ascontiguousarray(np.rot90(pixels))
    return Page.from_array(shadow(turned, np.random.default_rng(3), severity=0.5), source="damaged invoice")


def main() -> None:
    page = damaged_invoice()
    question = "What is the total amount due?"
    direct = docintent.ask(page, question, strategy="none")
    result = docintent.ask(page, question)  # the docintent strategy with the offline reader
    print(f"question: {question}")
    print(f"answered directly:  {direct.answer!r}")
    print(f"docintent strategy: {result.answer!r} (confidence {result.confidence:.2f})")
    print(f"kept: {result.tools_kept}, rolled back: {result.tools_rolled_back}")
    for step in result.trace:
        print(f"  {step.phase.value:<6} {step.action.value:<10} {step.tool or '':<12} {step.reason}")
    assert result.answer == "$1,250.00", result.answer


if __name__ == "__main__":
    main()
