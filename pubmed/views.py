"""Tablizer pages: a PubMed search rendered as a sortable table, and one abstract."""

from __future__ import annotations

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from evidence.identifiers import doi_url, is_pmid, pmc_url, pubmed_url
from pubmed.clients import EutilsError
from pubmed.forms import TablizerForm
from pubmed.selectors import TABLIZER_SORTS, abstract_get, sort_abstracts
from pubmed.services.ingest import abstracts_ensure
from pubmed.services.tablizer import PAGE_ROWS, tablizer_search

COLUMNS = [("pmid", "PMID"), ("title", "Title"), ("author", "First author"), ("journal", "Journal"),
           ("year", "Year"), ("type", "Publication type")]


def tablizer(request: HttpRequest) -> HttpResponse:
    form = TablizerForm(request.GET or None)
    context: dict[str, object] = {"form": form, "columns": COLUMNS, "result": None}
    if form.is_bound and form.is_valid() and form.cleaned_data["q"]:
        data = form.cleaned_data
        try:
            result = tablizer_search(
                query=data["q"], year_from=data["year_from"], year_to=data["year_to"], rows=data["n"]
            )
        except (EutilsError, ValueError) as exc:
            messages.error(request, f"PubMed search failed: {exc}")
        else:
            params = request.GET.copy()
            context.update(
                result=result,
                rows=sort_abstracts(result.rows, sort=data["sort"], descending=data["dir"] == "desc"),
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
            messages.error(request, error)
        for field in form:
            for error in field.errors:
                messages.error(request, f"{field.label}: {error}")
    return render(request, "pubmed/tablizer.html", context)


def _with(params: object, **changes: str) -> str:
    query = params.copy()  # type: ignore[attr-defined]
    for key, value in changes.items():
        query[key] = value
    return query.urlencode()


def abstract_detail(request: HttpRequest, pmid: str) -> HttpResponse:
    if not is_pmid(pmid):
        raise Http404(f"{pmid!r} is not a PMID.")
    abstract = abstract_get(pmid=pmid)
    if abstract is None:
        try:
            found = abstracts_ensure(pmids=[pmid], embed=False)
        except EutilsError as exc:
            messages.error(request, f"Could not fetch PMID {pmid} from PubMed: {exc}")
            found = []
        if not found:
            return render(request, "pubmed/abstract_detail.html", {"abstract": None, "pmid": pmid}, status=404)
        abstract = found[0]
    links = {"pubmed": pubmed_url(abstract.pmid)}
    if abstract.pmcid:
        links["pmc"] = pmc_url(abstract.pmcid)
    if abstract.doi:
        links["doi"] = doi_url(abstract.doi)
    return render(request, "pubmed/abstract_detail.html", {"abstract": abstract, "links": links, "pmid": pmid})
