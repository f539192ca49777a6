"""`/api/v1/studies/`: the library for API consumers; curators write. `/api/v1/claims/check`: the citation checker."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import ValidationError as DjangoValidationError
from django.db.models import QuerySet
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import serializers, status, viewsets
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from config.api import ASCII_INTEGER_FIELD_MAPPING, CuratorWriteOrReadOnly
from config.inputs import check_no_nul, parse_ascii_int
from evidence import identifiers
from evidence.findings import shown_statement
from evidence.models import EvidenceStrength, Finding, ResultContext, Study, StudyKind
from evidence.selectors import study_search, with_findings
from evidence.services.citation_check import (
    CHECK_MAX_CHARS,
    STATUSES,
    CitationCheckInputError,
    citations_check,
)
from evidence.services.cited_sources import KINDS
from evidence.services.library import study_create, study_delete, study_update

# Fields an API consumer sees and a curator may write (the output adds ids, links and timestamps).
STUDY_WRITABLE_FIELDS = (
    "study_name",
    "aliases",
    "kind",
    "pmid",
    "doi",
    "nct_number",
    "pmcid",
    "title",
    "authors_short",
    "journal",
    "publication_year",
    "citation",
    "organization",
    "disease_tags",
    "decision_tags",
    "anchor_scenarios",
    "result_context",
    "clinical_settings",
    "test_names",
    "key_finding",
    "sample_size",
    "evidence_strength",
    "study_design",
    "url",
)


class StrengthField(serializers.ChoiceField):
    """Evidence strength as its name (high / moderate / low)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(choices=[choice.label for choice in EvidenceStrength], **kwargs)

    # DRF's stubs fix a ChoiceField's value to str; this one maps the labels to the stored integers.
    def to_representation(self, value: int) -> str:  # type: ignore[override]
        return EvidenceStrength(value).label

    def to_internal_value(self, data: Any) -> int:  # type: ignore[override]
        label = super().to_internal_value(data)
        return next(choice.value for choice in EvidenceStrength if choice.label == label)


class FindingOutputSerializer(serializers.ModelSerializer):
    """A curated finding as shown (statement with its grade), its source, and who reviewed it (read-only here)."""

    shown = serializers.SerializerMethodField()
    reviewed_by = serializers.CharField(source="reviewed_by.username", default=None)

    class Meta:
        model = Finding
        fields = (
            "id", "statement", "shown", "recommendation_class", "evidence_level", "decision_tags", "source_url",
            "locator", "review_status", "reviewed_by", "reviewed_at",
        )

    def get_shown(self, finding: Finding) -> str:
        return shown_statement(finding)


class StudyOutputSerializer(serializers.ModelSerializer):
    evidence_strength = StrengthField()
    links = serializers.SerializerMethodField()
    guidance = serializers.CharField(source="guidance_item.title", default=None)
    findings = FindingOutputSerializer(many=True, read_only=True)

    class Meta:
        model = Study
        fields = ("id", *STUDY_WRITABLE_FIELDS, "findings", "links", "guidance", "created_at", "updated_at")

    def get_links(self, study: Study) -> dict[str, str]:
        links = {"pubmed": study.pubmed_url, "doi": study.doi_url, "clinicaltrials": study.ctgov_url}
        return {kind: url for kind, url in links.items() if url}


class StudyInputSerializer(serializers.ModelSerializer):
    """Writable fields; model validation (identifier syntax, uniqueness, ≥1 identifier) runs in the service."""

    evidence_strength = StrengthField(required=False)
    # publication_year and sample_size: Arabic-Indic or full-width digits are refused, not stored as 123.
    serializer_field_mapping = ASCII_INTEGER_FIELD_MAPPING

    class Meta:
        model = Study
        fields = (*STUDY_WRITABLE_FIELDS, "guidance_item")
        # Uniqueness and identifier rules are checked once, by the model, in the service.
        validators: list = []
        extra_kwargs = {
            "study_name": {"validators": []},
            "pmid": {"validators": [identifiers.validate_pmid]},
            "doi": {"validators": [identifiers.validate_doi]},
            "nct_number": {"validators": [identifiers.validate_nct]},
        }


FILTER_PARAMETERS = [
    OpenApiParameter("q", OpenApiTypes.STR, description="Name, alias, PMID, DOI, NCT number or words."),
    OpenApiParameter("tag", OpenApiTypes.STR, description="Disease or decision tag, e.g. af, ckd, ctdna."),
    OpenApiParameter("strength", OpenApiTypes.STR, enum=[c.label for c in EvidenceStrength]),
    OpenApiParameter("context", OpenApiTypes.STR, enum=list(ResultContext.values)),
    OpenApiParameter("kind", OpenApiTypes.STR, enum=list(StudyKind.values)),
    OpenApiParameter("year", OpenApiTypes.INT),
]


SEARCH_MAX_CHARS = 300


def parse_study_filters(params: Any) -> dict[str, Any]:
    """Turn query parameters into `study_search` arguments, raising a 400 naming each bad one."""
    errors: dict[str, str] = {}
    filters: dict[str, Any] = {"text": params.get("q", ""), "tag": params.get("tag", "")}
    for name, key in (("q", "text"), ("tag", "tag")):
        try:
            check_no_nul(filters[key], field=name)
        except DjangoValidationError as exc:
            errors[name] = exc.messages[0]
        else:
            # A search of thousands of words becomes a full-text query PostgreSQL refuses to plan.
            if len(filters[key]) > SEARCH_MAX_CHARS:
                errors[name] = f"{name} is limited to {SEARCH_MAX_CHARS} characters; got {len(filters[key]):,}."
    strength = params.get("strength", "").strip().lower()
    if strength:
        by_label = {choice.label: choice.value for choice in EvidenceStrength}
        if strength not in by_label:
            errors["strength"] = f"Unknown strength {strength!r}; use one of {', '.join(by_label)}."
        filters["strength"] = by_label.get(strength)
    context = params.get("context", "").strip().lower()
    if context:
        if context not in ResultContext.values:
            errors["context"] = f"Unknown context {context!r}; use one of {', '.join(ResultContext.values)}."
        filters["context"] = context
    kind = params.get("kind", "").strip().lower()
    if kind:
        if kind not in StudyKind.values:
            errors["kind"] = f"Unknown kind {kind!r}; use one of {', '.join(StudyKind.values)}."
        filters["kind"] = kind
    year = params.get("year", "").strip()
    if year:
        number = parse_ascii_int(year)
        if number is None or not 1900 <= number <= 2100:
            errors["year"] = f"year must be a four-digit year between 1900 and 2100 in digits 0-9, got {year!r}."
        else:
            filters["year"] = number
    if errors:
        raise ValidationError(errors)
    return filters


@extend_schema_view(
    list=extend_schema(parameters=FILTER_PARAMETERS, responses=StudyOutputSerializer),
    retrieve=extend_schema(responses=StudyOutputSerializer),
    create=extend_schema(request=StudyInputSerializer, responses={201: StudyOutputSerializer}),
    update=extend_schema(request=StudyInputSerializer, responses=StudyOutputSerializer),
    partial_update=extend_schema(request=StudyInputSerializer, responses=StudyOutputSerializer),
)
class StudyViewSet(viewsets.ModelViewSet):
    """Landmark studies and guidelines. Anyone may read; only curators may write."""

    permission_classes = [CuratorWriteOrReadOnly]
    serializer_class = StudyOutputSerializer

    def get_queryset(self) -> QuerySet[Study]:
        if self.action == "list":
            found = study_search(**parse_study_filters(self.request.query_params)).select_related("guidance_item")
        else:
            found = Study.objects.select_related("guidance_item")
        return with_findings(found)

    def create(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        serializer = StudyInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        study = study_create(data=serializer.validated_data)
        return Response(StudyOutputSerializer(study).data, status=status.HTTP_201_CREATED)

    def update(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        study = self.get_object()
        serializer = StudyInputSerializer(study, data=request.data, partial=kwargs.get("partial", False))
        serializer.is_valid(raise_exception=True)
        study = study_update(study=study, data=serializer.validated_data)
        return Response(StudyOutputSerializer(study).data)

    def destroy(self, request: Request, *args: Any, **kwargs: Any) -> Response:
        study_delete(study=self.get_object())
        return Response(status=status.HTTP_204_NO_CONTENT)


# --- POST /api/v1/claims/check: the citation checker ------------------------------------------


class ClaimCheckInputSerializer(serializers.Serializer):
    text = serializers.CharField(
        allow_blank=True,
        trim_whitespace=False,
        help_text=f"Prose citing PMIDs, DOIs, NCT numbers or PMC ids; at most {CHECK_MAX_CHARS:,} characters.",
    )


class CitedIdentifierSerializer(serializers.Serializer):
    # A plain string in the schema: a second "kind" enum beside the studies' makes drf-spectacular rename one.
    kind = serializers.CharField(help_text=f"One of {', '.join(KINDS)}.")
    value = serializers.CharField(help_text="As written in the text (digits only for a PMID).")
    # DRF moves declared fields off the class, so this does not shadow Field.label at run time.
    label = serializers.CharField(  # type: ignore[assignment]
        help_text='How it is cited, e.g. "PMID 22663011"; quotes name it so.'
    )
    url = serializers.CharField(help_text="Direct link: PubMed, doi.org, ClinicalTrials.gov or PubMed Central.")
    found = serializers.BooleanField(help_text="Its text is in the library, the stored abstracts or trials.")
    available = serializers.BooleanField(help_text="False when PubMed could not be reached to fetch it.")
    title = serializers.CharField()
    retracted = serializers.BooleanField()


class SourceQuoteSerializer(serializers.Serializer):
    identifier = serializers.CharField(help_text="The label of the identifier quoted.")
    text = serializers.CharField()


class SentenceCheckSerializer(serializers.Serializer):
    text = serializers.CharField()
    identifiers = CitedIdentifierSerializer(many=True)
    status = serializers.ChoiceField(choices=[(status, status) for status in STATUSES])
    quotes = SourceQuoteSerializer(many=True)
    reason = serializers.CharField()
    score = serializers.FloatField(allow_null=True, help_text="The verifier's probability for its verdict.")


class ClaimCheckOutputSerializer(serializers.Serializer):
    sentences = SentenceCheckSerializer(many=True)
    counts = serializers.DictField(child=serializers.IntegerField(), help_text="Sentences per status.")


class ClaimCheckRefused(APIException):
    """The text cannot be checked as sent (empty, too long, no or malformed identifiers)."""

    status_code: int = status.HTTP_400_BAD_REQUEST
    default_code = "invalid"

    def __init__(self, error: CitationCheckInputError) -> None:
        self.status_code = error.status
        super().__init__(detail=error.message, code=error.code)


class ClaimCheckApi(APIView):
    """Check each sentence of a text against the PMIDs, DOIs and NCT numbers it cites."""

    @extend_schema(
        request=ClaimCheckInputSerializer,
        responses={200: ClaimCheckOutputSerializer},
        summary="Check the citations of any text",
        description=(
            "Each sentence comes back `supported`, `contradicted`, `not_supported`, `identifier_not_found`, "
            "`source_unavailable` (PubMed could not be reached) or `no_citation` (not checked), with the quoted "
            "source sentences. PMIDs not stored yet are fetched from PubMed and stored. Errors: 400 "
            "(`empty_text`, `no_identifiers`, `malformed_identifier`, `too_many_identifiers`, `no_sentences`), "
            "413 (`text_too_long`)."
        ),
    )
    def post(self, request: Request) -> Response:
        serializer = ClaimCheckInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            check = citations_check(text=serializer.validated_data["text"])
        except CitationCheckInputError as exc:
            raise ClaimCheckRefused(exc) from exc
        return Response(ClaimCheckOutputSerializer(check).data)


@extend_schema(exclude=True)
class ClaimCheckSlashApi(ClaimCheckApi):
    """`POST /api/v1/claims/check/`, the same endpoint; the schema lists it once, without the slash."""
