"""Error pages: JSON envelopes under /api/, the normal HTML pages elsewhere."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults


def _is_api(request: HttpRequest) -> bool:
    return request.path.startswith("/api/")


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
