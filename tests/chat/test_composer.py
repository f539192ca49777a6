"""The extractive composer, on hand-built evidence (no database, no model)."""

import re

from chat.answer_settings import AnswerSettings
from chat.prompts import ABSTENTION_NO_EVIDENCE
from chat.providers.composer import abstract_sentences, compose_answer, score_sentence
from chat.services.text import content_terms
from evidence.citations import EvidenceSet, EvidenceSource, verify_answer

QUESTION = "Does trametinib improve survival in BRAF-mutated metastatic melanoma?"
TERMS = content_terms(QUESTION)
WEIGHTS = {term: 1.0 for term in TERMS}

LIBRARY = EvidenceSource(
    doc_id="pmid:11111111",
    chunk_id="key_finding",
    origin="library",
    title="A curated melanoma trial",
    pmid="11111111",
    text="Trametinib prolonged survival in BRAF-mutated melanoma.",
    study_name="METRIC",
    journal="N Engl J Med",
    year=2012,
    approved=True,
)
ABSTRACT = EvidenceSource(
    doc_id="pmid:22663011",
    chunk_id="c1",
    origin="retrieved",
    title="Improved survival with MEK inhibition",
    pmid="22663011",
    text=(
        "BACKGROUND: Melanoma with BRAF mutations is common in metastatic disease. "
        "RESULTS: Median progression-free survival was 4.8 months with trametinib and 1.5 months with chemotherapy. "
        "At 6 months, overall survival was 81% with trametinib and 67% with chemotherapy in metastatic melanoma. "
        "Median progression-free survival was 4.8 months with trametinib versus 1.5 months with chemotherapy "
        "in melanoma. "
        "CONCLUSIONS: Trametinib improved survival among patients with BRAF-mutated metastatic melanoma."
    ),
    approved=True,
)
UNAPPROVED = EvidenceSource(
    doc_id="pmid:28775130",
    chunk_id="c0",
    origin="retrieved",
    title="Pesticides",
    pmid="28775130",
    text="RESULTS: Pesticide exposure was associated with hypothyroidism in survival analyses.",
    approved=False,
)


def compose(*sources, **settings):
    return compose_answer(
        question=QUESTION,
        evidence=EvidenceSet(sources),
        settings=AnswerSettings(**settings),
        question_terms=TERMS,
        weights=WEIGHTS,
    )


def test_library_findings_come_first_then_findings_then_conclusions_each_cited():
    text = compose(LIBRARY, ABSTRACT, UNAPPROVED)
    headings = re.findall(r"^### (.+)$", text, flags=re.MULTILINE)
    assert headings == [
        "Curated library evidence",
        "What the studies found",
        "What the authors conclude",
        "What the evidence does not cover",
    ]
    assert text.splitlines()[2] == (
        "- **METRIC** (N Engl J Med, 2012): Trametinib prolonged survival in BRAF-mutated melanoma "
        "[citation:pmid:11111111:key_finding]."
    )
    bullets = [line for line in text.splitlines() if line.startswith("- ")]
    assert all(re.search(r"\[citation:pmid:\d+:[\w]+\][.!?]$", line) for line in bullets)
    assert "Pesticide" not in text
    assert (
        "- Trametinib improved survival among patients with BRAF-mutated metastatic melanoma "
        "[citation:pmid:22663011:c1]." in text
    )


def test_results_and_conclusions_are_preferred_over_background():
    background = score_sentence(
        sentence="Melanoma with BRAF mutations is common in metastatic disease.",
        section="background",
        question_terms=TERMS,
        weights=WEIGHTS,
    )
    conclusion = score_sentence(
        sentence="Trametinib improved survival among patients with BRAF-mutated metastatic melanoma.",
        section="conclusions",
        question_terms=TERMS,
        weights=WEIGHTS,
    )
    assert conclusion > background > 0
    assert "Melanoma with BRAF mutations is common" not in compose(ABSTRACT, composer_sentences=3)


def test_redundant_sentences_are_dropped_and_sources_are_capped():
    text = compose(ABSTRACT, composer_sentences_per_source=5)
    assert text.count("Median progression-free survival was 4.8 months") == 1
    assert (
        len([line for line in compose(ABSTRACT, composer_sentences_per_source=2).splitlines() if line.startswith("- ")])
        == 2
    )


def test_it_states_what_the_evidence_does_not_cover():
    question = "Does trametinib improve survival in BRAF-mutated melanoma with brain metastases in pregnancy?"
    text = compose_answer(
        question=question,
        evidence=EvidenceSet([ABSTRACT]),
        settings=AnswerSettings(),
        question_terms=content_terms(question),
        weights={},
    )
    assert text.endswith(
        "The retrieved evidence does not directly address: brain, metastases, pregnancy. "
        "Weigh these aspects with clinical "
        "judgement and the full guideline text."
    )


def test_abstains_when_nothing_approved_and_verification_agrees():
    text = compose(UNAPPROVED)
    assert text == ABSTENTION_NO_EVIDENCE
    verified = verify_answer(text=text, evidence=EvidenceSet([UNAPPROVED]))
    assert (verified.abstained, verified.confidence) == (True, "RED")


def test_composed_answer_passes_verification_untouched():
    text = compose(LIBRARY, ABSTRACT)
    verified = verify_answer(text=text, evidence=EvidenceSet([LIBRARY, ABSTRACT]))
    assert verified.removed == [] and verified.was_repaired is False
    assert [reference["pmid"] for reference in verified.references] == ["11111111", "22663011"]
    assert verified.confidence == "GREEN"


def test_inline_section_labels_are_recognised():
    assert abstract_sentences("Intro. RESULTS: HR 0.79. Fewer events. CONCLUSIONS: It works.") == [
        ("", "Intro."),
        ("results", "HR 0.79."),
        ("results", "Fewer events."),
        ("conclusions", "It works."),
    ]
