"""The badge means relevance and support: GREEN only for on-topic evidence that says what the answer says."""

import pytest

from evidence.confidence import GREEN, RED, YELLOW, SourceVerdict, rate_confidence


def source(name, *, addresses=True, direct=True, synthesis=False, missing=()):
    return SourceVerdict(name, name, addresses, direct, synthesis, tuple(missing))


@pytest.mark.parametrize(
    ("cited", "floor", "kwargs", "level", "reason"),
    [
        ([source("A"), source("B")], GREEN, {}, GREEN, "2 independent sources directly address"),
        ([source("G", synthesis=True)], GREEN, {}, GREEN, "a guideline or evidence synthesis (G)"),
        ([source("T")], GREEN, {}, YELLOW, "a single primary study (T)"),
        (
            [source("A", direct=False, missing=["dose"]), source("B", direct=False, missing=["dose"])],
            GREEN,
            {},
            YELLOW,
            "only in part: it does not cover dose",
        ),
        # Each misses a different part: the reason says which parts, not just "in part".
        (
            [source("A", direct=False, missing=["stopping"]), source("B", direct=False, missing=["GI bleeding"])],
            GREEN,
            {},
            YELLOW,
            "only in part: no cited source covers all of stopping, GI bleeding",
        ),
        # One part one source misses and the other covers is no part missing: neither addresses it directly.
        (
            [source("A", direct=False, missing=["AF"]), source("B", direct=False)],
            GREEN,
            {},
            YELLOW,
            "only in part: no cited source addresses it directly",
        ),
        ([source("A", addresses=False), source("B", addresses=False)], GREEN, {}, RED, "none of the cited sources"),
        ([], RED, {}, RED, "none of the cited sources"),
        ([source("A"), source("B")], GREEN, {"abstained": True}, RED, "the answer abstains"),
        ([source("A"), source("B")], RED, {}, RED, "no valid citation"),
        ([source("A"), source("B")], YELLOW, {}, YELLOW, "statements carry a citation"),
        ([source("A"), source("B")], GREEN, {"claims_shown": 2, "claims_removed": 2}, YELLOW, "2 of 4 statements"),
        ([source("A"), source("B")], GREEN, {"claims_shown": 6, "claims_removed": 1}, GREEN, "directly address"),
        ([source("A"), source("B")], GREEN, {"unstated": ["a dose"]}, YELLOW, "asks for a dose"),
        # A guideline on the condition whose shown findings say nothing of the drug asked about answers in part only.
        ([source("G", synthesis=True)], GREEN, {"unanswered": ["steroids"]}, YELLOW, "finding speaks to steroids"),
        # Two sources on the condition and decision, but only stage II findings for a stage III patient.
        ([source("A"), source("B")], GREEN, {"other_patients": True}, YELLOW, "stated for other patients"),
    ],
)
def test_confidence_rules(cited, floor, kwargs, level, reason):
    rated = rate_confidence(cited=cited, format_floor=floor, abstained=kwargs.pop("abstained", False), **kwargs)
    assert rated.level == level
    assert any(reason in text for text in rated.reasons), rated.reasons
    assert not (kwargs.get("unanswered") and any("directly addresses" in text for text in rated.reasons))


def test_zero_citations_is_never_above_red_whatever_the_evidence():
    rated = rate_confidence(cited=[source("G", synthesis=True)], format_floor=RED, abstained=False)
    assert rated.level == RED
