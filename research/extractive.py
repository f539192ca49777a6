"""Answers about the loaded rows without a language model: counts, filtered lists and extracted sentences.

A question naming facet values of the rows ("which are recruiting?", "how many RCTs since
2020?", "which are Yes for RCT?") gets the matching rows listed, each with its citation. An
overview question gets a breakdown with cited examples. Anything else goes to the extractive
composer over the rows' abstracts or registry summaries. Every row cited is a loaded row; the
citation verifier checks the result like any other answer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from dataclasses import replace as dataclass_replace
from typing import TYPE_CHECKING

from chat.answer_settings import AnswerSettings
from chat.prompts import ABSTENTION_NO_EVIDENCE
from chat.providers.composer import compose_answer
from evidence.sources import EvidenceSet
from evidence.text import content_terms, stems
from research.context import PageContext, PageItem, facet_counts
from research.rules.pubmed_query import PUBLICATION_TYPES
from trials.constants import PHASES

if TYPE_CHECKING:
    from research.models import AIColumnResult

MAX_LISTED = 15
EXAMPLES_PER_VALUE = 2
APPROVE_COVERAGE = 0.5
FACET_LABELS = {
    "status": "status",
    "phase": "phase",
    "type": "publication type",
    "journal": "journal",
    "compare": "group",
}
OVERVIEW_FACETS = {"tablizer": ("compare", "type", "year"), "trialscout": ("phase", "status")}
_OVERVIEW = re.compile(
    r"\b(?:summar(?:y|ise|ize)|overview|breakdown|distribution|what\s+(?:are|is)\s+(?:these|this|the\s+results)"
    r"\s+about|describe)\b",
    re.IGNORECASE,
)
# The topic a count question asks about: "how many of the loaded articles are about breast cancer?"
_TOPIC = re.compile(
    r"\b(?:about|on|regarding|mention(?:ing)?|involv(?:e|es|ing)|stud(?:y|ying))\s+(?P<topic>[^?.!]+)", re.IGNORECASE
)
_COUNT = re.compile(r"\bhow\s+many\b|\bnumber\s+of\b|\bcount\b", re.IGNORECASE)
_PHASE_MENTION = re.compile(r"\b(early\s+)?phase\s*(iv|iii|ii|i|[1-4])\b", re.IGNORECASE)
_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4"}


@dataclass(frozen=True)
class RowsAnswer:
    """An answer about the loaded rows; `cites` is False when it makes no claim about a particular row."""

    text: str
    cites: bool


@dataclass(frozen=True)
class _Filter:
    label: str
    test: Callable[[PageItem], bool]


def _value_pattern(value: str) -> re.Pattern[str]:
    words = [re.escape(word) for word in re.split(r"[\s,]+", value.strip()) if word]
    return re.compile(r"(?<!\w)" + r"[\s,\-]+".join(words) + r"(?!\w)", re.IGNORECASE)


def _facet_filters(question: str, context: PageContext) -> list[_Filter]:
    """Return the filters the question names: facet values of the loaded rows, years, AI-column answers."""
    filters: list[_Filter] = []
    taken: list[tuple[int, int]] = []

    def free(span: tuple[int, int]) -> bool:
        return all(span[1] <= start or span[0] >= end for start, end in taken)

    for facet in ("compare", "status", "phase", "type", "journal", "sponsor"):
        values = sorted(facet_counts(context.items, facet), key=len, reverse=True)
        chosen: list[str] = []
        for value in values:
            if len(value) < 4 and facet in {"journal", "sponsor"}:
                continue
            match = _value_pattern(value).search(question)
            if match and free(match.span()):
                taken.append(match.span())
                chosen.append(value)
        if facet == "phase":
            for match in _PHASE_MENTION.finditer(question):
                number = _ROMAN.get(match.group(2).lower(), match.group(2))
                key = f"EARLY_PHASE{number}" if match.group(1) else f"PHASE{number}"
                if key in PHASES and PHASES[key] not in chosen and free(match.span()):
                    taken.append(match.span())
                    chosen.append(PHASES[key])
        if facet == "type":
            for pattern, value, _label in PUBLICATION_TYPES:
                match = re.search(pattern, question, re.IGNORECASE)
                if match and free(match.span()) and value not in chosen:
                    taken.append(match.span())
                    chosen.append(value)
        if chosen:
            label = " or ".join(chosen)
            filters.append(
                _Filter(label, _has_facet_value(facet, set(chosen)))
            )
    year = _year_filter(question)
    if year is not None:
        filters.append(year)
    topic = _topic_filter(question)
    if topic is not None:
        filters.append(topic)
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
            filters.append(_Filter(f"{wanted.capitalize()} for {column.name}", _answered(answers, wanted)))
    return filters


def _topic_filter(question: str) -> _Filter | None:
    """Return a filter for the topic a count question names, matched in titles, abstracts and MeSH terms."""
    match = _TOPIC.search(question)
    if match is None or not _COUNT.search(question):
        return None
    topic = " ".join(match["topic"].split())
    wanted = set(content_terms(topic))
    if not wanted:
        return None
    return _Filter(f"{topic} (in the title, abstract or MeSH terms)", _mentions(wanted))


def _has_facet_value(facet: str, chosen: set[str]) -> Callable[[PageItem], bool]:
    """Return a test: does the item have one of the `chosen` values of `facet`?"""
    return lambda item: bool(chosen.intersection(item.facets.get(facet, ())))


def _answered(answers: dict[str, AIColumnResult], wanted: str) -> Callable[[PageItem], bool]:
    """Return a test: did the AI column answer `wanted` for the item?"""
    return lambda item: item.item_id in answers and answers[item.item_id].value == wanted


def _dated(low: int, high: int) -> Callable[[PageItem], bool]:
    """Return a test: is the item dated within [low, high]?"""
    return lambda item: item.year is not None and low <= item.year <= high


def _mentions(wanted: set[str]) -> Callable[[PageItem], bool]:
    """Return a test: do the item's title, abstract and MeSH terms contain every stem of `wanted`?"""
    return lambda item: wanted <= stems(" ".join([item.title, item.source.text, *item.facets.get("mesh", ())]))


def _year_filter(question: str) -> _Filter | None:
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
            return _Filter(f"dated {label}", _dated(low, high))
    return None


def _short_title(item: PageItem, limit: int = 70) -> str:
    title = " ".join((item.title or "(no title)").split())
    return title if len(title) <= limit else title[: limit - 1].rsplit(" ", 1)[0] + "…"


def _bullet(item: PageItem) -> str:
    # The identifier is not written out: the verifier turns the citation into a numbered reference.
    return f"- {item.title or '(no title)'} {item.citation}"


def _plural(count: int, context: PageContext) -> str:
    return context.page.item_label if count == 1 else context.page.item_label_plural


def _filtered(filters: Sequence[_Filter], context: PageContext) -> RowsAnswer:
    items = context.items
    matching = [item for item in items if all(rule.test(item) for rule in filters)]
    described = " and ".join(rule.label for rule in filters)
    total = f"{len(items)} loaded {_plural(len(items), context)}"
    if not matching:
        return RowsAnswer(f"None of the {total} matches {described}.", cites=False)
    verb = "matches" if len(matching) == 1 else "match"
    lines = [f"{len(matching)} of the {total} {verb} {described}:", *[_bullet(item) for item in matching[:MAX_LISTED]]]
    if len(matching) > MAX_LISTED:
        lines.append(f"- and {len(matching) - MAX_LISTED} more.")
    return RowsAnswer("\n".join(lines), cites=True)


def _overview(context: PageContext) -> RowsAnswer:
    items = context.items
    lines = [
        f"{len(items)} {_plural(len(items), context)} are loaded"
        + (f" of {context.total} matching the search." if context.total is not None else ".")
    ]
    for facet in OVERVIEW_FACETS.get(context.page.name, ()):
        counts = facet_counts(items, facet)
        if not counts:
            continue
        if facet == "year":
            years = sorted(int(year) for year in counts)
            lines.append(f"\nPublication years range from {years[0]} to {years[-1]}; the busiest years:")
            ranked = sorted(counts.items(), key=lambda pair: (-pair[1], pair[0]))[:3]
        else:
            lines.append(f"\nBy {FACET_LABELS.get(facet) or facet}:")
            ranked = counts.most_common(5)
        for value, count in ranked:
            examples = [item for item in items if value in item.facets.get(facet, ())][:EXAMPLES_PER_VALUE]
            cited = "; ".join(f"{_short_title(item)} {item.citation}" for item in examples)
            lines.append(f"- {value}: {count} {_plural(count, context)}, for example {cited}.")
    return RowsAnswer("\n".join(lines), cites=True)


def rows_evidence(context: PageContext, *, question: str) -> EvidenceSet:
    """Return the loaded rows as this turn's evidence; rows covering half the question's terms are approved."""
    terms = content_terms(question)
    sources = []
    for item in context.items:
        present = stems(f"{item.source.title} {item.source.text}")
        coverage = sum(1 for term in terms if term in present) / len(terms) if terms else 0.0
        sources.append(dataclass_replace(item.source, approved=coverage >= APPROVE_COVERAGE, score=round(coverage, 3)))
    return EvidenceSet(sources)


def answer_from_rows(*, question: str, context: PageContext, settings: AnswerSettings) -> RowsAnswer:
    """Answer a question about the loaded rows from the rows alone (no language model)."""
    items = context.items
    if not items:
        return RowsAnswer(
            f"No {context.page.item_label_plural} are loaded yet, so there is nothing to analyse. "
            "Run a search first, or ask me to build one.",
            cites=False,
        )
    filters = _facet_filters(question, context)
    if filters:
        return _filtered(filters, context)
    if _OVERVIEW.search(question) or _COUNT.search(question):
        return _overview(context)
    evidence = rows_evidence(context, question=question)
    text = compose_answer(
        question=question, evidence=evidence, settings=settings, question_terms=content_terms(question), weights={}
    )
    if text == ABSTENTION_NO_EVIDENCE:
        return RowsAnswer(
            f"None of the {len(items)} loaded {context.page.item_label_plural} addresses this closely enough to "
            "quote. Ask me for a new search, or add an AI column to check every row against a criterion.",
            cites=False,
        )
    return RowsAnswer(text, cites=True)
