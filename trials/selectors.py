"""Reads of the trial cache."""

from __future__ import annotations

from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from trials.models import Trial


def trial_get_cached(*, nct_id: str) -> Trial | None:
    """Return the cached trial with this NCT number (or former NCT number), fresh or not."""
    return Trial.objects.filter(Q(nct_id=nct_id) | Q(nct_id_aliases__contains=[nct_id])).first()


def trial_is_fresh(*, trial: Trial, now: datetime | None = None) -> bool:
    """Return True if the trial was fetched less than CTGOV_CACHE_TTL_SECONDS ago."""
    now = now or timezone.now()
    return now - trial.fetched_at < timedelta(seconds=settings.CTGOV_CACHE_TTL_SECONDS)
