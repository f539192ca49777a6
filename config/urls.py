"""Root URLs: pages per app, the admin, the versioned API and its schema, health."""

import re

from django.conf import settings
from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerSplitView

from config.health import healthz
from config.media import media_serve

urlpatterns = [
    path("", RedirectView.as_view(pattern_name="chat:index", permanent=False), name="home"),
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("accounts/login/", auth_views.LoginView.as_view(), name="login"),
    path("accounts/logout/", auth_views.LogoutView.as_view(), name="logout"),
    path("api/v1/", include("config.api_urls")),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    # The split view serves Swagger UI's start-up script as a file: the CSP allows no inline scripts.
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="api-docs"),
    path("api/redoc/", SpectacularRedocView.as_view(url_name="schema"), name="api-redoc"),
    path("", include("research.urls")),
    path("library/", include("evidence.urls")),
    path("check/", include("evidence.check_urls")),
    path("tablizer/", include("pubmed.urls")),
    path("trialscout/", include("trials.urls")),
    path("chat/", include("chat.urls")),
]

admin.site.site_header = "MedCite curation"
admin.site.site_title = "MedCite admin"
admin.site.index_title = "Evidence library"

handler400 = "config.errors.bad_request"
handler403 = "config.errors.permission_denied"
handler404 = "config.errors.page_not_found"
handler500 = "config.errors.server_error"

if settings.DEBUG:
    # Curated decision-aid images in development; in production serve MEDIA_ROOT from the proxy.
    urlpatterns.append(re_path(rf"^{re.escape(settings.MEDIA_URL.lstrip('/'))}(?P<path>.*)$", media_serve))
