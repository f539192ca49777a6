"""The verifier's training rewrites: a supported claim's twin says the opposite, and its evidence is kept."""

from __future__ import annotations

import random

import pytest

from training.claimsets import CONTRADICTED, NOT_ENOUGH_INFO, SUPPORTED, Case, contrast_pairs
from training.contrast import contradicting_claim, contradicting_variants


@pytest.mark.parametrize(
    ("claim", "expected"),
    [
        ("Statins reduce LDL cholesterol in adults.", "Statins increase LDL cholesterol in adults."),
        ("Higher BMI is associated with cancer.", "Lower BMI is associated with cancer."),
        ("Aspirin did not reduce stroke.", "Aspirin did reduce stroke."),
        ("Smoking is associated with lung cancer.", "Smoking is not associated with lung cancer."),
        ("Metformin predicts survival.", "Metformin does not predict survival."),
        ("Vitamin D cannot prevent fractures.", "Vitamin D can prevent fractures."),
        ("There was no significant difference in mortality.", "There was a significant difference in mortality."),
    ],
)
def test_each_rewrite_states_the_opposite(claim: str, expected: str) -> None:
    assert expected in contradicting_variants(claim)


def test_a_claim_with_nothing_to_reverse_gets_no_twin() -> None:
    assert contradicting_variants("Interleukin 6 in sepsis.") == []
    assert contradicting_claim("Interleukin 6 in sepsis.", random.Random(1)) == ""


def test_the_twin_is_contradicted_by_the_evidence_and_unrelated_to_another_sentence() -> None:
    sentences = ("Statins lowered LDL cholesterol by 40%.", "Muscle pain was rare.", "Follow-up lasted five years.")
    case = Case("scifact", "7:1", "Statins reduce LDL cholesterol.", sentences, SUPPORTED, (0,))
    pairs = contrast_pairs(case)
    assert [(p.evidence, p.label) for p in pairs] == [
        (sentences[0], CONTRADICTED),
        (pairs[1].evidence, NOT_ENOUGH_INFO),
    ]
    assert pairs[1].evidence in sentences[1:]
    assert all(p.claim != case.claim and p.claim == pairs[0].claim for p in pairs)
    # Deterministic: the same case always gets the same twin; claims not supported get none.
    assert contrast_pairs(case) == pairs
    assert contrast_pairs(Case("scifact", "8:1", case.claim, sentences, CONTRADICTED, (0,))) == []
