"""Request-scoped middleware: request ids, and JSON errors under /api/ in every mode."""

from __future__ import annotations

import re
import uuid
from collections.abc import Callable

import structlog
from django.conf import settings
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.urls import is_valid_path

from config.api import json_error
from config.errors import api_error_for_status, is_api, request_too_large_message

REQUEST_ID_HEADER = "X-Request-ID"
_VALID_REQUEST_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


class RequestIdMiddleware:
    """Bind a request id to every log event of the request and echo it in `X-Request-ID`.

    A well-formed incoming `X-Request-ID` (from a proxy) is kept so logs join up across hops;
    anything else is replaced, since the value ends up in every log line.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get(REQUEST_ID_HEADER, "")
        request_id = incoming if _VALID_REQUEST_ID.match(incoming) else uuid.uuid4().hex
        request.request_id = request_id  # type: ignore[attr-defined]
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id, path=request.path)
        try:
            response = self.get_response(request)
        finally:
            structlog.contextvars.clear_contextvars()
        response[REQUEST_ID_HEADER] = request_id
        return response


# Headers of an error response that still mean something once its body is the JSON envelope.
_KEPT_ERROR_HEADERS = ("Allow", "Retry-After", "WWW-Authenticate", "Vary")
_UNSAFE_METHODS = ("DELETE", "PATCH", "POST", "PUT")


def _is_json(response: HttpResponse) -> bool:
    content_type = response.get("Content-Type", "").split(";")[0].strip().lower()
    return content_type == "application/json" or content_type.endswith("+json")


class ApiErrorMiddleware:
    """Answer every error under /api/ with the envelope `{"error": {"code", "message"}}`, in every mode.

    With DJANGO_DEBUG=0 the handlers in config.errors already do; with DEBUG=1 Django answers a missing
    URL, an unreadable body or an exception with its technical HTML pages (which bypass handler404 and
    handler500), and CommonMiddleware raises RuntimeError for a POST to a URL missing its slash. Placed
    outside all of them, this turns whatever non-JSON error comes back into the envelope, and answers
    the two cases it can see coming (an oversized body, a missing slash) before anything runs.
    """

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if not is_api(request):
            return self.get_response(request)
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        response = self.get_response(request)
        if response.status_code < 400 or _is_json(response):
            return response
        data = getattr(response, "data", None)  # a DRF error rendered as HTML by the browsable API
        if isinstance(data, dict) and isinstance(data.get("error"), dict):
            envelope: HttpResponse = JsonResponse(data, status=response.status_code)
        else:
            envelope = api_error_for_status(request, response.status_code)
        for header in _KEPT_ERROR_HEADERS:
            if header in response:
                envelope[header] = response[header]
        return envelope

    def _refusal(self, request: HttpRequest) -> HttpResponse | None:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        length = request.META.get("CONTENT_LENGTH") or ""
        # Multipart file data does not count towards the limit (Django's rule); every other body does.
        too_large = limit is not None and length.isascii() and length.isdigit() and int(length) > limit
        if too_large and not (request.content_type or "").startswith("multipart/"):
            return json_error(request, status=400, code="request_too_large", message=request_too_large_message())
        path = request.path_info
        urlconf = getattr(request, "urlconf", None)
        if (
            request.method in _UNSAFE_METHODS
            and settings.APPEND_SLASH
            and not path.endswith("/")
            and not is_valid_path(path, urlconf)
            and is_valid_path(f"{path}/", urlconf)
        ):
            # A redirect would lose the body (and DEBUG's RuntimeError is a 500): say where to send it.
            return json_error(
                request, status=404, code="not_found",
                message=f"No API endpoint at {request.path}; API URLs end with a slash: "
                f"{request.method} to {request.path}/ instead.",
            )
        return None
