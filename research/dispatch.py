"""Every Celery job the research app queues, in one place.

Services queue work through these functions; the tasks (`research.tasks`) call the services. The tasks
are looked up by name (`config.celery.task_named`), so no service imports the module that imports it.
Without a broker the tasks run eagerly, in-process, as `delay` does.
"""

from __future__ import annotations

from celery.result import AsyncResult

from config.celery import task_named

TASKS = "research.tasks"


def ai_column_run_enqueue(*, run_id: str) -> AsyncResult:
    """Queue the evaluation of AI-column run `run_id`."""
    return task_named(f"{TASKS}.ai_column_run_task").delay(run_id)


def scout_run_enqueue(*, run_id: str) -> AsyncResult:
    """Queue (or resume) Evidence Scout run `run_id`."""
    return task_named(f"{TASKS}.scout_run_task").delay(run_id)
