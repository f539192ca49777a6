"""Celery tasks of the research app: thin wrappers that take ids and call a service."""

from __future__ import annotations

from typing import Any

from celery import shared_task

from research.ai_columns import ai_column_run_execute


@shared_task(acks_late=True, reject_on_worker_lost=True)
def ai_column_run_task(run_id: str) -> dict[str, Any]:
    """Evaluate the rows of AI-column run `run_id`; rows already answered are skipped, so a rerun is safe."""
    run = ai_column_run_execute(run_id=run_id)
    return {"id": str(run.pk), "status": run.status, "done": run.done, "failed": run.failed}
