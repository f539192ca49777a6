"""`/api/v1/abstracts/search` (open, throttled), `/api/v1/tablizer/` and `/api/v1/ingestions/` (authenticated)."""

from __future__ import annotations

from typing import Any

from django.http import HttpResponse
from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import permissions, serializers, status
from rest_framework.exceptions import APIException, NotAuthenticated, NotFound, ValidationError
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.reverse import reverse
from rest_framework.views import APIView

from evidence import identifiers
from evidence.export import citations_export
from evidence.export_http import (
    EXPORT_RESPONSES,
    FORMAT_PARAMETER,
    CitationFormatNegotiation,
    citation_file_response,
    export_format_from,
)
from evidence.identifiers import pubmed_url
from evidence.levels import LEVEL_RANK, EvidenceLevel, level_assessment
from pubmed.clients import EutilsError
from pubmed.export import citation_records_for_pmids
from pubmed.models import Abstract, Ingestion
from pubmed.selectors import TABLIZER_SORTS, filter_abstracts_by_level, ingestion_get, sort_abstracts
from pubmed.services.ingest import MAX_PER_QUERY, IngestionInputError, ingestion_create
from pubmed.services.search import hybrid_search
from pubmed.services.tablizer import MAX_ROWS, PAGE_ROWS, tablizer_search

LEVEL_CODES = ", ".join(level.value for level in EvidenceLevel)


def level_field() -> serializers.ListField:
    """Return the repeatable `level` filter: codes of `evidence.levels.EvidenceLevel`."""
    return serializers.ListField(
        child=serializers.ChoiceField(
            choices=EvidenceLevel.choices,
            error_messages={"invalid_choice": f"Unknown level '{{input}}'; use one of {LEVEL_CODES}."},
        ),
        required=False,
        default=list,
        help_text=f"Only these levels of evidence (repeatable): {LEVEL_CODES}.",
    )


class ServiceUnavailable(APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "pubmed_unavailable"
    default_detail = "PubMed could not be searched; try again later."


class AbstractSearchInputSerializer(serializers.Serializer):
    q = serializers.CharField(max_length=1000, help_text="Free-text question or keywords.")
    k = serializers.IntegerField(min_value=1, max_value=100, default=10)
    mesh = serializers.ListField(child=serializers.CharField(max_length=200), required=False, default=list,
                                 help_text="Only abstracts with any of these MeSH descriptors (repeatable).")
    exclude_mesh = serializers.ListField(child=serializers.CharField(max_length=200), required=False, default=list)
    year_from = serializers.IntegerField(min_value=1800, max_value=2100, required=False)
    year_to = serializers.IntegerField(min_value=1800, max_value=2100, required=False)
    rerank = serializers.BooleanField(default=True)
    level = level_field()
    exclude_retracted = serializers.BooleanField(
        default=False, help_text="Leave retracted abstracts out (by default they are returned with retracted=true)."
    )
    sort = serializers.ChoiceField(
        choices=[("relevance", "relevance"), ("level", "level")], default="relevance",
        error_messages={"invalid_choice": "Unknown sort '{input}'; use relevance or level."},
        help_text="relevance (default) or level: strongest level of evidence first, relevance within a level.",
    )

    def validate_q(self, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise serializers.ValidationError("Give a search query, e.g. ?q=metformin+breast+cancer.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("year_from"), attrs.get("year_to")
        if start and end and start > end:
            raise serializers.ValidationError({"year_from": f"{start} is after year_to {end}."})
        return attrs


class ChunkHitSerializer(serializers.Serializer):
    pmid = serializers.CharField()
    doc_id = serializers.CharField()
    chunk_id = serializers.CharField()
    score = serializers.FloatField()
    title = serializers.CharField()
    text = serializers.CharField()
    journal = serializers.CharField()
    year = serializers.IntegerField(allow_null=True)
    authors = serializers.ListField(child=serializers.CharField())
    doi = serializers.CharField()
    pmcid = serializers.CharField()
    publication_types = serializers.ListField(child=serializers.CharField())
    evidence_level = serializers.CharField()
    evidence_level_label = serializers.SerializerMethodField()
    evidence_level_inferred = serializers.BooleanField()
    retracted = serializers.BooleanField(source="is_retracted")
    expression_of_concern = serializers.BooleanField(source="has_expression_of_concern")
    url = serializers.SerializerMethodField()

    def get_url(self, hit: Any) -> str:
        return pubmed_url(hit.pmid)

    def get_evidence_level_label(self, hit: Any) -> str:
        return level_assessment(hit.evidence_level).label


class AbstractSearchApi(APIView):
    """Hybrid (vector + full-text) search over the stored PubMed abstracts."""

    permission_classes = [permissions.AllowAny]

    @extend_schema(
        parameters=[AbstractSearchInputSerializer],
        responses={200: ChunkHitSerializer(many=True)},
        summary="Search stored PubMed abstracts",
    )
    def get(self, request: Request) -> Response:
        data = request.query_params.copy()
        params: dict[str, str | list[str] | None] = {
            key: data.get(key) for key in data if key not in {"mesh", "exclude_mesh", "level"}
        }
        params["mesh"] = data.getlist("mesh")
        params["exclude_mesh"] = data.getlist("exclude_mesh")
        params["level"] = data.getlist("level")
        serializer = AbstractSearchInputSerializer(data=params)
        serializer.is_valid(raise_exception=True)
        args = serializer.validated_data
        hits = hybrid_search(
            query=args["q"],
            k=args["k"],
            mesh_include=args["mesh"],
            mesh_exclude=args["exclude_mesh"],
            year_from=args.get("year_from"),
            year_to=args.get("year_to"),
            rerank=args["rerank"],
            levels=args["level"],
            exclude_retracted=args["exclude_retracted"],
        )
        if args["sort"] == "level":
            hits = sorted(hits, key=lambda hit: -LEVEL_RANK.get(hit.evidence_level, 0))  # stable: relevance within
        return Response({"query": args["q"], "k": args["k"], "results": ChunkHitSerializer(hits, many=True).data})


class TablizerInputSerializer(serializers.Serializer):
    q = serializers.CharField(max_length=1000, help_text="PubMed query (full PubMed syntax).")
    year_from = serializers.IntegerField(min_value=1800, max_value=2100, required=False)
    year_to = serializers.IntegerField(min_value=1800, max_value=2100, required=False)
    n = serializers.IntegerField(min_value=1, max_value=MAX_ROWS, default=PAGE_ROWS, help_text="Rows to load.")
    sort = serializers.ChoiceField(
        choices=[(key, key) for key in TABLIZER_SORTS], default="relevance",
        error_messages={"invalid_choice": f"Unknown sort '{{input}}'; use one of {', '.join(TABLIZER_SORTS)}."},
    )
    dir = serializers.ChoiceField(choices=[("asc", "asc"), ("desc", "desc")], required=False)
    level = level_field()

    def validate_q(self, value: str) -> str:
        value = " ".join(value.split())
        if not value:
            raise serializers.ValidationError("Give a PubMed query, e.g. ?q=metformin+AND+breast+cancer.")
        return value

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        start, end = attrs.get("year_from"), attrs.get("year_to")
        if start and end and start > end:
            raise serializers.ValidationError({"year_from": f"{start} is after year_to {end}."})
        attrs.setdefault("dir", "desc" if attrs["sort"] == "year" else "asc")
        return attrs


class TablizerRowSerializer(serializers.ModelSerializer):
    url = serializers.CharField(source="pubmed_url")
    evidence_level_label = serializers.SerializerMethodField()
    retracted = serializers.BooleanField(source="is_retracted")
    expression_of_concern = serializers.BooleanField(source="has_expression_of_concern")

    class Meta:
        model = Abstract
        fields = (
            "pmid", "url", "title", "authors", "journal", "year", "doi", "pmcid", "publication_types",
            "evidence_level", "evidence_level_label", "evidence_level_inferred", "retracted",
            "expression_of_concern", "corrections",
        )

    def get_evidence_level_label(self, abstract: Abstract) -> str:
        return abstract.level.label


class TablizerApi(APIView):
    """The Tablizer's rows as JSON: a PubMed search, stored, sorted and filtered by level of evidence."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        parameters=[TablizerInputSerializer],
        responses={200: TablizerRowSerializer(many=True)},
        summary="Tablizer rows for a PubMed query",
    )
    def get(self, request: Request) -> Response:
        data = request.query_params
        params: dict[str, Any] = {key: data.get(key) for key in data if key != "level"}
        params["level"] = data.getlist("level")
        serializer = TablizerInputSerializer(data=params)
        serializer.is_valid(raise_exception=True)
        args = serializer.validated_data
        try:
            # The API reports an outage as 503 rather than passing the local store off as PubMed's answer.
            result = tablizer_search(
                query=args["q"], year_from=args.get("year_from"), year_to=args.get("year_to"), rows=args["n"],
                local_fallback=False,
            )
        except EutilsError as exc:
            raise ServiceUnavailable(f"PubMed search failed: {exc}") from exc
        rows = sort_abstracts(result.rows, sort=args["sort"], descending=args["dir"] == "desc")
        rows = filter_abstracts_by_level(rows, levels=args["level"])
        return Response(
            {
                "query": result.query,
                "count": result.count,
                "loaded": len(result.rows),
                "query_translation": result.query_translation,
                "results": TablizerRowSerializer(rows, many=True).data,
            }
        )



class IngestionInputSerializer(serializers.Serializer):
    queries = serializers.ListField(
        child=serializers.CharField(max_length=1000, allow_blank=True), allow_empty=False, max_length=20,
        help_text="PubMed queries (full PubMed syntax).",
    )
    max_per_query = serializers.IntegerField(min_value=1, max_value=MAX_PER_QUERY, default=20)


class IngestionOutputSerializer(serializers.ModelSerializer):
    progress = serializers.FloatField()
    url = serializers.SerializerMethodField()

    class Meta:
        model = Ingestion
        fields = (
            "id", "url", "status", "progress", "queries", "max_per_query", "found", "new", "embedded", "failed",
            "to_fetch", "fetched", "pmids", "errors", "timings", "created_at", "started_at", "finished_at",
        )

    def get_url(self, ingestion: Ingestion) -> str:
        return reverse("pubmed-api-ingestion-detail", args=[ingestion.pk], request=self.context.get("request"))


class IngestionCreateApi(APIView):
    """Start fetching PubMed results for queries into the abstract store (runs as a Celery task)."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(request=IngestionInputSerializer, responses={201: IngestionOutputSerializer})
    def post(self, request: Request) -> Response:
        serializer = IngestionInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        try:
            ingestion = ingestion_create(
                queries=serializer.validated_data["queries"],
                max_per_query=serializer.validated_data["max_per_query"],
                user=request.user,
            )
        except IngestionInputError as exc:
            raise ValidationError({"queries": [str(exc)]}) from exc
        ingestion.refresh_from_db()
        body = IngestionOutputSerializer(ingestion, context={"request": request}).data
        return Response(body, status=status.HTTP_201_CREATED, headers={"Location": body["url"]})


class IngestionDetailApi(APIView):
    """Progress and outcome of one ingestion job (its creator or staff only)."""

    permission_classes = [permissions.IsAuthenticated]

    @extend_schema(
        parameters=[OpenApiParameter("ingestion_id", str, OpenApiParameter.PATH)],
        responses={200: IngestionOutputSerializer},
    )
    def get(self, request: Request, ingestion_id: Any) -> Response:
        ingestion = ingestion_get(ingestion_id=ingestion_id, user=request.user)
        if ingestion is None:
            raise NotFound(f"No ingestion {ingestion_id} visible to you.")
        return Response(IngestionOutputSerializer(ingestion, context={"request": request}).data)


@extend_schema_view(get=extend_schema(exclude=True))
class AbstractSearchSlashApi(AbstractSearchApi):
    """The same search at `abstracts/search/` (the documented path has no trailing slash)."""


class AbstractExportInputSerializer(serializers.Serializer):
    pmids = serializers.CharField(
        required=False, max_length=MAX_ROWS * 10,
        help_text="Comma-separated PMIDs of stored abstracts, in the order wanted (a Tablizer selection).",
    )
    q = serializers.CharField(
        required=False, max_length=1000,
        help_text="Or a PubMed query: its first `n` results, as the Tablizer shows them (needs authentication).",
    )
    year_from = serializers.IntegerField(min_value=1800, max_value=2100, required=False)
    year_to = serializers.IntegerField(min_value=1800, max_value=2100, required=False)
    n = serializers.IntegerField(min_value=1, max_value=MAX_ROWS, default=PAGE_ROWS)

    def validate_pmids(self, value: str) -> list[str]:
        pmids = list(dict.fromkeys(part.strip() for part in value.split(",") if part.strip()))
        invalid = [pmid for pmid in pmids if not identifiers.is_pmid(pmid)]
        if invalid:
            raise serializers.ValidationError(f"Not a PMID: {', '.join(invalid[:5])}; PMIDs are digits, e.g. 35657320.")
        if len(pmids) > MAX_ROWS:
            raise serializers.ValidationError(f"At most {MAX_ROWS} PMIDs per export; {len(pmids)} were given.")
        return pmids

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if bool(attrs.get("pmids")) == bool(attrs.get("q")):
            raise serializers.ValidationError("Give either pmids=35657320,31104089 or q=<PubMed query>, not both.")
        return attrs


class AbstractExportApi(APIView):
    """Download stored abstracts (a Tablizer selection or a Tablizer search) as citations.

    `pmids` reads only the local store and is open like the search; `q` may query PubMed, so it needs
    authentication.
    """

    permission_classes = [permissions.AllowAny]
    content_negotiation_class = CitationFormatNegotiation

    @extend_schema(
        parameters=[FORMAT_PARAMETER, AbstractExportInputSerializer],
        responses=EXPORT_RESPONSES,
        summary="Export stored abstracts as RIS, BibTeX, MEDLINE or CSL-JSON",
    )
    def get(self, request: Request) -> HttpResponse:
        fmt = export_format_from(request)
        serializer = AbstractExportInputSerializer(
            data={key: value for key, value in request.query_params.items() if key != "format"}
        )
        serializer.is_valid(raise_exception=True)
        args = serializer.validated_data
        if args.get("q"):
            if not request.user.is_authenticated:
                raise NotAuthenticated("Exporting a PubMed search (q=) needs a token or a session; pmids= does not.")
            try:
                result = tablizer_search(
                    query=args["q"], year_from=args.get("year_from"), year_to=args.get("year_to"), rows=args["n"]
                )
            except ValueError as exc:
                raise ValidationError({"q": [str(exc)]}) from exc
            except EutilsError as exc:
                raise ServiceUnavailable(f"PubMed search failed: {exc}") from exc
            pmids = [abstract.pmid for abstract in result.rows]
        else:
            pmids = args["pmids"]
        records = citation_records_for_pmids(pmids=pmids)
        if not records:
            raise NotFound(f"None of these PMIDs is stored: {', '.join(pmids[:5])}. Search them in the Tablizer first.")
        response = citation_file_response(citations_export(records=records, fmt=fmt, name="medcite-abstracts"))
        missing = sorted(set(pmids) - {record.pmid for record in records})
        if missing:
            response["X-Missing-PMIDs"] = ",".join(missing)
        return response
