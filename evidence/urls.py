from django.urls import path

from evidence import views

app_name = "evidence"

urlpatterns = [
    path("", views.library, name="library"),
    path("<int:pk>/", views.study_detail, name="study-detail"),
]
