"""The Evidence Scout pages: the form with earlier runs and searched pairs, and one run's progress and summary."""

from __future__ import annotations

from typing import Any

from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from research.forms import ScoutForm
from research.scout.runs import check_scout_input, scout_run_create, scout_run_resume
from research.scout.selectors import scout_profiles_previous, scout_run_get, scout_runs_for, search_queries_recent


@login_required
@require_http_methods(["GET", "POST"])
def scout(request: HttpRequest) -> HttpResponse:
    previous = scout_profiles_previous(user=request.user)
    form = ScoutForm(request.POST or None, previous=previous)
    if request.method == "POST" and form.is_valid():
        try:
            cleaned = check_scout_input(
                drug=form.cleaned_data["drug"], disease=form.cleaned_data["disease"],
                profile=form.profile_input(), max_pmids=form.cleaned_data.get("max_pmids"),
            )
        except ValidationError as exc:
            for field, messages in exc.message_dict.items():
                form.add_error("profile_json" if field == "profile" else field, messages)
        else:
            run = scout_run_create(user=request.user, **cleaned)
            return redirect("research:scout-run", run_id=run.pk)
    context: dict[str, Any] = {
        "form": form,
        "runs": scout_runs_for(user=request.user),
        "pairs": search_queries_recent(),
    }
    return render(request, "research/scout.html", context, status=400 if form.errors else 200)


@login_required
@require_GET
def scout_run(request: HttpRequest, run_id: Any) -> HttpResponse:
    run = scout_run_get(run_id=run_id, user=request.user)
    if run is None:
        raise Http404("No such scout run.")
    result = run.result or {}
    titles = {item["pmid"]: item for item in result.get("top5", [])}
    return render(request, "research/scout_run.html", {"run": run, "result": result, "cited": titles})


@login_required
@require_POST
def scout_run_resume_view(request: HttpRequest, run_id: Any) -> HttpResponse:
    run = scout_run_get(run_id=run_id, user=request.user, for_write=True)
    if run is None:
        raise Http404("No scout run of yours; only the user who started a run may resume it.")
    scout_run_resume(run=run)
    return redirect("research:scout-run", run_id=run.pk)
