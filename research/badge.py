"""The tray's confidence badge: chat's rule (`evidence.confidence.rate_confidence`) over the loaded rows.

A count or list computed from the rows is rated by how it was computed (`ComputedBasis`), keeping
chat's promise: GREEN when it is complete and computed from the rows that address the question, YELLOW
when part of it could not be checked (rows without an abstract, rows not loaded), RED when the rows
cannot answer it or none addresses the question. Each listed row carries its own citation, so of chat's
format floor only "no valid citation, never above RED" applies to it. A reply
in prose - quoted by the extractive composer or written by a language model - is rated like a chat
answer: each row it cites is judged on whether it addresses the question's topic (half its concepts,
in any wording, in its title, abstract or registry summary and MeSH terms), directly when it covers
every concept and its record is complete; a systematic review, meta-analysis or guideline counts as
a synthesis.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from chat.pipeline.judge import is_synthesis
from evidence.concepts import TextIndex
from evidence.confidence import GREEN, RED, YELLOW, Confidence, SourceVerdict, rate_confidence
from evidence.sources import EvidenceSet
from research.context import PageItem
from research.row_topics import RowTopic


@dataclass(frozen=True)
class ComputedBasis:
    """How a count or list was computed from loaded rows: over how many, matching how many, what is unchecked."""

    rows: int
    matched: int
    answered: bool = True
    gaps: tuple[str, ...] = ()
    described: str = "rows"


@dataclass(frozen=True)
class Badge:
    """The rated badge and the trace line that explains it."""

    confidence: Confidence
    detail: str


def row_verdicts(
    *, topic: RowTopic, evidence: EvidenceSet, doc_ids: Sequence[str], items: Mapping[str, PageItem]
) -> list[SourceVerdict]:
    """Judge each cited row: does it address the question's topic, and is its record complete enough to say so."""
    verdicts = []
    for doc_id in dict.fromkeys(doc_ids):
        chunks = evidence.chunks(doc_id)
        if not chunks:
            continue
        first = chunks[0]
        item = items.get(doc_id)
        mesh = item.facets.get("mesh", ()) if item else ()
        text = " . ".join([first.title, *(chunk.text for chunk in chunks), *mesh])
        addresses, _, missed = topic.judged(TextIndex(text))
        missing = tuple(concept.label for concept in missed)
        verdicts.append(
            SourceVerdict(
                doc_id=doc_id,
                title=first.title or doc_id,
                addresses=addresses,
                direct=addresses and not missing and not (item and item.lacks),
                synthesis=is_synthesis(first.publication_types),
                missing=missing,
            )
        )
    return verdicts


def rate_computed(basis: ComputedBasis, *, format_floor: str) -> Badge:
    """Rate a count or list computed from the rows."""
    rated = rate_computed_confidence(basis, format_floor=format_floor or RED)
    return Badge(rated, f"{rated.level}: {'; '.join(rated.reasons)}. Computed from the loaded rows")


def rate_computed_confidence(basis: ComputedBasis, *, format_floor: str) -> Confidence:
    """Return the badge of a count or list computed from loaded rows, with its reasons."""
    if not basis.answered:
        return Confidence(RED, list(basis.gaps) or [f"the loaded {basis.described} cannot answer the question"])
    if not basis.matched:
        return Confidence(
            RED, [f"none of the {basis.rows} loaded {basis.described} addresses the question", *basis.gaps]
        )
    if basis.gaps:
        level, reasons = YELLOW, [f"computed from the {basis.rows} loaded {basis.described}, in part", *basis.gaps]
    else:
        level = GREEN
        cited = (
            "the one that addresses the question is cited"
            if basis.matched == 1
            else f"the {basis.matched} that address the question are cited"
        )
        reasons = [f"computed from all {basis.rows} loaded {basis.described}; {cited}"]
    if format_floor == RED:
        return Confidence(RED, [*reasons, "no valid citation"])
    return Confidence(level, reasons)


def rate_prose(
    *,
    verdicts: Sequence[SourceVerdict],
    format_floor: str,
    claims_shown: int,
    claims_removed: int,
    density: float,
) -> Badge:
    """Rate a reply in prose from the rows it cites and the statements that survived the support check."""
    rated = rate_confidence(
        cited=verdicts,
        format_floor=format_floor or RED,
        abstained=False,
        claims_shown=claims_shown,
        claims_removed=claims_removed,
    )
    return Badge(
        rated,
        f"{rated.level}: {'; '.join(rated.reasons)}. Citation format: density {density:.2f}, "
        f"floor {format_floor or RED}",
    )
