"""The tray badge of a count or list computed from the loaded rows."""

import pytest

from evidence.confidence import GREEN, RED, YELLOW
from research.badge import ComputedBasis, rate_computed_confidence


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
    rated = rate_computed_confidence(basis, format_floor=floor)

    assert (rated.level, rated.reasons) == (level, reasons)
