"""Admin pages for curated findings: curators edit them, check them against their source and mark them reviewed.

Every change is kept in the finding's history (django-simple-history). Marking a finding reviewed records
who and when; changing what a reviewed finding says sends it back to "awaiting review".
"""

from __future__ import annotations

from typing import Any

from django import forms
from django.contrib import admin, messages
from django.db import models
from django.db.models import QuerySet
from django.http import HttpRequest
from django.utils.html import format_html

from evidence.admin_base import CuratorEditableAdmin, CuratorEditableInline, is_curator
from evidence.models import Finding, ReviewStatus

_REVIEW_FIELDS = ("review_status", "reviewed_by", "reviewed_at")


def _https_urls(field: models.Field, **kwargs: Any) -> forms.Field | None:
    """Build the form field, a URL typed without a scheme taken as https (as everywhere in the library's admin)."""
    if isinstance(field, models.URLField):
        kwargs.setdefault("assume_scheme", "https")
    return field.formfield(**kwargs)


class FindingForm(forms.ModelForm):
    mark_reviewed = forms.BooleanField(
        required=False,
        label="I checked this finding against its source",
        help_text="Records you and today's date as its reviewer. Leave unticked to save it as awaiting review.",
    )

    class Meta:
        model = Finding
        formfield_callback = _https_urls
        fields = (
            "study", "statement", "decision_tags", "recommendation_class", "evidence_level", "source_url", "locator",
            "position",
        )


def _mark_reviewed(finding: Finding, user: Any) -> None:
    finding.mark_reviewed(user)
    finding.save()


@admin.register(Finding)
class FindingAdmin(CuratorEditableAdmin):
    form = FindingForm
    list_display = ("study", "short_statement", "grade_shown", "review_status", "reviewed_by", "reviewed_at")
    list_filter = ("review_status", "study__kind")
    search_fields = ("statement", "study__study_name", "locator")
    autocomplete_fields = ("study",)
    readonly_fields = (*_REVIEW_FIELDS, "source_link", "created_at", "updated_at")
    actions = ["mark_reviewed"]
    fieldsets = (
        (None, {"fields": ("study", "statement", "decision_tags", "position")}),
        ("Grade", {"fields": ("recommendation_class", "evidence_level")}),
        ("Source", {"fields": ("source_url", "source_link", "locator")}),
        ("Review", {"fields": (*_REVIEW_FIELDS, "mark_reviewed")}),
        ("History", {"fields": ("created_at", "updated_at"), "classes": ("collapse",)}),
    )

    def get_fieldsets(self, request: HttpRequest, obj: Any = None) -> Any:
        if is_curator(request.user):
            return self.fieldsets
        # Viewers see the review, not the tick box that records one.
        return tuple(
            (name, {**options, "fields": tuple(f for f in options["fields"] if f != "mark_reviewed")})
            for name, options in self.fieldsets
        )

    @admin.display(description="finding")
    def short_statement(self, obj: Finding) -> str:
        return obj.statement if len(obj.statement) <= 90 else obj.statement[:87] + "..."

    @admin.display(description="class, level")
    def grade_shown(self, obj: Finding) -> str:
        return obj.grade or "-"

    @admin.display(description="open source")
    def source_link(self, obj: Finding) -> str:
        if not obj.source_url:
            return "-"
        return format_html('<a href="{}" target="_blank" rel="noopener noreferrer">{}</a>', obj.source_url, obj.locator)

    def save_model(self, request: HttpRequest, obj: Finding, form: forms.ModelForm, change: bool) -> None:
        super().save_model(request, obj, form, change)
        if form.cleaned_data.get("mark_reviewed"):
            _mark_reviewed(obj, request.user)

    @admin.action(description="Mark as reviewed (I checked them against their sources)")
    def mark_reviewed(self, request: HttpRequest, queryset: QuerySet) -> None:
        findings = list(queryset.exclude(review_status=ReviewStatus.REVIEWED))
        for finding in findings:
            _mark_reviewed(finding, request.user)
        self.message_user(
            request, f"{len(findings)} finding{'' if len(findings) == 1 else 's'} marked reviewed.", messages.SUCCESS
        )

    def get_actions(self, request: HttpRequest) -> dict:
        actions = super().get_actions(request)
        if not is_curator(request.user):
            actions.pop("mark_reviewed", None)
        return actions


class FindingInline(CuratorEditableInline):
    """A study's findings on its page; each opens on its own page for review and history."""

    model = Finding
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    fields = ("statement", "recommendation_class", "evidence_level", "source_url", "locator", "position", "review")
    readonly_fields = ("review",)
    show_change_link = True
    verbose_name_plural = "Curated findings (open one to review it or see its history)"

    @admin.display(description="review")
    def review(self, obj: Finding) -> str:
        return obj.review_words().removeprefix("curated finding, ") if obj.pk else "-"
