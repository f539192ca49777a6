"""Without a language model the tray answers questions about the loaded rows from those rows."""

from __future__ import annotations

import pytest

from chat.answer_settings import answer_settings
from evidence.confidence import GREEN, RED, YELLOW
from research.badge import rate_computed_confidence
from research.context import PageContext
from research.extractive import CANNOT, COMPUTED, answer_from_rows
from research.pages.tablizer import abstract_item
from research.pages.trialscout import study_item
from research.registries import page_get
from tests.evidence.brain import seeded_lexicon, seeded_vocabulary
from tests.research.factories import AbstractRowFactory, StudySummaryFactory

VOCABULARY = seeded_vocabulary()
# The curated abbreviations, plus one a curator added in the admin.
LEXICON = seeded_lexicon(("BC", ["breast cancer"], True))

ARTICLES = [
    AbstractRowFactory.build(
        pmid="101",
        title="Metformin and survival in women with diabetes",
        abstract="We followed 2,000 women with type 2 diabetes and breast cancer for ten years.",
        year=2019,
        mesh_terms=["Breast Neoplasms", "Metformin"],
    ),
    AbstractRowFactory.build(
        pmid="102",
        title="Adjuvant chemotherapy after surgery: a randomised trial",
        abstract="Women with early breast carcinoma were randomised to six or eight cycles.",
        year=2021,
        publication_types=["Randomized Controlled Trial"],
    ),
    AbstractRowFactory.build(
        pmid="103",
        title="Tumour markers in women",
        abstract="Serum markers in oestrogen receptor positive tumours.",
        year=2022,
        publication_types=["Review"],
        mesh_terms=["Breast Neoplasms"],
    ),
    AbstractRowFactory.build(
        pmid="104",
        title="Low-dose CT screening for lung cancer",
        abstract="Smokers aged 55 to 74 were randomised to screening or usual care.",
        year=2020,
        publication_types=["Randomized Controlled Trial"],
    ),
]
WITHOUT_ABSTRACT = AbstractRowFactory.build(
    pmid="105", title="Glucose-lowering drugs and colorectal outcomes", abstract="", year=2023
)
TRIALS = [
    StudySummaryFactory.build(
        nct_id="NCT01000001",
        brief_title="Pembrolizumab in Advanced Melanoma",
        phases=["PHASE3"],
        conditions=["Melanoma"],
        interventions=[{"type": "DRUG", "name": "Pembrolizumab"}],
    ),
    StudySummaryFactory.build(
        nct_id="NCT01000002",
        brief_title="Metformin for Prevention in Women at High Risk",
        overall_status="COMPLETED",
        conditions=["Breast Carcinoma"],
        interventions=[{"type": "DRUG", "name": "Metformin"}],
    ),
    StudySummaryFactory.build(
        nct_id="NCT01000003",
        brief_title="Exercise After Surgery",
        phases=["NA"],
        conditions=["Breast Cancer"],
        interventions=[{"type": "BEHAVIORAL", "name": "Resistance exercise"}],
    ),
    StudySummaryFactory.build(
        nct_id="NCT01000004",
        brief_title="Apixaban in Older Adults With Kidney Disease",
        overall_status="NOT_YET_RECRUITING",
        phases=["PHASE4"],
        conditions=["Atrial Fibrillation", "Chronic Kidney Disease"],
        interventions=[{"type": "DRUG", "name": "Apixaban"}],
    ),
]


def tablizer(rows=ARTICLES, total=None) -> PageContext:
    return PageContext(
        page=page_get("tablizer"), state="q=cancer", items=[abstract_item(row) for row in rows], total=total
    )


def trialscout(rows=TRIALS, total=None) -> PageContext:
    return PageContext(
        page=page_get("trialscout"), state="condition=cancer", items=[study_item(row) for row in rows], total=total
    )


def ask(question: str, context: PageContext):
    return answer_from_rows(
        question=question, context=context, settings=answer_settings(), vocabulary=VOCABULARY, lexicon=LEXICON
    )


def cited_ids(text: str) -> list[str]:
    return [line.split("[citation:")[1].split(":")[1] for line in text.splitlines() if line.startswith("- ")]


@pytest.mark.parametrize(
    ("question", "head", "rows"),
    [
        (
            "How many of the loaded articles are about breast cancer?",
            "3 of the 4 loaded articles match breast cancer:",
            ["101", "102", "103"],
        ),
        ("How many of these are about BC?", "3 of the 4 loaded articles match BC:", ["101", "102", "103"]),
        (
            "How many discuss breast carcinoma?",
            "3 of the 4 loaded articles match breast carcinoma:",
            ["101", "102", "103"],
        ),
        ("Which of these are RCTs?", "2 of the 4 loaded articles match Randomized Controlled Trial:", ["102", "104"]),
        (
            "Which of these are randomised controlled trials?",
            "2 of the 4 loaded articles match Randomized Controlled Trial:",
            ["102", "104"],
        ),
        ("Which studies used metformin?", "1 of the 4 loaded articles matches metformin:", ["101"]),
        ("How many of these mention tumors?", "1 of the 4 loaded articles matches tumors:", ["103"]),
        ("How many of these studied estrogen?", "1 of the 4 loaded articles matches estrogen:", ["103"]),
        ("How many are about T2DM?", "1 of the 4 loaded articles matches T2DM:", ["101"]),
        (
            "Which of these were published since 2021?",
            "2 of the 4 loaded articles match dated 2021 or later:",
            ["102", "103"],
        ),
        (
            "How many RCTs are about lung cancer?",
            "1 of the 4 loaded articles matches Randomized Controlled Trial and lung cancer:",
            ["104"],
        ),
        ("How many articles are loaded?", "4 articles are loaded:", ["101", "102", "103", "104"]),
    ],
)
def test_a_tablizer_question_about_the_rows_counts_and_names_the_matching_rows(question, head, rows) -> None:
    answer = ask(question, tablizer())

    assert answer.text.splitlines()[0] == head
    assert cited_ids(answer.text) == rows
    assert (answer.kind, answer.cites) == (COMPUTED, True)
    assert answer.basis is not None and (answer.basis.rows, answer.basis.matched, answer.basis.gaps) == (
        4,
        len(rows),
        (),
    )


@pytest.mark.parametrize(
    ("question", "head", "rows"),
    [
        (
            "How many trials are recruiting?",
            "2 of the 4 loaded trials match Recruiting:",
            ["NCT01000001", "NCT01000003"],
        ),
        (
            "How many of these are about breast cancer?",
            "2 of the 4 loaded trials match breast cancer:",
            ["NCT01000002", "NCT01000003"],
        ),
        ("Which of these test metformin?", "1 of the 4 loaded trials matches metformin:", ["NCT01000002"]),
        (
            "Which trials enrol patients with AF?",
            "1 of the 4 loaded trials matches AF:",
            ["NCT01000004"],
        ),
        (
            "Which of these are about CKD in the elderly?",
            "1 of the 4 loaded trials matches CKD and older adults:",
            ["NCT01000004"],
        ),
        ("Which of these are phase 3?", "1 of the 4 loaded trials matches Phase 3:", ["NCT01000001"]),
        (
            "How many recruiting trials are about breast cancer?",
            "1 of the 4 loaded trials matches Recruiting and breast cancer:",
            ["NCT01000003"],
        ),
    ],
)
def test_a_trialscout_question_about_the_rows_matches_status_phase_conditions_and_interventions(
    question, head, rows
) -> None:
    answer = ask(question, trialscout())

    assert answer.text.splitlines()[0] == head
    assert cited_ids(answer.text) == rows
    assert answer.basis is not None and answer.basis.gaps == ()


def test_the_answer_says_how_the_rows_were_matched_with_every_wording() -> None:
    answer = ask("How many of these are about BC?", tablizer())

    assert answer.text.split("\n\n")[1] == (
        'How they were matched: "BC" (breast cancer, breast carcinoma, early breast cancer, Breast Neoplasms) '
        "in each article's title, abstract and MeSH terms."
    )


def test_a_count_that_could_not_read_every_abstract_says_so_and_is_partial() -> None:
    answer = ask("How many of the loaded articles are about breast cancer?", tablizer([*ARTICLES, WITHOUT_ABSTRACT]))

    assert answer.text.split("\n\n")[-1] == (
        "Not checked: 1 of the 5 loaded articles has no abstract, so it was checked on the rest of its record only."
    )
    rated = rate_computed_confidence(answer.basis, format_floor=GREEN)
    assert rated.level == YELLOW


def test_a_count_over_rows_without_the_asked_field_says_how_many_lack_it() -> None:
    unknown = StudySummaryFactory.build(nct_id="NCT01000005", brief_title="Statins in Melanoma", overall_status="")
    answer = ask("How many trials are recruiting?", trialscout([*TRIALS, unknown]))

    assert answer.text.split("\n\n")[-1] == "Not checked: 1 of the 5 loaded trials has no recruitment status."
    assert answer.basis is not None and answer.basis.gaps


def test_a_count_of_some_of_the_search_results_says_only_the_loaded_rows_were_read() -> None:
    answer = ask("How many trials are recruiting?", trialscout(total=480))

    assert answer.text.split("\n\n")[-1] == "Not checked: only the 4 loaded trials were read; the search matched 480."
    assert ask("How many of these are recruiting?", trialscout(total=480)).basis.gaps == ()


def test_a_count_no_row_matches_says_none_and_cites_nothing() -> None:
    answer = ask("How many of the loaded articles are about melanoma?", tablizer())

    assert answer.text.splitlines()[0] == "None of the 4 loaded articles matches melanoma."
    assert (answer.kind, answer.cites, answer.basis.matched) == (COMPUTED, False, 0)


@pytest.mark.parametrize(
    ("question", "context", "text", "reason"),
    [
        (
            "How many of the loaded articles are about breast cancer?",
            tablizer([]),
            "No articles are loaded yet, so I cannot answer about them. Run a search first, or ask me to build one.",
            "no articles are loaded",
        ),
        (
            "How many trials are recruiting?",
            tablizer(),
            "None of the 4 loaded articles records a recruitment status, so I cannot tell which match Recruiting. "
            "Ask about what the rows show, or run a search that has it.",
            "no loaded article records a recruitment status",
        ),
        (
            "Which of these are in phase 3?",
            tablizer(),
            "None of the 4 loaded articles records a trial phase, so I cannot tell which match Phase 3. "
            "Ask about what the rows show, or run a search that has it.",
            "no loaded article records a trial phase",
        ),
        (
            "Which of these are RCTs?",
            trialscout(),
            "None of the 4 loaded trials records a publication type, so I cannot tell which match Randomized "
            "Controlled Trial. Ask about what the rows show, or run a search that has it.",
            "no loaded trial records a publication type",
        ),
        (
            "How many of these are about it?",
            tablizer(),
            "I could not tell what to look for in the 4 loaded articles. Name a condition, a drug, a study type, "
            'a status or a year, e.g. "how many of these are about breast cancer?"',
            "the question names nothing the rows can be matched on",
        ),
    ],
)
def test_a_question_the_rows_cannot_answer_says_so_instead_of_summarising(question, context, text, reason) -> None:
    answer = ask(question, context)

    assert answer.text == text
    assert (answer.kind, answer.cites) == (CANNOT, False)
    rated = rate_computed_confidence(answer.basis, format_floor=RED)
    assert (rated.level, rated.reasons) == (RED, [reason])


def test_an_overview_question_still_gets_the_breakdown() -> None:
    answer = ask("Give me an overview of these", tablizer())

    assert answer.text.splitlines()[0] == "4 articles are loaded."
    assert answer.kind == COMPUTED and answer.basis.gaps == ()
