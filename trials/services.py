"""Trial services: search ClinicalTrials.gov, fetch one trial through the cache, store records."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import structlog
from django.conf import settings
from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils import timezone

from trials.clients import (
    CtgovClient,
    CtgovError,
    CtgovInvalidResponse,
    CtgovUnavailable,
    StudyQuery,
    check_nct_id,
)
from trials.constants import SORTS
from trials.models import Trial
from trials.parsers import ParsedTrial, StudyPage, parse_search_page, parse_study
from trials.rendering import trial_payload, trial_text
from trials.selectors import trial_get_cached, trial_is_fresh

logger = structlog.get_logger(__name__)

CTGOV_UNAVAILABLE_MESSAGE = "ClinicalTrials.gov is not answering right now; try again in a few minutes."
CTGOV_UNREADABLE_MESSAGE = "ClinicalTrials.gov sent an answer MedCite could not read; try again later."


def ctgov_error_message(exc: CtgovError, *, what: str) -> str:
    """Return what a page shows for a ClinicalTrials.gov failure; the technical detail goes to the log.

    Refusals (a bad NCT id, an unknown trial, a search ClinicalTrials.gov rejected) say what to change,
    so their text is shown as it is; outages and unreadable answers get a plain sentence.
    """
    if isinstance(exc, CtgovUnavailable):
        logger.warning("ctgov.unavailable", what=what, error=str(exc))
        return CTGOV_UNAVAILABLE_MESSAGE
    if isinstance(exc, CtgovInvalidResponse):
        logger.warning("ctgov.unreadable_answer", what=what, error=str(exc))
        return CTGOV_UNREADABLE_MESSAGE
    return str(exc)


@dataclass(frozen=True)
class TrialDetails:
    """A trial ready for use: `.text` for an LLM, `.payload` (`trial_details`) for pages and the API."""

    trial: Trial
    text: str
    payload: dict[str, Any]
    from_cache: bool
    # True when ClinicalTrials.gov was unreachable and an expired cached copy was served instead.
    stale: bool


def _details(trial: Trial, *, from_cache: bool, stale: bool) -> TrialDetails:
    return TrialDetails(
        trial=trial,
        text=trial_text(trial, stale=stale),
        payload=trial_payload(trial, stale=stale),
        from_cache=from_cache,
        stale=stale,
    )


def get_trial(*, nct_id: str) -> TrialDetails:
    """Return one trial, from the cache while fresh, otherwise fetched from ClinicalTrials.gov.

    Raises `InvalidNctId` (before any request), `CtgovNotFound`, `CtgovBadRequest`,
    `CtgovUnavailable` or `CtgovInvalidResponse` — all `trials.clients.CtgovError`. When
    ClinicalTrials.gov is unavailable but an expired copy is cached, that copy is returned with
    `stale=True` rather than failing.
    """
    nct_id = check_nct_id(nct_id)
    cached = trial_get_cached(nct_id=nct_id)
    if cached is not None and trial_is_fresh(trial=cached):
        return _details(cached, from_cache=True, stale=False)
    try:
        trial = trial_refresh(nct_id=nct_id)
    except CtgovUnavailable as exc:
        if cached is None:
            raise
        logger.warning("ctgov.serving_stale_trial", nct_id=cached.nct_id, reason=str(exc))
        return _details(cached, from_cache=True, stale=True)
    return _details(trial, from_cache=False, stale=False)


def trial_refresh(*, nct_id: str) -> Trial:
    """Fetch one study from ClinicalTrials.gov and store it, whatever the age of the cached copy."""
    with CtgovClient.from_settings() as client:
        record = client.get_study(nct_id)
    return trial_store(parsed=parse_study(record))


@transaction.atomic
def trial_store(*, parsed: ParsedTrial, fetched_at: datetime | None = None) -> Trial:
    """Insert or update the cached trial from a parsed record; invalid records store nothing."""
    values = {**parsed.model_fields(), "fetched_at": fetched_at or timezone.now()}
    candidate = Trial(nct_id=parsed.nct_id, **values)
    try:
        candidate.full_clean(validate_unique=False)
    except ValidationError as exc:
        raise CtgovInvalidResponse(
            f"ClinicalTrials.gov returned a record for {parsed.nct_id} that cannot be stored: "
            + "; ".join(f"{name}: {' '.join(messages)}" for name, messages in exc.message_dict.items())
        ) from exc
    trial, _ = Trial.objects.update_or_create(nct_id=parsed.nct_id, defaults=values)
    return trial


def trial_search(
    *,
    condition: str = "",
    intervention: str = "",
    sponsor: str = "",
    term: str = "",
    phases: list[str] | tuple[str, ...] = (),
    statuses: list[str] | tuple[str, ...] = (),
    sort: str = "",
    page_token: str | None = None,
    page_size: int | None = None,
) -> StudyPage:
    """Return one page of ClinicalTrials.gov studies matching every given criterion.

    `sort` is a key of `trials.constants.SORTS` ("" leaves the registry's order); `page_token`
    continues a search and must come with the same criteria as the page that returned it.
    """
    if sort and sort not in SORTS:
        raise ValueError(f"Unknown sort {sort!r}; use one of {sorted(SORTS)}.")
    query = StudyQuery(
        condition=condition,
        intervention=intervention,
        sponsor=sponsor,
        term=term,
        phases=tuple(phases),
        statuses=tuple(statuses),
        sort=(SORTS[sort][0],) if sort else (),
        page_token=page_token or None,
        page_size=page_size or settings.CTGOV_PAGE_SIZE,
    )
    with CtgovClient.from_settings() as client:
        body = client.search_studies(query)
    return parse_search_page(body)
