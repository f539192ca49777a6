from django.urls import path

app_name = "trials"

urlpatterns: list = []
