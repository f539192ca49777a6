from django.urls import path

from trials import apis

urlpatterns = [
    # The documented contract has no trailing slash; the slashed form is accepted too.
    path("trials/search", apis.TrialSearchApi.as_view(), name="trials-api-search"),
    path("trials/search/", apis.TrialSearchSlashApi.as_view(), name="trials-api-search-slash"),
    path("trials/<str:nct_id>/", apis.TrialDetailApi.as_view(), name="trials-api-detail"),
]
