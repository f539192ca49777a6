"""Celery tasks of the pubmed app: thin wrappers that take ids, call a service, retry transient errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import structlog
from celery import shared_task
from celery.signals import worker_init
from django.conf import settings

from pubmed.clients import EutilsUnavailable
from pubmed.embeddings import embedding_device_problem
from pubmed.services.bulk_load import RecordFileBusy, record_file_load
from pubmed.services.ingest import esearch_cache_purge, fetch_and_cache, ingestion_run
from pubmed.services.refresh import abstracts_refresh_stale
from pubmed.services.store import chunks_reembed
from pubmed.services.verification import study_identifiers_verify

logger = structlog.get_logger(__name__)


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=5)
def fetch_and_cache_task(self: object, ingestion_id: str) -> dict[str, object]:
    """Run the ingestion job `ingestion_id`; safe to run twice (stored PMIDs are never refetched).

    When NCBI was unreachable for every query the job is retried later on a worker (backoff
    30 s, 60 s, ... up to 10 min); run eagerly (no broker) it is not, so no request waits minutes.
    """
    try:
        ingestion = ingestion_run(ingestion_id=ingestion_id)
    except EutilsUnavailable as exc:
        if self.request.is_eager:  # type: ignore[attr-defined]
            logger.warning("ingestion_ncbi_unavailable", ingestion_id=ingestion_id, error=str(exc))
            return {"id": ingestion_id, "status": "failed", "error": str(exc)}
        retries = self.request.retries  # type: ignore[attr-defined]
        raise self.retry(exc=exc, countdown=min(30 * 2**retries, 600)) from exc  # type: ignore[attr-defined]
    return {"id": str(ingestion.pk), "status": ingestion.status, "found": ingestion.found, "new": ingestion.new}


@shared_task(acks_late=True, max_retries=3)
def live_search_task(query: str, max_per_query: int) -> dict[str, object]:
    """Fetch and store what `query` finds: a live search an answer handed over when the NCBI budget was busy."""
    outcome = fetch_and_cache(queries=[query], max_per_query=max_per_query)
    return {"query": query, "found": outcome.found, "new": outcome.new, "errors": len(outcome.errors)}


@shared_task(acks_late=True, reject_on_worker_lost=True)
def load_abstracts_file_task(
    path: str, *, embed: bool = True, batch_size: int = 200, restart: bool = False
) -> dict[str, object]:
    """Load the record file at `path` (as this worker sees it) into the store; return its counts.

    A worker that dies mid-file has the task redelivered, and the load resumes after the last stored
    batch. A file another process is loading right now is left to it (status "busy").
    """
    try:
        run = record_file_load(path=Path(path), embed=embed, batch_size=batch_size, restart=restart)
    except RecordFileBusy as exc:
        logger.warning("record_file_busy", path=path, error=str(exc))
        return {"path": path, "status": "busy", "error": str(exc)}
    return {
        "path": path,
        "status": run.load.status,
        "records": run.records,
        "created": run.created,
        "embedded": run.embedded,
        "deleted": run.deleted,
        "worker": run.load.worker,
    }


@worker_init.connect
def refuse_unusable_embedding_device(**_: Any) -> None:
    """Stop a worker at start-up whose EMBEDDING_DEVICE cannot be used, rather than failing every task later."""
    problem = embedding_device_problem(device=settings.EMBEDDING_DEVICE, backend=settings.EMBEDDING_BACKEND)
    if problem:
        raise SystemExit(f"Refusing to start the worker: {problem}")


@shared_task(acks_late=True)
def refresh_stale_abstracts_task() -> dict[str, object]:
    """Fetch the stalest stored abstracts from PubMed again (retractions, corrections); return the outcome."""
    outcome = abstracts_refresh_stale(
        older_than_days=settings.REFRESH_ABSTRACTS_AFTER_DAYS, limit=settings.REFRESH_ABSTRACTS_BATCH
    )
    return {"refreshed": outcome.refreshed, "newly_retracted": outcome.newly_retracted, "errors": outcome.errors}


@shared_task(acks_late=True)
def purge_expired_esearch_cache_task() -> int:
    """Delete esearch answers past their time to live (`NCBI_ESEARCH_CACHE_TTL_SECONDS`); return how many."""
    return esearch_cache_purge()


@shared_task(acks_late=True)
def embed_missing_chunks_task() -> int:
    """Embed every chunk stored without a vector for the current model; return how many."""
    return chunks_reembed()


@shared_task(acks_late=True)
def verify_study_identifiers(*, study_ids: list[int]) -> dict[str, int]:
    """Verify the given library studies' PMIDs against PubMed; return counts per status, retracted, concern."""
    checks = study_identifiers_verify(study_ids=study_ids)
    counts: dict[str, int] = {}
    for check in checks:
        counts[check.status] = counts.get(check.status, 0) + 1
    counts["retracted"] = sum(1 for check in checks if check.retracted)
    counts["expression_of_concern"] = sum(1 for check in checks if check.expression_of_concern)
    return counts
