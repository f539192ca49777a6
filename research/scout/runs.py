"""Start Evidence Scout runs: validate the input, record the run, queue the Celery job after commit."""

from __future__ import annotations

import json
from typing import Any

import structlog
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from config.inputs import json_loads_bounded
from pubmed.services.expand import DrugProfile, ProfileError
from research.dispatch import scout_run_enqueue
from research.models import ScoutRun, ScoutRunStatus
from research.scout.pipeline import initial_steps

logger = structlog.get_logger(__name__)

NAME_MAX_CHARS = 200
RECENT_RUNS = 20


def check_scout_input(*, drug: Any, disease: Any, profile: Any = None, max_pmids: Any = None) -> dict[str, Any]:
    """Return the cleaned run input, or raise ValidationError (field → message) saying what to change.

    `profile` may be a mapping or a JSON string; `max_pmids` defaults to SCOUT_MAX_PMIDS_PER_QUERY.
    """
    errors: dict[str, str] = {}
    cleaned: dict[str, Any] = {}
    for name, value, example in (("drug", drug, "gefitinib"), ("disease", disease, "non-small cell lung cancer")):
        text = " ".join(value.split()) if isinstance(value, str) else ""
        if not text:
            errors[name] = f"Give the {name} name, e.g. {example}."
        elif len(text) > NAME_MAX_CHARS:
            errors[name] = f"The {name} name is {len(text)} characters long; keep it to {NAME_MAX_CHARS}."
        cleaned[name] = text
    if isinstance(profile, str):
        try:
            profile = json_loads_bounded(profile) if profile.strip() else None
        except json.JSONDecodeError as exc:
            errors["profile"] = f"The drug profile is not valid JSON ({exc.msg} at position {exc.pos})."
            profile = None
    try:
        cleaned["profile"] = DrugProfile.from_value(profile).to_dict()
    except ProfileError as exc:
        errors["profile"] = str(exc)
    ceiling = int(settings.SCOUT_MAX_PMIDS_PER_QUERY)
    if max_pmids is None or max_pmids == "":
        cleaned["max_pmids"] = ceiling
    else:
        try:
            number = int(max_pmids)
        except (TypeError, ValueError):
            number = 0
        if isinstance(max_pmids, bool) or not 1 <= number <= ceiling or str(number) != str(max_pmids).strip():
            errors["max_pmids"] = f"max_pmids must be a whole number from 1 to {ceiling}; got {max_pmids!r}."
        cleaned["max_pmids"] = number
    if errors:
        raise ValidationError(errors)
    return cleaned


def _enqueue(run_id: str) -> None:
    try:
        result = scout_run_enqueue(run_id=run_id)
    except Exception as exc:  # broker down: say so on the run instead of leaving it pending forever
        logger.exception("scout_run_not_queued", run_id=run_id)
        # Run eagerly (no broker), a failing run has already recorded its own error: keep that one.
        ScoutRun.objects.filter(pk=run_id, status=ScoutRunStatus.PENDING).update(
            status=ScoutRunStatus.FAILED, finished_at=timezone.now(), error=f"The job could not be queued: {exc}"
        )
        return
    ScoutRun.objects.filter(pk=run_id, task_id="").update(task_id=result.id or "")


@transaction.atomic
def scout_run_create(
    *, user: Any, drug: str, disease: str, profile: dict[str, Any], max_pmids: int, enqueue: bool = True
) -> ScoutRun:
    """Record a run from `check_scout_input` output and queue it once the transaction commits.

    Idempotent: while the same user's run for the same input is pending or running, that run is
    returned instead of a second one.
    """
    owner = user if getattr(user, "is_authenticated", False) else None
    running = ScoutRun.objects.select_for_update().filter(
        user=owner, drug__iexact=drug, disease__iexact=disease, profile=profile, max_pmids=max_pmids,
        status__in=[ScoutRunStatus.PENDING, ScoutRunStatus.RUNNING],
    ).first()
    if running is not None:
        return running
    run = ScoutRun.objects.create(
        user=owner, drug=drug, disease=disease, profile=profile, max_pmids=max_pmids, steps=initial_steps()
    )
    if enqueue:
        run_id = str(run.pk)
        transaction.on_commit(lambda: _enqueue(run_id))
    return run


@transaction.atomic
def scout_run_resume(*, run: ScoutRun) -> ScoutRun:
    """Queue a failed run again; it continues at its first unfinished stage. Other runs are returned unchanged."""
    run = ScoutRun.objects.select_for_update().get(pk=run.pk)
    if run.status != ScoutRunStatus.FAILED:
        return run
    for step in run.steps:
        if step["status"] in {"failed", "running"}:
            step.update(status="pending", detail="")
    run.status, run.error, run.finished_at, run.task_id = ScoutRunStatus.PENDING, "", None, ""
    run.save(update_fields=["status", "error", "finished_at", "task_id", "steps"])
    run_id = str(run.pk)
    transaction.on_commit(lambda: _enqueue(run_id))
    return run


def scout_run_fail(*, run_id: str, message: str) -> None:
    """Mark a run failed for good (its retries are spent), keeping what its stages produced."""
    ScoutRun.objects.filter(pk=run_id).exclude(status=ScoutRunStatus.SUCCEEDED).update(
        status=ScoutRunStatus.FAILED, error=message[:2000], finished_at=timezone.now()
    )
