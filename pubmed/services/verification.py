"""Check library identifiers against PubMed: does each PMID exist, does its title match ours, and has
PubMed retracted it or linked an expression of concern.

It lives here, not in the evidence app, because it calls the E-utilities client; the library's admin
action reaches it through `evidence.identifier_checks`, which this app registers on start-up.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Mapping, Sequence
from difflib import SequenceMatcher

import structlog
from django.db import transaction

from evidence.integrity import assess_integrity
from evidence.models import IdentifierCheck, Study
from pubmed.clients import EutilsError, eutils_client
from pubmed.summaries import PubmedSummary

logger = structlog.get_logger(__name__)

# Titles at or above this similarity count as the same article (PubMed adds/strips punctuation,
# HTML and trailing periods, so exact equality is too strict).
TITLE_MATCH_THRESHOLD = 0.9
_TAGS = re.compile(r"<[^>]+>")
_NON_WORD = re.compile(r"[^0-9a-z]+")


def normalize_title(title: str) -> str:
    """Return a title reduced to lower-case ASCII words for comparison."""
    text = _TAGS.sub(" ", html.unescape(title))
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return _NON_WORD.sub(" ", text).strip()


def title_similarity(ours: str, theirs: str) -> float:
    """Return a 0-1 similarity of two titles after normalisation (1.0 means the same words in order)."""
    a, b = normalize_title(ours), normalize_title(theirs)
    if not a or not b:
        return 0.0
    return round(SequenceMatcher(None, a, b, autojunk=False).ratio(), 4)


@transaction.atomic
def study_identifiers_verify(*, study_ids: Sequence[int]) -> list[IdentifierCheck]:
    """Look up the studies' PMIDs with E-utilities esummary and record one check per study.

    If PubMed cannot be reached (after the client's own retries) every study gets an `error`
    check saying why, so curators see the failure instead of a silent gap.
    """
    studies = list(Study.objects.filter(pk__in=study_ids).order_by("pk"))
    pmids = [study.pmid for study in studies if study.pmid]
    summaries: dict[str, PubmedSummary] = {}
    failure = ""
    if pmids:
        try:
            summaries = eutils_client().esummary(pmids)
        except EutilsError as exc:
            failure = str(exc)
            logger.warning("identifier_verification_failed", study_ids=list(study_ids), error=failure)

    checks = []
    for study in studies:
        check = IdentifierCheck(study=study, pmid=study.pmid)
        if not study.pmid:
            check.status = IdentifierCheck.Status.NO_PMID
            check.detail = "No PMID to check; DOI/NCT identifiers are not verified by PubMed."
        elif failure:
            check.status = IdentifierCheck.Status.ERROR
            check.detail = failure
        elif study.pmid not in summaries:
            check.status = IdentifierCheck.Status.NOT_FOUND
            check.pmid_exists = False
            check.detail = f"PubMed has no record for PMID {study.pmid}."
        else:
            summary = summaries[study.pmid]
            check.pmid_exists = True
            check.pubmed_title = summary.title
            check.title_similarity = title_similarity(study.title, summary.title)
            matched = check.title_similarity >= TITLE_MATCH_THRESHOLD
            check.status = IdentifierCheck.Status.MATCH if matched else IdentifierCheck.Status.MISMATCH
            integrity = summary.integrity
            check.publication_types = list(summary.publication_types)
            check.notices = list(summary.corrections)
            check.retracted = integrity.retracted
            check.expression_of_concern = integrity.expression_of_concern
            check.detail = " ".join(
                part
                for part in (
                    f"PubMed: {integrity.summary()}" if integrity.flagged else "",
                    "" if matched else f"PubMed title: {summary.title}",
                )
                if part
            )
        checks.append(check)
    IdentifierCheck.objects.bulk_create(checks)
    logger.info(
        "identifier_verification_complete",
        studies=len(checks),
        statuses={status: sum(c.status == status for c in checks) for status in {c.status for c in checks}},
        retracted=[c.pmid for c in checks if c.retracted],
        expression_of_concern=[c.pmid for c in checks if c.expression_of_concern],
    )
    return checks


@transaction.atomic
def study_checks_from_pubmed(
    *, records: Mapping[str, tuple[str, Sequence[str], Sequence[Mapping[str, str]]]], source: str
) -> list[IdentifierCheck]:
    """Record a check for every library study whose PMID is in `records` (PMID → title, types, notice links).

    Used when PubMed records are fetched anyway (`refresh_abstracts`): a study whose paper PubMed has
    since retracted is flagged in the admin without waiting for a curator to run the verify action.
    """
    checks = []
    for study in Study.objects.filter(pmid__in=list(records)).order_by("pk"):
        title, types, notices = records[study.pmid]
        integrity = assess_integrity(publication_types=types, corrections=notices)
        similarity = title_similarity(study.title, title)
        matched = similarity >= TITLE_MATCH_THRESHOLD
        checks.append(
            IdentifierCheck(
                study=study,
                pmid=study.pmid,
                status=IdentifierCheck.Status.MATCH if matched else IdentifierCheck.Status.MISMATCH,
                pmid_exists=True,
                pubmed_title=title,
                title_similarity=similarity,
                publication_types=list(types),
                notices=[dict(link) for link in notices],
                retracted=integrity.retracted,
                expression_of_concern=integrity.expression_of_concern,
                detail=" ".join(
                    part
                    for part in (
                        f"From {source}.",
                        f"PubMed: {integrity.summary()}" if integrity.flagged else "",
                        "" if matched else f"PubMed title: {title}",
                    )
                    if part
                ),
            )
        )
    IdentifierCheck.objects.bulk_create(checks)
    return checks
