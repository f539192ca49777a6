"""What the research views need to answer htmx: recognising its requests, and sending it to a whole page."""

from __future__ import annotations

from django.http import HttpRequest, HttpResponse


def is_htmx(request: HttpRequest) -> bool:
    """Return True if htmx sent the request (it then swaps the HTML it gets into the page)."""
    return request.headers.get("HX-Request") == "true"


def htmx_reload(request: HttpRequest) -> HttpResponse:
    """Tell htmx to load the requested page whole, for an htmx request that has no partial to answer with."""
    query = request.GET.copy()
    query.pop("state", None)  # sent along by htmx for the partial; the page computes its own
    response = HttpResponse(status=204)
    response["HX-Redirect"] = request.path + (f"?{query.urlencode()}" if query else "")
    return response
