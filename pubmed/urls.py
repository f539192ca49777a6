from django.urls import path

from pubmed import views

app_name = "pubmed"

urlpatterns = [
    path("abstracts/<str:pmid>/", views.abstract_detail, name="abstract-detail"),
]
