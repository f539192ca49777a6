"""Error pages: JSON envelopes under /api/, the normal HTML pages elsewhere (400, 403, 404, 500)."""

from __future__ import annotations

from http import HTTPStatus

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from config.api import json_error

SERVER_ERROR_MESSAGE = "Something went wrong on our side; it has been logged."
PERMISSION_DENIED_MESSAGE = "You do not have permission to do this."
# Codes for statuses that reach the client without a DRF view or one of the handlers below.
STATUS_CODES = {
    400: "bad_request",
    401: "not_authenticated",
    403: "permission_denied",
    404: "not_found",
    405: "method_not_allowed",
    413: "request_too_large",
    429: "throttled",
}


def is_api(request: HttpRequest) -> bool:
    """Return True for requests under /api/, which are answered in JSON whatever happens."""
    return request.path.startswith("/api/")


def request_too_large_message() -> str:
    return (
        f"The request body is larger than the {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,}-byte limit "
        "(DATA_UPLOAD_MAX_MEMORY_SIZE); send less data per request."
    )


def not_found_message(request: HttpRequest) -> str:
    return f"No API endpoint at {request.path}; see /api/docs/."


def _bad_request_message(exception: Exception | None) -> tuple[str, str]:
    if isinstance(exception, RequestDataTooBig):
        return "request_too_large", request_too_large_message()
    if isinstance(exception, TooManyFieldsSent | TooManyFilesSent):
        return "too_many_fields", "The request has more fields or files than MedCite accepts; send fewer at a time."
    return "bad_request", "The request could not be read; check its format and encoding."


def api_error_for_status(request: HttpRequest, status: int) -> JsonResponse:
    """Return the JSON envelope for an API error that arrived as a bare status (a debug page, a plain response)."""
    if status == 404:
        return json_error(request, status=404, code="not_found", message=not_found_message(request))
    if status == 400:
        code, message = _bad_request_message(None)
        return json_error(request, status=400, code=code, message=message)
    if status == 403:
        return json_error(request, status=403, code="permission_denied", message=PERMISSION_DENIED_MESSAGE)
    if status >= 500:
        return json_error(request, status=status, code="server_error", message=SERVER_ERROR_MESSAGE)
    try:
        phrase = HTTPStatus(status).phrase
    except ValueError:
        phrase = "Error"
    return json_error(request, status=status, code=STATUS_CODES.get(status, "error"), message=f"{phrase}.")


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        code, message = _bad_request_message(exception)
        return json_error(request, status=400, code=code, message=message)
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        message = str(exception) or PERMISSION_DENIED_MESSAGE
        return json_error(request, status=403, code="permission_denied", message=message)
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if is_api(request):
        return json_error(request, status=404, code="not_found", message=not_found_message(request))
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if is_api(request):
        return json_error(request, status=500, code="server_error", message=SERVER_ERROR_MESSAGE)
    return defaults.server_error(request)
