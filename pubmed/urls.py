from django.urls import path

app_name = "pubmed"

urlpatterns: list = []
