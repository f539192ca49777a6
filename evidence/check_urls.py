from django.urls import path

from evidence import views

app_name = "checker"

urlpatterns = [
    path("", views.claim_check, name="index"),
]
