"""Error pages: JSON envelopes under /api/, the normal HTML pages elsewhere (400, 403, 404, 500)."""

from __future__ import annotations

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


def _bad_request_message(exception: Exception) -> tuple[str, str]:
    if isinstance(exception, RequestDataTooBig):
        return "request_too_large", (
            f"The request body is larger than the {settings.DATA_UPLOAD_MAX_MEMORY_SIZE:,}-byte limit "
            "(DATA_UPLOAD_MAX_MEMORY_SIZE); send less data per request."
        )
    if isinstance(exception, TooManyFieldsSent | TooManyFilesSent):
        return "too_many_fields", "The request has more fields or files than MedCite accepts; send fewer at a time."
    return "bad_request", "The request could not be read; check its format and encoding."


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        code, message = _bad_request_message(exception)
        return JsonResponse({"error": {"code": code, "message": message}}, status=400)
    return defaults.bad_request(request, exception)


def permission_denied(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        message = str(exception) or "You do not have permission to do this."
        return JsonResponse({"error": {"code": "permission_denied", "message": message}}, status=403)
    return defaults.permission_denied(request, exception)


def page_not_found(request: HttpRequest, exception: Exception) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(
            {"error": {"code": "not_found", "message": f"No API endpoint at {request.path}; see /api/docs/."}},
            status=404,
        )
    return defaults.page_not_found(request, exception)


def server_error(request: HttpRequest) -> HttpResponse:
    if _is_api(request):
        return JsonResponse(
            {"error": {"code": "server_error", "message": "Something went wrong on our side; it has been logged."}},
            status=500,
        )
    return defaults.server_error(request)
