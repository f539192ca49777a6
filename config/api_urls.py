"""`/api/v1/`: each app contributes its own routes from `<app>/api_urls.py`."""

from django.urls import include, path

urlpatterns = [
    path("", include("evidence.api_urls")),
    path("", include("pubmed.api_urls")),
    path("", include("trials.api_urls")),
    path("", include("chat.api_urls")),
    path("", include("research.api_urls")),
]
