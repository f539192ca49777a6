from django.urls import path

from trials import views

app_name = "trials"

urlpatterns = [
    path("<str:nct_id>/", views.trial_detail, name="trial-detail"),
]
