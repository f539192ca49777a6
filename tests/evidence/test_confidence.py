"""The badge means relevance and support: GREEN only for on-topic evidence that says what the answer says."""

import pytest

from evidence.confidence import GREEN, RED, YELLOW, ComputedBasis, SourceVerdict, rate_confidence


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
        ([source("A", addresses=False), source("B", addresses=False)], GREEN, {}, RED, "none of the cited sources"),
        ([], RED, {}, RED, "none of the cited sources"),
        ([source("A"), source("B")], GREEN, {"abstained": True}, RED, "the answer abstains"),
        ([source("A"), source("B")], RED, {}, RED, "no valid citation"),
        ([source("A"), source("B")], YELLOW, {}, YELLOW, "statements carry a citation"),
        ([source("A"), source("B")], GREEN, {"claims_shown": 2, "claims_removed": 2}, YELLOW, "2 of 4 statements"),
        ([source("A"), source("B")], GREEN, {"claims_shown": 6, "claims_removed": 1}, GREEN, "directly address"),
        ([source("A"), source("B")], GREEN, {"unstated": ["a dose"]}, YELLOW, "asks for a dose"),
    ],
)
def test_confidence_rules(cited, floor, kwargs, level, reason):
    rated = rate_confidence(cited=cited, format_floor=floor, abstained=kwargs.pop("abstained", False), **kwargs)
    assert rated.level == level
    assert any(reason in text for text in rated.reasons), rated.reasons


def test_zero_citations_is_never_above_red_whatever_the_evidence():
    rated = rate_confidence(cited=[source("G", synthesis=True)], format_floor=RED, abstained=False)
    assert rated.level == RED


@pytest.mark.parametrize(
    ("basis", "floor", "level", "reasons"),
    [
        (
            ComputedBasis(rows=20, matched=3, described="articles"),
            GREEN,
            GREEN,
            ["computed from all 20 loaded articles; the 3 that address the question are cited"],
        ),
        (
            ComputedBasis(rows=20, matched=1, described="articles"),
            YELLOW,
            GREEN,
            ["computed from all 20 loaded articles; the one that addresses the question is cited"],
        ),
        (
            ComputedBasis(
                rows=20, matched=3, gaps=("2 of the 20 loaded articles have no abstract",), described="articles"
            ),
            GREEN,
            YELLOW,
            ["computed from the 20 loaded articles, in part", "2 of the 20 loaded articles have no abstract"],
        ),
        (
            ComputedBasis(rows=20, matched=0, described="articles"),
            RED,
            RED,
            ["none of the 20 loaded articles addresses the question"],
        ),
        (
            ComputedBasis(rows=0, matched=0, answered=False, gaps=("no articles are loaded",), described="articles"),
            RED,
            RED,
            ["no articles are loaded"],
        ),
        (
            ComputedBasis(rows=3, matched=2, described="trials"),
            RED,
            RED,
            ["computed from all 3 loaded trials; the 2 that address the question are cited", "no valid citation"],
        ),
    ],
)
def test_a_count_computed_from_loaded_rows_is_rated_by_how_it_was_computed(basis, floor, level, reasons):
    rated = rate_confidence(cited=[source("ignored")], format_floor=floor, abstained=False, computed=basis)

    assert (rated.level, rated.reasons) == (level, reasons)
