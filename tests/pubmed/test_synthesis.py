"""synthesize() without an LLM: conclusion sentences as findings, study types, strength from design and consistency."""

from __future__ import annotations

import dataclasses

import pytest

from pubmed.chunking import split_sentences
from pubmed.parsers import AbstractRecord
from pubmed.services.synthesis import KeyFinding, consistent, evidence_strength, study_type, synthesize


def test_extractive_summary_of_real_records(recorded_records: dict[str, AbstractRecord]) -> None:
    trial = recorded_records["22663011"]  # phase III trial with a CONCLUSIONS section
    guideline = recorded_records["32887691"]  # WHO living guideline (Practice Guideline)
    comment = recorded_records["27350240"]  # a Comment without abstract
    outcome = synthesize(drug="trametinib", disease="melanoma", abstracts=[trial, guideline, comment, trial])
    result = outcome.summary
    assert outcome.method == "extractive"
    assert result.study_count == 3
    assert result.study_types == {"randomized controlled trial": 1, "guideline": 1, "other": 1}
    (conclusions,) = [s.text for s in trial.sections if s.label == "CONCLUSIONS"]
    first = result.key_findings[0]
    assert (first.text, first.pmids) == (" ".join(split_sentences(conclusions)[:2]), ["22663011"])
    assert first.quote and all(sentence in trial.abstract for sentence in split_sentences(first.quote))
    assert result.key_findings[0].text.startswith("Trametinib, as compared with chemotherapy, improved")
    assert [f.pmids for f in result.key_findings] == [["22663011"], ["32887691"]]
    assert result.supporting_pmids == ["22663011", "32887691"]
    assert result.strength == "moderate"
    assert result.summary == (
        "3 top-ranked studies on trametinib for melanoma (1 randomized controlled trial, 1 guideline, 1 other); "
        "strength of evidence: moderate."
    )


def test_no_abstracts_is_insufficient() -> None:
    outcome = synthesize(drug="metformin", disease="breast cancer", abstracts=[])
    result = outcome.summary
    assert (result.study_count, result.strength, result.key_findings, result.supporting_pmids) == (
        0, "insufficient", [], [])
    assert result.summary == "No studies on metformin for breast cancer were found; the evidence is insufficient."


EFFECT = KeyFinding("Drug X reduced mortality by 20%.", ["1"])
NO_EFFECT = KeyFinding("Drug X did not reduce mortality.", ["2"])


@pytest.mark.parametrize(
    ("counts", "findings", "expected"),
    [
        ({"meta-analysis": 1}, [EFFECT], "high"),
        ({"randomized controlled trial": 2}, [EFFECT, EFFECT], "high"),
        ({"randomized controlled trial": 2}, [EFFECT, NO_EFFECT], "moderate"),
        ({"randomized controlled trial": 1, "case report": 3}, [EFFECT], "moderate"),
        ({"randomized controlled trial": 1}, [EFFECT, NO_EFFECT], "low"),
        ({"cohort study": 2}, [NO_EFFECT, NO_EFFECT], "moderate"),
        ({"case report": 5}, [EFFECT, NO_EFFECT], "low"),
        ({}, [], "insufficient"),
    ],
)
def test_strength_from_design_and_consistency(counts: dict[str, int], findings: list[KeyFinding],
                                              expected: str) -> None:
    assert evidence_strength(counts, findings) == expected


def test_consistency_is_agreement_about_an_effect() -> None:
    assert consistent([EFFECT, EFFECT]) and consistent([NO_EFFECT]) and not consistent([EFFECT, NO_EFFECT])


def test_study_type_from_publication_types_then_title_words(recorded_records: dict[str, AbstractRecord]) -> None:
    record = dataclasses.replace(recorded_records["34567890"], publication_types=["Journal Article"],
                                 title="A randomised trial of X")
    assert study_type(record) == "randomized controlled trial"
    assert study_type(recorded_records["22663011"]) == "randomized controlled trial"
    assert study_type(recorded_records["32887691"]) == "guideline"
