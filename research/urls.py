"""URLs of the research workbench: Tablizer, TrialScout, Evidence Scout and the endpoints of the tray."""

from django.urls import path

from research.views import scout, tablizer, tray, trialscout

app_name = "research"

urlpatterns = [
    path("tablizer/", tablizer.tablizer, name="tablizer"),
    path("tablizer/export/", tablizer.tablizer_export, name="tablizer-export"),
    path("tablizer/snapshots/", tablizer.snapshot_create, name="snapshot-create"),
    path("tablizer/snapshots/<int:snapshot_id>/delete/", tablizer.snapshot_remove, name="snapshot-delete"),
    path("trialscout/", trialscout.trialscout, name="trialscout"),
    path("scout/", scout.scout, name="scout"),
    path("scout/<uuid:run_id>/", scout.scout_run, name="scout-run"),
    path("scout/<uuid:run_id>/resume/", scout.scout_run_resume_view, name="scout-resume"),
    path("chat/research/<slug:page>/ask/", tray.tray_ask, name="ask"),
    path("chat/research/<slug:page>/new/", tray.tray_new, name="new"),
    path("chat/research/<slug:page>/columns/", tray.ai_column_add, name="column-add"),
    path("chat/research/columns/<int:column_id>/evaluate/", tray.ai_column_evaluate, name="column-evaluate"),
    path("chat/research/columns/<int:column_id>/delete/", tray.ai_column_remove, name="column-delete"),
    path("chat/research/runs/<uuid:run_id>/", tray.ai_column_run, name="run"),
    path(
        "chat/research/messages/<int:message_id>/payloads/<slug:payload_id>/<slug:decision>/",
        tray.payload_decision,
        name="payload",
    ),
]
