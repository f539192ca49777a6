"""A year-by-year histogram of loaded rows, drawn as server-side SVG geometry (no chart library, no CDN)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass

MAX_LABELS = 12


@dataclass(frozen=True)
class Bar:
    year: int
    count: int
    x: float
    y: float
    width: float
    height: float

    @property
    def center(self) -> float:
        return round(self.x + self.width / 2, 2)


@dataclass(frozen=True)
class YearHistogram:
    """Bars for every year from the first to the last (empty years included), with axis labels."""

    bars: list[Bar]
    width: int
    height: int
    plot_height: int
    max_count: int
    total: int
    undated: int
    labelled: frozenset[int]

    @property
    def first_year(self) -> int:
        return self.bars[0].year

    @property
    def last_year(self) -> int:
        return self.bars[-1].year

    @property
    def peak(self) -> Bar:
        return max(self.bars, key=lambda bar: (bar.count, bar.year))

    def summary(self, noun: str = "articles") -> str:
        """Describe the chart in one sentence (its accessible description)."""
        span = (
            f"from {self.first_year} to {self.last_year}"
            if self.first_year != self.last_year
            else f"in {self.first_year}"
        )
        text = f"{self.total} {noun} {span}; most in {self.peak.year} ({self.peak.count})."
        if self.undated:
            text += f" {self.undated} without a year are not shown."
        return text


def year_histogram(
    years: Iterable[int | None], *, width: int = 640, height: int = 150, axis: int = 18
) -> YearHistogram | None:
    """Return the histogram of `years` (None counts as undated), or None when no row has a year."""
    values = list(years)
    counts = Counter(year for year in values if year)
    if not counts:
        return None
    first, last = min(counts), max(counts)
    span = last - first + 1
    plot_height = height - axis
    slot = width / span
    gap = min(2.0, slot * 0.15)
    peak = max(counts.values())
    step = max(1, -(-span // MAX_LABELS))
    bars = []
    for index, year in enumerate(range(first, last + 1)):
        count = counts.get(year, 0)
        bar_height = round(plot_height * count / peak, 2) if count else 0.0
        bars.append(
            Bar(
                year=year,
                count=count,
                x=round(index * slot + gap / 2, 2),
                y=round(plot_height - bar_height, 2),
                width=round(slot - gap, 2),
                height=bar_height,
            )
        )
    labelled = frozenset(year for year in range(first, last + 1) if (year - first) % step == 0 or year == last)
    return YearHistogram(
        bars=bars,
        width=width,
        height=height,
        plot_height=plot_height,
        max_count=peak,
        total=sum(counts.values()),
        undated=len(values) - sum(counts.values()),
        labelled=labelled,
    )
