"""When stored evidence suffices, so the live PubMed search (and the shared NCBI budget) is not spent."""

from __future__ import annotations

import pytest

from evidence.ranking import Candidate, Ranked
from evidence.sufficiency import score_sufficiency


def _ranked(score: int, *, review: bool = False) -> Ranked:
    candidate = Candidate(key=f"pmid:{score}{review}", title="t", disease_tags=frozenset(), decision_tags=frozenset(),
                          is_primary_study=not review, is_review=review, source="pubmed")
    return Ranked(candidate, score, "test")


@pytest.mark.parametrize(
    ("anchors", "ranked", "direct", "syntheses", "searches", "reason"),
    [
        (0, [], 0, 0, True, "score 0 < 50 and no anchor pack matched"),
        (0, [_ranked(95), _ranked(92, review=True), _ranked(91)], 0, 0, False,
         "score 66 ≥ 50: stored evidence suffices"),
        (1, [], 0, 0, False, "an anchor pack matched: rerank with tags first instead of searching"),
        # Untagged abstracts score 0 however exactly they answer: what the judge found decides.
        (0, [], 1, 0, True, "score 0 < 50 and no anchor pack matched"),
        (0, [], 2, 0, False, "2 sources directly address the question: stored evidence suffices"),
        (0, [], 1, 1, False, "1 review or guideline directly addresses the question: stored evidence suffices"),
    ],
)
def test_live_search_runs_only_when_stored_evidence_does_not_suffice(
    anchors: int, ranked: list[Ranked], direct: int, syntheses: int, searches: bool, reason: str
) -> None:
    verdict = score_sufficiency(anchor_count=anchors, ranked=ranked, direct_sources=direct,
                                direct_syntheses=syntheses)
    assert (verdict.external_search, verdict.external_search_reason) == (searches, reason)
    assert (verdict.direct_sources, verdict.direct_syntheses) == (direct, syntheses)


def test_the_number_of_direct_sources_needed_is_a_setting() -> None:
    verdict = score_sufficiency(anchor_count=0, ranked=[], direct_sources=1, direct_needed=1)
    assert verdict.external_search is False


@pytest.mark.parametrize("anchors", [0, 3])
def test_a_drug_the_question_asks_about_that_no_admitted_source_speaks_to_is_searched_for(anchors: int) -> None:
    # "Steroids for severe CAP?": the CAP guideline (an anchor of the antibiotics scenario) directly addresses
    # the condition, but none of its findings speaks to corticosteroids.
    verdict = score_sufficiency(
        anchor_count=anchors, ranked=[_ranked(95, review=True)], direct_sources=1, direct_syntheses=1,
        unaddressed=["steroids"],
    )
    assert (verdict.external_search, verdict.external_search_reason) == (
        True, "no admitted source speaks to steroids"
    )
    assert verdict.rerank_with_tags_first is False
