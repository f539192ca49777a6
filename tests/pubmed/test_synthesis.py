"""synthesize(): study types, strength, and findings that cite only retrieved PMIDs."""

from __future__ import annotations

import dataclasses

import pytest

from pubmed.chunking import split_sentences
from pubmed.parsers import AbstractRecord
from pubmed.services import synthesis
from pubmed.services.synthesis import EvidenceSummary, evidence_strength, study_type, synthesize


def test_summary_of_real_records(recorded_records: dict[str, AbstractRecord]) -> None:
    trial = recorded_records["22663011"]  # phase III RCT with a CONCLUSIONS section
    guideline = recorded_records["32887691"]  # WHO living guideline (Practice Guideline)
    comment = recorded_records["27350240"]  # a Comment without abstract
    result = synthesize("trametinib", "melanoma", [comment, trial, guideline, trial])
    assert isinstance(result, EvidenceSummary)
    assert result.study_count == 3
    assert result.study_types == {"randomized controlled trial": 1, "guideline": 1, "other": 1}
    assert result.strength == "moderate"
    assert result.key_findings[0].pmids == ["22663011"]
    (conclusions,) = [s.text for s in trial.sections if s.label == "CONCLUSIONS"]
    assert result.key_findings[0].text == " ".join(split_sentences(conclusions)[:2])
    assert result.key_findings[0].text.startswith("Trametinib, as compared with chemotherapy, improved")
    assert set(result.supporting_pmids) <= {"22663011", "32887691", "27350240"}
    assert result.supporting_pmids[0] == "22663011"
    assert result.summary == (
        "3 retrieved studies on trametinib for melanoma (1 randomized controlled trial, 1 guideline, 1 other); "
        "strength of evidence: moderate."
    )


def test_no_abstracts_is_insufficient() -> None:
    result = synthesize("metformin", "breast cancer", [])
    assert (result.study_count, result.strength, result.key_findings, result.supporting_pmids) == (
        0, "insufficient", [], [])
    assert result.summary == "No studies on metformin for breast cancer were retrieved; the evidence is insufficient."


@pytest.mark.parametrize(
    ("counts", "expected"),
    [
        ({"meta-analysis": 1}, "high"),
        ({"randomized controlled trial": 2}, "high"),
        ({"randomized controlled trial": 1, "case report": 3}, "moderate"),
        ({"cohort study": 2}, "moderate"),
        ({"case report": 5}, "low"),
        ({}, "insufficient"),
    ],
)
def test_strength_table(counts: dict[str, int], expected: str) -> None:
    assert evidence_strength(counts) == expected


def test_study_type_falls_back_to_title_words(recorded_records: dict[str, AbstractRecord]) -> None:
    record = dataclasses.replace(recorded_records["34567890"], publication_types=["Journal Article"],
                                 title="A randomised trial of X")
    assert study_type(record) == "randomized controlled trial"
    assert study_type(recorded_records["22663011"]) == "randomized controlled trial"


def test_llm_findings_citing_unretrieved_pmids_are_dropped(recorded_records: dict[str, AbstractRecord],
                                                            settings: object) -> None:
    settings.LLM_PROVIDER = "anthropic"
    trial = recorded_records["22663011"]
    synthesis.register_llm_synthesiser(lambda drug, disease, abstracts: {
        "summary": "Trametinib improved survival.",
        "key_findings": [
            {"text": "Improved progression-free survival.", "pmids": ["22663011", "12345678"]},
            {"text": "Invented claim.", "pmids": ["99999999"]},
        ],
    })
    try:
        result = synthesize("trametinib", "melanoma", [trial])
    finally:
        synthesis.register_llm_synthesiser(None)
    assert result.summary == "Trametinib improved survival."
    assert [(f.text, f.pmids) for f in result.key_findings] == [("Improved progression-free survival.", ["22663011"])]
    assert result.supporting_pmids == ["22663011"]


def test_llm_answer_with_nothing_verifiable_falls_back(recorded_records: dict[str, AbstractRecord],
                                                       settings: object) -> None:
    settings.LLM_PROVIDER = "anthropic"
    trial = recorded_records["22663011"]
    synthesis.register_llm_synthesiser(lambda *args: {"summary": "x", "key_findings": [{"text": "y", "pmids": ["1"]}]})
    try:
        result = synthesize("trametinib", "melanoma", [trial])
    finally:
        synthesis.register_llm_synthesiser(None)
    assert result.summary.startswith("1 retrieved study on trametinib for melanoma")
    assert result.supporting_pmids == ["22663011"]
