"""Start AI-column runs: record the rows to evaluate and queue the Celery job once the transaction commits."""

from __future__ import annotations

from collections.abc import Sequence

import structlog
from django.db import transaction
from django.utils import timezone

from research.ai_columns import MAX_RUN_ROWS
from research.dispatch import ai_column_run_enqueue
from research.models import AIColumn, AIColumnResult, AIColumnRun, AIColumnRunStatus

logger = structlog.get_logger(__name__)

NOT_QUEUED_MESSAGE = "The job could not be queued because the task queue is not answering; try again in a minute."


def _enqueue(run_id: str) -> None:
    try:
        result = ai_column_run_enqueue(run_id=run_id)
    except Exception:  # broker down: say so on the run instead of leaving it pending forever
        logger.exception("ai_column_run_not_queued", run_id=run_id)  # the broker's own error goes to the log
        AIColumnRun.objects.filter(pk=run_id).update(
            status=AIColumnRunStatus.FAILED,
            finished_at=timezone.now(),
            errors=[{"item_id": "", "code": "not_queued", "message": NOT_QUEUED_MESSAGE}],
        )
        return
    AIColumnRun.objects.filter(pk=run_id, task_id="").update(task_id=result.id or "")


@transaction.atomic
def ai_column_run_start(*, column: AIColumn, item_ids: Sequence[str]) -> AIColumnRun | None:
    """Queue evaluation of the rows of `item_ids` that have no cached answer; None when all have one.

    The job is queued once this transaction commits (eagerly, without a broker, it runs then).
    """
    wanted = list(dict.fromkeys(item_id for item_id in item_ids if item_id))[:MAX_RUN_ROWS]
    cached = set(AIColumnResult.objects.filter(column=column, item_id__in=wanted).values_list("item_id", flat=True))
    missing = [item_id for item_id in wanted if item_id not in cached]
    if not missing:
        return None
    run = AIColumnRun.objects.create(column=column, item_ids=missing, total=len(missing))
    run_id = str(run.pk)
    transaction.on_commit(lambda: _enqueue(run_id))
    return run
