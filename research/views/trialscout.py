"""The TrialScout page: a ClinicalTrials.gov search as a table, with the tray and AI columns."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.views.decorators.http import require_GET

from research.page import research_context
from research.pages.trialscout import parse_state, state_query, trial_search_cached
from research.registries import page_get
from research.views.htmx import htmx_reload, is_htmx
from research.views.tray import STATE_MAX_CHARS
from trials.clients import CtgovError
from trials.forms import TrialSearchForm
from trials.services import ctgov_error_message


def _load_more_query(request: HttpRequest, token: str) -> str:
    """Return the current query string with `page_token` set to the next page's token."""
    query = request.GET.copy()
    query.pop("state", None)  # the page state htmx sends along belongs to the request, not the link
    query["page_token"] = token
    return query.urlencode()


def _appended_state(request: HttpRequest, search: dict[str, Any], token: str | None) -> str:
    """Return the page state once the page of `token` is appended to the pages the posted state has loaded.

    A posted state of another search (or none) starts again from this page alone.
    """
    loaded = parse_state(request.GET.get("state", "")[:STATE_MAX_CHARS])
    if loaded.tokens and state_query(loaded.search) == state_query(search):
        return state_query(search, tokens=(*loaded.tokens, token))
    return state_query(search, tokens=(token,))


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
        if is_htmx(request) and token and "page" in context:
            return _more_rows(request, context, state=_appended_state(request, search, token), studies=studies)
    if is_htmx(request):  # no page of rows to append (ClinicalTrials.gov failed): show the whole page
        return htmx_reload(request)
    context.update(research_context(request, page="trialscout", state=state, item_ids=[s.nct_id for s in studies]))
    context["rows"] = context["ai"].rows(studies, key=lambda study: study.nct_id)
    return render(request, "research/trialscout.html", context)


def _more_rows(request: HttpRequest, context: dict[str, Any], *, state: str, studies: list[Any]) -> HttpResponse:
    """Render "Load more" for htmx: this page's rows, and the state and AI columns over every loaded page."""
    loaded = page_get("trialscout").build_context(state=state, user=request.user).item_ids
    context.update(research_context(request, page="trialscout", state=state, item_ids=loaded))
    context["rows"] = context["ai"].rows(studies, key=lambda study: study.nct_id)
    context["shown"] = len(loaded)
    return render(request, "research/_trialscout_more.html", context)
