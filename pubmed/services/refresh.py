"""Re-read stored records from PubMed: retractions, corrections and publication types arrive late.

`fetch_and_cache` never fetches a stored PMID twice; `abstracts_refresh` is how such news reaches the
store, and Celery beat's `refresh-stale-abstracts` runs `abstracts_refresh_stale` daily.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import timedelta

import structlog
from django.utils import timezone

from evidence.identifiers import is_pmid
from pubmed.clients import EFETCH_BATCH_SIZE, EutilsClient, EutilsError, eutils_client
from pubmed.models import Abstract, AbstractSource
from pubmed.services.ingest import Progress, store_batch
from pubmed.services.verification import study_checks_from_pubmed

logger = structlog.get_logger(__name__)


@dataclass(frozen=True)
class RefreshOutcome:
    refreshed: int
    retracted: list[str]  # PMIDs that are retracted after the refresh
    newly_retracted: list[str]  # ... and were not marked retracted before it
    missing: list[str]  # PMIDs NCBI returned no record for
    errors: list[str] = field(default_factory=list)


def abstracts_refresh(
    *,
    pmids: Sequence[str],
    embed: bool = True,
    progress: Progress | None = None,
    client: EutilsClient | None = None,
) -> RefreshOutcome:
    """Fetch stored PMIDs from PubMed again and update them: publication types, retractions, level.

    PubMed adds "Retracted Publication" and the RetractionIn link to a record long after it was first
    stored, and `fetch_and_cache` never fetches a stored PMID twice; this is how such news arrives.
    Unchanged text keeps its chunks and vectors. A failing batch is reported and the rest continue.
    Library studies with a refreshed PMID get a new identifier check, so the admin flags retractions.
    """
    wanted = [pmid for pmid in dict.fromkeys(pmids) if is_pmid(pmid)]
    before = set(Abstract.objects.filter(pmid__in=wanted, is_retracted=True).values_list("pmid", flat=True))
    client = client or eutils_client()
    refreshed: set[str] = set()
    missing: list[str] = []
    errors: list[str] = []
    for start in range(0, len(wanted), EFETCH_BATCH_SIZE):
        batch = wanted[start:start + EFETCH_BATCH_SIZE]
        try:
            got, _ = store_batch(client, batch, embed=embed)
        except EutilsError as exc:
            errors.append(f"efetch {len(batch)} PMID(s) from {batch[0]}: {exc}")
        else:
            refreshed |= got
            missing.extend(pmid for pmid in batch if pmid not in got)
        if progress:
            progress(min(start + len(batch), len(wanted)), len(wanted))
    retracted = sorted(Abstract.objects.filter(pmid__in=wanted, is_retracted=True).values_list("pmid", flat=True))
    study_checks_from_pubmed(
        records={
            abstract.pmid: (abstract.title, abstract.publication_types, abstract.corrections)
            for abstract in Abstract.objects.filter(pmid__in=sorted(refreshed)).only(
                "pmid", "title", "publication_types", "corrections"
            )
        },
        source="refresh_abstracts (PubMed efetch)",
    )
    outcome = RefreshOutcome(
        refreshed=len(refreshed),
        retracted=retracted,
        newly_retracted=[pmid for pmid in retracted if pmid not in before],
        missing=missing,
        errors=errors,
    )
    logger.info("abstracts_refreshed", refreshed=outcome.refreshed, newly_retracted=outcome.newly_retracted,
                missing=len(missing), errors=len(errors))
    return outcome


def abstracts_refresh_stale(
    *, older_than_days: int, limit: int, client: EutilsClient | None = None
) -> RefreshOutcome:
    """Refresh up to `limit` stored abstracts fetched more than `older_than_days` ago, the stalest first.

    Records loaded from JSONL files are left alone: their text is the file's, not PubMed's. Each run
    moves the refreshed records to the back of the queue (their fetch time is now), so a daily run
    goes round the whole store.
    """
    cutoff = timezone.now() - timedelta(days=older_than_days)
    pmids = list(
        Abstract.objects.filter(fetched_at__lt=cutoff)
        .exclude(source=AbstractSource.JSONL_FILE)
        .order_by("fetched_at", "pmid")
        .values_list("pmid", flat=True)[: max(limit, 0)]
    )
    return abstracts_refresh(pmids=pmids, client=client)
