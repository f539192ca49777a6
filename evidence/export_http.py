"""HTTP side of citation export: the download response, `?format=` checking and its OpenAPI description."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from django.http import HttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse
from rest_framework import exceptions
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.renderers import BaseRenderer
from rest_framework.request import Request

from evidence.export import EXPORT_FORMATS, CitationFile, ExportFormat, UnknownExportFormat, check_export_format


class CitationFormatNegotiation(DefaultContentNegotiation):
    """`?format=` names a citation format on export endpoints, not a DRF renderer: errors stay JSON."""

    def select_renderer(
        self, request: Request, renderers: Iterable[BaseRenderer], format_suffix: str | None = None
    ) -> tuple[BaseRenderer, str]:
        renderer = next(iter(renderers))
        return renderer, renderer.media_type


def export_format_from(request: Request) -> ExportFormat:
    """Return the format named by `?format=`; raise a 400 ValidationError saying which formats exist."""
    try:
        return check_export_format(request.query_params.get("format"))
    except UnknownExportFormat as exc:
        raise exceptions.ValidationError({"format": [str(exc)]}) from exc


def citation_file_response(citation_file: CitationFile) -> HttpResponse:
    """Return `citation_file` as a download (Content-Disposition: attachment)."""
    response = HttpResponse(citation_file.content, content_type=citation_file.media_type)
    response["Content-Disposition"] = f'attachment; filename="{citation_file.filename}"'
    return response


FORMAT_PARAMETER = OpenApiParameter(
    "format",
    OpenApiTypes.STR,
    required=True,
    enum=list(EXPORT_FORMATS),
    description="Citation file format: "
    + "; ".join(f"`{fmt.key}` = {fmt.label} ({fmt.media_type})" for fmt in EXPORT_FORMATS.values())
    + ". Anything else is a 400 error.",
)

EXPORT_RESPONSES: dict[Any, Any] = {
    **{(200, fmt.media_type): OpenApiTypes.STR for fmt in EXPORT_FORMATS.values()},
    400: OpenApiResponse(description='Unknown format: `{"error": {"code": "invalid", "message": ...}}`.'),
    404: OpenApiResponse(description="Not found."),
}
