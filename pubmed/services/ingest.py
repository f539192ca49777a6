"""Bring PubMed records into the store: cached esearch, fetch what is missing, embed, upsert.

`fetch_and_cache` is idempotent: PMIDs already stored are never fetched again, and each efetch
batch is stored in its own transaction, so an interrupted run keeps every finished batch and a
rerun only fetches the rest.

What one user's search brought in serves every later user: esearch answers are cached in the
database for `NCBI_ESEARCH_CACHE_TTL_SECONDS` (keyed by the normalised query, so wordings that differ
only in spacing or letter case share an entry), and an abstract in the store is never fetched again
(`pubmed.services.refresh.abstracts_refresh` is the one way to re-read a stored record). Identical
searches running at the same moment coalesce (`pubmed.singleflight`): the first spends the NCBI budget,
the others wait for it and then find its results in the cache and the store.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import timedelta
from uuid import UUID

import structlog
from django.conf import settings
from django.contrib.auth.models import AnonymousUser, User
from django.db import transaction
from django.utils import timezone

from evidence.identifiers import is_pmid
from pubmed.clients import (
    EFETCH_BATCH_SIZE,
    EsearchResult,
    EutilsBusy,
    EutilsClient,
    EutilsError,
    EutilsUnavailable,
    eutils_client,
)
from pubmed.dispatch import fetch_and_cache_enqueue, live_search_enqueue
from pubmed.models import Abstract, EsearchCacheEntry, Ingestion, IngestionStatus
from pubmed.services.store import abstracts_upsert
from pubmed.singleflight import flight_key, single_flight

logger = structlog.get_logger(__name__)

MAX_QUERIES = 20
MAX_QUERY_LENGTH = 1000
MAX_PER_QUERY = 500
LIVE_SEARCH_TASK_EXPIRES = 900  # seconds


class IngestionInputError(ValueError):
    """The queries or limits given for an ingestion are not acceptable."""


@dataclass(frozen=True)
class IngestionOutcome:
    pmids: list[str]
    found: int
    new: int
    embedded: int
    failed: list[str] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    per_query: dict[str, list[str]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    unavailable: bool = False  # every failure was NCBI being unreachable: worth retrying later
    busy: bool = False  # a request was not sent: the shared budget had no slot before the caller's deadline
    coalesced: bool = False  # an identical search was running: we waited for it and read its results


Progress = Callable[[int, int], None]


def _cache_key(params: dict[str, object]) -> str:
    return hashlib.sha256(json.dumps(params, sort_keys=True).encode()).hexdigest()


_OPERATOR = re.compile(r"\b(AND|OR|NOT)\b")


def normalise_term(term: str) -> str:
    """Return the PubMed query as NCBI reads it, for cache and single-flight keys: spacing collapsed, lower case.

    PubMed matches terms, phrases and field tags without regard to case; only the Boolean operators
    must stay upper case, so they do.
    """
    pieces = _OPERATOR.split(" ".join(term.split()))
    return "".join(piece if index % 2 else piece.lower() for index, piece in enumerate(pieces))


def esearch_cached(
    *,
    term: str,
    retmax: int = 20,
    retstart: int = 0,
    mindate: str | None = None,
    maxdate: str | None = None,
    sort: str | None = None,
    client: EutilsClient | None = None,
) -> EsearchResult:
    """Return esearch results from the database cache, asking NCBI only when absent or expired."""
    term = " ".join(term.split())
    params = {
        "term": normalise_term(term), "retmax": retmax, "retstart": retstart, "mindate": mindate or "",
        "maxdate": maxdate or "", "sort": sort or "",
    }
    key = _cache_key(params)
    now = timezone.now()
    entry = EsearchCacheEntry.objects.filter(key=key, expires_at__gt=now).first()
    if entry is not None:
        return EsearchResult(
            count=entry.count, pmids=list(entry.pmids), query_translation=entry.query_translation, retstart=retstart
        )
    result = (client or eutils_client()).esearch(
        term, retmax=retmax, retstart=retstart, mindate=mindate, maxdate=maxdate, sort=sort
    )
    EsearchCacheEntry.objects.update_or_create(
        key=key,
        defaults={
            "term": term,
            "params": params,
            "count": result.count,
            "pmids": result.pmids,
            "query_translation": result.query_translation,
            "fetched_at": now,
            "expires_at": now + timedelta(seconds=settings.NCBI_ESEARCH_CACHE_TTL_SECONDS),
        },
    )
    return result


def esearch_cache_purge() -> int:
    """Delete expired esearch cache entries; return how many."""
    deleted, _ = EsearchCacheEntry.objects.filter(expires_at__lte=timezone.now()).delete()
    return deleted


def check_queries(*, queries: Sequence[str], max_per_query: int) -> list[str]:
    """Validate ingestion input and return the queries stripped and de-duplicated, in order."""
    if isinstance(queries, str):
        raise IngestionInputError("queries must be a list of PubMed queries, not a single string.")
    cleaned = list(dict.fromkeys(" ".join(str(q).split()) for q in queries))
    cleaned = [q for q in cleaned if q]
    if not cleaned:
        raise IngestionInputError("Give at least one non-empty PubMed query, e.g. \"metformin AND breast cancer\".")
    if len(cleaned) > MAX_QUERIES:
        raise IngestionInputError(f"At most {MAX_QUERIES} queries per ingestion; got {len(cleaned)}.")
    too_long = [q for q in cleaned if len(q) > MAX_QUERY_LENGTH]
    if too_long:
        raise IngestionInputError(f"Each query must be at most {MAX_QUERY_LENGTH} characters.")
    if not 1 <= max_per_query <= MAX_PER_QUERY:
        raise IngestionInputError(f"max_per_query must be between 1 and {MAX_PER_QUERY}; got {max_per_query}.")
    return cleaned


def store_batch(client: EutilsClient, batch: list[str], *, embed: bool) -> tuple[set[str], int]:
    records = client.efetch(batch)
    wanted = set(batch)
    records = [record for record in records if record.pmid in wanted]
    result = abstracts_upsert(records=records, embed=embed)
    return {record.pmid for record in records}, result.embedded


def fetch_and_cache(
    *,
    queries: Sequence[str],
    max_per_query: int = 20,
    embed: bool = True,
    progress: Progress | None = None,
    client: EutilsClient | None = None,
    coalesce_wait_seconds: float | None = None,
) -> IngestionOutcome:
    """esearch each query → drop stored PMIDs → efetch the rest in batches → embed → upsert.

    Returns every PMID the queries found (stored before or now), what was new, and what failed.
    A failing query or batch is reported in `errors` and does not stop the others.

    Coalesced: while the same queries (normalised) with the same limit are being fetched by another
    caller, in any process, this one waits for it (at most `coalesce_wait_seconds`, by default
    `NCBI_SINGLE_FLIGHT_WAIT_SECONDS`) and then reads the esearch cache and the store, spending no NCBI
    request on what that caller brought in.
    """
    queries = check_queries(queries=queries, max_per_query=max_per_query)
    key = flight_key("fetch_and_cache", max_per_query, embed, *sorted(normalise_term(q) for q in queries))
    with single_flight(
        key,
        wait_seconds=settings.NCBI_SINGLE_FLIGHT_WAIT_SECONDS if coalesce_wait_seconds is None
        else coalesce_wait_seconds,
        lease_seconds=settings.NCBI_SINGLE_FLIGHT_LEASE_SECONDS,
    ) as flight:
        outcome = _fetch_and_cache(
            queries=queries, max_per_query=max_per_query, embed=embed, progress=progress, client=client
        )
    return replace(outcome, coalesced=flight.waited)


def _fetch_and_cache(
    *,
    queries: list[str],
    max_per_query: int,
    embed: bool,
    progress: Progress | None,
    client: EutilsClient | None,
) -> IngestionOutcome:
    client = client or eutils_client()
    timings: dict[str, float] = {"esearch": 0.0, "efetch_store": 0.0}
    errors: list[str] = []
    unavailable_errors = busy_errors = 0
    per_query: dict[str, list[str]] = {}
    started = time.perf_counter()
    for query in queries:
        try:
            per_query[query] = esearch_cached(term=query, retmax=max_per_query, client=client).pmids
        except EutilsError as exc:
            errors.append(f"esearch {query!r}: {exc}")
            unavailable_errors += isinstance(exc, EutilsUnavailable)
            busy_errors += isinstance(exc, EutilsBusy)
    timings["esearch"] = round(time.perf_counter() - started, 3)
    found = list(dict.fromkeys(pmid for pmids in per_query.values() for pmid in pmids))
    stored = set(Abstract.objects.filter(pmid__in=found).values_list("pmid", flat=True))
    missing = [pmid for pmid in found if pmid not in stored]
    if progress:
        progress(0, len(missing))
    new: set[str] = set()
    failed: list[str] = []
    embedded = 0
    started = time.perf_counter()
    for start in range(0, len(missing), EFETCH_BATCH_SIZE):
        batch = missing[start:start + EFETCH_BATCH_SIZE]
        try:
            got, batch_embedded = store_batch(client, batch, embed=embed)
        except EutilsError as exc:
            errors.append(f"efetch {len(batch)} PMID(s) from {batch[0]}: {exc}")
            unavailable_errors += isinstance(exc, EutilsUnavailable)
            busy_errors += isinstance(exc, EutilsBusy)
            failed.extend(batch)
        else:
            new |= got
            embedded += batch_embedded
            absent = [pmid for pmid in batch if pmid not in got]
            if absent:
                errors.append(f"NCBI returned no record for {len(absent)} PMID(s): {', '.join(absent[:10])}")
                failed.extend(absent)
        if progress:
            progress(min(start + len(batch), len(missing)), len(missing))
    timings["efetch_store"] = round(time.perf_counter() - started, 3)
    outcome = IngestionOutcome(
        pmids=found,
        found=len(found),
        new=len(new),
        embedded=embedded,
        failed=failed,
        errors=errors,
        per_query=per_query,
        timings=timings,
        unavailable=bool(errors) and unavailable_errors == len(errors),
        busy=busy_errors > 0,
    )
    logger.info("pubmed_fetch_and_cache", found=outcome.found, new=outcome.new, failed=len(failed), errors=len(errors))
    return outcome


def live_search_defer(*, query: str, max_per_query: int) -> bool:
    """Queue `query` for a Celery worker to fetch and store; return False when no broker is configured.

    For a live search that found the NCBI budget busy: the answer goes on with stored evidence, and the
    worker (which may wait for the budget) stores the results for the next user who asks. Without a
    broker tasks would run eagerly inside the answer, which is what deferring avoids, so nothing is queued.
    """
    if settings.CELERY_TASK_ALWAYS_EAGER:
        return False
    # A search still queued after LIVE_SEARCH_TASK_EXPIRES is dropped: its askers are long gone.
    transaction.on_commit(
        lambda: live_search_enqueue(query=query, max_per_query=max_per_query, expires=LIVE_SEARCH_TASK_EXPIRES)
    )
    return True


def abstracts_ensure(*, pmids: Sequence[str], embed: bool = True, client: EutilsClient | None = None) -> list[Abstract]:
    """Return the stored abstracts for `pmids` in the given order, fetching any not yet stored.

    PMIDs that NCBI does not know are simply absent from the result. Raises ValueError for a
    string that is not a PMID and EutilsError when NCBI cannot be asked.
    """
    wanted = list(dict.fromkeys(str(pmid).strip() for pmid in pmids))
    bad = [pmid for pmid in wanted if not is_pmid(pmid)]
    if bad:
        raise ValueError(f"Not PMIDs: {', '.join(repr(b) for b in bad)}; use digits only, e.g. 35657320.")
    stored = set(Abstract.objects.filter(pmid__in=wanted).values_list("pmid", flat=True))
    missing = [pmid for pmid in wanted if pmid not in stored]
    if missing:
        client = client or eutils_client()
        for start in range(0, len(missing), EFETCH_BATCH_SIZE):
            store_batch(client, missing[start:start + EFETCH_BATCH_SIZE], embed=embed)
    by_pmid = Abstract.objects.in_bulk(wanted)
    return [by_pmid[pmid] for pmid in wanted if pmid in by_pmid]


# --- Ingestion jobs -------------------------------------------------------------------------------


def ingestion_create(*, queries: Sequence[str], max_per_query: int = 20, user: User | AnonymousUser | None = None,
                     enqueue: bool = True) -> Ingestion:
    """Validate, record and (after commit) enqueue an ingestion job; return its record."""
    cleaned = check_queries(queries=queries, max_per_query=max_per_query)
    with transaction.atomic():
        ingestion = Ingestion.objects.create(
            queries=cleaned,
            max_per_query=max_per_query,
            created_by=user if isinstance(user, User) else None,
        )
        if enqueue:
            transaction.on_commit(lambda: _enqueue(ingestion.pk))
    return ingestion


def _enqueue(ingestion_id: UUID) -> None:
    result = fetch_and_cache_enqueue(ingestion_id=str(ingestion_id))
    Ingestion.objects.filter(pk=ingestion_id, task_id="").update(task_id=result.id or "")


def ingestion_run(*, ingestion_id: str, progress: Progress | None = None) -> Ingestion:
    """Run (or re-run, idempotently) an ingestion job and record its counts, errors and timings.

    Raises EutilsUnavailable when every failure was NCBI being unreachable, so the task retries.
    """
    ingestion = Ingestion.objects.get(pk=ingestion_id)
    if ingestion.status == IngestionStatus.SUCCEEDED:
        return ingestion
    Ingestion.objects.filter(pk=ingestion.pk).update(
        status=IngestionStatus.RUNNING, started_at=timezone.now(), finished_at=None
    )

    def record_progress(done: int, total: int) -> None:
        Ingestion.objects.filter(pk=ingestion.pk).update(fetched=done, to_fetch=total)
        if progress:
            progress(done, total)

    started = time.perf_counter()
    try:
        outcome = fetch_and_cache(
            queries=ingestion.queries, max_per_query=ingestion.max_per_query, progress=record_progress
        )
    except Exception as exc:
        Ingestion.objects.filter(pk=ingestion.pk).update(
            status=IngestionStatus.FAILED,
            errors=[f"{type(exc).__name__}: {exc}"],
            finished_at=timezone.now(),
        )
        raise
    if not outcome.errors:
        status = IngestionStatus.SUCCEEDED
    elif outcome.found and (outcome.new or len(outcome.failed) < outcome.found):
        status = IngestionStatus.PARTIAL
    else:
        status = IngestionStatus.FAILED
    Ingestion.objects.filter(pk=ingestion.pk).update(
        status=status,
        found=outcome.found,
        new=outcome.new,
        embedded=outcome.embedded,
        failed=len(outcome.failed),
        pmids=outcome.pmids,
        errors=outcome.errors,
        timings={**outcome.timings, "total": round(time.perf_counter() - started, 3)},
        finished_at=timezone.now(),
    )
    ingestion.refresh_from_db()
    if status == IngestionStatus.FAILED and outcome.unavailable:
        raise EutilsUnavailable("; ".join(outcome.errors))
    return ingestion
