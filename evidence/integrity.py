"""Retractions, errata and expressions of concern, as PubMed records them.

PubMed marks a retracted article with the publication type "Retracted Publication" and a
`CommentsCorrections` link of type `RetractionIn` to the notice; the notice itself carries
`RetractionOf` (and the type "Retraction of Publication"). An expression of concern is only a link
(`ExpressionOfConcernIn`); an erratum (`ErratumIn`) corrects an article without withdrawing it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

RETRACTION_IN = "RetractionIn"
RETRACTION_OF = "RetractionOf"
ERRATUM_IN = "ErratumIn"
EXPRESSION_OF_CONCERN_IN = "ExpressionOfConcernIn"
# The links MedCite keeps, in PubMed's spelling (efetch XML RefType).
NOTICE_TYPES = (RETRACTION_IN, RETRACTION_OF, ERRATUM_IN, EXPRESSION_OF_CONCERN_IN)
NOTICE_LABELS = {
    RETRACTION_IN: "Retraction in",
    RETRACTION_OF: "Retraction of",
    ERRATUM_IN: "Erratum in",
    EXPRESSION_OF_CONCERN_IN: "Expression of concern in",
}
RETRACTED_PUBLICATION = "Retracted Publication"
RETRACTION_NOTICE = "Retraction of Publication"

# esummary spells link types as words ("Retraction in"), efetch as one token ("RetractionIn");
# MEDLINE text uses field tags.
_FOLDED = {re.sub(r"[^a-z]", "", name.lower()): name for name in NOTICE_TYPES}
MEDLINE_TAGS = {"RIN": RETRACTION_IN, "ROF": RETRACTION_OF, "EIN": ERRATUM_IN, "ECI": EXPRESSION_OF_CONCERN_IN}


def notice_type(raw: str) -> str:
    """Return PubMed's RefType for a link type in any spelling ("Retraction in" → "RetractionIn"); "" if not kept."""
    return _FOLDED.get(re.sub(r"[^a-z]", "", (raw or "").lower()), "")


@dataclass(frozen=True)
class Integrity:
    """Whether a record is retracted or under an expression of concern, and the notices saying so."""

    retracted: bool = False
    expression_of_concern: bool = False
    retraction_notices: tuple[str, ...] = ()  # PMIDs of the retraction notices
    concern_notices: tuple[str, ...] = ()

    @property
    def flagged(self) -> bool:
        return self.retracted or self.expression_of_concern

    def summary(self) -> str:
        """Return one sentence for a curator, e.g. "Retracted (retraction notice PMID 20137807)."."""
        parts = []
        if self.retracted:
            notices = ", ".join(f"PMID {pmid}" for pmid in self.retraction_notices)
            reason = f"retraction notice {notices}" if notices else "PubMed type 'Retracted Publication'"
            parts.append(f"Retracted ({reason})")
        if self.expression_of_concern:
            notices = ", ".join(f"PMID {pmid}" for pmid in self.concern_notices)
            parts.append("Expression of concern" + (f" ({notices})" if notices else ""))
        return "; ".join(parts) + "." if parts else ""


def assess_integrity(*, publication_types: Iterable[str], corrections: Iterable[Mapping[str, str]]) -> Integrity:
    """Return the integrity state of a record from its publication types and its correction links."""
    links = [(notice_type(str(link.get("type", ""))), str(link.get("pmid", "") or "")) for link in corrections]
    retractions = tuple(pmid for kind, pmid in links if kind == RETRACTION_IN and pmid)
    concerns = tuple(pmid for kind, pmid in links if kind == EXPRESSION_OF_CONCERN_IN and pmid)
    types = {value.strip().lower() for value in publication_types}
    return Integrity(
        retracted=RETRACTED_PUBLICATION.lower() in types or any(kind == RETRACTION_IN for kind, _ in links),
        expression_of_concern=any(kind == EXPRESSION_OF_CONCERN_IN for kind, _ in links),
        retraction_notices=retractions,
        concern_notices=concerns,
    )


def is_retraction_notice(publication_types: Iterable[str]) -> bool:
    """Return True for the notice that retracts another record (type "Retraction of Publication")."""
    return RETRACTION_NOTICE.lower() in {value.strip().lower() for value in publication_types}
