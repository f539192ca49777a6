"""The public library pages: search and filter the curated studies, read one study."""

from __future__ import annotations

from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, render
from rest_framework.exceptions import ValidationError

from evidence.apis import parse_study_filters
from evidence.models import EvidenceStrength, ResultContext, Study, StudyKind
from evidence.selectors import library_tag_names, study_search
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
    return render(
        request,
        "evidence/study_detail.html",
        {
            "study": study,
            "related": related,
            "latest_check": latest_check,
            "tag_names": tag_labels([*study.disease_tags, *study.decision_tags, *study.clinical_settings]),
        },
    )
