"""`/api/v1/trials/`: search ClinicalTrials.gov and read one trial (open to anonymous readers, throttled)."""

from __future__ import annotations

from typing import Any

from django.conf import settings
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_view,
    inline_serializer,
)
from rest_framework import exceptions, serializers, status
from rest_framework.permissions import AllowAny
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.throttling import AnonRateThrottle, UserRateThrottle
from rest_framework.views import APIView

from trials import services
from trials.clients import CtgovBadRequest, CtgovError, CtgovNotFound, CtgovUnavailable, InvalidNctId
from trials.constants import (
    NO_CRITERIA_MESSAGE,
    PAGE_TOKEN_MESSAGE,
    PAGE_TOKEN_PATTERN,
    PHASES,
    SORTS,
    STATUSES,
)
from trials.rendering import summary_payload

API_MAX_PAGE_SIZE = 100


class TrialsAnonRateThrottle(AnonRateThrottle):
    """Anonymous trial reads each cost a ClinicalTrials.gov call: their own, tighter budget."""

    scope = "trials_anon"

    def get_rate(self) -> str:
        return settings.CTGOV_API_ANON_RATE


class InvalidNctIdError(exceptions.APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid_nct"
    default_detail = "Not an NCT number: use NCT followed by 8 digits, e.g. NCT03057951."


class InvalidQueryError(exceptions.APIException):
    status_code = status.HTTP_400_BAD_REQUEST
    default_code = "invalid_query"
    default_detail = "ClinicalTrials.gov rejected the search."


class UpstreamUnavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_code = "upstream_unavailable"
    default_detail = "ClinicalTrials.gov is unavailable; try again in a few minutes."


class UpstreamError(exceptions.APIException):
    status_code = status.HTTP_502_BAD_GATEWAY
    default_code = "upstream_error"
    default_detail = "ClinicalTrials.gov answered with something MedCite could not use."


def _api_error(exc: CtgovError) -> exceptions.APIException:
    """Map a client error onto the HTTP error an API consumer should see."""
    if isinstance(exc, InvalidNctId):
        return InvalidNctIdError(str(exc))
    if isinstance(exc, CtgovBadRequest):
        # A 400 from ClinicalTrials.gov means the search text is not valid Essie syntax.
        return InvalidQueryError(str(exc))
    if isinstance(exc, CtgovNotFound):
        return exceptions.NotFound(str(exc))
    if isinstance(exc, CtgovUnavailable):
        return UpstreamUnavailable(str(exc))
    return UpstreamError(str(exc))


class ChoiceListField(serializers.MultipleChoiceField):
    """Repeated (`phase=PHASE2&phase=PHASE3`) or comma-separated (`phase=PHASE2,PHASE3`) choices."""

    def __init__(self, *, noun: str, **kwargs: Any) -> None:
        self.noun = noun
        super().__init__(**kwargs)

    # DRF's stubs type a MultipleChoiceField's value as one str; it is a collection of choices.
    def to_internal_value(self, data: Any) -> list[str]:  # type: ignore[override]
        if isinstance(data, str) or not hasattr(data, "__iter__"):
            self.fail("not_a_list", input_type=type(data).__name__)
        values = [part.strip().upper() for item in data for part in str(item).split(",") if part.strip()]
        unknown = [value for value in values if value not in self.choices]
        if unknown:
            raise serializers.ValidationError(
                f"{', '.join(unknown)} {'is not a' if len(unknown) == 1 else 'are not'} {self.noun}; "
                f"use one or more of {', '.join(self.choices)}."
            )
        # The order of the choices, not of the URL: the same search always gives the same request.
        return [choice for choice in self.choices if choice in values]


class TrialSearchInputSerializer(serializers.Serializer):
    condition = serializers.CharField(required=False, allow_blank=True, max_length=300, default="")
    intervention = serializers.CharField(required=False, allow_blank=True, max_length=300, default="")
    sponsor = serializers.CharField(
        required=False, allow_blank=True, max_length=300, default="", help_text="Lead sponsor."
    )
    q = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=300,
        default="",
        help_text="Free text over the whole record.",
    )
    phase = ChoiceListField(noun="phase", choices=list(PHASES), required=False, default=list)
    status = ChoiceListField(noun="overall status", choices=list(STATUSES), required=False, default=list)
    sort = serializers.ChoiceField(choices=list(SORTS), required=False, allow_blank=True, default="")
    page_token = serializers.RegexField(
        PAGE_TOKEN_PATTERN,
        required=False,
        allow_blank=True,
        default="",
        error_messages={"invalid": PAGE_TOKEN_MESSAGE},
    )
    page_size = serializers.IntegerField(required=False, min_value=1, max_value=API_MAX_PAGE_SIZE)

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        if not any(attrs.get(name) for name in ("condition", "intervention", "sponsor", "q", "phase", "status")):
            raise serializers.ValidationError(NO_CRITERIA_MESSAGE, code="no_criteria")
        return attrs


_SEARCH_PARAMETERS = [
    OpenApiParameter("phase", OpenApiTypes.STR, many=True, enum=list(PHASES), explode=True),
    OpenApiParameter("status", OpenApiTypes.STR, many=True, enum=list(STATUSES), explode=True),
]
_ERROR = inline_serializer("TrialError", {"error": serializers.DictField()})


class TrialSearchApi(APIView):
    """Search ClinicalTrials.gov; continue with `page_token` and the same criteria."""

    permission_classes = [AllowAny]
    throttle_classes = [TrialsAnonRateThrottle, UserRateThrottle]

    @extend_schema(
        parameters=[TrialSearchInputSerializer, *_SEARCH_PARAMETERS],
        responses={
            200: inline_serializer(
                "TrialSearchPage",
                {
                    "total_count": serializers.IntegerField(allow_null=True),
                    "next_page_token": serializers.CharField(allow_null=True),
                    "next": serializers.URLField(allow_null=True),
                    "results": serializers.ListField(child=serializers.DictField()),
                },
            ),
            400: OpenApiResponse(_ERROR, description="Invalid search (or ClinicalTrials.gov rejected it)."),
            502: OpenApiResponse(_ERROR, description="ClinicalTrials.gov answered with something unusable."),
            503: OpenApiResponse(_ERROR, description="ClinicalTrials.gov is unavailable."),
        },
    )
    def get(self, request: Request) -> Response:
        serializer = TrialSearchInputSerializer(data=request.query_params)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        try:
            page = services.trial_search(
                condition=data["condition"],
                intervention=data["intervention"],
                sponsor=data["sponsor"],
                term=data["q"],
                phases=data["phase"],
                statuses=data["status"],
                sort=data["sort"],
                page_token=data["page_token"] or None,
                page_size=data.get("page_size"),
            )
        except CtgovError as exc:
            raise _api_error(exc) from exc
        next_url = None
        if page.next_page_token:
            query = request.query_params.copy()
            query["page_token"] = page.next_page_token
            next_url = request.build_absolute_uri(f"{request.path}?{query.urlencode()}")
        return Response(
            {
                "total_count": page.total_count,
                "next_page_token": page.next_page_token,
                "next": next_url,
                "results": [summary_payload(study) for study in page.studies],
            }
        )


@extend_schema_view(get=extend_schema(exclude=True))
class TrialSearchSlashApi(TrialSearchApi):
    """`trials/search/`: the same search for clients that add a slash; documented once, without it."""


class TrialDetailApi(APIView):
    """One trial (the `trial_details` payload), from MedCite's cache while fresh."""

    permission_classes = [AllowAny]
    throttle_classes = [TrialsAnonRateThrottle, UserRateThrottle]

    @extend_schema(
        responses={
            200: OpenApiResponse(OpenApiTypes.OBJECT, description="The `trial_details` payload."),
            400: OpenApiResponse(_ERROR, description="Not an NCT number."),
            404: OpenApiResponse(_ERROR, description="No such study on ClinicalTrials.gov."),
            502: OpenApiResponse(_ERROR, description="ClinicalTrials.gov answered with something unusable."),
            503: OpenApiResponse(_ERROR, description="ClinicalTrials.gov is unavailable."),
        }
    )
    def get(self, request: Request, nct_id: str) -> Response:
        try:
            details = services.get_trial(nct_id=nct_id)
        except CtgovError as exc:
            raise _api_error(exc) from exc
        return Response(details.payload)
