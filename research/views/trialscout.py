"""The TrialScout page: a ClinicalTrials.gov search as a table, with the tray and AI columns."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from research.page import research_context
from research.pages.trialscout import state_query, trial_search_cached
from trials.clients import CtgovError
from trials.forms import TrialSearchForm
from trials.services import ctgov_error_message


def _load_more_query(request: HttpRequest, token: str) -> str:
    """Return the current query string with `page_token` set to the next page's token."""
    query = request.GET.copy()
    query["page_token"] = token
    return query.urlencode()


@login_required
@require_GET
def trialscout(request: HttpRequest) -> HttpResponse:
    # Only the search fields bind the form: ?conversation= or ?ai_3=yes alone is not a search.
    searched = any(name in request.GET for name in TrialSearchForm.base_fields)
    form = TrialSearchForm(request.GET if searched else None)
    context: dict[str, Any] = {"form": form}
    state, studies = "", []
    if form.is_bound and form.is_valid():
        search = form.search_kwargs()
        try:
            # Cached briefly, so the chat tray and AI columns see these rows without a second request.
            page = trial_search_cached(**search)
        except CtgovError as exc:
            # Upstream trouble is a message on the page, never an error page: the search stays editable.
            context["error"] = ctgov_error_message(exc, what="trial search")
        else:
            context["page"] = page
            context["continued"] = bool(form.cleaned_data["page_token"])
            if page.next_page_token:
                context["load_more_query"] = _load_more_query(request, page.next_page_token)
            first_page = request.GET.copy()
            first_page.pop("page_token", None)
            context["first_page_query"] = first_page.urlencode()
            studies = page.studies
        token = search.pop("page_token")
        state = state_query(search, tokens=(token,))
    context.update(research_context(request, page="trialscout", state=state, item_ids=[s.nct_id for s in studies]))
    context["rows"] = context["ai"].rows(studies, key=lambda study: study.nct_id)
    return render(request, "research/trialscout.html", context)
