"""Curated decision-aid images under MEDIA_URL, served by Django in development only."""

from __future__ import annotations

from django.conf import settings
from django.http import FileResponse, Http404, HttpRequest, HttpResponse
from django.views.static import serve


def media_serve(request: HttpRequest, path: str) -> HttpResponse | FileResponse:
    """Serve MEDIA_ROOT/`path`; a name the file system cannot even look up is a 404, not a 500.

    A name longer than the file system allows (ENAMETOOLONG) or holding a NUL makes the lookup
    raise OSError/ValueError inside Django's `serve`; no such file can exist.
    """
    try:
        return serve(request, path, document_root=str(settings.MEDIA_ROOT))
    except (OSError, ValueError) as exc:
        raise Http404(f"No media file {path[:80]!r}.") from exc
