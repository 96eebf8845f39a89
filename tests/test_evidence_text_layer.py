"""Evidence from a PDF's text layer (no OCR), concept and fused matching, and 'no relevant page'."""

from __future__ import annotations

import pytest

from docintent.brains import ScriptedBrain
from docintent.io import load_document
from docintent.retrieval.evidence import NO_RELEVANT_PAGE, answer, collect_evidence, text_layer
from retrieval_helpers import make_pdf
from test_retrieval_ranking import HashingModel

NEWS = [
    "Widget News\nIssue 30, October 2019\nContents\nNew formats 1\nBetter file names 2",
    "New formats\nThe development formats let you test a release early.\nThey are installed with the distribution.",
    "Better file names\nSpaces and dots in file names are handled.\nQuotes are no longer needed.",
    "Other changes\nA warning message was reworded.\nThe font table is made by default.",
]


class NoOcr:
    """An OCR engine that must not be called: the text layer has to be enough."""

    name = "forbidden"

    def read(self, page, region=None):
        raise AssertionError("OCR was called for a page that has a text layer")


@pytest.fixture(scope="module")
def news(tmp_path_factory):
    path = make_pdf(tmp_path_factory.mktemp("news") / "news.pdf", NEWS)
    numbers = [1, 2, 3, 4]
    pages = load_document(path, pages=[n - 1 for n in numbers], dpi=72)
    return path, pages, numbers, text_layer(path, pages, numbers)


def test_text_layer_gives_lines_with_boxes_in_reading_order(news):
    _, _, _, texts = news
    first = texts[0]
    assert first is not None and first.engine == "pdf-text"
    assert [line.text for line in first.lines][:2] == ["Widget News", "Issue 30, October 2019"]
    title, issue = first.lines[0].box, first.lines[1].box
    assert title.y1 <= issue.y0 + 0.01  # the title line is above the issue line
    assert issue.x0 < 0.2 and issue.height < 0.05


def test_month_and_year_question_finds_the_masthead_without_ocr(news):
    _, pages, numbers, texts = news
    found = collect_evidence(
        pages,
        "In which month and year was this issue of Widget News published?",
        numbers=numbers,
        texts=texts,
        engine=NoOcr(),
    )
    assert [d.number for d in found if d.relevant] == [1]
    assert "October 2019" in found[0].items[0].evidence


def test_unrelated_question_flags_nothing_and_the_answer_says_so(news):
    _, pages, numbers, texts = news
    found = collect_evidence(
        pages, "What is the boiling point of mercury?", numbers=numbers, texts=texts, engine=NoOcr()
    )
    assert not any(d.relevant for d in found)
    brain = ScriptedBrain(final="2019")  # would answer from page 1 if it were asked
    result = answer(found, "What is the boiling point of mercury?", brain, mode="evidence+ocr")
    assert result.answer.text == NO_RELEVANT_PAGE
    assert result.answer.confidence == 0.0 and result.pages_used == ()


def test_fused_matching_flags_a_paraphrase_that_shares_too_few_words(news):
    _, pages, numbers, texts = news
    question = "Are quotes still needed for file names with spaces and dots?"
    lexical = collect_evidence(pages, question, numbers=numbers, texts=texts, engine=NoOcr(), threshold=0.9)
    fused = collect_evidence(
        pages, question, numbers=numbers, texts=texts, engine=NoOcr(), threshold=0.9, dense=HashingModel()
    )
    assert not any(d.relevant for d in lexical)
    assert [d.number for d in fused if d.relevant] == [3]


@pytest.mark.dense
def test_real_sentence_model_ranks_the_paraphrased_page_first():
    from docintent.retrieval.passages import encode, load_sentence_model

    model = load_sentence_model()
    vectors = encode(model, ["How are file names with blanks treated?"] + NEWS)
    sims = vectors[1:] @ vectors[0]
    assert int(sims.argmax()) == 2
