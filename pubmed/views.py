"""The abstract page of a PMID (fetched from PubMed when not stored yet)."""

from __future__ import annotations

import structlog
from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render

from evidence.identifiers import doi_url, is_pmid, pmc_url, pubmed_url
from pubmed.clients import EutilsError
from pubmed.selectors import abstract_get
from pubmed.services.ingest import abstracts_ensure

logger = structlog.get_logger(__name__)


@login_required
def abstract_detail(request: HttpRequest, pmid: str) -> HttpResponse:
    if not is_pmid(pmid):
        raise Http404(f"{pmid!r} is not a PMID.")
    abstract = abstract_get(pmid=pmid)
    if abstract is None:
        try:
            found = abstracts_ensure(pmids=[pmid], embed=False)
        except EutilsError as exc:
            logger.warning("abstract_fetch_failed", pmid=pmid, error=str(exc))
            messages.error(
                request,
                f"PubMed could not be reached, so PMID {pmid} (not in the local store) cannot be shown; try again.",
            )
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
