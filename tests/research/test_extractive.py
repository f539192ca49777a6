"""Without a language model the tray answers questions about the loaded rows from those rows."""

from __future__ import annotations

from chat.answer_settings import answer_settings
from pubmed.models import Abstract
from research.context import PageContext
from research.extractive import answer_from_rows
from research.pages.tablizer import abstract_item
from research.registries import page_get

ROWS = [
    Abstract(pmid="101", title="Metformin and breast cancer survival", abstract="A cohort study.", year=2019),
    Abstract(pmid="102", title="Statins after stroke", abstract="Women with breast cancer were excluded.", year=2020),
    Abstract(pmid="103", title="A cohort of women", abstract="Outcomes of chemotherapy.", year=2021,
             mesh_terms=["Breast Neoplasms", "Breast Cancer"]),
    Abstract(pmid="104", title="Lung cancer screening", abstract="Low-dose CT in smokers.", year=2022),
]


def _context() -> PageContext:
    return PageContext(page=page_get("tablizer"), state="q=cancer", items=[abstract_item(row) for row in ROWS])


def test_a_count_about_a_topic_counts_and_names_the_rows_that_mention_it() -> None:
    question = "How many of the loaded articles are about breast cancer?"
    answer = answer_from_rows(question=question, context=_context(), settings=answer_settings())

    lines = answer.text.splitlines()
    assert lines[0] == "3 of the 4 loaded articles match breast cancer (in the title, abstract or MeSH terms):"
    assert [line.split("[citation:")[1].split(":")[1] for line in lines[1:]] == ["101", "102", "103"]
    assert answer.cites is True


def test_a_count_about_a_topic_no_row_mentions_says_so() -> None:
    answer = answer_from_rows(
        question="How many of the loaded articles are about melanoma?", context=_context(), settings=answer_settings()
    )

    assert answer.text == "None of the 4 loaded articles matches melanoma (in the title, abstract or MeSH terms)."
    assert answer.cites is False
