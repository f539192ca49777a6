"""Answers about the loaded rows without a language model: counts, filtered lists and extracted sentences.

A count or list question ("how many of the loaded articles are about breast cancer?", "which of
these are RCTs?", "how many trials are recruiting?", "which studies used metformin?") is answered
from the rows alone: facet values (status, phase, publication type, journal, year, AI-column
answers) and the question's clinical topic (`research.row_topics`: synonyms, curated
abbreviations, British / American spellings, MeSH headings) are matched against every loaded row,
the matching rows are named, each with its citation, and the answer says how the match was made and
what it could not check. A question the rows cannot answer - nothing loaded, or data no row
carries - gets a plain "cannot", never a summary in its place. An overview question gets a
breakdown with cited examples. Anything else goes to the extractive composer over the rows'
abstracts or registry summaries. Every row cited is a loaded row; the citation verifier checks the
result like any other answer.
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
from evidence.concepts import Lexicon
from evidence.sources import EvidenceSet
from evidence.text import content_terms
from evidence.vocabulary import Vocabulary, load_vocabulary
from research.badge import ComputedBasis
from research.context import PageContext, PageItem, facet_counts
from research.row_topics import RowTopic, row_index, row_topic
from research.rules.pubmed_query import PUBLICATION_TYPES
from trials.constants import PHASES, SEARCHABLE_STATUSES

if TYPE_CHECKING:
    from research.models import AIColumnResult

MAX_LISTED = 15
EXAMPLES_PER_VALUE = 2
COMPUTED, QUOTED, CANNOT = "computed", "quoted", "cannot"
FACET_LABELS = {
    "status": "status",
    "phase": "phase",
    "type": "publication type",
    "journal": "journal",
    "compare": "group",
}
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
MATCHED_IN = {
    "tablizer": "title, abstract and MeSH terms",
    "trialscout": "title and registry summary (conditions, interventions, status, phase)",
}
OVERVIEW_FACETS = {"tablizer": ("compare", "type", "year"), "trialscout": ("phase", "status")}
_OVERVIEW = re.compile(
    r"\b(?:summar(?:y|ise|ize)|overview|breakdown|distribution|what\s+(?:are|is)\s+(?:these|this|the\s+results)"
    r"\s+about|describe)\b",
    re.IGNORECASE,
)
# A topic named after "about", "on", ...: "how many of the loaded articles are about breast cancer?"
_TOPIC = re.compile(
    r"\b(?:about|on|regarding|mention(?:ing)?|involv(?:e|es|ing)|stud(?:y|ying))\s+(?P<topic>[^?.!]+)", re.IGNORECASE
)
_COUNT = re.compile(r"\bhow\s+many\b|\bnumber\s+of\b|\bcount\b", re.IGNORECASE)
# A question asking for the rows themselves: "which of these ...", "which studies used ...", "list the ...".
_LISTING = re.compile(
    r"^\W*(?:which\s+(?:of\b|ones?\b|(?:articles|papers|studies|trials|rows|records|publications|abstracts|"
    r"reviews|rcts)\b|(?:are|were|is|was|have|has|had|mention|mentions|use|used|test|tests|tested|include|"
    r"included|report|reported|enrol|enroll|enrolled)\b)|(?:list|name|show)\s+(?:the|all|every|those|these|"
    r"which)\b|(?:are|is|do|does|did|were)\s+any\b)",
    re.IGNORECASE,
)
# The question names the loaded rows themselves, so the count covers what it asks about.
_SCOPED = re.compile(
    r"\b(?:loaded|these|those|them|shown|on\s+(?:the|this)\s+page|in\s+the\s+(?:table|list)|"
    r"of\s+the\s+(?:results|rows))\b",
    re.IGNORECASE,
)
_PHASE_MENTION = re.compile(r"\b(early\s+)?phase\s*(iv|iii|ii|i|[1-4])\b", re.IGNORECASE)
_ROMAN = {"i": "1", "ii": "2", "iii": "3", "iv": "4"}


@dataclass(frozen=True)
class RowsAnswer:
    """An answer about the loaded rows.

    `cites` is False when it makes no claim about a particular row; `kind` is COMPUTED (a count,
    list or overview computed from the rows, described by `basis`), QUOTED (sentences of the rows)
    or CANNOT (the rows cannot answer; `basis` says why).
    """

    text: str
    cites: bool
    kind: str = QUOTED
    basis: ComputedBasis | None = None


@dataclass(frozen=True)
class _Filter:
    label: str
    test: Callable[[PageItem], bool]
    known: Callable[[PageItem], bool] = lambda item: True
    needs: str = ""  # what a row must record for the filter to decide it, e.g. "a recruitment status"


def _value_pattern(value: str) -> re.Pattern[str]:
    words = [re.escape(word) for word in re.split(r"[\s,]+", value.strip()) if word]
    return re.compile(r"(?<!\w)" + r"[\s,\-]+".join(words) + r"(?!\w)", re.IGNORECASE)


def _facet_filters(question: str, context: PageContext) -> tuple[list[_Filter], list[tuple[int, int]]]:
    """Return the filters the question names (facet values, years, AI-column answers) and the spans they took."""
    filters: list[_Filter] = []
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
                number = _ROMAN.get(match.group(2).lower(), match.group(2))
                key = f"EARLY_PHASE{number}" if match.group(1) else f"PHASE{number}"
                if key in PHASES and PHASES[key] not in chosen and free(match.span()):
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
                _Filter(" or ".join(chosen), _has_facet_value(facet, set(chosen)), _records(facet), FACET_FIELDS[facet])
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
                _Filter(
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


def _year_filter(question: str) -> tuple[_Filter, tuple[int, int]] | None:
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
            return _Filter(f"dated {label}", _dated(low, high), _records("year"), FACET_FIELDS["year"]), match.span()
    return None


def _short_title(item: PageItem, limit: int = 70) -> str:
    title = " ".join((item.title or "(no title)").split())
    return title if len(title) <= limit else title[: limit - 1].rsplit(" ", 1)[0] + "…"


def _bullet(item: PageItem) -> str:
    # The identifier is not written out: the verifier turns the citation into a numbered reference,
    # which the page shows with the row's PMID or NCT number and its link.
    return f"- {item.title or '(no title)'} {item.citation}"


def _plural(count: int, context: PageContext) -> str:
    return context.page.item_label if count == 1 else context.page.item_label_plural


def _topic_filter(topic: RowTopic) -> _Filter:
    """Return the filter for the question's topic: every concept, in any wording, in the row's text."""
    return _Filter(topic.label, lambda item: topic.covered_by(row_index(item)))


def _bare(needs: str) -> str:
    """Return "recruitment status" for "a recruitment status"."""
    return re.sub(r"^an?\s+", "", needs)


def _cannot(text: str, reason: str, context: PageContext) -> RowsAnswer:
    basis = ComputedBasis(
        rows=len(context.items), matched=0, answered=False, gaps=(reason,), described=context.page.item_label_plural
    )
    return RowsAnswer(text, cites=False, kind=CANNOT, basis=basis)


def _filtered(filters: Sequence[_Filter], context: PageContext, *, topic: RowTopic | None, scoped: bool) -> RowsAnswer:
    """Count and name the loaded rows that pass every filter; say how they were matched and what was unchecked."""
    items = context.items
    plural = context.page.item_label_plural
    total = f"{len(items)} loaded {_plural(len(items), context)}"
    for rule in filters:
        if rule.needs and not any(rule.known(item) for item in items):
            return _cannot(
                f"None of the {total} records {rule.needs}, so I cannot tell which match {rule.label}. "
                "Ask about what the rows show, or run a search that has it.",
                f"no loaded {context.page.item_label} records {rule.needs}",
                context,
            )
    rules = [*filters, *([_topic_filter(topic)] if topic is not None else [])]
    matching = [item for item in items if all(rule.test(item) for rule in rules)]
    matched = {item.item_id for item in matching}
    described = " and ".join(rule.label for rule in rules)
    gaps: list[str] = []
    for rule in filters:
        unknown = sum(1 for item in items if item.item_id not in matched and not rule.known(item))
        if unknown:
            gaps.append(f"{unknown} of the {total} {'has' if unknown == 1 else 'have'} no {_bare(rule.needs)}")
    if topic is not None:
        unread = [item for item in items if item.item_id not in matched and item.lacks]
        if unread:
            lacking = sorted({part for item in unread for part in item.lacks})
            gaps.append(
                f"{len(unread)} of the {total} {'has' if len(unread) == 1 else 'have'} no {' or '.join(lacking)}, "
                f"so {'it was' if len(unread) == 1 else 'they were'} checked on the rest of "
                f"{'its' if len(unread) == 1 else 'their'} record only"
            )
    if not scoped and context.total is not None and context.total > len(items):
        gaps.append(f"only the {total} were read; the search matched {context.total}")
    how = []
    if topic is not None:
        how.append(f"{topic.how_matched()} in each {context.page.item_label}'s {MATCHED_IN[context.page.name]}")
    how += [f"{rule.label} by the {_bare(rule.needs)} each {context.page.item_label} records" for rule in filters]
    footer = [
        f"How they were matched: {'; '.join(how)}." if how else "",
        f"Not checked: {'; '.join(gaps)}." if gaps else "",
    ]
    basis = ComputedBasis(rows=len(items), matched=len(matching), gaps=tuple(gaps), described=plural)
    if not matching:
        text = "\n\n".join(part for part in [f"None of the {total} matches {described}.", *footer] if part)
        return RowsAnswer(text, cites=False, kind=COMPUTED, basis=basis)
    verb = "matches" if len(matching) == 1 else "match"
    head = (
        f"{len(matching)} of the {total} {verb} {described}:"
        if rules
        else f"{len(items)} {_plural(len(items), context)} {'is' if len(items) == 1 else 'are'} loaded"
        + (f" of {context.total} matching the search:" if context.total is not None else ":")
    )
    lines = [head, *[_bullet(item) for item in matching[:MAX_LISTED]]]
    if len(matching) > MAX_LISTED:
        lines.append(f"- and {len(matching) - MAX_LISTED} more.")
    text = "\n\n".join(part for part in ["\n".join(lines), *footer] if part)
    return RowsAnswer(text, cites=True, kind=COMPUTED, basis=basis)


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
    basis = ComputedBasis(rows=len(items), matched=len(items), described=context.page.item_label_plural)
    return RowsAnswer("\n".join(lines), cites=True, kind=COMPUTED, basis=basis)


def rows_evidence(context: PageContext, *, question: str, vocabulary: Vocabulary, lexicon: Lexicon) -> EvidenceSet:
    """Return the loaded rows as this turn's evidence; the rows that address the question's topic are approved."""
    topic = row_topic(question, vocabulary=vocabulary, lexicon=lexicon)
    sources = []
    for item in context.items:
        addresses, share, _ = topic.judged(row_index(item))
        approved = bool(topic.concepts) and addresses
        sources.append(dataclass_replace(item.source, approved=approved, score=round(share, 3)))
    return EvidenceSet(sources)


def answer_from_rows(
    *,
    question: str,
    context: PageContext,
    settings: AnswerSettings,
    vocabulary: Vocabulary | None = None,
    lexicon: Lexicon | None = None,
) -> RowsAnswer:
    """Answer a question about the loaded rows from the rows alone (no language model).

    `vocabulary` and `lexicon` default to the curated ones in the database.
    """
    vocabulary = vocabulary if vocabulary is not None else load_vocabulary()
    lexicon = lexicon if lexicon is not None else Lexicon.load()
    items = context.items
    counting = bool(_COUNT.search(question) or _LISTING.search(question))
    if not items:
        return _cannot(
            f"No {context.page.item_label_plural} are loaded yet, so I cannot answer about them. "
            "Run a search first, or ask me to build one.",
            f"no {context.page.item_label_plural} are loaded",
            context,
        )
    filters, taken = _facet_filters(question, context)
    topic = row_topic(question, vocabulary=vocabulary, lexicon=lexicon, taken=taken) if counting else None
    if topic is not None and not topic.concepts:
        if _TOPIC.search(question) and not filters:
            return _cannot(
                f"I could not tell what to look for in the {len(items)} loaded {_plural(len(items), context)}. "
                "Name a condition, a drug, a study type, a status or a year, e.g. "
                '"how many of these are about breast cancer?"',
                "the question names nothing the rows can be matched on",
                context,
            )
        topic = None
    if filters or topic is not None or (counting and not _OVERVIEW.search(question)):
        return _filtered(filters, context, topic=topic, scoped=bool(_SCOPED.search(question)))
    if _OVERVIEW.search(question):
        return _overview(context)
    evidence = rows_evidence(context, question=question, vocabulary=vocabulary, lexicon=lexicon)
    text = compose_answer(
        question=question, evidence=evidence, settings=settings, question_terms=content_terms(question), weights={}
    )
    if text == ABSTENTION_NO_EVIDENCE:
        return _cannot(
            f"None of the {len(items)} loaded {context.page.item_label_plural} addresses this closely enough to "
            "quote. Ask me for a new search, or add an AI column to check every row against a criterion.",
            f"no loaded {context.page.item_label} addresses the question closely enough to quote",
            context,
        )
    return RowsAnswer(text, cites=True, kind=QUOTED)
