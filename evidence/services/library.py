"""Create, update and delete library studies (used by the API; the admin uses ModelAdmin forms)."""

from __future__ import annotations

from typing import Any

from django.db import transaction

from evidence.models import Study


@transaction.atomic
def study_create(*, data: dict[str, Any]) -> Study:
    """Validate and create a study; raise ValidationError naming each bad field."""
    study = Study(**data)
    study.full_clean()
    study.save()
    return study


@transaction.atomic
def study_update(*, study: Study, data: dict[str, Any]) -> Study:
    """Apply `data` to a study, validate the whole study, and save; nothing is saved on error."""
    for field, value in data.items():
        setattr(study, field, value)
    study.full_clean()
    study.save()
    return study


@transaction.atomic
def study_delete(*, study: Study) -> None:
    """Delete a study; its history stays in the audit log."""
    study.delete()
