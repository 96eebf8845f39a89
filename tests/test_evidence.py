"""Evidence over many pages: the right pages, their lines with boxes, fewer tokens, and the CLI."""

from __future__ import annotations

import json

import numpy as np
import pytest
from PIL import Image

from docintent.brains import Answer, FunctionBrain, ScriptedBrain
from docintent.cli import main
from docintent.errors import ConfigError
from docintent.ocr import get_engine
from docintent.page import Page
from docintent.retrieval.evidence import answer, collect_evidence, context, parse_pages
from docintent.synth.render import render_text_lines, sentence

QUESTION = "When is the payment for contract 5521 due, and what total amount is due?"
FACTS = {
    2: "Total amount due under contract 5521: 8,430.75 EUR",
    4: "Payment for contract 5521 is due on 30 April 2025.",
}


def _document(n_pages: int = 5, lines_per_page: int = 5) -> list[np.ndarray]:
    """Pages of filler sentences (the filler vocabulary shares 'total', 'amount', 'due', 'payment',
    'contract' with the question); pages 2 and 4 also hold one fact each."""
    rng = np.random.default_rng(7)
    pages = []
    for number in range(1, n_pages + 1):
        lines = [sentence(rng, 7) for _ in range(lines_per_page)]
        if number in FACTS:
            lines.insert(2, FACTS[number])
        pages.append(render_text_lines(lines, width=760, font_px=18))
    return pages


@pytest.fixture(scope="module")
def found():
    pages = [Page.from_array(a, source=f"p{i}") for i, a in enumerate(_document(), 1)]
    return collect_evidence(pages, QUESTION, engine=get_engine("rapidocr", cache=False))


def test_only_pages_holding_the_answer_have_evidence(found):
    relevant = {d.number for d in found if d.relevant}
    truth = set(FACTS)
    recall = len(relevant & truth) / len(truth)
    precision = len(relevant & truth) / max(len(relevant), 1)
    assert (recall, precision) == (1.0, 1.0), relevant
    assert [d.to_list() for d in found if d.number not in FACTS] == [[], [], []]


def test_evidence_is_the_fact_line_with_its_box(found):
    page2 = next(d for d in found if d.number == 2)
    texts = " ".join(item["evidence"] for item in page2.to_list())
    assert "8,430.75" in texts
    item = next(i for i in page2.items if "8,430.75" in i.evidence)
    x0, y0, x1, y1 = item.box.to_pixels(page2.page.width, page2.page.height)
    # the fact is line 3 of 6: its box lies in the middle band of the page, not over all of it
    assert y0 > 0.2 * page2.page.height and y1 < 0.85 * page2.page.height
    assert all(0 <= v <= 1000 for v in page2.to_list()[0]["bbox"])


def test_evidence_context_costs_far_fewer_tokens_than_whole_pages(found):
    costs = {
        m: context([d for d in found if d.relevant] if m == "evidence+ocr" else found, m)[2]
        for m in ("page", "page+ocr", "evidence+ocr")
    }
    assert costs["page"].images == 5 and costs["page"].text_tokens == 0
    assert costs["page+ocr"].text_tokens > 0 and costs["page+ocr"].image_tokens == costs["page"].image_tokens
    assert costs["evidence+ocr"].images == 2
    assert costs["evidence+ocr"].total < 0.3 * costs["page+ocr"].total


def test_answer_step_sees_the_evidence_crops_and_text(found):
    seen = {}

    def read(state):
        seen["text"] = state.evidence[0].summary()
        seen["size"] = state.page.size
        return Answer("8,430.75 EUR, due 30 April 2025", 0.9)

    result = answer(found, QUESTION, FunctionBrain(answer=read), mode="evidence+ocr")
    assert result.answer.text.startswith("8,430.75") and result.pages_used == (2, 4)
    assert "8,430.75" in seen["text"] and "30 April 2025" in seen["text"] and "[page 4," in seen["text"]
    widest = max(d.page.width for d in found)
    assert seen["size"][0] <= widest and seen["size"][1] < sum(d.page.height for d in found) / 2
    whole = answer(found, QUESTION, ScriptedBrain(final="x"), mode="page")
    assert whole.pages_used == (1, 2, 3, 4, 5) and whole.cost.total > result.cost.total
    with pytest.raises(ConfigError, match="not one of"):
        answer(found, QUESTION, ScriptedBrain(final="x"), mode="evidence")


def test_parse_pages():
    assert parse_pages("1-3,5", 10) == [1, 2, 3, 5]
    assert parse_pages(None, 3) == [1, 2, 3]
    with pytest.raises(ConfigError, match=r"pages 5-40 are outside this 4-page document \(pages 1-4; pages count"):
        parse_pages("2-40", 4)  # partly outside: refused, never cut to the part inside
    with pytest.raises(ConfigError, match=r"page 9 is outside this 4-page document \(pages 1-4"):
        parse_pages("9", 4)
    with pytest.raises(ConfigError, match="not a page number"):
        parse_pages("a-b", 4)


def test_cli_prints_per_page_evidence_and_the_answer(tmp_path, capsys):
    pdf = tmp_path / "contract.pdf"
    images = [Image.fromarray(a) for a in _document(n_pages=3, lines_per_page=3)]
    images[0].save(pdf, save_all=True, append_images=images[1:], resolution=100)
    code = main(
        [
            "evidence",
            str(pdf),
            QUESTION,
            "--pages",
            "1-3",
            "--dpi",
            "100",
            "--json",
            "--brain",
            "scripted",
            "--brain-opt",
            "final=8,430.75 EUR",
        ]
    )
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    assert data["pages"]["1"] == [] and data["pages"]["3"] == []
    assert any("8,430.75" in e["evidence"] for e in data["pages"]["2"])
    assert data["answer"]["text"] == "8,430.75 EUR" and data["answer"]["pages_used"] == [2]
    assert data["tokens"]["evidence+ocr"]["total"] < data["tokens"]["page+ocr"]["total"]


def test_model_brain_prompt_carries_the_ocr_text(found):
    from docintent.brains.mllm import ModelBrain

    seen = {}

    def read(state):
        seen["history"] = ModelBrain.history_text(state)
        return Answer("x")

    answer(found, QUESTION, FunctionBrain(answer=read), mode="page+ocr")
    assert "ocr found:" in seen["history"] and "8,430.75" in seen["history"] and "[page 5]" in seen["history"]
    answer(found, QUESTION, FunctionBrain(answer=read), mode="page")
    assert seen["history"] == ""
