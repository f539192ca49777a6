from django.urls import path

from pubmed import views

app_name = "pubmed"

urlpatterns = [
    path("", views.tablizer, name="tablizer"),
    path("abstracts/<str:pmid>/", views.abstract_detail, name="abstract-detail"),
    path("snapshots/", views.snapshot_create, name="snapshot-create"),
    path("snapshots/<int:snapshot_id>/delete/", views.snapshot_remove, name="snapshot-delete"),
]
