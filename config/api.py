"""Shared DRF pieces: the JSON error envelope, integer fields, pagination and permissions."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import models
from django.http import Http404, HttpRequest, JsonResponse
from rest_framework import exceptions, permissions, serializers
from rest_framework.pagination import PageNumberPagination
from rest_framework.response import Response
from rest_framework.views import exception_handler

from config.inputs import ascii_integer_message

CURATOR_GROUP = "curator"


class StandardPagination(PageNumberPagination):
    """Page-number pagination with a client-chosen `page_size` up to 100."""

    page_size_query_param = "page_size"
    max_page_size = 100


class CuratorWriteOrReadOnly(permissions.BasePermission):
    """Allow reads to anyone; writes only to superusers and members of the `curator` group."""

    message = "Only curators may change the evidence library."

    def has_permission(self, request: Any, view: Any) -> bool:
        if request.method in permissions.SAFE_METHODS:
            return True
        user = request.user
        return bool(
            user and user.is_authenticated and (user.is_superuser or user.groups.filter(name=CURATOR_GROUP).exists())
        )


def _flatten_detail(detail: Any, prefix: str = "") -> list[str]:
    """Turn DRF's nested error detail into readable `field: message` strings."""
    if isinstance(detail, dict):
        lines: list[str] = []
        for field, value in detail.items():
            name = f"{prefix}{field}" if field != "non_field_errors" else prefix.rstrip(".")
            lines.extend(_flatten_detail(value, f"{name}." if name else ""))
        return lines
    if isinstance(detail, list):
        return [line for item in detail for line in _flatten_detail(item, prefix)]
    field = prefix.rstrip(".")
    return [f"{field}: {detail}" if field else str(detail)]


def error_response_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """Render every API error as `{"error": {"code", "message", "fields"?}}` with a 4xx/5xx status."""
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    elif isinstance(exc, DjangoValidationError):
        exc = exceptions.ValidationError(exc.message_dict if hasattr(exc, "error_dict") else exc.messages)
    response = exception_handler(exc, context)
    if response is None:
        return None
    detail = exc.detail if isinstance(exc, exceptions.APIException) else response.data
    if isinstance(exc, exceptions.APIException):
        codes = exc.get_codes()
        code = codes if isinstance(codes, str) else exc.default_code
    else:
        code = "error"
    error: dict[str, Any] = {"code": code, "message": "; ".join(_flatten_detail(detail))}
    if isinstance(detail, dict):
        error["fields"] = detail
    response.data = {"error": error}
    return response


def json_error(request: HttpRequest, *, status: int, code: str, message: str) -> JsonResponse:
    """Return the API error envelope outside DRF views (config.errors handlers, ApiErrorMiddleware)."""
    return JsonResponse({"error": {"code": code, "message": message}}, status=status)


class AsciiIntegerField(serializers.IntegerField):
    """An IntegerField that accepts JSON numbers and strings of the digits 0-9, never other scripts' digits."""

    default_error_messages = {"ascii_digits": "{message}"}

    def to_internal_value(self, data: Any) -> int:
        message = ascii_integer_message(data)
        if message:
            self.fail("ascii_digits", message=message)
        return super().to_internal_value(data)


# A ModelSerializer's `serializer_field_mapping` with every integer model field read by AsciiIntegerField.
ASCII_INTEGER_FIELD_MAPPING: dict[type[models.Field], type[serializers.Field]] = {
    **serializers.ModelSerializer.serializer_field_mapping,
    **{
        field: AsciiIntegerField
        for field in (
            models.IntegerField, models.SmallIntegerField, models.BigIntegerField, models.PositiveIntegerField,
            models.PositiveSmallIntegerField, models.PositiveBigIntegerField,
        )
    },
}
