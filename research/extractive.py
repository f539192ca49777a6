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
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import replace as dataclass_replace
from typing import TYPE_CHECKING

from chat.answer_settings import AnswerSettings
from chat.prompts import ABSTENTION_NO_EVIDENCE
from chat.providers.composer import compose_answer
from evidence.asks import asked_for
from evidence.concepts import Lexicon
from evidence.sources import EvidenceSet
from evidence.text import content_terms
from evidence.vocabulary import Vocabulary, load_vocabulary
from research.badge import ComputedBasis
from research.context import PageContext, PageItem, facet_counts
from research.row_filters import RowFilter, facet_filters
from research.row_topics import RowTopic, row_index, row_topic

if TYPE_CHECKING:
    pass

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


def _short_title(item: PageItem, limit: int = 70) -> str:
    title = " ".join((item.title or "(no title)").split())
    return title if len(title) <= limit else title[: limit - 1].rsplit(" ", 1)[0] + "…"


def _bullet(item: PageItem) -> str:
    # The identifier is not written out: the verifier turns the citation into a numbered reference,
    # which the page shows with the row's PMID or NCT number and its link.
    return f"- {item.title or '(no title)'} {item.citation}"


def _plural(count: int, context: PageContext) -> str:
    return context.page.item_label if count == 1 else context.page.item_label_plural


def _topic_filter(topic: RowTopic) -> RowFilter:
    """Return the filter for the question's topic: every concept, in any wording, in the row's text."""
    return RowFilter(topic.label, lambda item: topic.covered_by(row_index(item)))


def _bare(needs: str) -> str:
    """Return "recruitment status" for "a recruitment status"."""
    return re.sub(r"^an?\s+", "", needs)


def _cannot(text: str, reason: str, context: PageContext) -> RowsAnswer:
    basis = ComputedBasis(
        rows=len(context.items), matched=0, answered=False, gaps=(reason,), described=context.page.item_label_plural
    )
    return RowsAnswer(text, cites=False, kind=CANNOT, basis=basis)


def _filtered(
    filters: Sequence[RowFilter], context: PageContext, *, topic: RowTopic | None, scoped: bool
) -> RowsAnswer:
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
    lexicon = lexicon if lexicon is not None else Lexicon.load().resolved(question)
    items = context.items
    counting = bool(_COUNT.search(question) or _LISTING.search(question))
    if not items:
        return _cannot(
            f"No {context.page.item_label_plural} are loaded yet, so I cannot answer about them. "
            "Run a search first, or ask me to build one.",
            f"no {context.page.item_label_plural} are loaded",
            context,
        )
    filters, taken = facet_filters(question, context)
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
        question=question,
        evidence=evidence,
        settings=settings,
        question_terms=content_terms(question),
        weights={},
        asks=asked_for(question, lexicon),
    )
    if text == ABSTENTION_NO_EVIDENCE:
        return _cannot(
            f"None of the {len(items)} loaded {context.page.item_label_plural} addresses this closely enough to "
            "quote. Ask me for a new search, or add an AI column to check every row against a criterion.",
            f"no loaded {context.page.item_label} addresses the question closely enough to quote",
            context,
        )
    return RowsAnswer(text, cites=True, kind=QUOTED)
