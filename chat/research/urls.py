from django.urls import path

from chat.research import views

urlpatterns = [
    path("<slug:page>/ask/", views.tray_ask, name="research-ask"),
    path("<slug:page>/new/", views.tray_new, name="research-new"),
    path("<slug:page>/columns/", views.ai_column_add, name="research-column-add"),
    path("columns/<int:column_id>/evaluate/", views.ai_column_evaluate, name="research-column-evaluate"),
    path("columns/<int:column_id>/delete/", views.ai_column_remove, name="research-column-delete"),
    path("runs/<uuid:run_id>/", views.ai_column_run, name="research-run"),
    path(
        "messages/<int:message_id>/payloads/<slug:payload_id>/<slug:decision>/",
        views.payload_decision,
        name="research-payload",
    ),
]
