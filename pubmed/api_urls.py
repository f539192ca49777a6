from django.urls import path

from pubmed.apis import (
    AbstractExportApi,
    AbstractSearchApi,
    AbstractSearchSlashApi,
    IngestionCreateApi,
    IngestionDetailApi,
    TablizerApi,
)

urlpatterns = [
    # The documented contract has no trailing slash; the slashed form is accepted too.
    path("abstracts/search", AbstractSearchApi.as_view(), name="pubmed-api-abstract-search"),
    path("abstracts/search/", AbstractSearchSlashApi.as_view(), name="pubmed-api-abstract-search-slash"),
    path("abstracts/export", AbstractExportApi.as_view(), name="pubmed-api-abstract-export"),
    path("tablizer/", TablizerApi.as_view(), name="pubmed-api-tablizer"),
    path("ingestions/", IngestionCreateApi.as_view(), name="pubmed-api-ingestion-list"),
    path("ingestions/<uuid:ingestion_id>/", IngestionDetailApi.as_view(), name="pubmed-api-ingestion-detail"),
]
