"""The year-by-year histogram: one bar per year from first to last, heights proportional to counts."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from research.charts import year_histogram


def test_bars_cover_every_year_and_scale_to_the_busiest() -> None:
    histogram = year_histogram([2020, 2022, 2022, None, 2019, 2022], width=400, height=118, axis=18)

    assert [(bar.year, bar.count) for bar in histogram.bars] == [(2019, 1), (2020, 1), (2021, 0), (2022, 3)]
    assert [(bar.x, bar.width) for bar in histogram.bars] == [(1.0, 98.0), (101.0, 98.0), (201.0, 98.0), (301.0, 98.0)]
    assert [(bar.y, bar.height) for bar in histogram.bars] == [(66.67, 33.33), (66.67, 33.33), (100, 0.0), (0.0, 100.0)]
    assert (histogram.total, histogram.undated, histogram.max_count) == (5, 1, 3)
    assert histogram.summary() == "5 articles from 2019 to 2022; most in 2022 (3). 1 without a year are not shown."


def test_no_dated_rows_means_no_histogram() -> None:
    assert year_histogram([None, None]) is None
    assert year_histogram([]) is None


def test_labels_are_thinned_to_a_dozen_and_keep_the_last_year() -> None:
    histogram = year_histogram(range(1980, 2025))

    assert len(histogram.labelled) <= 13
    assert {1980, 2024} <= histogram.labelled


@given(st.lists(st.one_of(st.none(), st.integers(min_value=1900, max_value=2030)), max_size=300))
def test_the_histogram_accounts_for_every_row(years: list[int | None]) -> None:
    histogram = year_histogram(years, width=500, height=120, axis=20)
    dated = [year for year in years if year]
    if not dated:
        assert histogram is None
        return
    assert [bar.year for bar in histogram.bars] == list(range(min(dated), max(dated) + 1))
    assert sum(bar.count for bar in histogram.bars) == len(dated) == histogram.total
    assert histogram.undated == len(years) - len(dated)
    for bar in histogram.bars:
        assert 0 <= bar.height <= 100
        assert abs(bar.y + bar.height - 100) < 0.02
        assert bar.x >= 0
        assert bar.x + bar.width <= 500.01
    assert max(bar.height for bar in histogram.bars) == 100
