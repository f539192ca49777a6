"""Celery tasks of the research app: thin wrappers that take ids and call a service."""

from __future__ import annotations

from typing import Any

import structlog
from celery import shared_task

from pubmed.clients import EutilsUnavailable
from research.ai_columns import ai_column_run_execute
from research.scout.pipeline import scout_run_execute
from research.scout.runs import scout_run_fail

logger = structlog.get_logger(__name__)
SCOUT_MAX_RETRIES = 5


@shared_task(acks_late=True, reject_on_worker_lost=True)
def ai_column_run_task(run_id: str) -> dict[str, Any]:
    """Evaluate the rows of AI-column run `run_id`; rows already answered are skipped, so a rerun is safe."""
    run = ai_column_run_execute(run_id=run_id)
    return {"id": str(run.pk), "status": run.status, "done": run.done, "failed": run.failed}


@shared_task(bind=True, acks_late=True, reject_on_worker_lost=True, max_retries=SCOUT_MAX_RETRIES)
def scout_run_task(self: Any, run_id: str) -> dict[str, Any]:
    """Run or resume Evidence Scout run `run_id`; finished stages are kept, so a redelivered task is safe.

    When NCBI is unreachable the task is retried on a worker (30 s, 60 s, ... up to 10 min); run eagerly
    (no broker), or once retries are spent, the run is marked failed instead.
    """
    try:
        run = scout_run_execute(run_id=run_id)
    except EutilsUnavailable as exc:
        if self.request.is_eager or self.request.retries >= SCOUT_MAX_RETRIES:
            scout_run_fail(run_id=run_id, message=str(exc))  # the reader's message; the cause is logged
            logger.warning("scout_run_ncbi_unavailable", run_id=run_id, error=str(exc.__cause__ or exc))
            return {"id": run_id, "status": "failed"}
        raise self.retry(exc=exc, countdown=min(30 * 2**self.request.retries, 600)) from exc
    return {"id": str(run.pk), "status": run.status}
