from django.urls import path

from research.apis import ScoutDetailApi, ScoutListCreateApi, ScoutResumeApi

urlpatterns = [
    path("scout/", ScoutListCreateApi.as_view(), name="research-api-scout"),
    path("scout/<uuid:run_id>/", ScoutDetailApi.as_view(), name="research-api-scout-detail"),
    path("scout/<uuid:run_id>/resume/", ScoutResumeApi.as_view(), name="research-api-scout-resume"),
]
