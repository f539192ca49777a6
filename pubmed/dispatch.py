"""Every Celery job the pubmed app queues, in one place.

Services queue work through these functions; the tasks (`pubmed.tasks`) call the services. The tasks
are looked up by name (`config.celery.task_named`), so no service imports the module that imports it.
Without a broker the tasks run eagerly, in-process, as `delay` does.
"""

from __future__ import annotations

from collections.abc import Sequence

from celery.result import AsyncResult

from config.celery import task_named

TASKS = "pubmed.tasks"


def fetch_and_cache_enqueue(*, ingestion_id: str) -> AsyncResult:
    """Queue the ingestion job `ingestion_id` (`fetch_and_cache_task`)."""
    return task_named(f"{TASKS}.fetch_and_cache_task").delay(ingestion_id)


def live_search_enqueue(*, query: str, max_per_query: int, expires: float) -> AsyncResult:
    """Queue a live search for a worker to fetch and store; dropped if still queued after `expires` seconds."""
    return task_named(f"{TASKS}.live_search_task").apply_async((query, max_per_query), expires=expires)


def load_abstracts_file_enqueue(*, path: str, embed: bool, batch_size: int, restart: bool) -> AsyncResult:
    """Queue the load of the record file at `path` (as the worker sees it)."""
    return task_named(f"{TASKS}.load_abstracts_file_task").delay(
        path, embed=embed, batch_size=batch_size, restart=restart
    )


def embed_missing_chunks_enqueue() -> AsyncResult:
    """Queue the embedding of every chunk stored without a vector for the current model."""
    return task_named(f"{TASKS}.embed_missing_chunks_task").delay()


def study_identifiers_verify_enqueue(study_ids: Sequence[int]) -> None:
    """Queue the check of the given library studies' PMIDs against PubMed (the library admin's action)."""
    task_named(f"{TASKS}.verify_study_identifiers").delay(study_ids=list(study_ids))
