"""Reads of the trial cache."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from evidence.services.cited_sources import CitedSource, cited_passage
from trials.models import Trial
from trials.rendering import trial_text


def trial_get_cached(*, nct_id: str) -> Trial | None:
    """Return the cached trial with this NCT number (or former NCT number), fresh or not."""
    return Trial.objects.filter(Q(nct_id=nct_id) | Q(nct_id_aliases__contains=[nct_id])).first()


def trial_is_fresh(*, trial: Trial, now: datetime | None = None) -> bool:
    """Return True if the trial was fetched less than CTGOV_CACHE_TTL_SECONDS ago."""
    now = now or timezone.now()
    return now - trial.fetched_at < timedelta(seconds=settings.CTGOV_CACHE_TTL_SECONDS)


def trials_for_nct_ids(nct_ids: Sequence[str]) -> dict[str, CitedSource]:
    """Return the cached trials with these NCT numbers (or former ones) as the citation checker's sources.

    Only the local cache is read: a trial no one has looked up is reported as not found rather than
    fetched, as ClinicalTrials.gov records are cached only when a page or the chat asks for them.
    """
    wanted = list(dict.fromkeys(nct_ids))
    found: dict[str, CitedSource] = {}
    for trial in Trial.objects.filter(Q(nct_id__in=wanted) | Q(nct_id_aliases__overlap=wanted)):
        text = "\n".join(part for part in (trial_text(trial), trial.brief_summary) if part)
        for key in [trial.nct_id, *trial.nct_id_aliases]:
            if key in wanted:
                passage = cited_passage(kind="nct", key=key, chunk_id="registry", text=text)
                found[key] = CitedSource(title=trial.brief_title, passages=(passage,))
    return found
