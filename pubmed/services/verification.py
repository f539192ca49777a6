"""Check library identifiers against PubMed: does each PMID exist, and does its title match ours.

It lives here, not in the evidence app, because it calls the E-utilities client; the library's admin
action reaches it through `evidence.identifier_checks`, which this app registers on start-up.
"""

from __future__ import annotations

import html
import re
import unicodedata
from collections.abc import Sequence
from difflib import SequenceMatcher

import structlog
from django.db import transaction

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
            if not matched:
                check.detail = f"PubMed title: {summary.title}"
        checks.append(check)
    IdentifierCheck.objects.bulk_create(checks)
    logger.info(
        "identifier_verification_complete",
        studies=len(checks),
        statuses={status: sum(c.status == status for c in checks) for status in {c.status for c in checks}},
    )
    return checks
