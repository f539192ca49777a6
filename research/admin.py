"""Admin views of Evidence Scout runs (read-only: runs are started from the page, the API or the command)."""

from __future__ import annotations

from django.contrib import admin
from django.http import HttpRequest

from research.models import ScoutRun


@admin.register(ScoutRun)
class ScoutRunAdmin(admin.ModelAdmin):
    list_display = ("drug", "disease", "status", "stage", "attempts", "user", "created_at", "finished_at")
    list_filter = ("status",)
    search_fields = ("drug", "disease")
    readonly_fields = (
        "id", "user", "drug", "disease", "profile", "max_pmids", "status", "stage", "steps", "state", "result",
        "error", "attempts", "task_id", "created_at", "started_at", "finished_at",
    )

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False
