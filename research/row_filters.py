"""Filters a question about the loaded rows names: facet values (status, phase, publication type, journal),
years, and AI-column answers, each with what a row must record for the filter to decide it."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from research.context import PageContext, PageItem, facet_counts
from research.rules.pubmed_query import PUBLICATION_TYPES
from trials.constants import PHASES, SEARCHABLE_STATUSES, phase_code

if TYPE_CHECKING:
    from research.models import AIColumnResult

# What a row must record for a filter on the facet to be decided.
FACET_FIELDS = {
    "status": "a recruitment status",
    "phase": "a trial phase",
    "type": "a publication type",
    "journal": "a journal",
    "sponsor": "a lead sponsor",
    "compare": "a snapshot group",
    "year": "a year",
}
_PHASE_MENTION = re.compile(r"\b(early\s+)?phase\s*(iv|iii|ii|i|[1-4])\b", re.IGNORECASE)


@dataclass(frozen=True)
class RowFilter:
    label: str
    test: Callable[[PageItem], bool]
    known: Callable[[PageItem], bool] = lambda item: True
    needs: str = ""  # what a row must record for the filter to decide it, e.g. "a recruitment status"


def _value_pattern(value: str) -> re.Pattern[str]:
    words = [re.escape(word) for word in re.split(r"[\s,]+", value.strip()) if word]
    return re.compile(r"(?<!\w)" + r"[\s,\-]+".join(words) + r"(?!\w)", re.IGNORECASE)


def facet_filters(question: str, context: PageContext) -> tuple[list[RowFilter], list[tuple[int, int]]]:
    """Return the filters the question names (facet values, years, AI-column answers) and the spans they took."""
    filters: list[RowFilter] = []
    taken: list[tuple[int, int]] = []

    def free(span: tuple[int, int]) -> bool:
        return all(span[1] <= start or span[0] >= end for start, end in taken)

    for facet in ("compare", "status", "phase", "type", "journal", "sponsor"):
        counts = facet_counts(context.items, facet)
        values = set(counts)
        if facet == "status":
            values |= set(SEARCHABLE_STATUSES.values())  # a status asked of rows that record none is a "cannot"
        chosen: list[str] = []
        for value in sorted(values, key=len, reverse=True):
            if len(value) < 4 and facet in {"journal", "sponsor"}:
                continue
            match = _value_pattern(value).search(question)
            if match and free(match.span()):
                taken.append(match.span())
                chosen.append(value)
        if facet == "phase":
            for match in _PHASE_MENTION.finditer(question):
                key = phase_code(match.group(2), early=bool(match.group(1)))
                if key is not None and PHASES[key] not in chosen and free(match.span()):
                    taken.append(match.span())
                    chosen.append(PHASES[key])
        if facet == "type":
            for pattern, value, _label in PUBLICATION_TYPES:
                if value == "Clinical Trial" and not counts:
                    continue  # "clinical trials" on a registry page names the rows themselves
                match = re.search(pattern, question, re.IGNORECASE)
                if match and free(match.span()) and value not in chosen:
                    taken.append(match.span())
                    chosen.append(value)
        if chosen:
            filters.append(
                RowFilter(
                    " or ".join(chosen), _has_facet_value(facet, set(chosen)), _records(facet), FACET_FIELDS[facet]
                )
            )
    year = _year_filter(question)
    if year is not None:
        filters.append(year[0])
        taken.append(year[1])
    for column in context.columns:
        if not column.is_boolean:
            continue
        match = re.search(
            rf"\b(yes|no|unclear)\b[^.?!]{{0,30}}{re.escape(column.name)}|{re.escape(column.name)}[^.?!]{{0,30}}\b(yes|no|unclear)\b",
            question,
            re.IGNORECASE,
        )
        if match:
            wanted = (match.group(1) or match.group(2)).lower()
            answers = context.values.get(column.pk, {})
            taken.append(match.span())
            filters.append(
                RowFilter(
                    f"{wanted.capitalize()} for {column.name}",
                    _answered(answers, wanted),
                    _evaluated(answers),
                    f"an answer in the AI column {column.name}",
                )
            )
    return filters, taken


def _records(facet: str) -> Callable[[PageItem], bool]:
    """Return a test: does the item record any value of `facet`?"""
    return lambda item: bool(item.facets.get(facet))


def _has_facet_value(facet: str, chosen: set[str]) -> Callable[[PageItem], bool]:
    """Return a test: does the item have one of the `chosen` values of `facet`?"""
    return lambda item: bool(chosen.intersection(item.facets.get(facet, ())))


def _answered(answers: dict[str, AIColumnResult], wanted: str) -> Callable[[PageItem], bool]:
    """Return a test: did the AI column answer `wanted` for the item?"""
    return lambda item: item.item_id in answers and answers[item.item_id].value == wanted


def _dated(low: int, high: int) -> Callable[[PageItem], bool]:
    """Return a test: is the item dated within [low, high]?"""
    return lambda item: item.year is not None and low <= item.year <= high


def _evaluated(answers: dict[str, AIColumnResult]) -> Callable[[PageItem], bool]:
    """Return a test: has the AI column been evaluated for the item?"""
    return lambda item: item.item_id in answers


def _year_filter(question: str) -> tuple[RowFilter, tuple[int, int]] | None:
    year = r"(1[89]\d\d|20\d\d)"
    rules: list[tuple[str, Callable[[re.Match[str]], tuple[int, int, str]]]] = [
        (rf"\b(?:between|from)\s+{year}\s+(?:and|to)\s+{year}\b", lambda m: (int(m[1]), int(m[2]), f"{m[1]}-{m[2]}")),
        (rf"\b(?:since|after|from)\s+{year}\b", lambda m: (int(m[1]) + m[0].lower().startswith("after"), 9999, "")),
        (rf"\bbefore\s+{year}\b", lambda m: (0, int(m[1]) - 1, f"before {m[1]}")),
        (rf"\b(?:in|during)\s+{year}\b", lambda m: (int(m[1]), int(m[1]), f"in {m[1]}")),
    ]
    for pattern, build in rules:
        match = re.search(pattern, question, re.IGNORECASE)
        if match:
            low, high, label = build(match)
            label = label or f"{low} or later"
            return RowFilter(f"dated {label}", _dated(low, high), _records("year"), FACET_FIELDS["year"]), match.span()
    return None
