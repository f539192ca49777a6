from django.urls import path

from pubmed import views

app_name = "pubmed"

urlpatterns = [
    path("", views.tablizer, name="tablizer"),
    path("abstracts/<str:pmid>/", views.abstract_detail, name="abstract-detail"),
]
