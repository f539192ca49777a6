"""Admin for the trial cache: read-only records, refreshed from ClinicalTrials.gov on demand."""

from __future__ import annotations

from django.contrib import admin, messages
from django.db.models import QuerySet
from django.http import HttpRequest

from trials import services
from trials.clients import CtgovError
from trials.models import Trial


@admin.register(Trial)
class TrialAdmin(admin.ModelAdmin):
    list_display = (
        "nct_id",
        "brief_title",
        "overall_status",
        "phase_label",
        "lead_sponsor",
        "enrollment",
        "fetched_at",
    )
    list_filter = ("overall_status", "study_type", "has_results")
    search_fields = ("nct_id", "brief_title", "official_title", "lead_sponsor")
    date_hierarchy = "fetched_at"
    actions = ["refresh_from_ctgov"]
    fieldsets = [
        (None, {"fields": ["nct_id", "nct_id_aliases", "brief_title", "official_title", "brief_summary"]}),
        (
            "Design",
            {
                "fields": [
                    "study_type",
                    "phases",
                    "overall_status",
                    "lead_sponsor",
                    "enrollment",
                    "enrollment_type",
                    "conditions",
                    "interventions",
                    "locations_count",
                ]
            },
        ),
        (
            "Eligibility",
            {
                "fields": [
                    "sex",
                    "minimum_age",
                    "maximum_age",
                    "healthy_volunteers",
                    "inclusion_criteria",
                    "exclusion_criteria",
                    "eligibility_criteria",
                ]
            },
        ),
        ("Outcomes", {"fields": ["primary_outcomes", "secondary_outcomes"]}),
        ("Dates", {"fields": ["start_date", "completion_date", "last_update", "has_results", "fetched_at"]}),
    ]

    def get_readonly_fields(self, request: HttpRequest, obj: Trial | None = None) -> list[str]:
        # A cache mirrors ClinicalTrials.gov: edits would be overwritten at the next refresh.
        return [field.name for field in Trial._meta.fields if field.name != "id"]

    def has_add_permission(self, request: HttpRequest) -> bool:
        return False

    @admin.display(description="Phase")
    def phase_label(self, obj: Trial) -> str:
        return obj.phase_label

    @admin.action(description="Refresh selected trials from ClinicalTrials.gov")
    def refresh_from_ctgov(self, request: HttpRequest, queryset: QuerySet[Trial]) -> None:
        refreshed, failures = 0, []
        for nct_id in queryset.values_list("nct_id", flat=True):
            try:
                services.trial_refresh(nct_id=nct_id)
            except CtgovError as exc:
                failures.append(f"{nct_id}: {exc}")
            else:
                refreshed += 1
        if refreshed:
            self.message_user(request, f"Refreshed {refreshed} trial(s) from ClinicalTrials.gov.", messages.SUCCESS)
        for failure in failures:
            self.message_user(request, failure, messages.ERROR)
