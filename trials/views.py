"""The trial page: one ClinicalTrials.gov record."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from evidence.selectors import study_for_nct
from trials import services
from trials.clients import CtgovError, CtgovNotFound, InvalidNctId


@login_required
@require_GET
def trial_detail(request: HttpRequest, nct_id: str) -> HttpResponse:
    try:
        details = services.get_trial(nct_id=nct_id)
    except (InvalidNctId, CtgovNotFound) as exc:
        return render(request, "trials/trial_detail.html", {"error": str(exc), "nct_id": nct_id}, status=404)
    except CtgovError as exc:
        # The registry is out of reach, but the curated library may hold this trial: show what it holds.
        study = study_for_nct(nct_id=nct_id)
        error = services.ctgov_error_message(exc, what=nct_id)
        return render(request, "trials/trial_detail.html", {"error": error, "nct_id": nct_id, "library_study": study})
    return render(
        request,
        "trials/trial_detail.html",
        {"trial": details.trial, "stale": details.stale, "nct_id": details.trial.nct_id},
    )
