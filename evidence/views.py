"""The public library pages (search and filter the curated studies, read one study) and the citation checker."""

from __future__ import annotations

from django.contrib.auth.decorators import login_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from rest_framework.exceptions import ValidationError

from evidence.apis import parse_study_filters
from evidence.findings import shown_statement
from evidence.models import EvidenceStrength, ResultContext, Study, StudyKind
from evidence.selectors import library_tag_names, study_search
from evidence.services.citation_check import CHECK_MAX_CHARS, CitationCheckInputError, citations_check
from evidence.tag_names import tag_labels

PAGE_SIZE = 25


def library(request: HttpRequest) -> HttpResponse:
    errors: list[str] = []
    try:
        studies = study_search(**parse_study_filters(request.GET)).select_related("guidance_item")
    except ValidationError as exc:
        detail = exc.detail
        errors = [str(message) for message in (detail.values() if isinstance(detail, dict) else detail)]
        studies = Study.objects.none()
    page = Paginator(studies, PAGE_SIZE).get_page(request.GET.get("page"))
    query = request.GET.copy()
    query.pop("page", None)
    return render(
        request,
        "evidence/library.html",
        {
            "page": page,
            "errors": errors,
            "params": request.GET,
            "query_string": query.urlencode(),
            "tags": library_tag_names(),
            "strengths": [choice.label for choice in sorted(EvidenceStrength, reverse=True)],
            "kinds": StudyKind.choices,
            "contexts": ResultContext.choices,
            "total": Study.objects.count(),
        },
        status=400 if errors else 200,
    )


def study_detail(request: HttpRequest, pk: int) -> HttpResponse:
    study = get_object_or_404(Study.objects.select_related("guidance_item"), pk=pk)
    related = (
        study.guidance_item.studies.exclude(pk=study.pk).order_by("-evidence_strength", "-publication_year")
        if study.guidance_item
        else Study.objects.none()
    )
    latest_check = study.identifier_checks.first()
    findings = [
        {
            "shown": shown_statement(finding),
            "source_url": finding.source_url,
            "locator": finding.locator,
            "review_status": finding.review_status,
            "review_words": finding.review_words(),
        }
        for finding in study.findings.select_related("reviewed_by")
    ]
    return render(
        request,
        "evidence/study_detail.html",
        {
            "study": study,
            "related": related,
            "latest_check": latest_check,
            "findings": findings,
            "tag_names": tag_labels([*study.disease_tags, *study.decision_tags, *study.clinical_settings]),
        },
    )


@login_required
def claim_check(request: HttpRequest) -> HttpResponse:
    """Show the citation checker; on POST, check the pasted text and show each sentence's status."""
    text = request.POST.get("text", "") if request.method == "POST" else ""
    context: dict[str, object] = {"text": text, "max_chars": CHECK_MAX_CHARS, "check": None, "error": ""}
    status = 200
    if request.method == "POST":
        try:
            context["check"] = citations_check(text=text)
        except CitationCheckInputError as exc:
            context["error"], status = exc.message, exc.status
    return render(request, "evidence/claim_check.html", context, status=status)
