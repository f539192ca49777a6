"""The Tablizer page: a PubMed search rendered as a sortable table, with snapshots, compare mode and the tray."""

from __future__ import annotations

from typing import Any

import structlog
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from config.inputs import parse_ascii_int
from evidence import identifiers
from evidence.export import EXPORT_FORMATS, UnknownExportFormat, check_export_format, citations_export
from evidence.export_http import citation_file_response
from evidence.levels import EvidenceLevel
from pubmed.clients import EutilsError, EutilsUnavailable
from pubmed.export import citation_records_for_pmids
from pubmed.forms import TablizerForm
from pubmed.models import Abstract
from pubmed.selectors import (
    TABLIZER_SORTS,
    abstracts_by_pmids,
    filter_abstracts_by_level,
    snapshot_get,
    snapshots_for_user,
    sort_abstracts,
)
from pubmed.services.snapshots import snapshot_delete, snapshot_save, snapshots_compare
from pubmed.services.tablizer import (
    MAX_ROWS,
    PAGE_ROWS,
    PUBMED_REFUSED_MESSAGE,
    PUBMED_UNREACHABLE_MESSAGE,
    tablizer_search,
)
from research.charts import year_histogram
from research.page import research_context
from research.pages.tablizer import compare_ids, compared_snapshots, parse_state, state_query
from research.views.htmx import htmx_reload, is_htmx

logger = structlog.get_logger(__name__)

COLUMNS = [("pmid", "PMID"), ("title", "Title"), ("author", "First author"), ("journal", "Journal"),
           ("year", "Year"), ("level", "Level of evidence"), ("type", "Publication type")]


@login_required
def tablizer(request: HttpRequest) -> HttpResponse:
    form = TablizerForm(request.GET or None)
    context: dict[str, Any] = {"form": form, "columns": COLUMNS, "result": None, "levels": EvidenceLevel.choices,
                               "chosen_levels": request.GET.getlist("level")}
    searched: dict[str, Any] = {}
    rows: list[Abstract] = []
    # A malformed compare parameter is refused before anything runs: no search, nothing cached.
    bad_compare = [
        (name, value)
        for name in ("compare_a", "compare_b")
        if (value := request.GET.get(name, "").strip()) and parse_ascii_int(value) is None
    ]
    if form.is_bound and form.is_valid() and form.cleaned_data["q"] and not bad_compare:
        data = form.cleaned_data
        try:
            result = tablizer_search(
                query=data["q"], year_from=data["year_from"], year_to=data["year_to"], rows=data["n"]
            )
        except ValueError as exc:
            messages.error(request, str(exc))
        except EutilsError as exc:
            logger.warning("tablizer_search_refused", query=data["q"], error=str(exc))
            messages.error(request, PUBMED_REFUSED_MESSAGE)
        else:
            if result.from_local_store:
                messages.warning(request, PUBMED_UNREACHABLE_MESSAGE)
            params = request.GET.copy()
            searched = dict(data)
            rows = sort_abstracts(result.rows, sort=data["sort"], descending=data["dir"] == "desc")
            rows = filter_abstracts_by_level(rows, levels=data["level"])
            context.update(
                result=result,
                filtered_out=len(result.rows) - len(rows),
                sort=data["sort"],
                dir=data["dir"],
                sortable=[key for key in TABLIZER_SORTS if key != "relevance"],
                more_query=_with(params, n=str(data["n"] + PAGE_ROWS)),
                sort_queries={
                    key: _with(params, sort=key, dir="desc" if data["sort"] == key and data["dir"] == "asc" else "asc")
                    for key, _ in COLUMNS
                },
            )
    elif form.is_bound and not form.is_valid():
        for error in form.non_field_errors():
            messages.error(request, str(error))
        for field in form:
            for error in field.errors:
                messages.error(request, f"{field.label}: {error}")
    status = 400 if form.is_bound and form.errors else 200
    for name, value in bad_compare:
        messages.error(request, f"{name} must be the number of one of your snapshots (digits 0-9), got {value!r}.")
        status = 400
    context.update(_research(request, searched=searched, rows=rows))
    result = context["result"]
    if is_htmx(request) and result is not None and not result.from_local_store and not context["comparison"]:
        # "Load more" asked for n rows: answer with the longer results, focusing the first row it added.
        context["first_new"] = max(searched["n"] - PAGE_ROWS, 0)
        return render(request, "research/_tablizer_more.html", context)
    if is_htmx(request):  # the search failed, fell back to the local store or changed: the page shows why
        return htmx_reload(request)
    return render(request, "research/tablizer.html", context, status=status)


def _research(request: HttpRequest, *, searched: dict[str, Any], rows: list[Abstract]) -> dict[str, Any]:
    """Return the snapshots, compare mode, histogram, chat tray and AI columns of the Tablizer page."""
    ids = compare_ids(request.GET.urlencode())
    chosen = compared_snapshots(user=request.user, ids=ids)
    comparison = snapshots_compare(a=chosen[0], b=chosen[1]) if chosen else None
    groups: list[tuple[str, str, list[Abstract]]] = []
    if comparison is not None:
        groups = [
            ("only-a", f"Only in A: {comparison.a.label}", abstracts_by_pmids(pmids=comparison.only_a)),
            ("both", "In both", abstracts_by_pmids(pmids=comparison.both)),
            ("only-b", f"Only in B: {comparison.b.label}", abstracts_by_pmids(pmids=comparison.only_b)),
        ]
        rows = [abstract for _, _, group in groups for abstract in group]
    elif ids:
        messages.error(request, "Compare mode needs two of your snapshots; pick them from the list.")
    state = state_query(searched, compare=ids if comparison else None)
    context = research_context(request, page="tablizer", state=state, item_ids=[abstract.pmid for abstract in rows])
    ai = context["ai"]

    def pmid(abstract: Abstract) -> str:
        return abstract.pmid

    shown_rows = [] if comparison else ai.rows(rows, key=pmid)
    shown_groups = [(key, title, len(group), ai.rows(group, key=pmid)) for key, title, group in groups]
    shown = [abstract.pmid for abstract, _ in shown_rows] + [
        abstract.pmid for _, _, _, group in shown_groups for abstract, _ in group
    ]
    context.update(
        comparison=comparison,
        rows=shown_rows,
        groups=shown_groups,
        shown_pmids=",".join(dict.fromkeys(shown)),
        export_formats=list(EXPORT_FORMATS.values()),
        loaded=len(rows),
        histogram=year_histogram(abstract.year for abstract in rows),
        snapshots=list(snapshots_for_user(user=request.user)[:50]),
        search_state=state_query(searched),
    )
    return context


def _back(state: str, anchor: str) -> str:
    return f"{reverse('research:tablizer')}{'?' + state if state else ''}#{anchor}"


@login_required
@require_POST
def snapshot_create(request: HttpRequest) -> HttpResponse:
    """Save the search the page shows (its state) as a labelled snapshot."""
    state = request.POST.get("state", "")[:4000]
    data = parse_state(state)
    if not data:
        messages.error(request, "Run a search first: a snapshot saves the results of a search.")
        return redirect(_back(state, "snapshots"))
    try:
        snapshot = snapshot_save(
            user=request.user,
            label=request.POST.get("label", ""),
            query=data["q"],
            year_from=data["year_from"],
            year_to=data["year_to"],
            rows=data["n"],
        )
    except ValidationError as exc:
        messages.error(request, exc.messages[0])
    except ValueError as exc:
        messages.error(request, str(exc))
    except EutilsUnavailable as exc:
        logger.warning("snapshot_pubmed_unreachable", query=data["q"], error=str(exc))
        messages.error(request, "PubMed could not be reached, so the snapshot was not saved; try again.")
    except EutilsError as exc:
        logger.warning("snapshot_search_refused", query=data["q"], error=str(exc))
        messages.error(request, PUBMED_REFUSED_MESSAGE)
    else:
        messages.success(request, f"Saved the snapshot {snapshot.label!r} ({snapshot.count} results).")
    return redirect(_back(state, "snapshots"))


@login_required
@require_POST
def snapshot_remove(request: HttpRequest, snapshot_id: int) -> HttpResponse:
    snapshot = snapshot_get(user=request.user, snapshot_id=snapshot_id)
    if snapshot is None:
        raise Http404("You have no snapshot with that number.")
    label = snapshot.label
    snapshot_delete(snapshot=snapshot)
    messages.success(request, f"Deleted the snapshot {label!r}.")
    return redirect(_back(request.POST.get("state", "")[:4000], "snapshots"))


def _with(params: object, **changes: str) -> str:
    query = params.copy()  # type: ignore[attr-defined]
    for key, value in changes.items():
        query[key] = value
    return query.urlencode()


@login_required
@require_GET
def tablizer_export(request: HttpRequest) -> HttpResponse:
    """Download the ticked rows (`pmid`, repeated), or every row shown (`shown`, comma-separated), as citations."""
    try:
        fmt = check_export_format(request.GET.get("format"))
    except UnknownExportFormat as exc:
        return HttpResponse(str(exc), status=400, content_type="text/plain; charset=utf-8")
    pmids = request.GET.getlist("pmid") or request.GET.get("shown", "").split(",")
    pmids = [value.strip() for value in pmids if value.strip()][:MAX_ROWS]
    invalid = [value for value in pmids if not identifiers.is_pmid(value)]
    if invalid or not pmids:
        message = (
            f"Not a PMID: {', '.join(invalid[:5])}." if invalid else "Tick the rows to export, or run a search first."
        )
        return HttpResponse(message, status=400, content_type="text/plain; charset=utf-8")
    records = citation_records_for_pmids(pmids=pmids)
    return citation_file_response(citations_export(records=records, fmt=fmt, name="medcite-tablizer"))
