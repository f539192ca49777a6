from django.urls import path

from research.apis import ScoutDetailApi, ScoutListCreateApi, ScoutResumeApi
from research.workbench_apis import (
    AIColumnCreateApi,
    AIColumnRunApi,
    SnapshotCompareApi,
    SnapshotListCreateApi,
    SuggestionDecisionApi,
    TrayAskApi,
)

urlpatterns = [
    path("scout/", ScoutListCreateApi.as_view(), name="research-api-scout"),
    path("scout/<uuid:run_id>/", ScoutDetailApi.as_view(), name="research-api-scout-detail"),
    path("scout/<uuid:run_id>/resume/", ScoutResumeApi.as_view(), name="research-api-scout-resume"),
    path("research/<slug:page>/ask/", TrayAskApi.as_view(), name="research-api-ask"),
    path(
        "research/messages/<int:message_id>/suggestions/<slug:payload_id>/<str:decision>/",
        SuggestionDecisionApi.as_view(),
        name="research-api-suggestion",
    ),
    path("research/<slug:page>/columns/", AIColumnCreateApi.as_view(), name="research-api-columns"),
    path("research/columns/runs/<uuid:run_id>/", AIColumnRunApi.as_view(), name="research-api-column-run"),
    path("research/snapshots/", SnapshotListCreateApi.as_view(), name="research-api-snapshots"),
    path("research/snapshots/compare/", SnapshotCompareApi.as_view(), name="research-api-snapshot-compare"),
]
